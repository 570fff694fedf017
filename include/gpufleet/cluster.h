/*
 * cluster.h - the placement model: nodes with CPU, memory and GPUs whose
 * free share is counted in milli (1000 = a whole GPU), and requests.
 *
 * Kept apart from node.h (one machine's topology, ~100 KiB) because the
 * scheduler and the simulator hold ten thousand of these: a gf_cnode is
 * 120 bytes, the fields every scan reads in its first 40.  GPU models are small
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

#include <gpufleet/req.h>

#define GF_MAX_MODELS	  32
#define GF_MODEL_NAME_MAX 32
#define GF_NODE_NAME_MAX  48
#define GF_MAX_CNODES	  1000000

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
	uint16_t topo; /* index into the cluster's GPU topologies; 0: none */
	uint16_t gpu_pods;
	uint32_t tags; /* GpuClustering: kinds of GPU pods present */
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
	/* GPU topologies nodes point at (gf_cnode.topo = index + 1); owned,
	 * shared between nodes of one shape */
	struct gf_gpu_topo *topos;
	int ntopos;
};

void gf_cluster_init(struct gf_cluster *c);
void gf_cluster_release(struct gf_cluster *c);

/* Id of a model name, adding it; GF_ETOOBIG past GF_MAX_MODELS. */
int gf_cluster_model(struct gf_cluster *c, const char *name);
/* Id of a known model, or -1. */
int gf_cluster_find_model(const struct gf_cluster *c, const char *name);

/*
 * Add an empty node; returns its index or GF_ETOOBIG / GF_EINVAL (more
 * than GF_CNODE_MAX_GPUS GPUs, negative capacity).
 */
int gf_cluster_add(struct gf_cluster *c, const char *name, int32_t cpu,
		   int64_t mem, int ngpus, int model);

/*
 * Give node i the GPU topology t (copied; nodes of one shape share one
 * entry).  GF_EINVAL when t's GPU count is not the node's.
 */
int gf_cluster_set_topo(struct gf_cluster *c, int i,
			const struct gf_gpu_topo *t);

/* Free every node (keep nodes and ranks). */
void gf_cluster_reset(struct gf_cluster *c);

/* Sum of free GPU milli on a node (the "L" of the FGD paper). */
static inline int32_t gf_cnode_gpu_idle(const struct gf_cnode *n)
{
	return n->idle;
}

/* Recompute idle, max_left and nfree after gpu_left was edited directly. */
void gf_cnode_sync(struct gf_cnode *n);

/* Number of GPUs with at least `milli` free. */
int gf_cnode_gpus_with(const struct gf_cnode *n, int milli);

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
 * Apply a placement: take r's CPU, memory and r->gpu_milli from each GPU
 * in gpus[0..r->ngpus).  The caller has checked that it fits.
 */
void gf_cnode_take(struct gf_cnode *n, const struct gf_req *r, const int *gpus);

/*
 * Undo gf_cnode_take(n, r, gpus): give r's CPU, memory and shares back.
 * The caller guarantees the placement is on n (GF_EINVAL otherwise, and n
 * is unchanged: a share would pass 1000, a count would go negative).
 */
int gf_cnode_give(struct gf_cnode *n, const struct gf_req *r, const int *gpus);

/* Consistency (free <= capacity, GPU shares in 0..1000); 0 or GF_EINVAL. */
int gf_cluster_check(const struct gf_cluster *c, char *msg, unsigned size);

#endif
