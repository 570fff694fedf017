/*
 * sim_helpers.h - what the simulator's tests share (test_sim.c,
 * test_bound.c): requests added under numbered names, and the fill
 * worked out by hand (one node, two GPUs, four requests of 0.6 GPU).
 */
#ifndef GF_TEST_SIM_HELPERS_H
#define GF_TEST_SIM_HELPERS_H

#include <gpufleet/sim.h>

#include "helpers.h"

/* n copies of q, named PREFIX0, PREFIX1, ... */
static inline void add_reqs(struct gf_workload *w, const char *prefix,
			    const struct gf_req *q, int n)
{
	for (int i = 0; i < n; i++) {
		char name[32];
		snprintf(name, sizeof(name), "%s%d", prefix, i);
		assert_true(gf_workload_add(w, name, q) >= 0);
	}
}

/* c: one node "n0" (32 cores, 64 GiB, two G1 GPUs); w: four requests of
 * 0.6 GPU, one core and 1 GiB each (p0..p3).  No GPU holds two, so at
 * most 1,200 of 2,000 milli go out.  The caller releases both. */
static inline void by_hand_fill(struct gf_cluster *c, struct gf_workload *w)
{
	gf_cluster_init(c);
	gf_workload_init(w);
	int m = gf_cluster_model(c, "G1");
	assert_true(m >= 0);
	assert_true(gf_cluster_add(c, "n0", 32000, 65536, 2, m) >= 0);
	struct gf_req q = {
		.cpu = 1000, .mem = 1024, .ngpus = 1, .gpu_milli = 600
	};
	add_reqs(w, "p", &q, 4);
}

#endif
