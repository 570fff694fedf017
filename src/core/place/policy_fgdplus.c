/*
 * policy_fgdplus.c - FGD+: FGD's fragmentation drop, looking further
 * ahead over the typical workload (lookahead.c has the figures), in
 * three ways:
 *
 *   stranded GPU  a node's idle GPU its free CPU cannot feed at the
 *                 typical CPU per GPU counts as fragmented, so requests
 *                 heavy in CPU go where CPU is plentiful and CPU-only
 *                 ones do not starve GPU nodes;
 *   packing loss  a fractional request loses K(h) - K(h - s) - y(s) of
 *                 a GPU (the dual prices of the optimal packing of the
 *                 typical shares) on the GPU whose free share h it
 *                 takes: it goes where the GPU keeps to an optimal
 *                 pattern (a 650 beside a 320, not a 470);
 *   pressure      GPU demand that may only run on a model weighs on the
 *                 requests that may run elsewhere (added by the engine
 *                 at select, outside the score cache: it moves as nodes
 *                 come).
 *
 *   score = trunc(100 sigma((dF + dS) / T)) - round(1000 loss)
 *
 * dF and dS the drops in fragmentation and stranded GPU, T the
 * engine's (gf_sched_set_fgdplus_t, a run-time setting).  Ties go to the node
 * rank, as for every policy: the integer truncation makes the near-equal nodes
 * tie and the fixed rank packs them first-fit (without it, FGD leaves 7.1 %
 * unallocated on the default trace instead of 4.7 %).  docs/placement.md says
 * what was tried and measured.
 */
#include <limits.h>
#include <math.h>

#include "core/place/sched_impl.h"

#define MAX_SCORE 100

/* Idle GPU (milli) the free CPU cannot feed at the typical rate. */
static double stranded(const struct gf_sched *s, int32_t cpu_left, int32_t idle)
{
	const struct gf__lookahead *la = s->la;
	if (la->cpu_per_milli <= 0 || idle <= 0 ||
	    (s->fgdplus_without & GF_FGDPLUS_STRANDED))
		return 0;
	double fed = (double)cpu_left / la->cpu_per_milli;
	return idle > fed ? idle - fed : 0;
}

static int sigmoid_score(double drop, double t)
{
	return (int)(MAX_SCORE * (1.0 / (1.0 + exp(-drop / t))));
}

/* GPUs of a GPU lost by putting share s into free share h. */
static int packing_loss(const struct gf_sched *sc, int h, int s)
{
	const struct gf__lookahead *la = sc->la;
	if (sc->fgdplus_without & GF_FGDPLUS_PACKING)
		return 0;
	double loss = la->knap[h] - la->knap[h - s] - la->price[s];
	return (int)floor(1000.0 * loss + 0.5);
}

/* The score of the state a request leaves: the drops in F and in
 * stranded GPU, squashed, less a fractional request's packing loss. */
static int after_fgdplus(const struct gf__scoring *at, const struct gf_req *r,
			 double now, const int16_t *left, int32_t cpu, int g)
{
	const struct gf_sched *s = at->s;
	const struct gf_cnode *n = at->n;
	double after =
		gf_frag_state(s->typ, s->ntyp, n->model, cpu, left, n->ngpus) +
		stranded(s, cpu, n->idle - r->ngpus * r->gpu_milli);
	if (g < 0)
		return sigmoid_score(now - after, s->fgdplus_t);
	return sigmoid_score(now - after, s->fgdplus_t) -
	       packing_loss(s, n->gpu_left[g], r->gpu_milli);
}

int gf__score_fgdplus(struct gf__scoring *at, const struct gf_req *r)
{
	const struct gf_cnode *n = at->n;
	double now = at->frag_now + stranded(at->s, n->cpu_left, n->idle);
	return gf__score_after(at, r, now, after_fgdplus, INT_MIN);
}
