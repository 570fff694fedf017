/*
 * nodeproto_helpers.h - what the node protocol's tests share
 * (test_nodeproto.c, test_nodeproto_read.c): JSON text parsed, a writer
 * whose document is parsed back, a string filled to its cap, and an
 * 8-GPU H100 node's inventory with MIG instances and a topology.
 */
#ifndef GF_TEST_NODEPROTO_HELPERS_H
#define GF_TEST_NODEPROTO_HELPERS_H

#include "helpers.h"
#include "nodeproto/nodeproto.h"
#include "util/buf.h"
#include "util/json.h"
#include "util/mem.h"

static inline struct gf_jv *parse(const char *text, size_t len)
{
	struct gf_jv *v = NULL;
	struct gf_err e;
	gf_err_clear(&e);
	int rc = gf_jv_parse(text, len, &v, &e);
	if (rc)
		print_message("parse: %s\n", e.msg);
	assert_int_equal(rc, 0);
	return v;
}

/* A writer into a fresh buffer, with the top object open. */
struct doc {
	struct gf_buf b;
	struct gf_json j;
};

static inline struct gf_json *doc_begin(struct doc *d)
{
	gf_buf_init(&d->b, 256u << 20);
	gf_json_init(&d->j, &d->b);
	gf_json_obj_begin(&d->j, NULL);
	return &d->j;
}

/* Close the top object and parse what was written (the buffer freed). */
static inline struct gf_jv *doc_end(struct doc *d)
{
	gf_json_obj_end(&d->j);
	assert_int_equal(gf_json_error(&d->j), 0);
	struct gf_jv *v = parse(d->b.data, d->b.len);
	gf_buf_release(&d->b);
	return v;
}

static inline void fill_str(char *out, size_t size, char c)
{
	memset(out, c, size - 1);
	out[size - 1] = '\0';
}

/* An 8-GPU H100 node: GPU 6 in MIG mode with 7x 1g.10gb, GPU 7 with
 * 3g.40gb + 2x 2g.20gb, GPU 3 unhealthy; NVLink pairs; two NICs. */
static inline void h100_node(struct gf_np_inventory *inv)
{
	memset(inv, 0, sizeof(*inv));
	gf_np_inventory_room(inv, 8, 10);
	snprintf(inv->address, sizeof(inv->address), "10.0.0.7");
	snprintf(inv->agent_url, sizeof(inv->agent_url),
		 "http://10.0.0.7:9400/");
	snprintf(inv->version, sizeof(inv->version), "0.9.1");
	snprintf(inv->labels, sizeof(inv->labels), "zone=b,tier=train");
	snprintf(inv->block, sizeof(inv->block), "nvl-a");
	inv->cpu_milli = 224000;
	inv->memory_mib = 2097152;
	snprintf(inv->gpu_model, sizeof(inv->gpu_model), "h100-sxm");
	snprintf(inv->mig_model, sizeof(inv->mig_model), "h100-80gb");
	inv->ngpus = 8;
	for (int g = 0; g < 8; g++) {
		struct gf_np_gpu *x = &inv->gpus[g];
		x->index = g;
		snprintf(x->uuid, sizeof(x->uuid),
			 "GPU-f1ee7000-0001-4000-8000-00000000000%d", g);
		snprintf(x->name, sizeof(x->name), "NVIDIA H100 80GB HBM3");
		x->memory_mib = 81559;
		x->mig_mode = g >= 6;
		x->healthy = g != 3;
		if (g == 3)
			snprintf(x->reason, sizeof(x->reason), "xid 79");
	}
	static const struct {
		int gpu, start;
		const char *profile;
	} mig[] = { { 6, 0, "1g.10gb" }, { 6, 1, "1g.10gb" },
		    { 6, 2, "1g.10gb" }, { 6, 3, "1g.10gb" },
		    { 6, 4, "1g.10gb" }, { 6, 5, "1g.10gb" },
		    { 6, 6, "1g.10gb" }, { 7, 0, "3g.40gb" },
		    { 7, 4, "2g.20gb" }, { 7, 6, "2g.20gb" } };
	for (size_t i = 0; i < sizeof(mig) / sizeof(mig[0]); i++) {
		struct gf_np_mig *m = &inv->mig[inv->nmig++];
		m->gpu = mig[i].gpu;
		m->start = mig[i].start;
		snprintf(m->profile, sizeof(m->profile), "%s", mig[i].profile);
		snprintf(m->uuid, sizeof(m->uuid),
			 "MIG-0000%d000-aaaa-4bbb-8ccc-00000000000%zu",
			 mig[i].gpu, i);
	}
	inv->has_topo = true;
	inv->topo.ngpus = 8;
	for (int a = 0; a < 8; a++) {
		inv->topo.nic[a] = (uint8_t)(a < 4 ? 3 : 4);
		for (int b = 0; b < 8; b++)
			inv->topo.pair[a][b] =
				(uint8_t)(a == b ? 0
						 : (a / 4 == b / 4 ? 9 : 7));
	}
	inv->topo.uniform = false;
}

#endif
