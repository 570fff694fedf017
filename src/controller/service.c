/*
 * service.c - the controller's scheduler thread: it alone changes the
 * core and writes the store.  Each turn: take the queued requests, admit
 * and add the new jobs, apply cancels, run a scheduling pass, write every
 * new and changed job in one transaction, then answer.  Invariant: an
 * answer of 201 or 200 is given only after the transaction holding its
 * job committed; a failed transaction stops the service.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "controller/service_impl.h"
#include "util/log.h"
#include "util/mem.h"

#define LEAD_EVERY_MS 1000
#define OPS_PER_TURN  2048

const double gf_serve_lat_bounds[GF_SERVE_LAT_BUCKETS] = {
	0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 0.5, 1, 5, 30,
};

int64_t gf__service_now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void answer(struct gf_op *op, unsigned status, const char *error,
		   const char *detail)
{
	op->status = status;
	snprintf(op->error, sizeof(op->error), "%s", error ? error : "");
	snprintf(op->detail, sizeof(op->detail), "%s", detail ? detail : "");
}

/* Stop the service: nothing more is written or answered but 503. */
static void fail(struct gf_service *s, const char *msg)
{
	gf_log(GF_LOG_ERROR, "serve", "stopping: %s", msg);
	pthread_mutex_lock(&s->qlock);
	snprintf(s->fail_msg, sizeof(s->fail_msg), "%s", msg);
	atomic_store(&s->failed, 1);
	pthread_cond_broadcast(&s->failed_cond);
	pthread_mutex_unlock(&s->qlock);
}

int gf__service_call(struct gf_service *s, struct gf_op *op)
{
	op->done = false;
	op->next = NULL;
	pthread_mutex_lock(&s->qlock);
	if (s->stop || atomic_load(&s->failed)) {
		pthread_mutex_unlock(&s->qlock);
		return GF_ECONFLICT;
	}
	if (s->tail)
		s->tail->next = op;
	else
		s->head = op;
	s->tail = op;
	pthread_cond_signal(&s->qwake);
	while (!op->done)
		pthread_cond_wait(&s->qdone, &s->qlock);
	pthread_mutex_unlock(&s->qlock);
	return 0;
}

/* Take the queue (at most OPS_PER_TURN), waiting up to ms for work. */
static struct gf_op *take(struct gf_service *s, long ms)
{
	pthread_mutex_lock(&s->qlock);
	if (!s->head && !s->stop) {
		struct timespec ts;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		ts.tv_nsec += (ms % 1000) * 1000000;
		ts.tv_sec += ms / 1000 + ts.tv_nsec / 1000000000;
		ts.tv_nsec %= 1000000000;
		pthread_cond_timedwait(&s->qwake, &s->qlock, &ts);
	}
	struct gf_op *first = s->head, *last = s->head;
	int n = first ? 1 : 0;
	while (last && last->next && n < OPS_PER_TURN) {
		last = last->next;
		n++;
	}
	if (last) {
		s->head = last->next;
		if (!s->head)
			s->tail = NULL;
		last->next = NULL;
	}
	pthread_mutex_unlock(&s->qlock);
	return first;
}

static void answer_all(struct gf_service *s, struct gf_op *ops)
{
	pthread_mutex_lock(&s->qlock);
	for (struct gf_op *op = ops, *next; op; op = next) {
		next = op->next;
		op->done = true;
	}
	pthread_cond_broadcast(&s->qdone);
	pthread_mutex_unlock(&s->qlock);
}

static int take_loaded(struct gf_job *job, void *arg)
{
	struct gf_service *s = arg;
	struct gf_err e;
	gf_err_clear(&e);
	int rc = gf_ctl_add(s->ctl, job, &e);
	if (rc) {
		gf_log(GF_LOG_ERROR, "serve", "stored job %s: %s", job->id,
		       e.msg);
		gf_job_release(job);
		gf_free(job);
	}
	return rc;
}

/* Lead or not, every second; on becoming the leader, load the store. */
static void lead(struct gf_service *s, int64_t now)
{
	if (now - s->last_lead_ms < LEAD_EVERY_MS && s->last_lead_ms)
		return;
	s->last_lead_ms = now;
	bool leading = false;
	struct gf_err e;
	gf_err_clear(&e);
	if (gf_store_lead(s->store, &leading, &e) != 0)
		gf_log(GF_LOG_WARN, "serve", "%s", e.msg);
	if (s->leading && !leading) {
		fail(s, "lost the store's leader lock: another server may "
			"lead now");
		return;
	}
	if (s->leading || !leading)
		return;
	pthread_mutex_lock(&s->ctl_lock);
	int rc = gf_store_load_jobs(s->store, take_loaded, s, &e);
	if (rc == 0)
		rc = gf_store_max_seq(s->store, &s->seq, &e);
	if (rc == 0)
		s->leading = true;
	pthread_mutex_unlock(&s->ctl_lock);
	if (rc) {
		char msg[GF_ERR_MSG_MAX + 32];
		snprintf(msg, sizeof(msg), "cannot load the store: %s", e.msg);
		fail(s, msg);
		return;
	}
	gf_log(GF_LOG_INFO, "serve", "leading: %d jobs loaded from %s",
	       gf_ctl_njobs(s->ctl), gf_store_url(s->store));
}

/* A batch of jobs to write, each once. */
struct batch {
	const struct gf_job **jobs;
	int n, cap;
};

static void batch_add(struct batch *b, const struct gf_job *j)
{
	for (int i = b->n - 1; i >= 0 && i >= b->n - 4; i--)
		if (b->jobs[i] == j)
			return; /* the common repeat: just added */
	if (b->n == b->cap) {
		b->cap = b->cap ? b->cap * 2 : 64;
		b->jobs = gf_reallocarray(b->jobs, (size_t)b->cap,
					  sizeof(*b->jobs));
	}
	b->jobs[b->n++] = j;
}

/* Who may act on a team's jobs: nobody checks (no tokens), an admin, or
 * the team itself. */
static bool may(const struct gf_auth_entry *who, const char *team)
{
	return who == NULL || who->admin || !strcmp(who->team, team);
}

static unsigned status_of(int rc)
{
	switch (rc) {
	case GF_EINVAL:
		return 400;
	case GF_EAUTH:
		return 403;
	case GF_ENOTFOUND:
		return 404;
	case GF_ECONFLICT:
		return 409;
	case GF_ENEVER:
		return 422;
	case GF_ETOOBIG:
		return 413;
	default:
		return 500;
	}
}

static const char *error_of(unsigned status)
{
	switch (status) {
	case 400:
		return "invalid";
	case 403:
		return "forbidden";
	case 404:
		return "not-found";
	case 409:
		return "conflict";
	case 413:
		return "too-big";
	case 422:
		return "never-placeable";
	default:
		return "internal";
	}
}

static void submit(struct gf_service *s, struct gf_op *op, int64_t now,
		   struct batch *b)
{
	struct gf_err e;
	gf_err_clear(&e);
	if (!may(op->who, op->spec.team)) {
		char d[160];
		snprintf(d, sizeof(d),
			 "a token of team '%s' submits only that team's jobs",
			 op->who->team);
		answer(op, 403, "forbidden", d);
		return;
	}
	int rc = gf_ctl_admit(s->ctl, &op->spec, &e);
	if (rc) {
		unsigned st = status_of(rc);
		answer(op, st, error_of(st), e.msg);
		s->rejected++;
		return;
	}
	struct gf_job *job = gf_calloc(1, sizeof(*job));
	job->seq = ++s->seq;
	snprintf(job->id, sizeof(job->id), "j%" PRIu64, job->seq);
	job->spec = op->spec;
	memset(&op->spec, 0, sizeof(op->spec)); /* the job owns it now */
	job->state = GF_JOB_PENDING;
	job->submitted_ms = now;
	job->block = -1;
	rc = gf_ctl_add(s->ctl, job, &e);
	if (rc) {
		gf_job_release(job);
		gf_free(job);
		s->seq--;
		unsigned st = status_of(rc);
		answer(op, st, error_of(st), e.msg);
		return;
	}
	snprintf(op->job_id, sizeof(op->job_id), "%s", job->id);
	batch_add(b, job);
	s->submitted++;
	answer(op, 201, NULL, NULL);
}

static void cancel(struct gf_service *s, struct gf_op *op, int64_t now,
		   struct batch *b)
{
	struct gf_err e;
	gf_err_clear(&e);
	const struct gf_job *job = gf_ctl_job(s->ctl, op->id);
	if (job == NULL || !may(op->who, job->spec.team)) {
		answer(op, 404, "not-found", "no such job");
		return;
	}
	int rc = gf_ctl_cancel(s->ctl, op->id, now, &e);
	if (rc) {
		unsigned st = status_of(rc);
		answer(op, st, error_of(st), e.msg);
		return;
	}
	batch_add(b, job);
	s->cancelled++;
	snprintf(op->job_id, sizeof(op->job_id), "%s", job->id);
	answer(op, 200, NULL, NULL);
}

/* Jobs that started for the first time: their submit-to-placed time. */
static void observe(struct gf_service *s, const struct gf_job *j)
{
	if (j->state != GF_JOB_RUNNING || j->attempts != 1 ||
	    j->preemptions != 0 || j->started_ms < j->submitted_ms)
		return;
	double v = (double)(j->started_ms - j->submitted_ms) / 1e3;
	int k = 0;
	while (k < GF_SERVE_LAT_BUCKETS && v > gf_serve_lat_bounds[k])
		k++;
	s->lat_count[k]++;
	s->lat_sum += v;
}

/* Write the batch, in transactions of at most GF_STORE_BATCH_MAX. */
static int write_batch(struct gf_service *s, struct batch *b)
{
	for (int i = 0; i < b->n; i += GF_STORE_BATCH_MAX) {
		int n = b->n - i < GF_STORE_BATCH_MAX ? b->n - i
						      : GF_STORE_BATCH_MAX;
		struct gf_err e;
		gf_err_clear(&e);
		if (gf_store_write(s->store, b->jobs + i, n, &e) != 0) {
			char msg[GF_ERR_MSG_MAX + 32];
			snprintf(msg, sizeof(msg), "cannot write jobs: %s",
				 e.msg);
			fail(s, msg);
			return -1;
		}
		s->write_batches++;
	}
	return 0;
}

/* One turn with the queued requests ops (may be NULL). */
static void turn(struct gf_service *s, struct gf_op *ops, bool pass)
{
	int64_t now = gf__service_now_ms();
	struct batch b = { 0 };
	struct gf_ctl_changes ch = { 0 };
	pthread_mutex_lock(&s->ctl_lock);
	for (struct gf_op *op = ops; op; op = op->next)
		if (op->kind == GF_OP_SUBMIT)
			submit(s, op, now, &b);
		else
			cancel(s, op, now, &b);
	if (pass || b.n) {
		gf_ctl_schedule(s->ctl, now, &ch);
		for (int i = 0; i < ch.n; i++) {
			const struct gf_job *j = gf_ctl_job(s->ctl, ch.ids[i]);
			if (j) {
				batch_add(&b, j);
				observe(s, j);
			}
		}
	}
	/* the state a 201 reports: after the pass */
	for (struct gf_op *op = ops; op; op = op->next)
		if (op->status == 201) {
			const struct gf_job *j = gf_ctl_job(s->ctl, op->job_id);
			op->state = j ? j->state : GF_JOB_PENDING;
		}
	pthread_mutex_unlock(&s->ctl_lock);
	if (b.n && write_batch(s, &b) != 0)
		for (struct gf_op *op = ops; op; op = op->next)
			answer(op, 503, "unavailable", s->fail_msg);
	gf_ctl_changes_release(&ch);
	gf_free(b.jobs);
}

static void *scheduler(void *arg)
{
	struct gf_service *s = arg;
	int64_t last_pass = 0;
	long tick = s->o.tick_ms > 0 ? s->o.tick_ms : 100;
	for (;;) {
		struct gf_op *ops = take(s, s->leading ? tick : 200);
		bool stop;
		pthread_mutex_lock(&s->qlock);
		stop = s->stop;
		pthread_mutex_unlock(&s->qlock);
		int64_t now = gf__service_now_ms();
		if (!atomic_load(&s->failed))
			lead(s, now);
		if (atomic_load(&s->failed) || !s->leading) {
			for (struct gf_op *op = ops; op; op = op->next)
				answer(op, 503,
				       atomic_load(&s->failed) ? "unavailable"
							       : "standby",
				       atomic_load(&s->failed)
					       ? s->fail_msg
					       : "this server is a standby: "
						 "another one leads");
		} else {
			bool pass = now - last_pass >= tick;
			if (pass || ops)
				last_pass = now;
			turn(s, ops, pass);
		}
		answer_all(s, ops);
		if (stop)
			break;
	}
	return NULL;
}

/* ---- lifecycle ------------------------------------------------------ */

static struct gf_service *service_new(const struct gf_service_opts *o)
{
	struct gf_service *s = gf_calloc(1, sizeof(*s));
	s->o = *o;
	pthread_mutex_init(&s->qlock, NULL);
	pthread_mutex_init(&s->ctl_lock, NULL);
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&s->qwake, &ca);
	pthread_cond_init(&s->failed_cond, &ca);
	pthread_condattr_destroy(&ca);
	pthread_cond_init(&s->qdone, NULL);
	atomic_init(&s->failed, 0);
	return s;
}

static void service_free(struct gf_service *s)
{
	gf_ctl_free(s->ctl);
	gf_store_close(s->store);
	pthread_mutex_destroy(&s->qlock);
	pthread_mutex_destroy(&s->ctl_lock);
	pthread_cond_destroy(&s->qwake);
	pthread_cond_destroy(&s->qdone);
	pthread_cond_destroy(&s->failed_cond);
	gf_free(s);
}

/* The node table and the core. */
static int build_core(struct gf_service *s, struct gf_err *e)
{
	struct gf_cluster *c = gf_calloc(1, sizeof(*c));
	struct gf_ctl_node *nodes;
	int rc = gf_serve_build_nodes(s->o.cfg, s->o.nodes_csv, c, &nodes, e);
	if (rc) {
		gf_free(c);
		return rc;
	}
	rc = gf_ctl_new(&s->o.cfg->ctl, c, nodes, &s->ctl, e);
	gf_free(nodes);
	if (rc) {
		gf_cluster_release(c);
		gf_free(c);
	}
	return rc;
}

int gf_service_start(struct gf_service **out, const struct gf_service_opts *o,
		     struct gf_err *e)
{
	*out = NULL;
	struct gf_service *s = service_new(o);
	int rc = build_core(s, e);
	if (rc == 0)
		rc = gf_store_open(o->db, &s->store, e);
	/* lead at once when the store lets us: a lone server is ready when
	 * this returns; a standby keeps trying on its thread */
	if (rc == 0) {
		lead(s, gf__service_now_ms());
		/* SQLite has no standby: the state directory is another
		 * server's (its lock file names the pid) */
		if (!s->leading && gf_store_kind(s->store) == GF_STORE_SQLITE)
			rc = gf_err_set(e, GF_ECONFLICT,
					"%s: another gpufleet serve uses this "
					"state (see its .lock file)",
					gf_store_url(s->store));
	}
	const struct gf_route *routes;
	int nroutes = gf_service_routes(&routes);
	struct gf_server_opts so = { .name = "serve",
				     .listen = o->listen,
				     .arg = s };
	if (rc == 0)
		rc = gf_server_start(&s->srv, routes, nroutes, &so, e);
	if (rc == 0) {
		rc = -pthread_create(&s->tid, NULL, scheduler, s);
		if (rc) {
			gf_err_set(e, rc,
				   "cannot start the scheduler thread: %s",
				   gf_strerror(rc));
			gf_server_stop(s->srv);
		}
	}
	if (rc) {
		service_free(s);
		return rc;
	}
	s->running = true;
	*out = s;
	return 0;
}

const char *gf_service_url(const struct gf_service *s)
{
	return gf_server_url(s->srv);
}

int gf_service_failed(struct gf_service *s, char *msg, unsigned size)
{
	if (!atomic_load(&s->failed))
		return 0;
	pthread_mutex_lock(&s->qlock);
	snprintf(msg, size, "%s", s->fail_msg);
	pthread_mutex_unlock(&s->qlock);
	return 1;
}

bool gf_service_wait_failure(struct gf_service *s, long ms)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	ts.tv_nsec += (ms % 1000) * 1000000;
	ts.tv_sec += ms / 1000 + ts.tv_nsec / 1000000000;
	ts.tv_nsec %= 1000000000;
	pthread_mutex_lock(&s->qlock);
	while (!atomic_load(&s->failed) &&
	       pthread_cond_timedwait(&s->failed_cond, &s->qlock, &ts) == 0)
		;
	pthread_mutex_unlock(&s->qlock);
	return atomic_load(&s->failed) != 0;
}

void gf_service_stop(struct gf_service *s)
{
	if (!s)
		return;
	/* the server first: requests in flight finish (the scheduler thread
	 * still answers them), new ones get 503 */
	gf_server_stop(s->srv);
	pthread_mutex_lock(&s->qlock);
	s->stop = true;
	pthread_cond_signal(&s->qwake);
	pthread_mutex_unlock(&s->qlock);
	if (s->running)
		pthread_join(s->tid, NULL);
	service_free(s);
}
