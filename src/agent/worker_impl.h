/*
 * worker_impl.h - what the worker's files share: the worker and its job
 * table, the state files (worker_record.c), cgroups (worker_cgroup.c), the
 * launch through the shim (worker_launch.c, worker_env.c) and recovery
 * (worker_recover.c).
 */
#ifndef GF_WORKER_IMPL_H
#define GF_WORKER_IMPL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <gpufleet/bind.h>

#include "agent/worker.h"

#define GF__KEY_MAX	(GF_WORKER_ID_MAX + 24) /* "JOB.REPLICA.ATTEMPT" */
#define GF__REC_MAX	16384			/* bytes of a state file */
#define GF__BOOT_ID_MAX 40
#define GF__SHELL	"/bin/sh"
#define GF__DEFAULT_PATH \
	"/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

/* The exit code of a job process told not to run (the worker that forked
 * it died, or failed, before the job's record was durable). */
#define GF__EXIT_NOGO 125

enum gf__wstate {
	GF__W_RUNNING = 0,
	GF__W_ENDED,
};

/* One job replica the worker knows: running, or ended and not forgotten. */
struct gf__wjob {
	char job[GF_WORKER_ID_MAX];
	int replica, attempt;
	char key[GF__KEY_MAX]; /* its directory under STATE/jobs */
	enum gf__wstate state;
	bool recovered;
	bool supervised; /* its shim lives */
	int shim_pid, pid;
	uint64_t shim_start, pid_start; /* /proc/PID/stat field 22 */
	int64_t start_ms, max_runtime_ms;
	int gpu_milli;	       /* thousandths of a GPU held, in total */
	struct gf_bitmap cpus; /* bound to (a job without GPU: others avoid
				  them); empty when unbound or recovered */
	enum gf_worker_isolation iso;
	char cgroup[GF_WORKER_PATH_MAX]; /* "" in process-group mode */
	char iso_note[256];		 /* why a process group, or "" */
	bool cgroup_left;		 /* ended, cgroup not yet removed */
	char log[GF_WORKER_PATH_MAX];
	/* a stop asked for (gf_worker_stop, max runtime) */
	enum gf_worker_end stop_reason; /* NONE when not stopping */
	int64_t stop_ms, kill_at_ms;
};

struct gf_cgroup_env {
	bool ok;		       /* job cgroups can be made here */
	bool has_kill;		       /* cgroup.kill (Linux 5.14+) */
	char base[GF_WORKER_PATH_MAX]; /* the agent's own cgroup directory */
	char why[256];		       /* why not, when !ok */
};

struct gf_worker {
	char state_dir[GF_WORKER_PATH_MAX];
	char log_dir[GF_WORKER_PATH_MAX];
	char node_name[GF_WORKER_NODE_MAX];
	const struct gf_node *node;
	bool env_only;
	int64_t grace_ms;
	char lease_path[GF_WORKER_PATH_MAX]; /* "" none */
	char default_user[GF_JOB_USER_MAX];  /* "" the agent's own */
	int lock_fd, jobs_fd; /* STATE/lock (flocked), STATE/jobs */
	char boot_id[GF__BOOT_ID_MAX];
	struct gf_cgroup_env cg;
	char isolation[GF_WORKER_PATH_MAX + 64];
	struct gf__wjob *jobs;
	int njobs, cap;
	struct gf_worker_event *ev; /* queued events, oldest first */
	int nev, evcap;
};

/* worker.c */
/* The run job.replica.attempt; with attempt -1, the replica's running
 * one. */
struct gf__wjob *gf__worker_find(const struct gf_worker *w, const char *job,
				 int replica, int attempt);
int gf__key(char *out, size_t size, const char *job, int replica,
	    int attempt) GF_MUST_CHECK;
struct gf__wjob *gf__worker_add(struct gf_worker *w);
void gf__worker_push(struct gf_worker *w, const struct gf_worker_event *ev);
void gf__worker_started(struct gf_worker *w, const struct gf__wjob *j);
/* why: with have_status, GF__FENCED when the shim fenced it, else
 * NULL; without, what is known. */
void gf__worker_ended(struct gf_worker *w, struct gf__wjob *j, int status,
		      bool have_status, int64_t end_ms, const char *why);
#define GF__FENCED "fenced"
/* Record the stop (STATE/jobs/KEY/stop) and send SIGTERM. */
void gf__worker_request_stop(struct gf_worker *w, struct gf__wjob *j,
			     enum gf_worker_end reason, int64_t now);
bool gf__valid_id(const char *s, size_t max);

/* worker_record.c: state files and /proc */
/* Write name in dirfd atomically (name.tmp, fsync, rename, fsync dir). */
int gf__rec_write(int dirfd, const char *name, const char *text) GF_MUST_CHECK;
/* Read name (< GF__REC_MAX) into buf (NUL-terminated): 0 or -errno /
 * GF_ETOOBIG. */
int gf__rec_read(int dirfd, const char *name, char *buf,
		 size_t size) GF_MUST_CHECK;
/* The value of "key=" at a line start into out: true when present and
 * it fits. */
bool gf__rec_get(const char *text, const char *key, char *out, size_t size);
bool gf__rec_i64(const char *text, const char *key, int64_t *out);
int gf__job_format(const struct gf__wjob *j, const char *boot_id, char *out,
		   size_t size) GF_MUST_CHECK;
int gf__job_parse(const char *text, struct gf__wjob *j, char *boot_id,
		  size_t boot_size) GF_MUST_CHECK;
/* Remove a job directory's known files and the directory itself. */
int gf__job_remove(int jobs_fd, const char *key) GF_MUST_CHECK;
/* Start time (clock ticks after boot) and state letter of a process:
 * 0, or -ENOENT when it is gone. */
int gf__proc_stat(int pid, uint64_t *start, char *state) GF_MUST_CHECK;
/* Running (not a zombie) with that start time. */
bool gf__proc_alive(int pid, uint64_t start);
int gf__boot_id(char *out, size_t size) GF_MUST_CHECK;
int64_t gf__boot_time_ms(void); /* this boot's start; 0 unknown */

/* worker_log.c: the run's log, opened with its start marker (an fd, or
 * a negative code with e set; path gets the file's name), closed with
 * its end marker once (the "logend" mark in its state directory) */
int gf__log_open(const struct gf_worker *w, const char *job, int replica,
		 int attempt, char *path, size_t size, struct gf_err *e);
void gf__log_close(const struct gf_worker *w, const struct gf__wjob *j,
		   const struct gf_worker_event *ev);

/* worker_cgroup.c */
void gf__cgroup_detect(struct gf_cgroup_env *cg, const char *probe_name);
/* Make the job's cgroup (path into out) and open its cgroup.procs and
 * cgroup.kill for writing (kill_fd -1 without cgroup.kill). */
int gf__cgroup_create(const struct gf_cgroup_env *cg, const char *name,
		      char *out, size_t size, int *procs_fd, int *kill_fd,
		      struct gf_err *e) GF_MUST_CHECK;
/* Signal every process in the cgroup (cgroup.kill for SIGKILL). */
int gf__cgroup_signal(const char *path, int sig) GF_MUST_CHECK;
/* rmdir; 0 when gone (or never there), -EBUSY while processes remain. */
int gf__cgroup_remove(const char *path) GF_MUST_CHECK;

/* worker_env.c: the job's environment and binding, prepared before fork */
struct gf__prep {
	char **envp; /* NULL-terminated, each gf_malloc'd */
	int nenv;
	/* who it runs as, where it starts (issue 21) */
	bool switch_user; /* setgroups, setgid, setuid in the child */
	uid_t uid;
	gid_t gid;
	gid_t groups[GF_WORKER_GROUPS_MAX];
	int ngroups;
	char login[GF_JOB_USER_MAX]; /* "" unknown (the agent's, no entry) */
	char home[GF_WORKER_PATH_MAX], shell[GF_WORKER_PATH_MAX];
	char workdir[GF_WORKER_PATH_MAX];
	struct gf_bitmap cpus, mems; /* empty: leave as is */
	int gpu_milli;
	char note[GF_WORKER_NOTE_MAX];
};
int gf__prep_build(const struct gf_worker *w, const struct gf_assignment *a,
		   struct gf__prep *p, struct gf_err *e) GF_MUST_CHECK;
void gf__prep_release(struct gf__prep *p);

/* worker_launch.c: the fork, the shim, the job's child */
struct gf__launch_in {
	const struct gf__prep *prep;
	const char *command;
	const char *workdir;
	int dir_fd;			 /* the job's state directory */
	int log_fd, procs_fd, cgkill_fd; /* -1 when none */
	/* stdout, stderr elsewhere (expanded), NULL: the log; the start
	 * marker for the output's top */
	const char *out_path, *err_path, *marker;
	const char *lease_path; /* NULL: none */
	int64_t grace_ms;	/* a fenced job's SIGTERM -> SIGKILL */
};
struct gf__launch_out {
	int shim_pid, pid;
	int go_fd; /* write 'g' to let the job exec; close to abort it */
};
int gf__launch(const struct gf__launch_in *in, struct gf__launch_out *out,
	       struct gf_err *e) GF_MUST_CHECK;
/* Let the job run: 0 or -errno. */
int gf__launch_go(struct gf__launch_out *out) GF_MUST_CHECK;
/* Abort it: the shim sees its "go" socket close and runs nothing. */
void gf__launch_abort(struct gf__launch_out *out);

/* worker_recover.c: what the processes and state files say */
void gf__recover(struct gf_worker *w);
void gf__watch(struct gf_worker *w, struct gf__wjob *j, int64_t now);
void gf__signal_job(const struct gf__wjob *j, int sig);
/* Wait (up to ms) until pid is gone or a zombie. */
void gf__wait_gone(int pid, int ms);

#endif
