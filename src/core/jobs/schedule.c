/*
 * schedule.c - one scheduling pass (gf_ctl_schedule):
 *   1. report the jobs changed since the last pass (restores that no
 *      longer fit), refresh the typical mix now and then (typical.c);
 *   2. fail running jobs past their max runtime;
 *   3. walk the pending jobs in order (order.c); for each: a job that can
 *      never be placed here, or would pass its team's quota, waits with
 *      that reason and blocks no one; before a reservation exists a job
 *      starts if it fits, else preempts (preempt.c), else becomes the
 *      head and holds the reservation (backfill.c); after it, a job
 *      starts only by backfill: finishing before the head's shadow time,
 *      or on nodes the head cannot use;
 *   4. check everything in debug builds.
 *
 * Invariants: at most one reservation per pass; no job starts after the
 * head unless it cannot delay it; every job whose state or placements
 * changed is reported once per pass.
 */
#include <stdio.h>
#include <string.h>

#include "core/jobs/backfill.h"
#include "core/jobs/ctl_impl.h"
#include "core/jobs/depend.h"
#include "core/jobs/explain.h"
#include "core/jobs/flow.h"
#include "core/jobs/gang.h"
#include "core/jobs/jobs_changes.h"
#include "core/jobs/jobs_state.h"
#include "core/jobs/order.h"
#include "core/jobs/preempt.h"
#include "core/jobs/quota.h"
#include "core/jobs/typical.h"
#include "util/check.h"
#include "util/fmt.h"
#include "util/hash.h"
#include "util/mem.h"

static void expire(struct gf_ctl *ctl, struct gf__pass *ps)
{
	for (int k = ctl->jobs.running.n - 1; k >= 0; k--) {
		if (k >= ctl->jobs.running.n)
			continue;
		int jid = ctl->jobs.running.v[k];
		struct gf__jrec *j = &ctl->jobs.jr[jid];
		if (j->max_ms <= 0 || j->job->started_ms + j->max_ms > ps->now)
			continue;
		char why[GF_JOB_REASON_MAX];
		gf_note(why, sizeof(why), "max runtime of %lld s passed",
			(long long)(j->max_ms / 1000));
		gf__failed(ctl, jid, ps->now, why);
		gf__changed(&ctl->jobs, ps, jid);
	}
}

static bool try_start(struct gf_ctl *ctl, struct gf__pass *ps, int jid,
		      const struct gf_req *r, const uint8_t *outside)
{
	struct gf_job_place *pl;
	int block;
	if (gf__place_job(ctl, jid, r, outside, -1, -1, &pl, &block))
		return false;
	gf__start(ctl, jid, pl, block, ps->now);
	gf__changed(&ctl->jobs, ps, jid);
	return true;
}

static void no_room(struct gf_job *job)
{
	if (job->spec.replicas > 1)
		gf__reason(job, "gang of %d does not fit one block now",
			   job->spec.replicas);
	else
		gf__reason(job, "no node has room now");
}

static void reserved(struct gf_ctl *ctl, struct gf__pass *ps,
		     struct gf__jrec *j)
{
	const struct gf__jrec *h = &ctl->jobs.jr[ps->head];
	const char *head = h->job->id;
	if (gf__prio(ctl, h) > gf__prio(ctl, j))
		gf__reason(j->job,
			   "behind higher priority work (%s waits for "
			   "room)",
			   head);
	else if (j->max_ms <= 0)
		gf__reason(j->job,
			   "reserved for %s (no max runtime: cannot backfill)",
			   head);
	else if (ps->shadow == GF__INF)
		gf__reason(j->job,
			   "reserved for %s (its start is unknown: running "
			   "work has no max runtime)",
			   head);
	else
		gf__reason(j->job,
			   "reserved for %s (backfill cannot finish before it "
			   "starts)",
			   head);
}

/*
 * After the reservation nothing is preempted or released until the pass
 * ends, so free room only shrinks: a request shape that found no room
 * finds none later in the pass.  Remembering the shapes that failed
 * (FAILS at most) spares a long queue of alike jobs a scan each.
 */
#define FAILS 2048
/* Jobs a pass explains in detail past the head (gf__explain is O(nodes));
 * the rest of a long queue says "no node has room now" */
#define EXPLAIN_MAX 32

struct fail {
	int64_t mem;
	uint64_t sel; /* the selector's hash */
	int32_t cpu;
	uint32_t spec;
	int ngpus, milli, prof, replicas, outside;
	bool fits; /* outside 2: room_now's answer */
};

static struct fail fail_key(const struct gf__jrec *j, const struct gf_req *r,
			    bool outside)
{
	return (struct fail){
		.mem = r->mem,
		.cpu = r->cpu,
		.spec = r->spec,
		.ngpus = r->ngpus,
		.milli = r->gpu_milli,
		.prof = j->prof,
		.replicas = j->job->spec.replicas,
		.outside = outside,
		.sel = gf_hash_str(j->job->spec.node_selector),
	};
}

static uint64_t fail_hash(const struct fail *f)
{
	int64_t v[] = { f->mem,	  f->cpu,  f->spec,	f->ngpus,
			f->milli, f->prof, f->replicas, f->outside };
	return gf_hash_mix(f->sel, gf_hash_bytes(v, sizeof(v)));
}

/* The key the index's eq reads: a failure sought, and the pass. */
struct fail_sought {
	const struct gf__pass *ps;
	const struct fail *f;
};

static bool fail_is(const void *key, uint32_t row)
{
	const struct fail_sought *k = key;
	const struct fail *x = &k->ps->fails[row], *f = k->f;
	return x->mem == f->mem && x->sel == f->sel && x->cpu == f->cpu &&
	       x->spec == f->spec && x->ngpus == f->ngpus &&
	       x->milli == f->milli && x->prof == f->prof &&
	       x->replicas == f->replicas && x->outside == f->outside;
}

/* The failure remembered for f's shape, or NULL. */
static const struct fail *fail_find(const struct gf__pass *ps,
				    const struct fail *f)
{
	struct fail_sought k = { ps, f };
	int64_t x = gf_hmap_get(&ps->fail_idx, fail_hash(f), fail_is, &k);
	return x >= 0 ? &ps->fails[x] : NULL;
}

/* f remembered, while there is room. */
static void fail_keep(struct gf__pass *ps, const struct fail *f)
{
	if (ps->nfails == FAILS)
		return;
	ps->fails[ps->nfails] = *f;
	int rc = gf_hmap_put(&ps->fail_idx, fail_hash(f), (uint32_t)ps->nfails);
	(void)rc; /* no fail: FAILS rows < GF_HMAP_MAX */
	ps->nfails++;
}

/* Try to start unless the shape failed before; remember a failure. */
static bool try_shape(struct gf_ctl *ctl, struct gf__pass *ps, int jid,
		      const struct gf_req *r, bool outside)
{
	struct fail f = fail_key(&ctl->jobs.jr[jid], r, outside);
	if (fail_find(ps, &f))
		return false;
	if (try_start(ctl, ps, jid, r, outside ? ctl->not_h : NULL))
		return true;
	fail_keep(ps, &f);
	return false;
}

/* Could the job start now but for the head's reservation?  Asked once
 * per request shape a pass (the answer cached beside the failures). */
static bool room_now(struct gf_ctl *ctl, struct gf__pass *ps, int jid,
		     const struct gf_req *r)
{
	struct fail f = fail_key(&ctl->jobs.jr[jid], r, false);
	f.outside = 2; /* this question's own key */
	const struct fail *x = fail_find(ps, &f);
	if (x)
		return x->fits;
	f.fits = gf__room_somewhere(ctl, &ctl->jobs.jr[jid], r);
	fail_keep(ps, &f);
	return f.fits;
}

/* After the reservation: start only what cannot delay the head. */
static void backfill(struct gf_ctl *ctl, struct gf__pass *ps, int jid,
		     const struct gf_req *r)
{
	struct gf__jrec *j = &ctl->jobs.jr[jid];
	bool before_shadow = j->max_ms > 0 && ps->shadow != GF__INF &&
			     ps->now + j->max_ms <= ps->shadow;
	if (before_shadow) {
		if (!try_shape(ctl, ps, jid, r, false))
			no_room(j->job);
		return;
	}
	if (ps->avoid && try_shape(ctl, ps, jid, r, true))
		return;
	if (room_now(ctl, ps, jid, r))
		reserved(ctl, ps, j);
	else if (ps->explained++ < EXPLAIN_MAX)
		gf__explain(ctl, j, r);
	else
		no_room(j->job);
}

static void visit(struct gf_ctl *ctl, struct gf__pass *ps, int jid)
{
	struct gf__jrec *j = &ctl->jobs.jr[jid];
	char why[GF_JOB_REASON_MAX];
	uint32_t spec;
	if (j->never || j->preempted == ps->pass)
		return; /* its reason was set when it was added, or by the
			   preemption */
	if (gf__flow_gated(ctl, jid))
		return; /* held, a dependency, its array's %max */
	if (gf__quota_room(ctl, j, &spec, why, sizeof(why))) {
		gf__reason(j->job, "%s", why);
		return;
	}
	struct gf_req r = j->req;
	r.spec = spec;
	if (ps->head >= 0) {
		backfill(ctl, ps, jid, &r);
		return;
	}
	if (try_start(ctl, ps, jid, &r, NULL))
		return;
	if (j->awaiting > 0) { /* its victims' processes are not gone yet */
		gf__reserve(ctl, ps, jid, &r);
		gf__reason(j->job,
			   "waits for the processes of the jobs it preempted "
			   "to be gone");
		return;
	}
	if (gf__preempt(ctl, ps, jid, &r) == 0)
		return;
	gf__reserve(ctl, ps, jid, &r);
	gf__explain(ctl, j, &r);
}

int gf_ctl_schedule(struct gf_ctl *ctl, int64_t now_ms,
		    struct gf_ctl_changes *out)
{
	if (now_ms <= 0)
		return GF_EINVAL;
	struct gf__pass ps = {
		.now = now_ms,
		.head = -1,
		.shadow = GF__INF,
		.pass = gf__mark(&ctl->jobs),
		.out = out,
	};
	for (int k = 0; k < ctl->jobs.later.n; k++)
		gf__changed(&ctl->jobs, &ps, ctl->jobs.later.v[k]);
	ctl->jobs.later.n = 0;
	gf__typical_refresh(ctl, false);
	expire(ctl, &ps);
	gf__deps_resolve(ctl, &ps);
	ps.fails = gf_calloc(FAILS, sizeof(*ps.fails));
	gf__order_walk(ctl, &ps, visit);
	gf_free(ps.fails);
	gf_hmap_release(&ps.fail_idx);
#if GF_DEBUG
	char msg[256];
	if (gf_ctl_check(ctl, msg, sizeof(msg)))
		gf_check_failed("scheduling core", msg);
#endif
	return 0;
}
