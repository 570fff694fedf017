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
	return 0;
}

void gf_sched_release(struct gf_sched *s)
{
	gf_free(s->frag);
	gf_free(s->cache);
	gf_free(s->scratch);
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

int gf_sched_place(struct gf_sched *s, const struct gf_req *r,
		   struct gf_placement *out)
{
	struct gf_cluster *c = s->c;
	int best = -1, best_score = INT_MIN, best_gpu = -1, nfeas = 0;
	uint32_t best_rank = UINT32_MAX;
	for (int i = 0; i < c->n; i++) {
		const struct gf_cnode *n = &c->nodes[i];
		if (!gf_cnode_fits(n, r))
			continue;
		if (s->policy == GF_POLICY_RANDOM) {
			s->scratch[nfeas++] = i;
			continue;
		}
		nfeas++;
		int gpu;
		int sc = gf_sched_score(s, i, r, &gpu);
		if (sc > best_score ||
		    (sc == best_score && n->rank < best_rank)) {
			best = i;
			best_score = sc;
			best_rank = n->rank;
			best_gpu = gpu;
		}
	}
	if (nfeas == 0)
		return GF_ENOTFOUND;
	if (s->policy == GF_POLICY_RANDOM) {
		best = s->scratch[gf_rng_below(&s->rng, (uint64_t)nfeas)];
		best_score = 0;
	}
	struct gf_cnode *n = &c->nodes[best];
	out->node = best;
	out->score = best_score;
	choose_gpus(s, n, r, best_gpu, out);
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
	return 0;
}
