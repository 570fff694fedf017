/*
 * jobs_nodes.h - internal to src/core/jobs (jobs_nodes.c): the nodes as
 * the core keeps them beside the cluster (struct gf__nodes: what the
 * caller said of each, its state, the name index, the blocks), and nodes
 * at run time: added, updated, reshaped.
 */
#ifndef GF_CORE_JOBS_JOBS_NODES_H
#define GF_CORE_JOBS_JOBS_NODES_H

#include <stdbool.h>
#include <stdint.h>

#include <gpufleet/cluster.h>
#include <gpufleet/ctl.h>
#include <gpufleet/mig.h>

#include "util/hash.h"

struct gf_ctl;

/* A node's state (jobs_health.c). */
enum gf__nstate {
	GF__READY = 0,
	GF__WAITING, /* added, never ready since: restored jobs may run */
	GF__LOST,    /* made not ready: holds no running replica */
};

#define GF__WHY_MAX 96 /* a GPU's health reason */

/* What the core keeps per node beside gf_ctl_node. */
struct gf__node {
	const struct gf_mig_model *mig; /* its MIG model; NULL none */
	uint16_t sick;			/* unhealthy GPUs */
	uint16_t mig_gpus;		/* GPUs holding MIG instances */
	uint8_t state;			/* enum gf__nstate */
	int nrep;	       /* replicas of running jobs placed on it */
	int grp;	       /* admission group (admit.c) */
	int bpos;	       /* index in its block's node list */
	uint64_t down_epoch;   /* epoch when it stopped being ready */
	bool cordon;	       /* cordoned (gf_ctl_node_cordon): nothing new */
	uint64_t cordon_epoch; /* epoch when it was cordoned */
	bool drain;	       /* drained by an operator (gf_ctl_node_drain) */
	uint64_t drain_epoch;  /* epoch when it was drained */
	uint64_t sick_epoch[GF_CNODE_MAX_GPUS]; /* ... a GPU became sick */
	char reason[GF_JOB_REASON_MAX];		/* why not ready */
	char (*gpu_why)[GF__WHY_MAX]; /* per GPU, why sick; NULL none */
};

struct gf__block {
	int *nodes;
	int n;
	size_t cap;
	int64_t idle;  /* free GPU milli of its nodes */
	int64_t nfree; /* fully free GPUs */
};

struct gf__nodes {
	struct gf_ctl_node *cfg; /* per node (cap): as the caller said */
	struct gf__node *ns;	 /* per node (cap) */
	int cap;		 /* room in the per-node arrays */
	struct gf_hmap names;	 /* node names (jobs_find.c) */
	int name_n;		 /* nodes 0..name_n-1 are in it */
	struct gf__block *blk;	 /* GF_CTL_MAX_BLOCKS entries */
	int nblk;		 /* = cfg.nblocks */
	uint64_t epoch; /* bumped when a node or GPU stops taking work */
};

/* The block node i is in. */
static inline struct gf__block *gf__block_of(const struct gf__nodes *nd, int i)
{
	return &nd->blk[nd->cfg[i].block];
}

/* Node i (n: its engine node) joins its block's list and figures. */
void gf__block_join(struct gf__nodes *nd, const struct gf_cnode *n, int i);
/* The per-node arrays and the blocks freed; n: the nodes in them. */
void gf__nodes_free(struct gf__nodes *nd, int n);
/* Room in every per-node array of the core for n nodes. */
void gf__nodes_reserve(struct gf_ctl *ctl, int n);

#endif
