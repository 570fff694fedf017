/*
 * pool.h - run many fill experiments (policy x seed) on worker threads.
 * Each run copies the cluster; the cluster, workload and typical mix are
 * shared read-only.
 */
#ifndef GF_SIM_POOL_H
#define GF_SIM_POOL_H

#include <stdatomic.h>
#include <stdbool.h>

#include <gpufleet/err.h>
#include <gpufleet/sim.h>

struct gf_progress;

/* Where a job stands (gf_fill_job.state). */
enum gf_fill_job_state {
	GF_JOB_WAITING = 0,
	GF_JOB_DRAWING, /* GF_FILL_DRAW: shuffle and resample */
	GF_JOB_PLACING, /* GF_FILL_PLACE */
	GF_JOB_DONE,
};

struct gf_fill_job {
	struct gf_fill_opts o;	   /* in */
	struct gf_fill_result res; /* out */
	double wall_s;		   /* out: this run's wall time */
	double draw_s;		   /* out: of which drawing the arrivals */
	int rc;			   /* out */
	/* progress, written by the worker, read by a reporter */
	atomic_int state;	/* enum gf_fill_job_state */
	atomic_int done, total; /* in the current phase's unit */
	double t0;		/* worker only: start of the run */
};

struct gf_fill_pool {
	const struct gf_cluster *c;
	const struct gf_workload *w;
	const struct gf_typical *typ;
	int ntyp;
	struct gf_fill_job *jobs;
	int njobs;
	atomic_int next;
	atomic_int finished;
};

/*
 * The FGD paper's experiment matrix (reference/fgd): every policy x seeds
 * 42, 43, ... (nseeds of them), tune 1.3, resampled, policy-major into
 * jobs[GF_POLICY_COUNT * nseeds], whose other fields are cleared.
 */
void gf_fill_jobs_reference(struct gf_fill_job *jobs, int nseeds);

/*
 * Run every job on `threads` workers (at most 64; 0 = all cores).  When
 * prog is not NULL, the pool is attached to it while it runs, so that its
 * line shows the runs by phase (progress.h).  Logs each run's phase times
 * at debug level.  Returns 0, or -1 when some job failed (its rc says why).
 */
int gf_fill_pool_run(struct gf_fill_pool *p, int threads,
		     struct gf_progress *prog) GF_MUST_CHECK;

#endif
