/*
 * policy_dotprod.c - DotProd (Tetris): 100 (1 - d), d the mean of
 * cpu_left/128k x c/128k and L/8000 x k g/8000, normalised by the maxima.
 */
#include "core/place/sched_impl.h"

#define CPU_NORM 128000.0
#define GPU_NORM 8000.0

int gf__score_dotprod(struct gf__scoring *at, const struct gf_req *r)
{
	const struct gf_cnode *nd = at->n;
	double kg = (double)r->ngpus * r->gpu_milli;
	double d = ((nd->cpu_left / CPU_NORM) * (r->cpu / CPU_NORM) +
		    (gf_cnode_gpu_idle(nd) / GPU_NORM) * (kg / GPU_NORM)) /
		   2.0;
	return (int)(100 * (1.0 - d));
}
