/*
 * advise.h - placement advice for a Slurm cluster from a snapshot of it
 * (snapshot.h): GPU fragmentation per node and per partition by FGD's
 * measure (frag.h), and for each pending job (or a request shape) the
 * node and GPU indexes where it fragments least, best connected.
 *
 * The answer is the placement engine's (sched.h), the same one `gpufleet
 * serve` and the simulator run: a cluster of the snapshot's nodes, the
 * allocated GPUs and CPUs committed, unusable nodes cordoned, the FGD
 * policy against the typical mix of the snapshot's own jobs (their GPUs
 * and CPUs per node; a mix of 1, 2, 4 and 8 GPUs when there are none),
 * and on nodes whose GPU topology is given, the GPU set gpu_topo.h
 * chooses (weakest pair first, then the most NVLink).  Pending jobs are
 * placed in priority order, each on what the ones before it left, as
 * the queue would start them; a request shape is tried alone.
 *
 * Pure: no I/O.  Lifecycle: gf_slurm_advice_release().
 */
#ifndef GF_SLURM_ADVISE_H
#define GF_SLURM_ADVISE_H

#include <stdbool.h>
#include <stdint.h>

#include <gpufleet/err.h>
#include <gpufleet/frag.h>
#include <gpufleet/gpu_topo.h>

#include "slurm/snapshot.h"

#define GF_SLURM_SHAPES_MAX 16
#define GF_SLURM_PROP_NODES 16 /* nodes one proposal lists */

struct gf_slurm_advise_opts {
	/* the GPU topology of nodes with as many GPUs (NULL: unknown) */
	const struct gf_gpu_topo *topo;
	double coverage; /* of the typical mix; 0 means 0.95 */
	uint32_t job;	 /* 0: every pending job; else this one only */
	/* request shapes to try instead of (with njob 0: besides) jobs */
	int nshapes;
	int shape_gpus[GF_SLURM_SHAPES_MAX];
	int shape_cpus;		     /* per node; 0 means 1 */
	const char *shape_partition; /* NULL: any node */
	bool shapes_only;	     /* no pending jobs */
};

struct gf_slurm_part_frag {
	char name[GF_SLURM_NAME_MAX];
	int nodes, gpus, free;
	double frag; /* sum of its nodes' F, in GPUs */
};

struct gf_slurm_proposal {
	uint32_t job; /* 0: a request shape */
	char partition[GF_SLURM_PARTS_MAX];
	int gpus_per_node, nodes, cpus_per_node;
	bool placed;
	char why[160];		       /* when not placed */
	int node[GF_SLURM_PROP_NODES]; /* snapshot node indexes */
	int gpu[GF_SLURM_PROP_NODES][GF_CNODE_MAX_GPUS];
	double dfrag; /* the rise of F over its nodes, in GPUs */
	int min_pair; /* weakest pair quality (GF_GQ_*), -1 unknown */
	int sum_pair; /* gpu_topo's sum of pair qualities */
};

struct gf_slurm_advice {
	double *node_frag; /* per snapshot node, in GPUs; NaN: left out */
	int *node_free;	   /* free GPUs (usable nodes), per node */
	struct gf_slurm_part_frag *parts;
	int nparts;
	struct gf_slurm_proposal *props;
	int nprops;
	struct gf_typical *typ; /* the mix F is measured against */
	int ntyp;
	int typ_jobs; /* jobs it was built from (0: the default mix) */
	double frag;  /* cluster total, in GPUs */
	int free, gpus;
	char notes[4][160];
	int nnotes;
};

/*
 * Advise on s.  0, or GF_EINVAL (e says: a job that is not pending, no
 * node), GF_ENOTFOUND for an unknown job id.  On success out is owned by
 * the caller (gf_slurm_advice_release).
 */
int gf_slurm_advise(const struct gf_slurm_snapshot *s,
		    const struct gf_slurm_advise_opts *o,
		    struct gf_slurm_advice *out,
		    struct gf_err *e) GF_MUST_CHECK;
void gf_slurm_advice_release(struct gf_slurm_advice *a);

/* "NV18", "PIX", "SYS" for a pair quality (GF_GQ_*); "-" for < 1. */
void gf_slurm_quality_name(int q, char *out, unsigned size);

#endif
