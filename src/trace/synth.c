/*
 * synth.c - the built-in cluster and request mix.
 */
#include "trace/synth.h"

#include <stdio.h>

#include <gpufleet/err.h>
#include <gpufleet/rng.h>

#include "util/fmt.h"

struct tier {
	const char *model; /* catalog id */
	int nodes;
	int gpus;
	int32_t cpu;
	int64_t mem_mib;
};

static const struct tier tiers[] = {
	{ "h100-sxm", 64, 8, 192000, 2097152 },
	{ "a100-80gb", 32, 8, 128000, 1048576 },
	{ "l4", 64, 4, 64000, 524288 },
	{ "t4", 32, 2, 32000, 262144 },
};

int gf_synth_cluster(struct gf_cluster *c)
{
	for (size_t t = 0; t < sizeof(tiers) / sizeof(tiers[0]); t++) {
		int m = gf_cluster_model(c, tiers[t].model);
		if (m < 0)
			return m;
		for (int i = 0; i < tiers[t].nodes; i++) {
			char name[GF_NODE_NAME_MAX];
			gf_note(name, sizeof(name), "%s-%03d", tiers[t].model,
				i);
			int rc = gf_cluster_add(c, name, tiers[t].cpu,
						tiers[t].mem_mib, tiers[t].gpus,
						m);
			if (rc < 0)
				return rc;
		}
	}
	return 0;
}

int gf_synth_uniform(struct gf_cluster *c, int n, int gpus, int32_t cpu,
		     int64_t mem, const char *model)
{
	int m = gf_cluster_model(c, model);
	if (m < 0)
		return m;
	for (int i = 0; i < n; i++) {
		char name[GF_NODE_NAME_MAX];
		gf_note(name, sizeof(name), "node-%06d", i);
		int rc = gf_cluster_add(c, name, cpu, mem, gpus, m);
		if (rc < 0)
			return rc;
	}
	return 0;
}

static int pick(struct gf_rng *r, const int *weights, int n)
{
	int total = 0;
	for (int i = 0; i < n; i++)
		total += weights[i];
	int x = (int)gf_rng_below(r, (uint64_t)total);
	for (int i = 0; i < n; i++) {
		if (x < weights[i])
			return i;
		x -= weights[i];
	}
	return n - 1;
}

int gf_synth_workload(struct gf_cluster *c, struct gf_workload *w, int n,
		      uint64_t seed)
{
	/* kinds: cpu-only, fractional, 1 GPU, 2, 4, 8 GPUs */
	static const int kind_w[] = { 13, 36, 44, 3, 2, 2 };
	static const int16_t shares[] = { 100, 250, 300, 500, 700, 750, 800 };
	static const int share_w[] = { 5, 15, 10, 30, 10, 20, 10 };
	int big = 0, small = 0;
	int h = gf_cluster_find_model(c, "h100-sxm");
	int a = gf_cluster_find_model(c, "a100-80gb");
	int l = gf_cluster_find_model(c, "l4");
	int t = gf_cluster_find_model(c, "t4");
	if (h >= 0)
		big |= 1 << h;
	if (a >= 0)
		big |= 1 << a;
	if (l >= 0)
		small |= 1 << l;
	if (t >= 0)
		small |= 1 << t;
	int key_big = gf_workload_spec_key(w, "h100-sxm|a100-80gb");
	int key_small = gf_workload_spec_key(w, "l4|t4");
	if (key_big < 0 || key_small < 0)
		return GF_ETOOBIG;
	struct gf_rng r;
	gf_rng_seed(&r, seed);
	for (int i = 0; i < n; i++) {
		struct gf_req q = { .cpu = 0 };
		int kind = pick(&r, kind_w, 6);
		int cores;
		switch (kind) {
		case 0:
			cores = 2 + (int)gf_rng_below(&r, 31);
			break;
		case 1:
			q.ngpus = 1;
			q.gpu_milli = shares[pick(&r, share_w, 7)];
			cores = 2 + (int)gf_rng_below(&r, 7);
			if (gf_rng_below(&r, 4) == 0) { /* inference tier */
				q.spec = (uint32_t)small;
				q.spec_key = (uint16_t)key_small;
			}
			break;
		case 2:
			q.ngpus = 1;
			q.gpu_milli = GF_GPU_MILLI;
			cores = 4 + (int)gf_rng_below(&r, 13);
			break;
		default:
			q.ngpus = (uint16_t)(kind == 3 ? 2 : kind == 4 ? 4 : 8);
			q.gpu_milli = GF_GPU_MILLI;
			cores = q.ngpus * (8 + (int)gf_rng_below(&r, 9));
			if (q.ngpus == 8) {
				q.spec = (uint32_t)big;
				q.spec_key = (uint16_t)key_big;
			}
			break;
		}
		q.cpu = cores * 1000;
		q.mem = (int64_t)cores * 4096 *
			(1 + (int64_t)gf_rng_below(&r, 4));
		char name[GF_REQ_NAME_MAX];
		gf_note(name, sizeof(name), "syn-%08d", i);
		if (gf_workload_add(w, name, &q) < 0)
			return GF_ETOOBIG;
	}
	return 0;
}
