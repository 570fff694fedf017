/*
 * job.h - a GPU job as the controller (`gpufleet serve`) keeps it: what
 * was asked (the spec, fixed at submit), where it runs (one placement per
 * replica), and its state.  Shared by the scheduling core (core/jobs), the
 * store (SQLite/PostgreSQL) and the HTTP API, which speaks the same names
 * (the "Contract for scripts" of issue 10):
 *
 *   {"name", "team", "class", "replicas", "gpus", "gpu_model", "gpu_milli",
 *    "mig_profile", "cpu_milli", "memory_mib", "node_selector",
 *    "max_runtime_s", "command"}
 *
 * Per replica a job asks for `gpus` whole GPUs, or `gpu_milli` of one GPU
 * (1..1000), or one `mig_profile` instance; at most one of the three.
 * replicas > 1 is a gang: all replicas run or none, inside one block.
 *
 * State machine (gf_job_state):
 *
 *             add               placed (all replicas)
 *   (none) --------> PENDING ------------------------> RUNNING
 *                    ^ |  ^                             | | | |
 *                    | |  +-- preempted, node lost -----+ | | |
 *                    | |      (attempts left)             | | |
 *                    | | cancel            cancel         | | | exit 0
 *                    | v                                  | | v
 *                    | CANCELLED <------------------------+ | SUCCEEDED
 *                    |                                      v
 *     restored, no   |                                    FAILED
 *     longer fits ---+                 (exit != 0, max runtime passed,
 *     (gf_ctl_add)                      node lost with no attempts left)
 *
 *   FROM -> TO            [who]
 *   none -> PENDING       gf_ctl_add (after the store committed it)
 *   none -> RUNNING       gf_ctl_add (a restart restoring its placements;
 *                         PENDING when they no longer fit)
 *   PENDING -> RUNNING    gf_ctl_schedule (placements committed to the engine)
 *   PENDING -> CANCELLED  gf_ctl_cancel, gf_ctl_schedule (a dependency
 *                         that can never be met: jobflow.h)
 *   (a PENDING job held, waiting for a dependency or at its array's
 *   %max is not started: jobflow.h)
 *   RUNNING -> PENDING    gf_ctl_schedule (preempted by a higher class),
 *                         gf_ctl_requeue (node lost, attempts left),
 *                         gf_ctl_node_ready (its node not ready, attempts
 *                         left), gf_ctl_node_add (its node changed shape,
 *                         or a gang's node moved to another block)
 *   RUNNING -> SUCCEEDED  gf_ctl_finish (exit 0)
 *   RUNNING -> FAILED     gf_ctl_finish (exit != 0), gf_ctl_schedule (max
 *                         runtime passed), gf_ctl_requeue, gf_ctl_node_ready,
 *                         gf_ctl_node_add (as above, no attempts left)
 *   RUNNING -> CANCELLED  gf_ctl_cancel
 *   final -> anything     refused: GF_ECONFLICT
 * SUCCEEDED, FAILED and CANCELLED are final.  Invariants (gf_job_check):
 * a job holds placements iff it is RUNNING, one per replica, each of the
 * kind its spec asks; block >= 0 iff it is RUNNING; started_ms is set iff
 * it runs or ended after running (0 while a requeued job waits: the
 * start of its last run otherwise), and only when attempts > 0; ended_ms
 * iff it is final; preemptions, failures and requeues each <= attempts;
 * held replicas are of placements the spec asks, each (attempt, replica)
 * once, attempt <= attempts; id is "j<seq>".  Times are ms since the epoch, so
 * 0 means "not yet" and a real time is > 0.
 */
#ifndef GPUFLEET_JOB_H
#define GPUFLEET_JOB_H

#include <stdbool.h>
#include <stdint.h>

#include <gpufleet/err.h>
#include <gpufleet/req.h>

#define GF_JOB_ID_MAX	    24 /* "j" + 20 digits */
#define GF_JOB_NAME_MAX	    64
#define GF_TEAM_NAME_MAX    48
#define GF_CLASS_NAME_MAX   32
#define GF_GPU_MODEL_MAX    32	 /* a catalog id or a trace model name */
#define GF_MIG_PROFILE_MAX  24	 /* "1g.10gb", "1g.24gb+me" */
#define GF_SELECTOR_MAX	    256	 /* "k=v,k=v" */
#define GF_JOB_CMD_MAX	    4096 /* bytes of the command line */
#define GF_JOB_PATH_MAX	    1024 /* --output / --error, with its NUL */
#define GF_JOB_MAX_REPLICAS 1024
#define GF_JOB_REASON_MAX   160
#define GF_JOB_DEP_MAX	    256 /* "afterok:j1:j2,afterany:j3" */
/* caps on the numbers of a spec (gf_job_spec_check) */
#define GF_JOB_CPU_MILLI_MAX  100000000		 /* 100,000 cores */
#define GF_JOB_MEMORY_MIB_MAX (INT64_C(1) << 40) /* 1 EiB */
#define GF_JOB_RUNTIME_MAX_S  (INT64_C(100) * 366 * 86400)
/* environment, directory and user (issue 21) */
#define GF_JOB_ENV_MAX	    256	  /* variables */
#define GF_JOB_ENV_BYTES    65536 /* their "NAME=VALUE" + NUL, summed */
#define GF_JOB_ENV_NAME_MAX 256
#define GF_JOB_WORKDIR_MAX  1024
#define GF_JOB_USER_MAX	    33 /* a login of up to 32 bytes */

enum gf_job_state {
	GF_JOB_PENDING = 0,
	GF_JOB_RUNNING,
	GF_JOB_SUCCEEDED,
	GF_JOB_FAILED,
	GF_JOB_CANCELLED,
};

/* Who made a job: a request to the API, or the Kubernetes scheduler
 * extender for a pod (Kubernetes runs it: no node agent is ever assigned
 * one).  A pod's job names its pod in its command, "k8s-pod UID NS/NAME"
 * (k8s/decide.c); the store keeps the origin in a column of its own
 * (before schema 5 it had to be guessed from that prefix). */
#define GF_JOB_K8S_COMMAND "k8s-pod "
enum gf_job_origin {
	GF_JOB_ORIGIN_API = 0,
	GF_JOB_ORIGIN_K8S,
};

/* What was asked; fixed at submit. */
struct gf_job_spec {
	char name[GF_JOB_NAME_MAX];
	char team[GF_TEAM_NAME_MAX];	    /* default "default" */
	char class_name[GF_CLASS_NAME_MAX]; /* default "batch" */
	int replicas;			    /* 1..GF_JOB_MAX_REPLICAS */
	/* per replica: */
	int gpus;			      /* whole GPUs, 0..16 */
	char gpu_model[GF_GPU_MODEL_MAX];     /* "" any */
	int gpu_milli;			      /* 0, or 1..1000 of one GPU */
	char mig_profile[GF_MIG_PROFILE_MAX]; /* "" none */
	int cpu_milli;
	int64_t memory_mib;
	char node_selector[GF_SELECTOR_MAX]; /* "k=v,k=v", "" none */
	int64_t max_runtime_s;		     /* 0: no limit */
	char *command; /* owned, NULL for none (< GF_JOB_CMD_MAX) */
	/* the inference service it is a replica of ("" none): the
	 * controller keeps a service's count of such jobs (docs/
	 * cluster.md); the core gives it no meaning */
	char service[GF_JOB_NAME_MAX];
	enum gf_job_origin origin;
	/* arrays, dependencies, holds (issue 21; jobflow.h): an array
	 * task's array ("j12": its first task's id; "" none), its index,
	 * how many of its array's tasks may run at once (0: no cap); the
	 * jobs it waits for, normalized ("afterok:j1:j2,afterany:j3"; ""
	 * none); submitted held (the job's user_hold starts so) */
	char array_id[GF_JOB_ID_MAX];
	int array_task;
	int array_max;
	char dependency[GF_JOB_DEP_MAX];
	bool hold;
	/* logs (issue 21): where the node writes the job's stdout and its
	 * stderr instead of its own log (worker.h), with %j %r %a %n for
	 * job id, replica, attempt, node, %% a '%'; absolute, shorter than
	 * GF_JOB_PATH_MAX; owned, NULL: the node's log (stderr: with
	 * stdout) */
	char *output;
	char *error;
	/* environment, directory and user (issue 21): what the node's
	 * worker gives the process on top of its own variables (the GPU
	 * and NCCL ones win), where it starts, who it runs as */
	char *env; /* owned: {"NAME": "VALUE", ...} as compact JSON (the
		      body's "env", checked: gf_job_env_check), NULL none */
	char workdir[GF_JOB_WORKDIR_MAX]; /* absolute; "" the user's home */
	char user[GF_JOB_USER_MAX];	  /* the submitting token's user: the
					     login it runs as; "" the node's
					     default user */
};

#define GF_JOB_NODE_MAX 48 /* = GF_NODE_NAME_MAX of cluster.h */

/* Where one replica runs. */
struct gf_job_place {
	char node_name[GF_JOB_NODE_MAX]; /* what the store keeps */
	int node;  /* index in the controller's node table; -1 unknown */
	int ngpus; /* whole GPUs, or 1 for a share or a MIG instance; 0 for
		      a job without GPUs */
	int gpus[GF_CNODE_MAX_GPUS]; /* GPU indexes within the node */
	int gpu_milli; /* the share, 1000 for whole GPUs, 0 for a MIG
			  instance or no GPU */
	int mig_start; /* MIG: the instance's start slice; -1 */
};

/*
 * A replica of an earlier run whose processes may still live (issue 19):
 * when a running job stops (cancel, preemption, a requeue, a failure, its
 * max runtime) in a core that holds until gone (gf_ctl_config.
 * hold_until_gone), each replica's resources stay taken in the engine
 * under its old placement until the node says its processes are gone
 * (gf_ctl_held_release).  Nothing is placed onto them meanwhile.
 */
#define GF_JOB_HELD_MAX 64 /* held replicas per job (more are released) */
struct gf_job_held {
	int attempt, replica;
	int64_t since_ms;	   /* when it started completing */
	char why[24];		   /* "cancelled", "preempted", ... */
	struct gf_job_place place; /* node_name, GPUs as it ran */
	uint64_t by_seq; /* preempted: the job waiting for it; 0 none (not
			    stored: a restart forgets who waits) */
};

struct gf_job {
	uint64_t seq;		/* submission order, from 1; never reused */
	char id[GF_JOB_ID_MAX]; /* "j<seq>": what the API names */
	struct gf_job_spec spec;
	enum gf_job_state state;
	char reason[GF_JOB_REASON_MAX]; /* why it waits or how it ended */
	int64_t submitted_ms, started_ms, ended_ms; /* ms since the epoch;
						       0: not yet */
	int attempts;				    /* runs: times it started */
	int preemptions; /* times it was put back by preemption */
	int failures;	 /* its own failures: non-zero exit, max runtime */
	int requeues;	 /* put back by the infrastructure: node lost,
			    fenced, changed shape, could not start */
	int exit_code;	 /* when it ended by exiting */
	int block;	 /* the block a running job is in (a gang: all its
			    replicas); -1 when not running */
	/* GPU time used, all attempts, in GPU-milliseconds (a whole GPU
	 * for 1 s: 1000; a 250-milli share for 4 s: 1000; a MIG instance
	 * as its fraction of the GPU), as the nodes reported it; >= 0 */
	int64_t gpu_ms;
	struct gf_job_place *place; /* spec.replicas entries while RUNNING,
				       else NULL; owned (gf_malloc) */
	struct gf_job_held *held;   /* replicas still completing; owned */
	int nheld;		    /* 0..GF_JOB_HELD_MAX */
	/* held by its user (hold, release; jobflow.h): a PENDING job that
	 * never starts while set */
	bool user_hold;
};

/*
 * One replica's run of one attempt, as its node reported it when the run
 * ended: what chargeback reads (who used which GPUs, when, how long) and
 * what a job's gpu_ms sums.  Kept once per (seq, attempt, replica).
 */
#define GF_JOB_RUN_UUID_MAX  96	 /* one UUID, with its NUL */
#define GF_JOB_RUN_UUIDS_MAX 800 /* 16 "GPU-<36>" and commas, with NUL */
struct gf_job_run {
	uint64_t seq;		      /* the job's */
	int attempt;		      /* 1..: the job's attempts when it ran */
	int replica;		      /* 0..replicas-1 */
	char node[GF_JOB_NODE_MAX];   /* where it ran */
	int64_t started_ms, ended_ms; /* ms since the epoch, node's clock */
	int exit_code;		      /* 128 + N when killed by signal N */
	int64_t gpu_ms;		      /* GPU-milliseconds, as gpu_ms */
	char reason[GF_JOB_REASON_MAX]; /* "exited", "cancelled", "fenced" */
	/* on which GPUs (issue 21): indexes within the node, their UUIDs
	 * ("GPU-a,GPU-b"; "" unknown) and the MIG instance's ("" none), as
	 * the controller placed it and the node's inventory names them */
	int ngpus; /* 0..GF_CNODE_MAX_GPUS */
	int gpus[GF_CNODE_MAX_GPUS];
	char gpu_uuids[GF_JOB_RUN_UUIDS_MAX];
	char mig_uuid[GF_JOB_RUN_UUID_MAX];
	int mig_start; /* MIG: the instance's start slice; -1 none */
};

/* "pending", "running", ...; "?" for a bad value. */
const char *gf_job_state_name(enum gf_job_state s);
/* Parse a state name; GF_ENOTFOUND when unknown. */
int gf_job_state_parse(const char *s, enum gf_job_state *out) GF_MUST_CHECK;
/* Whether the state is final (succeeded, failed, cancelled). */
bool gf_job_is_final(enum gf_job_state s);

/*
 * Check a spec's fields on their own (not against a cluster): lengths,
 * ranges, one GPU kind, selector syntax.  0, or GF_EINVAL with e->msg
 * naming the field ("'gpu_milli': expected 1 to 1000, got 1500").
 */
struct gf_err;
int gf_job_spec_check(const struct gf_job_spec *s,
		      struct gf_err *e) GF_MUST_CHECK;

/* A --output / --error path as a spec holds it (NULL: none): absolute,
 * shorter than GF_JOB_PATH_MAX, no control character, '%' only in the
 * tokens %j %r %a %n %%.  0 or GF_EINVAL naming field. */
int gf_job_path_check(const char *field, const char *p,
		      struct gf_err *e) GF_MUST_CHECK;

/* Deep copy (the command too: gf_strdup); release with
 * gf_job_spec_release. */
void gf_job_spec_copy(struct gf_job_spec *dst, const struct gf_job_spec *src);
void gf_job_spec_release(struct gf_job_spec *s);

/* Free a job's owned parts (command, placements), not j itself. */
void gf_job_release(struct gf_job *j);

/* Invariants of one job (see the table above): 0 or GF_EINVAL + msg. */
int gf_job_check(const struct gf_job *j, char *msg,
		 unsigned size) GF_MUST_CHECK;

#endif
