/*
 * policy.c - the policy table (one row per GF_POLICY_TABLE entry), names,
 * the best-fit GPU choice the policies share, and the walk over the
 * states a request can leave on a node (FGD, FGD+).  The policies
 * themselves, as reference/fgd-experiment.md 1.3 defines them (read from
 * the authors' simulator), are one file each, policy_<name>.c; every
 * score is truncated to an integer, as the Kubernetes framework does, and
 * that truncation decides ties and so which node wins.
 */
#include <strings.h>

#include <gpufleet/err.h>

#include "core/place/sched_impl.h"

const struct gf__policy gf__policies[GF_POLICY_COUNT] = {
#define GF__POLICY_ROW(e, n, l, f) \
	[GF_POLICY_##e] = { #n, l, gf__score_##n, f },
	GF_POLICY_TABLE(GF__POLICY_ROW)
#undef GF__POLICY_ROW
};

const char *gf_policy_name(enum gf_policy p)
{
	return (unsigned)p < GF_POLICY_COUNT ? gf__policies[p].name : "?";
}

const char *gf_policy_label(enum gf_policy p)
{
	return (unsigned)p < GF_POLICY_COUNT ? gf__policies[p].label : "?";
}

unsigned gf_policy_flags(enum gf_policy p)
{
	return (unsigned)p < GF_POLICY_COUNT ? gf__policies[p].flags : 0;
}

int gf_policy_parse(const char *s, enum gf_policy *out)
{
	for (int i = 0; i < GF_POLICY_COUNT; i++)
		if (strcasecmp(s, gf__policies[i].name) == 0) {
			*out = (enum gf_policy)i;
			return 0;
		}
	return GF_ENOTFOUND;
}

void gf__gpus_best_fit(const struct gf_cnode *n, const struct gf_req *r,
		       int *out)
{
	if (r->ngpus == 1 && r->gpu_milli < GF_GPU_MILLI) {
		int best = -1;
		for (int g = 0; g < n->ngpus; g++)
			if (n->gpu_left[g] >= r->gpu_milli &&
			    (best < 0 || n->gpu_left[g] < n->gpu_left[best]))
				best = g;
		out[0] = best;
		return;
	}
	int k = 0;
	for (int g = 0; g < n->ngpus && k < r->ngpus; g++)
		if (n->gpu_left[g] == GF_GPU_MILLI)
			out[k++] = g;
}

int gf__score_after(struct gf__scoring *at, const struct gf_req *r, double now,
		    gf__after_fn after, int none)
{
	const struct gf_cnode *n = at->n;
	int16_t left[GF_CNODE_MAX_GPUS];
	for (int g = 0; g < n->ngpus; g++)
		left[g] = n->gpu_left[g];
	int32_t cpu = n->cpu_left - r->cpu;
	if (r->ngpus == 1 && r->gpu_milli < GF_GPU_MILLI) {
		int best = none, best_g = -1;
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
			int sc = after(at, r, now, left, cpu, g);
			left[g] = n->gpu_left[g];
			if (sc > best) {
				best = sc;
				best_g = g;
			}
		}
		at->gpu = best_g;
		return best;
	}
	int k = 0;
	for (int g = 0; g < n->ngpus && k < r->ngpus; g++)
		if (left[g] == GF_GPU_MILLI) {
			left[g] = 0;
			k++;
		}
	at->gpu = -1;
	return after(at, r, now, left, cpu, -1);
}
