/*
 * ctl_flow.c - a job's flow as its user steers it (issue 21; jobflow.h),
 * as Slurm's scontrol hold, release and requeue and scancel of an array:
 *
 *   POST   /v1/jobs/{id}/hold      hold a pending job (or every pending
 *                                  task of the array {id})
 *   DELETE /v1/jobs/{id}/hold      release it (its held tasks)
 *   POST   /v1/jobs/{id}/requeue   a running job stopped and put back
 *                                  pending (its running tasks); a job
 *                                  that ended is refused (409): submit
 *                                  it again
 *   DELETE /v1/jobs/{id}           of an array's id: every task not ended
 *                                  cancelled (ctl_api.c hands it here)
 *
 * Team tokens act on their team's jobs only (authz.c's rows; another
 * team's job is 404, as for a cancel).  The scheduler thread applies the
 * op, writes the changed jobs and answers: the job, or for an array
 * {"id", "tasks": [{"id", "state"}], "changed": N}; 409 when nothing
 * could change (a job not pending, already held, not held, not running;
 * an array with no task to change).
 */
#include <stdio.h>
#include <string.h>

#include <gpufleet/jobflow.h>

#include "controller/authz.h"
#include "controller/jobjson.h"
#include "controller/service_impl.h"
#include "util/fmt.h"
#include "util/mem.h"

enum verb { CANCEL, HOLD, RELEASE, REQUEUE };

static const char *const verb_words[] = {
	[CANCEL] = "cancelled",
	[HOLD] = "held",
	[RELEASE] = "released",
	[REQUEUE] = "requeued",
};

struct flow_op {
	struct gf_op op;
	char id[GF_JOB_ID_MAX];
	enum verb verb;
	int ntasks; /* an array: its tasks; 0 a job */
	int changed;
};

static struct flow_op *flow_op(struct gf_op *op)
{
	return (struct flow_op *)op;
}

/* The verb on one job: 0 or an error in e. */
static int one(struct gf_service *s, enum verb v, const struct gf_job *j,
	       int64_t now, struct gf_err *e)
{
	switch (v) {
	case CANCEL:
		return gf_ctl_cancel(s->ctl, j->id, now, e);
	case HOLD:
		return gf_ctl_hold(s->ctl, j->id, true, e);
	case RELEASE:
		return gf_ctl_hold(s->ctl, j->id, false, e);
	case REQUEUE:
		if (gf_job_is_final(j->state))
			return gf_err_set(e, GF_ECONFLICT,
					  "job %s has ended (%s): requeue puts "
					  "back a running job; submit it again",
					  j->id, gf_job_state_name(j->state));
		return gf_ctl_requeue(s->ctl, j->id, "requeued by its user",
				      now, e);
	}
	return gf_err_set(e, GF_EINVAL, "no such verb");
}

/* Does the verb apply to an array's task t? */
static bool applies(enum verb v, const struct gf_job *t)
{
	switch (v) {
	case CANCEL:
		return !gf_job_is_final(t->state);
	case HOLD:
		return t->state == GF_JOB_PENDING && !t->user_hold;
	case RELEASE:
		return t->state == GF_JOB_PENDING && t->user_hold;
	case REQUEUE:
		return t->state == GF_JOB_RUNNING;
	}
	return false;
}

static void flow_apply(struct gf_service *s, struct gf_op *op, int64_t now,
		       struct gf_batch *b)
{
	struct flow_op *x = flow_op(op);
	struct gf_err e;
	gf_err_clear(&e);
	const struct gf_job *job = gf_ctl_job(s->ctl, x->id);
	if (job == NULL || !gf_authz_team_ok(&op->grant, job->spec.team)) {
		gf__op_error(op, 404, "not-found", "no job '%s'", x->id);
		return;
	}
	x->ntasks = gf_ctl_array_ntasks(s->ctl, x->id);
	for (int i = 0; i < (x->ntasks ? x->ntasks : 1); i++) {
		const struct gf_job *t =
			x->ntasks ? gf_ctl_array_task(s->ctl, x->id, i) : job;
		if (x->ntasks && !applies(x->verb, t))
			continue;
		int rc = one(s, x->verb, t, now, &e);
		if (rc && x->ntasks == 0) {
			gf__op_fail(op, rc, e.msg);
			return;
		}
		if (rc == 0) {
			gf__batch_add(b, t);
			x->changed++;
		}
	}
	if (x->changed == 0) {
		gf__op_error(op, 409, "conflict",
			     "array %s: no task to be %s (%d tasks)", x->id,
			     verb_words[x->verb], x->ntasks);
		return;
	}
	if (x->verb == CANCEL)
		s->cancelled += (uint64_t)x->changed;
	op->status = 200;
}

/* The job as it is now, or the array's tasks. */
static void flow_answer(struct gf_service *s, struct gf_op *op)
{
	struct flow_op *x = flow_op(op);
	struct gf_buf b;
	struct gf_json j;
	if (!gf__op_answer_open(op, &b, &j, 1u << 20))
		return;
	/* the scheduler thread's: it alone changes the core */
	if (x->ntasks == 0) {
		gf__history_job_json(&j, s, gf_ctl_job(s->ctl, x->id));
		gf__op_answer_close(op, 200, &j);
		return;
	}
	gf_json_obj_begin(&j, NULL);
	gf_json_str(&j, "id", x->id);
	gf_json_arr_begin(&j, "tasks");
	for (int i = 0; i < x->ntasks; i++) {
		const struct gf_job *t = gf_ctl_array_task(s->ctl, x->id, i);
		gf_json_obj_begin(&j, NULL);
		gf_json_str(&j, "id", t->id);
		gf_json_int(&j, "array_task_id", t->spec.array_task);
		gf_json_str(&j, "state", gf_job_state_name(t->state));
		gf_json_obj_end(&j);
	}
	gf_json_arr_end(&j);
	gf_json_int(&j, "changed", x->changed);
	gf_json_obj_end(&j);
	gf__op_answer_close(op, 200, &j);
}

static void flow_release(struct gf_op *op)
{
	gf_free(op);
}

static const struct gf_op_kind flow_kind = {
	.name = "flow",
	.apply = flow_apply,
	.answer = flow_answer,
	.release = flow_release,
};

static int hold_flow(struct gf_http_req *r, void *arg, enum verb v)
{
	struct gf_call *c = arg;
	const char *id = gf_req_param(r, "id");
	struct flow_op *x = gf_calloc(1, sizeof(*x));
	x->op.kind = &flow_kind;
	x->op.grant = c->grant;
	x->verb = v;
	if (gf_fmt(x->id, sizeof(x->id), "%s", id) != 0) {
		gf_free(x); /* no job has an id so long */
		return gf_reply_error(r, 404, "not-found", "no job '%.40s...'",
				      id);
	}
	return gf__service_hold(c->s, r, &x->op); /* answered once committed */
}

int gf__jobs_hold(struct gf_http_req *r, void *arg)
{
	return hold_flow(r, arg,
			 gf_req_method(r) == GF_HTTP_DELETE ? RELEASE : HOLD);
}

int gf__jobs_requeue(struct gf_http_req *r, void *arg)
{
	return hold_flow(r, arg, REQUEUE);
}

bool gf__flow_is_array(struct gf_service *s, const char *id)
{
	pthread_mutex_lock(&s->ctl_lock);
	bool array = gf_ctl_array_ntasks(s->ctl, id) > 0;
	pthread_mutex_unlock(&s->ctl_lock);
	return array;
}

int gf__flow_cancel_array(struct gf_http_req *r, void *arg)
{
	return hold_flow(r, arg, CANCEL);
}

int gf__flow_deps_visible(const struct gf_service *s, const struct gf_grant *g,
			  const char *dependency, struct gf_err *e)
{
	struct gf_dep v[GF_DEP_IDS_MAX];
	int n;
	if (!g->team[0] || !dependency[0])
		return 0;
	int rc = gf_dep_parse(dependency, v, &n, NULL, e);
	for (int i = 0; rc == 0 && i < n; i++) {
		const struct gf_job *j = gf_ctl_job(s->ctl, v[i].id);
		if (j && !gf_authz_team_ok(g, j->spec.team))
			rc = gf_err_set(e, GF_EINVAL, "'dependency': no job %s",
					v[i].id);
	}
	return rc;
}
