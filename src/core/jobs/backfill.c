/*
 * backfill.c - the reservation of the head job (EASY backfill): the
 * first job of a pass that can neither start nor preempt.
 *
 * Its shadow time is when it could start if nothing else started: the
 * running jobs end, at the latest, at start + max runtime (the pass fails
 * a job past it); releasing them in that order on copies of the nodes,
 * the shadow is the end of the one after which the head fits (a node for
 * one replica, one block for a gang).  If that needs a job without max
 * runtime, or the head fits no earlier than never, the shadow is unknown
 * (GF__INF).  A later job may then start now only if now + its max
 * runtime <= shadow: it is gone (finished or failed by the pass) before
 * the head's start time, so it never delays it; a job without max
 * runtime never backfills so.  A later job may also start on nodes the
 * head cannot use at all (its selector, model or MIG profile excludes
 * them): not_h marks those, and such a start takes nothing the head
 * could have.
 *
 * Invariants: trial_of is all -1 between calls; not_h is valid while the
 * pass says avoid.
 */
#include "core/jobs/backfill.h"

#include <stdlib.h>
#include <string.h>

#include "core/jobs/ctl_impl.h"
#include "core/jobs/gang.h"
#include "core/jobs/jobs_mig.h"
#include "util/mem.h"

struct shadow {
	struct gf_ctl *ctl;
	int jid;
	const struct gf_req *r;
	int R;
	int64_t *block_cap;   /* gangs: the head's capacity per block */
	struct gf__trials tr; /* copies of the nodes */
};

static int cap(struct shadow *s, const struct gf_cnode *n, int node, int mig)
{
	return gf__cap(s->ctl, &s->ctl->jobs.jr[s->jid], s->r, n, node, mig,
		       s->R);
}

/* Job v ends: its placements come back; does the head fit now? */
static bool ends(struct shadow *s, int v)
{
	struct gf_ctl *ctl = s->ctl;
	const struct gf__jrec *vj = &ctl->jobs.jr[v];
	bool fits = false;
	for (int k = 0; k < vj->job->spec.replicas; k++) {
		const struct gf_job_place *p = &vj->job->place[k];
		if (ctl->not_h[p->node])
			continue;
		bool fresh;
		struct gf__trial *c =
			gf__trial_get(ctl, &s->tr, p->node, &fresh);
		int before = cap(s, &c->n, c->node, c->mig);
		gf__trial_give(ctl, &s->tr, c, v, p);
		int after = cap(s, &c->n, c->node, c->mig);
		if (s->R == 1) {
			fits |= after >= 1;
			continue;
		}
		int64_t *b = &s->block_cap[ctl->nodes.cfg[p->node].block];
		*b += after - before;
		fits |= *b >= s->R;
	}
	return fits;
}

static void gang_caps(struct shadow *s)
{
	struct gf_ctl *ctl = s->ctl;
	s->block_cap = gf_calloc((size_t)ctl->nodes.nblk, sizeof(int64_t));
	int prof = ctl->jobs.jr[s->jid].prof;
	for (int i = 0; i < ctl->c->n; i++)
		if (!ctl->not_h[i])
			s->block_cap[ctl->nodes.cfg[i].block] += cap(
				s, &ctl->c->nodes[i], i,
				prof >= 0 ? gf__mig_free_on(ctl, i, prof) : 0);
}

static int64_t shadow_time(struct gf_ctl *ctl, int jid, const struct gf_req *r,
			   int64_t now)
{
	struct shadow s = { .ctl = ctl,
			    .jid = jid,
			    .r = r,
			    .R = ctl->jobs.jr[jid].job->spec.replicas,
			    .tr = { .prof = ctl->jobs.jr[jid].prof } };
	struct gf__keyed *e =
		gf_calloc((size_t)ctl->jobs.running.n + 1, sizeof(*e));
	for (int k = 0; k < ctl->jobs.running.n; k++) {
		const struct gf__jrec *v =
			&ctl->jobs.jr[ctl->jobs.running.v[k]];
		e[k].id = ctl->jobs.running.v[k]; /* key: when it ends */
		e[k].key = v->max_ms > 0 ? v->job->started_ms + v->max_ms
					 : GF__INF;
	}
	qsort(e, (size_t)ctl->jobs.running.n, sizeof(*e), gf__keyed_cmp);
	if (s.R > 1)
		gang_caps(&s);
	int64_t shadow = GF__INF;
	for (int k = 0; k < ctl->jobs.running.n && e[k].key != GF__INF; k++)
		if (ends(&s, e[k].id)) {
			shadow = e[k].key > now ? e[k].key : now;
			break;
		}
	gf__trials_reset(ctl, &s.tr);
	gf_free(s.tr.t);
	gf_free(s.block_cap);
	gf_free(e);
	return shadow;
}

void gf__reserve(struct gf_ctl *ctl, struct gf__pass *ps, int jid,
		 const struct gf_req *r)
{
	struct gf__jrec *j = &ctl->jobs.jr[jid];
	bool all = true;
	for (int i = 0; i < ctl->c->n; i++) {
		bool u = gf__usable(ctl, j, r, i);
		ctl->not_h[i] = !u;
		all &= u;
	}
	ps->head = jid;
	ps->avoid = !all;
	ps->shadow = shadow_time(ctl, jid, r, ps->now);
}
