/*
 * worker_start.c - gf_worker_start: claim the job's state directory, open its
 * log and cgroup, launch it through the shim (worker_launch.c), write its
 * record durably, and only then let it run.
 *
 * Invariants: the claim is mkdir(STATE/jobs/JOB.REPLICA.ATTEMPT), atomic,
 * so a run cannot be started twice even by a confused caller; on
 * any failure before the "go" the job's process runs nothing (it reads
 * EOF and leaves a "nogo" mark) and the directory and cgroup are removed;
 * after the "go" the job is in the table and its STARTED event queued.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent/worker_impl.h"
#include "util/clock.h"
#include "util/fmt.h"
#include "util/log.h"
#include "util/mem.h"

/* The fds and paths of one start, released together. */
struct start {
	char who[GF_WORKER_ID_MAX + 40];
	char out_path[GF_WORKER_PATH_MAX], err_path[GF_WORKER_PATH_MAX];
	char marker[GF_WORKER_ID_MAX + GF_WORKER_NODE_MAX + 128];
	int dir_fd, log_fd, procs_fd, cgkill_fd;
	bool claimed;
	struct gf__prep prep;
	struct gf__wjob j;
};

static int refuse_known(const struct gf_worker *w,
			const struct gf_assignment *a, const char *who,
			struct gf_err *e)
{
	const struct gf__wjob *k = gf__worker_find(w, a->job, a->replica, -1);
	if (k)
		return gf_err_set(e, GF_ECONFLICT,
				  "%s: already running here (attempt %d, pid "
				  "%d)",
				  who, k->attempt, k->pid);
	k = gf__worker_find(w, a->job, a->replica, a->attempt);
	if (k)
		return gf_err_set(e, GF_ECONFLICT,
				  "%s: ended here and not yet forgotten "
				  "(report its end, then gf_worker_forget)",
				  who);
	if (w->njobs >= GF_WORKER_MAX_JOBS)
		return gf_err_set(e, GF_ETOOBIG,
				  "%s: this node knows %d jobs already", who,
				  w->njobs);
	return 0;
}

/* mkdir is the claim; a directory without a record is what a start
 * that did not finish left (nothing ran): clear it and claim again. */
static int claim(struct gf_worker *w, struct start *s, struct gf_err *e)
{
	for (int attempt = 0;; attempt++) {
		if (mkdirat(w->jobs_fd, s->j.key, 0700) == 0)
			break;
		if (errno != EEXIST || attempt > 0)
			return gf_err_set(
				e, errno == EEXIST ? GF_ECONFLICT : -errno,
				"%s: cannot claim '%s/jobs/%s': %s", s->who,
				w->state_dir, s->j.key, gf_strerror(-errno));
		char run[GF__KEY_MAX + 8];
		if (gf_fmt(run, sizeof(run), "%s/run", s->j.key) != 0 ||
		    faccessat(w->jobs_fd, run, F_OK, 0) == 0)
			return gf_err_set(e, GF_ECONFLICT,
					  "%s: '%s/jobs/%s' holds a record "
					  "this worker does not track",
					  s->who, w->state_dir, s->j.key);
		/* an empty leftover of this key; mkdirat says if it stays */
		int rm = gf__job_remove(w->jobs_fd, s->j.key);
		if (rm != 0)
			gf_log(GF_LOG_DEBUG, "worker", "%s: leftover: %s",
			       s->who, gf_strerror(rm));
	}
	s->claimed = true;
	s->dir_fd = openat(w->jobs_fd, s->j.key,
			   O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (s->dir_fd < 0)
		return gf_err_set(e, -errno, "%s: cannot open its state: %s",
				  s->who, gf_strerror(-errno));
	return 0;
}

static int open_log(struct gf_worker *w, struct start *s, struct gf_err *e)
{
	/* one log per run (worker_log.c), opened by its start marker */
	struct gf_err le;
	gf_err_clear(&le);
	s->log_fd = gf__log_open(w, s->j.job, s->j.replica, s->j.attempt,
				 s->j.log, sizeof(s->j.log), &le);
	if (s->log_fd < 0)
		return gf_err_set(e, s->log_fd, "%s: %s", s->who, le.msg);
	return 0;
}

/* Its own cgroup when the worker may make one; else a process group,
 * and the job's record says why. */
static void open_cgroup(struct gf_worker *w, struct start *s)
{
	struct gf_err ce;
	char name[GF_WORKER_NODE_MAX + GF__KEY_MAX + 16];
	s->j.iso = GF_WORKER_ISO_PGROUP;
	if (!w->cg.ok) {
		gf_note(s->j.iso_note, sizeof(s->j.iso_note), "%s", w->cg.why);
		return;
	}
	gf_err_clear(&ce);
	int rc = gf_fmt(name, sizeof(name), "gpufleet@%s@%s", w->node_name,
			s->j.key);
	if (rc != 0)
		gf_err_set(&ce, rc, "cgroup name too long");
	else
		rc = gf__cgroup_create(&w->cg, name, s->j.cgroup,
				       sizeof(s->j.cgroup), &s->procs_fd,
				       &s->cgkill_fd, &ce);
	if (rc != 0) {
		s->j.cgroup[0] = '\0';
		gf_note(s->j.iso_note, sizeof(s->j.iso_note), "%s", ce.msg);
		gf_log(GF_LOG_WARN, "worker", "%s: a process group then: %s",
		       s->who, ce.msg);
		return;
	}
	s->j.iso = GF_WORKER_ISO_CGROUP;
}

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

/* Undo a start that failed before its "go": nothing ran; wait for the
 * shim to finish, then remove what the start made. */
static void undo(struct gf_worker *w, struct start *s)
{
	if (s->j.shim_pid > 0)
		gf__wait_gone(s->j.shim_pid, 2000);
	if (s->log_fd >= 0 && s->j.log[0])
		unlink(s->j.log); /* nothing ran: no log */
	if (s->claimed && gf__job_remove(w->jobs_fd, s->j.key) != 0)
		gf_log(GF_LOG_WARN, "worker", "%s: cannot remove its state",
		       s->who);
	if (s->j.cgroup[0] && gf__cgroup_remove(s->j.cgroup) != 0)
		gf_log(GF_LOG_WARN, "worker", "%s: cannot remove cgroup '%s'",
		       s->who, s->j.cgroup);
}

/* The pids' start times, the record, then "go". */
static int commit(struct gf_worker *w, struct start *s,
		  struct gf__launch_out *lo, struct gf_err *e)
{
	char st;
	char *text = gf_malloc(GF__REC_MAX);
	s->j.shim_pid = lo->shim_pid;
	s->j.pid = lo->pid;
	int rc = gf__proc_stat(lo->shim_pid, &s->j.shim_start, &st);
	if (rc == 0)
		rc = gf__proc_stat(lo->pid, &s->j.pid_start, &st);
	if (rc != 0) {
		rc = gf_err_set(e, rc, "%s: its processes went before it ran",
				s->who);
		goto out;
	}
	s->j.start_ms = gf_clock_wall_ms();
	rc = gf__job_format(&s->j, w->boot_id, text, GF__REC_MAX);
	if (rc == 0)
		rc = gf__rec_write(s->dir_fd, "run", text);
	if (rc != 0) {
		rc = gf_err_set(e, rc, "%s: cannot write its record: %s",
				s->who, gf_strerror(rc));
		goto out;
	}
	rc = gf__launch_go(lo);
	if (rc != 0) {
		/* the job's process is gone (killed from outside): its shim
		 * reports the end like any other */
		gf_log(GF_LOG_WARN, "worker", "%s: cannot tell it to run: %s",
		       s->who, gf_strerror(rc));
		rc = 0;
	}
out:
	gf_free(text);
	return rc;
}

/* --output / --error with their tokens, and where they are said in the
 * run's log (a line after its start marker). */
static int out_paths(const struct gf_worker *w, const struct gf_assignment *a,
		     struct start *s, struct gf_err *e)
{
	const char *t[2] = { a->output, a->error };
	char *out[2] = { s->out_path, s->err_path };
	for (int i = 0; i < 2; i++) {
		out[i][0] = '\0';
		if (!t[i])
			continue;
		int rc = gf_worker_expand(out[i], GF_WORKER_PATH_MAX, t[i],
					  s->j.job, s->j.replica, s->j.attempt,
					  w->node_name);
		if (rc != 0 || out[i][0] != '/')
			return gf_err_set(
				e, rc ? rc : GF_EINVAL, "%s: '--%s %.100s': %s",
				s->who, i ? "error" : "output", t[i],
				rc == GF_ETOOBIG ? "too long once its tokens "
						   "are replaced"
						 : "expected an absolute path "
						   "with %j %r %a %n");
	}
	if (gf_worker_marker_start(s->marker, sizeof(s->marker), s->j.job,
				   s->j.replica, s->j.attempt, w->node_name,
				   gf_clock_wall_ms()) != 0)
		s->marker[0] = '\0';
	return 0;
}

/* The run's log says where its output went. */
static void say_paths(struct start *s)
{
	if (!s->out_path[0] && !s->err_path[0])
		return;
	char line[2 * GF_WORKER_PATH_MAX + 96];
	gf_note(line, sizeof(line), "%s output to %s, errors to %s %s\n",
		GF_WORKER_MARK_OPEN, s->out_path[0] ? s->out_path : "this log",
		s->err_path[0]	 ? s->err_path
		: s->out_path[0] ? "the output"
				 : "this log",
		GF_WORKER_MARK_CLOSE);
	size_t n = strlen(line);
	if (write(s->log_fd, line, n) != (ssize_t)n)
		gf_log(GF_LOG_WARN, "worker", "%s: cannot write to its log",
		       s->who);
}

static int run_start(struct gf_worker *w, const struct gf_assignment *a,
		     struct start *s, struct gf_err *e)
{
	int rc = gf__prep_build(w, a, &s->prep, e);
	if (rc == 0)
		rc = out_paths(w, a, s, e);
	s->j.gpu_milli = s->prep.gpu_milli;
	s->j.cpus = s->prep.cpus;
	if (rc == 0)
		rc = claim(w, s, e);
	if (rc == 0)
		rc = open_log(w, s, e);
	if (rc != 0)
		return rc;
	say_paths(s);
	open_cgroup(w, s);
	struct gf__launch_in in = {
		.prep = &s->prep,
		.command = a->command,
		.workdir = s->prep.workdir, /* the job's, else its home */
		.dir_fd = s->dir_fd,
		.log_fd = s->log_fd,
		.out_path = s->out_path[0] ? s->out_path : NULL,
		.err_path = s->err_path[0] ? s->err_path : NULL,
		.marker = s->marker[0] ? s->marker : NULL,
		.procs_fd = s->procs_fd,
		.cgkill_fd = s->cgkill_fd,
		.lease_path = w->lease_path[0] ? w->lease_path : NULL,
		.grace_ms = w->grace_ms,
	};
	struct gf__launch_out lo;
	struct gf_err le;
	gf_err_clear(&le);
	rc = gf__launch(&in, &lo, &le);
	if (rc != 0) {
		s->j.shim_pid = lo.shim_pid;
		return gf_err_set(e, rc, "%s: cannot start: %s", s->who,
				  le.msg);
	}
	rc = commit(w, s, &lo, e);
	if (rc != 0) {
		gf__launch_abort(&lo);
		return rc;
	}
	return 0;
}

int gf_worker_start(struct gf_worker *w, const struct gf_assignment *a,
		    struct gf_err *e)
{
	struct start *s = gf_calloc(1, sizeof(*s));
	s->dir_fd = s->log_fd = s->procs_fd = s->cgkill_fd = -1;
	const char *job = a->job ? a->job : "(null)";
	gf_note(s->who, sizeof(s->who), "job '%.*s' replica %d attempt %d",
		GF_WORKER_ID_MAX, job, a->replica, a->attempt);
	int rc = 0;
	if (!gf__valid_id(job, GF_WORKER_ID_MAX) || a->replica < 0 ||
	    a->replica > GF_WORKER_REPLICA_MAX || a->attempt < 0 ||
	    a->attempt > GF_WORKER_ATTEMPT_MAX)
		rc = gf_err_set(e, GF_EINVAL,
				"%s: a job id is 1..%d of [A-Za-z0-9._-] not "
				"starting with '.', a replica 0..%d, an "
				"attempt 0..%d",
				s->who, GF_WORKER_ID_MAX - 1,
				GF_WORKER_REPLICA_MAX, GF_WORKER_ATTEMPT_MAX);
	if (rc == 0)
		rc = refuse_known(w, a, s->who, e);
	if (rc == 0) {
		s->j.replica = a->replica;
		s->j.attempt = a->attempt;
		s->j.max_runtime_ms = a->max_runtime_ms;
		/* never cut: the id was checked (above) */
		if (gf_fmt(s->j.job, sizeof(s->j.job), "%s", job) != 0 ||
		    gf__key(s->j.key, sizeof(s->j.key), job, a->replica,
			    a->attempt) != 0)
			rc = gf_err_set(e, GF_EINVAL, "%s: id too long",
					s->who);
		else
			rc = run_start(w, a, s, e);
	}
	if (rc == 0) {
		s->j.state = GF__W_RUNNING;
		s->j.supervised = true;
		struct gf__wjob *j = gf__worker_add(w);
		*j = s->j;
		gf__worker_started(w, j);
	} else {
		undo(w, s);
	}
	close_fd(&s->dir_fd);
	close_fd(&s->log_fd);
	close_fd(&s->procs_fd);
	close_fd(&s->cgkill_fd);
	gf__prep_release(&s->prep);
	gf_free(s);
	return rc;
}
