/*
 * worker.h - the node agent's worker: it starts the jobs the controller
 * assigns to this node, bound to their GPUs' CPUs, NUMA memory and NIC,
 * watches them, stops them, and finds them again after the agent
 * restarts.  No HTTP here: the agent calls these functions and reports
 * what they say.  docs/worker.md has the design.
 *
 * Every job runs under a shim: a small process forked from the agent (a
 * double fork, so it is nobody's child but init's) that forks the job,
 * waits for it and writes its wait status to the state directory
 * atomically.  The agent may die (kill -9) at any time: running jobs keep
 * running under their shims, and a worker opened again on the same state
 * directory tracks them again and learns the exit codes of those that
 * ended meanwhile.  A process is recognised by its pid AND its start time
 * (/proc/PID/stat) and the boot id, so a reused pid never passes for a
 * job.
 *
 * State directory (one per node, one worker at a time: flock):
 *   STATE/lock                   held while a worker is open
 *   STATE/jobs/JOB.REPLICA.ATTEMPT/run   written before the job runs
 *   STATE/jobs/JOB.REPLICA.ATTEMPT/stop  why and when it was stopped
 *   STATE/jobs/JOB.REPLICA.ATTEMPT/exit  wait status, end time (the shim)
 * A job's directory stays until the caller acknowledges its end with
 * gf_worker_forget(), so a result is never dropped by a crash between the
 * event and the report.
 *
 * Thread-safety: none.  A worker belongs to one thread (the agent's
 * loop); calls on one worker must not overlap.  Different workers (on
 * different state directories) are independent.  The calling process may
 * have other threads: the children the worker forks call only
 * async-signal-safe functions until exec.
 */
#ifndef GF_WORKER_WORKER_H
#define GF_WORKER_WORKER_H

#include <stdbool.h>
#include <stdint.h>

#include <gpufleet/err.h>
#include <gpufleet/job.h>
#include <gpufleet/node.h>

#include "nodeproto/nodeproto.h"

/* Caps; each exceeded is GF_ETOOBIG (or GF_EINVAL for a bad character),
 * never a truncation. */
#define GF_WORKER_ID_MAX	64    /* job id, with its NUL */
#define GF_WORKER_NODE_MAX	64    /* node name, with its NUL */
#define GF_WORKER_CMD_MAX	16384 /* command bytes (>= GF_JOB_CMD_MAX) */
#define GF_WORKER_ENV_MAX	256   /* extra pairs (= GF_JOB_ENV_MAX) */
#define GF_WORKER_ENV_NAME_MAX	256   /* bytes of a name */
#define GF_WORKER_ENV_VALUE_MAX 65536 /* of a value (GF_JOB_ENV_BYTES) */
#define GF_WORKER_GROUPS_MAX	256   /* a user's groups given the job */
#define GF_WORKER_ADDR_MAX	256   /* MASTER_ADDR, with its NUL */
#define GF_WORKER_UUID_MAX	96    /* GPU or MIG device UUID, with NUL */
#define GF_WORKER_PATH_MAX	1024  /* a directory or file path */
#define GF_WORKER_MAX_JOBS                         \
	1024 /* jobs known at once (running or not \
		yet forgotten) */
#define GF_WORKER_REPLICA_MAX	   (1 << 20)
#define GF_WORKER_ATTEMPT_MAX	   (1 << 20)
#define GF_WORKER_GRACE_DEFAULT_MS 10000
#define GF_WORKER_NOTE_MAX	   192

struct gf_worker;

struct gf_worker_opts {
	const char *state_dir; /* created (with its parents) when missing */
	const char *log_dir;   /* JOB.REPLICA.log files; created too */
	const char *node_name; /* GPUFLEET_NODE; [A-Za-z0-9._-], 1..63 */
	/*
	 * The node's topology for the bind planner (gf_node_source_load);
	 * borrowed, must outlive the worker.  NULL: no topology, so no CPU or
	 * memory binding and no NIC variables (CUDA_VISIBLE_DEVICES still
	 * comes from the assignment).  A node that is not this machine (a
	 * recording, a template) needs env_only.
	 */
	const struct gf_node *node;
	bool env_only;	  /* plan the environment, bind no CPU or memory */
	int64_t grace_ms; /* SIGTERM -> SIGKILL; 0: the default (10 s) */
	/*
	 * A lease, or NULL: a file holding "WALL_MS FOR_MS" (the lease was
	 * renewed at WALL_MS, ms since the epoch, for FOR_MS).  Each shim
	 * reads it every second; once the lease has run out, the shim stops
	 * its job itself (SIGTERM to its group, SIGKILL after grace_ms) and
	 * the end is GF_WORKER_END_FENCED.  This holds when the agent itself
	 * is dead: its jobs never outlive the time the controller gives a
	 * silent node before it starts them elsewhere.  A missing or
	 * unreadable file is no lease yet (nothing is stopped).
	 */
	const char *lease_path;
	bool cgroup; /* try a cgroup v2 per job (else process groups) */
	/* the login a job without a user runs as (the agent's
	 * --default-user); NULL or "": the agent's own user */
	const char *default_user;
};

enum gf_worker_gpu_kind {
	GF_WORKER_GPU_WHOLE = 0, /* ngpus whole GPUs (0: a job without GPU) */
	GF_WORKER_GPU_SHARE,	 /* gpu_milli of the one GPU gpus[0] */
	GF_WORKER_GPU_MIG,	 /* the MIG instance mig_uuid on gpus[0] */
};

struct gf_worker_env {
	const char *name;
	const char *value;
};

/* One replica of a job, as the controller assigns it to this node.  Every
 * pointer is borrowed for the duration of gf_worker_start only. */
struct gf_assignment {
	const char *job; /* id: [A-Za-z0-9_-] then [A-Za-z0-9._-], < 64 */
	int replica;	 /* 0.. */
	/* The job's attempt (1.., 0 when the caller does not count them):
	 * job, replica and attempt name one run.  A replica runs once at a
	 * time whatever the attempt; an ended run of another attempt that
	 * is not yet forgotten does not block a new one. */
	int attempt;
	/* A gang (world_size > 1) gets torchrun's variables; else none. */
	int world_size;
	int rank;	/* 0..world_size-1 */
	int local_rank; /* rank among this node's replicas of the gang */
	const char *master_addr; /* host or address of rank 0 */
	int master_port;	 /* 1..65535 */
	enum gf_worker_gpu_kind kind;
	/*
	 * Where it runs here: the core's placement as the controller sent
	 * it (nodeproto's struct gf_np_assignment holds the same value).
	 * ngpus and gpus: GPU indexes on this node (NVML order, at most
	 * GF_CNODE_MAX_GPUS); for a share or MIG, the one GPU.  gpu_milli:
	 * thousandths of one GPU this replica holds, for GPU-seconds: a
	 * share's (1..1000); for a MIG instance its fraction of the GPU
	 * (the caller knows the profile: 1g.10gb of an H100 is 1/7 ->
	 * 143).  Ignored for whole GPUs (1000 each).  node, node_name and
	 * mig_start are not read.
	 */
	struct gf_job_place place;
	/* Their UUIDs ("GPU-..."), NULL or "" when unknown: the node's own
	 * are used then, else indexes with CUDA_DEVICE_ORDER=PCI_BUS_ID.  A
	 * UUID that differs from the node's for the same index is refused. */
	const char *gpu_uuids[GF_MAX_GPUS];
	const char *mig_uuid; /* "MIG-..." for GF_WORKER_GPU_MIG */
	/* CPUs to bind: ceil(cpu_milli / 1000) logical CPUs of the GPUs'
	 * local ones (the bind planner's count; capped at what they hold,
	 * with a warning); 0: every local CPU. */
	int cpu_milli;
	int64_t max_runtime_ms;		 /* 0: no limit */
	const char *command;		 /* run as /bin/sh -c COMMAND */
	const struct gf_worker_env *env; /* extra pairs (PATH, HOME, ...) */
	int nenv;
	const char *workdir; /* NULL: the user's home directory, else "/" */
	/* an array's task (issue 21): its array's id ("j12"), its index;
	 * NULL or "": none */
	const char *array_job;
	int array_task;
	/* stdout and stderr elsewhere (job.h's output, error: absolute,
	 * with %j %r %a %n, expanded here): opened by the job's process
	 * (appended, created 0640) before it runs; the start marker is
	 * written there too.  The run's own log (gf_worker_log_path) still
	 * holds the markers, and says where the output went.  NULL: the
	 * run's log; error NULL: with stdout. */
	const char *output;
	const char *error;
	/*
	 * Who it runs as (issue 21): the login user (NULL or "": the
	 * worker's default_user, else the agent's own user).  Switching to
	 * another needs the agent to run as root: the job gets its groups
	 * (initgroups' list), gid and uid before exec, and HOME, USER,
	 * LOGNAME and SHELL from its passwd entry (unless env sets them).
	 * An unknown login fails the start (GF_ENOTFOUND); so does running
	 * as root (uid 0) when refuse_root.
	 */
	const char *user;
	bool refuse_root;
};

enum gf_worker_event_kind {
	GF_WORKER_STARTED = 0, /* by gf_worker_start, or found running */
	GF_WORKER_ENDED,
};

enum gf_worker_end {
	GF_WORKER_END_NONE = 0,	   /* (a STARTED event) */
	GF_WORKER_END_EXITED,	   /* it ended on its own */
	GF_WORKER_END_STOPPED,	   /* gf_worker_stop */
	GF_WORKER_END_MAX_RUNTIME, /* it ran past max_runtime_ms */
	GF_WORKER_END_FENCED,	   /* its shim stopped it: the lease ran out */
	GF_WORKER_END_LOST,	   /* its shim vanished without writing the
				      status (killed, or the node rebooted):
				      exit code and end time unknown */
};

enum gf_worker_isolation {
	GF_WORKER_ISO_PGROUP = 0, /* its own process group (setsid/setpgid) */
	GF_WORKER_ISO_CGROUP,	  /* its own cgroup v2 (and process group) */
};

struct gf_worker_event {
	enum gf_worker_event_kind kind;
	char job[GF_WORKER_ID_MAX];
	int replica, attempt;
	bool recovered;	  /* found in the state directory by gf_worker_open */
	int pid;	  /* the job's process (and process group) */
	int64_t start_ms; /* ms since the epoch */
	int64_t end_ms;	  /* ENDED: when it ended (LOST: when the worker
			     noticed, or the boot after the one it ran in) */
	enum gf_worker_end end;
	int exit_code; /* ENDED by exit: its code; else -1 (the store's
			  convention for a signal is 128 + signal) */
	int signal;    /* ENDED by a signal: its number; else 0 */
	/* ENDED: whole GPUs x seconds (a share or MIG instance counts its
	 * gpu_milli / 1000), from start_ms to end_ms; and the same in
	 * GPU-milliseconds (job.h's gpu_ms), rounded down. */
	double gpu_seconds;
	int64_t gpu_ms;
	enum gf_worker_isolation isolation;
	char note[GF_WORKER_NOTE_MAX]; /* how it ended, in words */
};

/* A running job, for heartbeats and reconciliation. */
struct gf_worker_job {
	char job[GF_WORKER_ID_MAX];
	int replica, attempt;
	int pid;
	int64_t start_ms;
	bool recovered;
	bool stopping;	 /* SIGTERM sent (gf_worker_stop or max runtime) */
	bool supervised; /* false: its shim is gone (killed); it is
			    watched by pid, its exit code will be unknown */
	enum gf_worker_isolation isolation;
	char cgroup[GF_WORKER_PATH_MAX]; /* its cgroup directory, or "" */
	char log[GF_WORKER_PATH_MAX];	 /* its output */
};

/*
 * The options' checks gf_worker_open makes first, with nothing created:
 * 0, or GF_EINVAL / GF_ETOOBIG (a directory path too long, named) /
 * GF_ENOTTHIS with e set.  A caller that makes directories for the worker
 * checks before it does.
 */
int gf_worker_check_opts(const struct gf_worker_opts *o,
			 struct gf_err *e) GF_MUST_CHECK;

/*
 * Open the worker on o->state_dir and recover: every job the directory
 * says was started is tracked again when its process still runs (a
 * STARTED event with recovered set), or reported ended with its exit
 * status (an ENDED event) when it ended while no worker watched; a job
 * whose shim died without a status is ENDED as LOST.  Returns 0 with *out
 * (caller closes with gf_worker_close), or a negative code with e set:
 * GF_EINVAL / GF_ETOOBIG (bad options), GF_ECONFLICT (another worker holds the
 * state directory), GF_ENOTTHIS (a node that is not this machine without
 * env_only), -errno (directories).  A job record that cannot be read is
 * moved aside (jobs/.bad.NAME) with an error in the log, never dropped
 * silently.
 */
int gf_worker_open(const struct gf_worker_opts *o, struct gf_worker **out,
		   struct gf_err *e) GF_MUST_CHECK;

/*
 * Release the worker and its lock.  Running jobs keep running (they are
 * their shims'); a later gf_worker_open finds them.  NULL is a no-op.
 */
void gf_worker_close(struct gf_worker *w);

/*
 * Start a replica: returns once its record is durable and its process is
 * about to exec /bin/sh (which then runs the command; a command that does
 * not exist ends with 127 like in any shell).  Errors, e->msg naming the
 * job and replica: GF_EINVAL (a bad assignment: ids, ranks, reserved
 * environment names, GPUs the node has not), GF_ETOOBIG (a cap above),
 * GF_ECONFLICT (this job and replica is running, under any attempt, or
 * this attempt ended and is not yet forgotten: a replica never runs
 * twice at once on a node), GF_EBIND (a
 * binding the kernel refused), -errno (fork, files).  On error nothing
 * runs and nothing is left in the state directory.
 */
int gf_worker_start(struct gf_worker *w, const struct gf_assignment *a,
		    struct gf_err *e) GF_MUST_CHECK;

/*
 * Stop a running replica: SIGTERM to its process group (and every process
 * of its cgroup), SIGKILL to them once the grace period has passed (done
 * by gf_worker_poll).  Returns at once; the end comes as an ENDED event
 * with end GF_WORKER_END_STOPPED.  Stopping a job already stopping is a
 * no-op (the first deadline holds).  Errors: GF_ENOTFOUND (not known:
 * a stop for an older attempt never touches a newer one), GF_ECONFLICT
 * (it has ended already).  The request is recorded, so a worker opened
 * after a crash keeps the deadline.
 */
int gf_worker_stop(struct gf_worker *w, const char *job, int replica,
		   int attempt, struct gf_err *e) GF_MUST_CHECK;

/*
 * What happened since the last call, oldest first: up to max events into
 * ev; returns how many (0..max); the rest wait for the next call.  Each
 * call also does the watching: reads exit statuses, notices shims that
 * died, stops jobs past their max runtime, sends SIGKILL to jobs whose
 * grace has passed and removes empty job cgroups.  Call it often (every
 * 100 ms - 1 s): the SIGKILL after the grace is only as punctual as the
 * calls.  Each event is returned once per worker; an ENDED job stays (and
 * is reported again by a later gf_worker_open) until gf_worker_forget.
 */
int gf_worker_poll(struct gf_worker *w, struct gf_worker_event *ev, int max);

/* gf_worker_poll with the clock read by the caller: now_ms (ms since the
 * epoch) is the time its limits are measured at (max runtime, the grace
 * before SIGKILL); tests move it to a limit instead of waiting for it. */
int gf_worker_poll_at(struct gf_worker *w, int64_t now_ms,
		      struct gf_worker_event *ev, int max);

/*
 * The jobs running now (not ended), into out (up to max); returns how
 * many are running, which may exceed max (only max were written).
 */
int gf_worker_running(const struct gf_worker *w, struct gf_worker_job *out,
		      int max);

/*
 * Forget an ended replica once its end is reported and acknowledged:
 * removes its state (the log file stays).  Errors: GF_ENOTFOUND,
 * GF_ECONFLICT (still running), -errno.
 */
int gf_worker_forget(struct gf_worker *w, const char *job, int replica,
		     int attempt, struct gf_err *e) GF_MUST_CHECK;

/* How jobs are isolated here: "cgroup v2 under PATH" or "process groups
 * (WHY)"; borrowed, valid until gf_worker_close. */
const char *gf_worker_isolation(const struct gf_worker *w);

/* "exited", "stopped", "max-runtime", "lost" ("" for NONE). */
const char *gf_worker_end_name(enum gf_worker_end end);

/* Consistency check: 0, or GF_EINVAL with msg naming the broken rule. */
int gf_worker_check(const struct gf_worker *w, char *msg,
		    unsigned size) GF_MUST_CHECK;

/* --- the log of a run (worker_log.c) ---
 *
 * One file per run: LOG_DIR/JOB.REPLICA.ATTEMPT.log, stdout and stderr
 * of the job.  Its first line is the start marker, its last (once the
 * end is known, written by the worker) the end marker:
 *
 *   ==> gpufleet: JOB replica R attempt A on NODE started UTC <==
 *   ==> gpufleet: JOB replica R attempt A on NODE ended UTC: WHY <==
 *
 * WHY: "exit code N", "signal N (Killed)", "cancelled (stopped by the
 * controller), ...", "max runtime reached, ...", "fenced (its lease ran
 * out), ...", "lost (...)".  UTC: 2026-12-02T11:03:04Z.
 */
#define GF_WORKER_MARK_OPEN  GF_NP_LOG_MARK /* nodeproto.h: the protocol's */
#define GF_WORKER_MARK_CLOSE GF_NP_LOG_MARK_END

/* The run's log path into out: 0 or GF_ETOOBIG. */
int gf_worker_log_path(char *out, size_t size, const char *log_dir,
		       const char *job, int replica, int attempt) GF_MUST_CHECK;
/* The start and end marker lines (with their newline) into out: 0 or
 * GF_ETOOBIG.  ms: when, ms since the epoch (ev->end_ms for the end). */
int gf_worker_marker_start(char *out, size_t size, const char *job, int replica,
			   int attempt, const char *node,
			   int64_t ms) GF_MUST_CHECK;
struct gf_worker_event;
int gf_worker_marker_end(char *out, size_t size,
			 const struct gf_worker_event *ev,
			 const char *node) GF_MUST_CHECK;
/* A --output / --error path with its tokens replaced: %j the job id, %r
 * the replica, %a the attempt, %n the node, %% a '%'.  0, GF_ETOOBIG
 * (out too small), GF_EINVAL (another token: refused at submit). */
int gf_worker_expand(char *out, size_t size, const char *tmpl, const char *job,
		     int replica, int attempt, const char *node) GF_MUST_CHECK;

#endif
