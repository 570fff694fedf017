/*
 * snapshot.h - what `gpufleet slurm advise` knows of a Slurm cluster at
 * one instant: its nodes (GPUs, which of them are allocated, CPUs, state,
 * partitions) and its jobs (running and pending, their GPU and CPU
 * request per node).  Filled from slurmctld through libslurm
 * (slurm/slurm_api.h), or from the saved output of `scontrol -o show node` and
 * `scontrol -d -o show job` (for tests, and for clusters whose libslurm
 * is not the one gpufleet was built with).
 *
 * Slurm's strings are parsed here once: a GRES list as slurmctld writes
 * it ("gpu:h100:8(S:0-1)", "gpu:h100:2(IDX:0-1)", "gpu:4"), and a job's
 * TRES request ("gres:gpu:h100:2" in 22.05, "gres/gpu:2" later).
 *
 * Lifecycle: gf_slurm_snapshot_init(), gf_slurm_snapshot_release().
 */
#ifndef GF_SLURM_SNAPSHOT_H
#define GF_SLURM_SNAPSHOT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <gpufleet/err.h>

#define GF_SLURM_NAME_MAX  64
#define GF_SLURM_PARTS_MAX 256
#define GF_SLURM_GPUS_MAX  64 /* GPUs of one node (a bit each) */
#define GF_SLURM_NODES_MAX 100000
#define GF_SLURM_JOBS_MAX  1000000

struct gf_slurm_node {
	char name[GF_SLURM_NAME_MAX];
	char partitions[GF_SLURM_PARTS_MAX]; /* "gpu,debug" */
	char gpu_type[GF_SLURM_NAME_MAX];    /* "" untyped */
	int ngpus;			     /* from its Gres */
	uint64_t used;			     /* bit g: GPU g allocated */
	int cpus, cpus_alloc;
	bool unusable; /* down, drained, draining, not responding */
	char state[32];
};

struct gf_slurm_job {
	uint32_t id;
	bool pending; /* else running (other states are not kept) */
	char partition[GF_SLURM_PARTS_MAX]; /* pending: may be a list */
	char gpu_type[GF_SLURM_NAME_MAX];   /* "" any */
	int nodes;			    /* nodes asked for (or held) */
	int gpus_per_node;		    /* 0: a CPU-only job */
	int cpus_per_node;
	uint32_t priority;
	char nodelist[GF_SLURM_PARTS_MAX]; /* running: where */
};

struct gf_slurm_snapshot {
	struct gf_slurm_node *nodes;
	int nnodes;
	size_t nodes_cap;
	struct gf_slurm_job *jobs;
	int njobs;
	size_t jobs_cap;
	char source[128]; /* "slurmctld (libslurm 22.05)", file names */
};

void gf_slurm_snapshot_init(struct gf_slurm_snapshot *s);
void gf_slurm_snapshot_release(struct gf_slurm_snapshot *s);

/* Append a copy; its index, or GF_ETOOBIG past the caps. */
int gf_slurm_snapshot_add_node(struct gf_slurm_snapshot *s,
			       const struct gf_slurm_node *n) GF_MUST_CHECK;
int gf_slurm_snapshot_add_job(struct gf_slurm_snapshot *s,
			      const struct gf_slurm_job *j) GF_MUST_CHECK;
/* Index of the node named name, or -1. */
int gf_slurm_snapshot_find(const struct gf_slurm_snapshot *s, const char *name);

/*
 * A GRES list: the GPU count (summed over "gpu" entries), the type of the
 * first typed one ("" when none) and the union of their IDX lists
 * (bit g).  Entries of other names (mps, shard) are skipped.  0, or
 * GF_EPARSE / GF_ERANGE (an index of GF_SLURM_GPUS_MAX or more).
 */
int gf_slurm_parse_gres(const char *s, int *count, char *type, unsigned tsize,
			uint64_t *idx) GF_MUST_CHECK;

/*
 * A TRES request list ("cpu=2,gres:gpu:h100:2", "gres/gpu:2"): the GPU
 * count and type of its gpu entry; 0 GPUs when it has none.  0 or
 * GF_EPARSE.
 */
int gf_slurm_parse_tres_gpus(const char *s, int *count, char *type,
			     unsigned tsize) GF_MUST_CHECK;

/*
 * Saved `scontrol -o show node` (one node per line, Key=Value words) and
 * `scontrol -d -o show job` output: NodeName, CPUTot, CPUAlloc, Gres,
 * GresUsed, Partitions, State; JobId, JobState, Partition, Priority,
 * NumNodes, NumCPUs, TresPerNode / TresPerJob, NodeList.  Errors name the
 * file and line.  jobs_path may be NULL.
 */
int gf_slurm_snapshot_read_scontrol(struct gf_slurm_snapshot *s,
				    const char *nodes_path,
				    const char *jobs_path,
				    struct gf_err *e) GF_MUST_CHECK;

/* Whether a comma list ("gpu,debug") holds name. */
bool gf_slurm_list_has(const char *list, const char *name);

#endif
