/*
 * sched.h - the placement engine: filter, score, select, in the
 * vocabulary of the Kubernetes scheduling framework.
 *
 *   filter  nodes with the CPU, memory, GPU model and GPU shares asked for
 *   score   one policy from the table below, an integer 0..100 per node
 *   select  the highest score; ties go to the node with the smallest rank
 *           (a fixed per-run permutation, never per-decision randomness)
 *
 * Then the GPUs within the node: best fit (the GPU with the least free
 * share that fits, lowest index on ties; whole-GPU requests take the
 * lowest-index free GPUs), or the policy's own choice (FGD, Random).
 * The policies are exactly those of reference/fgd-experiment.md section
 * 1.3, integer truncation of scores included.
 *
 * The engine does no I/O and draws randomness only from the gf_rng it is
 * given, so the simulator runs this same code.  One gf_sched per cluster;
 * not thread-safe.
 */
#ifndef GPUFLEET_SCHED_H
#define GPUFLEET_SCHED_H

#include <gpufleet/cluster.h>
#include <gpufleet/frag.h>
#include <gpufleet/rng.h>

enum gf_policy {
	GF_POLICY_RANDOM = 0,
	GF_POLICY_DOTPROD,
	GF_POLICY_CLUSTERING,
	GF_POLICY_PACKING,
	GF_POLICY_BESTFIT,
	GF_POLICY_FGD,
	GF_POLICY_COUNT
};

/* "random", "dotprod", "clustering", "packing", "bestfit", "fgd". */
const char *gf_policy_name(enum gf_policy p);
/* The paper's label: "Random", "DotProd", ..., "FGD". */
const char *gf_policy_label(enum gf_policy p);
/* Parse a name (case-insensitive); GF_ENOTFOUND when unknown. */
int gf_policy_parse(const char *s, enum gf_policy *out);

struct gf_score_slot; /* per node and request class: cached FGD score */

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

struct gf_bucket {
	int *ids;
	int n;
	int cap;
};

struct gf_sched {
	struct gf_cluster *c; /* borrowed */
	enum gf_policy policy;
	const struct gf_typical *typ; /* borrowed; the FGD mix */
	int ntyp;
	struct gf_rng rng;
	int nclasses;
	double *frag;	   /* F per node, kept current */
	double frag_total; /* sum of frag[] */
	int64_t alloc_milli;
	int64_t idle_milli;
	struct gf_score_slot *cache; /* FGD: n * nclasses */
	int *scratch;		     /* feasible nodes (Random) */
	struct gf_bucket buckets[GF_SCHED_NBUCKETS];
	uint16_t *bucket_of; /* per node */
	int *pos;	     /* per node: index in its bucket */
};

struct gf_placement {
	int node;
	int ngpus;
	int gpus[GF_CNODE_MAX_GPUS];
	int score;
};

/*
 * Prepare a scheduler for cluster c (whose ranks the caller has set).
 * typ/ntyp: the typical mix for fragmentation (needed by FGD and by the
 * fragmentation figures; may be NULL/0 otherwise).  nclasses: the number
 * of request classes (gf_req.cls < nclasses).  Returns 0 or GF_EINVAL.
 */
int gf_sched_init(struct gf_sched *s, struct gf_cluster *c,
		  enum gf_policy policy, const struct gf_typical *typ, int ntyp,
		  int nclasses, uint64_t seed);
void gf_sched_release(struct gf_sched *s);

/*
 * Place r: filter, score, select, choose GPUs, and commit the placement
 * to the cluster.  Returns 0 (out filled) or GF_ENOTFOUND when no node
 * fits (the cluster is unchanged).
 */
int gf_sched_place(struct gf_sched *s, const struct gf_req *r,
		   struct gf_placement *out);

/* Score of node i for r under the policy (r must fit); GPU choice in *gpu
 * for policies that pick one while scoring, else -1.  For tests. */
int gf_sched_score(struct gf_sched *s, int i, const struct gf_req *r, int *gpu);

#endif
