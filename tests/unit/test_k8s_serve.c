/*
 * test_k8s_serve.c - gpufleet serve --k8s-extender over HTTP, spoken to
 * exactly as kube-scheduler speaks (requests built as it builds them:
 * capitalised keys, null where Go sends nil, quantities as strings), on
 * a real service (port 0, SQLite) whose nodes come from agents'
 * inventories (GPU topologies, UUIDs, MIG instances, health), and with a
 * fake Kubernetes API server on loopback (k8s_api_fake.h) that records
 * every exchange and answers as the real one does.  The API side is
 * verified at the wire level only: no Kubernetes control plane runs
 * here.
 *
 * Nodes: "quad" and "scattered", DGX-1V hybrid cube-mesh (GPU UUIDs
 * GPU-NODE-G); on "scattered" GPUs 2, 3, 6, 7 are unhealthy, so its four
 * free GPUs (0, 1, 4, 5) are not all NVLink-connected; "mig", an H100
 * node with GPU 6 in MIG mode as seven 1g.10gb; "plain", an H100 node;
 * "cpu", no GPU.  The tests run in order and build on each other.
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/socket.h>

#include "controller/k8s_impl.h"
#include "controller/service.h"
#include "controller/service_impl.h"
#include "k8s_api_fake.h"
#include "k8s_helpers.h"
#include "nodeproto/nodeproto.h"
#include "serve_helpers.h"
#include "util/log.h"
#include "util/mem.h"

#define TOKEN "k8s-test-token-0123456789"

static char dir[64], db[256], kubeconfig[128];
static struct gf_serve_config cfg;
static struct gf_service *svc;

/* ---- nodes: agents' inventories ---------------------------------------- */

static void put_node(const char *name, int ngpus, const char *model, bool topo,
		     bool mig, const int *sick, int nsick)
{
	struct gf_np_inventory *inv = gf_calloc(1, sizeof(*inv));
	snprintf(inv->version, sizeof(inv->version), "test");
	inv->cpu_milli = 96000;
	inv->memory_mib = 786432;
	snprintf(inv->gpu_model, sizeof(inv->gpu_model), "%s", model);
	gf_np_inventory_room(inv, ngpus, mig ? 7 : 0);
	inv->ngpus = ngpus;
	for (int g = 0; g < ngpus; g++) {
		inv->gpus[g].index = g;
		snprintf(inv->gpus[g].uuid, sizeof(inv->gpus[g].uuid),
			 "GPU-%s-%d", name, g);
		snprintf(inv->gpus[g].name, sizeof(inv->gpus[g].name), "gpu");
		inv->gpus[g].healthy = true;
	}
	if (topo) {
		inv->has_topo = true;
		dgx1v_topo(&inv->topo);
	}
	if (mig) {
		snprintf(inv->mig_model, sizeof(inv->mig_model), "h100-80gb");
		inv->gpus[6].mig_mode = true;
		for (int k = 0; k < 7; k++) {
			struct gf_np_mig *m = &inv->mig[inv->nmig++];
			m->gpu = 6;
			m->start = k;
			snprintf(m->profile, sizeof(m->profile), "1g.10gb");
			snprintf(m->uuid, sizeof(m->uuid), "MIG-%s-6-%d", name,
				 k);
		}
	}
	struct gf_np_heartbeat hb = { 0 };
	for (int k = 0; k < nsick; k++) {
		hb.health[hb.nhealth].index = sick[k];
		hb.health[hb.nhealth].healthy = false;
		snprintf(hb.health[hb.nhealth].reason, GF_NP_REASON_MAX,
			 "xid 79");
		hb.nhealth++;
	}
	struct gf_buf b;
	struct gf_json j;
	gf_buf_init(&b, 1u << 20);
	gf_json_init(&j, &b);
	gf_json_obj_begin(&j, NULL);
	gf_np_inventory_write(&j, inv, NULL, 0);
	gf_np_heartbeat_write(&j, &hb);
	gf_json_obj_end(&j);
	char path[128];
	snprintf(path, sizeof(path), "/v1/nodes/%s", name);
	struct gf_jv *v;
	long st = http(GF_HTTP_PUT, path, NULL, gf_buf_str(&b), &v);
	if (st != 200)
		print_message("register %s: %ld %s\n", name, st,
			      v ? str(v, "detail") : "");
	assert_int_equal(st, 200);
	gf_jv_free(v);
	gf_buf_release(&b);
	gf_np_inventory_free(inv);
}

/* ---- kube-scheduler's calls --------------------------------------------- */

static char *pod_text(const char *name, const char *res, const char *meta)
{
	struct gf_buf b;
	gf_buf_init(&b, 1u << 20);
	char uid[96];
	snprintf(uid, sizeof(uid), "uid-%s", name);
	pod_json(&b, "ml", name, uid, res, "", meta ? meta : "");
	api_live(uid, true); /* created: the API server lists it */
	char *s = gf_strndup(b.data, b.len);
	gf_buf_release(&b);
	return s;
}

/* POST /k8s/VERB with ExtenderArgs for pod over names: the status, the
 * parsed answer. */
static long extender(const char *verb, const char *pod,
		     const char *const *names, int n, struct gf_jv **out)
{
	struct gf_buf b;
	gf_buf_init(&b, 8u << 20);
	args_json(&b, pod, names, n);
	char path[64];
	snprintf(path, sizeof(path), "/k8s/%s", verb);
	long st = http(GF_HTTP_POST, path, NULL, gf_buf_str(&b), out);
	gf_buf_release(&b);
	return st;
}

/* A filter reply's shape, always: every field, NodeNames an array. */
static void filter_shape(const struct gf_jv *r)
{
	assert_int_equal(gf_jv_type(gf_jv_get(r, "Nodes")), GF_JV_NULL);
	assert_int_equal(gf_jv_type(gf_jv_get(r, "NodeNames")), GF_JV_ARR);
	assert_int_equal(gf_jv_type(gf_jv_get(r, "FailedNodes")), GF_JV_OBJ);
	assert_int_equal(gf_jv_type(gf_jv_get(r, "FailedAndUnresolvableNodes")),
			 GF_JV_OBJ);
	assert_int_equal(gf_jv_type(gf_jv_get(r, "Error")), GF_JV_STR);
	assert_int_equal(gf_jv_len(r), 5);
}

/* A prioritize reply's shape: a bare array of {"Host", "Score"}, one per
 * node asked about, in the order asked, scores 0..10. */
static void prioritize_shape(const struct gf_jv *r, const char *const *names,
			     int n)
{
	assert_int_equal(gf_jv_type(r), GF_JV_ARR);
	assert_int_equal(gf_jv_len(r), n);
	for (int i = 0; i < n; i++) {
		const struct gf_jv *h = gf_jv_at(r, (size_t)i);
		assert_int_equal(gf_jv_len(h), 2);
		assert_string_equal(str(h, "Host"), names[i]);
		assert_int_equal(gf_jv_type(gf_jv_get(h, "Score")), GF_JV_INT);
		assert_true(num(h, "Score") >= 0 && num(h, "Score") <= 10);
	}
}

static bool passes(const struct gf_jv *r, const char *node)
{
	const struct gf_jv *nn = gf_jv_get(r, "NodeNames");
	for (size_t i = 0; i < gf_jv_len(nn); i++)
		if (!strcmp(gf_jv_str(gf_jv_at(nn, i)), node))
			return true;
	return false;
}

static const char *failed(const struct gf_jv *r, const char *map,
			  const char *node)
{
	const char *s = gf_jv_str(gf_jv_get(gf_jv_get(r, map), node));
	return s ? s : "";
}

/* POST /k8s/bind: the Error ("" bound). */
static void bind_pod(const char *name, const char *node, char *err, size_t size)
{
	char body[512];
	snprintf(body, sizeof(body),
		 "{\"PodName\": \"%s\", \"PodNamespace\": \"ml\", \"PodUID\": "
		 "\"uid-%s\", \"Node\": \"%s\"}",
		 name, name, node);
	struct gf_jv *v;
	long st = http(GF_HTTP_POST, "/k8s/bind", NULL, body, &v);
	assert_int_equal(st, 200);
	char keys[64] = "";
	void *it = NULL;
	const struct gf_jv *x;
	const char *k = gf_jv_next(v, &it, &x);
	snprintf(keys, sizeof(keys), "%s", k ? k : "");
	assert_string_equal(keys, "Error");
	assert_int_equal(gf_jv_len(v), 1);
	snprintf(err, size, "%s", str(v, "Error"));
	gf_jv_free(v);
}

/* The job of a pod (its name "ml/NAME"), or NULL: caller frees. */
static struct gf_jv *job_of_pod(const char *name, const struct gf_jv **job)
{
	struct gf_jv *v;
	assert_int_equal(
		http(GF_HTTP_GET, "/v1/jobs?limit=10000", NULL, NULL, &v), 200);
	char want[128];
	snprintf(want, sizeof(want), "ml/%s", name);
	const struct gf_jv *jobs = gf_jv_get(v, "jobs");
	*job = NULL;
	for (size_t i = gf_jv_len(jobs); i-- > 0;)
		if (!strcmp(str(gf_jv_at(jobs, i), "name"), want)) {
			*job = gf_jv_at(jobs, i);
			break;
		}
	return v;
}

/* The state to compare before and after bad input: the jobs and every
 * node's free GPU. */
static char *snapshot(void)
{
	struct gf_buf b;
	gf_buf_init(&b, 16u << 20);
	struct gf_jv *v;
	assert_int_equal(
		http(GF_HTTP_GET, "/v1/jobs?limit=10000", NULL, NULL, &v), 200);
	const struct gf_jv *jobs = gf_jv_get(v, "jobs");
	for (size_t i = 0; i < gf_jv_len(jobs); i++)
		gf_buf_printf(&b, "%s=%s;", str(gf_jv_at(jobs, i), "id"),
			      str(gf_jv_at(jobs, i), "state"));
	gf_jv_free(v);
	assert_int_equal(http(GF_HTTP_GET, "/v1/nodes", NULL, NULL, &v), 200);
	const struct gf_jv *nodes = gf_jv_get(v, "nodes");
	for (size_t i = 0; i < gf_jv_len(nodes); i++) {
		const struct gf_jv *gpus =
			gf_jv_get(gf_jv_at(nodes, i), "gpus");
		gf_buf_printf(&b, "%s:", str(gf_jv_at(nodes, i), "name"));
		for (size_t g = 0; g < gf_jv_len(gpus); g++)
			gf_buf_printf(&b, "%lld,",
				      (long long)num(gf_jv_at(gpus, g),
						     "free_milli"));
	}
	gf_jv_free(v);
	char *s = gf_strndup(b.data, b.len);
	gf_buf_release(&b);
	return s;
}

/* ---- the tests ----------------------------------------------------------- */

static const char *const all[] = { "quad", "scattered", "mig", "plain", "cpu" };

/*
 * Four one-GPU pods bound to "quad" take GPUs 0-3 (the lowest free:
 * best fit); then a 4-GPU pod is filtered away from "scattered" (0, 1, 4,
 * 5 free, not all NVLink) and kept on "quad" (4-7), scores higher there,
 * and bound: one Binding that carries the annotations (GPUs 4-7 and
 * their UUIDs), exactly as the API server expects it.
 */
static void test_nvlink_bind(void **state)
{
	(void)state;
	char err[512];
	for (int k = 0; k < 4; k++) {
		char name[32];
		snprintf(name, sizeof(name), "one-%d", k);
		char *pod = pod_text(name, "\"nvidia.com/gpu\": \"1\"", NULL);
		struct gf_jv *r;
		assert_int_equal(extender("filter", pod, all, 5, &r), 200);
		filter_shape(r);
		assert_true(passes(r, "quad"));
		gf_jv_free(r);
		gf_free(pod);
		bind_pod(name, "quad", err, sizeof(err));
		assert_string_equal(err, "");
	}
	char *pod = pod_text("train-4",
			     "\"nvidia.com/gpu\": \"4\", \"cpu\": \"8\", "
			     "\"memory\": \"64Gi\"",
			     NULL);
	struct gf_jv *r;
	assert_int_equal(extender("filter", pod, all, 5, &r), 200);
	filter_shape(r);
	assert_true(passes(r, "quad"));
	assert_false(passes(r, "scattered"));
	assert_string_equal(failed(r, "FailedNodes", "scattered"),
			    "gpufleet: 4 free GPUs but no 4 NVLink-connected");
	assert_string_equal(failed(r, "FailedAndUnresolvableNodes", "cpu"),
			    "gpufleet: node has no GPUs");
	assert_true(passes(r, "mig") && passes(r, "plain"));
	assert_string_equal(str(r, "Error"), "");
	gf_jv_free(r);
	static const char *const two[] = { "quad", "scattered" };
	assert_int_equal(extender("prioritize", pod, two, 2, &r), 200);
	prioritize_shape(r, two, 2);
	assert_int_equal(gf_jv_type(r), GF_JV_ARR);
	assert_string_equal(str(gf_jv_at(r, 0), "Host"), "quad");
	assert_true(num(gf_jv_at(r, 0), "Score") >= 1 &&
		    num(gf_jv_at(r, 0), "Score") <= 10);
	assert_int_equal(num(gf_jv_at(r, 1), "Score"), 0);
	gf_jv_free(r);
	gf_free(pod);

	int from = api_count();
	bind_pod("train-4", "quad", err, sizeof(err));
	assert_string_equal(err, "");
	const struct gf_jv *job;
	struct gf_jv *jobs = job_of_pod("train-4", &job);
	assert_non_null(job);
	assert_string_equal(str(job, "state"), "running");
	char job_id[32];
	snprintf(job_id, sizeof(job_id), "%s", str(job, "id"));
	const struct gf_jv *pl = gf_jv_at(gf_jv_get(job, "placement"), 0);
	assert_string_equal(str(pl, "node"), "quad");
	for (int g = 0; g < 4; g++) {
		int64_t x;
		assert_true(gf_jv_int(
			gf_jv_at(gf_jv_get(pl, "gpus"), (size_t)g), &x));
		assert_int_equal(x, 4 + g);
	}
	gf_jv_free(jobs);

	/* one Binding, the annotations in it (the API server sets them
	 * with spec.nodeName in one write); no patch */
	struct xch p, b;
	assert_int_equal(api_find(from, "PATCH", "/pods/train-4", &p), -1);
	int ib = api_find(from, "POST", "/pods/train-4/binding", &b);
	assert_true(ib >= 0);
	assert_string_equal(b.path,
			    "/api/v1/namespaces/ml/pods/train-4/binding");
	assert_non_null(strstr(b.headers, "content-type: application/json"));
	assert_non_null(strstr(b.headers, "authorization: Bearer " TOKEN));
	assert_non_null(strstr(b.headers, "accept: application/json"));
	struct gf_jv *bv = parse(b.body);
	assert_string_equal(str(bv, "apiVersion"), "v1");
	assert_string_equal(str(bv, "kind"), "Binding");
	const struct gf_jv *bm = gf_jv_get(bv, "metadata");
	assert_string_equal(str(bm, "name"), "train-4");
	assert_string_equal(str(bm, "namespace"), "ml");
	assert_string_equal(str(bm, "uid"), "uid-train-4");
	const struct gf_jv *ann = gf_jv_get(bm, "annotations");
	assert_string_equal(str(ann, "gpufleet.io/gpus"), "4,5,6,7");
	assert_string_equal(str(ann, "gpufleet.io/gpu-uuids"),
			    "GPU-quad-4,GPU-quad-5,GPU-quad-6,GPU-quad-7");
	assert_string_equal(str(ann, "gpufleet.io/node"), "quad");
	assert_string_equal(str(ann, "gpufleet.io/job"), job_id);
	assert_null(gf_jv_get(ann, "gpufleet.io/mig-instance"));
	const struct gf_jv *t = gf_jv_get(bv, "target");
	assert_string_equal(str(t, "apiVersion"), "v1");
	assert_string_equal(str(t, "kind"), "Node");
	assert_string_equal(str(t, "name"), "quad");
	gf_jv_free(bv);
	gf_free(b.body);
	/* the same bind again (kube-scheduler retrying): the Binding again,
	 * refused (bound already), the pod read back bound here as this
	 * job: done, the job kept */
	from = api_count();
	bind_pod("train-4", "quad", err, sizeof(err));
	assert_string_equal(err, "");
	struct xch again, read;
	int ia = api_find(from, "POST", "/pods/train-4/binding", &again);
	assert_true(ia >= 0);
	assert_int_equal(again.status, 409);
	assert_true(api_find(ia, "GET", "/pods/train-4", &read) > ia);
	gf_free(again.body);
	gf_free(read.body);
	jobs = job_of_pod("train-4", &job);
	assert_string_equal(str(job, "state"), "running");
	assert_string_equal(str(job, "id"), job_id);
	gf_jv_free(jobs);
	/* now "quad" is full */
	pod = pod_text("train-5", "\"nvidia.com/gpu\": \"4\"", NULL);
	assert_int_equal(extender("filter", pod, all, 2, &r), 200);
	assert_false(passes(r, "quad"));
	assert_string_equal(failed(r, "FailedNodes", "quad"),
			    "gpufleet: 0 free GPUs, the pod needs 4");
	gf_jv_free(r);
	gf_free(pod);
}

/* A 1g.10gb pod only where such an instance is free: "mig"; bound, its
 * annotation names the instance and its MIG device UUID. */
static void test_mig_bind(void **state)
{
	(void)state;
	char *pod =
		pod_text("infer-0", "\"nvidia.com/mig-1g.10gb\": \"1\"", NULL);
	struct gf_jv *r;
	assert_int_equal(extender("filter", pod, all, 5, &r), 200);
	filter_shape(r);
	assert_int_equal(gf_jv_len(gf_jv_get(r, "NodeNames")), 1);
	assert_true(passes(r, "mig"));
	assert_string_equal(failed(r, "FailedAndUnresolvableNodes", "plain"),
			    "gpufleet: no 1g.10gb instance on this node");
	gf_jv_free(r);
	gf_free(pod);
	int from = api_count();
	char err[512];
	bind_pod("infer-0", "mig", err, sizeof(err));
	assert_string_equal(err, "");
	struct xch p;
	assert_true(api_find(from, "POST", "/pods/infer-0/binding", &p) >= 0);
	struct gf_jv *pv = parse(p.body);
	const struct gf_jv *ann =
		gf_jv_get(gf_jv_get(pv, "metadata"), "annotations");
	assert_string_equal(str(ann, "gpufleet.io/mig-instance"),
			    "profile=1g.10gb,gpu=6,start=0,uuid=MIG-mig-6-0");
	assert_string_equal(str(ann, "gpufleet.io/gpus"), "6");
	gf_jv_free(pv);
	gf_free(p.body);
}

/* A 250-milli share: prioritize's best node is where it is bound; its
 * annotation says the share. */
static void test_share_bind(void **state)
{
	(void)state;
	char *pod = pod_text("share-0",
			     "\"gpufleet.io/gpu-milli\": \"250\", \"cpu\": "
			     "\"500m\", \"memory\": \"1Gi\"",
			     NULL);
	struct gf_jv *r;
	static const char *const gpu[] = { "quad", "scattered", "plain" };
	assert_int_equal(extender("filter", pod, gpu, 3, &r), 200);
	assert_int_equal(gf_jv_len(gf_jv_get(r, "NodeNames")), 2);
	assert_false(passes(r, "quad")); /* all eight GPUs taken */
	gf_jv_free(r);
	assert_int_equal(extender("prioritize", pod, gpu, 3, &r), 200);
	prioritize_shape(r, gpu, 3);
	const char *best = NULL;
	int64_t top = -1;
	for (size_t i = 0; i < gf_jv_len(r); i++)
		if (num(gf_jv_at(r, i), "Score") > top) {
			top = num(gf_jv_at(r, i), "Score");
			best = str(gf_jv_at(r, i), "Host");
		}
	char node[32];
	snprintf(node, sizeof(node), "%s", best);
	/* FGD's scores (its fragmentation change mapped to 0..10; that a
	 * share lands where the core's own FGD pass puts it is derived by
	 * hand in test_k8s.c): "scattered" above "plain", full "quad" 0 */
	assert_string_equal(node, "scattered");
	assert_true(top > num(gf_jv_at(r, 2), "Score"));
	assert_int_equal(num(gf_jv_at(r, 0), "Score"), 0);
	gf_jv_free(r);
	gf_free(pod);
	int from = api_count();
	char err[512];
	bind_pod("share-0", node, err, sizeof(err));
	assert_string_equal(err, "");
	struct xch p;
	assert_true(api_find(from, "POST", "/pods/share-0/binding", &p) >= 0);
	struct gf_jv *pv = parse(p.body);
	const struct gf_jv *ann =
		gf_jv_get(gf_jv_get(pv, "metadata"), "annotations");
	assert_string_equal(str(ann, "gpufleet.io/gpu-milli"), "250");
	assert_string_equal(str(ann, "gpufleet.io/gpus"), "0");
	assert_string_equal(str(ann, "gpufleet.io/node"), node);
	gf_jv_free(pv);
	gf_free(p.body);
}

/* ---- reconciling what runs with what was bound -------------------------- */

/* A heartbeat of node whose agent sees pods[k] on devs[k] (n pairs). */
static void beat_pods(const char *node, const char *const *devs,
		      const char *const *pods, int n)
{
	struct gf_np_heartbeat hb = { 0 };
	struct gf_np_gpu_pods gp[8];
	memset(gp, 0, sizeof(gp));
	for (int k = 0; k < n; k++) {
		int d = 0;
		while (d < hb.ngpu_pods && strcmp(gp[d].uuid, devs[k]))
			d++;
		if (d == hb.ngpu_pods)
			snprintf(gp[hb.ngpu_pods++].uuid, GF_NP_UUID_MAX, "%s",
				 devs[k]);
		snprintf(gp[d].pods[gp[d].npods++], GF_NP_POD_UID_MAX, "%s",
			 pods[k]);
	}
	hb.gpu_pods = gp;
	struct gf_buf b;
	struct gf_json j;
	gf_buf_init(&b, 1u << 20);
	gf_json_init(&j, &b);
	gf_json_obj_begin(&j, NULL);
	gf_np_heartbeat_write(&j, &hb);
	gf_json_obj_end(&j);
	char path[128];
	snprintf(path, sizeof(path), "/v1/nodes/%s/heartbeat", node);
	struct gf_jv *v;
	assert_int_equal(http(GF_HTTP_POST, path, NULL, gf_buf_str(&b), &v),
			 200);
	gf_jv_free(v);
	gf_buf_release(&b);
}

/* GET /k8s/reconcile: its mismatches (the caller frees). */
static struct gf_jv *mismatches(void)
{
	struct gf_jv *v;
	assert_int_equal(http(GF_HTTP_GET, "/k8s/reconcile", NULL, NULL, &v),
			 200);
	assert_int_equal(gf_jv_type(gf_jv_get(v, "mismatches")), GF_JV_ARR);
	assert_int_equal(num(v, "count"),
			 (int64_t)gf_jv_len(gf_jv_get(v, "mismatches")));
	return v;
}

/* The /metrics line that starts with `series`, or "" (static). */
static const char *metric(const char *series)
{
	static char line[256];
	char url[512];
	snprintf(url, sizeof(url), "%s/metrics", base);
	struct gf_client_req q = { .method = GF_HTTP_GET, .url = url };
	struct gf_client_answer a;
	struct gf_err e;
	assert_int_equal(gf_client_request(NULL, &q, &a, &e), 0);
	const char *at = gf_buf_str(&a.body);
	size_t n = strlen(series);
	while (at && strncmp(at, series, n) != 0) { /* a line's start */
		at = strchr(at, '\n');
		at = at ? at + 1 : NULL;
	}
	line[0] = '\0';
	if (at)
		snprintf(line, sizeof(line), "%.*s", (int)strcspn(at, "\n"),
			 at);
	gf_client_answer_release(&a);
	return line;
}

/* The pods the agents see on each GPU against the binds: one-0 (a whole
 * GPU of "quad") and infer-0 (MIG instance start 0 of "mig"'s GPU 6)
 * where they were bound is no mismatch; one-0 on another GPU names both;
 * a pod gpufleet never bound is the other kind; a bound pod with no
 * process is none; each clears when the heartbeat stops showing it. */
static void test_reconcile(void **state)
{
	(void)state;
	const struct gf_jv *job;
	struct gf_jv *jobs = job_of_pod("one-0", &job);
	assert_non_null(job);
	const struct gf_jv *pl = gf_jv_at(gf_jv_get(job, "placement"), 0);
	assert_string_equal(str(pl, "node"), "quad");
	int64_t g0 = -1;
	assert_true(gf_jv_int(gf_jv_at(gf_jv_get(pl, "gpus"), 0), &g0));
	gf_jv_free(jobs);
	char mine[64], other[64];
	snprintf(mine, sizeof(mine), "GPU-quad-%d", (int)g0);
	snprintf(other, sizeof(other), "GPU-quad-%d", (int)(g0 + 3) % 8);

	/* where they were bound: nothing */
	const char *d1[] = { mine, "MIG-mig-6-0" };
	const char *p1[] = { "uid-one-0", "uid-infer-0" };
	beat_pods("quad", d1, p1, 1);
	beat_pods("mig", d1 + 1, p1 + 1, 1);
	struct gf_jv *v = mismatches();
	assert_int_equal(num(v, "count"), 0);
	gf_jv_free(v);
	assert_string_equal(
		metric("gpufleet_k8s_pod_gpu_mismatches{node=\"quad\","
		       "kind=\"wrong-gpu\"}"),
		"gpufleet_k8s_pod_gpu_mismatches{node=\"quad\",kind=\"wrong-"
		"gpu\"} 0");

	/* one-0 on another GPU; a pod never bound on "plain"; infer-0 on
	 * another instance of its GPU */
	const char *d2[] = { other };
	const char *p2[] = { "uid-one-0" };
	beat_pods("quad", d2, p2, 1);
	const char *d3[] = { "GPU-plain-2" };
	const char *p3[] = { "6f1c2a9e-0b7d-4c1e-9a55-3d2f8e7b6a10" };
	beat_pods("plain", d3, p3, 1);
	const char *d4[] = { "MIG-mig-6-1" };
	beat_pods("mig", d4, p1 + 1, 1);
	v = mismatches();
	assert_int_equal(num(v, "count"), 3);
	bool wrong = false, unbound = false, mig = false;
	for (size_t i = 0; i < 3; i++) {
		const struct gf_jv *m = gf_jv_at(gf_jv_get(v, "mismatches"), i);
		const char *why = str(m, "reason");
		if (!strcmp(str(m, "pod_uid"), "uid-one-0")) {
			wrong = true;
			assert_string_equal(str(m, "node"), "quad");
			assert_string_equal(str(m, "kind"), "wrong-gpu");
			assert_string_equal(str(m, "pod"), "ml/one-0");
			assert_string_equal(str(m, "device"), other);
			char want[256];
			snprintf(want, sizeof(want),
				 "pod ml/one-0 uid uid-one-0 runs on %s on "
				 "node quad, bound to %s on node quad",
				 other, mine);
			assert_string_equal(why, want);
		} else if (!strcmp(str(m, "pod_uid"), "uid-infer-0")) {
			mig = true;
			assert_string_equal(str(m, "kind"), "wrong-gpu");
			assert_string_equal(str(m, "bound_to"),
					    "MIG-mig-6-0 on node mig");
		} else {
			unbound = true;
			assert_string_equal(str(m, "node"), "plain");
			assert_string_equal(str(m, "kind"), "not-bound");
			assert_string_equal(str(m, "device"), "GPU-plain-2");
			assert_non_null(strstr(why, "did not bind"));
		}
	}
	assert_true(wrong && unbound && mig);
	gf_jv_free(v);
	assert_string_equal(
		metric("gpufleet_k8s_pod_gpu_mismatches{node=\"plain\","
		       "kind=\"not-bound\"}"),
		"gpufleet_k8s_pod_gpu_mismatches{node=\"plain\",kind=\"not-"
		"bound\"} 1");

	/* the heartbeats stop showing them: cleared */
	beat_pods("quad", NULL, NULL, 0);
	beat_pods("plain", NULL, NULL, 0);
	beat_pods("mig", NULL, NULL, 0);
	v = mismatches();
	assert_int_equal(num(v, "count"), 0);
	gf_jv_free(v);
	assert_string_equal(
		metric("gpufleet_k8s_pod_gpu_mismatches{node=\"plain\","
		       "kind=\"not-bound\"}"),
		"gpufleet_k8s_pod_gpu_mismatches{node=\"plain\",kind=\"not-"
		"bound\"} 0");
}

/* Bad input: each a 4xx or an Error reply, the state untouched. */
static void test_bad_input(void **state)
{
	(void)state;
	char *before = snapshot();
	struct gf_jv *r;
	/* malformed JSON */
	assert_int_equal(http(GF_HTTP_POST, "/k8s/filter", NULL,
			      "{\"Pod\": {\"metadata\": ", &r),
			 400);
	assert_string_equal(str(r, "error"), "malformed-json");
	gf_jv_free(r);
	assert_int_equal(http(GF_HTTP_POST, "/k8s/bind", NULL, "[", &r), 400);
	gf_jv_free(r);
	/* not ExtenderArgs */
	assert_int_equal(http(GF_HTTP_POST, "/k8s/filter", NULL,
			      "{\"NodeNames\": [\"quad\"]}", &r),
			 400);
	gf_jv_free(r);
	assert_int_equal(http(GF_HTTP_POST, "/k8s/bind", NULL,
			      "{\"PodName\": \"x\"}", &r),
			 400);
	gf_jv_free(r);
	/* a quantity that is not one: an Error reply, no node kept */
	char *pod = pod_text("bad-q", "\"nvidia.com/gpu\": \"0.5\"", NULL);
	assert_int_equal(extender("filter", pod, all, 5, &r), 200);
	filter_shape(r);
	assert_int_equal(gf_jv_len(gf_jv_get(r, "NodeNames")), 0);
	assert_non_null(strstr(str(r, "Error"), "expected a whole number"));
	gf_jv_free(r);
	assert_int_equal(extender("prioritize", pod, all, 5, &r), 422);
	gf_jv_free(r);
	gf_free(pod);
	/* an unknown node name: unresolvable in filter, 0 in prioritize,
	 * an Error in bind */
	pod = pod_text("lost-0", "\"nvidia.com/gpu\": \"1\"", NULL);
	static const char *const ghost[] = { "ghost", "plain" };
	assert_int_equal(extender("filter", pod, ghost, 2, &r), 200);
	filter_shape(r);
	assert_string_equal(failed(r, "FailedAndUnresolvableNodes", "ghost"),
			    "gpufleet: unknown node (not one of its nodes)");
	assert_true(passes(r, "plain"));
	gf_jv_free(r);
	assert_int_equal(extender("prioritize", pod, ghost, 2, &r), 200);
	prioritize_shape(r, ghost, 2);
	assert_int_equal(num(gf_jv_at(r, 0), "Score"), 0);
	gf_jv_free(r);
	gf_free(pod);
	char err[512];
	int from = api_count();
	bind_pod("lost-0", "ghost", err, sizeof(err));
	assert_non_null(strstr(err, "cannot bind pod ml/lost-0 to ghost"));
	struct xch x;
	assert_int_equal(api_find(from, "POST", "/binding", &x), -1);
	/* a pod with no GPU ask: passed through untouched */
	pod = pod_text("web-0", "\"cpu\": \"2\"", NULL);
	assert_int_equal(extender("filter", pod, all, 5, &r), 200);
	filter_shape(r);
	assert_int_equal(gf_jv_len(gf_jv_get(r, "NodeNames")), 5);
	assert_int_equal(gf_jv_len(gf_jv_get(r, "FailedNodes")), 0);
	gf_jv_free(r);
	assert_int_equal(extender("prioritize", pod, all, 5, &r), 200);
	prioritize_shape(r, all, 5);
	for (size_t i = 0; i < gf_jv_len(r); i++)
		assert_int_equal(num(gf_jv_at(r, i), "Score"), 0);
	gf_jv_free(r);
	gf_free(pod);
	/* a huge payload: capped (413) before it is read */
	size_t big = (8u << 20) + 100;
	char *huge = gf_malloc(big + 1);
	memset(huge, ' ', big);
	huge[0] = '{';
	huge[big - 1] = '}';
	huge[big] = '\0';
	long st = 0;
	struct gf_err e;
	assert_int_equal(http_try(base, GF_HTTP_POST, "/k8s/filter", NULL, huge,
				  big, 20000, &st, NULL, &e),
			 0);
	assert_int_equal(st, 413);
	gf_free(huge);
	char *after = snapshot();
	assert_string_equal(before, after);
	gf_free(before);
	gf_free(after);
	/* the web pod's bind: no record, only its Binding */
	from = api_count();
	pod = pod_text("web-0", "\"cpu\": \"2\"", NULL);
	assert_int_equal(extender("filter", pod, all, 1, &r), 200);
	gf_jv_free(r);
	gf_free(pod);
	bind_pod("web-0", "plain", err, sizeof(err));
	assert_string_equal(err, "");
	assert_int_equal(api_find(from, "PATCH", "/pods/web-0", &x), -1);
	assert_true(api_find(from, "POST", "/pods/web-0/binding", &x) >= 0);
	struct gf_jv *wb = parse(x.body); /* no annotation: nothing given */
	assert_null(gf_jv_get(gf_jv_get(wb, "metadata"), "annotations"));
	gf_jv_free(wb);
	gf_free(x.body);
}

/* The API server refuses the Binding: the Error says why, the job is
 * released and its GPU free again. */
static void test_bind_conflict(void **state)
{
	(void)state;
	char *pod = pod_text("conflict-0", "\"nvidia.com/gpu\": \"8\"", NULL);
	struct gf_jv *r;
	static const char *const pl[] = { "plain" };
	assert_int_equal(extender("filter", pod, pl, 1, &r), 200);
	assert_true(passes(r, "plain"));
	gf_jv_free(r);
	char err[512];
	pthread_mutex_lock(&api.lock);
	snprintf(api.conflict, sizeof(api.conflict), "conflict-0");
	pthread_mutex_unlock(&api.lock);
	bind_pod("conflict-0", "plain", err, sizeof(err));
	assert_non_null(strstr(err, "409 Conflict"));
	assert_non_null(strstr(err, "already assigned to node"));
	/* released by the next turn */
	int64_t until = mono_ms() + 10000;
	const struct gf_jv *job = NULL;
	struct gf_jv *jobs = NULL;
	do {
		gf_jv_free(jobs);
		sleep_ms(20);
		jobs = job_of_pod("conflict-0", &job);
	} while (job && strcmp(str(job, "state"), "cancelled") &&
		 mono_ms() < until);
	assert_non_null(job);
	assert_string_equal(str(job, "state"), "cancelled");
	gf_jv_free(jobs);
	assert_int_equal(extender("filter", pod, pl, 1, &r), 200);
	assert_true(passes(r, "plain")); /* all eight free again */
	gf_jv_free(r);
	gf_free(pod);
}

/* A pod filter never saw (another replica answered it): read from the
 * API server first. */
static void test_bind_fetch(void **state)
{
	(void)state;
	/* pod_text takes api.lock itself (the pod is listed): made first */
	char *text = pod_text("fetched-0", "\"nvidia.com/gpu\": \"2\"", NULL);
	pthread_mutex_lock(&api.lock);
	snprintf(api.get_name, sizeof(api.get_name), "fetched-0");
	api.get_pod = text;
	pthread_mutex_unlock(&api.lock);
	int from = api_count();
	char err[512];
	bind_pod("fetched-0", "plain", err, sizeof(err));
	assert_string_equal(err, "");
	struct xch x;
	int ig = api_find(from, "GET", "/pods/fetched-0", &x);
	assert_true(ig >= 0);
	gf_free(x.body);
	assert_true(api_find(from, "POST", "/pods/fetched-0/binding", &x) > ig);
	gf_free(x.body);
	const struct gf_jv *job;
	struct gf_jv *jobs = job_of_pod("fetched-0", &job);
	assert_string_equal(str(job, "state"), "running");
	gf_jv_free(jobs);
	/* a pod the API server does not have: an Error, nothing recorded */
	bind_pod("nowhere-0", "plain", err, sizeof(err));
	assert_non_null(strstr(err, "404 Not Found"));
	jobs = job_of_pod("nowhere-0", &job);
	assert_null(job);
	gf_jv_free(jobs);
}

/*
 * Preemption for a 4-GPU pod: on "quad" (one-GPU pods on 0-3, train-4 on
 * 4-7) kube-scheduler proposes every pod there and a web pod gpufleet
 * does not hold; the fewest of ours that make room is train-4 alone (it
 * frees the quad 4-7), and the web pod stays (kube-scheduler's own).
 * "cpu" can never take it: dropped.
 */
static void test_preempt(void **state)
{
	(void)state;
	char *pod = pod_text("big-0", "\"nvidia.com/gpu\": \"4\"", NULL);
	struct gf_buf b;
	gf_buf_init(&b, 1u << 20);
	gf_buf_printf(
		&b,
		"{\"Pod\": %s, \"NodeNameToVictims\": null, "
		"\"NodeNameToMetaVictims\": {\"quad\": {\"Pods\": ["
		"{\"UID\": \"uid-one-0\"}, {\"UID\": \"uid-one-1\"}, "
		"{\"UID\": \"uid-one-2\"}, {\"UID\": \"uid-one-3\"}, "
		"{\"UID\": \"uid-train-4\"}, {\"UID\": \"uid-web-9\"}], "
		"\"NumPDBViolations\": 1}, \"cpu\": {\"Pods\": [{\"UID\": "
		"\"uid-web-9\"}], \"NumPDBViolations\": 0}}}",
		pod);
	struct gf_jv *r;
	assert_int_equal(
		http(GF_HTTP_POST, "/k8s/preempt", NULL, gf_buf_str(&b), &r),
		200);
	gf_buf_release(&b);
	gf_free(pod);
	assert_int_equal(gf_jv_len(r), 1);
	const struct gf_jv *m = gf_jv_get(r, "NodeNameToMetaVictims");
	assert_int_equal(gf_jv_len(m), 1);
	const struct gf_jv *q = gf_jv_get(m, "quad");
	const struct gf_jv *pods = gf_jv_get(q, "Pods");
	assert_int_equal(gf_jv_len(pods), 2);
	assert_string_equal(str(gf_jv_at(pods, 0), "UID"), "uid-web-9");
	assert_string_equal(str(gf_jv_at(pods, 1), "UID"), "uid-train-4");
	assert_int_equal(num(q, "NumPDBViolations"), 1);
	assert_int_equal(gf_jv_len(q), 2); /* MetaVictims: Pods, NumPDB... */
	assert_int_equal(gf_jv_len(gf_jv_at(pods, 0)), 1); /* MetaPod: UID */
	gf_jv_free(r);
}

/* A pod gone from the API server's list: its GPUs are released. */
static void test_resync(void **state)
{
	(void)state;
	const struct gf_jv *job;
	struct gf_jv *jobs = job_of_pod("one-3", &job);
	assert_string_equal(str(job, "state"), "running");
	gf_jv_free(jobs);
	api_live("uid-one-3", false);
	int64_t until = mono_ms() + 15000;
	bool gone = false;
	while (!gone && mono_ms() < until) {
		sleep_ms(50);
		jobs = job_of_pod("one-3", &job);
		gone = !strcmp(str(job, "state"), "cancelled");
		gf_jv_free(jobs);
	}
	assert_true(gone);
	/* the others, all listed (in pages of two), run on */
	jobs = job_of_pod("one-2", &job);
	assert_string_equal(str(job, "state"), "running");
	gf_jv_free(jobs);
	struct xch x;
	assert_true(api_find(0, "GET", "continue=2", &x) >= 0);
	assert_non_null(strstr(x.path, "fieldSelector=status.phase%21%3D"
				       "Succeeded%2Cstatus.phase%21%3DFailed"));
	gf_free(x.body);
}

/*
 * No pod at all, the normal state of a fresh cluster: a resync lists
 * none and must not hand qsort a NULL array (F4 of issue 20: UBSan
 * stopped the sanitizer build there).  Two full lists after the last pod
 * went: the first one's resync is over when the second begins.
 */
static void test_resync_no_pods(void **state)
{
	(void)state;
	char saved[MAX_LIVE][64];
	pthread_mutex_lock(&api.lock);
	int n = api.nlive;
	memcpy(saved, api.live, sizeof(saved));
	api.nlive = 0;
	pthread_mutex_unlock(&api.lock);
	int lists = 0, from = api_count();
	int64_t until = mono_ms() + 15000;
	while (lists < 2 && from < MAX_X && mono_ms() < until) {
		struct xch x;
		int at = api_find(from, "GET", "/api/v1/pods?", &x);
		if (at < 0) {
			sleep_ms(20);
			continue;
		}
		lists += strstr(x.path, "continue=") == NULL;
		gf_free(x.body);
		from = at + 1;
	}
	assert_int_equal(lists, 2);
	const struct gf_jv *job;
	struct gf_jv *jobs = job_of_pod("one-2", &job);
	assert_non_null(job);
	gf_jv_free(jobs);
	pthread_mutex_lock(&api.lock);
	memcpy(api.live, saved, sizeof(saved));
	api.nlive = n;
	pthread_mutex_unlock(&api.lock);
}

/* An 8-GPU node's free GPUs: 8 when a pod asking for all of them fits,
 * else as filter's reason says them ("gpufleet: N free GPUs, the pod
 * needs 8"). */
static int free_gpus(const char *node)
{
	char *pod = pod_text("eight-0", "\"nvidia.com/gpu\": \"8\"", NULL);
	const char *names[] = { node };
	struct gf_jv *r;
	assert_int_equal(extender("filter", pod, names, 1, &r), 200);
	int n = 8;
	if (!passes(r, node))
		assert_int_equal(sscanf(failed(r, "FailedNodes", node),
					"gpufleet: %d free GPUs", &n),
				 1);
	gf_jv_free(r);
	gf_free(pod);
	return n;
}

/* A pod bound to node with gpufleet's annotations (job, GPUs), asking
 * ngpus whole GPUs, as the API server lists it once running. */
static void bound_pod(struct gf_buf *b, const char *name, const char *node,
		      const char *job, const char *gpus, int ngpus)
{
	gf_buf_printf(
		b,
		"{\"metadata\": {\"name\": \"%s\", \"namespace\": \"ml\", "
		"\"uid\": \"uid-%s\", \"annotations\": {\"gpufleet.io/job\": "
		"\"%s\", \"gpufleet.io/gpus\": \"%s\", \"gpufleet.io/node\": "
		"\"%s\"}}, \"spec\": {\"nodeName\": \"%s\", \"containers\": "
		"[{\"name\": \"main\", \"resources\": {\"limits\": "
		"{\"nvidia.com/gpu\": \"%d\"}}}]}, \"status\": {\"phase\": "
		"\"Running\"}}",
		name, name, job, gpus, node, node, ngpus);
}

/*
 * A controller that stopped after a Binding but before its job's row
 * reached the store comes back without the job while the pod runs: the
 * resync's list shows the pod bound and annotated, and its job is taken
 * back, under the annotated id, on exactly the annotated GPUs.  A pod
 * annotated with a job the core knows (ended by gpufleet) is not taken
 * back, nor one whose annotation names no placement.
 */
static void test_adopt(void **state)
{
	(void)state;
	const struct gf_jv *job;
	struct gf_jv *jobs = job_of_pod("one-3", &job); /* cancelled */
	assert_string_equal(str(job, "state"), "cancelled");
	char ended[32];
	snprintf(ended, sizeof(ended), "%s", str(job, "id"));
	gf_jv_free(jobs);
	int free_before = free_gpus("plain");
	assert_true(free_before >= 2);
	struct gf_buf b;
	gf_buf_init(&b, 1u << 16);
	bound_pod(&b, "adopted-0", "plain", "j900", "6,7", 2);
	gf_buf_puts(&b, ",");
	bound_pod(&b, "stale-0", "quad", ended, "3", 1);
	gf_buf_puts(&b, ",");
	bound_pod(&b, "garbled-0", "plain", "j901", "6,x", 1);
	pthread_mutex_lock(&api.lock);
	api.bound = gf_strndup(b.data, b.len);
	pthread_mutex_unlock(&api.lock);
	gf_buf_release(&b);
	int64_t until = mono_ms() + 15000;
	bool taken = false;
	while (!taken && mono_ms() < until) {
		sleep_ms(20);
		jobs = job_of_pod("adopted-0", &job);
		taken = job && !strcmp(str(job, "state"), "running");
		if (!taken)
			gf_jv_free(jobs);
	}
	assert_true(taken);
	assert_string_equal(str(job, "id"), "j900");
	const struct gf_jv *pl = gf_jv_at(gf_jv_get(job, "placement"), 0);
	assert_string_equal(str(pl, "node"), "plain");
	const struct gf_jv *g = gf_jv_get(pl, "gpus");
	assert_int_equal(gf_jv_len(g), 2);
	int64_t g0 = -1, g1 = -1;
	assert_true(gf_jv_int(gf_jv_at(g, 0), &g0) &&
		    gf_jv_int(gf_jv_at(g, 1), &g1));
	assert_int_equal(g0, 6);
	assert_int_equal(g1, 7);
	gf_jv_free(jobs);
	/* the same list held the others: neither taken */
	jobs = job_of_pod("stale-0", &job);
	assert_null(job);
	gf_jv_free(jobs);
	jobs = job_of_pod("garbled-0", &job);
	assert_null(job);
	gf_jv_free(jobs);
	assert_string_equal(metric("gpufleet_k8s_jobs_taken_back_total "),
			    "gpufleet_k8s_jobs_taken_back_total 1");
	/* GPUs 6 and 7 are taken: two fewer free on "plain" */
	assert_int_equal(free_gpus("plain"), free_before - 2);
	pthread_mutex_lock(&api.lock);
	gf_free(api.bound);
	api.bound = NULL;
	pthread_mutex_unlock(&api.lock);
}

/*
 * Binds whose outcome the controller cannot know from the answer: a
 * Binding the API server made but whose answer was lost (a 504), and a
 * job the controller holds whose Binding the API server never saw (as
 * after a stop between the two).  Each ends with the pod bound, its job
 * running and the bind answered "".
 */
static void test_bind_unsure(void **state)
{
	(void)state;
	static const char *const plain[] = { "plain" };
	char err[512];
	const struct gf_jv *job;
	struct gf_jv *jobs, *r;
	/* the answer lost: the pod read back is bound here, as this job */
	char *pod = pod_text("lost-0", "\"nvidia.com/gpu\": \"1\"", NULL);
	assert_int_equal(extender("filter", pod, plain, 1, &r), 200);
	gf_jv_free(r);
	gf_free(pod);
	pthread_mutex_lock(&api.lock);
	snprintf(api.lost, sizeof(api.lost), "lost-0");
	pthread_mutex_unlock(&api.lock);
	int from = api_count();
	bind_pod("lost-0", "plain", err, sizeof(err));
	assert_string_equal(err, "");
	struct xch b, g;
	int ib = api_find(from, "POST", "/pods/lost-0/binding", &b);
	assert_true(ib >= 0);
	assert_int_equal(b.status, 504);
	assert_true(api_find(ib, "GET", "/pods/lost-0", &g) > ib);
	gf_free(b.body);
	gf_free(g.body);
	jobs = job_of_pod("lost-0", &job);
	assert_string_equal(str(job, "state"), "running");
	gf_jv_free(jobs);
	/* answered 201 but never made: the retry makes it, with the job's
	 * annotations */
	pod = pod_text("forgot-0", "\"nvidia.com/gpu\": \"1\"", NULL);
	assert_int_equal(extender("filter", pod, plain, 1, &r), 200);
	gf_jv_free(r);
	gf_free(pod);
	pthread_mutex_lock(&api.lock);
	snprintf(api.forget, sizeof(api.forget), "forgot-0");
	pthread_mutex_unlock(&api.lock);
	bind_pod("forgot-0", "plain", err, sizeof(err));
	assert_string_equal(err, "");
	pthread_mutex_lock(&api.lock);
	api.forget[0] = '\0';
	bool made = set_find("forgot-0") >= 0;
	pthread_mutex_unlock(&api.lock);
	assert_false(made);
	jobs = job_of_pod("forgot-0", &job);
	assert_string_equal(str(job, "state"), "running");
	char id[32];
	snprintf(id, sizeof(id), "%s", str(job, "id"));
	gf_jv_free(jobs);
	from = api_count();
	bind_pod("forgot-0", "plain", err, sizeof(err));
	assert_string_equal(err, "");
	ib = api_find(from, "POST", "/pods/forgot-0/binding", &b);
	assert_true(ib >= 0);
	assert_int_equal(b.status, 201);
	struct gf_jv *bv = parse(b.body);
	assert_string_equal(
		str(gf_jv_get(gf_jv_get(bv, "metadata"), "annotations"),
		    "gpufleet.io/job"),
		id);
	gf_jv_free(bv);
	gf_free(b.body);
	jobs = job_of_pod("forgot-0", &job);
	assert_string_equal(str(job, "state"), "running");
	assert_string_equal(str(job, "id"), id);
	gf_jv_free(jobs);
}

/* ---- setup ------------------------------------------------------------ */

static int setup(void **state)
{
	(void)state;
	enum gf_log_level lv;
	const char *env = getenv("GPUFLEET_LOG");
	if (env && gf_log_parse_level(env, &lv) == 0)
		gf_log_set_level(lv);
	snprintf(dir, sizeof(dir), "/tmp/gf-k8s-XXXXXX");
	assert_non_null(mkdtemp(dir));
	snprintf(db, sizeof(db), "sqlite:%s/state/jobs.db", dir);
	api_start();
	snprintf(kubeconfig, sizeof(kubeconfig), "%s/kubeconfig", dir);
	char kc[1024];
	snprintf(kc, sizeof(kc),
		 "apiVersion: v1\nkind: Config\ncurrent-context: test\n"
		 "clusters:\n- name: fake\n  cluster:\n    server: "
		 "http://127.0.0.1:%d\n"
		 "contexts:\n- name: test\n  context: {cluster: fake, user: "
		 "sched}\n"
		 "users:\n- name: sched\n  user:\n    token: " TOKEN "\n",
		 api.port);
	write_text(kubeconfig, kc);
	gf_serve_config_defaults(&cfg);
	cfg.agents.notready_after_ms = 3600 * 1000;
	cfg.agents.requeue_after_ms = 7200 * 1000;
	static struct gf_k8s_opts ko;
	ko.kubeconfig = kubeconfig;
	ko.resync_ms = 300;
	struct gf_service_opts o = { .listen = "127.0.0.1:0",
				     .db = db,
				     .cfg = &cfg,
				     .agents_only = true,
				     .tick_ms = 20,
				     .k8s = &ko };
	struct gf_err e;
	int rc = gf_service_start(&svc, &o, &e);
	if (rc)
		print_message("start: %s\n", e.msg);
	assert_int_equal(rc, 0);
	snprintf(base, sizeof(base), "%s", gf_service_url(svc));
	base[strlen(base) - 1] = '\0';
	put_node("quad", 8, "v100-32gb", true, false, NULL, 0);
	static const int sick[4] = { 2, 3, 6, 7 };
	put_node("scattered", 8, "v100-32gb", true, false, sick, 4);
	put_node("mig", 8, "h100-sxm", false, true, NULL, 0);
	put_node("plain", 8, "h100-sxm", false, false, NULL, 0);
	put_node("cpu", 0, "", false, false, NULL, 0);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	gf_service_stop(svc);
	gf_serve_config_release(&cfg);
	api_stop();
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
}

/* The pod cache keeps the last GF_K8S_POD_CACHE uids put (a uid put
 * again keeps its place and takes the new pod), through three turns of
 * its ring. */
static void test_pod_cache(void **state)
{
	(void)state;
	struct gf_k8s *k = gf_calloc(1, sizeof(*k));
	gf__k8s_cache_init(k);
	struct gf_k8s_pod p, got;
	memset(&p, 0, sizeof(p));
	const int n = 3 * GF_K8S_POD_CACHE + 7;
	for (int i = 0; i < n; i++) {
		snprintf(p.uid, sizeof(p.uid), "uid-%d", i);
		snprintf(p.name, sizeof(p.name), "pod-%d", i);
		gf__k8s_cache_put(k, &p);
		if (i % 97 == 0) { /* again: no new slot, the new pod */
			snprintf(p.name, sizeof(p.name), "again-%d", i);
			gf__k8s_cache_put(k, &p);
		}
	}
	for (int i = 0; i < n; i++) {
		char uid[32], name[32];
		snprintf(uid, sizeof(uid), "uid-%d", i);
		snprintf(name, sizeof(name), i % 97 ? "pod-%d" : "again-%d", i);
		bool kept = i >= n - GF_K8S_POD_CACHE;
		assert_int_equal(gf__k8s_cache_get(k, uid, &got), kept);
		if (kept)
			assert_string_equal(got.name, name);
	}
	assert_false(gf__k8s_cache_get(k, "", &got));
	gf__k8s_cache_release(k);
	gf_free(k);
}

struct pods_seen {
	uint64_t *seq; /* by uid number: the seq seen, 0 none */
	int n;
	struct gf_k8s *del; /* when set: each odd seq deleted as seen */
};

static void pod_seen(const char *uid, uint64_t seq, void *arg)
{
	struct pods_seen *x = arg;
	int i = atoi(uid + 4);
	assert_true(i >= 0 && i < x->n);
	assert_int_equal(x->seq[i], 0); /* each once */
	x->seq[i] = seq;
	if (x->del && seq % 2)
		gf__k8s_pods_del(x->del, uid);
}

/* The pods the extender holds (uid -> job seq, on util/hash's gf_hmap)
 * against a plain array: puts, a put again (the seq replaced, no second
 * row), deletions (the last row moved into the hole), deletions while
 * walking. */
static void test_pods_table(void **state)
{
	(void)state;
	struct gf_k8s *k = gf_calloc(1, sizeof(*k));
	enum { N = 5000 };
	uint64_t *want = gf_calloc(N, sizeof(*want));
	char uid[32];
	for (int i = 0; i < N; i++) {
		snprintf(uid, sizeof(uid), "uid-%d", i);
		gf__k8s_pods_put(k, uid, (uint64_t)i + 1);
		want[i] = (uint64_t)i + 1;
	}
	for (int i = 0; i < N; i += 3) {
		snprintf(uid, sizeof(uid), "uid-%d", i);
		gf__k8s_pods_del(k, uid);
		want[i] = 0;
	}
	gf__k8s_pods_del(k, "uid-none"); /* none: nothing */
	gf__k8s_pods_del(k, "");
	for (int i = 1; i < N; i += 7) { /* again: the seq replaced */
		snprintf(uid, sizeof(uid), "uid-%d", i);
		gf__k8s_pods_put(k, uid, (uint64_t)i + 100000);
		want[i] = (uint64_t)i + 100000;
	}
	gf__k8s_pods_put(k, "", 9); /* no uid: not kept */
	int live = 0;
	for (int i = 0; i < N; i++)
		live += want[i] != 0;
	assert_int_equal(k->pn, live);
	struct pods_seen x = { gf_calloc(N, sizeof(uint64_t)), N, k };
	gf__k8s_pods_each(k, pod_seen, &x); /* deleting the odd ones */
	for (int i = 0; i < N; i++)
		assert_int_equal(x.seq[i], want[i]);
	memset(x.seq, 0, N * sizeof(uint64_t));
	x.del = NULL;
	gf__k8s_pods_each(k, pod_seen, &x);
	for (int i = 0; i < N; i++)
		assert_int_equal(x.seq[i], want[i] % 2 ? 0 : want[i]);
	gf_free(x.seq);
	gf_free(want);
	gf__k8s_pods_free(k);
	gf_free(k);
}

/* A node gone silent (the sweep marks it NotReady, then lost) keeps no
 * mismatches: gf__k8s_reconcile_forget drops its list and its series.
 * Called directly: the service's sweep waits notready_after_ms (an hour
 * here, so that the other tests' nodes stay ready), and its config is
 * read by the service's thread, so no test can shorten it safely. */
static void test_reconcile_forget(void **state)
{
	(void)state;
	struct gf_k8s *k = gf_calloc(1, sizeof(*k));
	k->mmcap = 3;
	k->mm = gf_calloc(3, sizeof(*k->mm));
	k->mm[1].seen = true;
	k->mm[1].n = 2;
	k->mm[1].v = gf_calloc(2, sizeof(*k->mm[1].v));
	k->mm[2].seen = true;
	k->mm[2].n = 1;
	k->mm[2].v = gf_calloc(1, sizeof(*k->mm[2].v));
	gf__k8s_reconcile_forget(k, 1);
	assert_int_equal(k->mm[1].n, 0);
	assert_null(k->mm[1].v);
	assert_false(k->mm[1].seen);
	assert_int_equal(k->mm[2].n, 1); /* the others kept */
	assert_true(k->mm[2].seen);
	gf__k8s_reconcile_forget(k, 1); /* again: nothing to drop */
	gf__k8s_reconcile_forget(k, 7); /* never compared: nothing */
	gf__k8s_reconcile_forget(k, -1);
	assert_int_equal(k->mm[1].n, 0);
	gf__k8s_reconcile_free(k);
	gf_free(k);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_nvlink_bind),
		cmocka_unit_test(test_mig_bind),
		cmocka_unit_test(test_share_bind),
		cmocka_unit_test(test_reconcile),
		cmocka_unit_test(test_bad_input),
		cmocka_unit_test(test_bind_conflict),
		cmocka_unit_test(test_bind_fetch),
		cmocka_unit_test(test_bind_unsure),
		cmocka_unit_test(test_preempt),
		cmocka_unit_test(test_resync),
		cmocka_unit_test(test_adopt),
		cmocka_unit_test(test_pod_cache),
		cmocka_unit_test(test_pods_table),
		cmocka_unit_test(test_reconcile_forget),
		cmocka_unit_test(test_resync_no_pods), /* cancels every pod's
							  job */
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
