/*
 * service.c - the controller's scheduler thread: it alone changes the
 * core and writes the store.  Each turn: take the queued requests, admit
 * and add the new jobs, apply cancels and what the nodes said, mark
 * silent nodes, run a scheduling pass, write every new and changed job
 * and every reported run in one transaction, then answer every request
 * of the turn and wake the long polls whose node's assignments changed.
 * Invariant: an answer of 201 or 200 is given only after the transaction
 * holding its change committed, but for the ops whose record is
 * elsewhere (a pod's bind: its Binding in the API server is the record,
 * k8s_bind.c), handed on as soon as they are applied; a failed
 * transaction stops the service.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "controller/jobjson.h"
#include "controller/service_impl.h"
#include "util/fmt.h"
#include "util/log.h"
#include "util/mem.h"

#define LEAD_EVERY_MS 1000
#define OPS_PER_TURN  2048

const double gf_serve_lat_bounds[GF_SERVE_LAT_BUCKETS] = {
	0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 0.5, 1, 5, 30,
};

static void answer(struct gf_op *op, unsigned status, const char *error,
		   const char *detail)
{
	op->status = status;
	gf_note(op->error, sizeof(op->error), "%s", error ? error : "");
	gf_note(op->detail, sizeof(op->detail), "%s", detail ? detail : "");
}

void gf__op_error(struct gf_op *op, unsigned status, const char *error,
		  const char *fmt, ...)
{
	char detail[GF_ERR_MSG_MAX];
	va_list ap;
	va_start(ap, fmt);
	gf_vnote(detail, sizeof(detail), fmt, ap);
	va_end(ap);
	answer(op, status, error, detail);
}

void gf__op_reply_error(struct gf_op *op)
{
	gf_reply_error(op->req, op->status, op->error, "%s", op->detail);
}

bool gf__op_answer_open(struct gf_op *op, struct gf_buf *b, struct gf_json *j,
			size_t cap)
{
	if (op->status != 200) {
		gf__op_reply_error(op);
		gf__op_free(op);
		return false;
	}
	gf_json_open(j, b, cap);
	return true;
}

void gf__op_answer_close(struct gf_op *op, unsigned status, struct gf_json *j)
{
	struct gf_buf *b = j->out;
	if (gf_json_error(j)) { /* never cut: say so */
		gf__op_error(op, 500, "too-big", "the answer is over %zu MiB",
			     b->cap >> 20);
		gf__op_reply_error(op);
	} else {
		(void)gf_reply_json(op->req, status, b);
	}
	gf_buf_release(b);
	gf__op_free(op);
}

void gf__op_fail(struct gf_op *op, int rc, const char *msg)
{
	unsigned st = gf__status_of(rc);
	gf__op_error(op, st, gf__error_of(st), "%s", msg);
}

void gf__op_free(struct gf_op *op)
{
	if (!op)
		return;
	op->kind->release(op);
}

/* Stop the service: nothing more is written or answered but 503. */
static void fail(struct gf_service *s, const char *msg)
{
	gf_log(GF_LOG_ERROR, "serve", "stopping: %s", msg);
	pthread_mutex_lock(&s->qlock);
	gf_note(s->fail_msg, sizeof(s->fail_msg), "%s", msg);
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
	op->arrived_us =
		gf_clock_wall_us(); /* a job's submission: not the turn's */
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

bool gf__service_serving(struct gf_service *s, struct gf_http_req *r)
{
	if (s->leading && !atomic_load(&s->failed))
		return true;
	(void)gf_reply_error(
		r, 503, atomic_load(&s->failed) ? "unavailable" : "standby",
		"%s",
		atomic_load(&s->failed)
			? "the server stopped: see its log"
			: "this server is a standby: another one leads");
	return false;
}

/* Take the queue (at most OPS_PER_TURN), waiting up to ms for work. */
static struct gf_op *take(struct gf_service *s, long ms)
{
	pthread_mutex_lock(&s->qlock);
	if (!s->head && !s->stop) {
		struct timespec ts;
		gf_clock_deadline(&ts, (double)ms);
		(void)pthread_cond_timedwait(&s->qwake, &s->qlock, &ts);
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

/* Answer every op of the turn (parking the polls that wait) and free
 * them. */
static void answer_all(struct gf_service *s, struct gf_op *ops)
{
	for (struct gf_op *op = ops, *next; op; op = next) {
		next = op->next;
		op->next = NULL;
		op->kind->answer(s, op); /* takes op */
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
	int rc = 0;
	for (int i = 0; i < s->nfeat && rc == 0; i++)
		if (s->feat[i].load_nodes)
			rc = s->feat[i].load_nodes(s->feat[i].arg, &e);
	if (rc == 0)
		rc = gf_store_load_jobs(s->store, take_loaded, s, &e);
	for (int i = 0; i < s->nfeat && rc == 0; i++)
		if (s->feat[i].load)
			rc = s->feat[i].load(s->feat[i].arg, &e);
	if (rc == 0)
		rc = gf_store_max_seq(s->store, &s->seq, &e);
	if (rc == 0) {
		for (int i = 0; i < s->nfeat; i++)
			if (s->feat[i].loaded)
				s->feat[i].loaded(s->feat[i].arg);
		s->leading = true;
	}
	pthread_mutex_unlock(&s->ctl_lock);
	if (rc) {
		char msg[GF_ERR_MSG_MAX + 32];
		gf_note(msg, sizeof(msg), "cannot load the store: %s", e.msg);
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

void gf__core_warn(int rc, const struct gf_err *e, const char *what)
{
	if (rc)
		gf_log(GF_LOG_WARN, "serve", "%s: %s", what,
		       e && e->msg[0] ? e->msg : gf_strerror(rc));
}

_Static_assert(GF_JOB_ID_MAX >= 22, "a job id holds 'j' and 20 digits");

void gf__job_id(char id[GF_JOB_ID_MAX], uint64_t seq)
{
	if (gf_fmt(id, GF_JOB_ID_MAX, "j%" PRIu64, seq) != 0)
		id[0] = '\0'; /* cannot happen: the assertion above */
}

const struct gf_job *gf__job_by_seq(const struct gf_ctl *ctl, uint64_t seq)
{
	char id[GF_JOB_ID_MAX];
	gf__job_id(id, seq);
	return gf_ctl_job(ctl, id);
}

unsigned gf__status_of(int rc)
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

const char *gf__error_of(unsigned status)
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
	for (int i = 0; i < s->nfeat; i++)
		if (s->feat[i].commit &&
		    s->feat[i].commit(s->feat[i].arg, &e) != 0)
			goto failed;
	return 0;
failed:;
	char msg[GF_ERR_MSG_MAX + 32];
	gf_note(msg, sizeof(msg), "cannot write the store: %s", e.msg);
	fail(s, msg);
	return -1;
}

/* The ops whose kind takes them as soon as they are applied (before
 * the pass and the write), out of *ops. */
static void hand_on_early(struct gf_service *s, struct gf_op **ops)
{
	for (struct gf_op **pp = ops; *pp;) {
		struct gf_op *op = *pp, *next = op->next;
		if (op->kind->early && op->kind->early(s, op))
			*pp = next; /* taken: op->next is its taker's now */
		else
			pp = &op->next;
	}
}

/* One turn with the queued requests *ops (may be NULL; those handed on
 * early are taken out of it). */
static void turn(struct gf_service *s, struct gf_op **opsp, bool pass)
{
	struct gf_op *ops = *opsp;
	int64_t turn_us = gf_clock_wall_us();
	int64_t now = turn_us / 1000;
	uint64_t seq0 = s->seq; /* (seq0, seq1]: the jobs these ops submit */
	struct gf_batch b = { 0 };
	struct gf_ctl_changes ch = { 0 };
	pthread_mutex_lock(&s->ctl_lock);
	for (struct gf_op *op = ops; op; op = op->next)
		op->kind->apply(s, op, now, &b);
	hand_on_early(s, opsp);
	ops = *opsp;
	/* the jobs of this turn's POSTs: measured from their arrival below */
	bool *posted = gf_calloc(s->seq - seq0 + 1, sizeof(*posted));
	for (struct gf_op *op = ops; op; op = op->next) {
		const struct gf_job *j =
			op->kind->posted ? op->kind->posted(s, op) : NULL;
		if (j && j->seq > seq0 && j->seq <= s->seq)
			posted[j->seq - seq0] = true;
	}
	uint64_t seq1 = s->seq;
	/* the features' work of each turn (services' replicas, silent
	 * nodes, MIG, pods' jobs a node lost: never placed again) */
	for (int i = 0; i < s->nfeat; i++)
		if (s->feat[i].step)
			s->feat[i].step(s->feat[i].arg, now, &b);
	if (pass || b.n) {
		gf__core_warn(gf_ctl_schedule(s->ctl, now, &ch), NULL,
			      "the scheduling pass");
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
		for (int i = 0; i < s->nfeat; i++) /* a preemption put
						      back a pod's job */
			if (s->feat[i].passed)
				s->feat[i].passed(s->feat[i].arg, now, &b);
	}
	/* the listeners: where each changed job's replicas are assigned
	 * now, its transitions logged */
	for (int i = 0; i < b.n; i++)
		for (int f = 0; f < s->nfeat; f++)
			if (s->feat[f].changed)
				s->feat[f].changed(s->feat[f].arg, b.jobs[i]);
	/* the jobs posted this turn that started: from their arrival */
	for (struct gf_op *op = ops; op; op = op->next) {
		const struct gf_job *j =
			op->kind->posted ? op->kind->posted(s, op) : NULL;
		if (j && j->seq > seq0 && j->seq <= seq1 &&
		    posted[j->seq - seq0] && first_start(j) &&
		    turn_us >= op->arrived_us)
			observe(s, (double)(turn_us - op->arrived_us) / 1e6);
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
		int64_t now = gf_clock_wall_ms();
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
			turn(s, &ops, pass);
		}
		gf_server_batch_begin(); /* one resumption per event loop */
		answer_all(s, ops);
		for (int i = 0; i < s->nfeat; i++)
			if (s->feat[i].wake)
				s->feat[i].wake(s->feat[i].arg,
						down || draining || stop, 503);
		gf_server_batch_end();
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
	gf_cond_init_mono(&s->qwake);
	gf_cond_init_mono(&s->failed_cond);
	atomic_init(&s->failed, 0);
	return s;
}

void gf__service_free(struct gf_service *s)
{
	for (int i = s->nfeat - 1; i >= 0; i--)
		if (s->feat[i].free)
			s->feat[i].free(s->feat[i].arg);
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
	for (int i = 0; i < s->nfeat; i++)
		if (s->feat[i].stopping)
			s->feat[i].stopping(s->feat[i].arg);
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
	char why[GF_ERR_MSG_MAX]; /* each logged; the count is not needed */
	(void)gf_serve_model_warnings(s->o.cfg, c, why, sizeof(why));
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

int gf__service_register(struct gf_service *s, const struct gf_feature *f)
{
	if (s->nfeat == GF_SERVICE_FEATURES_MAX)
		return GF_ETOOBIG;
	s->feat[s->nfeat++] = *f;
	return 0;
}

void gf__service_heartbeat(struct gf_service *s, int node,
			   const struct gf_np_heartbeat *hb,
			   const struct gf_np_inventory *inv)
{
	for (int i = 0; i < s->nfeat; i++)
		if (s->feat[i].heartbeat)
			s->feat[i].heartbeat(s->feat[i].arg, node, hb, inv);
}

void gf__service_node_lost(struct gf_service *s, int node)
{
	for (int i = 0; i < s->nfeat; i++)
		if (s->feat[i].node_lost)
			s->feat[i].node_lost(s->feat[i].arg, node);
}

void gf__service_feature_metrics(struct gf_service *s, struct gf_buf *b)
{
	for (int i = 0; i < s->nfeat; i++)
		if (s->feat[i].metrics)
			s->feat[i].metrics(s->feat[i].arg, b);
}

int gf__service_new(struct gf_service **out, const struct gf_service_opts *o,
		    struct gf_err *e)
{
	*out = NULL;
	struct gf_service *s = service_new(o);
	int rc = build_core(s, e);
	if (rc) {
		gf__service_free(s);
		return rc;
	}
	*out = s;
	return 0;
}

int gf__service_run(struct gf_service *s, const struct gf_route *routes,
		    int nroutes, struct gf_err *e)
{
	const struct gf_service_opts *o = &s->o;
	int rc = gf_store_open(o->db, &s->store, e);
	/* lead at once when the store lets us: a lone server is ready when
	 * this returns; a standby keeps trying on its thread */
	if (rc == 0) {
		/* a load that failed says why (a bad row), not who leads */
		char why[sizeof(s->fail_msg)];
		int lrc = lead(s, gf_clock_wall_ms());
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
		.conn_memory = GF_SERVE_CONN_MEMORY,
		.on_stop = on_stop,
		.arg = s,
		.tls = o->tls
	};
	if (rc == 0)
		rc = gf_server_start_with(&s->srv, routes, nroutes, &so,
					  &s->tid, scheduler, "scheduler", e);
	if (rc) {
		gf__service_free(s);
		return rc;
	}
	s->running = true;
	for (int i = 0; i < s->nfeat; i++)
		if (s->feat[i].start &&
		    (rc = s->feat[i].start(s->feat[i].arg, e)) != 0) {
			gf_service_stop(s);
			return rc;
		}
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
	gf_note(msg, size, "%s", s->fail_msg);
	pthread_mutex_unlock(&s->qlock);
	return 1;
}

bool gf_service_wait_failure(struct gf_service *s, long ms)
{
	struct timespec ts;
	gf_clock_deadline(&ts, (double)ms);
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
	gf_cond_raise(&s->qlock, &s->qwake, &s->stop);
	if (s->running)
		pthread_join(s->tid, NULL);
	gf__service_free(s);
}
