/*
 * cmd_topo.c - `gpufleet topo`: the node's GPU/NIC/CPU matrix as
 * `nvidia-smi topo -m` prints it, then per-GPU details and findings.
 */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include <gpufleet/findings.h>
#include <gpufleet/template.h>

#include "cli/cli.h"
#include "topo/render.h"
#include "util/json.h"

#define OUT_CAP (16u << 20)

static void usage(FILE *f)
{
	fprintf(f,
		"usage: gpufleet topo [--xml FILE | --nccl-xml FILE | "
		"--template NAME] [--json]\n"
		"                     [--pcie] [--nvml | --no-nvml]\n"
		"\n"
		"Show how GPUs, NICs and CPUs connect (nvidia-smi topo -m), "
		"each GPU's\nnearest NIC, and findings worth acting on.\n"
		"\n"
		"  --xml FILE       read a recorded hwloc XML (lstopo --of "
		"xml) instead of\n"
		"                   this machine\n"
		"  --nccl-xml FILE  read an NCCL topology file (NCCL_TOPO_FILE "
		"format; most\n"
		"                   list no NVLink: add --nvml on the live "
		"node)\n"
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
		"Without a GPU (or with an unreadable file), --json still "
		"prints a document:\n"
		"{\"source\", \"gpus\": [], \"error\": \"no-gpu\"|\"unreadable\", "
		"\"detail\"}.\n" GF_CLI_EXIT_HELP);
}

/* {"source", "gpus": [], "error", "detail"}: what a script reads when
 * there is no node to show (no GPU here, an unreadable file). */
static int print_error_json(const struct gf_node_source *src,
			    const struct gf_err *e)
{
	struct gf_buf out;
	gf_buf_init(&out, 4096);
	if (gf_render_topo_error_json(src, e, &out) != 0) {
		gf_buf_release(&out);
		gf_cli_error("topo", "cannot write the error document");
		return GF_EXIT_FAIL;
	}
	int rc = gf_cli_print(gf_buf_str(&out), out.len);
	gf_buf_release(&out);
	return rc;
}

int gf_cli_topo_print(struct gf_node *n, bool json, bool pcie)
{
	struct gf_finding f[GF_MAX_FINDINGS];
	int nf = gf_findings_compute(n, f, GF_MAX_FINDINGS);
	struct gf_buf out;
	gf_buf_init(&out, OUT_CAP);
	int rc = json ? gf_render_topo_json(n, pcie, f, nf, &out)
		      : gf_render_topo_text(n, pcie, f, nf, &out);
	int ret = gf_cli_print_buf("topo", rc, &out);
	gf_buf_release(&out);
	return ret;
}

int cmd_topo(int argc, char **argv)
{
	struct gf_node_opts no = { .cmd = "topo", .src.nvml = -1 };
	bool json = false, pcie = false;
	const struct gf_cli_opt opts[] = {
		GF_OPT_FLAG("pcie", &pcie),
		GF_OPT_END,
	};
	struct gf_cli_args args = GF_CLI_ARGS("topo", argc, argv, opts, usage);
	args.no_args = true;
	args.json = &json;
	args.node = &no;
	if (gf_cli_options(&args) >= 0)
		return args.rc;
	if (gf_cli_node_check(&no) != 0)
		return GF_EXIT_USAGE;
	struct gf_node *n;
	struct gf_err e;
	gf_err_clear(&e);
	if (gf_node_source_load(&no.src, &n, &e) != 0) {
		gf_cli_error("topo", "%s", e.msg);
		/* scripts parsing --json get a document either way */
		if (json)
			(void)print_error_json(&no.src,
					       &e); /* failing anyway */
		return GF_EXIT_FAIL;
	}
	int ret = gf_cli_topo_print(n, json, pcie);
	gf_node_free(n);
	return ret;
}
