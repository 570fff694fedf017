/*
 * jobs_add.c - jobs the store committed taken into the job table
 * (gf_ctl_add; table.c keeps it): a restart's RUNNING jobs restored onto
 * the engine; and the transitions callers ask for outside a pass:
 * cancel, finish, requeue.
 *
 * Invariants: a call that fails changes nothing and takes nothing.
 */
#include "core/jobs/jobs_add.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "core/jobs/admit.h"
#include "core/jobs/arrays.h"
#include "core/jobs/ctl_impl.h"
#include "core/jobs/depend.h"
#include "core/jobs/gang.h"
#include "core/jobs/held.h"
#include "core/jobs/jobs_changes.h"
#include "core/jobs/jobs_find.h"
#include "core/jobs/jobs_state.h"
#include "core/jobs/never.h"
#include "core/jobs/quota.h"
#include "core/jobs/table.h"
#include "core/jobs/typical.h"
#include "util/fmt.h"
#include "util/mem.h"

/* Commit a RUNNING job's placements; 0, or why not (rolled back). */
static int restore(struct gf_ctl *ctl, int jid, char *why, unsigned size)
{
	struct gf_job *job = ctl->jobs.jr[jid].job;
	int R = job->spec.replicas, block = -1, done = 0;
	for (; done < R; done++) {
		struct gf_job_place *pl = &job->place[done];
		int node = gf__node_find(ctl, pl->node_name);
		if (node < 0) {
			gf_note(why, size, "node %.*s is gone",
				GF_JOB_NODE_MAX - 1, pl->node_name);
			break;
		}
		if (ctl->nodes.ns[node].state == GF__LOST) {
			/* its jobs were requeued when it was lost */
			gf_note(why, size, "node %s is not ready: %.80s",
				ctl->c->names[node],
				ctl->nodes.ns[node].reason);
			break;
		}
		int b = ctl->nodes.cfg[node].block;
		if (block >= 0 && b != block) {
			gf_note(why, size, "replicas in blocks %d and %d",
				block, b);
			break;
		}
		block = b;
		pl->node = node;
		if (gf__replica_commit(ctl, jid, pl)) {
			gf_note(why, size, "replica %d no longer fits on %s",
				done, pl->node_name);
			break;
		}
	}
	if (done == R) {
		gf__restored(ctl, jid, job->place, block);
		return 0;
	}
	gf__unplace_some(ctl, jid, job->place, done);
	gf_free(job->place);
	job->block = -1;
	job->state = GF_JOB_PENDING;
	job->started_ms = 0;
	if (job->requeues < job->attempts)
		job->requeues++; /* put back by the infrastructure */
	return GF_EINVAL;
}

/* The checks gf_ctl_add makes before it takes anything. */
int gf__add_check(struct gf_ctl *ctl, const struct gf_job *job,
		  struct gf_err *e)
{
	char msg[GF_ERR_MSG_MAX];
	if (job == NULL)
		return gf_err_set(e, GF_EINVAL, "no job");
	if (gf_job_check(job, msg, sizeof(msg)))
		return gf_err_set(e, GF_EINVAL, "%s", msg);
	if (ctl->jobs.n >= GF_CTL_MAX_JOBS)
		return gf_err_set(e, GF_ETOOBIG, "more than %d jobs",
				  GF_CTL_MAX_JOBS);
	if (gf__job_find(&ctl->jobs, job->id) >= 0)
		return gf_err_set(e, GF_ECONFLICT, "job %s is already known",
				  job->id);
	if (gf__team_get(ctl, job->spec.team) < 0)
		return gf_err_set(e, GF_ETOOBIG,
				  "more than %d teams outside the config",
				  GF__MAX_OPEN_TEAMS);
	return 0;
}

int gf__jrec_fill(struct gf_ctl *ctl, struct gf_job *job)
{
	int jid = gf__jobtab_slot(&ctl->jobs, job);
	struct gf__jrec *j = &ctl->jobs.jr[jid];
	j->team = gf__team_get(ctl, job->spec.team);
	j->cls = gf__class_find(ctl, job->spec.class_name);
	if (j->cls < 0) /* the class left the config: its jobs are batch */
		j->cls = gf__class_find(ctl, "batch");
	j->run_pos = -1;
	j->mask = -1;
	j->arr = -1;
	j->dep = -1;
	gf__derive(ctl, j);
	return jid;
}

int gf_ctl_add(struct gf_ctl *ctl, struct gf_job *job, struct gf_err *e)
{
	gf_err_clear(e);
	int rc = gf__add_check(ctl, job, e);
	if (rc)
		return rc;
	int jid = gf__jrec_fill(ctl, job);
	gf__jobtab_register(&ctl->jobs, jid);
	struct gf__jrec *j = &ctl->jobs.jr[jid];
	struct gf_err why;
	if (gf__admit_spec(ctl, &job->spec, false, &why) == GF_ENEVER) {
		j->never = true;
		gf__never_push(ctl, jid);
	}
	if (!gf_job_is_final(job->state) && j->prof < 0 && !j->never)
		gf__typical_arrived(ctl, &j->req, job->spec.replicas);
	gf__array_add(ctl, jid); /* before a restore counts it running */
	if (job->nheld > 0 && gf__held_restore(ctl, jid))
		gf__later(&ctl->jobs,
			  jid); /* some no longer held: stored again */
	if (job->state == GF_JOB_RUNNING) {
		char msg[GF_JOB_REASON_MAX];
		if (restore(ctl, jid, msg, sizeof(msg)) == 0)
			return 0;
		gf__reason(job, "restored placement no longer fits: %s", msg);
		gf__later(&ctl->jobs, jid);
	}
	if (job->state == GF_JOB_PENDING) {
		gf__dep_add(ctl, jid);
		if (j->never)
			gf__reason(job, "can never be placed here: %s",
				   why.msg);
		gf__enqueue(ctl, jid);
	}
	return 0;
}

const struct gf_job *gf_ctl_job(const struct gf_ctl *ctl, const char *id)
{
	int jid = gf__job_find(&ctl->jobs, id);
	return jid >= 0 ? ctl->jobs.jr[jid].job : NULL;
}

int gf_ctl_job_usage(struct gf_ctl *ctl, const char *id, int64_t gpu_ms)
{
	int jid = gf__job_find(&ctl->jobs, id);
	if (jid < 0)
		return GF_ENOTFOUND;
	if (gpu_ms < 0)
		return GF_EINVAL;
	struct gf_job *j = ctl->jobs.jr[jid].job;
	j->gpu_ms =
		gpu_ms > INT64_MAX - j->gpu_ms ? INT64_MAX : j->gpu_ms + gpu_ms;
	return 0;
}

int gf_ctl_njobs(const struct gf_ctl *ctl)
{
	return ctl->jobs.n;
}

const struct gf_job *gf_ctl_job_at(const struct gf_ctl *ctl, int i)
{
	return gf__jobtab_at(&ctl->jobs, i);
}

/* The job named id in a state the call allows, or an error. */
static int lookup(struct gf_ctl *ctl, const char *id, int64_t now_ms,
		  bool running_only, struct gf_err *e)
{
	gf_err_clear(e);
	int jid = gf__job_get(&ctl->jobs, id, e);
	if (jid < 0)
		return jid;
	const struct gf_job *job = ctl->jobs.jr[jid].job;
	if (gf_job_is_final(job->state) ||
	    (running_only && job->state != GF_JOB_RUNNING))
		return gf_err_set(e, GF_ECONFLICT, "job %s is %s", job->id,
				  gf_job_state_name(job->state));
	if (now_ms <= 0)
		return gf_err_set(e, GF_EINVAL,
				  "time %lld: expected ms since the epoch",
				  (long long)now_ms);
	return jid;
}

int gf_ctl_cancel(struct gf_ctl *ctl, const char *id, int64_t now_ms,
		  struct gf_err *e)
{
	int jid = lookup(ctl, id, now_ms, false, e);
	if (jid < 0)
		return jid;
	gf__to_final(ctl, jid, GF_JOB_CANCELLED, now_ms, "cancelled");
	return 0;
}

int gf_ctl_finish(struct gf_ctl *ctl, const char *id, int exit_code,
		  int64_t now_ms, struct gf_err *e)
{
	int jid = lookup(ctl, id, now_ms, true, e);
	if (jid < 0)
		return jid;
	char why[64];
	gf_note(why, sizeof(why), "exited with code %d", exit_code);
	ctl->jobs.jr[jid].job->exit_code = exit_code;
	if (exit_code != 0)
		gf__failed(ctl, jid, now_ms, why);
	else
		gf__to_final(ctl, jid, GF_JOB_SUCCEEDED, now_ms, why);
	return 0;
}

int gf_ctl_requeue(struct gf_ctl *ctl, const char *id, const char *reason,
		   int64_t now_ms, struct gf_err *e)
{
	int jid = lookup(ctl, id, now_ms, true, e);
	if (jid < 0)
		return jid;
	gf__requeue(ctl, jid,
		    reason == NULL || reason[0] == '\0' ? "node lost" : reason,
		    now_ms);
	return 0;
}
