/*
 * policy.c - the policy table (one row per GF_POLICY_TABLE entry), names,
 * and the best-fit GPU choice the policies share.  The policies
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
	[GF_POLICY_##e] = { #n, l, gf__score_##n, gf__gpu_##n, f },
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
