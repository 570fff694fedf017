/*
 * ctl_api.c - the controller's HTTP API for people and scripts (issue 10's
 * contract), on the shared server module.  Every request passes the
 * dispatcher (at the end of this file) first, which asks authz.c's table
 * whether its caller may call its route; then handlers parse and
 * validate within the caller's grant, hold the request and hand
 * submissions and cancels to the scheduler thread (service.c, which
 * answers once committed), and read the core under its lock.  The node
 * agents' routes are in agents_http.c.  Errors are {"error", "detail"} with the
 * status that says what went wrong: 400 a bad field, 401 no or a wrong token,
 * 403 another team's (or a node's token), 404, 409 a final job, 413 a body over
 * the cap, 422 a job that can never be placed, 503 a standby or a stopping
 * server.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gpufleet/catalog.h>

#include "controller/authz.h"
#include "controller/config.h"
#include "controller/jobjson.h"
#include "controller/service_impl.h"
#include "server/tls.h"
#include "util/fmt.h"
#include "util/log.h"
#include "util/mem.h"

#define ANSWER_MAX (64u << 20)

static bool visible(const struct gf_grant *g, const struct gf_job *j)
{
	return gf_authz_team_ok(g, j->spec.team);
}

struct seen_by {
	const struct gf_service *s;
	const struct gf_grant *g;
};

/* Is job id one the grant does not cover?  (Under ctl_lock.) */
static bool hidden(const char *id, void *arg)
{
	const struct seen_by *x = arg;
	const struct gf_job *j = gf_ctl_job(x->s->ctl, id);
	return j && !visible(x->g, j);
}

/* A job's reason as the grant may read it (authz.h): the jobs of other
 * teams it names are not named.  Under ctl_lock. */
static const char *reason_for(const struct gf_service *s,
			      const struct gf_grant *g, const char *reason,
			      char *out, size_t size)
{
	if (!g->team[0])
		return reason;
	struct seen_by x = { s, g };
	return gf_authz_reason(reason, hidden, &x, out, size);
}

/* Write a job as the grant may see it (under ctl_lock). */
static void job_json(struct gf_json *j, const struct gf_service *s,
		     const struct gf_grant *g, const struct gf_job *job)
{
	char why[GF_JOB_REASON_MAX];
	const char *reason = reason_for(s, g, job->reason, why, sizeof(why));
	if (reason == job->reason) {
		gf__history_job_json(j, s, job);
		return;
	}
	struct gf_job shown = *job; /* shallow: read only */
	gf_note(shown.reason, sizeof(shown.reason), "%s", reason);
	gf__history_job_json(j, s, &shown);
}

/* ---- the jobs' request kinds: submit, cancel ------------------------ */

/* A submit's or a cancel's op. */
struct job_op {
	struct gf_op op;
	struct gf_job_spec spec; /* submit: owned until the thread takes it */
	char id[GF_JOB_ID_MAX];	 /* cancel: the job; submit: the answer's */
	/* submit of an array (issue 21): its tasks (owned; NULL none),
	 * the first task's seq once added */
	struct gf_array_spec *arr;
	uint64_t first_seq;
};

static struct job_op *job_op(struct gf_op *op)
{
	return (struct job_op *)op;
}

static const struct job_op *job_cop(const struct gf_op *op)
{
	return (const struct job_op *)op;
}

static void job_op_release(struct gf_op *op)
{
	gf_job_spec_release(&job_op(op)->spec);
	gf_free(job_op(op)->arr);
	gf_free(op);
}

/* One job of spec (taken) added to the core: 0, or an error in e (the
 * spec released). */
static int submit_one(struct gf_service *s, struct gf_op *op,
		      struct gf_job_spec *spec, int64_t now, struct gf_batch *b,
		      struct gf_err *e)
{
	struct gf_job *job = gf_calloc(1, sizeof(*job));
	job->seq = ++s->seq;
	job->spec = *spec;
	memset(spec, 0, sizeof(*spec)); /* the job owns it now */
	job->state = GF_JOB_PENDING;
	job->user_hold = job->spec.hold;
	/* the request's arrival; never after the turn (a clock step) */
	job->submitted_ms = op->arrived_us > 0 && op->arrived_us / 1000 < now
				    ? op->arrived_us / 1000
				    : now;
	job->block = -1;
	gf__job_id(job->id, job->seq);
	int rc = gf_ctl_add(s->ctl, job, e);
	if (rc) {
		gf_job_release(job);
		gf_free(job);
		s->seq--;
		return rc;
	}
	char model[GF_CTL_LABELS_MAX];
	if (gf_serve_selector_unknown(gf_ctl_cluster(s->ctl),
				      job->spec.node_selector, model,
				      sizeof(model)))
		gf_log(GF_LOG_WARN, "serve",
		       "job %s: node_selector " GF_GFD_PRODUCT_LABEL
		       "=%s: no node has that GPU model and it is no catalog "
		       "model's id, alias, NVML name or GFD product",
		       job->id, model);
	gf__batch_add(b, job);
	s->submitted++;
	return 0;
}

/* An array's tasks (issue 21), each a job of x's spec knowing its array
 * (the first task's id) and index.  Adding the first checks what every
 * task shares; the job count is checked before: all are added or none. */
static int submit_array(struct gf_service *s, struct job_op *x, int64_t now,
			struct gf_batch *b, struct gf_err *e)
{
	const struct gf_array_spec *a = x->arr;
	if (gf_ctl_njobs(s->ctl) > GF_CTL_MAX_JOBS - a->n)
		return gf_err_set(e, GF_ETOOBIG,
				  "'array': %d tasks: over %d jobs", a->n,
				  GF_CTL_MAX_JOBS);
	x->first_seq = s->seq + 1;
	gf__job_id(x->spec.array_id, x->first_seq);
	x->spec.array_max = a->max;
	for (int t = 0; t < a->n; t++) {
		struct gf_job_spec one;
		gf_job_spec_copy(&one, &x->spec);
		one.array_task = a->idx[t];
		int rc = submit_one(s, &x->op, &one, now, b, e);
		if (rc) /* only the first can fail (see above) */
			return rc;
	}
	return 0;
}

static void submit_apply(struct gf_service *s, struct gf_op *op, int64_t now,
			 struct gf_batch *b)
{
	struct job_op *x = job_op(op);
	struct gf_err e;
	gf_err_clear(&e);
	int rc = gf_ctl_admit(s->ctl, &x->spec, &e);
	if (rc == 0) /* an unknown job named (or another team's): 400 */
		rc = gf_ctl_deps_check(s->ctl, x->spec.dependency, &e);
	if (rc == 0)
		rc = gf__flow_deps_visible(s, &op->grant, x->spec.dependency,
					   &e);
	if (rc) {
		gf__op_fail(op, rc, e.msg);
		s->rejected++;
		return;
	}
	uint64_t first = s->seq + 1;
	rc = x->arr ? submit_array(s, x, now, b, &e)
		    : submit_one(s, op, &x->spec, now, b, &e);
	if (rc) {
		gf__op_fail(op, rc, e.msg);
		return;
	}
	gf__job_id(x->id, first);
	op->status = 201;
}

static const struct gf_job *submit_posted(struct gf_service *s,
					  const struct gf_op *op)
{
	return op->status == 201 ? gf_ctl_job(s->ctl, job_cop(op)->id) : NULL;
}

/* A job's answer: 201 {id, state} with its Location; the state after the
 * turn's pass (read without the lock: this thread alone changes the
 * core). */
static void submit_answer(struct gf_service *s, struct gf_op *op)
{
	struct job_op *x = job_op(op);
	char loc[64];
	if (op->status != 201 ||
	    gf_fmt(loc, sizeof(loc), "/v1/jobs/%s", x->id) != 0) {
		gf__op_reply_error(op);
		gf__op_free(op);
		return;
	}
	const struct gf_job *j = gf_ctl_job(s->ctl, x->id);
	gf_reply_header(op->req, "Location", loc);
	struct gf_buf b;
	struct gf_json js;
	/* an array's answer lists every task: ~20 bytes each, so not the
	 * 4 KiB it had, which cut an array of 1,000 mid-list */
	gf_json_open(&js, &b, ANSWER_MAX);
	gf_json_obj_begin(&js, NULL);
	gf_json_str(&js, "id", x->id);
	gf_json_str(&js, "state",
		    gf_job_state_name(j ? j->state : GF_JOB_PENDING));
	if (x->arr) { /* an array: its tasks' ids (consecutive) */
		gf_json_arr_begin(&js, "tasks");
		for (int t = 0; t < x->arr->n; t++) {
			char id[GF_JOB_ID_MAX];
			gf__job_id(id, x->first_seq + (uint64_t)t);
			gf_json_str(&js, NULL, id);
		}
		gf_json_arr_end(&js);
	}
	gf_json_obj_end(&js);
	gf__op_answer_close(op, 201, &js);
}

static void cancel_apply(struct gf_service *s, struct gf_op *op, int64_t now,
			 struct gf_batch *b)
{
	struct job_op *x = job_op(op);
	struct gf_err e;
	gf_err_clear(&e);
	const struct gf_job *job = gf_ctl_job(s->ctl, x->id);
	/* the grant's scope (decided by the dispatcher), applied where the
	 * job is found */
	if (job == NULL || !gf_authz_team_ok(&op->grant, job->spec.team)) {
		gf__op_error(op, 404, "not-found", "no such job");
		return;
	}
	int rc = gf_ctl_cancel(s->ctl, x->id, now, &e);
	if (rc) {
		gf__op_fail(op, rc, e.msg);
		return;
	}
	gf__batch_add(b, job);
	s->cancelled++;
	op->status = 200;
}

/* A cancelled job's answer: the job. */
static void cancel_answer(struct gf_service *s, struct gf_op *op)
{
	struct gf_buf b;
	struct gf_json j;
	if (!gf__op_answer_open(op, &b, &j, 1u << 20))
		return;
	gf__history_job_json(&j, s, gf_ctl_job(s->ctl, job_op(op)->id));
	gf__op_answer_close(op, 200, &j);
}

static const struct gf_op_kind submit_kind = {
	.name = "submit",
	.apply = submit_apply,
	.answer = submit_answer,
	.release = job_op_release,
	.posted = submit_posted,
};
static const struct gf_op_kind cancel_kind = {
	.name = "cancel",
	.apply = cancel_apply,
	.answer = cancel_answer,
	.release = job_op_release,
};

/* Who the job runs as and what it runs (issue 21): the submitting
 * token's user; a command required (a Kubernetes pod's job, the only one
 * without, never comes through here); root refused unless the config
 * allows it.  0, or GF_EINVAL with e said. */
static int run_as(const struct gf_service *s, const struct gf_grant *g,
		  struct gf_job_spec *spec, struct gf_err *e)
{
	int rc = gf_jobjson_command_check(spec, e);
	if (rc)
		return rc;
	if (g->who && g->who->user[0])
		GF__COPY_SAME(spec->user, g->who->user);
	if (!strcmp(spec->user, "root") && !s->o.cfg->allow_root)
		return gf_err_set(e, GF_EINVAL,
				  "'user': the token's user is root, and the "
				  "controller's config does not say "
				  "'allow_root: true'");
	return 0;
}

int gf__jobs_submit(struct gf_http_req *r, void *arg)
{
	struct gf_call *c = arg;
	const struct gf_grant *g = &c->grant;
	struct gf_jv *body;
	int rc = gf_req_json(r, &body);
	if (rc)
		return 0; /* answered 400 */
	struct job_op *x = gf_calloc(1, sizeof(*x));
	x->op.kind = &submit_kind;
	struct gf_err e;
	gf_err_clear(&e);
	rc = gf_jobjson_spec(body, &x->spec, &e);
	/* a team token's job is its team's: given when the body names
	 * none, refused when it names another */
	if (rc == 0 && g->team[0] && !gf_jv_get(body, "team") &&
	    gf_fmt(x->spec.team, sizeof(x->spec.team), "%s", g->team) != 0)
		rc = gf_err_set(&e, GF_EINVAL, "team: over %zu bytes",
				sizeof(x->spec.team) - 1);
	if (rc == 0) { /* "array": its tasks (issue 21) */
		x->arr = gf_calloc(1, sizeof(*x->arr));
		rc = gf_jobjson_array(body, x->arr, &e);
		if (rc == 1) {
			gf_free(x->arr);
			rc = 0;
		}
	}
	gf_jv_free(body);
	if (rc) {
		gf__op_free(&x->op);
		return gf_reply_error(r, 400, "invalid", "%s", e.msg);
	}
	if (!gf_authz_team_ok(g, x->spec.team)) {
		gf__op_free(&x->op);
		return gf_reply_error(r, 403, "forbidden",
				      "a token of team '%s' submits only that "
				      "team's jobs",
				      g->team);
	}
	if (run_as(c->s, g, &x->spec, &e) != 0) {
		gf__op_free(&x->op);
		return gf_reply_error(r, 400, "invalid", "%s", e.msg);
	}
	x->op.grant = *g;
	return gf__service_hold(c->s, r, &x->op); /* answered once committed */
}

int gf__jobs_cancel(struct gf_http_req *r, void *arg)
{
	struct gf_call *c = arg;
	const char *id = gf_req_param(r, "id");
	if (gf__flow_is_array(c->s, id)) /* its tasks (ctl_flow.c) */
		return gf__flow_cancel_array(r, arg);
	struct job_op *x = gf_calloc(1, sizeof(*x));
	x->op.kind = &cancel_kind;
	x->op.grant = c->grant;
	if (gf_fmt(x->id, sizeof(x->id), "%s", id) != 0) {
		gf__op_free(&x->op); /* no job has an id so long */
		return gf_reply_error(r, 404, "not-found", "no job '%.40s...'",
				      id);
	}
	return gf__service_hold(c->s, r, &x->op); /* answered once committed */
}

int gf__jobs_get(struct gf_http_req *r, void *arg)
{
	struct gf_call *c = arg;
	struct gf_service *s = c->s;
	const struct gf_grant g = c->grant;
	struct gf_buf b;
	struct gf_json j;
	gf_json_open(&j, &b, 1u << 20);
	int rc;
	pthread_mutex_lock(&s->ctl_lock);
	if (!gf__service_serving(s, r)) {
		pthread_mutex_unlock(&s->ctl_lock);
		gf_buf_release(&b);
		return 0;
	}
	const struct gf_job *job = gf_ctl_job(s->ctl, gf_req_param(r, "id"));
	if (job && visible(&g, job))
		job_json(&j, s, &g, job);
	pthread_mutex_unlock(&s->ctl_lock);
	if (job && visible(&g, job))
		rc = gf_reply_json(r, 200, &b);
	else
		rc = gf_reply_error(r, 404, "not-found", "no job '%.40s'",
				    gf_req_param(r, "id"));
	gf_buf_release(&b);
	return rc;
}

/* A job id ("j12" or "12") as its seq; 0 when it is none. */
static uint64_t seq_of(const char *id)
{
	const char *p = id[0] == 'j' ? id + 1 : id;
	char *end;
	if (*p < '1' || *p > '9')
		return 0;
	unsigned long long v = strtoull(p, &end, 10);
	return *end || v >= UINT64_MAX ? 0 : (uint64_t)v;
}

static bool ran_on(const struct gf_job *j, const char *node, void *arg)
{
	return gf__history_ran_on(arg, j->seq, node);
}

/* A time parameter (ISO-8601 or a time ago): 0, or answered 400. */
static int time_param(struct gf_http_req *r, const char *name, int64_t *out)
{
	const char *v = gf_req_query(r, name);
	*out = 0;
	if (v && gf_job_time_parse(v, gf_clock_wall_ms(), out) != 0)
		return gf_reply_error(r, 400, "invalid",
				      "'%s': expected an ISO-8601 time "
				      "(2026-12-02T10:00:00Z) or a time ago "
				      "(90s, 30m, 2h, 7d)",
				      name);
	return 0;
}

/* ?order=&limit=&before=&state=&name=&node=&team=&since=&until=: 0, or
 * answered 400/403. */
static int list_filter(struct gf_http_req *r, const struct gf_grant *g,
		       struct gf_job_filter *f, long *limit)
{
	const char *st = gf_req_query(r, "state");
	const char *lim = gf_req_query(r, "limit");
	const char *order = gf_req_query(r, "order");
	const char *before = gf_req_query(r, "before");
	f->team = gf_req_query(r, "team");
	f->name = gf_req_query(r, "name");
	f->node = gf_req_query(r, "node");
	*limit = 1000;
	if (st && gf_job_states_parse(st, &f->states) != 0)
		return gf_reply_error(r, 400, "invalid",
				      "'state': expected pending, running, "
				      "succeeded, failed or cancelled (any "
				      "case; several by commas)");
	if (order && strcmp(order, "asc") && strcmp(order, "desc"))
		return gf_reply_error(r, 400, "invalid",
				      "'order': expected asc or desc");
	f->desc = order && !strcmp(order, "desc");
	if (before && (f->before_seq = seq_of(before)) == 0)
		return gf_reply_error(r, 400, "invalid",
				      "'before': expected a job id (j12)");
	if (time_param(r, "since", &f->since_ms) ||
	    time_param(r, "until", &f->until_ms))
		return -1;
	if (lim) {
		char *end;
		*limit = strtol(lim, &end, 10);
		if (*lim == '\0' || *end || *limit < 1 ||
		    *limit > GF_SERVE_LIST_MAX)
			return gf_reply_error(r, 400, "invalid",
					      "'limit': expected 1 to %d",
					      GF_SERVE_LIST_MAX);
	}
	if (g->team[0]) {
		if (f->team && !gf_authz_team_ok(g, f->team))
			return gf_reply_error(r, 403, "forbidden",
					      "a token of team '%s' lists "
					      "only that team's jobs",
					      g->team);
		f->team = g->team;
	}
	return 0;
}

/* A list answer begun, {"key": [ open, with ctl_lock held: true; false
 * when this server does not serve (answered, nothing held). */
static bool list_open(struct gf_service *s, struct gf_http_req *r,
		      struct gf_buf *b, struct gf_json *j, const char *key)
{
	gf_json_open(j, b, ANSWER_MAX);
	gf_json_obj_begin(j, NULL);
	gf_json_arr_begin(j, key);
	pthread_mutex_lock(&s->ctl_lock);
	if (gf__service_serving(s, r))
		return true;
	pthread_mutex_unlock(&s->ctl_lock);
	gf_buf_release(b);
	return false;
}

int gf__jobs_list(struct gf_http_req *r, void *arg)
{
	struct gf_call *c = arg;
	struct gf_service *s = c->s;
	const struct gf_grant g = c->grant;
	struct gf_job_filter f = { .ran_on = ran_on };
	long limit;
	if (list_filter(r, &g, &f, &limit) != 0)
		return 0;
	struct gf_buf b;
	struct gf_json j;
	const struct gf_job **v = gf_calloc((size_t)limit, sizeof(*v));
	if (!list_open(s, r, &b, &j, "jobs")) {
		gf_free(v);
		return 0;
	}
	f.arg = s->hist;
	bool more = false;
	int n = gf_ctl_jobs_list(s->ctl, &f, v, (int)limit, &more);
	for (int i = 0; i < n; i++)
		job_json(&j, s, &g, v[i]);
	/* newest first, the next page is ?before= the last one listed */
	char next[GF_JOB_ID_MAX] = "";
	if (more && n > 0 && f.desc)
		GF__COPY_SAME(next, v[n - 1]->id);
	pthread_mutex_unlock(&s->ctl_lock);
	gf_json_arr_end(&j);
	gf_json_bool(&j, "truncated", more);
	gf_json_str_or_null(&j, "next_before", next);
	gf_json_obj_end(&j);
	gf_free(v);
	int rc = gf_json_error(&j)
			 ? gf_reply_error(r, 500, "too-big",
					  "the list is over %u MiB: use "
					  "?limit=",
					  ANSWER_MAX >> 20)
			 : gf_reply_json(r, 200, &b);
	gf_buf_release(&b);
	return rc;
}

/* The pending jobs the grant sees (under ctl_lock). */
static int team_pending(const struct gf_service *s, const struct gf_grant *g)
{
	int n = 0;
	for (int i = 0, all = gf_ctl_njobs(s->ctl); i < all; i++) {
		const struct gf_job *x = gf_ctl_job_at(s->ctl, i);
		n += x->state == GF_JOB_PENDING && visible(g, x);
	}
	return n;
}

/* GET /v1/queue: the pending jobs in order.  A team's token sees its
 * own jobs only, their positions and the count among its team's (not
 * how many other teams' jobs wait, nor where). */
int gf__queue_get(struct gf_http_req *r, void *arg)
{
	struct gf_call *c = arg;
	struct gf_service *s = c->s;
	const struct gf_grant g = c->grant;
	struct gf_buf b;
	struct gf_json j;
	if (!list_open(s, r, &b, &j, "queue"))
		return 0;
	const struct gf_job **q = gf_calloc(GF_SERVE_LIST_MAX, sizeof(*q));
	int n = gf_ctl_queue(s->ctl, q, GF_SERVE_LIST_MAX), pos = 0;
	for (int i = 0; i < n && i < GF_SERVE_LIST_MAX; i++) {
		if (!visible(&g, q[i]))
			continue;
		char why[GF_JOB_REASON_MAX];
		gf_json_obj_begin(&j, NULL);
		gf_json_int(&j, "position", ++pos);
		gf_json_str(&j, "id", q[i]->id);
		gf_json_str(&j, "name", q[i]->spec.name);
		gf_json_str(&j, "team", q[i]->spec.team);
		gf_json_str(&j, "class", q[i]->spec.class_name);
		gf_json_str(&j, "reason",
			    reason_for(s, &g, q[i]->reason, why, sizeof(why)));
		gf_json_obj_end(&j);
	}
	if (g.team[0]) /* its team's pending jobs, all of them */
		n = team_pending(s, &g);
	pthread_mutex_unlock(&s->ctl_lock);
	gf_free(q);
	gf_json_arr_end(&j);
	gf_json_int(&j, "pending", n);
	gf_json_obj_end(&j);
	int rc = gf_reply_json(r, 200, &b);
	gf_buf_release(&b);
	return rc;
}

int gf__nodes_get(struct gf_http_req *r, void *arg)
{
	struct gf_call *c = arg;
	struct gf_service *s = c->s;
	struct gf_buf b;
	struct gf_json j;
	if (!list_open(s, r, &b, &j, "nodes"))
		return 0;
	for (int i = 0, n = gf_ctl_nnodes(s->ctl); i < n; i++)
		gf__node_json(&j, s, i);
	pthread_mutex_unlock(&s->ctl_lock);
	gf_json_arr_end(&j);
	gf_json_obj_end(&j);
	int rc = gf_json_error(&j)
			 ? gf_reply_error(r, 500, "too-big",
					  "the node list is over %u MiB",
					  ANSWER_MAX >> 20)
			 : gf_reply_json(r, 200, &b);
	gf_buf_release(&b);
	return rc;
}

int gf__healthz(struct gf_http_req *r, void *arg)
{
	struct gf_call *c = arg;
	struct gf_service *s = c->s;
	pthread_mutex_lock(&s->ctl_lock);
	bool leading = s->leading;
	pthread_mutex_unlock(&s->ctl_lock);
	const char *st = atomic_load(&s->failed) ? "failed"
			 : leading		 ? "leading"
						 : "standby";
	char body[96];
	int len = snprintf(body, sizeof(body), "{\"status\": \"%s\"}\n", st);
	return gf_reply(r, leading && !atomic_load(&s->failed) ? 200 : 503,
			"application/json", body, (size_t)len);
}
