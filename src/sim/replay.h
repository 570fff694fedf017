/*
 * replay.h - `gpufleet simulate replay`: a trace of jobs that arrive and
 * leave, played on a virtual clock through the controller's scheduling
 * core itself (ctl.h: gf_ctl_admit, gf_ctl_add, gf_ctl_schedule,
 * gf_ctl_finish, gf_ctl_cancel): its classes, fair share, quotas, gangs,
 * backfill, preemption and the placement engine with release.  Nothing
 * here decides anything the core decides; this file only says when.
 *
 * The clock (replay.c says it in full): events in time order; at one
 * instant, first the jobs that end (their run is over, or the trace
 * deletes them), then the arrivals (admitted, then added as `gpufleet
 * serve` adds a submitted job), then one scheduling pass, as the
 * service's turn does; a pass that puts a job back (preemption) is
 * followed by another a tick later, as the service's next tick.
 *
 * Sources: trace/replay_trace.h.
 */
#ifndef GF_SIM_REPLAY_H
#define GF_SIM_REPLAY_H

#include <stdbool.h>
#include <stdint.h>

#include <gpufleet/ctl.h>
#include <gpufleet/err.h>

#include "trace/replay_trace.h"

/*
 * The config a replay runs with unless told otherwise: policy and seed,
 * open teams (none listed: no quota, weight 1), block 0 only, and the
 * classes the sources name: inference (priority 20), training (10), and
 * batch (0, preemptible by both).  No max runtime by class.
 */
void gf_replay_config(struct gf_ctl_config *cfg, enum gf_policy policy,
		      uint64_t seed);

/* ---- the run ---- */

/* Called every few thousand arrivals with the count so far and the
 * trace's. */
typedef void (*gf_replay_progress_fn)(void *arg, int arrived, int jobs);

/*
 * The run time a job states (its max runtime, what EASY backfill reads),
 * when estimates are on:
 *   EXACT      its run time, rounded up to the second (hindsight);
 *   REQUESTED  the trace's requested time (gf_replay_job.requested_ms,
 *              rounded up; a job run past it fails, as under Slurm); a
 *              job without one states none;
 *   NOISY      its run time times exp(sigma |Z|), Z standard normal
 *              drawn from (est_seed, job index): a log-normal
 *              overestimate, never under the run time (median factor
 *              exp(0.674 sigma): 1.96 at sigma 1), the same draw for
 *              every policy.
 */
enum gf_replay_est {
	GF_REPLAY_EST_EXACT = 0,
	GF_REPLAY_EST_REQUESTED,
	GF_REPLAY_EST_NOISY,
};
#define GF_REPLAY_SIGMA_DEFAULT 1.0

struct gf_replay_opts {
	int points;	 /* time series samples (0: 400) */
	int64_t tick_ms; /* the follow-up pass after a preemption (0: 100) */
	bool estimates;	 /* jobs state a max runtime (for backfill) */
	enum gf_replay_est est; /* which (estimates on) */
	double est_sigma;	/* NOISY: 0 means GF_REPLAY_SIGMA_DEFAULT */
	uint64_t est_seed;	/* NOISY's draws */
	/* the means over the whole run [0, end], not the arrival
	 * window (first to last arrival) with the tail apart */
	bool whole_run;
	/* each job may run only on nodes labelled "vc=<its team>" (Philly's
	 * virtual clusters as node partitions: gf_replay_vc_cluster) */
	bool partition_by_team;
	bool keep_log;	  /* record every start (gf_replay_start) */
	int64_t until_ms; /* stop there (0: when no event is left) */
	gf_replay_progress_fn progress; /* NULL none */
	void *arg;
};

/* One sample of the time series (the state after every event at or
 * before t). */
struct gf_replay_point {
	int64_t t_ms;
	double alloc;	       /* GPU given out / GPU capacity */
	double frag;	       /* FGD fragmentation / idle GPU */
	int64_t pending_milli; /* GPU the waiting jobs ask for */
	int pending, running;
};

/* A start, for the log: job index (in the trace), when, where. */
struct gf_replay_start {
	int job;
	int64_t t_ms;
	int replica;
	int node;
	int ngpus;
	int gpus[GF_CNODE_MAX_GPUS];
};

/* Quantiles of a sample, in seconds. */
struct gf_replay_dist {
	int n;
	double mean, p50, p95, p99, max;
};

/* What a job became (per job, in trace order). */
enum gf_replay_fate {
	GF_REPLAY_NOT_ARRIVED = 0, /* the run stopped (until_ms) before it */
	GF_REPLAY_REFUSED,	   /* admission: never placeable here */
	GF_REPLAY_QUEUED,	   /* waiting at the end */
	GF_REPLAY_RUNNING,	   /* running at the end */
	GF_REPLAY_COMPLETED,	   /* its run ended (or it was deleted
				      while running) */
	GF_REPLAY_DELETED,	   /* deleted while waiting */
	GF_REPLAY_FAILED,	   /* the core failed it (max runtime) */
};

/* Time-weighted means over a span [from, to] of the run, and the
 * jobs that first started in it (their queueing delay). */
struct gf_replay_span {
	int64_t from_ms, to_ms;
	double mean_alloc, mean_frag, mean_pending_gpus;
	int started;
	struct gf_replay_dist wait;
};

struct gf_replay_result {
	enum gf_policy policy;
	uint64_t seed;
	int jobs, arrived, refused, started, completed, deleted, failed;
	int running_end, queued_end;
	int64_t preemptions;
	int passes;
	/* first start - arrival, every job that started (each arrived in
	 * the arrival window, whenever it started: counting only those that
	 * started in the window would drop the longest waits, those that
	 * lasted past the last arrival; window.wait and tail.wait split it
	 * by when the job started) */
	struct gf_replay_dist wait;
	struct gf_replay_dist jct; /* end - arrival, completed jobs */
	int64_t end_ms;		   /* the last event (runs still going
				      are counted up to it) */
	/* GPU time two ways, milli-GPU x ms: the engine's allocated GPU
	 * integrated over time, and the sum of the jobs' placed runs */
	int64_t gpu_milli_ms_engine, gpu_milli_ms_jobs;
	int64_t capacity_milli;
	/* time-weighted over the arrival window (whole_run: [0, end]) */
	double mean_alloc, mean_frag, mean_pending_gpus;
	struct gf_replay_span window;
	/* after the last arrival until the end (no arrival then): the
	 * drain, reported apart; from == to when there is none */
	struct gf_replay_span tail;
	double peak_alloc; /* the most GPU given out at once / capacity */
	struct gf_replay_point *points; /* owned */
	int npoints;
	/* per job, trace order: fate, arrivals and ends counted (each at
	 * most 1), first start and end (ms; -1 none), placed run time */
	uint8_t *fate;
	uint8_t *arrivals, *ends;
	int64_t *first_start_ms, *end_at_ms, *run_ms;
	struct gf_replay_start *log; /* with keep_log */
	int nlog, caplog;
	double wall_s;
};

/*
 * Play t through a core built from cfg (its policy, seed, classes,
 * teams, quotas), over a copy of cluster c0 with nodes (NULL: block 0,
 * no labels), as gf_ctl_new takes them.  Classes the trace names must
 * exist in cfg (else the core runs them as "batch", as it does for a
 * submitted job); teams need not (open_teams).  Fills res (release with
 * gf_replay_result_release).  GF_EINVAL with e when the core refuses
 * the config or the nodes.
 */
int gf_replay_run(const struct gf_ctl_config *cfg, const struct gf_cluster *c0,
		  const struct gf_ctl_node *nodes,
		  const struct gf_replay_trace *t,
		  const struct gf_replay_opts *o, struct gf_replay_result *res,
		  struct gf_err *e) GF_MUST_CHECK;
void gf_replay_result_release(struct gf_replay_result *r);

/*
 * Philly's virtual clusters as a cluster: for each VC v < n, count[v]
 * nodes of gpus GPUs of model (named "<vc>-NNN", 64 cores, 512 GiB),
 * and a team in cfg weighted by count[v].  With nodes_out (an array of
 * c's size on the heap, the caller frees it) each node is labelled
 * "vc=<vc>": with opts.partition_by_team a VC's jobs run on its nodes
 * only.  0, or GF_EINVAL / GF_ETOOBIG with e (a name too long, too many
 * nodes or teams).
 */
int gf_replay_vc_cluster(char (*names)[GF_NODE_NAME_MAX], const int *count,
			 int n, int gpus, const char *model,
			 struct gf_cluster *c, struct gf_ctl_config *cfg,
			 struct gf_ctl_node **nodes_out,
			 struct gf_err *e) GF_MUST_CHECK;

/* Replay conservation and accounting (the checks of issue 16): every job
 * arrived at most once and ended at most once; each fate agrees with
 * its counts; the engine's GPU time equals the jobs'.  0 or GF_EINVAL
 * with msg. */
int gf_replay_check(const struct gf_replay_trace *t,
		    const struct gf_replay_result *r, char *msg,
		    unsigned size) GF_MUST_CHECK;

#endif
