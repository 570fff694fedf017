/*
 * policy_packing.c - Packing: prefer GPUs already shared, then used nodes,
 * then free nodes.
 */
#include "core/place/sched_impl.h"

#define MAX_SCORE 100

int gf__score_packing(struct gf__scoring *at, const struct gf_req *r)
{
	const struct gf_cnode *n = at->n;
	if (r->ngpus == 0)
		return 0;
	int free = gf_cnode_gpus_with(n, GF_GPU_MILLI);
	if (free == n->ngpus) {
		int v = MAX_SCORE / 3 - free;
		return v > free ? v : free;
	}
	/* k GPUs in ascending order of free share, ties by index */
	int used[GF_CNODE_MAX_GPUS] = { 0 };
	int k = 0;
	bool taken[GF_CNODE_MAX_GPUS] = { false };
	while (k < r->ngpus) {
		int best = -1;
		for (int g = 0; g < n->ngpus; g++)
			if (!taken[g] && n->gpu_left[g] >= r->gpu_milli &&
			    (best < 0 || n->gpu_left[g] < n->gpu_left[best]))
				best = g;
		if (best < 0)
			return 0; /* cannot happen after the filter */
		taken[best] = true;
		used[k++] = best;
	}
	int full = 0, ratio = 0;
	for (int i = 0; i < k; i++) {
		full += n->gpu_left[used[i]] == GF_GPU_MILLI;
		ratio += n->gpu_left[used[i]] * 100 / GF_GPU_MILLI;
	}
	if (full > 0) {
		int v = MAX_SCORE / 2 - full;
		return v > MAX_SCORE / 3 ? v : MAX_SCORE / 3;
	}
	int v = MAX_SCORE - ratio / 10;
	return v > MAX_SCORE / 2 ? v : MAX_SCORE / 2;
}
