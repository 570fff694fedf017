/*
 * policy_clustering.c - Clustering (GpuClustering): keep GPU pods of one
 * kind together, by the tags a node's pods carry ("share", "<k>-gpu").
 */
#include "core/place/sched_impl.h"

int gf__score_clustering(struct gf__scoring *at, const struct gf_req *r)
{
	const struct gf_cnode *nd = at->n;
	if (r->ngpus == 0)
		return 0;
	int tag = (r->ngpus == 1 && r->gpu_milli < GF_GPU_MILLI)
			  ? 0
			  : (r->ngpus < 31 ? r->ngpus : 31);
	int base = (int)(25 * (8000 - gf_cnode_gpu_idle(nd)) / 8000);
	uint32_t bit = UINT32_C(1) << tag;
	if (nd->tags & bit)
		return base + ((nd->tags & ~bit) ? 50 : 75);
	return base + (nd->gpu_pods == 0 ? 25 : 0);
}
