/*
 * drain.c - what an operator does to nodes and stuck replicas (admin
 * tokens only): drain a node (nothing new is placed there, what runs
 * there finishes; kept in the store, so a drained node stays drained
 * across a controller restart), resume it, and force the release of a
 * replica whose processes never went away (a process in D state that
 * survives SIGKILL keeps its GPUs held until then).  The routes hold the
 * request for the scheduler thread, which applies it, writes the store
 * and answers with the node or the job.
 *
 *   POST /v1/nodes/{name}/drain   {"reason": "..."} (optional)
 *   POST /v1/nodes/{name}/resume
 *   POST /v1/jobs/{id}/release    ?attempt=A&replica=R (default: all)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "controller/agents_impl.h"
#include "controller/jobjson.h"
#include "controller/service_impl.h"
#include "util/log.h"
#include "util/mem.h"

/* Who may call: the route table (authz.c) decided before the handler
 * ran (admins; a node's own token for its drain and resume). */
/* An operator's request: a node drained or resumed, a job's completing
 * replica released. */
struct admin_op {
	struct gf_op op;
	char name[GF_NODE_NAME_MAX > GF_JOB_ID_MAX ? GF_NODE_NAME_MAX
						   : GF_JOB_ID_MAX];
	char *reason;	      /* drain (owned) */
	int attempt, replica; /* release: -1 any */
};

static struct admin_op *admin_op(struct gf_op *op)
{
	return (struct admin_op *)op;
}

static const struct gf_op_kind drain_kind, resume_kind, release_kind;

static int hold_admin(struct gf_call *c, struct gf_http_req *r,
		      const struct gf_op_kind *kind, const char *name,
		      const char *reason, int attempt, int replica)
{
	bool job = kind == &release_kind;
	size_t size = job ? GF_JOB_ID_MAX : GF_NODE_NAME_MAX;
	if (strlen(name) >= size) /* no job or node has a name so long */
		return gf_reply_error(r, 404, "not-found", "no %s '%.48s...'",
				      job ? "job" : "node", name);
	struct admin_op *x = gf_calloc(1, sizeof(*x));
	memcpy(x->name, name, strlen(name) + 1);
	x->op.kind = kind;
	x->op.grant = c->grant;
	x->attempt = attempt;
	x->replica = replica;
	if (reason)
		x->reason = gf_strdup(reason);
	return gf__service_hold(c->s, r, &x->op);
}

int gf__nodes_drain(struct gf_http_req *r, void *arg)
{
	const char *name = gf_req_param(r, "name");
	size_t len = 0;
	(void)gf_req_body(r, &len);
	char reason[GF_STORE_DRAIN_MAX] = "";
	if (len > 0) {
		struct gf_jv *body;
		if (gf_req_json(r, &body))
			return 0; /* answered 400 */
		const struct gf_jv *v = gf_jv_get(body, "reason");
		const char *s = v ? gf_jv_str(v) : NULL;
		bool ok = gf_jv_type(body) == GF_JV_OBJ &&
			  gf_jv_len(body) == (v ? 1u : 0u) && (!v || s) &&
			  (!s || strlen(s) < sizeof(reason));
		if (ok && s) /* shorter than reason: checked above */
			memcpy(reason, s, strlen(s) + 1);
		gf_jv_free(body);
		if (!ok)
			return gf_reply_error(r, 400, "invalid",
					      "expected {\"reason\": TEXT} "
					      "(under %d bytes) or no body",
					      GF_STORE_DRAIN_MAX);
	}
	return hold_admin(arg, r, &drain_kind, name, reason, 0, 0);
}

int gf__nodes_resume(struct gf_http_req *r, void *arg)
{
	return hold_admin(arg, r, &resume_kind, gf_req_param(r, "name"), NULL,
			  0, 0);
}

/* A query integer >= 0, or -1 when absent; -2 when malformed. */
static int query_int(struct gf_http_req *r, const char *key)
{
	const char *v = gf_req_query(r, key);
	if (!v)
		return -1;
	char *end;
	long x = strtol(v, &end, 10);
	return *v && !*end && x >= 0 && x < 1000000 ? (int)x : -2;
}

int gf__jobs_release(struct gf_http_req *r, void *arg)
{
	int attempt = query_int(r, "attempt"),
	    replica = query_int(r, "replica");
	if (attempt == -2 || replica == -2)
		return gf_reply_error(r, 400, "invalid",
				      "'attempt' and 'replica': expected "
				      "numbers");
	return hold_admin(arg, r, &release_kind, gf_req_param(r, "id"), NULL,
			  attempt, replica);
}

/* ---- on the scheduler thread ---------------------------------------- */

static void drain(struct gf_service *s, struct gf_op *op, bool on)
{
	struct admin_op *x = admin_op(op);
	struct gf_err e;
	gf_err_clear(&e);
	int i = gf_ctl_node_find(s->ctl, x->name);
	if (i < 0) {
		gf__op_error(op, 404, "not-found", "no node '%.48s'", x->name);
		return;
	}
	const char *reason = on ? (x->reason ? x->reason : "") : NULL;
	/* the store first: a drain said done survives a restart */
	if (gf_store_node_drain(s->store, x->name, reason, &e) != 0) {
		gf__op_error(op, 503, "unavailable", "%s", e.msg);
		return;
	}
	gf__core_warn(gf_ctl_node_drain(s->ctl, i, on, &e), &e, x->name);
	gf__agents_set_drain(s->ag, i, reason);
	gf_log(GF_LOG_INFO, "serve", "node=%s %s%s%s by an operator", x->name,
	       on ? "draining" : "resumed", on && reason[0] ? ": " : "",
	       on ? reason : "");
	op->status = 200;
}

static void release(struct gf_service *s, struct gf_op *op, int64_t now,
		    struct gf_batch *b)
{
	(void)now;
	struct admin_op *x = admin_op(op);
	const struct gf_job *j = gf_ctl_job(s->ctl, x->name);
	if (!j) {
		gf__op_error(op, 404, "not-found", "no job '%.24s'", x->name);
		return;
	}
	int n = 0;
	for (int k = j->nheld - 1; k >= 0; k--) {
		struct gf_job_held h = j->held[k];
		if ((x->attempt >= 0 && h.attempt != x->attempt) ||
		    (x->replica >= 0 && h.replica != x->replica))
			continue;
		struct gf_err e;
		if (gf_ctl_held_release(s->ctl, j->id, h.attempt, h.replica,
					&e) != 0)
			continue;
		gf_log(GF_LOG_WARN, "serve",
		       "job=%s attempt=%d replica=%d node=%s released by an "
		       "operator while completing (%s since %lld): its "
		       "processes may still live",
		       j->id, h.attempt, h.replica, h.place.node_name, h.why,
		       (long long)h.since_ms);
		n++;
	}
	if (n == 0) {
		gf__op_error(op, 409, "conflict",
			     "job %s has no such replica completing", j->id);
		return;
	}
	gf__batch_add(b, j);
	op->status = 200;
}

static void drain_on(struct gf_service *s, struct gf_op *op, int64_t now,
		     struct gf_batch *b)
{
	(void)now;
	(void)b;
	drain(s, op, true);
}

static void drain_off(struct gf_service *s, struct gf_op *op, int64_t now,
		      struct gf_batch *b)
{
	(void)now;
	(void)b;
	drain(s, op, false);
}

/* The node, or the job released, as it is now. */
static void admin_answer(struct gf_service *s, struct gf_op *op)
{
	struct admin_op *x = admin_op(op);
	struct gf_buf b;
	struct gf_json j;
	if (!gf__op_answer_open(op, &b, &j, 4u << 20))
		return;
	/* the scheduler thread's: it alone changes the core */
	if (op->kind == &release_kind) {
		gf__history_job_json(&j, s, gf_ctl_job(s->ctl, x->name));
	} else {
		int i = gf_ctl_node_find(s->ctl, x->name);
		if (i >= 0)
			gf__node_json(&j, s, i);
	}
	gf__op_answer_close(op, 200, &j);
}

static void admin_release(struct gf_op *op)
{
	gf_free(admin_op(op)->reason);
	gf_free(op);
}

static const struct gf_op_kind drain_kind = {
	.name = "drain",
	.apply = drain_on,
	.answer = admin_answer,
	.release = admin_release,
};
static const struct gf_op_kind resume_kind = {
	.name = "resume",
	.apply = drain_off,
	.answer = admin_answer,
	.release = admin_release,
};
static const struct gf_op_kind release_kind = {
	.name = "release",
	.apply = release,
	.answer = admin_answer,
	.release = admin_release,
};
