/*
 * test_nodeproto_read.c - the node protocol's readers (src/nodeproto):
 * keys a reader does not know ignored; every kind of bad input refused
 * with GF_EINVAL (or GF_ETOOBIG past a cap) and the exact path of the
 * field in the message ("'gpus[1].index': ..."); the node spec the core
 * takes from an inventory.  test_nodeproto.c has the round trips.
 */
#include <inttypes.h>

#include "nodeproto_helpers.h"

/* ---- unknown keys ----------------------------------------------------- */

/* A newer agent's or controller's members, at every level, are skipped;
 * what is known is read as usual. */
static void test_unknown_keys_ignored(void **state)
{
	(void)state;
	static const char inv_text[] =
		"{\"cpu_milli\": 1000, \"memory_mib\": 2048, \"future\": "
		"{\"x\": [1, 2]}, \"gpu_model\": \"h100-sxm\", \"gpus\": "
		"[{\"index\": 0, \"uuid\": \"GPU-1\", \"ecc\": \"on\", "
		"\"mig_mode\": true}], \"mig\": [{\"gpu\": 0, \"profile\": "
		"\"7g.80gb\", \"start\": 0, \"placement\": 8}], \"gpu_topo\": "
		"{\"pair\": [[0]], \"nic\": [3], \"nvswitch\": true}, "
		"\"topology\": {\"anything\": null}}";
	struct gf_np_inventory *inv = gf_calloc(1, sizeof(*inv));
	struct gf_err e;
	struct gf_jv *v = parse(inv_text, strlen(inv_text));
	assert_int_equal(gf_np_inventory_read(v, inv, &e), 0);
	assert_int_equal(inv->cpu_milli, 1000);
	assert_int_equal(inv->ngpus, 1);
	assert_string_equal(inv->gpus[0].uuid, "GPU-1");
	assert_true(inv->gpus[0].healthy); /* absent: healthy */
	assert_int_equal(inv->nmig, 1);
	assert_true(inv->has_topo);
	assert_int_equal(inv->topo.nic[0], 3);
	/* the same object read as a heartbeat: nothing of it is one */
	struct gf_np_heartbeat hb;
	assert_int_equal(gf_np_heartbeat_read(v, &hb, &e), 0);
	assert_int_equal(hb.nrunning + hb.nreports + hb.nhealth, 0);
	gf_np_heartbeat_release(&hb);
	gf_jv_free(v);
	gf_np_inventory_free(inv);

	static const char hb_text[] =
		"{\"generation\": 7, \"load\": 0.5, \"health\": [{\"index\": "
		"1, \"healthy\": false, \"temp\": 90}], \"running\": "
		"[{\"job\": \"j1\", \"attempt\": 1, \"replica\": 0, \"pid\": "
		"42}], \"reports\": [{\"job\": \"j2\", \"attempt\": 1, "
		"\"replica\": 0, \"started_ms\": 1, \"ended_ms\": 2, "
		"\"exit_code\": 0, \"gpu_ms\": 3, \"max_rss\": 9}]}";
	v = parse(hb_text, strlen(hb_text));
	assert_int_equal(gf_np_heartbeat_read(v, &hb, &e), 0);
	assert_true(hb.generation == 7);
	assert_int_equal(hb.nhealth, 1);
	assert_false(hb.health[0].healthy);
	assert_int_equal(hb.nrunning, 1);
	assert_int_equal(hb.nreports, 1);
	assert_int_equal(hb.reports[0].run.gpu_ms, 3);
	assert_string_equal(hb.reports[0].run.reason, "");
	gf_np_heartbeat_release(&hb);
	gf_jv_free(v);

	static const char ack_text[] =
		"{\"name\": \"n1\", \"state\": \"ready\", \"generation\": 5, "
		"\"heartbeat_ms\": 1000, \"fence_after_ms\": 2000, \"acked\": "
		"[{\"job\": \"j2\", \"attempt\": 1, \"replica\": 0, \"at\": "
		"1}], \"motd\": \"hi\"}";
	struct gf_np_ack a;
	v = parse(ack_text, strlen(ack_text));
	assert_int_equal(gf_np_ack_read(v, &a, &e), 0);
	assert_int_equal(a.nacked, 1);
	assert_string_equal(a.acked[0].job, "j2");
	gf_np_ack_release(&a);
	gf_jv_free(v);

	static const char asg_text[] =
		"{\"generation\": 9, \"assignments\": [{\"job\": \"j3\", "
		"\"attempt\": 1, \"replica\": 0, \"gpus\": [{\"index\": 2, "
		"\"uuid\": \"GPU-2\", \"nvlink\": 18}], \"priority\": 5, "
		"\"mig\": {\"profile\": \"1g.10gb\", \"start\": 3, \"ci\": "
		"0}}], \"mig_layouts\": [{\"gpu\": 2, \"why\": \"demand\", "
		"\"instances\": [{\"profile\": \"1g.10gb\", \"start\": 3, "
		"\"x\": 1}]}], \"epoch\": 3}";
	struct gf_np_assignments as;
	v = parse(asg_text, strlen(asg_text));
	assert_int_equal(gf_np_assignments_read(v, &as, &e), 0);
	assert_int_equal(as.n, 1);
	assert_int_equal(as.v[0].place.gpus[0], 2);
	assert_true(as.v[0].mig);
	assert_int_equal(as.v[0].place.mig_start, 3);
	assert_int_equal(as.v[0].world_size, 1); /* absent: alone */
	assert_null(as.v[0].command);
	assert_int_equal(as.nlayouts, 1);
	assert_int_equal(as.layouts[0].n, 1);
	gf_np_assignments_release(&as);
	gf_jv_free(v);
}

/* ---- bad input -------------------------------------------------------- */

enum kind { INV, HB, ACK, ASG };

/* Read text as kind: the code, e filled. */
static int read_kind(enum kind k, const char *text, size_t len,
		     struct gf_err *e)
{
	struct gf_jv *v = parse(text, len);
	int rc;
	gf_err_clear(e);
	if (k == INV) {
		struct gf_np_inventory *inv = gf_calloc(1, sizeof(*inv));
		rc = gf_np_inventory_read(v, inv, e);
		/* refused: nothing left to release */
		assert_true(rc == 0 || (inv->gpus == NULL && inv->mig == NULL));
		gf_np_inventory_free(inv);
	} else if (k == HB) {
		struct gf_np_heartbeat hb;
		rc = gf_np_heartbeat_read(v, &hb, e);
		/* refused: nothing left to release */
		assert_true(rc == 0 ||
			    (hb.running == NULL && hb.reports == NULL &&
			     hb.gpu_pods == NULL));
		gf_np_heartbeat_release(&hb);
	} else if (k == ACK) {
		struct gf_np_ack a;
		rc = gf_np_ack_read(v, &a, e);
		assert_true(rc == 0 || a.acked == NULL);
		gf_np_ack_release(&a);
	} else {
		struct gf_np_assignments a;
		rc = gf_np_assignments_read(v, &a, e);
		assert_true(rc == 0 || a.v == NULL);
		gf_np_assignments_release(&a);
	}
	gf_jv_free(v);
	return rc;
}

struct bad {
	enum kind kind;
	const char *text;
	int code;
	const char *msg; /* the whole message, or its start with "..." */
};

static void expect(const struct bad *c, size_t i)
{
	struct gf_err e;
	int rc = read_kind(c->kind, c->text, strlen(c->text), &e);
	size_t n = strlen(c->msg);
	bool prefix = n > 3 && !strcmp(c->msg + n - 3, "...");
	bool ok = rc == c->code && (prefix ? !strncmp(e.msg, c->msg, n - 3)
					   : !strcmp(e.msg, c->msg));
	if (!ok)
		print_message("case %zu: %d '%s', expected %d '%s'\n", i, rc,
			      e.msg, c->code, c->msg);
	assert_true(ok);
}

#define GPU2                                                             \
	"\"cpu_milli\": 1000, \"memory_mib\": 1024, \"gpu_model\": "     \
	"\"h100-sxm\", \"gpus\": [{\"index\": 0, \"uuid\": \"GPU-0\"}, " \
	"{\"index\": 1, \"uuid\": \"GPU-1\", \"mig_mode\": true}]"
#define REF "\"job\": \"j1\", \"attempt\": 1, \"replica\": 0"
#define REP                                                              \
	REF ", \"started_ms\": 10, \"ended_ms\": 20, \"exit_code\": 0, " \
	    "\"gpu_ms\": 5"
#define ACK0                                                          \
	"\"state\": \"ready\", \"generation\": 1, \"heartbeat_ms\": " \
	"1000, \"fence_after_ms\": 2000"
#define ASG0 "\"generation\": 1, \"assignments\": "
#define ONE  REF ", \"gpus\": [{\"index\": 0}]"

static const struct bad bad_cases[] = {
	/* inventory: types, ranges, required */
	{ INV, "[]", GF_EINVAL, "expected a JSON object" },
	{ INV, "{\"memory_mib\": 1}", GF_EINVAL, "'cpu_milli': required" },
	{ INV, "{\"cpu_milli\": \"8\", \"memory_mib\": 1}", GF_EINVAL,
	  "'cpu_milli': expected a whole number" },
	{ INV, "{\"cpu_milli\": 1.5, \"memory_mib\": 1}", GF_EINVAL,
	  "'cpu_milli': expected a whole number" },
	{ INV, "{\"cpu_milli\": -1, \"memory_mib\": 1}", GF_EINVAL,
	  "'cpu_milli': expected 0 to 100000000, got -1" },
	{ INV, "{\"cpu_milli\": 1, \"memory_mib\": 1099511627777}", GF_EINVAL,
	  "'memory_mib': expected 0 to 1099511627776, got 1099511627777" },
	{ INV, "{\"cpu_milli\": 1, \"memory_mib\": 1, \"address\": 7}",
	  GF_EINVAL, "'address': expected a string" },
	{ INV,
	  "{\"cpu_milli\": 1, \"memory_mib\": 1, \"version\": "
	  "\"0123456789012345678901234567890123\"}",
	  GF_EINVAL, "'version': longer than 31 bytes" },
	{ INV, "{\"cpu_milli\": 1, \"memory_mib\": 1, \"gpu_model\": null}",
	  GF_EINVAL, "'gpu_model': expected a string" },
	{ INV,
	  "{\"cpu_milli\": 1, \"memory_mib\": 1, \"gpus\": "
	  "[{\"index\": 0}]}",
	  GF_EINVAL, "'gpu_model': required with GPUs" },
	{ INV, "{\"cpu_milli\": 1, \"memory_mib\": 1, \"gpus\": {}}", GF_EINVAL,
	  "'gpus': expected an array" },
	{ INV, "{\"cpu_milli\": 1, \"memory_mib\": 1, \"gpus\": [3]}",
	  GF_EINVAL, "'gpus[0]': expected an object" },
	{ INV, "{\"cpu_milli\": 1, \"memory_mib\": 1, \"gpus\": [{}]}",
	  GF_EINVAL, "'gpus[0].index': required" },
	{ INV,
	  "{\"cpu_milli\": 1, \"memory_mib\": 1, \"gpus\": "
	  "[{\"index\": 0}, {\"index\": 1, \"uuid\": 5}]}",
	  GF_EINVAL, "'gpus[1].uuid': expected a string" },
	{ INV,
	  "{\"cpu_milli\": 1, \"memory_mib\": 1, \"gpus\": "
	  "[{\"index\": 0, \"healthy\": \"yes\"}]}",
	  GF_EINVAL, "'gpus[0].healthy': expected true or false" },
	{ INV,
	  "{\"cpu_milli\": 1, \"memory_mib\": 1, \"gpus\": "
	  "[{\"index\": 0, \"memory_mib\": -2}]}",
	  GF_EINVAL, "'gpus[0].memory_mib': expected 0 to 1073741824, got -2" },
	{ INV,
	  "{\"cpu_milli\": 1, \"memory_mib\": 1, \"gpus\": "
	  "[{\"index\": 16}]}",
	  GF_EINVAL, "'gpus[0].index': expected 0 to 15, got 16" },
	/* GPU indexes not 0..n-1 */
	{ INV,
	  "{\"cpu_milli\": 1, \"memory_mib\": 1, \"gpus\": "
	  "[{\"index\": 1}]}",
	  GF_EINVAL,
	  "'gpus[0].index': expected 0: GPUs are listed in index order from "
	  "0" },
	{ INV,
	  "{\"cpu_milli\": 1, \"memory_mib\": 1, \"gpus\": "
	  "[{\"index\": 0}, {\"index\": 2}]}",
	  GF_EINVAL, "'gpus[1].index': expected 1: ..." },
	{ INV,
	  "{\"cpu_milli\": 1, \"memory_mib\": 1, \"gpus\": "
	  "[{\"index\": 0}, {\"index\": 0}]}",
	  GF_EINVAL, "'gpus[1].index': expected 1: ..." },
	/* MIG instances */
	{ INV,
	  "{" GPU2 ", \"mig\": [{\"gpu\": 0, \"profile\": \"1g.10gb\", "
	  "\"start\": 0}]}",
	  GF_EINVAL, "'mig[0].gpu': GPU 0 is not in MIG mode" },
	{ INV,
	  "{" GPU2 ", \"mig\": [{\"gpu\": 1, \"profile\": \"1g.10gb\", "
	  "\"start\": 0}, {\"gpu\": 2, \"profile\": "
	  "\"1g.10gb\", \"start\": 1}]}",
	  GF_EINVAL, "'mig[1].gpu': the node has 2 GPUs" },
	{ INV,
	  "{" GPU2 ", \"mig\": [{\"gpu\": 1, \"profile\": \"1g.10gb\", "
	  "\"start\": 8}]}",
	  GF_EINVAL, "'mig[0].start': expected 0 to 7, got 8" },
	{ INV, "{" GPU2 ", \"mig\": [{\"gpu\": 1, \"start\": 0}]}", GF_EINVAL,
	  "'mig[0].profile': required" },
	{ INV,
	  "{" GPU2 ", \"mig\": [{\"gpu\": 1, \"profile\": \"1g.10gb\", "
	  "\"start\": 0, \"uuid\": []}]}",
	  GF_EINVAL, "'mig[0].uuid': expected a string" },
	/* gpu_topo: size, symmetry, range */
	{ INV,
	  "{" GPU2 ", \"gpu_topo\": {\"pair\": [[0, 9]], \"nic\": [1, "
	  "1]}}",
	  GF_EINVAL,
	  "'gpu_topo.pair': expected 2 rows and 2 NIC entries, one per GPU" },
	{ INV,
	  "{" GPU2 ", \"gpu_topo\": {\"pair\": [[0, 9], [9, 0]], "
	  "\"nic\": [1]}}",
	  GF_EINVAL,
	  "'gpu_topo.pair': expected 2 rows and 2 NIC entries, ..." },
	{ INV,
	  "{" GPU2 ", \"gpu_topo\": {\"pair\": [[0, 9], [9, 0], [1, "
	  "1]], \"nic\": [1, 1]}}",
	  GF_ETOOBIG, "'gpu_topo.pair': 3 entries, at most 2" },
	{ INV,
	  "{" GPU2 ", \"gpu_topo\": {\"pair\": [[0, 9], [9]], \"nic\": "
	  "[1, 1]}}",
	  GF_EINVAL, "'gpu_topo.pair': row 1: expected 2 qualities" },
	{ INV,
	  "{" GPU2 ", \"gpu_topo\": {\"pair\": [[0, 9], [8, 0]], "
	  "\"nic\": [1, 1]}}",
	  GF_EINVAL, "'gpu_topo.pair': not symmetric at [0][1]" },
	{ INV,
	  "{" GPU2 ", \"gpu_topo\": {\"pair\": [[0, 256], [256, 0]], "
	  "\"nic\": [1, 1]}}",
	  GF_EINVAL, "'gpu_topo.pair': [0][1]: expected 0 to 255" },
	{ INV,
	  "{" GPU2 ", \"gpu_topo\": {\"pair\": [[0, 9], [9, \"x\"]], "
	  "\"nic\": [1, 1]}}",
	  GF_EINVAL, "'gpu_topo.pair': [1][1]: expected 0 to 255" },
	{ INV,
	  "{" GPU2 ", \"gpu_topo\": {\"pair\": [[0, 9], [9, 0]], "
	  "\"nic\": [1, -1]}}",
	  GF_EINVAL, "'gpu_topo.nic': [1]: expected 0 to 255" },
	{ INV, "{" GPU2 ", \"gpu_topo\": {\"pair\": [[0, 9], [9, 0]]}}",
	  GF_EINVAL, "'gpu_topo.nic': required" },
	{ INV, "{" GPU2 ", \"gpu_topo\": {\"nic\": [1, 1]}}", GF_EINVAL,
	  "'gpu_topo.pair': required" },
	{ INV,
	  "{\"cpu_milli\": 1, \"memory_mib\": 1, \"gpu_topo\": "
	  "{\"pair\": [[0]], \"nic\": [0]}}",
	  GF_ETOOBIG, "'gpu_topo.pair': 1 entries, at most 0" },
	/* labels */
	{ INV, "{" GPU2 ", \"labels\": {\"a=b\": \"c\"}}", GF_EINVAL,
	  "'labels': labels and values are strings without '=', ',' or "
	  "spaces" },
	{ INV, "{" GPU2 ", \"labels\": {\"a\": \"b,c=d\"}}", GF_EINVAL,
	  "'labels': labels and values are strings without ..." },
	{ INV, "{" GPU2 ", \"labels\": {\"a,b\": \"c\"}}", GF_EINVAL,
	  "'labels': labels and values are strings without ..." },
	{ INV, "{" GPU2 ", \"labels\": {\"a\": \"x=y\"}}", GF_EINVAL,
	  "'labels': labels and values are strings without ..." },
	{ INV, "{" GPU2 ", \"labels\": {\"a\": 1}}", GF_EINVAL,
	  "'labels': labels and values are strings without ..." },
	{ INV, "{" GPU2 ", \"labels\": {\"\": \"x\"}}", GF_EINVAL,
	  "'labels': labels and values are strings without ..." },
	{ INV, "{" GPU2 ", \"labels\": \"a=b\"}", GF_EINVAL,
	  "'labels': expected an object of label: value" },
	{ INV, "{" GPU2 ", \"topology\": \"lstopo\"}", GF_EINVAL,
	  "'topology': expected an object (topo --json)" },

	/* heartbeat */
	{ HB, "[1]", GF_EINVAL, "expected a JSON object" },
	{ HB, "{\"generation\": -1}", GF_EINVAL,
	  "'generation': expected 0 to 9223372036854775807, got -1" },
	{ HB, "{\"health\": [{\"index\": 16}]}", GF_EINVAL,
	  "'health[0].index': expected 0 to 15, got 16" },
	{ HB, "{\"health\": [{\"index\": 0}, {\"healthy\": false}]}", GF_EINVAL,
	  "'health[1].index': required" },
	{ HB, "{\"health\": [{\"index\": 0, \"healthy\": 0}]}", GF_EINVAL,
	  "'health[0].healthy': expected true or false" },
	{ HB, "{\"health\": [null]}", GF_EINVAL,
	  "'health[0]': expected an object" },
	{ HB,
	  "{\"running\": [{" REF "}, {\"job\": \"j2\", \"attempt\": 0, "
	  "\"replica\": 0}]}",
	  GF_EINVAL, "'running[1].attempt': expected 1 to 2147483647, got 0" },
	{ HB, "{\"running\": [{\"attempt\": 1, \"replica\": 0}]}", GF_EINVAL,
	  "'running[0].job': required" },
	{ HB,
	  "{\"running\": [{\"job\": \"j1\", \"attempt\": 1, \"replica\": "
	  "1024}]}",
	  GF_EINVAL, "'running[0].replica': expected 0 to 1023, got 1024" },
	{ HB,
	  "{\"running\": [{\"job\": \"j123456789012345678901234\", "
	  "\"attempt\": 1, \"replica\": 0}]}",
	  GF_EINVAL, "'running[0].job': longer than 23 bytes" },
	{ HB, "{\"running\": {}}", GF_EINVAL, "'running': expected an array" },
	{ HB,
	  "{\"reports\": [{" REP "}, {" REF ", \"started_ms\": 20, "
	  "\"ended_ms\": 19, \"exit_code\": 0, \"gpu_ms\": 0}]}",
	  GF_EINVAL, "'reports[1].ended_ms': before started_ms" },
	{ HB,
	  "{\"reports\": [{" REF ", \"started_ms\": 0, \"ended_ms\": 1, "
	  "\"exit_code\": 0, \"gpu_ms\": 0}]}",
	  GF_EINVAL, "'reports[0].started_ms': expected 1 to ..." },
	{ HB,
	  "{\"reports\": [{" REF ", \"started_ms\": 1, \"ended_ms\": 1, "
	  "\"exit_code\": 384, \"gpu_ms\": 0}]}",
	  GF_EINVAL, "'reports[0].exit_code': expected -1 to 383, got 384" },
	{ HB,
	  "{\"reports\": [{" REF ", \"started_ms\": 1, \"ended_ms\": 1, "
	  "\"exit_code\": 0, \"gpu_ms\": -5}]}",
	  GF_EINVAL, "'reports[0].gpu_ms': expected 0 to ..." },
	{ HB,
	  "{\"reports\": [{" REF ", \"started_ms\": 1, \"ended_ms\": 1, "
	  "\"exit_code\": 0}]}",
	  GF_EINVAL, "'reports[0].gpu_ms': required" },
	{ HB, "{\"reports\": [{" REP ", \"reason\": false}]}", GF_EINVAL,
	  "'reports[0].reason': expected a string" },
	{ HB, "{\"gpu_pods\": {}}", GF_EINVAL,
	  "'gpu_pods': expected an array" },
	{ HB, "{\"gpu_pods\": [7]}", GF_EINVAL,
	  "'gpu_pods[0]': expected an object" },
	{ HB, "{\"gpu_pods\": [{\"pods\": []}]}", GF_EINVAL,
	  "'gpu_pods[0].uuid': required" },
	{ HB, "{\"gpu_pods\": [{\"uuid\": \"\", \"pods\": []}]}", GF_EINVAL,
	  "'gpu_pods[0].uuid': empty" },
	{ HB, "{\"gpu_pods\": [{\"uuid\": \"GPU-1\"}]}", GF_EINVAL,
	  "'gpu_pods[0].pods': required" },
	{ HB,
	  "{\"gpu_pods\": [{\"uuid\": \"GPU-1\", \"pods\": []}, "
	  "{\"uuid\": \"GPU-2\", \"pods\": [\"a\", 5]}]}",
	  GF_EINVAL, "'gpu_pods[1].pods[1]': expected a string" },
	{ HB, "{\"gpu_pods\": [{\"uuid\": \"GPU-1\", \"pods\": [\"\"]}]}",
	  GF_EINVAL, "'gpu_pods[0].pods[0]': empty" },
	{ HB,
	  "{\"gpu_pods\": [{\"uuid\": \"GPU-1\", \"pods\": "
	  "[\"6f1c2a9e-0b7d-4c1e-9a55-3d2f8e7b6a10x\"]}]}",
	  GF_EINVAL, "'gpu_pods[0].pods[0]': longer than 36 bytes" },
	{ HB,
	  "{\"gpu_pods\": [{\"uuid\": \"GPU-1\", \"pods\": [\"1\", \"2\", "
	  "\"3\", \"4\", \"5\", \"6\", \"7\", \"8\", \"9\"]}]}",
	  GF_ETOOBIG, "'gpu_pods[0].pods': 9 entries, at most 8" },

	/* ack */
	{ ACK,
	  "{\"generation\": 1, \"heartbeat_ms\": 1000, "
	  "\"fence_after_ms\": 0}",
	  GF_EINVAL, "'state': required" },
	{ ACK,
	  "{\"state\": \"ready\", \"generation\": 1, \"heartbeat_ms\": "
	  "5, \"fence_after_ms\": 0}",
	  GF_EINVAL, "'heartbeat_ms': expected 10 to 3600000, got 5" },
	{ ACK,
	  "{" ACK0 ", \"acked\": [{" REF "}, {\"job\": \"j1\", "
	  "\"attempt\": 1, \"replica\": -1}]}",
	  GF_EINVAL, "'acked[1].replica': expected 0 to 1023, got -1" },
	{ ACK, "{" ACK0 ", \"acked\": [7]}", GF_EINVAL,
	  "'acked[0]': expected an object" },

	/* assignments */
	{ ASG, "{\"assignments\": []}", GF_EINVAL, "'generation': required" },
	{ ASG, "{\"generation\": 1}", GF_EINVAL, "'assignments': required" },
	{ ASG, "{" ASG0 "[{" REF "}]}", GF_EINVAL,
	  "'assignments[0].gpus': required" },
	{ ASG, "{" ASG0 "[{" REF ", \"gpus\": [{\"index\": 16}]}]}", GF_EINVAL,
	  "'assignments[0].gpus[0].index': expected 0 to 15, got 16" },
	{ ASG,
	  "{" ASG0 "[{" ONE "}, {" REF ", \"gpus\": [{\"index\": 0, "
	  "\"uuid\": 1}]}]}",
	  GF_EINVAL, "'assignments[1].gpus[0].uuid': expected a string" },
	{ ASG, "{" ASG0 "[{" ONE ", \"gpu_milli\": 1001}]}", GF_EINVAL,
	  "'assignments[0].gpu_milli': expected 0 to 1000, got 1001" },
	/* a gang without its master */
	{ ASG,
	  "{" ASG0 "[{" ONE ", \"world_size\": 2, \"rank\": 1, "
	  "\"master_port\": 29500}]}",
	  GF_EINVAL,
	  "'assignments[0].master_addr': a gang needs its master's address "
	  "and port" },
	{ ASG,
	  "{" ASG0 "[{" ONE ", \"world_size\": 2, \"master_addr\": "
	  "\"n1\"}]}",
	  GF_EINVAL, "'assignments[0].master_addr': a gang needs ..." },
	{ ASG,
	  "{" ASG0 "[{" ONE ", \"world_size\": 2, \"rank\": 2, "
	  "\"master_addr\": \"n1\", \"master_port\": 1}]}",
	  GF_EINVAL, "'assignments[0].rank': outside its world" },
	{ ASG, "{" ASG0 "[{" ONE ", \"local_rank\": 1}]}", GF_EINVAL,
	  "'assignments[0].rank': outside its world" },
	{ ASG, "{" ASG0 "[{" ONE ", \"master_port\": 65536}]}", GF_EINVAL,
	  "'assignments[0].master_port': expected 0 to 65535, got 65536" },
	/* issue 21: environment, directory, user */
	{ ASG, "{" ASG0 "[{" ONE ", \"env\": {\"RANK\": \"0\"}}]}", GF_EINVAL,
	  "'assignments[0].env': 'RANK': not a variable a job may set" },
	{ ASG, "{" ASG0 "[{" ONE ", \"env\": {\"A\": 1}}]}", GF_EINVAL,
	  "'assignments[0].env': 'A': not a variable a job may set" },
	{ ASG, "{" ASG0 "[{" ONE ", \"env\": \"A=1\"}]}", GF_EINVAL,
	  "'assignments[0].env': expected an object ..." },
	{ ASG, "{" ASG0 "[{" ONE ", \"workdir\": \"x\"}]}", GF_EINVAL,
	  "'assignments[0].workdir': expected an absolute path" },
	{ ASG, "{" ASG0 "[{" ONE ", \"user\": \"a b\"}]}", GF_EINVAL,
	  "'assignments[0].user': expected a login name" },
	/* MIG */
	{ ASG,
	  "{" ASG0 "[{" REF ", \"gpus\": [{\"index\": 0}, {\"index\": "
	  "1}], \"mig\": {\"profile\": \"1g.10gb\", \"start\": 0}}]}",
	  GF_EINVAL, "'assignments[0].mig': a MIG instance is on one GPU" },
	{ ASG,
	  "{" ASG0 "[{" ONE ", \"mig\": {\"profile\": \"1g.10gb\", "
	  "\"start\": 9}}]}",
	  GF_EINVAL, "'assignments[0].mig.start': expected 0 to 7, got 9" },
	{ ASG, "{" ASG0 "[{" ONE ", \"mig\": {\"start\": 0}}]}", GF_EINVAL,
	  "'assignments[0].mig.profile': required" },
	{ ASG, "{" ASG0 "[{" ONE ", \"mig\": \"1g.10gb\"}]}", GF_EINVAL,
	  "'assignments[0].mig': expected an object or null" },
	{ ASG, "{" ASG0 "[{" ONE ", \"command\": [\"sh\"]}]}", GF_EINVAL,
	  "'assignments[0].command': expected a string" },
	{ ASG, "{" ASG0 "[{" ONE ", \"output\": 3}]}", GF_EINVAL,
	  "'assignments[0].output': expected a string" },
	{ ASG, "{" ASG0 "[{" ONE ", \"max_runtime_s\": -1}]}", GF_EINVAL,
	  "'assignments[0].max_runtime_s': expected 0 to ..." },
	{ ASG,
	  "{" ASG0 "[], \"mig_layouts\": [{\"gpu\": 0, \"instances\": "
	  "[{\"start\": 0}]}]}",
	  GF_EINVAL, "'mig_layouts[0].instances[0].profile': required" },
	{ ASG,
	  "{" ASG0 "[], \"mig_layouts\": [{\"gpu\": 0, \"instances\": "
	  "[]}, {\"gpu\": 16, \"instances\": []}]}",
	  GF_EINVAL, "'mig_layouts[1].gpu': expected 0 to 15, got 16" },
	{ ASG, "{" ASG0 "[], \"mig_layouts\": [{\"gpu\": 0}]}", GF_EINVAL,
	  "'mig_layouts[0].instances': required" },
	{ ASG,
	  "{" ASG0 "[], \"mig_layouts\": [{\"gpu\": 0, \"instances\": "
	  "[{\"profile\": \"1g.10gb\", \"start\": 0}, {\"profile\": "
	  "\"1g.10gb\", \"start\": 8}]}]}",
	  GF_EINVAL,
	  "'mig_layouts[0].instances[1].start': expected 0 to 7, "
	  "got 8" },
	{ ASG,
	  "{" ASG0 "[], \"mig_layouts\": [{\"gpu\": 0, \"instances\": "
	  "[{\"profile\": \"1g.10gb\", \"start\": 0}, {\"profile\": "
	  "\"1g.10gb\", \"start\": 1}, {\"profile\": \"1g.10gb\", "
	  "\"start\": 2}, {\"profile\": \"1g.10gb\", \"start\": 3}, "
	  "{\"profile\": \"1g.10gb\", \"start\": 4}, {\"profile\": "
	  "\"1g.10gb\", \"start\": 5}, {\"profile\": \"1g.10gb\", "
	  "\"start\": 6}, {\"profile\": \"1g.10gb\", \"start\": 7}, "
	  "{\"profile\": \"1g.10gb\", \"start\": 0}]}]}",
	  GF_ETOOBIG, "'mig_layouts[0].instances': 9 entries, at most 8" },
};

static void test_bad_input(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(bad_cases) / sizeof(bad_cases[0]); i++)
		expect(&bad_cases[i], i);
}

/* {PREFIX"KEY": [ELEM x n]}SUFFIX */
static char *list_of(const char *prefix, const char *key, const char *elem,
		     int n, const char *suffix, size_t *len)
{
	struct gf_buf b;
	gf_buf_init(&b, 64u << 20);
	gf_buf_printf(&b, "{%s\"%s\": [", prefix, key);
	for (int i = 0; i < n; i++)
		gf_buf_printf(&b, "%s%s", i ? ", " : "", elem);
	gf_buf_printf(&b, "]}%s", suffix);
	assert_int_equal(gf_buf_error(&b), 0);
	*len = b.len;
	char *s = gf_strndup(b.data, b.len);
	gf_buf_release(&b);
	return s;
}

/* One entry more than each cap: GF_ETOOBIG naming the list; the cap
 * itself passes. */
static void test_caps(void **state)
{
	(void)state;
	static const struct {
		enum kind kind;
		const char *prefix, *key, *elem;
		int cap;
	} caps[] = {
		{ INV, "\"cpu_milli\": 1, \"memory_mib\": 1, ", "gpus",
		  "{\"index\": 0}", GF_CNODE_MAX_GPUS },
		{ INV, GPU2 ", ", "mig",
		  "{\"gpu\": 1, \"profile\": \"1g.10gb\", \"start\": 0}",
		  GF_CTL_MAX_MIG },
		{ HB, "", "health", "{\"index\": 0}", GF_CNODE_MAX_GPUS },
		{ HB, "", "running", "{" REF "}", GF_NP_MAX_RUNNING },
		{ HB, "", "reports", "{" REP "}", GF_NP_MAX_REPORTS },
		{ HB, "", "gpu_pods",
		  "{\"uuid\": \"GPU-1\", \"pods\": [\"u\"]}",
		  GF_NP_MAX_GPU_PODS },
		{ ACK, ACK0 ", ", "acked", "{" REF "}", GF_NP_MAX_REPORTS },
		{ ASG, "\"generation\": 1, ", "assignments", "{" ONE "}",
		  GF_NP_MAX_RUNNING },
		{ ASG, "\"generation\": 1, \"assignments\": [], ",
		  "mig_layouts", "{\"gpu\": 0, \"instances\": []}",
		  GF_CNODE_MAX_GPUS },
		{ ASG, "\"generation\": 1, \"assignments\": [{" REF ", ",
		  "gpus", "{\"index\": 0}", GF_CNODE_MAX_GPUS },
	};
	for (size_t i = 0; i < sizeof(caps) / sizeof(caps[0]); i++) {
		size_t len;
		/* a GPU list inside an assignment: close the list and the
		 * object around it too */
		bool nested =
			caps[i].kind == ASG && !strcmp(caps[i].key, "gpus");
		const char *suffix = nested ? "]}" : "";
		char *text = list_of(caps[i].prefix, caps[i].key, caps[i].elem,
				     caps[i].cap + 1, suffix, &len);
		struct gf_err e;
		int rc = read_kind(caps[i].kind, text, len, &e);
		char want[128];
		snprintf(want, sizeof(want), "'%s%s': %d entries, at most %d",
			 nested ? "assignments[0]." : "", caps[i].key,
			 caps[i].cap + 1, caps[i].cap);
		if (rc != GF_ETOOBIG || strcmp(e.msg, want))
			print_message("cap %zu: %d '%s'\n", i, rc, e.msg);
		assert_int_equal(rc, GF_ETOOBIG);
		assert_string_equal(e.msg, want);
		gf_free(text);
		/* at the cap: a GPU list of 16 must hold indexes 0..15, MIG
		 * instances distinct places: checked by the round trips */
		if (caps[i].kind == INV)
			continue;
		text = list_of(caps[i].prefix, caps[i].key, caps[i].elem,
			       caps[i].cap, suffix, &len);
		rc = read_kind(caps[i].kind, text, len, &e);
		if (rc)
			print_message("cap %zu at the cap: '%s'\n", i, e.msg);
		assert_int_equal(rc, 0);
		gf_free(text);
	}
}

/* What the core's node spec takes from an inventory. */
static void test_inventory_spec(void **state)
{
	(void)state;
	struct gf_np_inventory *in = gf_calloc(1, sizeof(*in));
	h100_node(in);
	struct gf_ctl_node_spec spec;
	gf_np_inventory_spec(in, &spec);
	assert_int_equal(spec.cpu_milli, 224000);
	assert_int_equal(spec.memory_mib, 2097152);
	assert_int_equal(spec.ngpus, 8);
	assert_string_equal(spec.gpu_model, "h100-sxm");
	assert_string_equal(spec.mig_model, "h100-80gb");
	assert_string_equal(spec.labels, "zone=b,tier=train");
	assert_string_equal(spec.block, "nvl-a");
	assert_int_equal(spec.nmig, 10);
	assert_int_equal(spec.mig[9].gpu, 7);
	assert_int_equal(spec.mig[9].start, 6);
	assert_string_equal(spec.mig[9].profile, "2g.20gb");
	assert_ptr_equal(spec.topo, &in->topo);
	in->has_topo = false;
	gf_np_inventory_spec(in, &spec);
	assert_null(spec.topo);
	gf_np_inventory_free(in);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_unknown_keys_ignored),
		cmocka_unit_test(test_bad_input),
		cmocka_unit_test(test_caps),
		cmocka_unit_test(test_inventory_spec),
	};
	return cmocka_run_group_tests_name("nodeproto-read", tests, NULL, NULL);
}
