/*
 * cmd_topo.c - `gpufleet topo`: the node's GPU/NIC/CPU matrix as
 * `nvidia-smi topo -m` prints it, then per-GPU details and findings.
 */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include <gpufleet/findings.h>
#include <gpufleet/template.h>

#include "../topo/render.h"
#include "cli.h"

#define OUT_CAP (16u << 20)

static void usage(FILE *f)
{
	fprintf(f,
		"usage: gpufleet topo [--xml FILE | --template NAME] [--json] "
		"[--pcie] [--nvml | --no-nvml]\n"
		"\n"
		"Show how GPUs, NICs and CPUs connect (nvidia-smi topo -m), "
		"each GPU's\nnearest NIC, and findings worth acting on.\n"
		"\n"
		"  --xml FILE       read a recorded hwloc XML (lstopo --of "
		"xml) instead of\n"
		"                   this machine\n"
		"  --template NAME  a built-in node:");
	for (int i = 0; i < gf_template_count(); i++)
		fprintf(f, " %s", gf_template_name(i));
	fprintf(f,
		"\n"
		"  --json           machine-readable output\n"
		"  --pcie           PCIe classes only, ignoring NVLink "
		"(nvidia-smi topo -mp)\n"
		"  --nvml           join NVML data even for --xml (same "
		"machine)\n"
		"  --no-nvml        do not load NVML\n"
		"  -h, --help       this help\n"
		"\n"
		"exit status: 0 ok, 1 failure (unreadable topology, no GPU), 2 "
		"usage\n");
}

int cmd_topo(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "pcie", no_argument, NULL, 'p' },
		{ "help", no_argument, NULL, 'h' },
		GF_CLI_NODE_OPTIONS,
		{ NULL, 0, NULL, 0 },
	};
	struct gf_node_opts no = { .cmd = "topo", .nvml = -1 };
	bool json = false, pcie = false;
	int c;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'j':
			json = true;
			break;
		case 'p':
			pcie = true;
			break;
		case 'h':
			usage(stdout);
			return GF_EXIT_OK;
		default:
			if (gf_cli_node_option(c, optarg, &no))
				break;
			return gf_cli_bad_option("topo", argv);
		}
	}
	if (optind < argc) {
		gf_cli_error("topo", "unexpected argument '%s'", argv[optind]);
		return GF_EXIT_USAGE;
	}
	if (gf_cli_node_check(&no) != 0)
		return GF_EXIT_USAGE;
	struct gf_node *n = gf_cli_load_node(&no);
	if (n == NULL)
		return GF_EXIT_FAIL;
	struct gf_finding f[GF_MAX_FINDINGS];
	int nf = gf_findings_compute(n, f, GF_MAX_FINDINGS);
	struct gf_buf out;
	gf_buf_init(&out, OUT_CAP);
	int rc = json ? gf_render_topo_json(n, pcie, f, nf, &out)
		      : gf_render_topo_text(n, pcie, f, nf, &out);
	int ret = GF_EXIT_OK;
	if (rc) {
		gf_cli_error("topo", "output larger than %u MiB",
			     OUT_CAP >> 20);
		ret = GF_EXIT_FAIL;
	} else {
		ret = gf_cli_print(out.data, out.len);
	}
	gf_buf_release(&out);
	gf_node_free(n);
	return ret;
}
