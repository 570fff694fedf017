/*
 * frag.h - GPU fragmentation against a workload's typical requests, as
 * defined by "Beware of Fragmentation" (ATC'23; reference/fgd-experiment.md
 * section 1.3).
 *
 * A node's fragmentation F is the expected amount of its idle GPU (milli)
 * that a request drawn from the typical mix could not use:
 *   F(node) = sum over typical requests m of p_m * f_m, where
 *   f_m = L (all idle GPU) when m needs no GPU, when m's models exclude the
 *         node's, or when the node cannot host m (too few GPUs with m's
 *         share, or too little CPU);
 *   f_m = the idle milli on GPUs with less than m's share, otherwise.
 * Memory is not part of F.  Pure functions; thread-safe.
 */
#ifndef GPUFLEET_FRAG_H
#define GPUFLEET_FRAG_H

#include <gpufleet/cluster.h>
#include <gpufleet/err.h>

/* One typical request and its probability in the mix. */
struct gf_typical {
	int32_t cpu;
	int16_t gpu_milli;
	uint16_t ngpus;
	uint32_t spec;
	double p;
};

/*
 * The typical mix of a request list: group by (cpu, gpu share, GPU count,
 * spec as written), most frequent first (ties: the larger key), keep the
 * shortest prefix covering `coverage` (0.95 in the paper) of requests, and
 * renormalise.  *out is allocated (caller frees with free()); returns the
 * count, or GF_EINVAL for an empty list.
 */
int gf_typical_build(const struct gf_req *reqs, int n, double coverage,
		     struct gf_typical **out) GF_MUST_CHECK;

/*
 * F for a node state given explicitly: model, CPU left and the GPUs' free
 * milli (any order).  F(node) = gf_frag_state(t, nt, n->model,
 * n->cpu_left, n->gpu_left, n->ngpus).
 */
double gf_frag_state(const struct gf_typical *t, int nt, int model,
		     int32_t cpu_left, const int16_t *gpu_left, int ngpus);

double gf_frag_node(const struct gf_typical *t, int nt,
		    const struct gf_cnode *n);

#endif
