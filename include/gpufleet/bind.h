/*
 * bind.h - the aligned set for a job's GPUs: the CPUs local to them (all,
 * or a fair share of N), their NUMA memory node(s), their nearest NIC(s),
 * and the environment that makes CUDA, NCCL and UCX use exactly those.
 * Pure: computed from a finished node; applying it is the adapter's job.
 */
#ifndef GPUFLEET_BIND_H
#define GPUFLEET_BIND_H

#include <stdbool.h>

#include <gpufleet/err.h>
#include <gpufleet/node.h>

#define GF_BIND_MAX_ENV	    6
#define GF_BIND_MAX_REASONS 8

struct gf_bind_request {
	int gpus[GF_MAX_GPUS]; /* GPU indexes (NVML order) */
	int ngpus;
	int cpus;	 /* 0: every local CPU; N: N logical CPUs */
	char chose[256]; /* why these GPUs (gf_bind_choose_gpus), or "" */
};

struct gf_bind_plan {
	int gpus[GF_MAX_GPUS];
	int ngpus;
	struct gf_bitmap cpus;
	struct gf_bitmap mems;
	int nics[GF_MAX_NICS];
	int nnics;
	bool spans_numa; /* the GPUs are local to different NUMA sets */
	bool locality_known;
	char env_name[GF_BIND_MAX_ENV][32];
	char env_value[GF_BIND_MAX_ENV][1024];
	int nenv;
	char reasons[GF_BIND_MAX_REASONS][256];
	int nreasons;
};

/*
 * Compute the plan.  Errors (e->msg says which): GF_ERANGE for a GPU index
 * outside the node, GF_EINVAL for a repeated GPU or an empty list, for
 * more CPUs than the GPUs' localities hold, or GPUs without locality when
 * CPUs are asked for.
 */
int gf_bind_plan(const struct gf_node *n, const struct gf_bind_request *r,
		 struct gf_bind_plan *p, struct gf_err *e) GF_MUST_CHECK;

/*
 * Choose the best connected `count` GPUs of n not set in busy (the score
 * of gpu_topo.h: the weakest pair first, then the most NVLink) into r,
 * and say why in r->chose.  Errors: GF_EINVAL for a count of 0 or one
 * larger than the node's free GPUs (e->msg says how many are free),
 * GF_ETOOBIG for a node of more than 16 GPUs.
 */
int gf_bind_choose_gpus(const struct gf_node *n, int count,
			const struct gf_bitmap *busy, struct gf_bind_request *r,
			struct gf_err *e) GF_MUST_CHECK;

/*
 * The share of task `task` (0 <= task < ntasks) of tasks that split the
 * CPUs in `cpus` fairly: whole cores, dealt out in order, task i taking
 * cores [i*C/T, (i+1)*C/T) of the C cores; when there are fewer cores
 * than tasks, task i shares core i*C/T.  A core's hardware threads stay
 * together; a PU whose core is unknown counts as a core.  out is empty
 * only when cpus is.
 */
void gf_bind_split(const struct gf_node *n, const struct gf_bitmap *cpus,
		   int ntasks, int task, struct gf_bitmap *out);

/* The distinct cores of cpus (a PU whose core is unknown counts as one):
 * their number, and each one's first PU in order into first[] when not
 * NULL (GF_BITMAP_BITS entries at most). */
int gf_bind_cores(const struct gf_node *n, const struct gf_bitmap *cpus,
		  int *first);

/* Parse "0,1,4-5" into r->gpus.  GF_EPARSE / GF_ETOOBIG. */
int gf_bind_parse_gpus(const char *s, struct gf_bind_request *r) GF_MUST_CHECK;

#endif
