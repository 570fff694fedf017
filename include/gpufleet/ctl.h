/*
 * ctl.h - the controller's scheduling core (src/core/jobs/): the queue of
 * GPU jobs, typed quotas, fair share, gangs inside one block, admission
 * through the placement engine, preemption and backfill.  Pure: no I/O,
 * no clock (every call that needs the time takes now_ms), randomness only
 * from the seed.  `gpufleet serve` wraps it with the HTTP API and the
 * store; `gpufleet simulate replay` can drive it on a virtual clock.
 *
 * Ownership: gf_ctl_new takes the cluster (the engine places on it); jobs
 * given to gf_ctl_add become the core's; pointers it returns are
 * borrowed, valid until the next call that changes the core (a job's own
 * pointer and its id stay valid until gf_ctl_free: jobs are never
 * dropped).  Not thread-safe: one thread owns a gf_ctl, for every call,
 * gf_ctl_admit included (it fills a cache although it takes a const).
 *
 * Scheduling order (gf_ctl_schedule): classes by priority, highest first;
 * inside a class, fair share between teams: the team whose running GPU
 * (milli-GPU of its running jobs, all classes; MIG instances count as
 * their fraction of a GPU) divided by its weight is the smallest goes
 * next (dominant share on GPU: GPUs are the resource a GPU cluster is
 * short of); inside a team, submission order.  A job waits while it would
 * exceed its team's quota.  A gang (replicas > 1) starts whole, inside one
 * block, or not at all.  When the first job of the highest class cannot
 * start, it may preempt preemptible jobs of lower classes, choosing the
 * fewest victims (they go back to the queue); otherwise it keeps a
 * reservation: a later job may start only if it cannot delay it, by the
 * max runtimes of the running jobs (EASY backfill), or on nodes the
 * waiting job cannot use.  docs/scheduling.md says why.
 *
 * Quotas are typed and counted apart: whole GPUs by model ("*" caps all
 * models together; a team that lists GPU entries may not use a model
 * without an entry of its own unless "*" is listed), MIG instances by
 * profile (the same rules), shares in milli-GPU (milli; -1 unlimited, 0
 * none).  A kind with no entries is unlimited; has_quota false means no
 * limit of any kind.
 */
#ifndef GPUFLEET_CTL_H
#define GPUFLEET_CTL_H

#include <stdbool.h>
#include <stdint.h>

#include <gpufleet/cluster.h>
#include <gpufleet/err.h>
#include <gpufleet/job.h>
#include <gpufleet/sched.h>

#define GF_CTL_MAX_TEAMS   256
#define GF_CTL_MAX_CLASSES 16
#define GF_CTL_MAX_BLOCKS  1024
#define GF_CTL_MAX_QUOTAS  16 /* typed entries per team and kind */
#define GF_CTL_LABELS_MAX  256
#define GF_CTL_MAX_MIG	   56 /* MIG instances per node (8 GPUs x 7) */
#define GF_CTL_MAX_JOBS	   1000000

/* A typed quota entry: GPUs of a model ("*": all models together), or
 * instances of a MIG profile. */
struct gf_ctl_quota {
	char what[GF_GPU_MODEL_MAX];
	int64_t limit;
};

struct gf_ctl_team {
	char name[GF_TEAM_NAME_MAX]; /* letters, digits, '.', '_', '-' */
	double weight;		     /* fair share weight; <= 0 means 1 */
	struct gf_ctl_quota gpus[GF_CTL_MAX_QUOTAS]; /* whole GPUs by model */
	int ngpus;
	struct gf_ctl_quota mig[GF_CTL_MAX_QUOTAS]; /* instances by profile */
	int nmig;
	int64_t milli;	/* shares in milli-GPU, summed; -1 unlimited; 0 none */
	bool has_quota; /* false: no typed quota at all (unlimited) */
};

struct gf_ctl_class {
	char name[GF_CLASS_NAME_MAX];
	int priority;	       /* higher goes first */
	bool preemptible;      /* higher classes may preempt its jobs */
	int64_t max_runtime_s; /* default for its jobs; 0 none */
	int max_attempts;      /* starts (preemptions not counted) before a
				  requeue fails it; 0: 3 */
};

/* A MIG instance a node offers (its GPU is in MIG mode: the engine never
 * gives that GPU out whole or in shares). */
struct gf_ctl_mig {
	int gpu;
	char profile[GF_MIG_PROFILE_MAX];
	int start;
};

/* What the core knows of a node beyond its gf_cnode. */
struct gf_ctl_node {
	char labels[GF_CTL_LABELS_MAX]; /* "k=v,k=v" */
	int block;			/* index into the blocks; 0 default */
	struct gf_ctl_mig mig[GF_CTL_MAX_MIG];
	int nmig;
};

struct gf_ctl_config {
	enum gf_policy policy;
	struct gf_ctl_team teams[GF_CTL_MAX_TEAMS]; /* unknown teams: none */
	int nteams;
	bool open_teams; /* a job of a team not listed is accepted (no quota) */
	struct gf_ctl_class classes[GF_CTL_MAX_CLASSES];
	int nclasses; /* "batch" must exist (the default class) */
	char blocks[GF_CTL_MAX_BLOCKS][GF_NODE_NAME_MAX]; /* block names */
	int nblocks; /* >= 1; block 0 is the default */
	uint64_t seed;
};

struct gf_ctl; /* opaque */

/*
 * A core over cluster c, nodes[0..c->n) beside it (copied; NULL: every
 * node in block 0, no labels, no MIG).  c must be on the heap
 * (gf_malloc/gf_calloc), its nodes empty: it is taken, and gf_ctl_free
 * releases and frees it; the GPUs holding MIG instances are taken out of
 * the engine's capacity.  GF_EINVAL with e naming the problem (no "batch"
 * class, a node in a block that does not exist, a MIG instance on a GPU
 * the node lacks, on a model without MIG, or that breaks the model's
 * rules); then nothing is taken or changed.
 */
int gf_ctl_new(const struct gf_ctl_config *cfg, struct gf_cluster *c,
	       const struct gf_ctl_node *nodes, struct gf_ctl **out,
	       struct gf_err *e);
void gf_ctl_free(struct gf_ctl *ctl);

/*
 * Admission: can a job of this spec ever be placed here?  0 (it may have
 * to wait); GF_EINVAL (a bad field, e->msg names it: 400); GF_ENEVER (it
 * can never run, e->msg says why: 422), for example a gang bigger than
 * any block, a GPU model or MIG profile no node has, a share over 1000
 * milli, a request bigger than every node, or than its team's whole
 * quota; GF_EAUTH for a team the config does not know (open_teams off).
 * Defaults ("default" team, "batch" class, 1 replica) are the caller's.
 * A spec that passes gf_job_spec_check but asks for more than one GPU
 * (gpu_milli > 1000) or than a node can have (gpus > 16): GF_ENEVER.
 */
int gf_ctl_admit(const struct gf_ctl *ctl, const struct gf_job_spec *spec,
		 struct gf_err *e);

/*
 * Add a job the store has committed: taken (the core frees it: job on the
 * heap through gf_malloc/gf_calloc, its command and placements too).  A
 * PENDING job joins the queue; a RUNNING one (a restart) has its
 * placements committed to the engine (found by node_name; node is set
 * again), or, when they no longer fit (the node gone or changed), goes
 * back to PENDING with the reason (reported by the next gf_ctl_schedule
 * as a change).  Final jobs are kept for listing.  A job of a class no
 * longer in the config is scheduled as "batch"; one that can never be
 * placed here waits with that reason.  Fastest in submission order.
 * Errors (nothing taken then): GF_EINVAL (gf_job_check fails),
 * GF_ECONFLICT for an id already known, GF_ETOOBIG (too many jobs or
 * teams).
 */
int gf_ctl_add(struct gf_ctl *ctl, struct gf_job *job, struct gf_err *e);

/* The job with this id, or NULL. */
const struct gf_job *gf_ctl_job(const struct gf_ctl *ctl, const char *id);

/* All jobs in submission order: count, and the i-th. */
int gf_ctl_njobs(const struct gf_ctl *ctl);
const struct gf_job *gf_ctl_job_at(const struct gf_ctl *ctl, int i);

/* Cancel: PENDING or RUNNING -> CANCELLED (placements released).
 * GF_ENOTFOUND, or GF_ECONFLICT for a final job; GF_EINVAL for now_ms <=
 * 0 (ms since the epoch, here and below). */
int gf_ctl_cancel(struct gf_ctl *ctl, const char *id, int64_t now_ms,
		  struct gf_err *e);

/* A running job ended: exit 0 -> SUCCEEDED, else FAILED.  GF_ENOTFOUND,
 * GF_ECONFLICT when it is not RUNNING. */
int gf_ctl_finish(struct gf_ctl *ctl, const char *id, int exit_code,
		  int64_t now_ms, struct gf_err *e);

/* A running job lost its node: back to PENDING if attempts are left,
 * else FAILED; reason given (NULL: "node lost").  As gf_ctl_finish. */
int gf_ctl_requeue(struct gf_ctl *ctl, const char *id, const char *reason,
		   int64_t now_ms, struct gf_err *e);

/* The jobs a call changed, for the caller to persist (borrowed ids). */
struct gf_ctl_changes {
	const char **ids;
	int n, cap; /* grows; release with gf_ctl_changes_release */
};
void gf_ctl_changes_release(struct gf_ctl_changes *ch);

/*
 * One scheduling pass at now_ms: fail running jobs past their max
 * runtime, start what can start in the order above (preempting and
 * backfilling as it says), and set each waiting job's reason.  Every job
 * whose state or placement changed is appended to out (once; out may be
 * NULL).  0, or GF_EINVAL for now_ms <= 0.  Debug builds (GF_DEBUG) run
 * gf_ctl_check after it and abort on a broken invariant.
 */
int gf_ctl_schedule(struct gf_ctl *ctl, int64_t now_ms,
		    struct gf_ctl_changes *out);

/*
 * The queue: pending jobs in the order they would be tried, each with its
 * reason ("quota: team a would use 9 of 8 h100 GPUs", "no node has room
 * now", "gang of 4 does not fit one block now", "behind higher priority
 * work", "reserved for j12 (backfill cannot finish before it starts)").
 * Fills out[0..max) with borrowed pointers; returns the count of pending
 * jobs (which may exceed max).  Jobs that became pending since the last
 * pass follow its order, as they came.
 */
int gf_ctl_queue(const struct gf_ctl *ctl, const struct gf_job **out, int max);

/* Figures for /metrics. */
struct gf_ctl_stats {
	int pending, running;
	int64_t gpus_total_milli; /* every GPU, MIG mode or not */
	int64_t gpus_alloc_milli; /* held by jobs (MIG: their fractions) */
	double frag_milli;	  /* the FGD measure: sum of F over nodes */
	int mig_total, mig_used;
};
void gf_ctl_stats(const struct gf_ctl *ctl, struct gf_ctl_stats *st);
/* Per class and team: pending jobs and their GPU demand (milli; a MIG
 * instance as its fraction of a GPU).  class_idx into cfg.classes,
 * team_idx below gf_ctl_nteams; -1 for all.  GF_EINVAL out of range. */
int gf_ctl_pending_by(const struct gf_ctl *ctl, int class_idx, int team_idx,
		      int64_t *gpu_milli);
/* Teams known: the config's first (same index), then teams not in it
 * whose jobs were accepted (open_teams). */
int gf_ctl_nteams(const struct gf_ctl *ctl);
const char *gf_ctl_team_name(const struct gf_ctl *ctl, int i);
const struct gf_ctl_config *gf_ctl_config(const struct gf_ctl *ctl);
const struct gf_cluster *gf_ctl_cluster(const struct gf_ctl *ctl);
const struct gf_ctl_node *gf_ctl_node(const struct gf_ctl *ctl, int i);

/* Invariants (engine, quotas in use, placements of running jobs, queue):
 * 0 or GF_EINVAL with msg. */
int gf_ctl_check(const struct gf_ctl *ctl, char *msg, unsigned size);

#endif
