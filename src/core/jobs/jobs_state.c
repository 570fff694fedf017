/*
 * jobs_state.c - a job moving between states (job.h's table) and everything
 * that moves with it: its placements in the engine, its team's quota
 * figures and fair-share usage, the running list, the pending counters
 * and queues, the lists of changed jobs.
 *
 * Invariants: a RUNNING job sits at running[run_pos] and holds
 * spec.replicas placements committed to the engine and charged to its
 * team; a PENDING job is counted in npending and in its team's pend_n
 * and pend_milli for its class, and is in its queue; final jobs are in
 * neither.  Every transition goes through the functions here.
 */
#include "core/jobs/jobs_state.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "core/jobs/arrays.h"
#include "core/jobs/ctl_impl.h"
#include "core/jobs/gang.h"
#include "core/jobs/held.h"
#include "core/jobs/order.h"
#include "core/jobs/quota.h"
#include "core/jobs/table.h"
#include "util/fmt.h"
#include "util/mem.h"

void gf__pend_count(struct gf_ctl *ctl, struct gf__jrec *j, int sign)
{
	struct gf__team *t = gf__team_of(ctl, j);
	t->pend_n[j->cls] += sign;
	t->pend_milli[j->cls] += sign * j->milli;
	ctl->jobs.npending += sign;
}

static void running_add(struct gf_ctl *ctl, int jid)
{
	ctl->jobs.jr[jid].run_pos = ctl->jobs.running.n;
	gf__ids_push(&ctl->jobs.running, jid);
}

static void running_remove(struct gf_ctl *ctl, int jid)
{
	int pos = ctl->jobs.jr[jid].run_pos;
	int last = ctl->jobs.running.v[--ctl->jobs.running.n];
	ctl->jobs.running.v[pos] = last;
	ctl->jobs.jr[last].run_pos = pos;
	ctl->jobs.jr[jid].run_pos = -1;
}

/* A job now running on pl (charged, listed); the caller set its state. */
static void hold(struct gf_ctl *ctl, int jid, struct gf_job_place *pl,
		 int block)
{
	struct gf_job *job = ctl->jobs.jr[jid].job;
	job->place = pl;
	job->block = block;
	job->reason[0] = '\0';
	gf__quota_charge(ctl, &ctl->jobs.jr[jid], pl, +1);
	running_add(ctl, jid);
	gf__array_run(ctl, jid, +1);
}

void gf__start(struct gf_ctl *ctl, int jid, struct gf_job_place *pl, int block,
	       int64_t now)
{
	struct gf__jrec *j = &ctl->jobs.jr[jid];
	gf__pend_count(ctl, j, -1);
	j->job->state = GF_JOB_RUNNING;
	j->job->started_ms = now;
	j->job->attempts++;
	j->start_epoch = ctl->nodes.epoch;
	j->awaiting = 0;
	hold(ctl, jid, pl, block);
}

void gf__restored(struct gf_ctl *ctl, int jid, struct gf_job_place *pl,
		  int block)
{
	hold(ctl, jid, pl, block);
}

/* A running job stops: its placements given back to the engine, or kept
 * as completing replicas (cfg.hold_until_gone) tagged why. */
static void stop(struct gf_ctl *ctl, int jid, int64_t now, const char *why)
{
	struct gf__jrec *j = &ctl->jobs.jr[jid];
	struct gf_job *job = j->job;
	if (ctl->cfg.hold_until_gone)
		gf__held_keep(ctl, jid, now, why);
	else
		gf__unplace_job(ctl, jid, job->place);
	gf__quota_charge(ctl, j, job->place, -1);
	gf_free(job->place);
	job->block = -1;
	running_remove(ctl, jid);
	gf__array_run(ctl, jid, -1);
}

void gf__enqueue(struct gf_ctl *ctl, int jid)
{
	gf__pend_count(ctl, &ctl->jobs.jr[jid], +1);
	gf__queue_push(ctl, jid);
	gf__order_push(ctl, jid);
}

void gf__to_pending(struct gf_ctl *ctl, int jid, int64_t now, const char *why,
		    const char *reason)
{
	struct gf__jrec *j = &ctl->jobs.jr[jid];
	if (j->job->state == GF_JOB_RUNNING)
		stop(ctl, jid, now, why);
	j->job->state = GF_JOB_PENDING;
	j->job->started_ms = 0; /* it waits: no start to show */
	gf_note(j->job->reason, sizeof(j->job->reason), "%s", reason);
	gf__enqueue(ctl, jid);
}

void gf__to_final(struct gf_ctl *ctl, int jid, enum gf_job_state st,
		  int64_t now, const char *reason)
{
	struct gf__jrec *j = &ctl->jobs.jr[jid];
	if (j->job->state == GF_JOB_RUNNING)
		stop(ctl, jid, now, gf_job_state_name(st));
	else if (j->job->state == GF_JOB_PENDING)
		gf__pend_count(ctl, j, -1);
	j->job->state = st;
	j->job->ended_ms = now;
	gf_note(j->job->reason, sizeof(j->job->reason), "%s", reason);
}

void gf__requeue(struct gf_ctl *ctl, int jid, const char *reason, int64_t now)
{
	struct gf_job *job = ctl->jobs.jr[jid].job;
	char why[GF_JOB_REASON_MAX];
	/* not the job's fault: it never counts against its attempts */
	job->requeues++;
	gf_note(why, sizeof(why), "%s", reason);
	gf__to_pending(ctl, jid, now, "requeued", why);
}

void gf__failed(struct gf_ctl *ctl, int jid, int64_t now, const char *reason)
{
	struct gf_job *job = ctl->jobs.jr[jid].job;
	const struct gf_ctl_class *cl =
		&ctl->cfg.classes[ctl->jobs.jr[jid].cls];
	int most = cl->max_attempts > 0 ? cl->max_attempts : 1;
	char why[GF_JOB_REASON_MAX];
	job->failures++;
	if (job->failures < most) {
		gf_note(why, sizeof(why), "%.100s (failure %d of %d allowed)",
			reason, job->failures, most);
		gf__to_pending(ctl, jid, now, "failed", why);
		return;
	}
	if (most > 1)
		gf_note(why, sizeof(why), "%.100s (after %d failures)", reason,
			job->failures);
	else
		gf_note(why, sizeof(why), "%s", reason);
	gf__to_final(ctl, jid, GF_JOB_FAILED, now, why);
}
