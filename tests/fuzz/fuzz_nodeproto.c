/*
 * fuzz_nodeproto.c - the node protocol (src/nodeproto): one JSON document
 * through every reader the controller and the agent apply to a body:
 * register/inventory (PUT /v1/nodes/{name}), heartbeat, the ack, the
 * assignments (the agent's long poll answer).
 */
#include "fuzz.h"
#include "nodeproto/nodeproto.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct gf_jv *v = NULL;
	struct gf_err e = { 0 };
	if (size > GF_NP_BODY_MAX ||
	    gf_jv_parse((const char *)data, size, &v, &e) != 0)
		return 0;
	static struct gf_np_inventory inv; /* large: not on the stack */
	struct gf_np_heartbeat hb;
	struct gf_np_ack ack;
	struct gf_np_assignments as;
	(void)!gf_np_inventory_read(v, &inv, &e);
	gf_np_inventory_release(&inv);
	(void)!gf_np_heartbeat_read(v, &hb, &e);
	gf_np_heartbeat_release(&hb);
	(void)!gf_np_ack_read(v, &ack, &e);
	gf_np_ack_release(&ack);
	(void)!gf_np_assignments_read(v, &as, &e);
	gf_np_assignments_release(&as);
	gf_jv_free(v);
	return 0;
}
