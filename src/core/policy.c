/*
 * policy.c - the scoring policies, as reference/fgd-experiment.md 1.3
 * defines them (read from the authors' simulator):
 *
 *   random      no score: the engine draws a feasible node uniformly
 *   dotprod     100 (1 - d), d = mean of cpu_left/128k * c/128k and
 *               L/8000 * k g/8000 (Tetris, normalised by the maxima)
 *   clustering  keep GPU pods of one kind together (share, k-gpu tags)
 *   packing     prefer shared GPUs, then used nodes, then free nodes
 *   bestfit     100 (1 - s), s = mean leftover CPU and GPU fraction
 *   fgd         100 sigma(dF / 1000): the drop in fragmentation
 *
 * Every score is truncated to an integer, as the Kubernetes framework
 * does; that truncation decides ties and so which node wins.
 */
#include "policy.h"

#include <math.h>

#define MAX_SCORE 100
#define CPU_NORM  128000.0
#define GPU_NORM  8000.0

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

static int score_dotprod(const struct gf_cnode *n, const struct gf_req *r)
{
	double kg = (double)r->ngpus * r->gpu_milli;
	double d = ((n->cpu_left / CPU_NORM) * (r->cpu / CPU_NORM) +
		    (gf_cnode_gpu_idle(n) / GPU_NORM) * (kg / GPU_NORM)) /
		   2.0;
	return (int)(MAX_SCORE * (1.0 - d));
}

static int score_bestfit(const struct gf_cnode *n, const struct gf_req *r)
{
	double kg = (double)r->ngpus * r->gpu_milli;
	double left = 0.5 * (n->cpu_left - r->cpu) / CPU_NORM +
		      0.5 * (gf_cnode_gpu_idle(n) - kg) / GPU_NORM;
	return (int)(MAX_SCORE * (1.0 - left));
}

static int score_clustering(const struct gf_cnode *n, const struct gf_req *r)
{
	if (r->ngpus == 0)
		return 0;
	int tag = (r->ngpus == 1 && r->gpu_milli < GF_GPU_MILLI)
			  ? 0
			  : (r->ngpus < 31 ? r->ngpus : 31);
	int base = (int)(25 * (8000 - gf_cnode_gpu_idle(n)) / 8000);
	uint32_t bit = UINT32_C(1) << tag;
	if (n->tags & bit)
		return base + ((n->tags & ~bit) ? 50 : 75);
	return base + (n->gpu_pods == 0 ? 25 : 0);
}

static int score_packing(const struct gf_cnode *n, const struct gf_req *r)
{
	if (r->ngpus == 0)
		return 0;
	int free = gf_cnode_gpus_with(n, GF_GPU_MILLI);
	if (free == n->ngpus) {
		int v = MAX_SCORE / 3 - free;
		return v > free ? v : free;
	}
	/* k GPUs in ascending order of free share, ties by index */
	int used[GF_CNODE_MAX_GPUS] = { 0 };
	int k = 0;
	bool taken[GF_CNODE_MAX_GPUS] = { false };
	while (k < r->ngpus) {
		int best = -1;
		for (int g = 0; g < n->ngpus; g++)
			if (!taken[g] && n->gpu_left[g] >= r->gpu_milli &&
			    (best < 0 || n->gpu_left[g] < n->gpu_left[best]))
				best = g;
		if (best < 0)
			return 0; /* cannot happen after the filter */
		taken[best] = true;
		used[k++] = best;
	}
	int full = 0, ratio = 0;
	for (int i = 0; i < k; i++) {
		full += n->gpu_left[used[i]] == GF_GPU_MILLI;
		ratio += n->gpu_left[used[i]] * 100 / GF_GPU_MILLI;
	}
	if (full > 0) {
		int v = MAX_SCORE / 2 - full;
		return v > MAX_SCORE / 3 ? v : MAX_SCORE / 3;
	}
	int v = MAX_SCORE - ratio / 10;
	return v > MAX_SCORE / 2 ? v : MAX_SCORE / 2;
}

static int sigmoid_score(double delta)
{
	return (int)(MAX_SCORE * (1.0 / (1.0 + exp(-delta / 1000.0))));
}

static int score_fgd(const struct gf_sched *s, const struct gf_cnode *n,
		     double frag_now, const struct gf_req *r, int *gpu)
{
	int16_t left[GF_CNODE_MAX_GPUS];
	for (int g = 0; g < n->ngpus; g++)
		left[g] = n->gpu_left[g];
	int32_t cpu = n->cpu_left - r->cpu;
	if (r->ngpus == 1 && r->gpu_milli < GF_GPU_MILLI) {
		int best = -1, best_g = -1;
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
			double after = gf_frag_state(s->typ, s->ntyp, n->model,
						     cpu, left, n->ngpus);
			left[g] = n->gpu_left[g];
			int sc = sigmoid_score(frag_now - after);
			if (sc > best) {
				best = sc;
				best_g = g;
			}
		}
		*gpu = best_g;
		return best;
	}
	int k = 0;
	for (int g = 0; g < n->ngpus && k < r->ngpus; g++)
		if (left[g] == GF_GPU_MILLI) {
			left[g] = 0;
			k++;
		}
	double after =
		gf_frag_state(s->typ, s->ntyp, n->model, cpu, left, n->ngpus);
	*gpu = -1;
	return sigmoid_score(frag_now - after);
}

int gf__policy_score(const struct gf_sched *s, const struct gf_cnode *n,
		     double frag_now, const struct gf_req *r, int *gpu)
{
	*gpu = -1;
	switch (s->policy) {
	case GF_POLICY_DOTPROD:
		return score_dotprod(n, r);
	case GF_POLICY_CLUSTERING:
		return score_clustering(n, r);
	case GF_POLICY_PACKING:
		return score_packing(n, r);
	case GF_POLICY_BESTFIT:
		return score_bestfit(n, r);
	case GF_POLICY_FGD:
		return score_fgd(s, n, frag_now, r, gpu);
	case GF_POLICY_RANDOM:
	case GF_POLICY_COUNT:
		break;
	}
	return 0;
}
