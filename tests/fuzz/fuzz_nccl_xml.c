/*
 * fuzz_nccl_xml.c - an NCCL topology file (NCCL_TOPO_DUMP_FILE) through
 * gf_nccl_xml_load (src/topo/nccl_xml.c, libxml2).  A node that loads
 * must pass gf_node_check.
 */
#include <gpufleet/node.h>

#include "fuzz.h"
#include "topo/nccl_xml.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct gf_node *n = gf_node_new();
	struct gf_err e = { 0 };
	char msg[256];
	int rc = gf_nccl_xml_load(n, NULL, (const char *)data, size, "fuzz.xml",
				  &e);
	fz_answer("load", rc, &e);
	if (rc == 0 && gf_node_check(n, msg, sizeof(msg)) != 0) {
		fprintf(stderr, "loaded node fails its check: %s\n", msg);
		abort();
	}
	gf_node_free(n);
	return 0;
}
