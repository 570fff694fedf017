/*
 * k8s_helpers.h - what the extender's tests share (test_k8s.c,
 * test_k8s_serve.c): NVIDIA's DGX-1V hybrid cube-mesh as a GPU topology,
 * and Pod objects and extender requests shaped as kube-scheduler sends
 * them (capitalised keys, null where Go sends nil, quantities as
 * strings), built from a few fields; JSON text parsed, a pod read.
 */
#ifndef GF_TEST_K8S_HELPERS_H
#define GF_TEST_K8S_HELPERS_H

#include <gpufleet/gpu_topo.h>

#include "helpers.h"
#include "k8s/k8s.h"
#include "util/buf.h"
#include "util/json.h"

/*
 * The DGX-1V (and Azure NDv2) NVLink matrix as `nvidia-smi topo -m`
 * prints it: NVn = n links, the rest across the sockets (SYS).  GPUs
 * 0-3 and 4-7 are each fully NVLink-connected quads; 0-4, 1-5, 2-6 and
 * 3-7 join them.
 */
static const int dgx1v_nv[8][8] = {
	{ 0, 1, 1, 2, 2, 0, 0, 0 }, { 1, 0, 2, 1, 0, 2, 0, 0 },
	{ 1, 2, 0, 2, 0, 0, 1, 0 }, { 2, 1, 2, 0, 0, 0, 0, 1 },
	{ 2, 0, 0, 0, 0, 1, 1, 2 }, { 0, 2, 0, 0, 1, 0, 2, 1 },
	{ 0, 0, 1, 0, 1, 2, 0, 2 }, { 0, 0, 0, 1, 2, 1, 2, 0 },
};

static inline void dgx1v_topo(struct gf_gpu_topo *t)
{
	memset(t, 0, sizeof(*t));
	t->ngpus = 8;
	for (int a = 0; a < 8; a++)
		for (int b = 0; b < 8; b++)
			t->pair[a][b] = a == b ? 0
					: dgx1v_nv[a][b]
						? (uint8_t)(GF_GQ_NVLINK +
							    dgx1v_nv[a][b])
						: GF_GQ_SYS;
	for (int g = 0; g < 8; g++)
		t->nic[g] = GF_GQ_PIX;
	t->uniform = false;
}

/*
 * A Pod as the API server serves it to kube-scheduler: metadata (name,
 * namespace, uid, creationTimestamp, annotations), a container "main"
 * whose requests and limits hold `res` (JSON members, e.g.
 * "\"nvidia.com/gpu\": \"4\""), spec.schedulerName, a node selector
 * (JSON members or ""), status Pending.  extra_meta: more members of
 * metadata ("" none).
 */
static inline void pod_json(struct gf_buf *b, const char *ns, const char *name,
			    const char *uid, const char *res,
			    const char *selector, const char *extra_meta)
{
	gf_buf_printf(
		b,
		"{\"metadata\": {\"name\": \"%s\", \"namespace\": \"%s\", "
		"\"uid\": \"%s\", \"resourceVersion\": \"4711\", "
		"\"creationTimestamp\": \"2026-03-01T10:00:00Z\", "
		"\"labels\": {\"app\": \"%s\"}%s%s}, "
		"\"spec\": {\"schedulerName\": \"default-scheduler\", "
		"\"restartPolicy\": \"Never\", \"priority\": 0, "
		"\"nodeSelector\": {%s}, "
		"\"tolerations\": [{\"key\": \"nvidia.com/gpu\", \"operator\": "
		"\"Exists\", \"effect\": \"NoSchedule\"}], "
		"\"containers\": [{\"name\": \"main\", \"image\": "
		"\"registry.local/train:1\", \"resources\": {\"limits\": {%s}, "
		"\"requests\": {%s}}}]}, "
		"\"status\": {\"phase\": \"Pending\", \"qosClass\": "
		"\"BestEffort\"}}",
		name, ns, uid, name, extra_meta[0] ? ", " : "", extra_meta,
		selector, res, res);
}

/* ExtenderArgs with nodeCacheCapable: "Nodes": null, "NodeNames". */
static inline void args_json(struct gf_buf *b, const char *pod,
			     const char *const *names, int n)
{
	gf_buf_printf(b, "{\"Pod\": %s, \"Nodes\": null, \"NodeNames\": [",
		      pod);
	for (int i = 0; i < n; i++)
		gf_buf_printf(b, "%s\"%s\"", i ? ", " : "", names[i]);
	gf_buf_puts(b, "]}");
}

/* text parsed as JSON, which it must be. */
static inline struct gf_jv *parse(const char *text)
{
	struct gf_jv *v;
	struct gf_err e;
	int rc = gf_jv_parse(text, strlen(text), &v, &e);
	if (rc)
		print_message("parse: %s\n%s\n", e.msg, text);
	assert_int_equal(rc, 0);
	return v;
}

/* A pod read from pod_json(). */
static inline void pod_of(struct gf_k8s_pod *p, const char *name,
			  const char *res, const char *selector,
			  const char *meta)
{
	struct gf_buf b;
	gf_buf_init(&b, 1u << 20);
	pod_json(&b, "ml", name, name, res, selector, meta);
	struct gf_jv *v = parse(gf_buf_str(&b));
	struct gf_err e;
	int rc = gf_k8s_pod_read(v, p, &e);
	if (rc)
		print_message("pod: %s\n", e.msg);
	assert_int_equal(rc, 0);
	gf_jv_free(v);
	gf_buf_release(&b);
}

#endif
