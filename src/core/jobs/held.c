/*
 * held.c - replicas completing (job.h's gf_job_held): a running job that
 * stops in a core that holds until gone (cfg.hold_until_gone) keeps each
 * replica's placement taken in the engine, under its old node and GPUs,
 * until its node says the replica's processes are gone
 * (gf_ctl_held_release).  A resource is free only when the process that
 * held it is gone: nothing is placed onto held GPUs, CPU or memory.
 *
 * Invariants (gf_ctl_check): every held replica's placement is taken in
 * the engine and counted in its node's nrep as a running replica is (a
 * MIG instance names the job as its user); ctl->jobs.holding lists exactly the
 * jobs with nheld > 0, once each.  Quotas and fair share no longer count
 * a held replica: the job stopped.
 */
#include "core/jobs/held.h"

#include <stdio.h>
#include <string.h>

#include "core/jobs/ctl_impl.h"
#include "core/jobs/gang.h"
#include "core/jobs/jobs_changes.h"
#include "core/jobs/jobs_find.h"
#include "core/jobs/table.h"
#include "util/fmt.h"
#include "util/mem.h"

static void holding_add(struct gf__ids *h, int jid)
{
	if (gf__ids_find(h, jid) < 0)
		gf__ids_push(h, jid);
}

static void holding_remove(struct gf__ids *h, int jid)
{
	int k = gf__ids_find(h, jid);
	if (k >= 0)
		h->v[k] = h->v[--h->n];
}

/* Completing replica k of job jid gone: given back to the engine. */
static void held_drop(struct gf_ctl *ctl, int jid, int k)
{
	struct gf_job *job = ctl->jobs.jr[jid].job;
	gf__unplace_some(ctl, jid, &job->held[k].place, 1);
	if (job->held[k].by_seq) { /* the job that preempted it waits less */
		char id[GF_JOB_ID_MAX];
		int w = -1; /* an id that does not fit is no job's */
		if (gf_fmt(id, sizeof(id), "j%llu",
			   (unsigned long long)job->held[k].by_seq) == 0)
			w = gf__job_find(&ctl->jobs, id);
		if (w >= 0 && ctl->jobs.jr[w].awaiting > 0)
			ctl->jobs.jr[w].awaiting--;
	}
	job->held[k] = job->held[--job->nheld];
	if (job->nheld == 0) {
		gf_free(job->held);
		holding_remove(&ctl->jobs.holding, jid);
	}
}

void gf__held_keep(struct gf_ctl *ctl, int jid, int64_t now, const char *why)
{
	struct gf_job *job = ctl->jobs.jr[jid].job;
	int R = job->spec.replicas;
	/* past the cap (a job stopped again and again on nodes that never
	 * answer) the oldest go back to the engine */
	while (job->nheld > 0 && job->nheld + R > GF_JOB_HELD_MAX)
		held_drop(ctl, jid, 0);
	if (R > GF_JOB_HELD_MAX) { /* a gang over the cap: not held */
		gf__unplace_job(ctl, jid, job->place);
		return;
	}
	job->held = gf_reallocarray(job->held, (size_t)(job->nheld + R),
				    sizeof(*job->held));
	for (int r = 0; r < R; r++) {
		struct gf_job_held *h = &job->held[job->nheld++];
		memset(h, 0, sizeof(*h));
		h->attempt = job->attempts;
		h->replica = r;
		h->since_ms = now;
		gf_note(h->why, sizeof(h->why), "%s", why);
		h->place = job->place[r];
	}
	holding_add(&ctl->jobs.holding, jid);
}

bool gf__held_restore(struct gf_ctl *ctl, int jid)
{
	struct gf_job *job = ctl->jobs.jr[jid].job;
	bool dropped = false;
	int n = job->nheld;
	job->nheld = 0; /* re-taken one by one */
	for (int k = 0; k < n; k++) {
		struct gf_job_held h = job->held[k];
		int node = gf__node_find(ctl, h.place.node_name);
		h.place.node = node;
		if (node < 0 || gf__replica_commit(ctl, jid, &h.place) != 0) {
			dropped = true; /* its node is gone or changed */
			continue;
		}
		job->held[job->nheld++] = h;
	}
	if (job->nheld == 0) {
		gf_free(job->held);
		return dropped;
	}
	holding_add(&ctl->jobs.holding, jid);
	return dropped;
}

void gf__held_drop_node(struct gf_ctl *ctl, int i, struct gf_ctl_changes *out,
			uint32_t mark)
{
	for (int k = ctl->jobs.holding.n - 1; k >= 0; k--) {
		if (k >= ctl->jobs.holding.n)
			continue;
		int jid = ctl->jobs.holding.v[k];
		struct gf_job *job = ctl->jobs.jr[jid].job;
		bool any = false;
		for (int h = job->nheld - 1; h >= 0; h--)
			if (job->held[h].place.node == i) {
				held_drop(ctl, jid, h);
				any = true;
			}
		if (any)
			gf__report(&ctl->jobs, out, mark, jid);
	}
}

/* The index of replica of run attempt among job's held ones, or -1. */
static int held_index(const struct gf_job *job, int attempt, int replica)
{
	for (int k = 0; k < job->nheld; k++)
		if (job->held[k].attempt == attempt &&
		    job->held[k].replica == replica)
			return k;
	return -1;
}

int gf_ctl_held_release(struct gf_ctl *ctl, const char *id, int attempt,
			int replica, struct gf_err *e)
{
	gf_err_clear(e);
	int jid = gf__job_get(&ctl->jobs, id, e);
	if (jid < 0)
		return jid;
	struct gf_job *job = ctl->jobs.jr[jid].job;
	int k = held_index(job, attempt, replica);
	if (k >= 0) {
		held_drop(ctl, jid, k);
		return 0;
	}
	return gf_err_set(e, GF_ENOTFOUND,
			  "job %s: replica %d of run %d is not completing",
			  job->id, replica, attempt);
}

int gf_ctl_nholding(const struct gf_ctl *ctl)
{
	return ctl->jobs.holding.n;
}

const struct gf_job *gf_ctl_holding_at(const struct gf_ctl *ctl, int i)
{
	return i >= 0 && i < ctl->jobs.holding.n
		       ? ctl->jobs.jr[ctl->jobs.holding.v[i]].job
		       : NULL;
}

int gf_ctl_held_note(struct gf_ctl *ctl, const char *id, int attempt,
		     int replica, const char *why)
{
	int jid = gf__job_find(&ctl->jobs, id);
	if (jid < 0)
		return GF_ENOTFOUND;
	struct gf_job *job = ctl->jobs.jr[jid].job;
	int k = held_index(job, attempt, replica);
	if (k < 0)
		return GF_ENOTFOUND;
	gf_note(job->held[k].why, sizeof(job->held[k].why), "%s", why);
	return 0;
}
