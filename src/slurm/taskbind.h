/*
 * taskbind.h - what the SPANK plugin decides for one task of a Slurm job
 * step, kept apart from Slurm's API so that it is tested without Slurm:
 * the --gpufleet-bind value, the task's GPUs from Slurm's environment,
 * and the binding: the plan of `gpufleet bind` (bind.h, the same
 * planner), narrowed to the CPUs Slurm allocated to the step and split
 * fairly between the step's tasks that share the GPUs.
 *
 * GPU numbers: SLURM_STEP_GPUS (SLURM_JOB_GPUS in a batch step) holds
 * global GPU ids, the N of each gres File=/dev/nvidiaN, which `gpufleet
 * slurm gres` writes as the GPU's index in PCI bus order; they are node
 * GPU indexes.  CUDA_VISIBLE_DEVICES holds the same ids without device
 * confinement and ids relative to the step's list under cgroup
 * ConstrainDevices (slurm.conf(5), gres.conf(5)); a task list that is not
 * a subset of the step's is read as relative.
 *
 * CPU numbers: S_STEP_ALLOC_CORES lists Slurm's abstract core ids, mapped
 * to OS CPUs through the node model (slurm/gres.h).
 *
 * Pure: no I/O, no Slurm call.
 */
#ifndef GF_SLURM_TASKBIND_H
#define GF_SLURM_TASKBIND_H

#include <stdbool.h>
#include <stddef.h>

#include <gpufleet/bind.h>
#include <gpufleet/err.h>
#include <gpufleet/node.h>

enum gf_tb_mode {
	GF_TB_NONE = 0, /* leave the task as Slurm set it */
	GF_TB_NIC,	/* only the NIC variables */
	GF_TB_CLOSEST,	/* CPUs, memory and NIC local to the GPUs */
};

struct gf_tb_opts {
	enum gf_tb_mode mode;
	bool verbose; /* say the binding on the task's stderr */
	bool strict;  /* fail the task when it cannot be bound */
};

/*
 * Parse "closest", "nic", "none", "verbose" (= verbose,closest), with the
 * modifiers "verbose," and "strict," before a mode, as Slurm's own
 * --cpu-bind and --gpu-bind take "verbose,".  0, or -1 with why set.
 */
int gf_tb_parse(const char *s, struct gf_tb_opts *o, char *why,
		size_t size) GF_MUST_CHECK;

/* The plugstack.conf arguments. */
struct gf_tb_args {
	struct gf_tb_opts def; /* default=MODE (none when absent) */
	char topology[1024];   /* topology=FILE, "" for the live machine */
	int nvml;	       /* nvml=0|1 */
};

/*
 * Parse every plugstack.conf argument (default=MODE, topology=FILE,
 * nvml=0|1), all or nothing: each bad one (unknown, a bad value, empty,
 * given twice) is said through say(ctx, message naming it), and the
 * count of bad ones returned; *out is set only when it is 0 (else it
 * holds the defaults), so that a plugin is never half configured.
 */
int gf_tb_args(int ac, const char *const *av, struct gf_tb_args *out,
	       void (*say)(void *ctx, const char *msg),
	       void *ctx) GF_MUST_CHECK;

/*
 * The task's GPUs into r: from step (SLURM_STEP_GPUS or SLURM_JOB_GPUS;
 * may be NULL) and cvd (the task's CUDA_VISIBLE_DEVICES; may be NULL).
 * *whole: the task sees all of the step's GPUs (so the step's tasks
 * share them).  Returns 1 when the step has no GPU (nothing to do), 0,
 * or -1 with why set (a GPU the node does not have, UUIDs without
 * NVML's names, an unreadable list).
 */
int gf_tb_task_gpus(const struct gf_node *n, const char *step, const char *cvd,
		    struct gf_bind_request *r, bool *whole, char *why,
		    size_t size) GF_MUST_CHECK;

struct gf_tb_result {
	struct gf_bind_plan plan; /* env: NCCL_IB_HCA, UCX_NET_DEVICES... */
	bool bind;		  /* apply cpus and mems */
	struct gf_bitmap cpus;	  /* this task's share */
	struct gf_bitmap mems;
	struct gf_bitmap local; /* the GPUs' CPUs within the step's */
	struct gf_bitmap pool;	/* what the sharing tasks split: local, and
				   the step's nearest cores when local has
				   fewer cores than tasks */
	char say[1536];		/* one line: what was done, or why not */
};

/*
 * The binding of local task `task` of `ntasks` for the GPUs in r.  cores:
 * the step's S_STEP_ALLOC_CORES (abstract ids; NULL or "" when unknown:
 * the GPUs' CPUs are used as they are).  whole: the tasks share the
 * GPUs (split the CPUs), else each has its own.  Tasks that share the
 * GPUs get distinct whole cores whenever the step has as many cores as
 * tasks: the GPUs' CPUs in the step first, then the step's cores
 * nearest them (on their NUMA node(s), then their package(s), then the
 * rest); they share cores only when the step has fewer cores than
 * tasks, and out->say then says so.  0 (out->bind false for GF_TB_NIC,
 * and when none of the step's CPUs is local to the GPUs: out->say says
 * so), or -1 with why set when the plan fails.
 */
int gf_tb_plan(const struct gf_node *n, const struct gf_tb_opts *o,
	       const struct gf_bind_request *r, bool whole, int task,
	       int ntasks, const char *cores, struct gf_tb_result *out,
	       char *why, size_t size) GF_MUST_CHECK;

/*
 * gf_tb_plan with the step's GPUs sg (may be NULL): a task with its own
 * GPUs (whole false) then shares its GPUs' CPUs with the tasks on the
 * step's other GPUs of the same locality, as Slurm deals GPUs to tasks
 * in order (--gpus-per-task): distinct cores where there are enough.
 */
int gf_tb_plan_step(const struct gf_node *n, const struct gf_tb_opts *o,
		    const struct gf_bind_request *r,
		    const struct gf_bind_request *sg, bool whole, int task,
		    int ntasks, const char *cores, struct gf_tb_result *out,
		    char *why, size_t size) GF_MUST_CHECK;

#endif
