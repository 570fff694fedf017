/*
 * policy_bestfit.c - BestFit: 100 (1 - s), s the mean leftover CPU and
 * GPU fraction after the placement.
 */
#include "core/place/sched_impl.h"

#define CPU_NORM 128000.0
#define GPU_NORM 8000.0

int gf__score_bestfit(struct gf__scoring *at, const struct gf_req *r)
{
	const struct gf_cnode *nd = at->n;
	double kg = (double)r->ngpus * r->gpu_milli;
	double left = 0.5 * (nd->cpu_left - r->cpu) / CPU_NORM +
		      0.5 * (gf_cnode_gpu_idle(nd) - kg) / GPU_NORM;
	return (int)(100 * (1.0 - left));
}
