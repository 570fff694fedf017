/*
 * k8s_bench.c - the scheduler extender under kube-scheduler's load:
 * `gpufleet serve --k8s-extender`'s service in this process on a loopback
 * port, 5,000 nodes of 8 GPUs, a SQLite store in a temp dir
 * (synchronous=FULL; a bind is answered once its Binding is made, its
 * job's row written by the same turn meanwhile), and a minimal
 * Kubernetes API server on loopback (keep-alive; 201 for the Binding),
 * so that a bind costs what it would: its record and its Binding.
 *
 *   k8s_bench [PODS]
 * Every time is the server's as kube-scheduler waits for it: from
 * sending a request (its body built beforehand) to having the whole
 * reply; building bodies and reading replies' JSON are the client's own
 * work and not timed.
 * BENCH lines:
 *   k8s.filter_prioritize.5000_nodes.p50/p99  a 1-GPU pod: filter over
 *                             5,000 node names, then prioritize over the
 *                             nodes filter kept (two round trips, as
 *                             kube-scheduler makes them); target p99 5 ms
 *   k8s.filter_prioritize.5000_nodes.server_cpu  the CPU time of the
 *                             process but the client's thread over those
 *                             pairs, a pair: the server's own work (its
 *                             threads; less sensitive to the machine's
 *                             load than the times)
 *   k8s.filter.5000_nodes.p99, k8s.prioritize.5000_nodes.p99  each alone
 *   k8s.bind.per_s            binds per second, 16 clients at once (the
 *                             job started, the Binding with its
 *                             annotations created)
 *   k8s.sequence.pods_per_s   pods one after another through filter,
 *                             prioritize and bind, as one kube-scheduler
 *                             would take them: pods over the sum of the
 *                             three exchanges (the extender's share of
 *                             scheduling a pod; kube-scheduler's own work
 *                             not included)
 *   k8s.sequence.500_names.pods_per_s  the same over 500 names: what
 *                             kube-scheduler sends an extender at 5,000
 *                             nodes with its default
 *                             percentageOfNodesToScore (adaptive: 10 %
 *                             there; it stops filtering once it has found
 *                             that many feasible nodes).  gpufleet's
 *                             scheduler-config.yaml sets 100, so that
 *                             every feasible node is seen.
 *   k8s.pipeline.pods_per_s   the same pods, each bind handed to
 *                             binder threads as kube-scheduler hands it
 *                             to a goroutine of its own (its binding
 *                             cycle) while the next pod is filtered:
 *                             pods bound over the filter and prioritize
 *                             exchanges plus the wait for the last
 *                             binds; a bind refused (its node filled by
 *                             a bind in flight) not counted
 *   k8s.http_floor.p50        one GET /healthz round trip on the same
 *                             client, just before the sequence: what an
 *                             exchange with no work behind it costs on
 *                             this machine now (the sequence is four
 *                             exchanges and three hand-offs between
 *                             threads a pod; a busy host moves both)
 *   peer.kube_scheduler.ci_*  kube-scheduler's CI thresholds at 5,000
 *                             nodes (SchedulingBasic, pods/s), beside
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "controller/k8s.h"
#include "controller/service.h"
#include "server/client.h"
#include "util/buf.h"
#include "util/json.h"
#include "util/mem.h"

#define NODES	5000
#define CLIENTS 16

static char base[128];
static char *names_json; /* "\"n-0000\", ..." for every node */
static char *names_500;	 /* the first 500 of them */

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double cpu_s(clockid_t id)
{
	struct timespec ts;
	clock_gettime(id, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* ---- a minimal API server: every request answered, kept alive ------- */

static int api_fd;
static atomic_int api_calls;

static void *api_conn(void *arg)
{
	int fd = (int)(intptr_t)arg;
	char buf[1 << 16];
	size_t n = 0;
	for (;;) {
		char *end = NULL;
		buf[n] = '\0'; /* headers are text: found as a string */
		while (!(end = strstr(buf, "\r\n\r\n"))) {
			if (n == sizeof(buf) - 1)
				goto out;
			ssize_t r = recv(fd, buf + n, sizeof(buf) - 1 - n, 0);
			if (r <= 0)
				goto out;
			n += (size_t)r;
			buf[n] = '\0';
		}
		size_t hlen = (size_t)(end - buf) + 4, len = 0;
		*end = '\0';
		for (char *c = buf; *c; c++)
			if (!strncasecmp(c, "\ncontent-length:", 16))
				len = strtoul(c + 16, NULL, 10);
		bool binding = strstr(buf, "/binding ") != NULL;
		while (n < hlen + len) { /* the body */
			if (hlen + len > sizeof(buf) - 1)
				goto out;
			ssize_t r = recv(fd, buf + n, sizeof(buf) - 1 - n, 0);
			if (r <= 0)
				goto out;
			n += (size_t)r;
		}
		static const char ok[] =
			"{\"kind\":\"Pod\",\"apiVersion\":\"v1\"}";
		static const char made[] =
			"{\"kind\":\"Status\",\"apiVersion\":\"v1\","
			"\"status\":\"Success\",\"code\":201}";
		const char *body = binding ? made : ok;
		char head[256];
		int hn = snprintf(head, sizeof(head),
				  "HTTP/1.1 %s\r\nContent-Type: application/"
				  "json\r\nContent-Length: %zu\r\n\r\n%s",
				  binding ? "201 Created" : "200 OK",
				  strlen(body), body);
		if (send(fd, head, (size_t)hn, MSG_NOSIGNAL) != hn)
			goto out;
		atomic_fetch_add(&api_calls, 1);
		memmove(buf, buf + hlen + len, n - hlen - len);
		n -= hlen + len;
	}
out:
	close(fd);
	return NULL;
}

static void *api_accept(void *arg)
{
	(void)arg;
	for (;;) {
		int c = accept(api_fd, NULL, NULL);
		if (c < 0)
			return NULL; /* closed: the bench ends */
		pthread_t t;
		pthread_attr_t at;
		pthread_attr_init(&at);
		pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
		if (pthread_create(&t, &at, api_conn, (void *)(intptr_t)c))
			close(c);
		pthread_attr_destroy(&at);
	}
}

static int api_start(char *url, size_t size)
{
	api_fd = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = { .sin_family = AF_INET };
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	socklen_t len = sizeof(a);
	if (api_fd < 0 || bind(api_fd, (struct sockaddr *)&a, sizeof(a)) ||
	    listen(api_fd, 128) ||
	    getsockname(api_fd, (struct sockaddr *)&a, &len))
		return -1;
	snprintf(url, size, "http://127.0.0.1:%d", ntohs(a.sin_port));
	pthread_t t;
	return pthread_create(&t, NULL, api_accept, NULL) ? -1 : 0;
}

/* ---- kube-scheduler's calls ------------------------------------------ */

static void pod(struct gf_buf *b, const char *name)
{
	gf_buf_printf(
		b,
		"{\"metadata\": {\"name\": \"%s\", \"namespace\": "
		"\"bench\", \"uid\": \"uid-%s\", \"creationTimestamp\": "
		"\"2026-03-01T10:00:00Z\"}, \"spec\": {\"schedulerName\": "
		"\"default-scheduler\", \"containers\": [{\"name\": "
		"\"main\", \"image\": \"x\", \"resources\": {\"limits\": "
		"{\"nvidia.com/gpu\": \"1\"}, \"requests\": "
		"{\"nvidia.com/gpu\": \"1\", \"cpu\": \"4\", \"memory\": "
		"\"16Gi\"}}}]}, \"status\": {\"phase\": \"Pending\"}}",
		name, name);
}

/* POST /k8s/verb with a body built beforehand: the parsed answer
 * (caller frees), or NULL; *t the seconds from sending the request to
 * having its whole reply (kube-scheduler's wait: building the body and
 * reading the reply's JSON are its own work, not timed). */
static struct gf_jv *call(struct gf_client *c, const char *verb,
			  const struct gf_buf *body, double *t)
{
	char url[256];
	snprintf(url, sizeof(url), "%s/k8s/%s", base, verb);
	struct gf_client_req q = { .method = GF_HTTP_POST,
				   .url = url,
				   .body = gf_buf_str(body),
				   .body_len = body->len,
				   .timeout_ms = 30000 };
	struct gf_client_answer a;
	struct gf_err e;
	struct gf_jv *v = NULL;
	double t0 = now_s();
	int rc = gf_client_request(c, &q, &a, &e);
	double t1 = now_s();
	if (t)
		*t = t1 - t0;
	if (rc == 0 && a.status == 200)
		gf_jv_parse(gf_buf_str(&a.body), a.body.len, &v, &e);
	gf_client_answer_release(&a);
	return v;
}

/* ExtenderArgs for pod `name` over the nodes of names, a JSON list's
 * inside (caller releases). */
static void filter_body_of(struct gf_buf *b, const char *name,
			   const char *names)
{
	gf_buf_init(b, 1u << 20);
	gf_buf_puts(b, "{\"Pod\": ");
	pod(b, name);
	gf_buf_printf(b, ", \"Nodes\": null, \"NodeNames\": [%s]}", names);
}

/* ExtenderArgs for pod `name` over every node (caller releases). */
static void filter_body(struct gf_buf *b, const char *name)
{
	filter_body_of(b, name, names_json);
}

/* filter (its body fb, built beforehand) over every node, then
 * prioritize over what it kept: the node scored best into best (may be
 * NULL), the seconds of each exchange. */
static int filter_prioritize(struct gf_client *c, const char *name,
			     const struct gf_buf *fb, char *best, size_t size,
			     double *tf, double *tp)
{
	struct gf_jv *f = call(c, "filter", fb, tf);
	const struct gf_jv *kept = gf_jv_get(f, "NodeNames");
	if (!f || !gf_jv_len(kept)) {
		gf_jv_free(f);
		return -1;
	}
	/* kube-scheduler's work between the calls: not timed */
	struct gf_buf b;
	gf_buf_init(&b, 1u << 20);
	gf_buf_puts(&b, "{\"Pod\": ");
	pod(&b, name);
	gf_buf_puts(&b, ", \"Nodes\": null, \"NodeNames\": [");
	for (size_t i = 0; i < gf_jv_len(kept); i++)
		gf_buf_printf(&b, "%s\"%s\"", i ? ", " : "",
			      gf_jv_str(gf_jv_at(kept, i)));
	gf_buf_puts(&b, "]}");
	gf_jv_free(f);
	struct gf_jv *p = call(c, "prioritize", &b, tp);
	gf_buf_release(&b);
	/* the best score, ties broken at random (kube-scheduler's
	 * selectHost: reservoir sampling among the best) */
	int64_t top = -1, s;
	int ties = 0;
	for (size_t i = 0; i < gf_jv_len(p); i++) {
		if (!gf_jv_int(gf_jv_get(gf_jv_at(p, i), "Score"), &s) ||
		    s < top)
			continue;
		ties = s > top ? 1 : ties + 1;
		top = s;
		if (best && rand() % ties == 0)
			snprintf(best, size, "%s",
				 gf_jv_str(gf_jv_get(gf_jv_at(p, i), "Host")));
	}
	gf_jv_free(p);
	return top >= 0 ? 0 : -1;
}

/* pod `name`'s bind to node: 0 when bound, *tb its exchange's seconds.
 * seen: filter has had the pod (else a filter over that one node first,
 * so that the extender has it, as it would have). */
static int bind_one(struct gf_client *c, const char *name, const char *node,
		    bool seen, double *tb)
{
	struct gf_buf b;
	gf_buf_init(&b, 1u << 20);
	if (!seen) {
		gf_buf_puts(&b, "{\"Pod\": ");
		pod(&b, name);
		gf_buf_printf(&b, ", \"Nodes\": null, \"NodeNames\": [\"%s\"]}",
			      node);
		gf_jv_free(call(c, "filter", &b, NULL));
		gf_buf_reset(&b);
	}
	gf_buf_printf(&b,
		      "{\"PodName\": \"%s\", \"PodNamespace\": \"bench\", "
		      "\"PodUID\": \"uid-%s\", \"Node\": \"%s\"}",
		      name, name, node);
	struct gf_jv *v = call(c, "bind", &b, tb);
	gf_buf_release(&b);
	const char *err = gf_jv_str(gf_jv_get(v, "Error"));
	int rc = err && !*err ? 0 : -1;
	if (rc && err)
		fprintf(stderr, "k8s_bench: bind %s: %s\n", name, err);
	gf_jv_free(v);
	return rc;
}

static int per_client;
static atomic_int bound;

/* ---- binds handed on, as kube-scheduler's binding cycles ------------- */

/* kube-scheduler binds a pod in a goroutine of its own and goes on to
 * the next pod's filter (schedule_one.go: bindingCycle after assume):
 * the pipeline's binds are queued here and made by CLIENTS threads. */
struct bind_item {
	char name[32], node[64];
};

static struct bind_item *bq;
static int bq_head, bq_tail, bq_done, bq_failed;
static bool bq_end;
static pthread_mutex_t bq_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t bq_wake = PTHREAD_COND_INITIALIZER;

static void *pipe_binder(void *arg)
{
	(void)arg;
	struct gf_client *c = gf_client_new();
	for (;;) {
		pthread_mutex_lock(&bq_lock);
		while (bq_head == bq_tail && !bq_end)
			pthread_cond_wait(&bq_wake, &bq_lock);
		if (bq_head == bq_tail) {
			pthread_mutex_unlock(&bq_lock);
			break;
		}
		struct bind_item it = bq[bq_head++];
		pthread_mutex_unlock(&bq_lock);
		double t;
		int rc = bind_one(c, it.name, it.node, true, &t);
		pthread_mutex_lock(&bq_lock);
		bq_done++;
		bq_failed += rc != 0;
		pthread_cond_broadcast(&bq_wake);
		pthread_mutex_unlock(&bq_lock);
	}
	gf_client_free(c);
	return NULL;
}

/* pods through filter and prioritize one after another, each bind
 * handed to the binders: pods over the filter and prioritize exchanges'
 * seconds plus the wait for the last binds after the last prioritize
 * (building bodies and reading replies not counted, as in the
 * sequence); the binds that failed into *failed. */
static double pipeline(struct gf_client *c, int pods, int *failed)
{
	bq = calloc((size_t)pods, sizeof(*bq));
	bq_head = bq_tail = bq_done = bq_failed = 0;
	bq_end = false;
	pthread_t tid[CLIENTS];
	for (int i = 0; i < CLIENTS; i++)
		pthread_create(&tid[i], NULL, pipe_binder, NULL);
	double sched_s = 0;
	int n = 0;
	for (int i = 0; i < pods; i++) {
		char name[32], best[64] = "";
		double a, b;
		struct gf_buf body;
		snprintf(name, sizeof(name), "pl-%d", i);
		filter_body(&body, name);
		int rc = filter_prioritize(c, name, &body, best, sizeof(best),
					   &a, &b);
		gf_buf_release(&body);
		if (rc)
			break;
		sched_s += a + b;
		pthread_mutex_lock(&bq_lock);
		snprintf(bq[bq_tail].name, sizeof(bq[0].name), "%s", name);
		snprintf(bq[bq_tail].node, sizeof(bq[0].node), "%s", best);
		bq_tail++;
		pthread_cond_broadcast(&bq_wake);
		pthread_mutex_unlock(&bq_lock);
		n++;
	}
	double t0 = now_s();
	pthread_mutex_lock(&bq_lock);
	bq_end = true;
	pthread_cond_broadcast(&bq_wake);
	while (bq_done < n)
		pthread_cond_wait(&bq_wake, &bq_lock);
	pthread_mutex_unlock(&bq_lock);
	double drain_s = now_s() - t0;
	for (int i = 0; i < CLIENTS; i++)
		pthread_join(tid[i], NULL);
	free(bq);
	*failed = bq_failed + (pods - n);
	return n ? (n - bq_failed) / (sched_s + drain_s) : 0;
}

static void *binder(void *arg)
{
	int k = (int)(intptr_t)arg;
	struct gf_client *c = gf_client_new();
	for (int i = 0; i < per_client; i++) {
		char name[32], node[32];
		int n = k * per_client + i;
		snprintf(name, sizeof(name), "b-%d", n);
		snprintf(node, sizeof(node), "n-%04d", n % NODES);
		double t;
		if (bind_one(c, name, node, false, &t) == 0)
			atomic_fetch_add(&bound, 1);
	}
	gf_client_free(c);
	return NULL;
}

/* filter + prioritize over 5,000 names for pods pods, nothing bound
 * between, the filter bodies built beforehand (as kube-scheduler has
 * them): the pairs answered (their seconds in tf, tp and tfp), the
 * server's CPU seconds over them into *server_cpu. */
static int fp_phase(struct gf_client *c, int pods, double *tf, double *tp,
		    double *tfp, double *server_cpu)
{
	struct gf_buf *fb = calloc((size_t)pods, sizeof(*fb));
	for (int i = 0; i < pods; i++) {
		char name[32];
		snprintf(name, sizeof(name), "fp-%d", i);
		filter_body(&fb[i], name);
	}
	int nfp = 0;
	double cpu0 = cpu_s(CLOCK_PROCESS_CPUTIME_ID),
	       own0 = cpu_s(CLOCK_THREAD_CPUTIME_ID);
	for (int i = 0; i < pods; i++) {
		char name[32];
		snprintf(name, sizeof(name), "fp-%d", i);
		if (filter_prioritize(c, name, &fb[i], NULL, 0, &tf[nfp],
				      &tp[nfp]) == 0) {
			tfp[nfp] = tf[nfp] + tp[nfp];
			nfp++;
		}
		gf_buf_release(&fb[i]);
	}
	free(fb);
	/* the process's CPU but this (the client's) thread's: the server's */
	*server_cpu = cpu_s(CLOCK_PROCESS_CPUTIME_ID) - cpu0 -
		      (cpu_s(CLOCK_THREAD_CPUTIME_ID) - own0);
	return nfp;
}

/* One pod after another through filter (over names), prioritize and
 * bind, pod names PREFIX-i: the seconds of the three exchanges summed
 * (building bodies, reading replies not counted), each bind's into
 * tb, the pods bound into *n. */
static double sequence(struct gf_client *c, const char *prefix,
		       const char *names, int pods, double *tb, int *n)
{
	double s = 0;
	*n = 0;
	for (int i = 0; i < pods; i++) {
		char name[32], best[64] = "";
		double a, b;
		struct gf_buf body;
		snprintf(name, sizeof(name), "%s-%d", prefix, i);
		filter_body_of(&body, name, names);
		int rc = filter_prioritize(c, name, &body, best, sizeof(best),
					   &a, &b);
		gf_buf_release(&body);
		if (rc || bind_one(c, name, best, true, &tb[*n]))
			break;
		s += a + b + tb[*n];
		(*n)++;
	}
	return s;
}

/* The p50 of n GET /healthz round trips (no work behind them): what
 * one exchange costs on this machine now, measured beside the sequence,
 * which is four exchanges (filter, prioritize, bind, and bind's
 * Binding) and three hand-offs between threads. */
static double http_floor(struct gf_client *c, int n)
{
	char url[256];
	snprintf(url, sizeof(url), "%s/healthz", base);
	double *t = calloc((size_t)n, sizeof(double));
	int k = 0;
	for (int i = 0; i < n; i++) {
		struct gf_client_req q = { .url = url, .timeout_ms = 30000 };
		struct gf_client_answer a;
		struct gf_err e;
		double t0 = now_s();
		int rc = gf_client_request(c, &q, &a, &e);
		double t1 = now_s();
		if (rc == 0 && a.status == 200)
			t[k++] = t1 - t0;
		gf_client_answer_release(&a);
	}
	qsort(t, (size_t)k, sizeof(double), cmp);
	double p50 = k ? t[k / 2] : 0;
	free(t);
	return p50;
}

int main(int argc, char **argv)
{
	int pods = argc > 1 ? atoi(argv[1]) : 400;
	srand(1); /* the tie-breaks: one sequence a run */
	if (pods < 10 || pods > 20000) {
		fprintf(stderr, "usage: k8s_bench [PODS 10-20000]\n");
		return 2;
	}
	char api_url[64];
	if (api_start(api_url, sizeof(api_url)) != 0) {
		fprintf(stderr, "k8s_bench: cannot start the API server\n");
		return 1;
	}
	char dir[] = "gf-k8s-bench-XXXXXX", path[128], db[160];
	if (!mkdtemp(dir))
		return 1;
	snprintf(path, sizeof(path), "%s/serve.yaml", dir);
	snprintf(db, sizeof(db), "sqlite:%s/jobs.db", dir);
	FILE *f = fopen(path, "w");
	if (!f)
		return 1;
	fprintf(f, "pools:\n  - {name: n, nodes: [");
	struct gf_buf nb;
	gf_buf_init(&nb, 1u << 20);
	for (int i = 0; i < NODES; i++) {
		fprintf(f, "%sn-%04d", i ? ", " : "", i);
		gf_buf_printf(&nb, "%s\"n-%04d\"", i ? ", " : "", i);
	}
	fprintf(f, "], model: h100-80gb, gpus: 8, cpu_milli: 192000, "
		   "memory_mib: 2097152}\n");
	fclose(f);
	names_json = gf_strndup(nb.data, nb.len);
	/* "\"n-0000\", " is 10 bytes: the first 500 without the last ", " */
	names_500 = gf_strndup(nb.data, 500 * 10 - 2);
	gf_buf_release(&nb);
	struct gf_serve_config cfg;
	gf_serve_config_defaults(&cfg);
	struct gf_k8s_opts ko = { .api_url = api_url, .resync_ms = -1 };
	struct gf_err e;
	struct gf_service *s;
	struct gf_service_opts o = { .listen = "127.0.0.1:0",
				     .db = db,
				     .cfg = &cfg,
				     .tick_ms = 50,
				     .k8s = &ko };
	if (gf_serve_config_read(path, &cfg, &e) != 0 ||
	    gf_service_start(&s, &o, &e) != 0) {
		fprintf(stderr, "k8s_bench: %s\n", e.msg);
		return 1;
	}
	snprintf(base, sizeof(base), "%s", gf_service_url(s));
	base[strlen(base) - 1] = '\0';

	struct gf_client *c = gf_client_new();
	double *tf = calloc((size_t)pods, sizeof(double));
	double *tp = calloc((size_t)pods, sizeof(double));
	double *tfp = calloc((size_t)pods, sizeof(double));
	double *tb = calloc((size_t)pods, sizeof(double));
	double server_cpu;
	int nfp = fp_phase(c, pods, tf, tp, tfp, &server_cpu);
	qsort(tf, (size_t)nfp, sizeof(double), cmp);
	qsort(tp, (size_t)nfp, sizeof(double), cmp);
	qsort(tfp, (size_t)nfp, sizeof(double), cmp);

	/* binds, CLIENTS at once */
	per_client = pods / CLIENTS;
	pthread_t tid[CLIENTS];
	double t0 = now_s();
	for (int i = 0; i < CLIENTS; i++)
		pthread_create(&tid[i], NULL, binder, (void *)(intptr_t)i);
	for (int i = 0; i < CLIENTS; i++)
		pthread_join(tid[i], NULL);
	double bind_s = now_s() - t0;

	double floor_s = http_floor(c, pods);
	int seq = 0, seq5 = 0;
	double seq_s = sequence(c, "sq", names_json, pods, tb, &seq);
	qsort(tb, (size_t)seq, sizeof(double), cmp);
	double *tb5 = calloc((size_t)pods, sizeof(double));
	double seq5_s = sequence(c, "sq5", names_500, pods, tb5, &seq5);
	free(tb5);
	int pl_failed = 0;
	double pl = pipeline(c, pods, &pl_failed);

	if (nfp) {
		printf("BENCH k8s.filter_prioritize.5000_nodes.p50 %.2f ms\n",
		       tfp[nfp / 2] * 1e3);
		printf("BENCH k8s.filter_prioritize.5000_nodes.p99 %.2f ms\n",
		       tfp[(nfp * 99) / 100] * 1e3);
		printf("BENCH k8s.filter_prioritize.5000_nodes.server_cpu "
		       "%.3f ms\n",
		       server_cpu / nfp * 1e3);
		printf("BENCH k8s.filter.5000_nodes.p99 %.2f ms\n",
		       tf[(nfp * 99) / 100] * 1e3);
		printf("BENCH k8s.prioritize.5000_nodes.p99 %.2f ms\n",
		       tp[(nfp * 99) / 100] * 1e3);
	}
	printf("BENCH k8s.bind.per_s %.0f binds/s\n",
	       atomic_load(&bound) / bind_s);
	if (seq) {
		printf("BENCH k8s.sequence.pods_per_s %.0f pods/s\n",
		       seq / seq_s);
		printf("BENCH k8s.sequence.bind.p50 %.2f ms\n",
		       tb[seq / 2] * 1e3);
	}
	if (seq5)
		printf("BENCH k8s.sequence.500_names.pods_per_s %.0f pods/s\n",
		       seq5 / seq5_s);
	printf("BENCH k8s.pipeline.pods_per_s %.0f pods/s\n", pl);
	printf("BENCH k8s.http_floor.p50 %.3f ms\n", floor_s * 1e3);
	printf("BENCH peer.kube_scheduler.ci_min 680 pods/s\n");
	printf("BENCH peer.kube_scheduler.ci_max 810 pods/s\n");
	printf("# %d nodes x 8 GPUs; %d filter+prioritize, %d of %d binds "
	       "(%d clients), %d pods in sequence, %d of %d pipelined "
	       "pods bound (a bind refused: the node filled by a bind in "
	       "flight); %d API calls; "
	       "kube-scheduler's thresholds are SchedulingBasic at 5,000 "
	       "nodes, without an extender\n",
	       NODES, nfp, atomic_load(&bound), per_client * CLIENTS, CLIENTS,
	       seq, pods - pl_failed, pods, atomic_load(&api_calls));
	gf_client_free(c);
	free(tf);
	free(tp);
	free(tfp);
	free(tb);
	gf_service_stop(s);
	close(api_fd);
	gf_serve_config_release(&cfg);
	gf_free(names_json);
	gf_free(names_500);
	char cmd[256];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : 1;
}
