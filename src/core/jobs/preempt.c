/*
 * preempt.c - room for a job that cannot start, taken from preemptible
 * jobs of lower-priority classes, with the fewest victims.
 *
 * A one-replica job needs one node: for every node it may use, the
 * smallest set of victims holding placements there whose release lets
 * it fit; a gang needs one block: the smallest set with placements in
 * the block whose release lets the block's capacity reach the replicas
 * (gang.c explains why capacity is exact).  Sets are enumerated by size,
 * 1, 2, ..., so the first size that works is the minimum: exact while
 * the search stays within its budget (VMAX candidates per node or block,
 * BUDGET trials per preemption), the best found otherwise.  Each size is
 * tried on every node or block before the next size, so a single victim
 * anywhere beats two on the first node looked at.  Among the first
 * SETS_MAX sets of the fewest victims found (nodes and blocks in index
 * order): the lowest-priority victims, then the least GPU taken from
 * running work, then the most recently started (least work lost), then
 * the first found.  The cost of a search is one pass over the running
 * jobs' placements, one trial per node (or block) they touch, and the
 * sets tried.
 *
 * Victims go back to PENDING ("preempted by j12"), never lost, and sit
 * that pass out (so the reason stays until the next pass, and a victim
 * never bounces straight back); the job then starts in the same pass on
 * the node or block the room was made in.  A trial releases victims on copies
 * of the nodes (trial_of maps a node to its copy), never on the engine;
 * trial_of is all -1 between calls.
 *
 * gf__victims asks the same question of one node for another scheduler
 * (the Kubernetes extender's preempt): its candidates are given, not
 * looked for, and whether the job fits on the node's copy is the
 * caller's test (which may read more than the capacity: which GPUs are
 * free, and how they are linked).
 */
#include "core/jobs/preempt.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/jobs/backfill.h"
#include "core/jobs/ctl_impl.h"
#include "core/jobs/gang.h"
#include "core/jobs/jobs_changes.h"
#include "core/jobs/jobs_mig.h"
#include "core/jobs/jobs_state.h"
#include "util/buf.h"
#include "util/check.h"
#include "util/fmt.h"
#include "util/mem.h"

#define VMAX	 20
#define KMAX	 VMAX
#define BUDGET	 100000
#define SETS_MAX 16

struct pair {
	int scope; /* node, or block for a gang */
	int victim;
};

struct best {
	int k, found; /* victims; sets of that size seen */
	int prio;
	int64_t lost, young;
	int scope;
	int vic[KMAX];
};

struct search {
	struct gf_ctl *ctl;
	struct gf__jrec *j; /* the job that needs room */
	const struct gf_req *r;
	int R;
	int scope;
	int64_t base; /* capacity of the scope now */
	int vs[VMAX];
	int nv;
	struct gf__trials tr; /* copies of the nodes (base: the job's
				 capacity there now) */
	long tests;
	struct best best;
	/* one node's room decided by the caller (gf__victims), or NULL:
	 * the job's capacity there */
	gf_ctl_fit_fn fits;
	void *fits_arg;
};

/* Is node i part of the search's scope (and usable by the job)? */
static bool in_scope(struct search *s, int i)
{
	if (s->R == 1)
		return i == s->scope;
	return s->ctl->nodes.cfg[i].block == s->scope &&
	       gf__usable(s->ctl, s->j, s->r, i);
}

static int cap_of(struct search *s, const struct gf_cnode *n, int i, int mig)
{
	return gf__cap(s->ctl, s->j, s->r, n, i, mig, s->R);
}

static struct gf__trial *trial_get(struct search *s, int i)
{
	bool fresh;
	struct gf__trial *t = gf__trial_get(s->ctl, &s->tr, i, &fresh);
	if (fresh)
		t->base = cap_of(s, &t->n, i, t->mig);
	return t;
}

/* Give victim v's placements in the scope back on the copies. */
static void release(struct search *s, int v)
{
	const struct gf_job *job = s->ctl->jobs.jr[v].job;
	for (int k = 0; k < job->spec.replicas; k++) {
		const struct gf_job_place *p = &job->place[k];
		if (!in_scope(s, p->node))
			continue;
		struct gf__trial *t = trial_get(s, p->node);
		gf__trial_give(s->ctl, &s->tr, t, v, p);
	}
}

/* Would releasing vic[0..k) make room?  Leaves no trial behind. */
static bool feasible(struct search *s, const int *vic, int k)
{
	s->tests++;
	for (int i = 0; i < k; i++)
		release(s, vic[i]);
	bool ok;
	if (s->fits) { /* one node: the caller's test on its copy */
		const struct gf__trial *t = trial_get(s, s->scope);
		ok = s->fits(s->fits_arg, &t->n, t->mig);
	} else {
		int64_t sum = s->base;
		for (int x = 0; x < s->tr.n; x++) {
			const struct gf__trial *t = &s->tr.t[x];
			sum += cap_of(s, &t->n, t->node, t->mig) - t->base;
		}
		ok = sum >= s->R;
	}
	gf__trials_reset(s->ctl, &s->tr);
	return ok;
}

static void consider(struct search *s, const int *vic, int k)
{
	struct best b = { .k = k, .scope = s->scope };
	for (int i = 0; i < k; i++) {
		const struct gf__jrec *v = &s->ctl->jobs.jr[vic[i]];
		int p = gf__prio(s->ctl, v);
		if (i == 0 || p > b.prio)
			b.prio = p;
		b.lost += v->milli;
		b.young += v->job->started_ms;
		b.vic[i] = vic[i];
	}
	struct best *o = &s->best;
	b.found = o->k == k ? o->found + 1 : 1;
	bool better =
		o->k == 0 || b.k < o->k ||
		(b.k == o->k && (b.prio < o->prio ||
				 (b.prio == o->prio &&
				  (b.lost < o->lost || (b.lost == o->lost &&
							b.young > o->young)))));
	if (better)
		s->best = b;
	else
		o->found = b.found;
}

/* Every k-subset of vs, in index order; true when one works. */
static bool subsets(struct search *s, int k)
{
	int idx[KMAX], vic[KMAX];
	bool found = false;
	for (int i = 0; i < k; i++)
		idx[i] = i;
	for (;;) {
		if (s->tests >= BUDGET || s->best.found >= SETS_MAX)
			return found;
		for (int i = 0; i < k; i++)
			vic[i] = s->vs[idx[i]];
		if (feasible(s, vic, k)) {
			consider(s, vic, k);
			found = true;
		}
		int i = k - 1;
		while (i >= 0 && idx[i] == s->nv - k + i)
			i--;
		if (i < 0)
			return found;
		idx[i]++;
		for (int m = i + 1; m < k; m++)
			idx[m] = idx[m - 1] + 1;
	}
}

/* The scope's capacity now (nodes with room already count). */
static int64_t scope_base(struct search *s)
{
	struct gf_ctl *ctl = s->ctl;
	int prof = s->j->prof;
	if (s->R == 1) {
		int i = s->scope;
		return cap_of(s, &ctl->c->nodes[i], i,
			      prof >= 0 ? gf__mig_free_on(ctl, i, prof) : 0);
	}
	int64_t sum = 0;
	const struct gf__block *b = &ctl->nodes.blk[s->scope];
	for (int k = 0; k < b->n; k++) {
		int i = b->nodes[k];
		if (in_scope(s, i))
			sum += cap_of(s, &ctl->c->nodes[i], i,
				      prof >= 0 ? gf__mig_free_on(ctl, i, prof)
						: 0);
	}
	return sum;
}

/* The pairs ordered by scope (counting sort: stable, so one victim's
 * pairs in a scope stay together, as they were pushed). */
static struct pair *by_scope(struct search *s, const struct pair *p, int n)
{
	int ns = s->R == 1 ? s->ctl->c->n : s->ctl->nodes.nblk;
	int *first = gf_calloc((size_t)ns + 1, sizeof(int));
	struct pair *q = gf_calloc((size_t)(n > 0 ? n : 1), sizeof(*q));
	for (int k = 0; k < n; k++)
		first[p[k].scope + 1]++;
	for (int k = 0; k < ns; k++)
		first[k + 1] += first[k];
	for (int k = 0; k < n; k++)
		q[first[p[k].scope]++] = p[k];
	gf_free(first);
	return q;
}

/* Candidates: running preemptible jobs of lower classes, by the node
 * (or block) of each placement the job could use. */
static int candidates(struct search *s, struct pair **out)
{
	struct gf_ctl *ctl = s->ctl;
	int prio = gf__prio(ctl, s->j), n = 0, cap = 0;
	struct pair *p = NULL;
	for (int k = 0; k < ctl->jobs.running.n; k++) {
		int v = ctl->jobs.running.v[k];
		const struct gf__jrec *vj = &ctl->jobs.jr[v];
		if (!ctl->cfg.classes[vj->cls].preemptible ||
		    gf__prio(ctl, vj) >= prio)
			continue;
		for (int r = 0; r < vj->job->spec.replicas; r++) {
			int i = vj->job->place[r].node;
			if (!gf__usable(ctl, s->j, s->r, i))
				continue;
			if (n == cap) {
				cap = cap ? cap * 2 : 64;
				p = gf_reallocarray(p, (size_t)cap, sizeof(*p));
			}
			p[n].scope = s->R == 1 ? i : ctl->nodes.cfg[i].block;
			p[n++].victim = v;
		}
	}
	*out = by_scope(s, p, n);
	gf_free(p);
	return n;
}

/* A node or block with its candidates. */
struct scope {
	int id;
	int64_t base;
	int vs[VMAX];
	int nv;
};

static void use_scope(struct search *s, const struct scope *sc)
{
	s->scope = sc->id;
	s->base = sc->base;
	s->nv = sc->nv;
	memcpy(s->vs, sc->vs, sizeof(s->vs));
}

/* Group the candidates by scope; keep the scopes without room now. */
static int scopes(struct search *s, struct scope **out)
{
	struct pair *p;
	int n = candidates(s, &p), ns = 0;
	struct scope *sc = gf_calloc((size_t)(n > 0 ? n : 1), sizeof(*sc));
	for (int a = 0; a < n;) {
		struct scope *x = &sc[ns];
		x->id = p[a].scope;
		x->nv = 0;
		int b = a;
		for (; b < n && p[b].scope == x->id; b++)
			if ((x->nv == 0 || x->vs[x->nv - 1] != p[b].victim) &&
			    x->nv < VMAX)
				x->vs[x->nv++] = p[b].victim;
		a = b;
		s->scope = x->id;
		x->base = scope_base(s);
		use_scope(s, x);
		if (x->base < s->R)
			ns++;
	}
	gf_free(p);
	*out = sc;
	return ns;
}

/* Keep the scopes where releasing every candidate would make room. */
static int reachable(struct search *s, struct scope *sc, int ns)
{
	int k = 0;
	for (int i = 0; i < ns; i++) {
		use_scope(s, &sc[i]);
		if (feasible(s, sc[i].vs, sc[i].nv))
			sc[k++] = sc[i];
	}
	return k;
}

/* Sizes 1, 2, ... over every scope: the first size with a set is the
 * fewest victims.  Size 1 is tried everywhere first (one trial per
 * candidate); past it, scopes that cannot make room at all are
 * dropped. */
static void search_all(struct search *s)
{
	struct scope *sc;
	int ns = scopes(s, &sc);
	for (int k = 1; k <= KMAX && s->best.k == 0 && s->tests < BUDGET; k++) {
		if (k == 2)
			ns = reachable(s, sc, ns);
		for (int i = 0;
		     i < ns && s->tests < BUDGET && s->best.found < SETS_MAX;
		     i++) {
			if (sc[i].nv < k)
				continue;
			use_scope(s, &sc[i]);
			subsets(s, k);
		}
	}
	gf_free(sc);
}

/* Hold mode: the victims' replicas just held are tagged with the job
 * they stopped for, which waits (j->awaiting) until they are gone. */
static void await_victims(struct gf_ctl *ctl, int jid, const struct best *b)
{
	struct gf__jrec *j = &ctl->jobs.jr[jid];
	struct gf_buf names; /* the ids, while under 80 bytes */
	gf_buf_init(&names, GF_JOB_REASON_MAX);
	for (int i = 0; i < b->k; i++) {
		struct gf_job *v = ctl->jobs.jr[b->vic[i]].job;
		bool tagged = false;
		for (int h = 0; h < v->nheld; h++)
			if (v->held[h].attempt == v->attempts &&
			    v->held[h].by_seq == 0) {
				v->held[h].by_seq = j->job->seq;
				j->awaiting++;
				tagged = true;
			}
		if (tagged && names.len + strlen(v->id) + 2 < 80) {
			gf_buf_puts(&names, names.len ? ", " : "");
			gf_buf_puts(&names, v->id);
		}
	}
	gf__reason(j->job, "preempted %s: waits for their processes to be gone",
		   gf_buf_str(&names));
	gf_buf_release(&names);
}

int gf__preempt(struct gf_ctl *ctl, struct gf__pass *ps, int jid,
		const struct gf_req *r)
{
	struct gf__jrec *j = &ctl->jobs.jr[jid];
	/* a gang that must stay on one GPU model: victims found for one
	 * model at a time, as it will be placed */
	uint32_t models[32];
	int nm = gf__gang_models(ctl, j, r, models);
	struct gf_req one = *r;
	struct search s = { .ctl = ctl };
	for (int m = 0; m < (nm ? nm : 1); m++) {
		if (nm)
			one.spec = models[m];
		s = (struct search){ .ctl = ctl,
				     .j = j,
				     .r = &one,
				     .R = j->job->spec.replicas,
				     .tr = { .prof = j->prof } };
		search_all(&s);
		gf_free(s.tr.t);
		if (s.best.k > 0)
			break;
	}
	if (s.best.k == 0)
		return GF_ENOTFOUND;
	char why[GF_JOB_REASON_MAX];
	gf_note(why, sizeof(why), "preempted by %s", j->job->id);
	for (int i = 0; i < s.best.k; i++) {
		int v = s.best.vic[i];
		if (ctl->jobs.jr[v].job->state != GF_JOB_RUNNING)
			continue; /* a gang named twice: preempted once */
		ctl->jobs.jr[v].job->preemptions++;
		ctl->jobs.jr[v].preempted = ps->pass;
		gf__to_pending(ctl, v, ps->now, "preempted", why);
		gf__changed(&ctl->jobs, ps, v);
	}
	ctl->heap_dirty = true;
	if (ctl->cfg.hold_until_gone) {
		/* the victims' GPUs are free once their processes are gone:
		 * the job waits for them, holding the reservation */
		await_victims(ctl, jid, &s.best);
		gf__reserve(ctl, ps, jid, r);
		return 0;
	}
	struct gf_job_place *pl;
	int block;
	if (gf__place_job(ctl, jid, r, NULL, s.R == 1 ? s.best.scope : -1,
			  s.R == 1 ? -1 : s.best.scope, &pl, &block)) {
#if GF_DEBUG
		gf_check_failed("scheduling core",
				"preemption made room the job did not fit in");
#endif
		return GF_ENOTFOUND;
	}
	gf__start(ctl, jid, pl, block, ps->now);
	gf__changed(&ctl->jobs, ps, jid);
	return 0;
}

int gf__victims(struct gf_ctl *ctl, struct gf__jrec *j, int node,
		const int *cand, int ncand, gf_ctl_fit_fn fits, void *arg,
		int *out)
{
	struct search s = { .ctl = ctl,
			    .j = j,
			    .r = &j->req,
			    .R = 1,
			    .scope = node,
			    .fits = fits,
			    .fits_arg = arg,
			    .tr = { .prof = j->prof } };
	for (int k = 0; k < ncand && s.nv < VMAX; k++)
		s.vs[s.nv++] = cand[k];
	int rc = GF_ENOTFOUND;
	if (feasible(&s, NULL, 0)) {
		rc = 0; /* room without a victim */
	} else {
		for (int k = 1; k <= s.nv && s.best.k == 0 && s.tests < BUDGET;
		     k++)
			subsets(&s, k);
		if (s.best.k > 0) {
			memcpy(out, s.best.vic,
			       (size_t)s.best.k * sizeof(*out));
			rc = s.best.k;
		}
	}
	gf_free(s.tr.t);
	return rc;
}
