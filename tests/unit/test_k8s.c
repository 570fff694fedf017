/*
 * test_k8s.c - the Kubernetes scheduler extender's room (src/k8s): pods
 * read as kube-scheduler reads them, and the wire types both ways with
 * their exact shapes.  The decisions on small clusters (and the core's
 * calls they make) are in test_k8s_decide.c; the same over HTTP, with
 * bind against a recorded API exchange, in test_k8s_serve.c.
 */
#include <gpufleet/catalog.h>
#include <gpufleet/ctl.h>
#include <gpufleet/job.h>

#include "k8s/answers.h"
#include "k8s/decide.h"
#include "k8s/k8s.h"
#include "k8s_helpers.h"
#include "util/fmt.h"
#include "util/json.h"
#include "util/mem.h"

/* ---- pods --------------------------------------------------------------- */

static struct gf_k8s_pod read_text(const char *text, int want_rc,
				   const char *want_msg)
{
	struct gf_k8s_pod p;
	struct gf_jv *v = parse(text);
	struct gf_err e;
	gf_err_clear(&e);
	int rc = gf_k8s_pod_read(v, &p, &e);
	if (rc != want_rc)
		print_message("%s\n", e.msg);
	assert_int_equal(rc, want_rc);
	if (want_msg)
		assert_non_null(strstr(e.msg, want_msg));
	gf_jv_free(v);
	return p;
}

/* Requests, limits and containers summed as kube-scheduler does. */
static void test_pod_requests(void **state)
{
	(void)state;
	/* limits only: the request is the limit (API server defaulting) */
	struct gf_k8s_pod p = read_text(
		"{\"metadata\": {\"name\": \"a\", \"namespace\": \"ml\", "
		"\"uid\": \"u-a\"}, \"spec\": {\"containers\": [{\"name\": "
		"\"c\", \"resources\": {\"limits\": {\"nvidia.com/gpu\": "
		"\"2\", \"memory\": \"1Gi\"}, \"requests\": {\"cpu\": "
		"\"500m\"}}}]}}",
		0, NULL);
	assert_true(p.managed);
	assert_int_equal(p.gpus, 2);
	assert_int_equal(p.cpu_milli, 500);
	assert_int_equal(p.memory_mib, 1024);
	assert_string_equal(p.uid, "u-a");
	/* two containers (1 + 2 GPUs = 3); init containers: a sidecar of 1
	 * (restartPolicy Always: runs beside them, 3 + 1 = 4) and one of 2
	 * (with the sidecar before it: 3); the pod asks max(4, 3) = 4;
	 * overhead adds 250m CPU to 1 + 2 = 3 cores: 3250 */
	p = read_text(
		"{\"metadata\": {\"name\": \"b\", \"namespace\": \"ml\", "
		"\"uid\": \"u-b\"}, \"spec\": {\"overhead\": {\"cpu\": "
		"\"250m\"}, \"containers\": [{\"name\": \"x\", \"resources\": "
		"{\"requests\": {\"nvidia.com/gpu\": \"1\", \"cpu\": \"1\"}, "
		"\"limits\": {\"nvidia.com/gpu\": \"1\"}}}, {\"name\": \"y\", "
		"\"resources\": {\"limits\": {\"nvidia.com/gpu\": \"2\"}, "
		"\"requests\": {\"cpu\": \"2\"}}}], \"initContainers\": "
		"[{\"name\": \"side\", \"restartPolicy\": \"Always\", "
		"\"resources\": {\"limits\": {\"nvidia.com/gpu\": \"1\"}}}, "
		"{\"name\": \"init\", \"resources\": {\"limits\": "
		"{\"nvidia.com/gpu\": \"2\"}}}]}}",
		0, NULL);
	assert_int_equal(p.gpus, 4);
	assert_int_equal(p.cpu_milli, 3250);
	/* an init container bigger than the rest decides: 6 */
	p = read_text("{\"metadata\": {\"name\": \"c\"}, \"spec\": "
		      "{\"containers\": [{\"name\": \"x\", \"resources\": "
		      "{\"limits\": {\"nvidia.com/gpu\": \"1\"}}}], "
		      "\"initContainers\": [{\"name\": \"i\", \"resources\": "
		      "{\"limits\": {\"nvidia.com/gpu\": \"6\"}}}]}}",
		      0, NULL);
	assert_int_equal(p.gpus, 6);
	assert_string_equal(p.ns, "default");
	/* shares, MIG, memory rounded up: 100M = 95.37 MiB -> 96 */
	p = read_text("{\"metadata\": {\"name\": \"d\"}, \"spec\": "
		      "{\"containers\": [{\"name\": \"x\", \"resources\": "
		      "{\"limits\": {\"gpufleet.io/gpu-milli\": \"250\", "
		      "\"memory\": \"100M\"}}}]}}",
		      0, NULL);
	assert_int_equal(p.gpu_milli, 250);
	assert_int_equal(p.memory_mib, 96);
	p = read_text("{\"metadata\": {\"name\": \"e\"}, \"spec\": "
		      "{\"containers\": [{\"name\": \"x\", \"resources\": "
		      "{\"limits\": {\"nvidia.com/mig-1g.10gb\": \"1\"}}}]}}",
		      0, NULL);
	assert_int_equal(p.nmig, 1);
	assert_int_equal(p.mig_count, 1);
	assert_string_equal(p.mig_profile, "1g.10gb");
	/* no GPU resource at all: not ours (kube-scheduler would not ask) */
	p = read_text("{\"metadata\": {\"name\": \"f\"}, \"spec\": "
		      "{\"containers\": [{\"name\": \"x\", \"resources\": "
		      "{\"requests\": {\"cpu\": \"2\"}}}]}}",
		      0, NULL);
	assert_false(p.managed);
	assert_int_equal(p.gpus, 0);
	/* a zero ask names the resource: sent to us, asks nothing */
	p = read_text("{\"metadata\": {\"name\": \"g\"}, \"spec\": "
		      "{\"containers\": [{\"name\": \"x\", \"resources\": "
		      "{\"limits\": {\"nvidia.com/gpu\": \"0\"}}}]}}",
		      0, NULL);
	assert_true(p.managed);
	assert_int_equal(p.gpus, 0);
}

static void test_pod_errors(void **state)
{
	(void)state;
	read_text("{\"metadata\": {\"name\": \"a\", \"namespace\": \"ml\"}, "
		  "\"spec\": {\"containers\": [{\"name\": \"c\", "
		  "\"resources\": {\"limits\": {\"nvidia.com/gpu\": "
		  "\"0.5\"}}}]}}",
		  GF_EINVAL,
		  "pod ml/a: container c: 'nvidia.com/gpu': expected a whole "
		  "number, got \"0.5\"");
	read_text("{\"metadata\": {\"name\": \"a\"}, \"spec\": "
		  "{\"containers\": [{\"name\": \"c\", \"resources\": "
		  "{\"limits\": {\"nvidia.com/gpu\": 2}}}]}}",
		  GF_EINVAL, "expected a quantity string");
	read_text("{\"metadata\": {\"name\": \"a\"}, \"spec\": "
		  "{\"containers\": [{\"name\": \"c\", \"resources\": "
		  "{\"requests\": {\"cpu\": \"lots\"}}}]}}",
		  GF_EINVAL, "'cpu': expected a quantity string");
	read_text("{\"metadata\": {}, \"spec\": {}}", GF_EINVAL,
		  "metadata.name");
	read_text("{\"spec\": {}}", GF_EINVAL, "metadata and spec");
	read_text("[1]", GF_EINVAL, "'Pod': expected an object");
}

static void test_pod_models(void **state)
{
	(void)state;
	struct gf_k8s_pod p;
	pod_of(&p, "a", "\"nvidia.com/gpu\": \"1\"",
	       "\"nvidia.com/gpu.product\": \"NVIDIA-H100-80GB-HBM3\"", "");
	assert_int_equal(p.nmodels, 1);
	assert_string_equal(p.models[0], "NVIDIA-H100-80GB-HBM3");
	pod_of(&p, "b", "\"nvidia.com/gpu\": \"1\"", "",
	       "\"annotations\": {\"gpufleet.io/gpu-model\": \"h100-sxm, "
	       "a100-80gb\", \"gpufleet.io/gpu-topology\": \"any\"}");
	assert_int_equal(p.nmodels, 2);
	assert_string_equal(p.models[1], "a100-80gb");
	assert_true(p.any_topology);
	/* required node affinity: every term names the product (In): the
	 * union; a term without it: no constraint */
	static const char aff[] =
		"{\"metadata\": {\"name\": \"c\"}, \"spec\": {\"affinity\": "
		"{\"nodeAffinity\": "
		"{\"requiredDuringSchedulingIgnoredDuringExecution\": "
		"{\"nodeSelectorTerms\": [{\"matchExpressions\": [{\"key\": "
		"\"nvidia.com/gpu.product\", \"operator\": \"In\", \"values\": "
		"[\"NVIDIA-A100-SXM4-80GB\"]}]}, {\"matchExpressions\": "
		"[{\"key\": \"%s\", \"operator\": \"In\", \"values\": "
		"[\"NVIDIA-H100-80GB-HBM3\"]}]}]}}}, \"containers\": []}}";
	char text[1024];
	snprintf(text, sizeof(text), aff, "nvidia.com/gpu.product");
	p = read_text(text, 0, NULL);
	assert_int_equal(p.nmodels, 2);
	snprintf(text, sizeof(text), aff, "zone");
	p = read_text(text, 0, NULL);
	assert_int_equal(p.nmodels, 0);
	char out[64];
	gf_k8s_product_norm("NVIDIA H100 80GB HBM3", out, sizeof(out));
	assert_string_equal(out, "nvidia-h100-80gb-hbm3");
	gf_k8s_product_norm("NVIDIA-A100-SXM4-40GB-MIG-1g.5gb", out,
			    sizeof(out));
	assert_string_equal(out, "nvidia-a100-sxm4-40gb");
	gf_k8s_product_norm("Tesla-T4-SHARED", out, sizeof(out));
	assert_string_equal(out, "tesla-t4");
}

/* ---- the wire ----------------------------------------------------------- */

static void test_wire_read(void **state)
{
	(void)state;
	struct gf_k8s_args a;
	struct gf_err e;
	struct gf_jv *v =
		parse("{\"Pod\": {\"metadata\": {}}, \"Nodes\": null, "
		      "\"NodeNames\": [\"n1\", \"n2\"]}");
	assert_int_equal(gf_k8s_args_read(v, &a, &e), 0);
	assert_int_equal(a.n, 2);
	assert_false(a.node_objects);
	assert_string_equal(a.names[1], "n2");
	gf_k8s_args_release(&a);
	gf_jv_free(v);
	/* nodeCacheCapable false: whole Node objects */
	v = parse("{\"Pod\": {}, \"NodeNames\": null, \"Nodes\": "
		  "{\"metadata\": {}, \"items\": [{\"metadata\": {\"name\": "
		  "\"n1\", \"labels\": {\"a\": \"b\"}}, \"status\": "
		  "{\"capacity\": {\"nvidia.com/gpu\": \"8\"}}}]}}");
	assert_int_equal(gf_k8s_args_read(v, &a, &e), 0);
	assert_int_equal(a.n, 1);
	assert_true(a.node_objects);
	assert_string_equal(a.names[0], "n1");
	gf_k8s_args_release(&a);
	gf_jv_free(v);
	/* both null: no candidate */
	v = parse("{\"Pod\": {}, \"Nodes\": null, \"NodeNames\": null}");
	assert_int_equal(gf_k8s_args_read(v, &a, &e), 0);
	assert_int_equal(a.n, 0);
	gf_k8s_args_release(&a);
	gf_jv_free(v);
	static const char *const bad[] = {
		"{\"Pod\": null, \"NodeNames\": []}",
		"{\"NodeNames\": []}",
		"{\"Pod\": {}, \"NodeNames\": \"n1\"}",
		"{\"Pod\": {}, \"NodeNames\": [\"n1\", 2]}",
		"{\"Pod\": {}, \"Nodes\": {\"items\": [{}]}}",
		"[]",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		v = parse(bad[i]);
		assert_int_equal(gf_k8s_args_read(v, &a, &e), GF_EINVAL);
		gf_k8s_args_release(&a);
		gf_jv_free(v);
	}
	struct gf_k8s_bind_args b;
	v = parse("{\"PodName\": \"train-0\", \"PodNamespace\": \"ml\", "
		  "\"PodUID\": \"u1\", \"Node\": \"gpu-a02\"}");
	assert_int_equal(gf_k8s_bind_args_read(v, &b, &e), 0);
	assert_string_equal(b.pod, "train-0");
	assert_string_equal(b.node, "gpu-a02");
	gf_jv_free(v);
	v = parse("{\"PodName\": \"train-0\", \"Node\": \"\"}");
	assert_int_equal(gf_k8s_bind_args_read(v, &b, &e), GF_EINVAL);
	assert_non_null(strstr(e.msg, "'Node'"));
	gf_jv_free(v);
	struct gf_k8s_preempt_args pa;
	v = parse("{\"Pod\": {}, \"NodeNameToVictims\": null, "
		  "\"NodeNameToMetaVictims\": {\"n1\": {\"Pods\": [{\"UID\": "
		  "\"u1\"}, {\"UID\": \"u2\"}], \"NumPDBViolations\": 1}}}");
	assert_int_equal(gf_k8s_preempt_args_read(v, &pa, &e), 0);
	assert_int_equal(pa.n, 1);
	assert_int_equal(pa.v[0].n, 2);
	assert_string_equal(pa.v[0].uids[1], "u2");
	assert_int_equal(pa.v[0].pdb, 1);
	gf_k8s_preempt_args_release(&pa);
	gf_jv_free(v);
	v = parse("{\"Pod\": {}, \"NodeNameToMetaVictims\": null, "
		  "\"NodeNameToVictims\": {\"n1\": {\"Pods\": [{\"metadata\": "
		  "{\"uid\": \"u9\"}}], \"NumPDBViolations\": 0}}}");
	assert_int_equal(gf_k8s_preempt_args_read(v, &pa, &e), 0);
	assert_string_equal(pa.v[0].uids[0], "u9");
	gf_k8s_preempt_args_release(&pa);
	gf_jv_free(v);
}

/* The keys of object v in document order, joined by ','. */
static void keys_of(const struct gf_jv *v, char *out, size_t size)
{
	void *it = NULL;
	const struct gf_jv *x;
	const char *k;
	size_t n = 0;
	out[0] = '\0';
	while ((k = gf_jv_next(v, &it, &x)) != NULL)
		n += (size_t)snprintf(out + n, size - n, "%s%s", n ? "," : "",
				      k);
}

static char *written(void (*fn)(struct gf_json *j, void *arg), void *arg)
{
	struct gf_buf b;
	struct gf_json j;
	gf_buf_init(&b, 1u << 20);
	gf_json_init(&j, &b);
	fn(&j, arg);
	assert_int_equal(gf_json_error(&j), 0);
	char *s = gf_strndup(b.data, b.len);
	gf_buf_release(&b);
	return s;
}

struct fw {
	const struct gf_k8s_args *a;
	const struct gf_k8s_verdict *v;
	const char *err;
};

static void fw_fn(struct gf_json *j, void *arg)
{
	struct fw *f = arg;
	gf_k8s_filter_write(j, f->a, f->v, f->err);
}

static void test_wire_write(void **state)
{
	(void)state;
	const char *names[] = { "gpu-a01", "gpu-a02", "gpu-b01" };
	struct gf_k8s_args a = { .names = names, .n = 3 };
	struct gf_k8s_verdict v[3] = {
		{ GF_K8S_NO_ROOM, "gpufleet: 1 free GPUs, the pod needs 2" },
		{ GF_K8S_FITS, "" },
		{ GF_K8S_NEVER, "gpufleet: node has no GPUs" },
	};
	struct fw f = { &a, v, NULL };
	char *s = written(fw_fn, &f);
	struct gf_jv *r = parse(s);
	char keys[256];
	keys_of(r, keys, sizeof(keys));
	/* ExtenderFilterResult's fields, in its order, every one present */
	assert_string_equal(keys, "Nodes,NodeNames,FailedNodes,"
				  "FailedAndUnresolvableNodes,Error");
	assert_int_equal(gf_jv_type(gf_jv_get(r, "Nodes")), GF_JV_NULL);
	assert_int_equal(gf_jv_len(gf_jv_get(r, "NodeNames")), 1);
	assert_string_equal(gf_jv_str(gf_jv_at(gf_jv_get(r, "NodeNames"), 0)),
			    "gpu-a02");
	assert_string_equal(
		gf_jv_str(gf_jv_get(gf_jv_get(r, "FailedNodes"), "gpu-a01")),
		"gpufleet: 1 free GPUs, the pod needs 2");
	assert_string_equal(
		gf_jv_str(gf_jv_get(gf_jv_get(r, "FailedAndUnresolvableNodes"),
				    "gpu-b01")),
		"gpufleet: node has no GPUs");
	assert_string_equal(gf_jv_str(gf_jv_get(r, "Error")), "");
	gf_jv_free(r);
	gf_free(s);
	/* an Error reply: NodeNames an empty array, never null */
	f.err = "gpufleet: bad pod";
	s = written(fw_fn, &f);
	r = parse(s);
	assert_int_equal(gf_jv_type(gf_jv_get(r, "NodeNames")), GF_JV_ARR);
	assert_int_equal(gf_jv_len(gf_jv_get(r, "NodeNames")), 0);
	assert_int_equal(gf_jv_len(gf_jv_get(r, "FailedNodes")), 0);
	assert_string_equal(gf_jv_str(gf_jv_get(r, "Error")),
			    "gpufleet: bad pod");
	gf_jv_free(r);
	gf_free(s);
	/* every candidate filtered out: still an array, not null */
	v[1].kind = GF_K8S_NO_ROOM;
	f.err = NULL;
	s = written(fw_fn, &f);
	r = parse(s);
	assert_int_equal(gf_jv_type(gf_jv_get(r, "NodeNames")), GF_JV_ARR);
	assert_int_equal(gf_jv_len(gf_jv_get(r, "NodeNames")), 0);
	gf_jv_free(r);
	gf_free(s);
	/* Node objects in: the passing ones echoed, NodeNames null */
	struct gf_jv *in = parse(
		"{\"Pod\": {}, \"Nodes\": {\"metadata\": {}, \"items\": "
		"[{\"metadata\": {\"name\": \"n1\"}, \"spec\": {\"taints\": "
		"[]}, \"status\": {\"allocatable\": {\"cpu\": \"8\"}}}, "
		"{\"metadata\": {\"name\": \"n2\"}}]}, \"NodeNames\": null}");
	struct gf_k8s_args ao;
	struct gf_err e;
	assert_int_equal(gf_k8s_args_read(in, &ao, &e), 0);
	struct gf_k8s_verdict vo[2] = { { GF_K8S_FITS, "" },
					{ GF_K8S_NO_ROOM, "no" } };
	struct fw fo = { &ao, vo, NULL };
	s = written(fw_fn, &fo);
	r = parse(s);
	assert_int_equal(gf_jv_type(gf_jv_get(r, "NodeNames")), GF_JV_NULL);
	const struct gf_jv *items = gf_jv_get(gf_jv_get(r, "Nodes"), "items");
	assert_int_equal(gf_jv_len(items), 1);
	assert_string_equal(
		gf_jv_str(gf_jv_get(
			gf_jv_get(gf_jv_get(gf_jv_at(items, 0), "status"),
				  "allocatable"),
			"cpu")),
		"8");
	gf_jv_free(r);
	gf_free(s);
	gf_k8s_args_release(&ao);
	gf_jv_free(in);
}

/* ExtenderArgs read from text as the parse and gf_k8s_args_read give
 * it: same code, message, names and pod, for plain names, escapes,
 * UTF-8, Nodes objects and refused texts. */
static void args_same(const char *text, size_t len)
{
	struct gf_err e1, e2;
	gf_err_clear(&e1);
	gf_err_clear(&e2);
	struct gf_jv *v1 = NULL, *v2 = NULL;
	struct gf_k8s_args a1, a2;
	memset(&a1, 0, sizeof(a1));
	int rc1 = gf_jv_parse(text, len, &v1, &e1);
	if (rc1 == 0)
		rc1 = gf_k8s_args_read(v1, &a1, &e1);
	int rc2 = gf_k8s_args_parse(text, len, &v2, &a2, &e2);
	if (rc1 != rc2 || strcmp(e1.msg, e2.msg))
		print_message("%.200s\n  %d '%s' / %d '%s'\n", text, rc1,
			      e1.msg, rc2, e2.msg);
	assert_int_equal(rc1, rc2);
	assert_string_equal(rc1 ? e1.msg : "", rc2 ? e2.msg : "");
	assert_int_equal(v1 == NULL, v2 == NULL);
	if (rc1 == 0) {
		assert_int_equal(a1.n, a2.n);
		assert_int_equal(a1.node_objects, a2.node_objects);
		for (int i = 0; i < a1.n; i++)
			assert_string_equal(a1.names[i], a2.names[i]);
		struct gf_buf b1, b2;
		gf_buf_init(&b1, 1u << 20);
		gf_buf_init(&b2, 1u << 20);
		gf_jv_dump(a1.pod, NULL, NULL, &b1);
		gf_jv_dump(a2.pod, NULL, NULL, &b2);
		assert_string_equal(gf_buf_str(&b1), gf_buf_str(&b2));
		gf_buf_release(&b1);
		gf_buf_release(&b2);
	}
	gf_k8s_args_release(&a1);
	gf_k8s_args_release(&a2);
	gf_jv_free(v1);
	gf_jv_free(v2);
}

static void test_wire_read_text(void **state)
{
	(void)state;
	static const char *const texts[] = {
		"{\"Pod\": {\"metadata\": {\"name\": \"p\"}}, \"Nodes\": "
		"null, \"NodeNames\": [\"n1\", \"n2\"]}",
		"{\"NodeNames\":[\"n1\",\"\",\"a b\"],\"Pod\":{}}",
		" \n{ \"NodeNames\" : [ ] , \"Pod\" : { } } \n",
		"{\"Pod\": {\"NodeNames\": [\"inner\"], \"s\": \"\\\"}, "
		"\\\"NodeNames\\\": [\\\"x\\\"]\"}, \"NodeNames\": [\"n1\"]}",
		"{\"Pod\": {}, \"n\": 1.5e3, \"t\": true, \"NodeNames\": "
		"[\"n1\"]}",
		/* left to jansson: escapes, UTF-8, not strings, null, Nodes */
		"{\"Pod\": {}, \"NodeNames\": [\"n\\u0031\", \"n2\"]}",
		"{\"Pod\": {}, \"NodeNames\": [\"n\xc3\xa9\"]}",
		"{\"Pod\": {}, \"NodeNames\": [\"n1\", 2]}",
		"{\"Pod\": {}, \"NodeNames\": null, \"Nodes\": {\"items\": "
		"[{\"metadata\": {\"name\": \"n1\"}}]}}",
		"{\"Pod\": {}, \"Node\\u004eames\": [\"n1\"]}",
		/* errors: the same code and message */
		"{\"Pod\": null, \"NodeNames\": [\"n1\"]}",
		"{\"NodeNames\": [\"n1\"]}",
		"{\"Pod\": {}, \"NodeNames\": [\"n1\"], \"NodeNames\": []}",
		"{\"Pod\": {}, \"NodeNames\": [\"n1\"]} x",
		"{\"Pod\": {}, \"NodeNames\": [\"n1\"], \"x\": [1,}",
		"{\"Pod\": {,}, \"NodeNames\": [\"n1\"]}",
		"{\"Pod\": {}, \"NodeNames\": [\"n1\",]}",
		"{\"Pod\": {}, \"NodeNames\": [\"n1\" \"n2\"]}",
		"{\"Pod\": {}, \"NodeNames\": [\"n1\"]]}",
		"{\"Pod\": {}, \"NodeNames\": [,\"n1\"]}",
		"{\"Pod\": {}, \"NodeNames\": [\"n1\",,\"n2\"]}",
		"{\"Pod\": {}, \"NodeNames\": [\"n1\"}",
		"{\"Pod\": {}, \"NodeNames\": [\"n1\", \"n\\\"2\"]}",
		"{\"NodeNames\" : [ \"n1\" ,\n \"n2\" ] , \"Pod\": {}}",
		"{\"Pod\": {}, \"NodeNames\": [\"n1\"], \"s\": \"\x01\"}",
		"{\"Pod\": {}, \"NodeNames\": [\"n1\"",
		"[\"NodeNames\", [\"n1\"]]",
		"{}",
		"",
	};
	for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++)
		args_same(texts[i], strlen(texts[i]));
	/* past GF_K8S_NAMES_MAX names: GF_ETOOBIG either way */
	struct gf_buf b;
	gf_buf_init(&b, 8u << 20);
	gf_buf_puts(&b, "{\"Pod\": {}, \"NodeNames\": [");
	for (int i = 0; i <= GF_K8S_NAMES_MAX; i++)
		gf_buf_puts(&b, i ? ",\"n\"" : "\"n\"");
	gf_buf_puts(&b, "]}");
	args_same(gf_buf_str(&b), b.len);
	struct gf_jv *v = NULL;
	struct gf_k8s_args a;
	struct gf_err e;
	assert_int_equal(gf_k8s_args_parse(gf_buf_str(&b), b.len, &v, &a, &e),
			 GF_ETOOBIG);
	assert_non_null(strstr(e.msg, "'NodeNames'"));
	gf_k8s_args_release(&a);
	gf_jv_free(v);
	gf_buf_release(&b);
}

struct pw {
	const struct gf_k8s_args *a;
	const int64_t *score;
};

static void pw_fn(struct gf_json *j, void *arg)
{
	struct pw *p = arg;
	gf_k8s_priorities_write(j, p->a, p->score);
}

static void bw_fn(struct gf_json *j, void *arg)
{
	gf_k8s_bind_result_write(j, arg);
}

struct ew {
	const struct gf_k8s_preempt_args *a;
	const int *keep;
	int *const *pick;
};

static void ew_fn(struct gf_json *j, void *arg)
{
	struct ew *p = arg;
	gf_k8s_preempt_write(j, p->a, p->keep, p->pick);
}

/* Filter's NodeNames of plain names (one compact run) and with a name
 * that needs escaping (the indented writer) read back as the names that
 * fit, in their order; an Error reply's still an empty array. */
static void test_wire_filter_compact(void **state)
{
	(void)state;
	const char *plain[] = { "n-1", "gpu.b-02", "x", "n-4" };
	const char *odd[] = { "n-1", "gpu.b-02", "q\"\\\u00e9", "n-4" };
	struct gf_k8s_verdict v[4] = { { GF_K8S_FITS, "" },
				       { GF_K8S_NO_ROOM, "full" },
				       { GF_K8S_FITS, "" },
				       { GF_K8S_FITS, "" } };
	for (int k = 0; k < 4; k++) {
		struct gf_k8s_args a = { .names = k & 1 ? odd : plain, .n = 4 };
		struct fw f = { &a, k < 2 ? v : NULL, k == 3 ? "bad" : NULL };
		char *s = written(fw_fn, &f);
		struct gf_jv *r = parse(s);
		const struct gf_jv *nn = gf_jv_get(r, "NodeNames");
		assert_int_equal(gf_jv_type(nn), GF_JV_ARR);
		int want[4] = { 0, 2, 3, -1 }, n = 0;
		if (k == 2)
			want[1] = 1, want[2] = 2, want[3] = 3;
		for (int i = 0; k != 3 && i < 4 && want[i] >= 0; i++, n++)
			assert_string_equal(gf_jv_str(gf_jv_at(nn, (size_t)i)),
					    a.names[want[i]]);
		assert_int_equal(gf_jv_len(nn), (size_t)n);
		gf_jv_free(r);
		gf_free(s);
	}
}

/* Names read in place (their lengths known: copied 8 bytes at a time),
 * of every length from 0 to 19, written back by filter and prioritize
 * as they came. */
static void test_wire_names_in_place(void **state)
{
	(void)state;
	struct gf_buf b;
	gf_buf_init(&b, 1u << 16);
	gf_buf_puts(&b, "{\"Pod\": {}, \"NodeNames\": [");
	char names[20][24];
	for (int k = 0; k < 20; k++) {
		for (int c = 0; c < k; c++)
			names[k][c] = (char)('a' + (k + c) % 26);
		names[k][k] = '\0';
		gf_buf_printf(&b, "%s\"%s\"", k ? ", " : "", names[k]);
	}
	gf_buf_puts(&b, "]}");
	struct gf_jv *v = NULL;
	struct gf_k8s_args a;
	struct gf_err e;
	assert_int_equal(gf_k8s_args_parse(gf_buf_str(&b), b.len, &v, &a, &e),
			 0);
	assert_non_null(a.len);
	int64_t sc[20];
	for (int k = 0; k < 20; k++)
		sc[k] = k;
	struct pw p = { &a, sc };
	struct fw f = { &a, NULL, NULL };
	char *ps = written(pw_fn, &p), *fs = written(fw_fn, &f);
	struct gf_jv *pr = parse(ps), *fr = parse(fs);
	const struct gf_jv *nn = gf_jv_get(fr, "NodeNames");
	assert_int_equal(gf_jv_len(pr), 20);
	assert_int_equal(gf_jv_len(nn), 20);
	for (int k = 0; k < 20; k++) {
		assert_string_equal(gf_jv_str(gf_jv_at(nn, (size_t)k)),
				    names[k]);
		assert_string_equal(
			gf_jv_str(gf_jv_get(gf_jv_at(pr, (size_t)k), "Host")),
			names[k]);
	}
	gf_jv_free(pr);
	gf_jv_free(fr);
	gf_free(ps);
	gf_free(fs);
	gf_k8s_args_release(&a);
	gf_jv_free(v);
	gf_buf_release(&b);
}

/* A HostPriorityList of plain names (written as one compact run) and
 * one with a name that needs escaping (the indented writer) read back
 * as the same hosts and scores, negative and large ones included. */
static void test_wire_priorities_compact(void **state)
{
	(void)state;
	const char *plain[] = { "n-1", "gpu.b-02", "x" };
	const char *odd[] = { "n-1", "gpu.b-02", "q\"\\\u00e9" };
	int64_t sc[3] = { 10, -7, INT64_MAX };
	for (int k = 0; k < 2; k++) {
		struct gf_k8s_args a = { .names = k ? odd : plain, .n = 3 };
		struct pw p = { &a, sc };
		char *s = written(pw_fn, &p);
		assert_true(k ? strchr(s, '\n') != NULL : !strchr(s, '\n'));
		struct gf_jv *r = parse(s);
		assert_int_equal(gf_jv_len(r), 3);
		for (int i = 0; i < 3; i++) {
			int64_t x;
			assert_string_equal(
				gf_jv_str(gf_jv_get(gf_jv_at(r, i), "Host")),
				a.names[i]);
			assert_true(gf_jv_int(
				gf_jv_get(gf_jv_at(r, i), "Score"), &x));
			assert_int_equal(x, sc[i]);
		}
		gf_jv_free(r);
		gf_free(s);
	}
}

static void test_wire_write_others(void **state)
{
	(void)state;
	const char *names[] = { "gpu-a02", "gpu-b01" };
	struct gf_k8s_args a = { .names = names, .n = 2 };
	int64_t sc[2] = { 9, 3 };
	struct pw p = { &a, sc };
	char *s = written(pw_fn, &p);
	struct gf_jv *r = parse(s);
	/* HostPriorityList: a bare array of {Host, Score} */
	assert_int_equal(gf_jv_type(r), GF_JV_ARR);
	char keys[128];
	keys_of(gf_jv_at(r, 0), keys, sizeof(keys));
	assert_string_equal(keys, "Host,Score");
	int64_t x;
	assert_true(gf_jv_int(gf_jv_get(gf_jv_at(r, 1), "Score"), &x));
	assert_int_equal(x, 3);
	gf_jv_free(r);
	gf_free(s);
	s = written(bw_fn, NULL);
	r = parse(s);
	keys_of(r, keys, sizeof(keys));
	assert_string_equal(keys, "Error");
	assert_string_equal(gf_jv_str(gf_jv_get(r, "Error")), "");
	gf_jv_free(r);
	gf_free(s);
	/* ExtenderPreemptionResult: always the Meta form */
	struct gf_jv *in = parse(
		"{\"Pod\": {}, \"NodeNameToMetaVictims\": {\"n1\": {\"Pods\": "
		"[{\"UID\": \"u1\"}, {\"UID\": \"u2\"}, {\"UID\": \"u3\"}], "
		"\"NumPDBViolations\": 2}, \"n2\": {\"Pods\": [{\"UID\": "
		"\"u4\"}], \"NumPDBViolations\": 0}}}");
	struct gf_k8s_preempt_args pa;
	struct gf_err e;
	assert_int_equal(gf_k8s_preempt_args_read(in, &pa, &e), 0);
	int keep[2] = { 2, -1 }, p0[3] = { 0, 2 }, p1[1] = { 0 };
	int *pick[2] = { p0, p1 };
	struct ew ew = { &pa, keep, pick };
	s = written(ew_fn, &ew);
	r = parse(s);
	keys_of(r, keys, sizeof(keys));
	assert_string_equal(keys, "NodeNameToMetaVictims");
	const struct gf_jv *m = gf_jv_get(r, "NodeNameToMetaVictims");
	assert_int_equal(gf_jv_len(m), 1);
	const struct gf_jv *n1 = gf_jv_get(m, "n1");
	keys_of(n1, keys, sizeof(keys));
	assert_string_equal(keys, "Pods,NumPDBViolations");
	assert_int_equal(gf_jv_len(gf_jv_get(n1, "Pods")), 2);
	assert_string_equal(
		gf_jv_str(gf_jv_get(gf_jv_at(gf_jv_get(n1, "Pods"), 1), "UID")),
		"u3");
	gf_jv_free(r);
	gf_free(s);
	gf_k8s_preempt_args_release(&pa);
	gf_jv_free(in);
}

/* Filter cut to the best: the `best` highest scores of the nodes that
 * fit stay, ties to the earlier in the list; the others that fit go
 * behind; those that do not fit keep their verdicts. */
static void test_keep_best(void **state)
{
	(void)state;
	enum { N = 9 };
	static const int64_t score[N] = { 3, 9, 5, 9, 0, 7, 5, 9, 1 };
	static const enum gf_k8s_kind kind[N] = {
		GF_K8S_FITS,  GF_K8S_FITS,    GF_K8S_FITS,
		GF_K8S_FITS,  GF_K8S_NO_ROOM, GF_K8S_FITS,
		GF_K8S_NEVER, GF_K8S_FITS,    GF_K8S_FITS,
	};
	struct gf_k8s_verdict v[N];
	/* best 4: the 9s at 1, 3, 7 and the 7 at 5; the 5 at 6 does not
	 * fit (NEVER, kept), the 5 at 2 is behind */
	for (int i = 0; i < N; i++)
		v[i].kind = kind[i];
	gf_k8s_keep_best(v, score, N, 4);
	static const enum gf_k8s_kind want4[N] = {
		GF_K8S_BEHIND, GF_K8S_FITS,    GF_K8S_BEHIND,
		GF_K8S_FITS,   GF_K8S_NO_ROOM, GF_K8S_FITS,
		GF_K8S_NEVER,  GF_K8S_FITS,    GF_K8S_BEHIND,
	};
	for (int i = 0; i < N; i++)
		assert_int_equal(v[i].kind, want4[i]);
	/* best 2 among three 9s: the two earlier in the list */
	for (int i = 0; i < N; i++)
		v[i].kind = kind[i];
	gf_k8s_keep_best(v, score, N, 2);
	int kept = 0;
	for (int i = 0; i < N; i++)
		kept += v[i].kind == GF_K8S_FITS;
	assert_int_equal(kept, 2);
	assert_int_equal(v[1].kind, GF_K8S_FITS);
	assert_int_equal(v[3].kind, GF_K8S_FITS);
	assert_int_equal(v[7].kind, GF_K8S_BEHIND);
	/* more room than fits, and best <= 0: nothing changes */
	for (int b = -1; b <= 100; b += 101) {
		for (int i = 0; i < N; i++)
			v[i].kind = kind[i];
		gf_k8s_keep_best(v, score, N, b);
		for (int i = 0; i < N; i++)
			assert_int_equal(v[i].kind, kind[i]);
	}
	/* the writer: a node behind is in neither NodeNames nor a map */
	struct gf_k8s_args a = { 0 };
	const char *names[3] = { "a", "b", "c" };
	a.names = names;
	a.n = 3;
	struct gf_k8s_verdict w[3] = { { GF_K8S_FITS, "" },
				       { GF_K8S_BEHIND, "" },
				       { GF_K8S_NO_ROOM, "gpufleet: full" } };
	struct gf_buf b;
	struct gf_json j;
	gf_json_open(&j, &b, 1u << 16);
	gf_k8s_filter_write(&j, &a, w, NULL);
	struct gf_jv *r;
	struct gf_err e;
	assert_int_equal(gf_jv_parse(b.data, b.len, &r, &e), 0);
	assert_int_equal(gf_jv_len(gf_jv_get(r, "NodeNames")), 1);
	assert_string_equal(gf_jv_str(gf_jv_at(gf_jv_get(r, "NodeNames"), 0)),
			    "a");
	assert_int_equal(gf_jv_len(gf_jv_get(r, "FailedNodes")), 1);
	assert_non_null(gf_jv_get(gf_jv_get(r, "FailedNodes"), "c"));
	assert_int_equal(gf_jv_len(gf_jv_get(r, "FailedAndUnresolvableNodes")),
			 0);
	gf_jv_free(r);
	gf_buf_release(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pod_requests),
		cmocka_unit_test(test_pod_errors),
		cmocka_unit_test(test_pod_models),
		cmocka_unit_test(test_wire_read),
		cmocka_unit_test(test_wire_read_text),
		cmocka_unit_test(test_wire_write),
		cmocka_unit_test(test_wire_write_others),
		cmocka_unit_test(test_wire_priorities_compact),
		cmocka_unit_test(test_wire_filter_compact),
		cmocka_unit_test(test_wire_names_in_place),
		cmocka_unit_test(test_keep_best),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
