/*
 * agent.c - the node agent's service (agent.h): sampler thread, the
 * documents it renders, the routes that serve them.
 *
 * Threads: the caller's (start and stop), the sampler (owns the
 * collector once started: it alone samples and renders), and the
 * server's connection threads (read the published documents, which
 * server/doc.c swaps safely, and last_sample_ms, an atomic).  Any other
 * thread may read the health snapshot (gf_agent_health), which the
 * sampler refreshes after each sample.
 *
 * Locks: `lock` (stop; the sampler sleeps on `wake` with it),
 * `health_lock` (the snapshot, held only to copy it), `logs_lock` (the
 * log directory and token of /v1/logs, held only to copy them),
 * `jobs_lock` (the jobs on the devices, held only to copy them) and
 * `nvml_lock`
 * (held by the sampler while it samples, and by gf_agent_nvml's callers:
 * NVML calls are serialised, topo/nvml.h).  Never two at once.
 *
 * Invariants: every document is rendered whole into a bounded buffer,
 * and a render that failed (GF_ETOOBIG past doc_max) is never
 * published: the last whole copy stays served, and the failure is
 * logged with the route it concerns; the first sample is published
 * before the server starts, so no route ever answers "not ready" but a
 * document that was never whole; /v1/topology is built once, from the
 * same source and renderer as `gpufleet topo --json`.
 */
#include "agent/agent.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <gpufleet/findings.h>

#include "agent/worker.h"
#include "server/auth.h"
#include "server/server.h"
#include "telemetry/collect.h"
#include "telemetry/expo.h"
#include "topo/render.h"
#include "util/clock.h"
#include "util/cond.h"
#include "util/fmt.h"
#include "util/json.h"
#include "util/log.h"
#include "util/mem.h"

/* The documents rendered per sample, in route order. */
enum { D_METRICS, D_GPUS, D_DIAG, D_DIAG_TXT, ND };

struct gf_agent {
	struct gf_agent_opts o;
	struct gf_counters counters; /* o.counters points here */
	struct gf_collector col;     /* the sampler's, once started */
	struct gf_server *srv;
	struct gf_http_doc *doc[ND], *topo;
	struct gf_buf buf[ND]; /* the sampler's render buffers */
	atomic_llong last_sample_ms;
	pthread_t tid;
	bool sampling;
	pthread_mutex_t lock; /* guards stop; the sampler sleeps on wake */
	pthread_cond_t wake;
	bool stop;
	pthread_mutex_t health_lock; /* guards health[], nhealth */
	pthread_mutex_t nvml_lock;   /* NVML calls, one thread at a time */
	/* the jobs' logs served (gf_agent_serve_logs), set once before
	 * the node joins: "" until then */
	pthread_mutex_t logs_lock;
	char log_dir[GF_WORKER_PATH_MAX];
	char log_token[GF_AUTH_TOKEN_MAX + 1]; /* "": no token asked */
	struct gf_gpu_health health[GF_TEL_MAX_GPUS];
	int nhealth;
	struct gf_gpu_health health_next[GF_TEL_MAX_GPUS]; /* the sampler's */
	char cpu_why[GF_ERR_MSG_MAX]; /* a CPU node: why; "" with NVML */
	pthread_mutex_t jobs_lock;    /* guards jobs[], njobs */
	struct gf_dev_job jobs[GF_TEL_MAX_JOBS];
	int njobs;
	struct gf_dev_job jobs_s[GF_TEL_MAX_JOBS]; /* the sampler's copy */
};

static const char *const doc_route[ND] = {
	[D_METRICS] = "/metrics",
	[D_GPUS] = "/v1/gpus",
	[D_DIAG] = "/v1/diagnose",
	[D_DIAG_TXT] = "/v1/diagnose.txt",
};

static const char *const doc_type[ND] = {
	[D_METRICS] = "text/plain; version=0.0.4; charset=utf-8",
	[D_GPUS] = "application/json",
	[D_DIAG] = "application/json",
	[D_DIAG_TXT] = "text/plain; charset=utf-8",
};

/* --- routes ---------------------------------------------------------- */

/* A document the sampler renders, found by its route (doc_route[]). */
static int serve_doc(struct gf_http_req *r, void *arg)
{
	struct gf_agent *a = arg;
	for (int k = 0; k < ND; k++)
		if (!strcmp(gf_req_path(r), doc_route[k]))
			return gf_reply_doc(r, a->doc[k]);
	return gf_reply_error(r, 404, "not-found", "no document at '%s'",
			      gf_req_path(r));
}

static int serve_topo(struct gf_http_req *r, void *arg)
{
	struct gf_agent *a = arg;
	return gf_reply_doc(r, a->topo);
}

static int serve_health(struct gf_http_req *r, void *arg)
{
	struct gf_agent *a = arg;
	static const char *const text = "text/plain; charset=utf-8";
	int64_t age = gf_clock_wall_ms() - atomic_load(&a->last_sample_ms);
	if (age < 3 * a->o.interval_ms + 1000)
		return gf_reply(r, 200, text, "ok\n", 3);
	return gf_reply(r, 503, text, "sampling stalled\n", 17);
}

/* A request's token against the agent's (constant time): true when the
 * agent asks none or the bearer is it. */
static bool log_token_ok(const char *want, const char *got)
{
	if (!want[0])
		return true;
	if (!got)
		return false;
	size_t n = strlen(want), m = strlen(got);
	unsigned char d = n != m;
	for (size_t i = 0; i < n; i++)
		d |= (unsigned char)(want[i] ^ (i < m ? got[i] : 0));
	return d == 0;
}

/* An integer path or query value, 0..max; -1 when not one. */
static long small_int(const char *s, long max)
{
	if (!s || !*s || strlen(s) > 18 || strspn(s, "0123456789") != strlen(s))
		return -1;
	long v = strtol(s, NULL, 10);
	return v <= max ? v : -1;
}

/* GET /v1/logs/{job}/{replica}/{attempt}?offset=N: up to
 * GF_AGENT_LOG_CHUNK bytes of that run's log from offset N, text/plain,
 * with X-Gpufleet-Log-Size (the file's size now). */
static int serve_log(struct gf_http_req *r, void *arg)
{
	struct gf_agent *a = arg;
	char dir[GF_WORKER_PATH_MAX], tok[GF_AUTH_TOKEN_MAX + 1];
	pthread_mutex_lock(&a->logs_lock);
	memcpy(dir, a->log_dir, sizeof(dir));
	memcpy(tok, a->log_token, sizeof(tok));
	pthread_mutex_unlock(&a->logs_lock);
	bool ok = log_token_ok(tok, gf_req_bearer(r));
	memset(tok, 0, sizeof(tok));
	if (!ok) {
		gf_reply_header(r, "WWW-Authenticate", "Bearer");
		return gf_reply_error(r, 401, "unauthorized",
				      "the logs of this node need its token "
				      "(the controller's)");
	}
	if (!dir[0])
		return gf_reply_error(r, 404, "not-found",
				      "this agent runs no jobs (no "
				      "--controller)");
	const char *job = gf_req_param(r, "job");
	long rep = small_int(gf_req_param(r, "replica"), GF_WORKER_REPLICA_MAX);
	long att = small_int(gf_req_param(r, "attempt"), GF_WORKER_ATTEMPT_MAX);
	const char *off_s = gf_req_query(r, "offset");
	long long off = off_s ? small_int(off_s, 1L << 50) : 0;
	size_t jl = strlen(job);
	if (jl >= GF_WORKER_ID_MAX || job[0] == '.' ||
	    strspn(job, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
			"0123456789._-") != jl ||
	    rep < 0 || att < 0 || off < 0)
		return gf_reply_error(r, 400, "bad-request",
				      "expected /v1/logs/JOB/REPLICA/ATTEMPT"
				      "[?offset=N] with a job id of "
				      "[A-Za-z0-9._-] and numbers");
	char path[GF_WORKER_PATH_MAX];
	if (gf_worker_log_path(path, sizeof(path), dir, job, (int)rep,
			       (int)att) != 0)
		return gf_reply_error(r, 414, "too-long", "log path too long");
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return gf_reply_error(r, 404, "not-found",
				      "no log of %s replica %ld attempt %ld on "
				      "this node",
				      job, rep, att);
	struct stat st;
	char *buf = NULL;
	ssize_t n = 0;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return gf_reply_error(r, 404, "not-found", "not a log file");
	}
	long long left = (long long)st.st_size - off;
	size_t want = left <= 0			  ? 0
		      : left > GF_AGENT_LOG_CHUNK ? GF_AGENT_LOG_CHUNK
						  : (size_t)left;
	if (want) {
		buf = gf_malloc(want);
		n = pread(fd, buf, want, (off_t)off);
	}
	close(fd);
	char size[32];
	gf_note(size, sizeof(size), "%lld", (long long)st.st_size);
	gf_reply_header(r, "X-Gpufleet-Log-Size", size);
	int rc = gf_reply(r, 200, "text/plain; charset=utf-8", buf ? buf : "",
			  n > 0 ? (size_t)n : 0);
	gf_free(buf);
	return rc;
}

static const struct gf_route routes[] = {
	{ GF_HTTP_GET, "/metrics", serve_doc, 0,
	  "Prometheus text 0.0.4, dcgm-exporter's names, types and\n"
	  "                    labels, then gpufleet_* (GPU up, health, Xids, "
	  "sample\n"
	  "                    age, NVML errors, NVLink bytes, processes and "
	  "their\n"
	  "                    owners, diagnoses)" },
	{ GF_HTTP_GET, "/healthz", serve_health, 0,
	  "200 while samples keep coming, 503 once they stall" },
	{ GF_HTTP_GET, "/v1/gpus", serve_doc, 0,
	  "the latest sample and the health of each GPU, its MIG\n"
	  "                    instances, JSON" },
	{ GF_HTTP_GET, "/v1/topology", serve_topo, 0,
	  "this node's topology (gpufleet topo --json)" },
	{ GF_HTTP_GET, "/v1/diagnose", serve_doc, 0,
	  "GPUs wasted, and why, JSON (gpufleet diagnose --json)" },
	{ GF_HTTP_GET, "/v1/diagnose.txt", serve_doc, 0,
	  "the same as text (gpufleet diagnose)" },
	{ GF_HTTP_GET, "/v1/logs/{job}/{replica}/{attempt}", serve_log, 0,
	  "\n                    a run's log (a job's output) from ?offset=N, "
	  "1 MiB a\n"
	  "                    request, text/plain; to its node's token only" },
};
#define NROUTES ((int)(sizeof(routes) / sizeof(routes[0])))

int gf_agent_routes(const struct gf_route **out)
{
	*out = routes;
	return NROUTES;
}

/* --- documents ------------------------------------------------------- */

/* Publish a rendered document (rc: its renderer's return), or say why
 * the last whole one stays; what names it in the log. */
static void publish(struct gf_agent *a, struct gf_http_doc *d, const char *what,
		    unsigned status, struct gf_buf *b, int rc)
{
	if (rc == 0)
		rc = gf_http_doc_publish(d, status, b);
	if (rc == 0)
		return;
	char cap[32];
	if (a->o.doc_max % (1u << 20) == 0)
		gf_note(cap, sizeof(cap), "%zu MiB", a->o.doc_max >> 20);
	else
		gf_note(cap, sizeof(cap), "%zu bytes", a->o.doc_max);
	if (rc == GF_ETOOBIG)
		gf_log(GF_LOG_ERROR, "agent",
		       "%s passed %s; the last whole one is served", what, cap);
	else
		gf_log(GF_LOG_ERROR, "agent",
		       "%s not rendered (%s); the last whole one is served",
		       what, gf_strerror(rc));
}

/* The health snapshot other threads read (gf_agent_health), from the
 * collector's health machine after a sample. */
static void health_snapshot(struct gf_agent *a)
{
	struct gf_gpu_health *h = a->health_next;
	const struct gf_collector *c = &a->col;
	for (int i = 0; i < c->n; i++) {
		const struct gf_health_gpu *g = gf_health_gpu(&c->health, i);
		memset(&h[i], 0, sizeof(h[i]));
		h[i].index = c->g[i].index;
		_Static_assert(sizeof(h[i].uuid) == sizeof(c->g[i].uuid),
			       "a GPU's UUID: the same size");
		memcpy(h[i].uuid, c->g[i].uuid, sizeof(h[i].uuid));
		h[i].healthy = gf_health_is_healthy(&c->health, i);
		gf_health_reason(&c->health, i, h[i].reason,
				 sizeof(h[i].reason));
		if (g) {
			h[i].since_ms = g->since_ms;
			h[i].last_xid = g->last_xid;
			h[i].xids = g->xids;
		}
		h[i].ndevs = gf_collector_pods(&c->g[i], h[i].devs,
					       GF_TEL_MAX_MIG + 1);
	}
	pthread_mutex_lock(&a->health_lock);
	memcpy(a->health, h, (size_t)c->n * sizeof(h[0]));
	a->nhealth = c->n;
	pthread_mutex_unlock(&a->health_lock);
}

int gf_agent_health(struct gf_agent *a, struct gf_gpu_health *out, int max)
{
	pthread_mutex_lock(&a->health_lock);
	int n = a->nhealth;
	if (max > 0)
		memcpy(out, a->health,
		       (size_t)(n < max ? n : max) * sizeof(out[0]));
	pthread_mutex_unlock(&a->health_lock);
	return n;
}

void gf_agent_set_jobs(struct gf_agent *a, const struct gf_dev_job *v, int n)
{
	if (n > GF_TEL_MAX_JOBS)
		n = GF_TEL_MAX_JOBS;
	pthread_mutex_lock(&a->jobs_lock);
	if (n > 0)
		memcpy(a->jobs, v, (size_t)n * sizeof(v[0]));
	a->njobs = n > 0 ? n : 0;
	pthread_mutex_unlock(&a->jobs_lock);
}

int gf_agent_nvml(struct gf_agent *a, int (*fn)(void *arg), void *arg)
{
	pthread_mutex_lock(&a->nvml_lock);
	int rc = fn(arg);
	pthread_mutex_unlock(&a->nvml_lock);
	return rc;
}

/* Sample, render every document, publish the whole ones. */
static void sample_once(struct gf_agent *a)
{
	int64_t now = gf_clock_wall_ms();
	double t0 = gf_clock_ms();
	gf_collector_sample(&a->col, now);
	health_snapshot(a);
	double t1 = gf_clock_ms();
	for (int i = 0; i < ND; i++)
		gf_buf_reset(&a->buf[i]);
	struct gf_diag_verdict *v;
	int nv = gf_expo_judge(&a->col, &a->counters, &a->o.diag, &v);
	double w = a->o.diag.window_s;
	int rc[ND];
	rc[D_METRICS] =
		gf_expo_render(&a->col, &a->counters, now, &a->buf[D_METRICS]);
	if (rc[D_METRICS] == 0)
		rc[D_METRICS] = gf_expo_render_diag(v, nv, &a->buf[D_METRICS]);
	rc[D_GPUS] = gf_expo_gpus_json(&a->col, now, &a->buf[D_GPUS]);
	rc[D_DIAG] = gf_diag_report_json(v, nv, w, &a->buf[D_DIAG]);
	rc[D_DIAG_TXT] =
		gf_expo_diag_text(&a->col, v, nv, w, &a->buf[D_DIAG_TXT]);
	gf_free(v);
	double t2 = gf_clock_ms();
	size_t len = a->buf[D_METRICS].len;
	for (int i = 0; i < ND; i++) {
		char what[64];
		gf_note(what, sizeof(what), "sample %llu: %s",
			(unsigned long long)a->col.samples, doc_route[i]);
		publish(a, a->doc[i], what, 200, &a->buf[i], rc[i]);
	}
	atomic_store(&a->last_sample_ms, now);
	gf_log(GF_LOG_DEBUG, "agent",
	       "sample %llu: %d GPUs in %.3f ms (%.3f ms CPU), documents "
	       "rendered in %.3f ms (/metrics %zu bytes)",
	       (unsigned long long)a->col.samples, a->col.n, t1 - t0,
	       a->col.cpu_ms_last, t2 - t1, len);
}

/* /v1/topology: `gpufleet topo --json` for the same source (503 with
 * its error document when the node cannot be built). */
static void topology_doc(struct gf_agent *a)
{
	struct gf_buf b;
	struct gf_node *n;
	struct gf_err e;
	gf_err_clear(&e);
	gf_buf_init(&b, a->o.doc_max);
	unsigned status = 200;
	int rc;
	if (gf_node_source_load(&a->o.topo, &n, &e) == 0) {
		struct gf_finding f[GF_MAX_FINDINGS];
		int nf = gf_findings_compute(n, f, GF_MAX_FINDINGS);
		rc = gf_render_topo_json(n, false, f, nf, &b);
		gf_node_free(n);
	} else {
		gf_log(GF_LOG_INFO, "agent", "/v1/topology: %s", e.msg);
		rc = gf_render_topo_error_json(&a->o.topo, &e, &b);
		status = 503;
	}
	publish(a, a->topo, "/v1/topology", status, &b, rc);
	gf_buf_release(&b);
}

/* --- the sampler ----------------------------------------------------- */

static void *sampler(void *arg)
{
	struct gf_agent *a = arg;
	struct timespec next;
	clock_gettime(CLOCK_MONOTONIC, &next);
	pthread_mutex_lock(&a->lock);
	for (;;) {
		/* the next tick, one interval after the last one began */
		gf_clock_add_ms(&next, (double)a->o.interval_ms);
		while (!a->stop && pthread_cond_timedwait(&a->wake, &a->lock,
							  &next) != ETIMEDOUT)
			;
		if (a->stop)
			break;
		pthread_mutex_unlock(&a->lock);
		clock_gettime(CLOCK_MONOTONIC, &next);
		pthread_mutex_lock(&a->jobs_lock);
		memcpy(a->jobs_s, a->jobs,
		       (size_t)a->njobs * sizeof(a->jobs[0]));
		a->col.njobs = a->njobs;
		a->col.jobs = a->jobs_s;
		pthread_mutex_unlock(&a->jobs_lock);
		pthread_mutex_lock(&a->nvml_lock);
		sample_once(a);
		pthread_mutex_unlock(&a->nvml_lock);
		pthread_mutex_lock(&a->lock);
	}
	pthread_mutex_unlock(&a->lock);
	return NULL;
}

/* --- start and stop -------------------------------------------------- */

static void agent_free(struct gf_agent *a)
{
	for (int i = 0; i < ND; i++) {
		gf_http_doc_free(a->doc[i]);
		gf_buf_release(&a->buf[i]);
	}
	gf_http_doc_free(a->topo);
	pthread_cond_destroy(&a->wake);
	pthread_mutex_destroy(&a->lock);
	pthread_mutex_destroy(&a->health_lock);
	pthread_mutex_destroy(&a->nvml_lock);
	pthread_mutex_destroy(&a->logs_lock);
	pthread_mutex_destroy(&a->jobs_lock);
	gf_free(a);
}

static struct gf_agent *agent_new(const struct gf_agent_opts *o)
{
	struct gf_agent *a = gf_calloc(1, sizeof(*a));
	a->o = *o;
	if (!a->o.doc_max)
		a->o.doc_max = GF_AGENT_DOC_MAX;
	a->counters = *o->counters;
	a->o.counters = &a->counters;
	for (int i = 0; i < ND; i++) {
		a->doc[i] = gf_http_doc_new(doc_type[i]);
		gf_buf_init(&a->buf[i], a->o.doc_max);
	}
	a->topo = gf_http_doc_new("application/json");
	atomic_init(&a->last_sample_ms, 0);
	gf_cond_init_mono(&a->wake);
	pthread_mutex_init(&a->lock, NULL);
	pthread_mutex_init(&a->health_lock, NULL);
	pthread_mutex_init(&a->nvml_lock, NULL);
	pthread_mutex_init(&a->logs_lock, NULL);
	pthread_mutex_init(&a->jobs_lock, NULL);
	return a;
}

int gf_agent_start(struct gf_agent **out, const struct gf_agent_opts *o,
		   struct gf_err *e)
{
	*out = NULL;
	struct gf_agent *a = agent_new(o);
	int rc = o->cpu_node ? 0 : gf_collector_open(&a->col, o->ring, e);
	if (o->cpu_node ||
	    (rc && o->cpu_fallback && (rc == GF_ENOTFOUND || rc == GF_ENVML))) {
		gf_note(a->cpu_why, sizeof(a->cpu_why), "%s",
			o->cpu_node ? "--no-nvml" : e->msg);
		gf_collector_open_cpu(&a->col);
		a->o.topo.cpu_only = true;
		gf_err_clear(e);
		rc = 0;
	}
	if (rc) {
		agent_free(a);
		return rc;
	}
	a->col.xid_quiet_ms = o->xid_quiet_ms;
	topology_doc(a);
	sample_once(a); /* before serving: no document is ever empty */
	struct gf_server_opts so = { .name = "agent",
				     .threads = 1,
				     .listen = o->listen,
				     .max_connections = o->max_connections,
				     .max_per_client = o->max_per_client,
				     .arg = a };
	rc = gf_server_start_with(&a->srv, routes, NROUTES, &so, &a->tid,
				  sampler, "sampling", e);
	if (rc) {
		gf_collector_close(&a->col);
		agent_free(a);
		return rc;
	}
	a->sampling = true;
	*out = a;
	return 0;
}

int gf_agent_serve_logs(struct gf_agent *a, const char *log_dir,
			const char *token)
{
	int rc = 0;
	pthread_mutex_lock(&a->logs_lock);
	if (gf_fmt(a->log_dir, sizeof(a->log_dir), "%s", log_dir) != 0 ||
	    gf_fmt(a->log_token, sizeof(a->log_token), "%s",
		   token ? token : "") != 0) {
		a->log_dir[0] = a->log_token[0] = '\0';
		rc = GF_ETOOBIG;
	}
	pthread_mutex_unlock(&a->logs_lock);
	return rc;
}

const char *gf_agent_url(const struct gf_agent *a)
{
	return gf_server_url(a->srv);
}

int gf_agent_gpus(const struct gf_agent *a)
{
	return a->col.n;
}

const char *gf_agent_cpu_node(const struct gf_agent *a)
{
	return a->cpu_why[0] ? a->cpu_why : NULL;
}

void gf_agent_stop(struct gf_agent *a)
{
	if (!a)
		return;
	gf_cond_raise(&a->lock, &a->wake, &a->stop);
	if (a->sampling)
		pthread_join(a->tid, NULL);
	gf_server_stop(a->srv);
	gf_collector_close(&a->col);
	agent_free(a);
}
