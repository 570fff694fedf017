/*
 * jobs_state.h - internal to src/core/jobs (jobs_state.c): a job moving
 * between states: placements, quota charges, the running list, pending
 * counters.
 */
#ifndef GF_CORE_JOBS_JOBS_STATE_H
#define GF_CORE_JOBS_JOBS_STATE_H

#include "core/jobs/ctl_impl.h"

void gf__start(struct gf_ctl *ctl, int jid, struct gf_job_place *pl, int block,
	       int64_t now);
void gf__restored(struct gf_ctl *ctl, int jid, struct gf_job_place *pl,
		  int block);
void gf__enqueue(struct gf_ctl *ctl, int jid);
/* RUNNING (stopped as gf__stop, why) or new -> PENDING with reason. */
void gf__to_pending(struct gf_ctl *ctl, int jid, int64_t now, const char *why,
		    const char *reason);
void gf__to_final(struct gf_ctl *ctl, int jid, enum gf_job_state st,
		  int64_t now, const char *reason);
/* Put back by the infrastructure (its node lost, fenced, reshaped, a
 * start that failed): PENDING with reason, counted in requeues, never
 * against its attempts. */
void gf__requeue(struct gf_ctl *ctl, int jid, const char *reason, int64_t now);
/* Its own failure (a non-zero exit, its max runtime): counted; PENDING
 * again while its failures are below its class's max_attempts (default
 * 1: a failure is final), else FAILED with reason. */
void gf__failed(struct gf_ctl *ctl, int jid, int64_t now, const char *reason);
void gf__pend_count(struct gf_ctl *ctl, struct gf__jrec *j, int sign);

#endif
