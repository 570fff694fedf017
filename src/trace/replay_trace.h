/*
 * replay_trace.h - the job traces `gpufleet simulate replay` plays
 * (sim/replay.h): jobs that arrive and leave, read from a public trace
 * into one table of jobs with their teams, classes and models.
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
#ifndef GF_TRACE_REPLAY_TRACE_H
#define GF_TRACE_REPLAY_TRACE_H

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
int gf_replay_source_parse(const char *s,
			   enum gf_replay_source *out) GF_MUST_CHECK;

#define GF_REPLAY_MAX_JOBS  GF_CTL_MAX_JOBS
#define GF_REPLAY_MAX_NAMES 256 /* teams, classes, models of a trace */
/* virtual time 0 as the core is told it (its times must be > 0) */
#define GF_REPLAY_EPOCH_MS INT64_C(1000000000000)

/* One job of a trace; names are indexes into the trace's tables. */
struct gf_replay_job {
	int64_t arrival_ms;   /* >= 0 */
	int64_t duration_ms;  /* run time once started; 0: until deleted */
	int64_t requested_ms; /* the time the user asked for; 0: none
				 (no source here carries one) */
	int64_t delete_ms;    /* deleted then (waiting: cancelled; running:
				 ended); 0: never */
	int64_t memory_mib;   /* per replica */
	int32_t cpu_milli;    /* per replica */
	int16_t gpus;	      /* whole GPUs per replica */
	int16_t gpu_milli;    /* or a share of one GPU (1..999) */
	int16_t replicas;     /* > 1: a gang */
	uint16_t team, cls;   /* into teams[], classes[] */
	int16_t model;	      /* into models[]; -1 any */
	int32_t line;	      /* in the file, for messages */
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
int gf_replay_team(struct gf_replay_trace *t, const char *name) GF_MUST_CHECK;
int gf_replay_model(struct gf_replay_trace *t, const char *name) GF_MUST_CHECK;
int gf_replay_class(struct gf_replay_trace *t, const char *name) GF_MUST_CHECK;

/* Append a job (copied); GF_ETOOBIG past GF_REPLAY_MAX_JOBS. */
int gf_replay_add(struct gf_replay_trace *t,
		  const struct gf_replay_job *j) GF_MUST_CHECK;

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
int gf_replay_scale_arrivals(struct gf_replay_trace *t, double x) GF_MUST_CHECK;

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
		   struct gf_replay_trace *t, struct gf_err *e) GF_MUST_CHECK;

/* Philly's virtual clusters (philly_vc_nodes.HeliosArtifact.csv: vc,node
 * num) as node counts: names[i] and count[i] for i < returned n (at most
 * max); GF_EPARSE with e on a bad row. */
int gf_replay_philly_vcs(const char *path, char (*names)[GF_NODE_NAME_MAX],
			 int *count, int max, struct gf_err *e) GF_MUST_CHECK;

#endif
