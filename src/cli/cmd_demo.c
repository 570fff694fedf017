/*
 * cmd_demo.c - `gpufleet demo`: the main job on built-in defaults.  Shows
 * this machine's topology (or says why there is none), then a built-in
 * 8-GPU node, so a newcomer sees a real matrix and findings anywhere.
 * Later issues add their part (a simulation, a MIG plan) here.
 */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"

static int section(const char *title, int (*cmd)(int, char **), char **argv,
		   int argc)
{
	printf("==> %s\n\n", title);
	fflush(stdout);
	int rc = cmd(argc, argv);
	printf("\n");
	fflush(stdout);
	return rc;
}

/* This machine's topology, or one line on stdout saying why there is
 * none (no GPU is normal on a laptop or in CI: not an error here); the
 * exit status (a failed print is one). */
static int live_section(void)
{
	printf("==> gpufleet topo (this machine)\n\n");
	fflush(stdout);
	struct gf_node_source src = { .nvml = -1 };
	struct gf_node *n;
	struct gf_err e;
	gf_err_clear(&e);
	if (gf_node_source_load(&src, &n, &e) != 0) {
		printf("%s\n\n", e.msg);
		fflush(stdout);
		return GF_EXIT_OK;
	}
	int rc = gf_cli_topo_print(n, false, false);
	gf_node_free(n);
	printf("\n");
	fflush(stdout);
	return rc;
}

int cmd_demo(int argc, char **argv)
{
	if (argc > 1 &&
	    (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0)) {
		printf("usage: gpufleet demo\n\nShow this machine's GPU "
		       "topology, then a built-in HGX-H100-class node\nand a "
		       "PCIe L40S node with their findings, then a placement "
		       "simulation\nof the six policies on the built-in "
		       "cluster and workload.\n" GF_CLI_EXIT_HELP);
		return GF_EXIT_OK;
	}
	if (argc > 1) {
		gf_cli_error("demo", "unexpected argument '%s'", argv[1]);
		return GF_EXIT_USAGE;
	}
	static char topo[] = "topo", tmpl[] = "--template";
	static char hgx_name[] = "hgx-h100", pcie_name[] = "pcie-l40s";
	char *hgx[] = { topo, tmpl, hgx_name, NULL };
	char *pcie[] = { topo, tmpl, pcie_name, NULL };
	static char fill[] = "fill", seeds[] = "--seeds", seed_list[] = "42-51";
	char *sim[] = { fill, seeds, seed_list, NULL };
	/* No GPU here is normal on a laptop or CI: say so and go on. */
	if (live_section() != GF_EXIT_OK ||
	    section("gpufleet topo --template hgx-h100", cmd_topo, hgx, 3) ||
	    section("gpufleet topo --template pcie-l40s", cmd_topo, pcie, 3) ||
	    section("gpufleet simulate fill (built-in cluster and workload, "
		    "6 policies x 10 seeds)",
		    cmd_simulate_fill, sim, 3))
		return GF_EXIT_FAIL;
	return GF_EXIT_OK;
}
