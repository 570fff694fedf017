/*
 * policy_random.c - Random: no score; the engine draws a feasible node
 * uniformly (GF_POLICY_DRAWS), and a fractional request a random GPU
 * among those with room.
 */
#include "core/place/sched_impl.h"

int gf__score_random(struct gf__scoring *at, const struct gf_req *r)
{
	(void)at;
	(void)r;
	return 0;
}

int gf__gpu_draw(struct gf_sched *s, const struct gf_cnode *nd,
		 const struct gf_req *r)
{
	int fit = gf_cnode_gpus_with(nd, r->gpu_milli);
	int pick = (int)gf_rng_below(&s->rng, (uint64_t)fit);
	for (int g = 0; g < nd->ngpus; g++)
		if (nd->gpu_left[g] >= r->gpu_milli && pick-- == 0)
			return g;
	return -1;
}
