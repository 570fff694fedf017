/*
 * sched.h - the placement engine: filter, score, select, in the
 * vocabulary of the Kubernetes scheduling framework; and release.
 *
 *   filter  nodes with the CPU, memory, GPU model and GPU shares asked for
 *   score   one policy of the table below, an integer 0..100 per node
 *   select  the highest score; ties go to the node with the smallest rank
 *           (a fixed per-run permutation, never per-decision randomness)
 *
 * Then the GPUs within the node: a multi-GPU request on a node whose GPU
 * topology is known takes the best connected free set (gpu_topo.h); a
 * fractional one the policy's choice (FGD: the GPU it scored; Random: a
 * random one) or best fit (the GPU with the least free share that fits,
 * lowest index on ties); otherwise the lowest-index free GPUs.
 * The policies are exactly those of reference/fgd-experiment.md section
 * 1.3, integer truncation of scores included.
 *
 * Work leaves with gf_sched_unplace(): placing requests and unplacing
 * them, in any order, leaves the engine exactly as it was (node totals,
 * buckets, fragmentation, score cache); gf_sched_check() verifies it, and
 * debug builds (GF_DEBUG) run it as they go.
 *
 * Nodes may come and change while it runs (gf_sched_add_node,
 * gf_sched_reshape); a GPU may be held out of placement (disabled, or in
 * MIG mode: gf_sched_hold_gpu) and a node cordoned (gf_sched_cordon), both
 * exact and reversible while work comes and goes: holding, cordoning,
 * placing and unplacing in any order, then giving everything back, leave
 * the engine exactly as it was.
 *
 * The engine does no I/O and draws randomness only from its seeded
 * generator, so the simulator and the controller run this same code.
 * One gf_sched per cluster; not thread-safe.
 */
#ifndef GPUFLEET_SCHED_H
#define GPUFLEET_SCHED_H

#include <stdbool.h>

#include <gpufleet/cluster.h>
#include <gpufleet/err.h>
#include <gpufleet/frag.h>
#include <gpufleet/req.h>

/*
 * The policy table: one row per policy.  Adding a policy is one row here
 * and one file, src/core/place/policy_<name>.c, that defines
 *   int gf__score_<name>(struct gf__scoring *at, request): the score of
 *       node at->n, 0..100 (at: the engine, the node, its F); for a
 *       fractional request it may set at->gpu (-1 on entry, best fit) to
 *       the GPU the request takes if the node is chosen.
 *   X(ENUM, name, label, flags)
 * flags: GF_POLICY_DRAWS (no score: the engine draws a feasible node
 * uniformly, and a fractional request's GPU among those with room),
 * GF_POLICY_NEEDS_TYPICAL (reads the typical workload),
 * GF_POLICY_CACHED (scores are cached per node and request class),
 * GF_POLICY_LOOKAHEAD (the engine keeps the look-ahead figures of the
 * typical mix and the cluster, src/core/place/lookahead.c, and adds the
 * per-model pressure term at select, outside the cache).
 * A score is an int in -32768..32767 (the cache keeps 16 bits).
 */
#define GF_POLICY_TABLE(X)                                             \
	X(RANDOM, random, "Random", GF_POLICY_DRAWS)                   \
	X(DOTPROD, dotprod, "DotProd", 0)                              \
	X(CLUSTERING, clustering, "Clustering", 0)                     \
	X(PACKING, packing, "Packing", 0)                              \
	X(BESTFIT, bestfit, "BestFit", 0)                              \
	X(FGD, fgd, "FGD", GF_POLICY_NEEDS_TYPICAL | GF_POLICY_CACHED) \
	X(FGDPLUS, fgdplus, "FGD+",                                    \
	  GF_POLICY_NEEDS_TYPICAL | GF_POLICY_CACHED | GF_POLICY_LOOKAHEAD)

enum gf_policy_flags {
	GF_POLICY_DRAWS = 1 << 0,
	GF_POLICY_NEEDS_TYPICAL = 1 << 1,
	GF_POLICY_CACHED = 1 << 2, /* its score is worth caching */
	GF_POLICY_LOOKAHEAD = 1 << 3,
};

enum gf_policy {
#define GF__POLICY_ENUM(e, n, l, f) GF_POLICY_##e,
	GF_POLICY_TABLE(GF__POLICY_ENUM)
#undef GF__POLICY_ENUM
		GF_POLICY_COUNT
};

/* "random", "dotprod", "clustering", "packing", "bestfit", "fgd",
 * "fgdplus". */
const char *gf_policy_name(enum gf_policy p);
/* The paper's label: "Random", "DotProd", ..., "FGD"; ours "FGD+". */
const char *gf_policy_label(enum gf_policy p);
/* Parse a name (case-insensitive); GF_ENOTFOUND when unknown. */
int gf_policy_parse(const char *s, enum gf_policy *out) GF_MUST_CHECK;
/* p's flags (enum gf_policy_flags). */
unsigned gf_policy_flags(enum gf_policy p);

struct gf_sched; /* opaque */

/*
 * A scheduler for cluster c (borrowed; its ranks set by the caller).
 * typ/ntyp: the typical mix (borrowed), needed by FGD and by the
 * fragmentation figures; may be NULL/0 otherwise.  nclasses: the number
 * of request classes (gf_req.cls < nclasses).  Returns 0 with *out set
 * (free with gf_sched_free), or GF_EINVAL (unknown policy, no classes, a
 * policy that needs the typical mix without one).
 */
int gf_sched_new(struct gf_cluster *c, enum gf_policy policy,
		 const struct gf_typical *typ, int ntyp, int nclasses,
		 uint64_t seed, struct gf_sched **out) GF_MUST_CHECK;
void gf_sched_free(struct gf_sched *s);

/*
 * Place r: filter, score, select, choose GPUs, and commit the placement
 * to the cluster.  Returns 0 (out filled) or GF_ENOTFOUND when no node
 * fits (the cluster is unchanged).
 */
int gf_sched_place(struct gf_sched *s, const struct gf_req *r,
		   struct gf_placement *out) GF_MUST_CHECK;

/*
 * Place r on one of the nodes whose allowed[i] is non-zero (a block, a
 * pool, a node selector); allowed NULL is every node.  As
 * gf_sched_place otherwise.
 */
int gf_sched_place_in(struct gf_sched *s, const struct gf_req *r,
		      const uint8_t *allowed,
		      struct gf_placement *out) GF_MUST_CHECK;

/*
 * CPU work apart (off at gf_sched_new: the simulator's experiments place
 * as their papers do; the controller turns it on): a request without GPU
 * goes to a node without GPU when one fits (among the allowed ones), and
 * only then to a GPU node, taking there no more than what its free GPUs
 * keep leaves (gf_cpu_kept, gf_mem_kept in cluster.h).  Requests with
 * GPUs, gf_sched_commit (what ran stays) and unplacing are not changed.
 */
void gf_sched_set_cpu_apart(struct gf_sched *s, bool on);

/*
 * FGD+'s temperature T, in GPU milli (FGD's is 1000): its score is
 * trunc(100 sigma(drop / T)), and the weight of its per-model pressure
 * is that score's slope at the middle, 25 / T (policy_fgdplus.c).  A
 * run-time setting (`simulate fill --fgdplus-t`, serve's `fgdplus_t`);
 * docs/placement.md says how the default was chosen.  Returns 0, or
 * GF_EINVAL for a T not in [GF_FGDPLUS_T_MIN, GF_FGDPLUS_T_MAX] (s kept).
 * Other policies keep it and ignore it.
 */
#define GF_FGDPLUS_T_DEFAULT 1250.0
#define GF_FGDPLUS_T_MIN     10.0
#define GF_FGDPLUS_T_MAX     100000.0
int gf_sched_set_fgdplus_t(struct gf_sched *s, double t) GF_MUST_CHECK;

/*
 * FGD+ without some of its terms, for ablation (`simulate fill|replay
 * --fgdplus-without`): a mask of the terms left out (0: none, the
 * default).  The score's FGD part always stays.  Other policies keep it
 * and ignore it.  GF_EINVAL for a bit outside GF_FGDPLUS_ALL (s kept).
 */
#define GF_FGDPLUS_STRANDED 1u /* idle GPU the free CPU cannot feed */
#define GF_FGDPLUS_PACKING  2u /* a share's packing loss */
#define GF_FGDPLUS_PRESSURE 4u /* restricted demand's pressure */
#define GF_FGDPLUS_ALL	    7u
int gf_sched_set_fgdplus_without(struct gf_sched *s,
				 unsigned without) GF_MUST_CHECK;
/* "stranded,packing" into a mask: 0, or GF_EINVAL (a word unknown). */
int gf_fgdplus_terms_parse(const char *list, unsigned *mask) GF_MUST_CHECK;

/*
 * The whole request mix (borrowed; gf_typical_build with coverage 1.0),
 * beside the typical one: what FGD+'s per-model pressure reads, so that
 * every model's restricted demand counts, not only the part inside the
 * typical 95 % (a model whose restricted requests are each rare would
 * read 0 and draw the others' work).  NULL/0: the typical mix.
 */
void gf_sched_set_mix(struct gf_sched *s, const struct gf_typical *mix,
		      int nmix);

/*
 * Give r a class id (r->cls) by its shape (CPU, GPU share, GPU count),
 * the same id for the same shape, growing the score cache as new shapes
 * come: for callers whose requests are not known in advance (the
 * controller).  Ids given at gf_sched_new (0..nclasses-1) stay the
 * caller's.  Past the cache's limit a request gets an id that bypasses
 * the cache (scores are computed afresh, results unchanged).
 */
void gf_sched_classify(struct gf_sched *s, struct gf_req *r);

/*
 * Replace the typical workload (borrowed) the fragmentation is measured
 * against: every node's F is recomputed and the score cache emptied.
 * GF_EINVAL when the policy needs one and ntyp <= 0.
 */
int gf_sched_set_typical(struct gf_sched *s, const struct gf_typical *typ,
			 int ntyp) GF_MUST_CHECK;

/*
 * Give back what gf_sched_place(s, r, p) took: the same r and p.
 * Returns 0, or GF_EINVAL when p cannot be r's placement on this cluster
 * (nothing changes).
 */
int gf_sched_unplace(struct gf_sched *s, const struct gf_req *r,
		     const struct gf_placement *p) GF_MUST_CHECK;

/*
 * Commit a placement chosen elsewhere (a restart restoring what ran, a
 * binding made by another scheduler): node and GPUs as in p, on a
 * cordoned node or held GPUs too (what already runs there).  Returns 0,
 * or GF_EINVAL when r does not fit there (nothing changes).
 */
int gf_sched_commit(struct gf_sched *s, const struct gf_req *r,
		    const struct gf_placement *p) GF_MUST_CHECK;

/*
 * A node added to the cluster at run time, empty (gf_cluster_add's
 * arguments; its rank is its index): the engine's per-node arrays and
 * score cache grow (amortized O(classes)).  Its index, or GF_EINVAL /
 * GF_ETOOBIG as gf_cluster_add.  Give it a GPU topology afterwards with
 * gf_cluster_set_topo if known.
 */
int gf_sched_add_node(struct gf_sched *s, const char *name, int32_t cpu,
		      int64_t mem, int ngpus, int model) GF_MUST_CHECK;

/*
 * Node i rebuilt with a new shape (gf_cluster_reshape): it must hold no
 * work (GF_ECONFLICT otherwise: CPU, memory or a GPU still taken);
 * its holds and GPU topology go, its cordon stays.  GF_EINVAL for a bad
 * index or shape.
 */
int gf_sched_reshape(struct gf_sched *s, int node, int32_t cpu, int64_t mem,
		     int ngpus, int model) GF_MUST_CHECK;

/*
 * Hold GPU gpu of node out of placement, or give it back (cluster.h,
 * gf_cnode_hold): while held it gets nothing new, whole, shared or
 * committed by gf_sched_place; work already there stays and may leave.
 * Its free share counts in gf_sched_held_milli, neither idle nor
 * allocated.  Idempotent; GF_EINVAL for a bad index.
 */
int gf_sched_hold_gpu(struct gf_sched *s, int node, int gpu,
		      bool hold) GF_MUST_CHECK;

/*
 * Cordon node (nothing new is placed on it: the filter never sees it) or
 * uncordon it.  Work on it stays and may leave; gf_sched_commit may still
 * restore work there (it places what already runs).  GF_EINVAL for a bad
 * index.
 */
int gf_sched_cordon(struct gf_sched *s, int node, bool cordon) GF_MUST_CHECK;
bool gf_sched_is_cordoned(const struct gf_sched *s, int node);

/* Score of node i for r under the policy (r must fit); GPU choice in *gpu
 * for policies that pick one while scoring, else -1.  For tests. */
int gf_sched_score(struct gf_sched *s, int i, const struct gf_req *r, int *gpu);

/* The same score computed afresh: reads the engine and changes nothing,
 * not even the score cache (r->cls is not read), so several readers may
 * ask at once while nothing changes the engine. */
int gf_sched_score_peek(const struct gf_sched *s, int i, const struct gf_req *r,
			int *gpu);

/*
 * A count bumped whenever a node's score may change while its version
 * (gf_cnode.version) does not: the typical mix replaced
 * (gf_sched_set_typical: F and FGD+'s lookahead move with it) or FGD+'s
 * settings changed (gf_sched_set_fgdplus_t, _without): exactly when
 * the score cache is emptied.  A score computed by gf_sched_score_peek
 * is that of the node's state again while both its version and this
 * count are the same.
 */
uint64_t gf_sched_score_gen(const struct gf_sched *s);

/* Figures the simulator and the controller read. */
int64_t gf_sched_alloc_milli(const struct gf_sched *s); /* GPU given out */
int64_t gf_sched_idle_milli(const struct gf_sched *s);	/* GPU free */
int64_t gf_sched_held_milli(const struct gf_sched *s);	/* free, held */
double gf_sched_frag_total(const struct gf_sched *s);	/* sum of F */
double gf_sched_frag_node(const struct gf_sched *s, int node);
enum gf_policy gf_sched_policy(const struct gf_sched *s);
const struct gf_cluster *gf_sched_cluster(const struct gf_sched *s);

/*
 * Consistency (SQLite-style): cluster invariants (held GPUs included),
 * every node in the bucket its state says (cordoned ones apart),
 * fragmentation and totals (idle, held, given out) equal to a fresh
 * computation, every valid score-cache slot equal to a fresh score.
 * Returns 0, or GF_EINVAL with msg naming the first broken invariant.
 */
int gf_sched_check(const struct gf_sched *s, char *msg,
		   unsigned size) GF_MUST_CHECK;

#endif
