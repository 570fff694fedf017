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
#include <stdlib.h>
#include <string.h>

#include "core/jobs/ctl_impl.h"
#include "util/mem.h"

struct ending {
	int64_t end;
	int jid;
};

static int cmp_end(const void *a, const void *b)
{
	const struct ending *x = a, *y = b;
	if (x->end != y->end)
		return x->end < y->end ? -1 : 1;
	return (x->jid > y->jid) - (x->jid < y->jid);
}

struct copy {
	int node, mig;
	struct gf_cnode n;
};

struct shadow {
	struct gf_ctl *ctl;
	int jid;
	const struct gf_req *r;
	int R;
	int64_t *block_cap; /* gangs: the head's capacity per block */
	struct copy *cp;
	int ncp, cpcap;
};

static int cap(struct shadow *s, const struct gf_cnode *n, int node, int mig)
{
	return gf__cap(s->ctl, &s->ctl->jr[s->jid], s->r, n, node, mig, s->R);
}

static struct copy *copy_of(struct shadow *s, int i)
{
	struct gf_ctl *ctl = s->ctl;
	if (ctl->trial_of[i] >= 0)
		return &s->cp[ctl->trial_of[i]];
	if (s->ncp == s->cpcap) {
		s->cpcap = s->cpcap ? s->cpcap * 2 : 64;
		s->cp = gf_reallocarray(s->cp, (size_t)s->cpcap,
					sizeof(*s->cp));
	}
	struct copy *c = &s->cp[s->ncp];
	c->node = i;
	c->n = ctl->c->nodes[i];
	int prof = ctl->jr[s->jid].prof;
	c->mig = prof >= 0 ? gf__mig_free_on(ctl, i, prof) : 0;
	ctl->trial_of[i] = s->ncp++;
	return c;
}

/* Job v ends: its placements come back; does the head fit now? */
static bool ends(struct shadow *s, int v)
{
	struct gf_ctl *ctl = s->ctl;
	const struct gf__jrec *vj = &ctl->jr[v];
	bool fits = false;
	for (int k = 0; k < vj->job->spec.replicas; k++) {
		const struct gf_job_place *p = &vj->job->place[k];
		if (ctl->not_h[p->node])
			continue;
		struct copy *c = copy_of(s, p->node);
		int before = cap(s, &c->n, c->node, c->mig);
		int gpus[GF_CNODE_MAX_GPUS];
		memcpy(gpus, p->gpus, sizeof(gpus));
		(void)!gf_cnode_give(&c->n, &vj->req, gpus);
		if (vj->prof >= 0 && vj->prof == ctl->jr[s->jid].prof &&
		    !(ctl->ns[p->node].sick >> p->gpus[0] & 1))
			c->mig++;
		int after = cap(s, &c->n, c->node, c->mig);
		if (s->R == 1) {
			fits |= after >= 1;
			continue;
		}
		int64_t *b = &s->block_cap[ctl->nodes[p->node].block];
		*b += after - before;
		fits |= *b >= s->R;
	}
	return fits;
}

static void gang_caps(struct shadow *s)
{
	struct gf_ctl *ctl = s->ctl;
	s->block_cap = gf_calloc((size_t)ctl->nblk, sizeof(int64_t));
	int prof = ctl->jr[s->jid].prof;
	for (int i = 0; i < ctl->c->n; i++)
		if (!ctl->not_h[i])
			s->block_cap[ctl->nodes[i].block] += cap(
				s, &ctl->c->nodes[i], i,
				prof >= 0 ? gf__mig_free_on(ctl, i, prof) : 0);
}

static int64_t shadow_time(struct gf_ctl *ctl, int jid, const struct gf_req *r,
			   int64_t now)
{
	struct shadow s = { .ctl = ctl,
			    .jid = jid,
			    .r = r,
			    .R = ctl->jr[jid].job->spec.replicas };
	struct ending *e = gf_calloc((size_t)ctl->nrunning + 1, sizeof(*e));
	for (int k = 0; k < ctl->nrunning; k++) {
		const struct gf__jrec *v = &ctl->jr[ctl->running[k]];
		e[k].jid = ctl->running[k];
		e[k].end = v->max_ms > 0 ? v->job->started_ms + v->max_ms
					 : GF__INF;
	}
	qsort(e, (size_t)ctl->nrunning, sizeof(*e), cmp_end);
	if (s.R > 1)
		gang_caps(&s);
	int64_t shadow = GF__INF;
	for (int k = 0; k < ctl->nrunning && e[k].end != GF__INF; k++)
		if (ends(&s, e[k].jid)) {
			shadow = e[k].end > now ? e[k].end : now;
			break;
		}
	for (int c = 0; c < s.ncp; c++)
		ctl->trial_of[s.cp[c].node] = -1;
	gf_free(s.cp);
	gf_free(s.block_cap);
	gf_free(e);
	return shadow;
}

void gf__reserve(struct gf_ctl *ctl, struct gf__pass *ps, int jid,
		 const struct gf_req *r)
{
	struct gf__jrec *j = &ctl->jr[jid];
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
