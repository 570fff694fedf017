/*
 * cluster.h - the placement model: nodes with CPU, memory and GPUs whose
 * free share is counted in milli (1000 = a whole GPU), and requests.
 *
 * Kept apart from node.h (one machine's topology, ~100 KiB) because the
 * scheduler and the simulator hold ten thousand of these: a gf_cnode is
 * 120 bytes, the fields every scan reads in its first 40 (a held GPU's
 * withheld share lives beside it, in the cluster: 32 bytes more per node
 * cost the engine 6 % of its churn speed).  GPU models are small
 * integers into the cluster's model table (trace codes like "G2" or catalog
 * ids); a request's allowed models are a bit mask over that table.
 *
 * Lifecycle: gf_cluster_init() on caller storage, gf_cluster_release().
 * Not thread-safe: a simulation run owns its cluster.
 */
#ifndef GPUFLEET_CLUSTER_H
#define GPUFLEET_CLUSTER_H

#include <stdbool.h>
#include <stdint.h>

#include <gpufleet/err.h>
#include <gpufleet/req.h>

#define GF_MAX_MODELS	  32
#define GF_MODEL_NAME_MAX 32
#define GF_NODE_NAME_MAX  48
#define GF_MAX_CNODES	  1000000
#define GF_CLUSTER_LOG	  1024 /* changes gf_cluster.changed keeps */

/* gf_cnode.flags */
enum gf_cnode_flags {
	/* the engine gives it nothing new (its node is not ready): the
	 * filter never sees it; what runs there stays and may leave */
	GF_CNODE_CORDONED = 1 << 0,
};

struct gf_cnode {
	/* read by the filter and the select step for every candidate:
	 * first, together in one cache line */
	int64_t mem_left; /* MiB */
	int32_t cpu_left; /* milli-CPUs */
	uint32_t version; /* bumped on every change */
	uint32_t rank;	  /* tie-break: the smaller wins; unique per run */
	/* kept by gf_cnode_take / gf_cnode_sync, so the filter and the
	 * scores need no pass over the GPUs: */
	int32_t idle;	  /* sum of gpu_left (the paper's L) */
	int16_t max_left; /* largest gpu_left */
	uint8_t nfree;	  /* GPUs with 1000 free */
	uint8_t model;
	uint8_t ngpus;
	uint8_t flags; /* enum gf_cnode_flags */
	uint16_t topo; /* index into the cluster's GPU topologies; 0: none */
	uint16_t gpu_pods;
	uint16_t held_gpus; /* GPUs held out (bit g): their gpu_left is 0 */
	uint32_t tags;	    /* GpuClustering: kinds of GPU pods present */
	int16_t gpu_left[GF_CNODE_MAX_GPUS]; /* milli free per GPU */
	/* read when a node is chosen or changes */
	int64_t mem_cap;
	int32_t cpu_cap;
	/* GPU pods per tag (0: shares, k: k whole GPUs), so that a pod
	 * leaving clears its tag only when it was the last of its kind */
	uint16_t tag_pods[GF_CNODE_MAX_GPUS + 1];
};

struct gf_gpu_topo;

struct gf_cluster {
	struct gf_cnode *nodes;
	char (*names)[GF_NODE_NAME_MAX];
	int n;
	int cap;
	char models[GF_MAX_MODELS][GF_MODEL_NAME_MAX];
	int nmodels;
	int64_t gpu_milli_total;
	/* per node, a held GPU's free share, withheld from its gpu_left
	 * (0 when not held): what a disabled GPU or one in MIG mode would
	 * have free (gf_cluster_hold) */
	int16_t (*held)[GF_CNODE_MAX_GPUS];
	/* GPU topologies nodes point at (gf_cnode.topo = index + 1); owned,
	 * shared between nodes of one shape */
	struct gf_gpu_topo *topos;
	int ntopos;
	/* The nodes changed, in order: every change that bumps a node's
	 * version or changes its flags (this file's functions,
	 * gf_cluster_changed) appends the node's index, the k-th change at
	 * changed[k % GF_CLUSTER_LOG], the last GF_CLUSTER_LOG kept;
	 * gf_cluster_reset counts as more than that.  For readers that keep
	 * answers per node (the Kubernetes extender): what changed since
	 * they last read nchanged. */
	uint64_t nchanged;
	int32_t changed[GF_CLUSTER_LOG];
};

/* Node i's flags changed by its owner (the engine's cordon): logged. */
void gf_cluster_changed(struct gf_cluster *c, int i);

void gf_cluster_init(struct gf_cluster *c);
void gf_cluster_release(struct gf_cluster *c);

/* Id of a model name, adding it; GF_ETOOBIG past GF_MAX_MODELS. */
int gf_cluster_model(struct gf_cluster *c, const char *name) GF_MUST_CHECK;
/* Id of a known model, or -1. */
int gf_cluster_find_model(const struct gf_cluster *c, const char *name);

/*
 * Add an empty node; returns its index or GF_ETOOBIG / GF_EINVAL (more
 * than GF_CNODE_MAX_GPUS GPUs, negative capacity).
 */
int gf_cluster_add(struct gf_cluster *c, const char *name, int32_t cpu,
		   int64_t mem, int ngpus, int model) GF_MUST_CHECK;

/*
 * Give node i the GPU topology t (copied; nodes of one shape share one
 * entry), or none for t NULL.  GF_EINVAL when t's GPU count is not the
 * node's; GF_ETOOBIG past 65,534 distinct topologies.
 */
int gf_cluster_set_topo(struct gf_cluster *c, int i,
			const struct gf_gpu_topo *t) GF_MUST_CHECK;

/* Free every node (keep nodes and ranks; holds and cordons cleared). */
void gf_cluster_reset(struct gf_cluster *c);

/*
 * Give node i a new shape, empty: capacity, GPUs and model as
 * gf_cluster_add takes them; its name, rank and flags stay, its holds
 * and GPU topology go.  The caller has emptied it (the engine's
 * gf_sched_reshape checks).  GF_EINVAL as gf_cluster_add.
 */
int gf_cluster_reshape(struct gf_cluster *c, int i, int32_t cpu, int64_t mem,
		       int ngpus, int model) GF_MUST_CHECK;

/* Sum of free GPU milli on a node (the "L" of the FGD paper). */
static inline int32_t gf_cnode_gpu_idle(const struct gf_cnode *n)
{
	return n->idle;
}

/* Recompute idle, max_left and nfree after gpu_left was edited directly. */
void gf_cnode_sync(struct gf_cnode *n);

/* GPU g of node i: its free share, held or not. */
static inline int gf_cluster_gpu_free(const struct gf_cluster *c, int i, int g)
{
	const struct gf_cnode *n = &c->nodes[i];
	if (n->held_gpus >> g & 1)
		return c->held[i][g];
	return n->gpu_left[g];
}

/* The free share withheld on node i's held GPUs. */
int32_t gf_cluster_held(const struct gf_cluster *c, int i);

/*
 * Hold GPU g of node i (g < ngpus) out of placement, or give it back: a
 * held GPU's free share moves to held[i][g] and its gpu_left reads 0, so
 * the filter, every policy, the buckets and fragmentation treat it as
 * taken; work placed on it before stays, and leaving gives its share
 * back to held[i][g] (gf_cluster_give); giving the GPU back returns it to
 * gpu_left.  Holding a held GPU (or freeing a free one) changes nothing.
 */
void gf_cluster_hold(struct gf_cluster *c, int i, int g, bool hold);

/* Number of GPUs with at least `milli` free. */
int gf_cnode_gpus_with(const struct gf_cnode *n, int milli);

/* The node's wholly free GPUs (bit g: GPU g). */
uint32_t gf_cnode_free_mask(const struct gf_cnode *n);

/* The filter: CPU, memory, model and GPU shares (whole or fractional). */
static inline bool gf_cnode_fits(const struct gf_cnode *n,
				 const struct gf_req *r)
{
	if (n->cpu_left < r->cpu || n->mem_left < r->mem)
		return false;
	if (r->ngpus == 0)
		return true;
	if (r->spec && !(r->spec & (UINT32_C(1) << n->model)))
		return false;
	if (r->gpu_milli >= GF_GPU_MILLI)
		return n->nfree >= r->ngpus;
	/* fractional: one GPU */
	return n->max_left >= r->gpu_milli;
}

/*
 * CPU work apart (the controller's rule, docs/placement.md): a GPU node
 * keeps, for its free GPUs, half of each one's even share of the node's
 * CPU and memory, counted in milli of free GPU: a node of cpu_cap and
 * mem_cap with ngpus GPUs of which free_milli is free keeps
 * cpu_cap * free_milli / (ngpus * 1000) / 2 (memory likewise), so an
 * idle 8-GPU node of 64 cores lends 32 to jobs without GPU, and 4 of its
 * GPUs busy lend 48 less what their jobs took.  A node without GPU keeps
 * nothing.  Pure.
 */
#define GF_CPU_KEEP_DIV 2 /* the share a free GPU keeps: 1/2 */
static inline int32_t gf_cpu_kept(int32_t cpu_cap, int ngpus,
				  int32_t free_milli)
{
	if (ngpus <= 0 || free_milli <= 0)
		return 0;
	return (int32_t)((int64_t)cpu_cap * free_milli /
			 ((int64_t)ngpus * GF_GPU_MILLI * GF_CPU_KEEP_DIV));
}
static inline int64_t gf_mem_kept(int64_t mem_cap, int ngpus,
				  int32_t free_milli)
{
	if (ngpus <= 0 || free_milli <= 0)
		return 0;
	return mem_cap * free_milli /
	       ((int64_t)ngpus * GF_GPU_MILLI * GF_CPU_KEEP_DIV);
}

/* Whether a request without GPU fits node n beyond what its free GPUs
 * keep (the filter, and the rule above). */
static inline bool gf_cnode_fits_apart(const struct gf_cnode *n,
				       const struct gf_req *r)
{
	if (!gf_cnode_fits(n, r))
		return false;
	if (r->ngpus > 0 || n->ngpus == 0)
		return true;
	return n->cpu_left - r->cpu >=
		       gf_cpu_kept(n->cpu_cap, n->ngpus, n->idle) &&
	       n->mem_left - r->mem >=
		       gf_mem_kept(n->mem_cap, n->ngpus, n->idle);
}

/*
 * Apply a placement: take r's CPU, memory and r->gpu_milli from each GPU
 * in gpus[0..r->ngpus).  The caller has checked that it fits.  On a held
 * GPU the share is taken from what node i withholds (gf_cluster_take);
 * gf_cnode_take, for copies of a node, leaves a held GPU at 0.
 */
void gf_cluster_take(struct gf_cluster *c, int i, const struct gf_req *r,
		     const int *gpus);
void gf_cnode_take(struct gf_cnode *n, const struct gf_req *r, const int *gpus);

/*
 * Undo a take: give r's CPU, memory and shares back.  The caller
 * guarantees the placement is on the node (GF_EINVAL otherwise, and the
 * node is unchanged: a share would pass 1000, a count would go negative).
 * gf_cluster_give returns a held GPU's share to what node i withholds;
 * gf_cnode_give, for copies of a node (what-if trials), leaves a held GPU
 * at 0 (it gives nothing new) and cannot check that GPU's share.
 */
int gf_cluster_give(struct gf_cluster *c, int i, const struct gf_req *r,
		    const int *gpus) GF_MUST_CHECK;
int gf_cnode_give(struct gf_cnode *n, const struct gf_req *r,
		  const int *gpus) GF_MUST_CHECK;

/* Consistency (free <= capacity, GPU shares in 0..1000, a held GPU's
 * gpu_left 0 and an unheld one's held 0); 0 or GF_EINVAL. */
int gf_cluster_check(const struct gf_cluster *c, char *msg,
		     unsigned size) GF_MUST_CHECK;

#endif
