/*
 * sim.h - the "fill" experiment of the FGD paper: requests arrive one at a
 * time and never leave; each is placed by the production engine (sched.h)
 * or dropped; after every arrival we record how much GPU is allocated and
 * fragmented, binned by arrived load (percent of cluster GPU capacity).
 * Pure: no I/O; randomness from the seed only.  Thread-safe across runs
 * (each run copies the cluster it is given).
 */
#ifndef GPUFLEET_SIM_H
#define GPUFLEET_SIM_H

#include <stdbool.h>

#include <gpufleet/err.h>
#include <gpufleet/sched.h>
#include <gpufleet/workload.h>

#define GF_FILL_BINS 256 /* arrived load 0..255 % */

struct gf_fill_opts {
	enum gf_policy policy;
	uint64_t seed;
	double tune;	  /* arrived GPU demand target, x capacity (1.3) */
	bool resample;	  /* pad or trim the shuffled list to `tune` */
	double fgdplus_t; /* FGD+'s T (gf_sched_set_fgdplus_t); 0: default */
	unsigned fgdplus_without; /* gf_sched_set_fgdplus_without */
};

struct gf_fill_result {
	double alloc_sum[GF_FILL_BINS]; /* sum of rounded alloc % per bin */
	double frag_ratio_sum[GF_FILL_BINS];
	double frag_amount_sum[GF_FILL_BINS];
	int count[GF_FILL_BINS];
	int arrivals;
	int failed;
	int64_t arrived_milli;
};

/* The two phases of a run, as progress reports them. */
enum gf_fill_phase {
	GF_FILL_DRAW,  /* shuffling, then resampling to `tune` (steps) */
	GF_FILL_PLACE, /* placing the arrivals (arrivals) */
};

/*
 * Progress of one run: (phase, done, total, arg).  In GF_FILL_DRAW the
 * unit is a step of the shuffle or of the resampling, and total is an
 * estimate (the resampling stops on demand, not on a count): it only
 * grows, and done == total ends the phase.  In GF_FILL_PLACE total is the
 * number of arrivals, known from the first call (done 0).  Called on the
 * thread that runs the fill, every few thousand steps.
 */
typedef void (*gf_fill_progress_fn)(enum gf_fill_phase phase, int done,
				    int total, void *arg);

/*
 * The arrival sequence for a seed (reference/fgd-experiment.md 1.3):
 * a shuffle of the requests, then resampled copies until the GPU demand
 * reaches tune x capacity (stopping at the first that would pass it, its
 * per-GPU share checked), or random deletions while above (the k-th of
 * those left, k uniform).  Fills *seq (allocated, caller frees) with
 * request indexes; returns the count.  O(n log n) in the requests and
 * the draws.  gf_fill_arrivals_progress() also reports GF_FILL_DRAW
 * progress (progress may be NULL).
 */
int gf_fill_arrivals(const struct gf_workload *w, int64_t capacity_milli,
		     const struct gf_fill_opts *o, int **seq) GF_MUST_CHECK;
int gf_fill_arrivals_progress(const struct gf_workload *w,
			      int64_t capacity_milli,
			      const struct gf_fill_opts *o, int **seq,
			      gf_fill_progress_fn progress,
			      void *arg) GF_MUST_CHECK;

/*
 * Run one fill: copy c0, rank its nodes by a seeded permutation, draw the
 * arrivals (gf_fill_arrivals), place each with o->policy.  typ/ntyp: the
 * typical mix (fragmentation figures and FGD).  progress, when not NULL,
 * is told of both phases (gf_fill_progress_fn).  Returns 0 or GF_EINVAL
 * (a cluster without GPUs, an empty workload, no typical mix for FGD).
 */
int gf_fill_run(const struct gf_cluster *c0, const struct gf_workload *w,
		const struct gf_typical *typ, int ntyp,
		const struct gf_fill_opts *o, struct gf_fill_result *res,
		gf_fill_progress_fn progress, void *arg) GF_MUST_CHECK;

/*
 * The value of a binned series at arrived load `pct`: the mean over the
 * bin's events, or over bins pct-1 and pct+1 when it is empty; returns
 * false when those are empty too.
 */
bool gf_fill_value(const struct gf_fill_result *r, const double *sum, int pct,
		   double *out);

#endif
