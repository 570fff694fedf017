/*
 * sched.c - the placement engine: filter, score, select, commit.
 *
 * The FGD score of a node depends only on the node's state and the
 * request's class, so it is cached per (node, class) and reused until the
 * node changes (its version moves).  Between two placements only one node
 * changes, so most lookups hit; this is what makes FGD cheap enough to
 * replay 10,000-node clusters.  The cache changes no result.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <gpufleet/err.h>
#include <gpufleet/sched.h>

#include "../util/mem.h"
#include "policy.h"

#define GF_SCHED_CACHE_MAX (32u << 20) /* slots, 8 bytes each */

struct gf_score_slot {
	uint32_t version; /* node version + 1 when valid; 0 = empty */
	int8_t score;
	int8_t gpu;
};

static const char *const names[GF_POLICY_COUNT] = {
	"random", "dotprod", "clustering", "packing", "bestfit", "fgd",
};
static const char *const labels[GF_POLICY_COUNT] = {
	"Random", "DotProd", "Clustering", "Packing", "BestFit", "FGD",
};

const char *gf_policy_name(enum gf_policy p)
{
	return (unsigned)p < GF_POLICY_COUNT ? names[p] : "?";
}

const char *gf_policy_label(enum gf_policy p)
{
	return (unsigned)p < GF_POLICY_COUNT ? labels[p] : "?";
}

int gf_policy_parse(const char *s, enum gf_policy *out)
{
	for (int i = 0; i < GF_POLICY_COUNT; i++)
		if (strcasecmp(s, names[i]) == 0) {
			*out = (enum gf_policy)i;
			return 0;
		}
	return GF_ENOTFOUND;
}

/* GPU part of a bucket: 0..NPART-1 by largest share (no free GPU; nodes
 * without GPUs in 0), NPART + k for k fully free GPUs. */
static int gpu_key(const struct gf_cnode *n)
{
	if (n->nfree > 0)
		return GF_SCHED_NPART + n->nfree;
	int b = n->max_left / GF_SCHED_PART_STEP;
	return b < GF_SCHED_NPART ? b : GF_SCHED_NPART - 1;
}

/* CPU part: 0 under one core, then 1-2, 2-4, ... cores, last 64+. */
static int cpu_key(int32_t milli)
{
	int b = 0;
	for (int32_t v = milli / 1000; v > 0 && b < GF_SCHED_NCPUB - 1; v >>= 1)
		b++;
	return b;
}

static int bucket_key(const struct gf_cnode *n)
{
	return gpu_key(n) * GF_SCHED_NCPUB + cpu_key(n->cpu_left);
}

static void bucket_add(struct gf_sched *s, int b, int node)
{
	struct gf_bucket *k = &s->buckets[b];
	if (k->n == k->cap) {
		k->cap = k->cap ? k->cap * 2 : 64;
		k->ids = gf_reallocarray(k->ids, (size_t)k->cap,
					 sizeof(*k->ids));
	}
	s->pos[node] = k->n;
	k->ids[k->n++] = node;
	s->bucket_of[node] = (uint16_t)b;
}

static void bucket_move(struct gf_sched *s, int node)
{
	int b = bucket_key(&s->c->nodes[node]), old = s->bucket_of[node];
	if (b == old)
		return;
	struct gf_bucket *k = &s->buckets[old];
	int last = k->ids[--k->n];
	k->ids[s->pos[node]] = last;
	s->pos[last] = s->pos[node];
	bucket_add(s, b, node);
}

int gf_sched_init(struct gf_sched *s, struct gf_cluster *c,
		  enum gf_policy policy, const struct gf_typical *typ, int ntyp,
		  int nclasses, uint64_t seed)
{
	if ((unsigned)policy >= GF_POLICY_COUNT || nclasses <= 0 ||
	    (policy == GF_POLICY_FGD && ntyp <= 0))
		return GF_EINVAL;
	s->c = c;
	s->policy = policy;
	s->typ = typ;
	s->ntyp = ntyp;
	s->nclasses = nclasses;
	gf_rng_seed(&s->rng, seed);
	s->frag = gf_calloc((size_t)c->n, sizeof(*s->frag));
	s->frag_total = 0;
	s->alloc_milli = 0;
	s->idle_milli = 0;
	for (int i = 0; i < c->n; i++) {
		s->frag[i] = ntyp ? gf_frag_node(typ, ntyp, &c->nodes[i]) : 0;
		s->frag_total += s->frag[i];
		s->idle_milli += gf_cnode_gpu_idle(&c->nodes[i]);
	}
	/* The cache changes no result; skip it when it would be huge (or
	 * when classes were merged for lack of ids). */
	size_t slots = (size_t)c->n * (size_t)nclasses;
	s->cache = policy == GF_POLICY_FGD && slots <= GF_SCHED_CACHE_MAX &&
				   nclasses < UINT16_MAX
			   ? gf_calloc(slots, sizeof(*s->cache))
			   : NULL;
	s->scratch = gf_calloc((size_t)c->n, sizeof(*s->scratch));
	memset(s->buckets, 0, sizeof(s->buckets));
	s->bucket_of = gf_calloc((size_t)c->n, sizeof(*s->bucket_of));
	s->pos = gf_calloc((size_t)c->n, sizeof(*s->pos));
	for (int i = 0; i < c->n; i++)
		bucket_add(s, bucket_key(&c->nodes[i]), i);
	return 0;
}

void gf_sched_release(struct gf_sched *s)
{
	gf_free(s->frag);
	gf_free(s->cache);
	gf_free(s->scratch);
	gf_free(s->bucket_of);
	gf_free(s->pos);
	for (int b = 0; b < GF_SCHED_NBUCKETS; b++)
		gf_free(s->buckets[b].ids);
}

int gf_sched_score(struct gf_sched *s, int i, const struct gf_req *r, int *gpu)
{
	const struct gf_cnode *n = &s->c->nodes[i];
	if (s->cache == NULL)
		return gf__policy_score(s, n, s->frag[i], r, gpu);
	struct gf_score_slot *slot =
		&s->cache[(size_t)i * (size_t)s->nclasses + r->cls];
	if (slot->version != n->version + 1) {
		int g;
		slot->score = (int8_t)gf__policy_score(s, n, s->frag[i], r, &g);
		slot->gpu = (int8_t)g;
		slot->version = n->version + 1;
	}
	*gpu = slot->gpu;
	return slot->score;
}

static void choose_gpus(struct gf_sched *s, const struct gf_cnode *n,
			const struct gf_req *r, int scored_gpu,
			struct gf_placement *out)
{
	out->ngpus = r->ngpus;
	if (r->ngpus == 0)
		return;
	bool partial = r->ngpus == 1 && r->gpu_milli < GF_GPU_MILLI;
	if (partial && s->policy == GF_POLICY_RANDOM) {
		int fit = gf_cnode_gpus_with(n, r->gpu_milli);
		int pick = (int)gf_rng_below(&s->rng, (uint64_t)fit);
		for (int g = 0; g < n->ngpus; g++)
			if (n->gpu_left[g] >= r->gpu_milli && pick-- == 0) {
				out->gpus[0] = g;
				return;
			}
	}
	if (partial && s->policy == GF_POLICY_FGD && scored_gpu >= 0) {
		out->gpus[0] = scored_gpu;
		return;
	}
	gf__gpus_best_fit(n, r, out->gpus);
}

/* The running best of the select step. */
struct pick {
	int node, score, gpu, nfeas;
	uint32_t rank;
};

static void consider(struct gf_sched *s, int i, const struct gf_req *r,
		     struct pick *p)
{
	const struct gf_cnode *n = &s->c->nodes[i];
	if (!gf_cnode_fits(n, r))
		return;
	if (s->policy == GF_POLICY_RANDOM) {
		s->scratch[p->nfeas++] = i;
		return;
	}
	p->nfeas++;
	int gpu;
	int sc = gf_sched_score(s, i, r, &gpu);
	if (sc > p->score || (sc == p->score && n->rank < p->rank)) {
		p->node = i;
		p->score = sc;
		p->rank = n->rank;
		p->gpu = gpu;
	}
}

/* Filter and score: visit only the buckets that may hold a fit. */
static void scan(struct gf_sched *s, const struct gf_req *r, struct pick *p)
{
	int first = r->ngpus == 0 ? 0
		    : r->gpu_milli >= GF_GPU_MILLI
			    ? GF_SCHED_NPART + r->ngpus
			    : r->gpu_milli / GF_SCHED_PART_STEP;
	int cfirst = cpu_key(r->cpu);
	for (int g = first; g < GF_SCHED_NGPUB; g++)
		for (int cb = cfirst; cb < GF_SCHED_NCPUB; cb++) {
			const struct gf_bucket *k =
				&s->buckets[g * GF_SCHED_NCPUB + cb];
			for (int j = 0; j < k->n; j++)
				consider(s, k->ids[j], r, p);
		}
}

int gf_sched_place(struct gf_sched *s, const struct gf_req *r,
		   struct gf_placement *out)
{
	struct gf_cluster *c = s->c;
	struct pick p = {
		.node = -1, .score = INT_MIN, .gpu = -1, .rank = UINT32_MAX
	};
	scan(s, r, &p);
	if (p.nfeas == 0)
		return GF_ENOTFOUND;
	if (s->policy == GF_POLICY_RANDOM) {
		p.node = s->scratch[gf_rng_below(&s->rng, (uint64_t)p.nfeas)];
		p.score = 0;
	}
	int best = p.node;
	struct gf_cnode *n = &c->nodes[best];
	out->node = best;
	out->score = p.score;
	choose_gpus(s, n, r, p.gpu, out);
	int32_t idle_before = gf_cnode_gpu_idle(n);
	gf_cnode_take(n, r, out->gpus);
	int64_t took = idle_before - gf_cnode_gpu_idle(n);
	s->alloc_milli += took;
	s->idle_milli -= took;
	if (s->ntyp) {
		s->frag_total -= s->frag[best];
		s->frag[best] = gf_frag_node(s->typ, s->ntyp, n);
		s->frag_total += s->frag[best];
	}
	bucket_move(s, best);
	return 0;
}
