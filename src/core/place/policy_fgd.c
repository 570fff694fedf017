/*
 * policy_fgd.c - FGD (fragmentation gradient descent): 100 sigma(dF/1000),
 * dF the drop in the node's fragmentation against the typical workload
 * (frag.h) if the request lands there; a fractional request takes the
 * GPU whose share gives the largest drop.
 */
#include <math.h>

#include "core/place/sched_impl.h"

#define MAX_SCORE 100

static int sigmoid_score(double delta)
{
	return (int)(MAX_SCORE * (1.0 / (1.0 + exp(-delta / 1000.0))));
}

int gf__score_fgd(const struct gf_sched *s, const struct gf_cnode *n,
		  double frag_now, const struct gf_req *r, int *gpu)
{
	int16_t left[GF_CNODE_MAX_GPUS];
	for (int g = 0; g < n->ngpus; g++)
		left[g] = n->gpu_left[g];
	int32_t cpu = n->cpu_left - r->cpu;
	if (r->ngpus == 1 && r->gpu_milli < GF_GPU_MILLI) {
		int best = -1, best_g = -1;
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
			double after = gf_frag_state(s->typ, s->ntyp, n->model,
						     cpu, left, n->ngpus);
			left[g] = n->gpu_left[g];
			int sc = sigmoid_score(frag_now - after);
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
		gf_frag_state(s->typ, s->ntyp, n->model, cpu, left, n->ngpus);
	*gpu = -1;
	return sigmoid_score(frag_now - after);
}

int gf__gpu_fgd(struct gf_sched *s, const struct gf_cnode *nd,
		const struct gf_req *r, int scored_gpu)
{
	(void)s;
	(void)nd;
	(void)r;
	return scored_gpu;
}
