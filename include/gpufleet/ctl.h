/*
 * ctl.h - the controller's scheduling core (src/core/jobs/): the queue of
 * GPU jobs, typed quotas, fair share, gangs inside one block, admission
 * through the placement engine, preemption and backfill.  Pure: no I/O,
 * no clock (every call that needs the time takes now_ms), randomness only
 * from the seed.  `gpufleet serve` wraps it with the HTTP API and the
 * store; `gpufleet simulate replay` can drive it on a virtual clock.
 *
 * Nodes come, change and get sick at run time: gf_ctl_node_add (a node
 * registered, or registered again), gf_ctl_node_ready (ready, or not:
 * its jobs requeued, nothing new placed there), gf_ctl_gpu_health (an
 * unhealthy GPU gets no new work).  A core may start with no node.
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
#include <gpufleet/gpu_topo.h>
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
	int line; /* the config's line that set it, for messages; 0 none */
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
	int max_attempts;      /* its jobs' own failures (non-zero exit, max
				  runtime) before one fails for good; 0: 1
				  (a failure is final); requeues by the
				  infrastructure and preemptions never
				  count */
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
	/* the MIG table id of its GPUs (mig.h: "h100-80gb"); "" at
	 * gf_ctl_new: derived from its GPU model name (a MIG id or alias,
	 * or a catalog id or name mapped by PCI id); "" read back: none */
	char mig_model[GF_MODEL_NAME_MAX];
};

struct gf_ctl_config {
	enum gf_policy policy;
	double fgdplus_t; /* FGD+'s T (gf_sched_set_fgdplus_t); 0: default */
	unsigned fgdplus_without; /* gf_sched_set_fgdplus_without; 0: none */
	struct gf_ctl_team teams[GF_CTL_MAX_TEAMS]; /* unknown teams: none */
	int nteams;
	bool open_teams; /* a job of a team not listed is accepted (no quota) */
	struct gf_ctl_class classes[GF_CTL_MAX_CLASSES];
	int nclasses; /* "batch" must exist (the default class) */
	char blocks[GF_CTL_MAX_BLOCKS][GF_NODE_NAME_MAX]; /* block names */
	int nblocks; /* >= 1; block 0 is the default */
	uint64_t seed;
	/* a running job that stops keeps its replicas' resources taken
	 * (job.h's gf_job_held) until gf_ctl_held_release says their
	 * processes are gone (a controller whose agents run the jobs);
	 * false: given back at once (the simulator, the extender) */
	bool hold_until_gone;
};

struct gf_ctl; /* opaque */

/*
 * A core over cluster c, nodes[0..c->n) beside it (copied; NULL: every
 * node in block 0, no labels, no MIG); every node ready.  c must be on the heap
 * (gf_malloc/gf_calloc), its nodes empty: it is taken, and gf_ctl_free
 * releases and frees it; the GPUs holding MIG instances are taken out of
 * the engine's capacity.  GF_EINVAL with e naming the problem (no "batch"
 * class, a node in a block that does not exist, a MIG instance on a GPU
 * the node lacks, on a model without MIG, or that breaks the model's
 * rules); then nothing is taken or changed.
 */
int gf_ctl_new(const struct gf_ctl_config *cfg, struct gf_cluster *c,
	       const struct gf_ctl_node *nodes, struct gf_ctl **out,
	       struct gf_err *e) GF_MUST_CHECK;
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
		 struct gf_err *e) GF_MUST_CHECK;

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
int gf_ctl_add(struct gf_ctl *ctl, struct gf_job *job,
	       struct gf_err *e) GF_MUST_CHECK;

/* The job with this id, or NULL. */
const struct gf_job *gf_ctl_job(const struct gf_ctl *ctl, const char *id);

/* All jobs in submission order: count, and the i-th. */
int gf_ctl_njobs(const struct gf_ctl *ctl);
const struct gf_job *gf_ctl_job_at(const struct gf_ctl *ctl, int i);

/*
 * Listing (jobs_list.c, issue 21): which jobs a list shows.  A job
 * matches when every bound set matches it: its state among `states` (bit
 * 1u << state; 0 any), its name matching the fnmatch pattern `name`,
 * its team, a node it runs or completes on (or, by ran_on, once ran on),
 * the window [since_ms, until_ms] (submitted by until_ms; not ended
 * before since_ms: pending and running jobs are always in it), and a seq
 * below before_seq (a page's end).  0, NULL: no bound.
 */
struct gf_job_filter {
	unsigned states;
	const char *name, *team, *node;
	int64_t since_ms, until_ms; /* ms since the epoch */
	uint64_t before_seq;
	bool desc; /* newest first (else in submission order) */
	bool (*ran_on)(const struct gf_job *j, const char *node, void *arg);
	void *arg;
};
/* "pending,RUNNING" (state names, any case, by commas) into a mask:
 * 0, or GF_EINVAL (an unknown or empty name). */
int gf_job_states_parse(const char *list, unsigned *out) GF_MUST_CHECK;
/* A time: ISO-8601 ("2026-12-02", "2026-12-02T10:00[:00[.000]]" with
 * "Z" or "+01:00", UTC without), "now", or a time ago ("90s", "30m",
 * "2h", "7d", "1w", "1d12h") before now_ms.  0, or GF_EINVAL. */
int gf_job_time_parse(const char *s, int64_t now_ms,
		      int64_t *out) GF_MUST_CHECK;
bool gf_job_filter_match(const struct gf_job_filter *f, const struct gf_job *j);
/* At most limit jobs matching f into out, in f's order; *more when
 * another matches after them.  The count. */
int gf_ctl_jobs_list(const struct gf_ctl *ctl, const struct gf_job_filter *f,
		     const struct gf_job **out, int limit, bool *more);

/* Cancel: PENDING or RUNNING -> CANCELLED (placements released).
 * GF_ENOTFOUND, or GF_ECONFLICT for a final job; GF_EINVAL for now_ms <=
 * 0 (ms since the epoch, here and below). */
int gf_ctl_cancel(struct gf_ctl *ctl, const char *id, int64_t now_ms,
		  struct gf_err *e) GF_MUST_CHECK;

/* A running job ended: exit 0 -> SUCCEEDED, else FAILED.  GF_ENOTFOUND,
 * GF_ECONFLICT when it is not RUNNING. */
int gf_ctl_finish(struct gf_ctl *ctl, const char *id, int exit_code,
		  int64_t now_ms, struct gf_err *e) GF_MUST_CHECK;

/* A running job lost its node: back to PENDING if attempts are left,
 * else FAILED; reason given (NULL: "node lost").  As gf_ctl_finish. */
int gf_ctl_requeue(struct gf_ctl *ctl, const char *id, const char *reason,
		   int64_t now_ms, struct gf_err *e) GF_MUST_CHECK;

/* The jobs a call changed, for the caller to persist (borrowed ids). */
struct gf_ctl_changes {
	const char **ids;
	int n, cap; /* grows; release with gf_ctl_changes_release */
};
void gf_ctl_changes_release(struct gf_ctl_changes *ch);

/*
 * One scheduling pass at now_ms: fail running jobs past their max
 * runtime, cancel the jobs whose dependency can never be met
 * (jobflow.h), start what can start in the order above (preempting and
 * backfilling as it says; a job held, waiting for a dependency or at its
 * array's %max is skipped), and set each waiting job's reason.  Every job
 * whose state or placement changed is appended to out (once; out may be
 * NULL).  0, or GF_EINVAL for now_ms <= 0.  Debug builds (GF_DEBUG) run
 * gf_ctl_check after it and abort on a broken invariant.
 */
int gf_ctl_schedule(struct gf_ctl *ctl, int64_t now_ms,
		    struct gf_ctl_changes *out) GF_MUST_CHECK;

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
	int nodes_ready, nodes_notready;
	int gpus_unhealthy;
	/* free GPU that cannot take work now: on unhealthy GPUs (not in
	 * MIG mode) and on nodes not ready (milli) */
	int64_t gpus_unavailable_milli;
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

/* ---- nodes at run time ---- */

/* A node as an agent registers it. */
struct gf_ctl_node_spec {
	int32_t cpu_milli;
	int64_t memory_mib;
	int ngpus; /* 0..GF_CNODE_MAX_GPUS */
	/* as the cluster's model table takes it: a catalog id ("h100-sxm",
	 * "l40s") or a trace code; required with GPUs; matched
	 * case-insensitively */
	char gpu_model[GF_MODEL_NAME_MAX];
	/* the MIG table id of its GPUs when they offer MIG ("h100-80gb",
	 * mig.h; aliases too); "": derived from gpu_model when it has
	 * instances (as gf_ctl_new does), else none */
	char mig_model[GF_MODEL_NAME_MAX];
	char labels[GF_CTL_LABELS_MAX];	       /* "k=v,k=v" */
	char block[GF_NODE_NAME_MAX];	       /* "": the default block (0); a
						  name not known yet: a new block */
	struct gf_ctl_mig mig[GF_CTL_MAX_MIG]; /* its MIG instances now */
	int nmig;
	const struct gf_gpu_topo *topo; /* its GPUs' links (borrowed for
					   the call); NULL unknown */
};

/*
 * Know the node `name` (letters, digits, '.', '_', '-'; < 48 bytes):
 * returns its index (stable for the core's life), or a negative code.
 *
 * A new name is added, empty and not ready ("waiting for its agent"):
 * nothing is placed on it before gf_ctl_node_ready(true), and running
 * jobs restored onto it by gf_ctl_add (a controller restart) stay
 * running there.  Jobs waiting for a node like it ("can never be placed
 * here: ...") are looked at again.
 *
 * A known name is updated:
 *   same shape (CPU, memory, GPU count, GPU model and MIG model): its
 *   labels, block, MIG instances and GPU topology change in place;
 *   running jobs stay (a selector no longer matching does not stop
 *   them); moved to another block, its single-replica jobs move with it
 *   and a gang with a replica there is requeued (it would span blocks);
 *   instances may change only on GPUs whose instances are all free, and
 *   a GPU entering MIG mode must be free, else GF_ECONFLICT naming the
 *   busy instance or GPU and the job on it ("node n1: GPU 3: MIG
 *   instance 1g.10gb at slice 2 is in use by j12"), nothing changed;
 *   the same everything: nothing happens;
 *   another shape: every job running there is requeued as
 *   gf_ctl_requeue does ("node n1 changed shape"; a gang whole), the
 *   node rebuilt empty, its GPUs healthy again; readiness unchanged.
 * Jobs the call requeues or changes are appended to out (NULL: reported
 * by the next gf_ctl_schedule).
 *
 * Errors, nothing changed: GF_EINVAL (e names the field: a bad name,
 * negative capacity, more than 16 GPUs, GPUs without a model, labels,
 * block name, a MIG instance the model's rules refuse, a topology of
 * another GPU count, now_ms <= 0), GF_ECONFLICT (above), GF_ETOOBIG (more
 * than GF_MAX_CNODES nodes, GF_MAX_MODELS models, GF_CTL_MAX_BLOCKS
 * blocks or 64 MIG profile names).  Cost: amortized O(classes + blocks +
 * cached selector masks + jobs never placeable, checked once per alike
 * group) for a new node; O(nodes + jobs) for an update that changes
 * something.
 */
int gf_ctl_node_add(struct gf_ctl *ctl, const char *name,
		    const struct gf_ctl_node_spec *spec, int64_t now_ms,
		    struct gf_ctl_changes *out, struct gf_err *e) GF_MUST_CHECK;

/*
 * Node `node` ready (its agent heartbeats) or not.  Not ready: every job
 * running on it (a gang with one replica there: all its replicas) goes
 * back to PENDING if it has attempts left, else FAILED, as
 * gf_ctl_requeue does, with the reason "node NAME not ready: REASON"
 * (REASON NULL or "": "node NAME not ready"); nothing new is placed on
 * it until it is ready again.  Changed jobs are appended to out (NULL:
 * reported by the next gf_ctl_schedule).  Idempotent (a repeated "not
 * ready" only updates the node's reason).  GF_EINVAL for a bad index or
 * now_ms <= 0.
 */
int gf_ctl_node_ready(struct gf_ctl *ctl, int node, bool ready,
		      const char *reason, int64_t now_ms,
		      struct gf_ctl_changes *out,
		      struct gf_err *e) GF_MUST_CHECK;

/*
 * Cordon node `node` (nothing new is placed there; what runs there runs
 * on: its agent went quiet but may come back, or an operator drains it),
 * or lift the cordon.  Independent of ready: a node takes work when it is
 * ready and not cordoned.  Idempotent; GF_EINVAL for a bad index.
 */
int gf_ctl_node_cordon(struct gf_ctl *ctl, int node, bool cordon,
		       struct gf_err *e) GF_MUST_CHECK;
bool gf_ctl_node_is_cordoned(const struct gf_ctl *ctl, int node);

/*
 * Drain node `node` (an operator: nothing new is placed there, what runs
 * there finishes), or resume it.  Independent of ready and of the
 * cordon: a node takes work when it is ready, not cordoned and not
 * drained.  Idempotent; GF_EINVAL for a bad index.
 * gf_ctl_node_replicas: the replicas running or completing there (a
 * drained node with none is empty: "drained").
 */
int gf_ctl_node_drain(struct gf_ctl *ctl, int node, bool drain,
		      struct gf_err *e) GF_MUST_CHECK;
bool gf_ctl_node_is_draining(const struct gf_ctl *ctl, int node);
int gf_ctl_node_replicas(const struct gf_ctl *ctl, int node);

/* GPU time a job used (a run that ended, as its node reported it), added
 * to its gpu_ms.  GF_ENOTFOUND, GF_EINVAL for a negative amount. */
int gf_ctl_job_usage(struct gf_ctl *ctl, const char *id,
		     int64_t gpu_ms) GF_MUST_CHECK;

/*
 * Replicas completing (cfg.hold_until_gone; job.h's gf_job_held).
 * gf_ctl_held_release: replica `replica` of run `attempt` of job id is
 * gone (its node said so, or an operator forced it): its resources go
 * back to the engine.  0; GF_ENOTFOUND (no such job, or that replica is
 * not held).  The job changed (its held list): the caller persists it.
 * gf_ctl_nholding / gf_ctl_holding_at: the jobs with held replicas (any
 * state), borrowed as gf_ctl_job's.
 */
int gf_ctl_held_release(struct gf_ctl *ctl, const char *id, int attempt,
			int replica, struct gf_err *e) GF_MUST_CHECK;
/* A held replica's why replaced (a node says it outlives SIGKILL): 0 or
 * GF_ENOTFOUND; the caller persists the job. */
int gf_ctl_held_note(struct gf_ctl *ctl, const char *id, int attempt,
		     int replica, const char *why) GF_MUST_CHECK;
int gf_ctl_nholding(const struct gf_ctl *ctl);
const struct gf_job *gf_ctl_holding_at(const struct gf_ctl *ctl, int i);

/*
 * GPU `gpu` of `node` healthy or not (reason kept for listing, NULL
 * none).  An unhealthy GPU gets no new work: not whole, not in shares,
 * none of its MIG instances; what runs there keeps running (the caller
 * decides whether to stop it).  Idempotent; GF_EINVAL for a bad index.
 */
int gf_ctl_gpu_health(struct gf_ctl *ctl, int node, int gpu, bool healthy,
		      const char *reason, struct gf_err *e) GF_MUST_CHECK;

/* Nodes known (indexes 0..n-1), and the index of a name or -1. */
int gf_ctl_nnodes(const struct gf_ctl *ctl);
int gf_ctl_node_find(const struct gf_ctl *ctl, const char *name);
/* Ready, or why not ("" when ready; "waiting for its agent" for a node
 * added and never ready since; else the reason gf_ctl_node_ready got, or
 * "not ready"); false / "" for a bad index. */
bool gf_ctl_node_is_ready(const struct gf_ctl *ctl, int node);
const char *gf_ctl_node_reason(const struct gf_ctl *ctl, int node);
/* GPU health ("" when healthy or no reason given); false / "" for a
 * bad index. */
bool gf_ctl_gpu_is_healthy(const struct gf_ctl *ctl, int node, int gpu);
const char *gf_ctl_gpu_reason(const struct gf_ctl *ctl, int node, int gpu);

/* ---- another scheduler's decisions (the Kubernetes extender) ---- */

/*
 * Start `job` on node `node`, which another scheduler chose (a pod
 * kube-scheduler binds): the job as gf_ctl_add takes it, PENDING, one
 * replica, never started (block -1).  The engine chooses its GPUs on
 * that node as its own pass would (the best-linked free set for several
 * GPUs, the policy's GPU for a share, the next free instance of its MIG
 * profile); its team's quota applies.  Then it is RUNNING (started at
 * now_ms, its first attempt) and the core's, like any job: cancel,
 * finish and requeue end it.  Errors, nothing taken or changed:
 * GF_ENOTFOUND (it does not fit there now: room, a node not ready or
 * cordoned, unhealthy GPUs), GF_ECONFLICT (its team's quota: e says
 * why), and those of gf_ctl_add; GF_EINVAL for a gang, a job not new, a
 * bad node or now_ms <= 0.
 */
int gf_ctl_add_on(struct gf_ctl *ctl, struct gf_job *job, int node,
		  int64_t now_ms, struct gf_err *e) GF_MUST_CHECK;

/* Does a replica fit on n (a copy of a node with some work released),
 * mig_free being the free instances of its MIG profile there? */
typedef bool (*gf_ctl_fit_fn)(void *arg, const struct gf_cnode *n,
			      int mig_free);

/*
 * Preemption on one node for another scheduler: of the running jobs
 * ids[0..nids) (those with no replica on `node` are skipped), the fewest
 * whose release lets one replica of spec fit on the node by fits(arg,
 * ...), which is called on copies of the node; ties go as the core's own
 * preemption breaks them (the lowest class, the least GPU taken from
 * running work, the most recently started, the first found).  At most
 * 20 candidates are looked at, 100,000 sets tried.  Their positions in
 * ids go to out[] (room for nids).  Returns the count (0: it fits
 * without a victim), GF_ENOTFOUND (no such set), GF_EINVAL (bad
 * arguments).  Changes nothing (it uses the core's scratch: one thread
 * at a time, as for every call).
 */
int gf_ctl_victims(struct gf_ctl *ctl, const struct gf_job_spec *spec, int node,
		   const char *const *ids, int nids, gf_ctl_fit_fn fits,
		   void *arg, int *out) GF_MUST_CHECK;

/* MIG instances of `profile` on node: the number it offers (returned; 0
 * for a profile or node unknown), the number free for new work in *free
 * (not in use, not on an unhealthy GPU), and in *first (may be NULL) the
 * one the core gives next when *free > 0.  Reads only. */
int gf_ctl_mig_count(const struct gf_ctl *ctl, int node, const char *profile,
		     int *free, struct gf_ctl_mig *first);

/* The placement policy's score of node for r, 0..100 (r must fit there:
 * gf_cnode_fits), and the GPU a share would take (-1 none), as the
 * engine scores it; reads only (no score cache). */
int gf_ctl_score(const struct gf_ctl *ctl, int node, const struct gf_req *r,
		 int *gpu);

/* Bumped whenever gf_ctl_score's answer for a node may change while the
 * node's version (gf_cnode.version) and flags stay: the typical mix
 * refreshed from the arrivals, FGD+'s settings changed
 * (gf_sched_score_gen).  A score is that of the node again while its
 * version, its flags and this count are the ones it was computed at.
 * Reads only. */
uint64_t gf_ctl_score_gen(const struct gf_ctl *ctl);

/* Invariants (engine, quotas in use, placements of running jobs, queue,
 * nodes: no running replica on a node made not ready, nothing started on
 * a node not ready or on an unhealthy GPU since it became so, the
 * engine's holds and cordons as the nodes' states say): 0 or GF_EINVAL
 * with msg. */
int gf_ctl_check(const struct gf_ctl *ctl, char *msg,
		 unsigned size) GF_MUST_CHECK;

#endif
