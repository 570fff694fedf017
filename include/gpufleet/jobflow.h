/*
 * jobflow.h - arrays, dependencies and holds (issue 21), as Slurm users
 * know them from sbatch --array, --dependency and --hold, scontrol
 * hold/release/requeue.  Pure: the parsers of the two strings a job body
 * may carry, and the scheduling core's calls for them (src/core/jobs/:
 * arrays.c, depend.c, flow.c).
 *
 * An array is jobs of one spec submitted together, its tasks, each a job
 * of its own (its own id) knowing its array (gf_job_spec.array_id) and
 * its index (array_task).  The array's id is its first task's id, as
 * Slurm's array job id is its first task's job id: nothing but the tasks
 * is stored, so a controller restart rebuilds each array from its tasks.
 * `%max` (array_max) caps how many of its tasks run at once: the others
 * wait with the reason "array throttle (%max)".
 *
 * A dependency names earlier jobs (or arrays: all their tasks): the job
 * waits with the reason "dependency jN" while one is unmet; once all are
 * met it is scheduled as any job (a requeue later does not wait again).
 * One that can never be met (afterok: the parent failed or was
 * cancelled; afternotok: it succeeded) cancels the job with the reason
 * naming it.  A hold (user_hold) keeps a pending job from starting,
 * reason "held", until released.
 */
#ifndef GPUFLEET_JOBFLOW_H
#define GPUFLEET_JOBFLOW_H

#include <stdbool.h>

#include <gpufleet/ctl.h>
#include <gpufleet/err.h>
#include <gpufleet/job.h>

#define GF_ARRAY_TASKS_MAX 1000	  /* tasks of one array */
#define GF_ARRAY_INDEX_MAX 999999 /* the highest task index */
#define GF_ARRAY_SPEC_MAX  256	  /* bytes of "0-31:2%4" */
#define GF_DEP_IDS_MAX	   16	  /* jobs one dependency names */

/* An array's tasks as asked: indexes in the order given, and %max. */
struct gf_array_spec {
	int idx[GF_ARRAY_TASKS_MAX];
	int n;	 /* 1..GF_ARRAY_TASKS_MAX */
	int max; /* tasks running at once; 0: no cap */
};

/*
 * "LIST[%MAX]", LIST a comma list of N, N-M or N-M:STEP (Slurm's
 * --array): "0-31", "0-31:4%2", "1,3,5-7".  Indexes 0..GF_ARRAY_INDEX_MAX,
 * N <= M, STEP >= 1, no index twice, MAX >= 1.  0, or GF_EINVAL /
 * GF_ETOOBIG (over GF_ARRAY_TASKS_MAX tasks) with e->msg naming "'array'"
 * and the cause.
 */
int gf_array_parse(const char *s, struct gf_array_spec *out,
		   struct gf_err *e) GF_MUST_CHECK;

enum gf_dep_kind {
	GF_DEP_AFTEROK = 0, /* the parent succeeded */
	GF_DEP_AFTERANY,    /* the parent ended, whichever way */
	GF_DEP_AFTERNOTOK,  /* the parent failed or was cancelled */
};

struct gf_dep {
	enum gf_dep_kind kind;
	char id[GF_JOB_ID_MAX]; /* "j12" */
};

/* "afterok", ...; "?" for a bad value. */
const char *gf_dep_kind_name(enum gf_dep_kind k);

/*
 * "KIND:ID[:ID...][,KIND:ID...]" (Slurm's --dependency, its after*
 * kinds; an ID is "j12" or "12") into out[0..*n) (room for
 * GF_DEP_IDS_MAX), and, when norm is not NULL, its normalized text
 * ("afterok:j12:j13,afterany:j2", at most GF_JOB_DEP_MAX bytes).  0, or
 * GF_EINVAL naming "'dependency'" and the cause (an unknown kind, a bad
 * id, over GF_DEP_IDS_MAX ids).
 */
int gf_dep_parse(const char *s, struct gf_dep *out, int *n,
		 char norm[GF_JOB_DEP_MAX], struct gf_err *e) GF_MUST_CHECK;

/* Every job a (normalized) dependency names is known to the core: 0, or
 * GF_EINVAL ("'dependency': no job j99") for a submit to refuse. */
int gf_ctl_deps_check(const struct gf_ctl *ctl, const char *dependency,
		      struct gf_err *e) GF_MUST_CHECK;

/*
 * Hold a PENDING job (on: it never starts, reason "held") or release it
 * (off: scheduled again by the next pass).  GF_ENOTFOUND; GF_ECONFLICT
 * for a job not pending ("job j3 is running"), already held, or not held
 * (release); the caller persists the job.
 */
int gf_ctl_hold(struct gf_ctl *ctl, const char *id, bool on,
		struct gf_err *e) GF_MUST_CHECK;

/* The tasks of the array whose id is array_id (its first task's), in
 * submission order: how many (0 when array_id is no array's id), and the
 * i-th (NULL out of range); borrowed as gf_ctl_job's. */
int gf_ctl_array_ntasks(const struct gf_ctl *ctl, const char *array_id);
const struct gf_job *gf_ctl_array_task(const struct gf_ctl *ctl,
				       const char *array_id, int i);

#endif
