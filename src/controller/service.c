/*
 * service.c - the controller's scheduler thread: it alone changes the
 * core and writes the store.  Each turn: take the queued requests, admit
 * and add the new jobs, apply cancels and what the nodes said, mark
 * silent nodes, run a scheduling pass, write every new and changed job
 * and every reported run in one transaction, then answer every request
 * of the turn and wake the long polls whose node's assignments changed.
 * Invariant: an answer of 201 or 200 is given only after the transaction
 * holding its change committed; a failed transaction stops the service.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "controller/jobjson.h"
#include "controller/k8s_impl.h"
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

static int64_t now_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

int64_t gf__service_mono_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void answer(struct gf_op *op, unsigned status, const char *error,
		   const char *detail)
{
	op->status = status;
	snprintf(op->error, sizeof(op->error), "%s", error ? error : "");
	snprintf(op->detail, sizeof(op->detail), "%s", detail ? detail : "");
}

void gf__op_error(struct gf_op *op, unsigned status, const char *error,
		  const char *fmt, ...)
{
	char detail[GF_ERR_MSG_MAX];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(detail, sizeof(detail), fmt, ap);
	va_end(ap);
	answer(op, status, error, detail);
}

void gf__op_reply_error(struct gf_op *op)
{
	gf_reply_error(op->req, op->status, op->error, "%s", op->detail);
}

void gf__op_free(struct gf_op *op)
{
	if (!op)
		return;
	gf_job_spec_release(&op->spec);
	gf_free(op->inv);
	gf_free(op->body);
	gf_np_heartbeat_release(&op->hb);
	gf_free(op->acked);
	gf__k8s_op_free(op->k8s);
	gf_free(op);
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

int gf__service_queue(struct gf_service *s, struct gf_op *op)
{
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
	pthread_mutex_unlock(&s->qlock);
	return 0;
}

int gf__service_hold(struct gf_service *s, struct gf_http_req *r,
		     struct gf_op *op)
{
	op->req = r;
	op->arrived_us = now_us(); /* a job's submission: not the turn's */
	int rc = gf_req_suspend(r);
	if (rc) { /* a server with a thread per connection: a bug here */
		gf__op_free(op);
		return gf_reply_error(r, 500, "internal",
				      "cannot hold the request: %s",
				      gf_strerror(rc));
	}
	if (gf__service_queue(s, op) != 0) {
		gf_reply_error(r, 503, "unavailable",
			       atomic_load(&s->failed)
				       ? "the server stopped: see its log"
				       : "the server is stopping");
		gf__op_free(op);
	}
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

/* A job's answer: 201 {id, state} with its Location. */
static void reply_submitted(struct gf_op *op)
{
	char loc[64];
	snprintf(loc, sizeof(loc), "/v1/jobs/%s", op->job_id);
	gf_reply_header(op->req, "Location", loc);
	struct gf_buf b;
	gf_buf_init(&b, 4096);
	struct gf_json j;
	gf_json_init(&j, &b);
	gf_json_obj_begin(&j, NULL);
	gf_json_str(&j, "id", op->job_id);
	gf_json_str(&j, "state", gf_job_state_name(op->state));
	gf_json_obj_end(&j);
	gf_reply_json(op->req, 201, &b);
	gf_buf_release(&b);
}

/* A cancelled job's answer: the job (read without the lock: this thread
 * alone changes the core). */
static void reply_cancelled(struct gf_service *s, struct gf_op *op)
{
	struct gf_buf b;
	gf_buf_init(&b, 1u << 20);
	struct gf_json j;
	gf_json_init(&j, &b);
	gf_jobjson_write(&j, NULL, gf_ctl_job(s->ctl, op->job_id),
			 gf_ctl_config(s->ctl));
	gf_reply_json(op->req, 200, &b);
	gf_buf_release(&b);
}

/* Answer every op of the turn (parking the polls that wait) and free
 * them. */
static void answer_all(struct gf_service *s, struct gf_op *ops)
{
	for (struct gf_op *op = ops, *next; op; op = next) {
		next = op->next;
		op->next = NULL;
		if (op->kind == GF_OP_REGISTER || op->kind == GF_OP_HEARTBEAT ||
		    op->kind == GF_OP_POLL) {
			gf__agents_answer(s->ag, op); /* takes op */
			continue;
		}
		if (op->kind == GF_OP_K8S) {
			gf__k8s_answer(s->k8s, op); /* takes op */
			continue;
		}
		if (op->kind == GF_OP_ADMIN) {
			gf__admin_answer(s, op);
			gf__op_free(op);
			continue;
		}
		if (op->kind >= GF_OP_SVC_PUT) {
			gf__services_answer(s, op);
			gf__op_free(op);
			continue;
		}
		if (op->status == 201)
			reply_submitted(op);
		else if (op->status == 200)
			reply_cancelled(s, op);
		else
			gf__op_reply_error(op);
		gf__op_free(op);
	}
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

/* Lead or not, every second; on becoming the leader, load the store.
 * 0, or the load's failure (the service has failed with its message). */
static int lead(struct gf_service *s, int64_t now)
{
	if (now - s->last_lead_ms < LEAD_EVERY_MS && s->last_lead_ms)
		return 0;
	s->last_lead_ms = now;
	bool leading = false;
	struct gf_err e;
	gf_err_clear(&e);
	if (gf_store_lead(s->store, &leading, &e) != 0)
		gf_log(GF_LOG_WARN, "serve", "%s", e.msg);
	if (s->leading && !leading) {
		fail(s, "lost the store's leader lock: another server may "
			"lead now");
		return 0;
	}
	if (s->leading || !leading)
		return 0;
	pthread_mutex_lock(&s->ctl_lock);
	int rc = gf__agents_load(s->ag, &e);
	if (rc == 0)
		rc = gf_store_load_jobs(s->store, take_loaded, s, &e);
	if (rc == 0)
		rc = gf__services_load(s, &e);
	if (rc == 0)
		rc = gf_store_max_seq(s->store, &s->seq, &e);
	if (rc == 0) {
		gf__agents_index_all(s->ag);
		if (s->k8s)
			gf__k8s_index(s->k8s);
		s->leading = true;
	}
	pthread_mutex_unlock(&s->ctl_lock);
	if (rc) {
		char msg[GF_ERR_MSG_MAX + 32];
		snprintf(msg, sizeof(msg), "cannot load the store: %s", e.msg);
		fail(s, msg);
		return rc;
	}
	gf_log(GF_LOG_INFO, "serve", "leading: %d jobs loaded from %s",
	       gf_ctl_njobs(s->ctl), gf_store_url(s->store));
	return 0;
}

void gf__batch_add(struct gf_batch *b, const struct gf_job *j)
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
		   struct gf_batch *b)
{
	struct gf_err e;
	gf_err_clear(&e);
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
	/* the request's arrival; never after the turn (a clock step) */
	job->submitted_ms = op->arrived_us > 0 && op->arrived_us / 1000 < now
				    ? op->arrived_us / 1000
				    : now;
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
	gf__batch_add(b, job);
	s->submitted++;
	answer(op, 201, NULL, NULL);
}

static void cancel(struct gf_service *s, struct gf_op *op, int64_t now,
		   struct gf_batch *b)
{
	struct gf_err e;
	gf_err_clear(&e);
	const struct gf_job *job = gf_ctl_job(s->ctl, op->id);
	/* the grant's scope (authz.c), applied where the job is found */
	if (job == NULL || !gf_authz_team_ok(&op->grant, job->spec.team)) {
		answer(op, 404, "not-found", "no such job");
		return;
	}
	int rc = gf_ctl_cancel(s->ctl, op->id, now, &e);
	if (rc) {
		unsigned st = status_of(rc);
		answer(op, st, error_of(st), e.msg);
		return;
	}
	gf__batch_add(b, job);
	s->cancelled++;
	snprintf(op->job_id, sizeof(op->job_id), "%s", job->id);
	answer(op, 200, NULL, NULL);
}

static bool first_start(const struct gf_job *j)
{
	return j->state == GF_JOB_RUNNING && j->attempts == 1 &&
	       j->preemptions == 0 && j->started_ms >= j->submitted_ms;
}

/*
 * A job that started for the first time: its submit-to-placed time in
 * seconds, v.  Jobs placed in the turn their request came in are
 * measured in microseconds, from the request's arrival to the turn's
 * clock (turn() passes them); older ones from their ms times.
 */
void gf__hist_observe(uint64_t *count, double *sum, double v)
{
	int k = 0;
	while (k < GF_SERVE_LAT_BUCKETS && v > gf_serve_lat_bounds[k])
		k++;
	count[k]++;
	*sum += v;
}

static void observe(struct gf_service *s, double v)
{
	gf__hist_observe(s->lat_count, &s->lat_sum, v);
}

/*
 * Write the batch: jobs and runs in transactions of at most
 * GF_STORE_BATCH_MAX each (the runs go with the first jobs: a run and the
 * job it finished land together unless the batch is over the cap), then
 * the nodes that registered.
 */
static int write_batch(struct gf_service *s, struct gf_batch *b)
{
	struct gf_err e;
	gf_err_clear(&e);
	for (int i = 0, r = 0; i < b->n || r < b->nruns;) {
		int n = b->n - i < GF_STORE_BATCH_MAX ? b->n - i
						      : GF_STORE_BATCH_MAX;
		int nr = b->nruns - r < GF_STORE_BATCH_MAX ? b->nruns - r
							   : GF_STORE_BATCH_MAX;
		/* no offset on an array never allocated (NULL + 0 is
		 * undefined, and clang's UBSan says so) */
		struct gf_store_batch sb = { n ? b->jobs + i : NULL, n,
					     nr ? b->runs + r : NULL, nr };
		if (gf_store_commit(s->store, &sb, &e) != 0)
			goto failed;
		s->write_batches++;
		i += n;
		r += nr;
	}
	if (gf__agents_commit(s->ag, &e) == 0 &&
	    gf__services_commit(s, &e) == 0)
		return 0;
failed:;
	char msg[GF_ERR_MSG_MAX + 32];
	snprintf(msg, sizeof(msg), "cannot write the store: %s", e.msg);
	fail(s, msg);
	return -1;
}

/* One turn with the queued requests ops (may be NULL). */
static void turn(struct gf_service *s, struct gf_op *ops, bool pass)
{
	int64_t turn_us = now_us();
	int64_t now = turn_us / 1000;
	uint64_t seq0 = s->seq; /* (seq0, seq1]: the jobs these ops submit */
	struct gf_batch b = { 0 };
	struct gf_ctl_changes ch = { 0 };
	pthread_mutex_lock(&s->ctl_lock);
	for (struct gf_op *op = ops; op; op = op->next)
		if (op->kind == GF_OP_SUBMIT)
			submit(s, op, now, &b);
		else if (op->kind == GF_OP_CANCEL)
			cancel(s, op, now, &b);
		else if (op->kind >= GF_OP_SVC_PUT)
			gf__services_op(s, op);
		else if (op->kind == GF_OP_K8S)
			gf__k8s_op(s->k8s, op, now, &b);
		else if (op->kind == GF_OP_ADMIN)
			gf__admin_op(s, op, &b);
		else
			gf__agents_op(s->ag, op, now, &b);
	/* the jobs of this turn's POSTs: measured from their arrival below */
	bool *posted = gf_calloc(s->seq - seq0 + 1, sizeof(*posted));
	for (struct gf_op *op = ops; op; op = op->next) {
		const struct gf_job *j =
			op->kind == GF_OP_SUBMIT && op->status == 201
				? gf_ctl_job(s->ctl, op->job_id)
				: NULL;
		if (j && j->seq > seq0 && j->seq <= s->seq)
			posted[j->seq - seq0] = true;
	}
	uint64_t seq1 = s->seq;
	gf__services_reconcile(s, now, &b);
	gf__agents_sweep(s->ag, now, &b);
	gf__mig_auto(s, now, &b);
	if (s->k8s) /* pods' jobs a node lost: never placed again */
		gf__k8s_guard(s->k8s, now, &b);
	if (pass || b.n) {
		(void)!gf_ctl_schedule(s->ctl, now, &ch);
		for (int i = 0; i < ch.n; i++) {
			const struct gf_job *j = gf_ctl_job(s->ctl, ch.ids[i]);
			if (j) {
				gf__batch_add(&b, j);
				bool post = j->seq > seq0 && j->seq <= seq1 &&
					    posted[j->seq - seq0];
				if (!post && first_start(j))
					observe(s, (double)(j->started_ms -
							    j->submitted_ms) /
							   1e3);
			}
		}
		if (s->k8s) /* ... or a preemption put back */
			gf__k8s_guard(s->k8s, now, &b);
	}
	/* where each changed job's replicas are assigned now */
	for (int i = 0; i < b.n; i++) {
		gf__agents_job_changed(s->ag, b.jobs[i]);
		gf__translog(s, b.jobs[i]);
	}
	/* the state a 201 reports: after the pass */
	for (struct gf_op *op = ops; op; op = op->next)
		if (op->status == 201) {
			const struct gf_job *j = gf_ctl_job(s->ctl, op->job_id);
			op->state = j ? j->state : GF_JOB_PENDING;
			if (op->kind == GF_OP_SUBMIT && j && j->seq > seq0 &&
			    j->seq <= seq1 && posted[j->seq - seq0] &&
			    first_start(j) && turn_us >= op->arrived_us)
				observe(s, (double)(turn_us - op->arrived_us) /
						   1e6);
		}
	pthread_mutex_unlock(&s->ctl_lock);
	gf_free(posted);
	if (write_batch(s, &b) != 0)
		for (struct gf_op *op = ops; op; op = op->next)
			answer(op, 503, "unavailable", s->fail_msg);
	gf_ctl_changes_release(&ch);
	gf_free(b.jobs);
	gf_free(b.runs);
}

static void *scheduler(void *arg)
{
	struct gf_service *s = arg;
	int64_t last_pass = 0;
	long tick = s->o.tick_ms > 0 ? s->o.tick_ms : 100;
	for (;;) {
		struct gf_op *ops = take(s, s->leading ? tick : 200);
		bool stop, draining;
		pthread_mutex_lock(&s->qlock);
		stop = s->stop;
		draining = s->draining;
		pthread_mutex_unlock(&s->qlock);
		int64_t now = gf__service_now_ms();
		if (!atomic_load(&s->failed))
			lead(s, now);
		bool down = atomic_load(&s->failed) || !s->leading;
		if (down) {
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
		gf__agents_wake(s->ag, down || draining || stop, 503);
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
	atomic_init(&s->failed, 0);
	s->ag = gf__agents_new(s);
	return s;
}

static void service_free(struct gf_service *s)
{
	gf__k8s_free(s->k8s);
	gf__agents_free(s->ag);
	gf__translog_free(s->tlog);
	gf__services_free(s);
	gf_ctl_free(s->ctl);
	gf_store_close(s->store);
	pthread_mutex_destroy(&s->qlock);
	pthread_mutex_destroy(&s->ctl_lock);
	pthread_cond_destroy(&s->qwake);
	pthread_cond_destroy(&s->failed_cond);
	gf_free(s);
}

/* The server stops: parked polls are answered by the thread's next turn
 * (and every op queued still is), before the server's drain ends. */
static void on_stop(void *arg)
{
	struct gf_service *s = arg;
	pthread_mutex_lock(&s->qlock);
	s->draining = true;
	pthread_cond_signal(&s->qwake);
	pthread_mutex_unlock(&s->qlock);
	if (s->k8s)
		gf__k8s_draining(s->k8s);
}

/* The node table and the core: nodes from the config (or the built-in
 * cluster), or none when they come from agents. */
static int build_core(struct gf_service *s, struct gf_err *e)
{
	struct gf_cluster *c = gf_calloc(1, sizeof(*c));
	struct gf_ctl_node *nodes = NULL;
	int rc = 0;
	if (s->o.agents_only) {
		if (s->o.nodes_csv || s->o.cfg->npools) {
			gf_free(c);
			return gf_err_set(e, GF_EINVAL,
					  "--agents: nodes come from their "
					  "agents; drop %s",
					  s->o.nodes_csv
						  ? "--nodes"
						  : "the config's pools");
		}
	} else {
		rc = gf_serve_build_nodes(s->o.cfg, s->o.nodes_csv, c, &nodes,
					  e);
	}
	if (rc) {
		gf_free(c);
		return rc;
	}
	struct gf_ctl_config *cc = gf_malloc(sizeof(*cc));
	*cc = s->o.cfg->ctl;
	/* agents run the jobs: a stopped replica's resources are free only
	 * once its agent says its processes are gone (docs/cluster.md) */
	cc->hold_until_gone = s->o.agents_only;
	rc = gf_ctl_new(cc, c, nodes, &s->ctl, e);
	gf_free(cc);
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
	if (rc == 0 && o->k8s)
		rc = gf__k8s_new(s, o->k8s, &s->k8s, e);
	if (rc == 0)
		rc = gf_store_open(o->db, &s->store, e);
	/* lead at once when the store lets us: a lone server is ready when
	 * this returns; a standby keeps trying on its thread */
	if (rc == 0) {
		/* a load that failed says why (a bad row), not who leads */
		char why[sizeof(s->fail_msg)];
		int lrc = lead(s, gf__service_now_ms());
		if (lrc && gf_service_failed(s, why, sizeof(why)))
			rc = gf_err_set(e, lrc, "%s", why);
		/* SQLite has no standby: the state directory is another
		 * server's (its lock file names the pid) */
		else if (!s->leading &&
			 gf_store_kind(s->store) == GF_STORE_SQLITE)
			rc = gf_err_set(e, GF_ECONFLICT,
					"%s: another gpufleet serve uses this "
					"state (see its .lock file)",
					gf_store_url(s->store));
	}
	const struct gf_route *routes;
	int nroutes = gf_service_routes(&routes);
	struct gf_server_opts so = {
		.name = "serve",
		.listen = o->listen,
		.threads = o->threads ? o->threads : GF_SERVE_THREADS,
		.max_connections = o->max_connections ? o->max_connections
						      : GF_SERVE_CONNECTIONS,
		.max_per_client = o->max_per_client ? o->max_per_client
						    : GF_SERVE_PER_CLIENT,
		/* a long poll holds its connection up to its wait */
		.idle_timeout_s = GF_NP_MAX_WAIT_S + 30,
		.on_stop = on_stop,
		.arg = s,
		.tls = o->tls
	};
	if (rc == 0)
		rc = gf__api_check_routes(e);
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
	if (s->k8s && (rc = gf__k8s_start(s->k8s, e)) != 0) {
		gf_service_stop(s);
		return rc;
	}
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
