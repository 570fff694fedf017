/*
 * cmd_demo.c - `gpufleet demo`: the main job on built-in defaults.  Shows
 * this machine's topology (or says why there is none), then a built-in
 * 8-GPU node, so a newcomer sees a real matrix and findings anywhere.
 * Later issues add their part (a simulation, a MIG plan) here.
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"

static int section(const char *title, char **argv, int argc)
{
	printf("==> %s\n\n", title);
	fflush(stdout);
	int rc = cmd_topo(argc, argv);
	printf("\n");
	return rc;
}

int cmd_demo(int argc, char **argv)
{
	if (argc > 1 &&
	    (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0)) {
		printf("usage: gpufleet demo\n\nShow this machine's GPU "
		       "topology, then a built-in HGX-H100-class node\nand a "
		       "PCIe L40S node with their findings.\n");
		return GF_EXIT_OK;
	}
	if (argc > 1) {
		gf_cli_error("demo", "unexpected argument '%s'", argv[1]);
		return GF_EXIT_USAGE;
	}
	static char topo[] = "topo", tmpl[] = "--template";
	static char hgx_name[] = "hgx-h100", pcie_name[] = "pcie-l40s";
	char *live[] = { topo, NULL };
	char *hgx[] = { topo, tmpl, hgx_name, NULL };
	char *pcie[] = { topo, tmpl, pcie_name, NULL };
	/* No GPU here is normal on a laptop or CI: say so and go on. */
	section("gpufleet topo (this machine)", live, 1);
	if (section("gpufleet topo --template hgx-h100", hgx, 3) != 0)
		return GF_EXIT_FAIL;
	if (section("gpufleet topo --template pcie-l40s", pcie, 3) != 0)
		return GF_EXIT_FAIL;
	return GF_EXIT_OK;
}
