/*
 * synth.h - a built-in cluster and workload, so the simulator runs with no
 * trace at all.  Ours: node templates from the GPU catalog and a request
 * mix with whole, fractional, multi-GPU and CPU-only requests, in
 * proportions like those of the public Alibaba 2023 trace (13 % CPU-only,
 * about 40 % of GPU requests fractional, a few multi-GPU ones).
 */
#ifndef GF_TRACE_SYNTH_H
#define GF_TRACE_SYNTH_H

#include <gpufleet/cluster.h>
#include <gpufleet/err.h>
#include <gpufleet/workload.h>

/* 192 nodes, 1,088 GPUs: HGX H100 and A100 boards, L4 and T4 servers. */
int gf_synth_cluster(struct gf_cluster *c) GF_MUST_CHECK;

/*
 * n requests drawn from the mix with a seeded generator (named
 * "syn-00000000".. so that sorting by name keeps their order).
 */
int gf_synth_workload(struct gf_cluster *c, struct gf_workload *w, int n,
		      uint64_t seed) GF_MUST_CHECK;

/* A uniform cluster: n nodes of `gpus` GPUs of one model. */
int gf_synth_uniform(struct gf_cluster *c, int n, int gpus, int32_t cpu,
		     int64_t mem, const char *model) GF_MUST_CHECK;

#endif
