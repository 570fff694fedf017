/*
 * frag.c - fragmentation of a node against the typical request mix.
 *
 * Speed matters (the FGD policy evaluates F for every candidate node and
 * GPU of every request): the GPU shares are sorted once, descending, with
 * prefix sums, so each typical request costs a short scan instead of a
 * pass over the GPUs.
 */
#include <stdlib.h>
#include <string.h>

#include <gpufleet/err.h>
#include <gpufleet/frag.h>

#include "util/mem.h"

/* A group of requests: the typical request it becomes (p set at the
 * end), keyed by (cpu, share, GPU count, spec as written). */
struct key {
	struct gf_typical t;
	uint16_t spec_key;
	int count;
};

static int cmp_key(const void *a, const void *b)
{
	const struct key *x = a, *y = b;
	if (x->t.cpu != y->t.cpu)
		return x->t.cpu < y->t.cpu ? -1 : 1;
	if (x->t.gpu_milli != y->t.gpu_milli)
		return x->t.gpu_milli < y->t.gpu_milli ? -1 : 1;
	if (x->t.ngpus != y->t.ngpus)
		return x->t.ngpus < y->t.ngpus ? -1 : 1;
	return (x->spec_key > y->spec_key) - (x->spec_key < y->spec_key);
}

/* Most frequent first; equal counts: the larger key first. */
static int cmp_count(const void *a, const void *b)
{
	const struct key *x = a, *y = b;
	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	return -cmp_key(a, b);
}

int gf_typical_build(const struct gf_req *reqs, int n, double coverage,
		     struct gf_typical **out)
{
	if (n <= 0)
		return GF_EINVAL;
	struct key *k = gf_calloc((size_t)n, sizeof(*k));
	for (int i = 0; i < n; i++) {
		k[i].t = (struct gf_typical){ .cpu = reqs[i].cpu,
					      .gpu_milli = reqs[i].gpu_milli,
					      .ngpus = reqs[i].ngpus,
					      .spec = reqs[i].spec };
		k[i].spec_key = reqs[i].spec_key;
		k[i].count = 1;
	}
	qsort(k, (size_t)n, sizeof(*k), cmp_key);
	int u = 0;
	for (int i = 0; i < n; i++) {
		if (u > 0 && cmp_key(&k[u - 1], &k[i]) == 0)
			k[u - 1].count++;
		else
			k[u++] = k[i];
	}
	qsort(k, (size_t)u, sizeof(*k), cmp_count);
	int take = 0;
	long cum = 0;
	while (take < u && (double)cum < coverage * n)
		cum += k[take++].count;
	struct gf_typical *t = gf_calloc((size_t)take, sizeof(*t));
	for (int i = 0; i < take; i++) {
		t[i] = k[i].t;
		t[i].p = (double)k[i].count / (double)cum;
	}
	gf_free(k);
	*out = t;
	return take;
}

double gf_frag_state(const struct gf_typical *t, int nt, int model,
		     int32_t cpu_left, const int16_t *gpu_left, int ngpus)
{
	if (ngpus == 0)
		return 0.0;
	/* Shares sorted descending (insertion sort: at most 16) and the
	 * running sums of the largest ones. */
	int16_t s[GF_CNODE_MAX_GPUS];
	int32_t top[GF_CNODE_MAX_GPUS + 1];
	for (int i = 0; i < ngpus; i++) {
		int16_t v = gpu_left[i];
		int j = i;
		while (j > 0 && s[j - 1] < v) {
			s[j] = s[j - 1];
			j--;
		}
		s[j] = v;
	}
	top[0] = 0;
	for (int i = 0; i < ngpus; i++)
		top[i + 1] = top[i] + s[i];
	const int32_t idle = top[ngpus];
	if (idle == 0)
		return 0.0;
	const uint32_t bit = UINT32_C(1) << model;
	double f = 0.0;
	for (int m = 0; m < nt; m++) {
		const struct gf_typical *x = &t[m];
		int32_t fm = idle;
		if (x->ngpus > 0 && (x->spec == 0 || (x->spec & bit)) &&
		    cpu_left >= x->cpu) {
			int fit = 0; /* GPUs with at least the share */
			while (fit < ngpus && s[fit] >= x->gpu_milli)
				fit++;
			if (fit >= x->ngpus)
				fm = idle - top[fit];
		}
		f += x->p * fm;
	}
	return f;
}

double gf_frag_node(const struct gf_typical *t, int nt,
		    const struct gf_cnode *n)
{
	return gf_frag_state(t, nt, n->model, n->cpu_left, n->gpu_left,
			     n->ngpus);
}
