/*
 * policy.h - internal: the scoring functions behind enum gf_policy, and
 * the best-fit GPU choice they share.
 */
#ifndef GF_CORE_POLICY_H
#define GF_CORE_POLICY_H

#include <gpufleet/sched.h>

/* Score node n for r (0..100); *gpu set by FGD for fractional requests. */
int gf__policy_score(const struct gf_sched *s, const struct gf_cnode *n,
		     double frag_now, const struct gf_req *r, int *gpu);

/*
 * Best-fit GPUs for r on n into out[0..r->ngpus): fractional requests the
 * GPU with the least free share >= r->gpu_milli (lowest index on ties);
 * whole-GPU requests the lowest-index fully free GPUs.
 */
void gf__gpus_best_fit(const struct gf_cnode *n, const struct gf_req *r,
		       int *out);

#endif
