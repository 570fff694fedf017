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
 * Sources (replay_trace.c):
 *   alibaba2023  openb_pod_list_*.csv: arrival creation_time; a pod that
 *                ran runs deletion_time - scheduled_time; a pod never
 *                scheduled is deleted at deletion_time (cancelled if it
 *                still waits); qos LS -> class inference, Burstable and
 *                Guaranteed -> training, BE -> batch (preemptible);
 *                gpu_spec of one model: that model, of several: any
 *                model (the core takes one); team "default".
 *   philly       philly.csv (Pollux's): arrival timestamp (from the
 *                first), duration, num_gpus (over 8: a gang of the
 *                fewest equal replicas of at most 8 GPUs: 12 -> 2 x 6),
 *                team = the virtual cluster, class training; no CPU or
 *                memory asked (the trace has none).
 *   dlrm2025     disaggregated_DLRM_trace.csv (Alibaba 2025): GPU (HN)
 *                instances (with --cpu-instances the CPU ones too), team
 *                = app_name, class inference, arrival creation_time (0
 *                when it existed before the trace), deleted at
 *                deletion_time (never when absent: running at the end).
 * Times are virtual: ms from the trace's start (the core is handed
 * GF_REPLAY_EPOCH_MS + t: its times must be > 0).  A run shorter than
 * 1 ms runs 1 ms; a deletion at or before the arrival comes 1 ms after.
 */
#ifndef GF_SIM_REPLAY_H
#define GF_SIM_REPLAY_H

#include <stdbool.h>
#include <stdint.h>

#include <gpufleet/ctl.h>
#include <gpufleet/err.h>

enum gf_replay_source {
	GF_REPLAY_ALIBABA2023,
	GF_REPLAY_PHILLY,
	GF_REPLAY_DLRM2025,
};

/* "alibaba2023", "philly", "dlrm2025"; parse: GF_ENOTFOUND. */
const char *gf_replay_source_name(enum gf_replay_source s);
int gf_replay_source_parse(const char *s, enum gf_replay_source *out);

#define GF_REPLAY_MAX_JOBS  GF_CTL_MAX_JOBS
#define GF_REPLAY_MAX_NAMES 256 /* teams, classes, models of a trace */
/* virtual time 0 as the core is told it (its times must be > 0) */
#define GF_REPLAY_EPOCH_MS INT64_C(1000000000000)

/* One job of a trace; names are indexes into the trace's tables. */
struct gf_replay_job {
	int64_t arrival_ms;  /* >= 0 */
	int64_t duration_ms; /* run time once started; 0: until deleted */
	int64_t delete_ms;   /* deleted then (waiting: cancelled; running:
				ended); 0: never */
	int64_t memory_mib;  /* per replica */
	int32_t cpu_milli;   /* per replica */
	int16_t gpus;	     /* whole GPUs per replica */
	int16_t gpu_milli;   /* or a share of one GPU (1..999) */
	int16_t replicas;    /* > 1: a gang */
	uint16_t team, cls;  /* into teams[], classes[] */
	int16_t model;	     /* into models[]; -1 any */
	int32_t line;	     /* in the file, for messages */
};

struct gf_replay_trace {
	struct gf_replay_job *jobs; /* in file order */
	int n, cap;
	char (*teams)[GF_TEAM_NAME_MAX];
	int nteams;
	char classes[4][GF_CLASS_NAME_MAX];
	int nclasses;
	char (*models)[GF_GPU_MODEL_MAX];
	int nmodels;
	enum gf_replay_source source;
	int skipped; /* rows the source leaves out (CPU instances, empty) */
};

void gf_replay_trace_init(struct gf_replay_trace *t);
void gf_replay_trace_release(struct gf_replay_trace *t);

/* Index of a name in the trace's team or model table, added when new;
 * GF_ETOOBIG past GF_REPLAY_MAX_NAMES. */
int gf_replay_team(struct gf_replay_trace *t, const char *name);
int gf_replay_model(struct gf_replay_trace *t, const char *name);
int gf_replay_class(struct gf_replay_trace *t, const char *name);

/* Append a job (copied); GF_ETOOBIG past GF_REPLAY_MAX_JOBS. */
int gf_replay_add(struct gf_replay_trace *t, const struct gf_replay_job *j);

/*
 * Load a trace x times as much (`--load X`): every arrival time divided
 * by x (rounded to the ms), so the same jobs come x times as densely;
 * run times are unchanged and a deletion keeps its distance from its
 * arrival.  The standard way to load a cluster more without inventing
 * jobs (Pollux-style experiments scale the arrival rate).  0 < x <=
 * GF_REPLAY_LOAD_MAX, else GF_EINVAL (nothing changed); 1 changes
 * nothing.
 */
#define GF_REPLAY_LOAD_MAX 1000.0
int gf_replay_scale_arrivals(struct gf_replay_trace *t, double x);

struct gf_replay_load_opts {
	bool cpu_instances; /* dlrm2025: the CN (CPU-only) instances too */
	int limit;	    /* the first N jobs of the file; 0 all */
};

/*
 * Read path as source s into t (initialised, empty).  Errors name
 * file:line and the field ("philly.csv:12: field 'num_gpus': 0 is
 * outside 1..128"), or the missing column; GF_EPARSE for a file with no
 * job; -errno when unreadable.  Nothing is half-loaded (the caller
 * releases t either way).
 */
int gf_replay_load(const char *path, enum gf_replay_source s,
		   const struct gf_replay_load_opts *o,
		   struct gf_replay_trace *t, struct gf_err *e);

/* Philly's virtual clusters (philly_vc_nodes.HeliosArtifact.csv: vc,node
 * num) as node counts: names[i] and count[i] for i < returned n (at most
 * max); GF_EPARSE with e on a bad row. */
int gf_replay_philly_vcs(const char *path, char (*names)[GF_NODE_NAME_MAX],
			 int *count, int max, struct gf_err *e);

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

struct gf_replay_opts {
	int points;	  /* time series samples (0: 400) */
	int64_t tick_ms;  /* the follow-up pass after a preemption (0: 100) */
	bool estimates;	  /* max_runtime_s = the run time (for backfill) */
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

struct gf_replay_result {
	enum gf_policy policy;
	uint64_t seed;
	int jobs, arrived, refused, started, completed, deleted, failed;
	int running_end, queued_end;
	int64_t preemptions;
	int passes;
	struct gf_replay_dist wait; /* first start - arrival, started jobs */
	struct gf_replay_dist jct;  /* end - arrival, completed jobs */
	int64_t end_ms;		    /* the last event (runs still going
				       are counted up to it) */
	/* GPU time two ways, milli-GPU x ms: the engine's allocated GPU
	 * integrated over time, and the sum of the jobs' placed runs */
	int64_t gpu_milli_ms_engine, gpu_milli_ms_jobs;
	int64_t capacity_milli;
	double mean_alloc, mean_frag, mean_pending_gpus; /* time-weighted */
	struct gf_replay_point *points;			 /* owned */
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
		  struct gf_err *e);
void gf_replay_result_release(struct gf_replay_result *r);

/* Replay conservation and accounting (the checks of issue 16): every job
 * arrived at most once and ended at most once; each fate agrees with
 * its counts; the engine's GPU time equals the jobs'.  0 or GF_EINVAL
 * with msg. */
int gf_replay_check(const struct gf_replay_trace *t,
		    const struct gf_replay_result *r, char *msg, unsigned size);

#endif
