/*
 * typical.c - the typical workload FGD measures fragmentation against
 * (frag.h), learned from the arrivals the core sees, decayed.
 *
 * Learner (gf__mixlearn_*): each arriving replica adds weight to its
 * shape (CPU, GPU share, GPU count, spec: its model mask); older arrivals
 * weigh (1 - 1/H)^k of a new one, k arrivals later (H =
 * GF_MIX_HORIZON, 4096 replicas): the mix follows the arrivals, the
 * mix FGD reasons about, not the pending and running set (which
 * over-weights long jobs).  Before any arrival the default mix below is
 * a prior of GF_MIX_PRIOR (16) arrivals' weight, decayed like any
 * other: after a few hundred arrivals it is gone.  At most
 * GF_MIX_SHAPES_MAX shapes are kept (the negligible, then the lightest,
 * make room for a new one).
 *
 * Default prior: shaped like the Alibaba GPU trace the engine was
 * checked on (reference/fgd-experiment.md): most requests one GPU or
 * less (a whole GPU 40 %, half a GPU 15 %, a quarter 10 %), some
 * multi-GPU training (2, 4 and 8 GPUs: 10 % each) and CPU-only work
 * (5 %).
 *
 * Rebuild: at the first gf_ctl_schedule after the arrivals since the
 * last build reach a quarter of the weight (in arrivals) it was built
 * from: every few arrivals at first, every H/4 on a steady stream.  A
 * rebuild costs one F pass over the nodes and empties the engine's
 * score cache.  The engine gets both the typical mix (the heaviest
 * shapes covering 95 %, as FGD) and the whole one (FGD+'s pressure,
 * gf_sched_set_mix).
 *
 * Invariants: ctl->typ/ntyp and ctl->mix/nmix are what the engine reads
 * (borrowed); the previous ones are freed only after it holds the new.
 */
#include "core/jobs/typical.h"

#include <stdlib.h>
#include <string.h>

#include "core/jobs/ctl_impl.h"
#include "util/mem.h"

/* inc past this: every weight is divided by it (no overflow) */
#define INC_RESCALE 1e100

void gf__mixlearn_init(struct gf__mixlearn *l)
{
	memset(l, 0, sizeof(*l));
	l->inc = 1.0;
}

void gf__mixlearn_free(struct gf__mixlearn *l)
{
	gf_free(l->e);
	gf__mixlearn_init(l);
}

static bool same(const struct gf_typical *a, const struct gf_typical *b)
{
	return a->cpu == b->cpu && a->gpu_milli == b->gpu_milli &&
	       a->ngpus == b->ngpus && a->spec == b->spec;
}

/* Room for one more shape when GF_MIX_SHAPES_MAX are kept: the
 * negligible ones dropped, else the lightest; their weight leaves mass. */
static void make_room(struct gf__mixlearn *l)
{
	int k = 0, light = 0;
	for (int i = 0; i < l->n; i++) {
		if (l->e[i].w < l->mass * GF_MIX_NEGLIGIBLE) {
			l->mass -= l->e[i].w;
			continue;
		}
		l->e[k++] = l->e[i];
	}
	l->n = k;
	if (l->n < GF_MIX_SHAPES_MAX)
		return;
	for (int i = 1; i < l->n; i++)
		if (l->e[i].w < l->e[light].w)
			light = i;
	l->mass -= l->e[light].w;
	l->e[light] = l->e[--l->n];
}

/* Weight w (in units of the current inc) onto t's shape. */
static void add_weight(struct gf__mixlearn *l, const struct gf_typical *t,
		       double w)
{
	int i = 0;
	while (i < l->n && !same(&l->e[i].t, t))
		i++;
	if (i == l->n) {
		if (l->n >= GF_MIX_SHAPES_MAX) {
			make_room(l);
			i = l->n;
		}
		if (l->n == l->cap) {
			l->cap = l->cap ? 2 * l->cap : 64;
			l->e = gf_reallocarray(l->e, (size_t)l->cap,
					       sizeof(*l->e));
		}
		l->e[l->n++] = (struct gf__mixent){ .t = *t, .w = 0 };
	}
	l->e[i].w += w * l->inc;
	l->mass += w * l->inc;
}

void gf__mixlearn_add(struct gf__mixlearn *l, const struct gf_req *r,
		      int64_t count)
{
	if (count <= 0)
		return;
	struct gf_typical t = { .cpu = r->cpu,
				.gpu_milli = r->gpu_milli,
				.ngpus = r->ngpus,
				.spec = r->spec };
	/* count arrivals at once: the i-th weighs d^(count-1-i) of the
	 * last; in units of the inc after them: sum d^-(i+1) */
	double d = 1.0 - 1.0 / GF_MIX_HORIZON, g = 1.0 / d;
	double w = 0, x = 1.0;
	for (int64_t i = 0; i < count && i < 100000; i++) {
		x *= g;
		w += x;
	}
	add_weight(l, &t, w);
	l->inc *= x;
	l->seen += count;
	if (l->inc > INC_RESCALE) {
		for (int i = 0; i < l->n; i++)
			l->e[i].w /= l->inc;
		l->mass /= l->inc;
		l->inc = 1.0;
	}
}

/* (cpu, share, GPU count) in one number, ordered as the triple (all
 * three are >= 0), so that shapes order as frag.c's keys do. */
static uint64_t shape_rank(const struct gf_typical *t)
{
	return (uint64_t)(uint32_t)t->cpu << 32 |
	       (uint64_t)(uint16_t)t->gpu_milli << 16 | t->ngpus;
}

static int cmp_shape(const struct gf_typical *x, const struct gf_typical *y)
{
	uint64_t a = shape_rank(x), b = shape_rank(y);
	if (a != b)
		return a < b ? -1 : 1;
	return (x->spec > y->spec) - (x->spec < y->spec);
}

/* Heaviest first; equal weights: the larger key first. */
static int cmp_weight(const void *a, const void *b)
{
	const struct gf__mixent *x = a, *y = b;
	if (x->w != y->w)
		return x->w > y->w ? -1 : 1;
	return -cmp_shape(&x->t, &y->t);
}

int gf__mixlearn_build(const struct gf__mixlearn *l, double coverage,
		       struct gf_typical **out)
{
	*out = NULL;
	if (l->n == 0 || !(l->mass > 0))
		return GF_EINVAL;
	struct gf__mixent *e = gf_calloc((size_t)l->n, sizeof(*e));
	memcpy(e, l->e, (size_t)l->n * sizeof(*e));
	qsort(e, (size_t)l->n, sizeof(*e), cmp_weight);
	int take = 0;
	double cum = 0;
	while (take < l->n && e[take].w > 0 &&
	       (take == 0 || cum < coverage * l->mass * (1 - 1e-12)))
		cum += e[take++].w;
	struct gf_typical *t = gf_calloc((size_t)take, sizeof(*t));
	for (int i = 0; i < take; i++) {
		t[i] = e[i].t;
		t[i].p = e[i].w / cum;
	}
	gf_free(e);
	*out = t;
	return take;
}

/* ---- the core's mix ---------------------------------------------- */

static const struct {
	int32_t cpu;
	int16_t milli;
	uint16_t ngpus;
	int weight;
} prior[] = {
	{ 8000, 1000, 1, 40 },	{ 4000, 500, 1, 15 },	{ 2000, 250, 1, 10 },
	{ 16000, 1000, 2, 10 }, { 32000, 1000, 4, 10 }, { 64000, 1000, 8, 10 },
	{ 4000, 0, 0, 5 },
};

/* Are mixes a[0..na) and b[0..nb) the same, field by field? */
static bool same_mix(const struct gf_typical *a, int na,
		     const struct gf_typical *b, int nb)
{
	if (na != nb || !a || !b)
		return false;
	for (int k = 0; k < na; k++)
		if (!same(&a[k], &b[k]) || a[k].p != b[k].p)
			return false;
	return true;
}

/* The learner's mixes to the engine; 0, or GF_EINVAL (nothing learned:
 * the old mixes kept).  Mixes equal to those the engine has are not
 * given again: its scores, and gf_sched_score_gen, stay. */
static int install(struct gf_ctl *ctl)
{
	struct gf_typical *t, *m;
	int nt = gf__mixlearn_build(ctl->learn, 0.95, &t);
	if (nt <= 0)
		return nt < 0 ? nt : GF_EINVAL;
	int nm = gf__mixlearn_build(ctl->learn, 1.0, &m);
	if (nm <= 0) {
		gf_free(t);
		return nm < 0 ? nm : GF_EINVAL;
	}
	if (ctl->s && same_mix(t, nt, ctl->typ, ctl->ntyp) &&
	    same_mix(m, nm, ctl->mix, ctl->nmix)) {
		gf_free(t); /* the engine keeps its own, and its scores */
		gf_free(m);
	} else {
		struct gf_typical *old_t = ctl->typ, *old_m = ctl->mix;
		ctl->typ = t;
		ctl->ntyp = nt;
		ctl->mix = m;
		ctl->nmix = nm;
		if (ctl->s) {
			gf_sched_set_mix(ctl->s, m, nm);
			(void)!gf_sched_set_typical(ctl->s, t, nt); /* nt > 0 */
		}
		gf_free(old_t);
		gf_free(old_m);
	}
	ctl->typ_base = (int64_t)(ctl->learn->mass / ctl->learn->inc);
	ctl->typ_added = 0;
	return 0;
}

int gf__typical_default(struct gf_ctl *ctl)
{
	if (ctl->learn == NULL) {
		ctl->learn = gf_calloc(1, sizeof(*ctl->learn));
		gf__mixlearn_init(ctl->learn);
	}
	int total = 0;
	for (size_t k = 0; k < sizeof(prior) / sizeof(prior[0]); k++)
		total += prior[k].weight;
	for (size_t k = 0; k < sizeof(prior) / sizeof(prior[0]); k++) {
		struct gf_typical t = { .cpu = prior[k].cpu,
					.gpu_milli = prior[k].milli,
					.ngpus = prior[k].ngpus };
		add_weight(ctl->learn, &t,
			   GF_MIX_PRIOR * prior[k].weight / total);
	}
	return install(ctl);
}

void gf__typical_arrived(struct gf_ctl *ctl, const struct gf_req *r,
			 int64_t count)
{
	if (ctl->learn == NULL)
		return;
	gf__mixlearn_add(ctl->learn, r, count);
	ctl->typ_added += count;
}

void gf__typical_refresh(struct gf_ctl *ctl, bool force)
{
	if (ctl->learn == NULL)
		return;
	if (!force &&
	    (ctl->typ_added <= 0 || 4 * ctl->typ_added < ctl->typ_base))
		return;
	(void)!install(ctl); /* the learner has the prior: it cannot fail */
}

void gf__typical_free(struct gf_ctl *ctl)
{
	if (ctl->learn)
		gf__mixlearn_free(ctl->learn);
	gf_free(ctl->learn);
	gf_free(ctl->typ);
	gf_free(ctl->mix);
	ctl->learn = NULL;
	ctl->typ = ctl->mix = NULL;
}
