/*
 * sched.c - the placement engine: filter, score, select, commit, release.
 *
 * The FGD score of a node depends only on the node's state and the
 * request's class, so it is cached per (node, class) and reused until the
 * node changes (its version moves).  Between two placements only one node
 * changes, so most lookups hit; this is what makes FGD cheap enough to
 * replay 10,000-node clusters.  The cache changes no result.  It is laid
 * out class by class: a request's scan reads one class's slots, which stay
 * in cache together (20 % more placements per second than node by node).
 *
 * Invariants (gf_sched_check): every node sits in the bucket its state
 * gives (a cordoned node in GF_SCHED_CORDON, which no scan visits), at
 * pos[node]; frag[i] is F of node i now and frag_q their sum in fixed
 * point; alloc_milli + idle_milli + held_milli is the cluster's GPU
 * capacity, idle_milli the nodes' free GPU and held_milli the free share
 * of their held GPUs; a cache slot whose version matches its node holds
 * that node's score now.  The per-node arrays have room for ncap >= c->n
 * nodes (the cache is [class][ncap]), so nodes added at run time
 * (sched_nodes.c) cost amortized O(classes).  Every change goes through
 * commit() or release() here, or the node changes of sched_nodes.c,
 * which keep them; debug builds (GF_DEBUG) check the touched node after
 * each change and everything every 1024 changes.
 */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gpufleet/err.h>

#include "core/place/sched_impl.h"
#include "util/check.h"
#include "util/fmt.h"
#include "util/mem.h"

_Static_assert(GF_GPU_TOPO_MAX == GF_CNODE_MAX_GPUS,
	       "a GPU topology describes a placement node's GPUs");

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
	if (n->flags & GF_CNODE_CORDONED)
		return GF_SCHED_CORDON;
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

void gf__bucket_put(struct gf_sched *s, int node)
{
	bucket_add(s, bucket_key(&s->c->nodes[node]), node);
}

void gf__bucket_move(struct gf_sched *s, int node)
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

int64_t gf__frag_fixed(double f)
{
	return llround(f * GF_FRAG_SCALE);
}

int gf_sched_new(struct gf_cluster *c, enum gf_policy policy,
		 const struct gf_typical *typ, int ntyp, int nclasses,
		 uint64_t seed, struct gf_sched **out)
{
	*out = NULL;
	if ((unsigned)policy >= GF_POLICY_COUNT || nclasses <= 0 ||
	    ((gf_policy_flags(policy) & GF_POLICY_NEEDS_TYPICAL) && ntyp <= 0))
		return GF_EINVAL;
	struct gf_sched *s = gf_calloc(1, sizeof(*s));
	s->c = c;
	s->policy = policy;
	s->fgdplus_t = GF_FGDPLUS_T_DEFAULT;
	s->typ = typ;
	s->ntyp = ntyp;
	s->nclasses = nclasses;
	gf_rng_seed(&s->rng, seed);
	s->ncap = c->n > 0 ? c->n : 16;
	s->frag = gf_calloc((size_t)s->ncap, sizeof(*s->frag));
	for (int i = 0; i < c->n; i++) {
		s->frag[i] = ntyp ? gf_frag_node(typ, ntyp, &c->nodes[i]) : 0;
		s->frag_q += gf__frag_fixed(s->frag[i]);
		int idle = gf_cnode_gpu_idle(&c->nodes[i]);
		int held = gf_cluster_held(c, i);
		s->idle_milli += idle;
		s->held_milli += held;
		s->alloc_milli +=
			c->nodes[i].ngpus * GF_GPU_MILLI - idle - held;
	}
	/* The cache changes no result; skip it when it would be huge (or
	 * when classes were merged for lack of ids). */
	size_t slots = (size_t)s->ncap * (size_t)nclasses;
	if ((gf_policy_flags(policy) & GF_POLICY_CACHED) &&
	    slots <= GF_SCHED_CACHE_MAX && nclasses < GF_SCHED_NOCACHE) {
		s->cache = gf_calloc(slots, sizeof(*s->cache));
		s->class_req =
			gf_calloc((size_t)nclasses, sizeof(*s->class_req));
		s->cache_classes = nclasses;
	}
	s->scratch = gf_calloc((size_t)s->ncap, sizeof(*s->scratch));
	if (gf_policy_flags(policy) & GF_POLICY_LOOKAHEAD) {
		s->la = gf_calloc(1, sizeof(*s->la));
		gf__la_reserve(s, s->ncap);
		gf__la_count(s);
		gf__la_typical(s);
	}
	s->bucket_of = gf_calloc((size_t)s->ncap, sizeof(*s->bucket_of));
	s->pos = gf_calloc((size_t)s->ncap, sizeof(*s->pos));
	for (int i = 0; i < c->n; i++)
		gf__bucket_put(s, i);
	*out = s;
	return 0;
}

void gf_sched_free(struct gf_sched *s)
{
	if (s == NULL)
		return;
	gf_free(s->frag);
	gf_free(s->cache);
	gf_free(s->class_req);
	gf_free(s->shape_key);
	gf_free(s->shape_cls);
	gf_free(s->scratch);
	if (s->la)
		gf_free(s->la->group_of);
	gf_free(s->la);
	gf_free(s->bucket_of);
	gf_free(s->pos);
	for (int b = 0; b <= GF_SCHED_NBUCKETS; b++)
		gf_free(s->buckets[b].ids);
	gf_free(s);
}

int64_t gf_sched_alloc_milli(const struct gf_sched *s)
{
	return s->alloc_milli;
}

int64_t gf_sched_idle_milli(const struct gf_sched *s)
{
	return s->idle_milli;
}

int64_t gf_sched_held_milli(const struct gf_sched *s)
{
	return s->held_milli;
}

double gf_sched_frag_total(const struct gf_sched *s)
{
	return (double)s->frag_q / GF_FRAG_SCALE;
}

double gf_sched_frag_node(const struct gf_sched *s, int node)
{
	return node >= 0 && node < s->c->n ? s->frag[node] : 0.0;
}

int gf_sched_set_fgdplus_without(struct gf_sched *s, unsigned without)
{
	if (without & ~GF_FGDPLUS_ALL)
		return GF_EINVAL;
	s->fgdplus_without = without;
	s->score_gen++;
	if (s->cache) /* FGD+'s scores move with its terms */
		memset(s->cache, 0,
		       (size_t)s->ncap * (size_t)s->cache_classes *
			       sizeof(*s->cache));
	return 0;
}

int gf_fgdplus_terms_parse(const char *list, unsigned *mask)
{
	static const char *const names[] = { "stranded", "packing",
					     "pressure" };
	*mask = 0;
	for (const char *p = list; *p;) {
		size_t n = strcspn(p, ",");
		unsigned bit = 0;
		for (unsigned k = 0; k < 3 && !bit; k++)
			if (strlen(names[k]) == n && !strncmp(p, names[k], n))
				bit = 1u << k;
		if (!bit)
			return GF_EINVAL;
		*mask |= bit;
		p += n + (p[n] == ',');
	}
	return 0;
}

void gf_sched_set_cpu_apart(struct gf_sched *s, bool on)
{
	s->cpu_apart = on;
}

void gf_sched_set_mix(struct gf_sched *s, const struct gf_typical *mix,
		      int nmix)
{
	s->mix = nmix > 0 ? mix : NULL;
	s->nmix = nmix > 0 ? nmix : 0;
	if (s->la)
		s->la->dirty = true;
}

int gf_sched_set_fgdplus_t(struct gf_sched *s, double t)
{
	if (!(t >= GF_FGDPLUS_T_MIN && t <= GF_FGDPLUS_T_MAX))
		return GF_EINVAL;
	s->fgdplus_t = t;
	s->score_gen++;
	if (s->cache) /* FGD+'s scores move with T */
		memset(s->cache, 0,
		       (size_t)s->ncap * (size_t)s->cache_classes *
			       sizeof(*s->cache));
	return 0;
}

enum gf_policy gf_sched_policy(const struct gf_sched *s)
{
	return s->policy;
}

const struct gf_cluster *gf_sched_cluster(const struct gf_sched *s)
{
	return s->c;
}

static int policy_score(const struct gf_sched *s, int i, const struct gf_req *r,
			int *gpu)
{
	struct gf__scoring at = { s, &s->c->nodes[i], s->frag[i], -1 };
	int sc = gf__policies[s->policy].score(&at, r);
	*gpu = at.gpu;
	return sc;
}

/* The score through the cache; inlined into the scan, its hot loop. */
static inline int cached_score(struct gf_sched *s, int i,
			       const struct gf_req *r, int *gpu)
{
	const struct gf_cnode *n = &s->c->nodes[i];
	if (s->cache == NULL || r->cls >= s->nclasses)
		return policy_score(s, i, r, gpu);
	struct gf_score_slot *slot =
		&s->cache[(size_t)r->cls * (size_t)s->ncap + (size_t)i];
	if (slot->version != n->version + 1) {
		int g;
		s->class_req[r->cls] = *r;
		slot->score = (int16_t)policy_score(s, i, r, &g);
		slot->gpu = (int8_t)g;
		slot->version = n->version + 1;
	}
	*gpu = slot->gpu;
	return slot->score;
}

int gf_sched_score(struct gf_sched *s, int i, const struct gf_req *r, int *gpu)
{
	int sc = cached_score(s, i, r, gpu);
	if (s->la) {
		int term[GF_LA_MAX_GROUPS];
		gf__la_terms(s, r, term);
		sc -= term[gf__la_group_of(s, i)];
	}
	return sc;
}

int gf_sched_score_peek(const struct gf_sched *s, int i, const struct gf_req *r,
			int *gpu)
{
	return policy_score(s, i, r, gpu);
}

uint64_t gf_sched_score_gen(const struct gf_sched *s)
{
	return s->score_gen;
}

static uint64_t shape_of(const struct gf_req *r)
{
	/* +1: no shape is 0, the empty mark */
	return ((uint64_t)(uint32_t)r->cpu << 32 |
		(uint64_t)(uint16_t)r->gpu_milli << 16 | r->ngpus) +
	       1;
}

/* Room for one more class in the cache: [class][node] grows at its end. */
static bool cache_grow(struct gf_sched *s)
{
	if (s->cache == NULL) /* refused at creation: too large */
		return false;
	if (s->nclasses < s->cache_classes)
		return true;
	int want = s->cache_classes ? s->cache_classes * 2 : 16;
	size_t n = (size_t)s->ncap;
	if (want >= GF_SCHED_NOCACHE || n * (size_t)want > GF_SCHED_CACHE_MAX)
		return false;
	s->cache =
		gf_reallocarray(s->cache, n * (size_t)want, sizeof(*s->cache));
	memset(s->cache + n * (size_t)s->cache_classes, 0,
	       n * (size_t)(want - s->cache_classes) * sizeof(*s->cache));
	s->class_req = gf_reallocarray(s->class_req, (size_t)want,
				       sizeof(*s->class_req));
	s->cache_classes = want;
	return true;
}

void gf_sched_classify(struct gf_sched *s, struct gf_req *r)
{
	if (!(gf__policies[s->policy].flags & GF_POLICY_CACHED)) {
		r->cls = GF_SCHED_NOCACHE;
		return;
	}
	if (2 * (s->nshapes + 1) > s->shape_cap) {
		int cap = s->shape_cap ? s->shape_cap * 2 : 64;
		uint64_t *key = gf_calloc((size_t)cap, sizeof(*key));
		uint16_t *cls = gf_calloc((size_t)cap, sizeof(*cls));
		for (int i = 0; i < s->shape_cap; i++) {
			if (!s->shape_key[i])
				continue;
			size_t h = (size_t)(s->shape_key[i] *
					    UINT64_C(0x9e3779b97f4a7c15)) %
				   (size_t)cap;
			while (key[h])
				h = (h + 1) % (size_t)cap;
			key[h] = s->shape_key[i];
			cls[h] = s->shape_cls[i];
		}
		gf_free(s->shape_key);
		gf_free(s->shape_cls);
		s->shape_key = key;
		s->shape_cls = cls;
		s->shape_cap = cap;
	}
	uint64_t k = shape_of(r);
	size_t h = (size_t)(k * UINT64_C(0x9e3779b97f4a7c15)) %
		   (size_t)s->shape_cap;
	while (s->shape_key[h] && s->shape_key[h] != k)
		h = (h + 1) % (size_t)s->shape_cap;
	if (s->shape_key[h] == 0) {
		uint16_t id = GF_SCHED_NOCACHE;
		if (cache_grow(s))
			id = (uint16_t)s->nclasses++;
		s->shape_key[h] = k;
		s->shape_cls[h] = id;
		s->nshapes++;
	}
	r->cls = s->shape_cls[h];
}

int gf_sched_set_typical(struct gf_sched *s, const struct gf_typical *typ,
			 int ntyp)
{
	if ((gf__policies[s->policy].flags & GF_POLICY_NEEDS_TYPICAL) &&
	    ntyp <= 0)
		return GF_EINVAL;
	s->typ = typ;
	s->ntyp = ntyp;
	s->score_gen++;
	if (s->la)
		gf__la_typical(s);
	s->frag_q = 0;
	for (int i = 0; i < s->c->n; i++) {
		s->frag[i] =
			ntyp ? gf_frag_node(typ, ntyp, &s->c->nodes[i]) : 0;
		s->frag_q += gf__frag_fixed(s->frag[i]);
	}
	if (s->cache)
		memset(s->cache, 0,
		       (size_t)s->ncap * (size_t)s->cache_classes *
			       sizeof(*s->cache));
	return 0;
}

static void choose_gpus(struct gf_sched *s, const struct gf_cnode *n,
			const struct gf_req *r, int scored_gpu,
			struct gf_placement *out)
{
	out->ngpus = r->ngpus;
	if (r->ngpus == 0)
		return;
	bool partial = r->ngpus == 1 && r->gpu_milli < GF_GPU_MILLI;
	const struct gf_gpu_topo *t = n->topo > 0 && n->topo <= s->c->ntopos
					      ? &s->c->topos[n->topo - 1]
					      : NULL;
	bool multinode = r->flags & GF_REQ_MULTINODE;
	if (!partial && t && (r->ngpus > 1 || multinode) &&
	    gf_gpu_topo_choose(t, gf_cnode_free_mask(n), r->ngpus, multinode,
			       out->gpus) == 0)
		return;
	if (partial) {
		int g = gf__policies[s->policy].flags & GF_POLICY_DRAWS
				? gf__gpu_draw(s, n, r)
				: scored_gpu;
		if (g >= 0) {
			out->gpus[0] = g;
			return;
		}
	}
	gf__gpus_best_fit(n, r, out->gpus);
}

/* Which nodes a scan visits: every one; with CPU work apart, for a
 * request without GPU, the nodes without GPU, then the GPU nodes beyond
 * what their free GPUs keep. */
enum pass { PASS_ALL, PASS_CPU_NODES, PASS_GPU_NODES };

/* The running best of the select step; term: the per-model terms of a
 * GF_POLICY_LOOKAHEAD policy, else NULL. */
struct pick {
	int node, score, gpu, nfeas;
	uint32_t rank;
	const int *term;
	enum pass pass;
};

static bool pass_fits(const struct gf_cnode *n, const struct gf_req *r,
		      enum pass pass)
{
	switch (pass) {
	case PASS_CPU_NODES:
		return n->ngpus == 0 && gf_cnode_fits(n, r);
	case PASS_GPU_NODES:
		return n->ngpus > 0 && gf_cnode_fits_apart(n, r);
	default:
		return gf_cnode_fits(n, r);
	}
}

static void consider(struct gf_sched *s, int i, const struct gf_req *r,
		     struct pick *p, bool draws, const uint8_t *allowed)
{
	const struct gf_cnode *n = &s->c->nodes[i];
	if ((allowed && !allowed[i]) || !pass_fits(n, r, p->pass))
		return;
	if (draws) {
		s->scratch[p->nfeas++] = i;
		return;
	}
	p->nfeas++;
	int gpu;
	int sc = cached_score(s, i, r, &gpu);
	if (p->term)
		sc -= p->term[gf__la_group_of(s, i)];
	if (sc > p->score || (sc == p->score && n->rank < p->rank)) {
		p->node = i;
		p->score = sc;
		p->rank = n->rank;
		p->gpu = gpu;
	}
}

/* Filter and score: visit only the buckets that may hold a fit. */
static void scan(struct gf_sched *s, const struct gf_req *r, struct pick *p,
		 bool draws, const uint8_t *allowed)
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
				consider(s, k->ids[j], r, p, draws, allowed);
		}
}

void gf__sched_changed(struct gf_sched *s, int i)
{
	if (s->ntyp) {
		s->frag_q -= gf__frag_fixed(s->frag[i]);
		s->frag[i] = gf_frag_node(s->typ, s->ntyp, &s->c->nodes[i]);
		s->frag_q += gf__frag_fixed(s->frag[i]);
	}
	gf__bucket_move(s, i);
}

static int check_node(const struct gf_sched *s, int i, char *msg,
		      unsigned size);

void gf__sched_debug_check(struct gf_sched *s, int node)
{
#if GF_DEBUG
	char msg[256];
	int rc = check_node(s, node, msg, sizeof(msg));
	if (rc == 0 && (++s->ops & 1023) == 0)
		rc = gf_sched_check(s, msg, sizeof(msg));
	if (rc)
		gf_check_failed("placement engine", msg);
#else
	(void)s;
	(void)node;
#endif
}

/* Node i's free GPU before a change: on its GPUs, and withheld. */
struct before {
	int32_t idle, held;
};

static int32_t held_of(const struct gf_cluster *c, int i)
{
	return c->nodes[i].held_gpus ? gf_cluster_held(c, i) : 0;
}

static struct before before_of(const struct gf_cluster *c, int i)
{
	return (struct before){ gf_cnode_gpu_idle(&c->nodes[i]),
				held_of(c, i) };
}

void gf__sched_account(struct gf_sched *s, int node, int32_t idle_before,
		       int32_t held_before)
{
	const struct gf_cnode *n = &s->c->nodes[node];
	int64_t idle = gf_cnode_gpu_idle(n) - idle_before;
	int64_t held = held_of(s->c, node) - held_before;
	s->idle_milli += idle;
	s->held_milli += held;
	s->alloc_milli -= idle + held;
	gf__la_idle(s, node, idle);
}

static void commit(struct gf_sched *s, int node, const struct gf_req *r,
		   const int *gpus)
{
	struct before b = before_of(s->c, node);
	gf_cluster_take(s->c, node, r, gpus);
	gf__sched_account(s, node, b.idle, b.held);
	gf__sched_changed(s, node);
	gf__sched_debug_check(s, node);
}

int gf_sched_place(struct gf_sched *s, const struct gf_req *r,
		   struct gf_placement *out)
{
	return gf_sched_place_in(s, r, NULL, out);
}

int gf_sched_place_in(struct gf_sched *s, const struct gf_req *r,
		      const uint8_t *allowed, struct gf_placement *out)
{
	bool draws = gf__policies[s->policy].flags & GF_POLICY_DRAWS;
	struct pick p = {
		.node = -1, .score = INT_MIN, .gpu = -1, .rank = UINT32_MAX
	};
	int term[GF_LA_MAX_GROUPS];
	if (s->la && !draws) {
		gf__la_terms(s, r, term);
		p.term = term;
	}
	if (s->cpu_apart && r->ngpus == 0) {
		p.pass = PASS_CPU_NODES;
		scan(s, r, &p, draws, allowed);
		if (p.nfeas == 0)
			p.pass = PASS_GPU_NODES;
	}
	if (p.nfeas == 0)
		scan(s, r, &p, draws, allowed);
	if (p.nfeas == 0)
		return GF_ENOTFOUND;
	if (draws) {
		p.node = s->scratch[gf_rng_below(&s->rng, (uint64_t)p.nfeas)];
		p.score = 0;
	}
	out->node = p.node;
	out->score = p.score;
	choose_gpus(s, &s->c->nodes[p.node], r, p.gpu, out);
	commit(s, p.node, r, out->gpus);
	return 0;
}

/* Whether p names distinct GPUs of node n, as many as r asks for. */
static bool valid_gpus(const struct gf_cnode *n, const struct gf_req *r,
		       const struct gf_placement *p)
{
	if (p->ngpus != r->ngpus || r->ngpus > n->ngpus)
		return false;
	uint32_t seen = 0;
	for (int i = 0; i < p->ngpus; i++) {
		int g = p->gpus[i];
		if (g < 0 || g >= n->ngpus || (seen >> g & 1))
			return false;
		seen |= UINT32_C(1) << g;
	}
	return true;
}

int gf_sched_commit(struct gf_sched *s, const struct gf_req *r,
		    const struct gf_placement *p)
{
	if (p->node < 0 || p->node >= s->c->n)
		return GF_EINVAL;
	const struct gf_cnode *n = &s->c->nodes[p->node];
	if (!valid_gpus(n, r, p) || n->cpu_left < r->cpu ||
	    n->mem_left < r->mem ||
	    (r->spec && r->ngpus && !(r->spec & (UINT32_C(1) << n->model))))
		return GF_EINVAL;
	for (int i = 0; i < p->ngpus; i++) /* held GPUs too: what ran */
		if (gf_cluster_gpu_free(s->c, p->node, p->gpus[i]) <
		    r->gpu_milli)
			return GF_EINVAL;
	commit(s, p->node, r, p->gpus);
	return 0;
}

int gf_sched_unplace(struct gf_sched *s, const struct gf_req *r,
		     const struct gf_placement *p)
{
	if (p->node < 0 || p->node >= s->c->n)
		return GF_EINVAL;
	struct gf_cnode *n = &s->c->nodes[p->node];
	if (!valid_gpus(n, r, p))
		return GF_EINVAL;
	struct before b = before_of(s->c, p->node);
	int rc = gf_cluster_give(s->c, p->node, r, p->gpus);
	if (rc)
		return rc;
	gf__sched_account(s, p->node, b.idle, b.held);
	gf__sched_changed(s, p->node);
	gf__sched_debug_check(s, p->node);
	return 0;
}

/* The invariants of one node (see the top of this file). */
static int check_node(const struct gf_sched *s, int i, char *msg, unsigned size)
{
	const struct gf_cnode *n = &s->c->nodes[i];
	int b = s->bucket_of[i];
	if (b != bucket_key(n) || s->pos[i] < 0 ||
	    s->pos[i] >= s->buckets[b].n || s->buckets[b].ids[s->pos[i]] != i) {
		gf_note(msg, size,
			"node %d: not in bucket %d where its state "
			"puts it",
			i, bucket_key(n));
		return GF_EINVAL;
	}
	if (s->ntyp && s->frag[i] != gf_frag_node(s->typ, s->ntyp, n)) {
		gf_note(msg, size, "node %d: fragmentation %.6f out of date", i,
			s->frag[i]);
		return GF_EINVAL;
	}
	for (int k = 0; s->cache && k < s->nclasses && k < s->cache_classes;
	     k++) {
		const struct gf_score_slot *slot =
			&s->cache[(size_t)k * (size_t)s->ncap + (size_t)i];
		if (slot->version != n->version + 1)
			continue;
		/* the slot was filled for a request of class k: a fresh
		 * score of that request must agree */
		int g, sc = policy_score(s, i, &s->class_req[k], &g);
		if (sc != slot->score || g != slot->gpu) {
			gf_note(msg, size,
				"node %d: cache slot %d holds score %d gpu "
				"%d, the node scores %d gpu %d now",
				i, k, slot->score, slot->gpu, sc, g);
			return GF_EINVAL;
		}
	}
	return 0;
}

int gf_sched_check(const struct gf_sched *s, char *msg, unsigned size)
{
	int rc = gf_cluster_check(s->c, msg, size);
	if (rc)
		return rc;
	int64_t idle = 0, held = 0, cap = 0, frag_q = 0;
	int members = 0;
	for (int b = 0; b <= GF_SCHED_NBUCKETS; b++)
		members += s->buckets[b].n;
	if (members != s->c->n) {
		gf_note(msg, size, "buckets hold %d nodes, the cluster %d",
			members, s->c->n);
		return GF_EINVAL;
	}
	for (int i = 0; i < s->c->n; i++) {
		rc = check_node(s, i, msg, size);
		if (rc)
			return rc;
		idle += gf_cnode_gpu_idle(&s->c->nodes[i]);
		held += gf_cluster_held(s->c, i);
		cap += (int64_t)s->c->nodes[i].ngpus * GF_GPU_MILLI;
		frag_q += gf__frag_fixed(s->frag[i]);
	}
	if (idle != s->idle_milli || held != s->held_milli ||
	    cap - idle - held != s->alloc_milli) {
		gf_note(msg, size,
			"GPU totals: idle %lld held %lld alloc %lld, nodes "
			"say idle %lld held %lld of %lld",
			(long long)s->idle_milli, (long long)s->held_milli,
			(long long)s->alloc_milli, (long long)idle,
			(long long)held, (long long)cap);
		return GF_EINVAL;
	}
	if (frag_q != s->frag_q) {
		gf_note(msg, size, "fragmentation total out of date");
		return GF_EINVAL;
	}
	if (s->la && (rc = gf__la_check(s, msg, size)) != 0)
		return rc;
	if (size)
		msg[0] = '\0';
	return 0;
}
