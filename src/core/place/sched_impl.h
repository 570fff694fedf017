/*
 * sched_impl.h - internal: the placement engine's state, shared by
 * sched.c and the policy files (policy_*.c); nothing else includes it.
 */
#ifndef GF_CORE_SCHED_IMPL_H
#define GF_CORE_SCHED_IMPL_H

#include <gpufleet/gpu_topo.h>
#include <gpufleet/rng.h>
#include <gpufleet/sched.h>

/*
 * Nodes grouped by what they can still give, so a request only visits
 * nodes that may fit it.  GPU: k fully free GPUs, or, with none free, the
 * largest free share in steps of 50 milli.  CPU: free CPU in powers of two
 * (under 1, 1-2, 2-4, ... 64+ cores).  Membership moves when a placement
 * changes a node; the visit order does not change any result.
 */
#define GF_SCHED_PART_STEP 50
#define GF_SCHED_NPART	   (GF_GPU_MILLI / GF_SCHED_PART_STEP)
#define GF_SCHED_NGPUB	   (GF_SCHED_NPART + GF_CNODE_MAX_GPUS + 1)
#define GF_SCHED_NCPUB	   8
#define GF_SCHED_NBUCKETS  (GF_SCHED_NGPUB * GF_SCHED_NCPUB)
/* Cordoned nodes sit apart, in a bucket after these that no scan visits. */
#define GF_SCHED_CORDON GF_SCHED_NBUCKETS

/* Fragmentation is summed in fixed point (2^-20 milli), so that placing
 * and unplacing return the total exactly to where it was. */
#define GF_FRAG_SCALE 1048576.0

#define GF_SCHED_CACHE_MAX (32u << 20) /* slots, 8 bytes each */

/* A request class that bypasses the score cache. */
#define GF_SCHED_NOCACHE UINT16_MAX

struct gf_bucket {
	int *ids;
	int n;
	int cap;
};

struct gf_score_slot {
	uint32_t version; /* node version + 1 when valid; 0 = empty */
	int16_t score;	  /* FGD+ goes below 0 (a packing loss) */
	int8_t gpu;
};

/*
 * FGD+ (policy_fgdplus.c): the slope of its score at the sigmoid's
 * middle, in score points per milli, for temperature t (s->fgdplus_t):
 * what the pressure term is weighed in, so that a milli displaced
 * weighs as a milli fragmented.
 */
#define GF_FGDPLUS_SLOPE(t) (25.0 / (t))

/* Distinct fractional shares the look-ahead prices (the rarest beyond
 * are priced 0). */
#define GF_LA_MAX_SHARES 64

/* Node groups the pressure is kept for: nodes of one model, GPU count
 * and CPU (a node beyond the cap joins the first group of its model;
 * room is kept for one group a model). */
#define GF_LA_MAX_GROUPS (2 * GF_MAX_MODELS)

struct gf__la_group {
	int model, ngpus;
	int32_t cpu;
};

/* What GF_POLICY_LOOKAHEAD policies read (lookahead.c says what each
 * figure is and when it changes). */
struct gf__lookahead {
	double cpu_per_milli;		/* typical CPU per GPU milli; 0 none */
	double knap[GF_GPU_MILLI + 1];	/* K(h): dual value of a free share */
	double price[GF_GPU_MILLI + 1]; /* y(s) of a typical share, else 0 */
	struct gf__la_group group[GF_LA_MAX_GROUPS];
	int ngroups;
	uint8_t *group_of;		   /* per node (room for s->ncap) */
	double share[GF_LA_MAX_GROUPS];	   /* restricted demand per group */
	double pressure[GF_LA_MAX_GROUPS]; /* share over share of idle GPU */
	int64_t gpus_by_group[GF_LA_MAX_GROUPS];
	int64_t idle_by_group[GF_LA_MAX_GROUPS]; /* milli, as s->idle_milli */
	bool dirty;	 /* share out of date (the mix, the nodes) */
	bool idle_moved; /* pressure out of date (idle GPU moved) */
	bool lp_ok;	 /* false: the solver failed, prices 0 */
};

struct gf_sched {
	struct gf_cluster *c; /* borrowed */
	enum gf_policy policy;
	const struct gf_typical *typ; /* borrowed; the FGD mix */
	int ntyp;
	const struct gf_typical *mix; /* borrowed; gf_sched_set_mix */
	int nmix;
	struct gf_rng rng;
	int nclasses;
	int ncap;	     /* room per node in the arrays below (>= c->n) */
	double *frag;	     /* F per node, kept current */
	uint64_t score_gen;  /* bumped when scores move without a node's
				version: gf_sched_score_gen */
	int64_t frag_q;	     /* sum of frag[], fixed point */
	int64_t alloc_milli; /* given out to work */
	int64_t idle_milli;  /* free on GPUs not held */
	int64_t held_milli;  /* free on held GPUs, withheld */
	struct gf_score_slot *cache; /* [class][ncap], GF_POLICY_CACHED */
	int cache_classes;	     /* classes the cache has room for */
	/* shapes gf_sched_classify() has given ids: open addressing */
	uint64_t *shape_key; /* 0: empty */
	uint16_t *shape_cls;
	int nshapes, shape_cap;
	struct gf_req *class_req; /* with the cache: a request per class,
				     so a check can score it afresh */
	int *scratch;		  /* feasible nodes (Random) */
	struct gf__lookahead *la; /* GF_POLICY_LOOKAHEAD, else NULL */
	struct gf_bucket buckets[GF_SCHED_NBUCKETS + 1]; /* + GF_SCHED_CORDON */
	uint16_t *bucket_of;				 /* per node */
	int *pos;		  /* per node: index in its bucket */
	unsigned long ops;	  /* places and unplaces, for debug checks */
	bool cpu_apart;		  /* gf_sched_set_cpu_apart */
	double fgdplus_t;	  /* gf_sched_set_fgdplus_t */
	unsigned fgdplus_without; /* gf_sched_set_fgdplus_without */
};

/*
 * One scoring of a node, what a policy's score reads: the engine, the
 * node, its F now, and the GPU a fractional request would take there if
 * the node is chosen (-1 on entry: best fit; a policy that picks the GPU
 * sets it).
 */
struct gf__scoring {
	const struct gf_sched *s;
	const struct gf_cnode *n;
	double frag_now;
	int gpu;
};

typedef int (*gf__score_fn)(struct gf__scoring *at, const struct gf_req *r);

struct gf__policy {
	const char *name, *label;
	gf__score_fn score;
	unsigned flags;
};

/* The table, in enum gf_policy order (policy.c, from GF_POLICY_TABLE). */
extern const struct gf__policy gf__policies[GF_POLICY_COUNT];

/* Each policy's score, defined in its own file. */
#define GF__POLICY_DECL(e, n, l, f) \
	int gf__score_##n(struct gf__scoring *at, const struct gf_req *r);
GF_POLICY_TABLE(GF__POLICY_DECL)
#undef GF__POLICY_DECL

/* sched.c, for sched_nodes.c: a node into the bucket its state gives
 * (new) or moved there (changed); F in fixed point; node i changed (its F,
 * its bucket); the engine's totals after node's GPUs changed from
 * idle_before and held_before; the debug builds' check of a node. */
void gf__bucket_put(struct gf_sched *s, int node);
void gf__bucket_move(struct gf_sched *s, int node);
int64_t gf__frag_fixed(double f);
void gf__sched_changed(struct gf_sched *s, int i);
void gf__sched_account(struct gf_sched *s, int node, int32_t idle_before,
		       int32_t held_before);
void gf__sched_debug_check(struct gf_sched *s, int node);

/*
 * lookahead.c: the figures of the typical mix (after it changed; the
 * caller empties the score cache); a node's group and its GPUs counted
 * in (gf__la_node_in, after the node was added or reshaped) or out
 * (gf__la_node_out, before a reshape; gf__la_count: all afresh); its
 * idle GPU milli moved by delta (as s->idle_milli moves); the per-group
 * terms a request's score loses at select (term[group], for the
 * groups; a node's is term[gf__la_group_of(s, i)]); the check of the
 * counts.
 */
void gf__la_typical(struct gf_sched *s);
void gf__la_node_in(struct gf_sched *s, int node);
void gf__la_node_out(struct gf_sched *s, int node);
void gf__la_idle(struct gf_sched *s, int node, int64_t delta);
void gf__la_count(struct gf_sched *s);
void gf__la_reserve(struct gf_sched *s, int cap);
void gf__la_terms(struct gf_sched *s, const struct gf_req *r, int *term);
static inline int gf__la_group_of(const struct gf_sched *s, int node)
{
	return s->la->group_of[node];
}
int gf__la_check(const struct gf_sched *s, char *msg, unsigned size);

/*
 * Best-fit GPUs for r on n into out[0..r->ngpus): fractional requests the
 * GPU with the least free share >= r->gpu_milli (lowest index on ties);
 * whole-GPU requests the lowest-index fully free GPUs.
 */
void gf__gpus_best_fit(const struct gf_cnode *n, const struct gf_req *r,
		       int *out);

/*
 * For the policies that score the state a request leaves (FGD, FGD+):
 * after() scores the node once r has landed, left[] its GPUs' free
 * shares and cpu its free CPU then, g the GPU a fractional request took
 * (-1 when r takes whole GPUs, the lowest-index free ones), now as given
 * to gf__score_after().  That walks the choices: a fractional request
 * tries each GPU with room (one GPU per distinct free share: an equal
 * share earlier gives the same state) and keeps the best score (the
 * lowest index on ties) and its GPU in at->gpu; `none` is the score when
 * no GPU has room.
 */
typedef int (*gf__after_fn)(const struct gf__scoring *at,
			    const struct gf_req *r, double now,
			    const int16_t *left, int32_t cpu, int g);
int gf__score_after(struct gf__scoring *at, const struct gf_req *r, double now,
		    gf__after_fn after, int none);

/* The GPU a fractional request takes on node n under a policy that draws
 * (GF_POLICY_DRAWS): one with room, uniformly (policy_random.c). */
int gf__gpu_draw(struct gf_sched *s, const struct gf_cnode *n,
		 const struct gf_req *r);

#endif
