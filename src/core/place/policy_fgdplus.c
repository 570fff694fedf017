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
 * dF and dS the drops in fragmentation and stranded GPU, T =
 * GF_FGDPLUS_T.  Ties go to the node rank, as for every policy: the
 * integer truncation makes the near-equal nodes tie and the fixed rank
 * packs them first-fit (without it, FGD leaves 7.1 % unallocated on the
 * default trace instead of 4.7 %).  docs/placement.md says what was
 * tried and measured.
 */
#include <limits.h>
#include <math.h>

#include "core/place/sched_impl.h"

#define MAX_SCORE 100

/* Idle GPU (milli) the free CPU cannot feed at the typical rate. */
static double stranded(const struct gf__lookahead *la, int32_t cpu_left,
		       int32_t idle)
{
	if (la->cpu_per_milli <= 0 || idle <= 0)
		return 0;
	double fed = (double)cpu_left / la->cpu_per_milli;
	return idle > fed ? idle - fed : 0;
}

static int sigmoid_score(double drop)
{
	return (int)(MAX_SCORE * (1.0 / (1.0 + exp(-drop / GF_FGDPLUS_T))));
}

/* GPUs of a GPU lost by putting share s into free share h. */
static int packing_loss(const struct gf__lookahead *la, int h, int s)
{
	double loss = la->knap[h] - la->knap[h - s] - la->price[s];
	return (int)floor(1000.0 * loss + 0.5);
}

int gf__score_fgdplus(const struct gf_sched *s, const struct gf_cnode *n,
		      double frag_now, const struct gf_req *r, int *gpu)
{
	const struct gf__lookahead *la = s->la;
	int16_t left[GF_CNODE_MAX_GPUS];
	for (int g = 0; g < n->ngpus; g++)
		left[g] = n->gpu_left[g];
	int32_t cpu = n->cpu_left - r->cpu;
	double now = frag_now + stranded(la, n->cpu_left, n->idle);
	if (r->ngpus == 1 && r->gpu_milli < GF_GPU_MILLI) {
		int best = INT_MIN, best_g = -1;
		for (int g = 0; g < n->ngpus; g++) {
			if (n->gpu_left[g] < r->gpu_milli)
				continue;
			/* an equal share earlier gives the same state */
			bool seen = false;
			for (int h = 0; h < g && !seen; h++)
				seen = n->gpu_left[h] == n->gpu_left[g];
			if (seen)
				continue;
			left[g] = (int16_t)(n->gpu_left[g] - r->gpu_milli);
			double after =
				gf_frag_state(s->typ, s->ntyp, n->model, cpu,
					      left, n->ngpus) +
				stranded(la, cpu, n->idle - r->gpu_milli);
			left[g] = n->gpu_left[g];
			int sc = sigmoid_score(now - after) -
				 packing_loss(la, n->gpu_left[g], r->gpu_milli);
			if (sc > best) {
				best = sc;
				best_g = g;
			}
		}
		*gpu = best_g;
		return best;
	}
	int k = 0;
	for (int g = 0; g < n->ngpus && k < r->ngpus; g++)
		if (left[g] == GF_GPU_MILLI) {
			left[g] = 0;
			k++;
		}
	double after =
		gf_frag_state(s->typ, s->ntyp, n->model, cpu, left, n->ngpus) +
		stranded(la, cpu, n->idle - r->ngpus * r->gpu_milli);
	*gpu = -1;
	return sigmoid_score(now - after);
}

int gf__gpu_fgdplus(struct gf_sched *s, const struct gf_cnode *nd,
		    const struct gf_req *r, int scored_gpu)
{
	(void)s;
	(void)nd;
	(void)r;
	return scored_gpu;
}
