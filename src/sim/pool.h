/*
 * pool.h - run many fill experiments (policy x seed) on worker threads.
 * Each run copies the cluster; the cluster, workload and typical mix are
 * shared read-only.
 */
#ifndef GF_SIM_POOL_H
#define GF_SIM_POOL_H

#include <stdatomic.h>
#include <stdbool.h>

#include <gpufleet/sim.h>

struct gf_fill_job {
	struct gf_fill_opts o;	   /* in */
	struct gf_fill_result res; /* out */
	double wall_s;		   /* out: this run's wall time */
	int rc;			   /* out */
	atomic_int done, total;	   /* progress, in arrivals */
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
 * show_progress, a progress line goes to stderr once a second has passed
 * (updated in place on a terminal, every 10 s in a log).  Returns 0, or -1
 * when some job failed.
 */
int gf_fill_pool_run(struct gf_fill_pool *p, int threads, bool show_progress);

#endif
