/*
 * fuzz_hwloc_xml.c - a recorded hwloc XML through the project's loader
 * (gf_topo_load: the pre-check, the caged probe child, hwloc in-process,
 * the walk into a node).  A node that loads must pass gf_node_check.
 */
#include <gpufleet/node.h>

#include "fuzz.h"
#include "topo/hwloc_load.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > (1u << 20))
		return 0;
	setenv("HWLOC_HIDE_ERRORS", "2", 0);
	struct gf_node *n = gf_node_new();
	struct gf_err e = { 0 };
	char msg[256];
	struct gf_topo_source src = { .xml_buf = (const char *)data,
				      .xml_len = size };
	int rc = gf_topo_load(n, &src, &e);
	fz_answer("load", rc, &e);
	if (rc == 0 && gf_node_check(n, msg, sizeof(msg)) != 0) {
		fprintf(stderr, "loaded node fails its check: %s\n", msg);
		abort();
	}
	gf_node_free(n);
	return 0;
}
