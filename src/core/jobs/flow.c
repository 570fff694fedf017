/*
 * flow.c - a pending job kept from starting by its user's flow of work
 * (jobflow.h): held (gf_ctl_hold), waiting for a dependency (depend.c),
 * or its array at its %max (arrays.c).  The pass asks gf__flow_gated
 * before anything else about a job: a gated job takes no reservation and
 * preempts no one, as a job that can never be placed.
 *
 * Invariants: user_hold is set only on PENDING jobs (a job that leaves
 * PENDING by cancel keeps it, harmless: final jobs never start).
 */
#include "core/jobs/flow.h"

#include <gpufleet/jobflow.h>

#include "core/jobs/arrays.h"
#include "core/jobs/ctl_impl.h"
#include "core/jobs/depend.h"
#include "core/jobs/jobs_changes.h"
#include "core/jobs/table.h"

bool gf__flow_gated(struct gf_ctl *ctl, int jid)
{
	struct gf_job *job = ctl->jobs.jr[jid].job;
	char why[GF_JOB_REASON_MAX];
	if (job->user_hold) {
		gf__reason(job, "held");
		return true;
	}
	if (gf__dep_waits(ctl, jid, why, sizeof(why)) ||
	    gf__array_throttled(ctl, jid, why, sizeof(why))) {
		gf__reason(job, "%s", why);
		return true;
	}
	return false;
}

int gf_ctl_hold(struct gf_ctl *ctl, const char *id, bool on, struct gf_err *e)
{
	gf_err_clear(e);
	int jid = gf__job_get(&ctl->jobs, id, e);
	if (jid < 0)
		return jid;
	struct gf_job *job = ctl->jobs.jr[jid].job;
	if (job->state != GF_JOB_PENDING)
		return gf_err_set(e, GF_ECONFLICT,
				  on && job->state == GF_JOB_RUNNING
					  ? "job %s is %s (requeue it to hold "
					    "it)"
					  : "job %s is %s",
				  job->id, gf_job_state_name(job->state));
	if (job->user_hold == on)
		return gf_err_set(e, GF_ECONFLICT,
				  on ? "job %s is already held"
				     : "job %s is not held",
				  job->id);
	job->user_hold = on;
	gf__reason(job, on ? "held" : "released");
	return 0;
}
