/*
 * worker.c - the worker's table of jobs and its public calls but start
 * (worker_start.c): open (lock, directories, cgroup detection, recovery), stop,
 * poll, running, forget, check.
 *
 * Invariants (gf_worker_check): one entry per JOB.REPLICA, with a state
 * directory of that name; a RUNNING entry has a job pid and a shim pid
 * (supervised) or had one (not supervised); an ENDED entry has produced
 * exactly one ENDED event in this worker's life; stop_reason is NONE,
 * STOPPED or MAX_RUNTIME, and kill_at_ms is set iff it is not NONE; a
 * cgroup-isolated job has an absolute cgroup path, a process-group one
 * none.  Events wait in w->ev, oldest first, until gf_worker_poll.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "agent/worker_impl.h"
#include "util/check.h"
#include "util/clock.h"
#include "util/file.h"
#include "util/fmt.h"
#include "util/log.h"
#include "util/mem.h"
#include "util/str.h"

bool gf__valid_id(const char *s, size_t max)
{
	size_t len = strlen(s);
	if (len == 0 || len >= max || s[0] == '.')
		return false;
	for (const char *p = s; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		      (*p >= '0' && *p <= '9') || *p == '.' || *p == '_' ||
		      *p == '-'))
			return false;
	return true;
}

const char *gf_worker_end_name(enum gf_worker_end end)
{
	static const char *const name[] = {
		[GF_WORKER_END_EXITED] = "exited",
		[GF_WORKER_END_STOPPED] = "stopped",
		[GF_WORKER_END_MAX_RUNTIME] = "max-runtime",
		[GF_WORKER_END_LOST] = "lost",
		[GF_WORKER_END_FENCED] = "fenced",
	};
	unsigned k = (unsigned)end;
	return k < sizeof(name) / sizeof(name[0]) && name[k] ? name[k] : "";
}

int gf__key(char *out, size_t size, const char *job, int replica, int attempt)
{
	return gf_fmt(out, size, "%s.%d.%d", job, replica, attempt);
}

struct gf__wjob *gf__worker_find(const struct gf_worker *w, const char *job,
				 int replica, int attempt)
{
	for (int i = 0; i < w->njobs; i++) {
		const struct gf__wjob *j = &w->jobs[i];
		if (j->replica != replica || strcmp(j->job, job) != 0)
			continue;
		if (attempt < 0 ? j->state == GF__W_RUNNING
				: j->attempt == attempt)
			return &w->jobs[i];
	}
	return NULL;
}

struct gf__wjob *gf__worker_add(struct gf_worker *w)
{
	if (w->njobs == w->cap) {
		w->cap = w->cap ? 2 * w->cap : 16;
		w->jobs = gf_reallocarray(w->jobs, (size_t)w->cap,
					  sizeof(*w->jobs));
	}
	struct gf__wjob *j = &w->jobs[w->njobs++];
	memset(j, 0, sizeof(*j));
	return j;
}

void gf__worker_push(struct gf_worker *w, const struct gf_worker_event *ev)
{
	if (w->nev == w->evcap) {
		w->evcap = w->evcap ? 2 * w->evcap : 16;
		w->ev = gf_reallocarray(w->ev, (size_t)w->evcap,
					sizeof(*w->ev));
	}
	w->ev[w->nev++] = *ev;
}

static void event_base(struct gf_worker_event *ev, const struct gf__wjob *j,
		       enum gf_worker_event_kind kind)
{
	memset(ev, 0, sizeof(*ev));
	ev->kind = kind;
	_Static_assert(sizeof(ev->job) == sizeof(j->job), "a job id");
	memcpy(ev->job, j->job, sizeof(ev->job));
	ev->replica = j->replica;
	ev->attempt = j->attempt;
	ev->recovered = j->recovered;
	ev->pid = j->pid;
	ev->start_ms = j->start_ms;
	ev->exit_code = -1;
	ev->isolation = j->iso;
}

void gf__worker_started(struct gf_worker *w, const struct gf__wjob *j)
{
	struct gf_worker_event ev;
	event_base(&ev, j, GF_WORKER_STARTED);
	gf_note(ev.note, sizeof(ev.note), "%spid %d in its %s%s%s%s",
		j->recovered ? "found running: " : "", j->pid,
		j->iso == GF_WORKER_ISO_CGROUP ? "cgroup" : "process group",
		j->supervised ? "" : ", its shim is gone",
		j->iso_note[0] ? ": " : "", j->iso_note);
	/* (the note is cut to the event's size: the record has it all) */
	gf__worker_push(w, &ev);
	gf_log(GF_LOG_INFO, "worker", "job=%s replica=%d attempt=%d %s", j->job,
	       j->replica, j->attempt, ev.note);
}

/* "exited with 3", "killed by signal 9 (Killed)". */
static void describe(char *out, size_t size, int status)
{
	if (WIFEXITED(status))
		gf_note(out, size, "exited with %d", WEXITSTATUS(status));
	else if (WIFSIGNALED(status))
		gf_note(out, size, "killed by signal %d (%s)", WTERMSIG(status),
			strsignal(WTERMSIG(status)));
	else
		gf_note(out, size, "ended with wait status %d", status);
}

void gf__worker_ended(struct gf_worker *w, struct gf__wjob *j, int status,
		      bool have_status, int64_t end_ms, const char *why)
{
	bool fenced = have_status && why && !strcmp(why, GF__FENCED);
	struct gf_worker_event ev;
	char how[96];
	event_base(&ev, j, GF_WORKER_ENDED);
	j->state = GF__W_ENDED;
	ev.end_ms = end_ms > j->start_ms ? end_ms : j->start_ms;
	ev.gpu_ms = (int64_t)j->gpu_milli * (ev.end_ms - j->start_ms) / 1000;
	ev.gpu_seconds = (double)j->gpu_milli / 1000.0 *
			 (double)(ev.end_ms - j->start_ms) / 1000.0;
	if (!have_status) {
		ev.end = GF_WORKER_END_LOST;
		gf_note(ev.note, sizeof(ev.note), "%s", why);
	} else {
		if (WIFEXITED(status))
			ev.exit_code = WEXITSTATUS(status);
		else if (WIFSIGNALED(status))
			ev.signal = WTERMSIG(status);
		ev.end = fenced ? GF_WORKER_END_FENCED
			 : j->stop_reason != GF_WORKER_END_NONE
				 ? j->stop_reason
				 : GF_WORKER_END_EXITED;
		describe(how, sizeof(how), status);
		if (ev.end == GF_WORKER_END_FENCED)
			gf_note(ev.note, sizeof(ev.note),
				"fenced (its lease ran out): %s", how);
		else if (ev.end == GF_WORKER_END_STOPPED)
			gf_note(ev.note, sizeof(ev.note), "stopped: %s", how);
		else if (ev.end == GF_WORKER_END_MAX_RUNTIME)
			gf_note(ev.note, sizeof(ev.note),
				"ran past its max runtime of %lld ms: %s",
				(long long)j->max_runtime_ms, how);
		else
			gf_note(ev.note, sizeof(ev.note), "%s", how);
	}
	gf__log_close(w, j, &ev);
	gf__worker_push(w, &ev);
	gf_log(GF_LOG_INFO, "worker", "job=%s replica=%d attempt=%d ended: %s",
	       j->job, j->replica, j->attempt, ev.note);
	if (j->cgroup[0] && gf__cgroup_remove(j->cgroup) != 0)
		j->cgroup_left = true;
}

int gf_worker_check_opts(const struct gf_worker_opts *o, struct gf_err *e)
{
	if (o->state_dir == NULL || o->log_dir == NULL ||
	    o->state_dir[0] == '\0' || o->log_dir[0] == '\0')
		return gf_err_set(e, GF_EINVAL,
				  "worker: a state and a log directory are "
				  "needed");
	if (strchr(o->state_dir, '\n') || strchr(o->log_dir, '\n'))
		return gf_err_set(e, GF_EINVAL,
				  "worker: a directory path holds a newline");
	if (o->lease_path && strlen(o->lease_path) >= GF_WORKER_PATH_MAX)
		return gf_err_set(e, GF_ETOOBIG,
				  "worker: lease file '%.100s...' is longer "
				  "than %d bytes",
				  o->lease_path, GF_WORKER_PATH_MAX - 1);
	/* room for the names under each: "lock" and "jobs" under the state
	 * directory (its records are opened relative to jobs/), "KEY.log"
	 * under the log directory */
	static const struct {
		const char *what;
		size_t room;
	} dirs[] = { { "state", 32 }, { "log", GF__KEY_MAX + 8 } };
	for (int i = 0; i < 2; i++) {
		const char *dir = i ? o->log_dir : o->state_dir;
		size_t len = strlen(dir);
		if (len + dirs[i].room >= GF_WORKER_PATH_MAX)
			return gf_err_set(
				e, GF_ETOOBIG,
				"worker: %s directory '%.100s%s' is "
				"%zu bytes, more than %zu (the "
				"paths under it would not fit)",
				dirs[i].what, dir, len > 100 ? "..." : "", len,
				GF_WORKER_PATH_MAX - 1 - dirs[i].room);
	}
	if (o->node_name == NULL ||
	    !gf__valid_id(o->node_name, GF_WORKER_NODE_MAX))
		return gf_err_set(e, GF_EINVAL,
				  "worker: node name '%.64s' is not 1..%d of "
				  "[A-Za-z0-9._-]",
				  o->node_name ? o->node_name : "(null)",
				  GF_WORKER_NODE_MAX - 1);
	if (o->grace_ms < 0)
		return gf_err_set(e, GF_EINVAL, "worker: negative grace");
	if (o->default_user && o->default_user[0] &&
	    !gf_str_is_login(o->default_user))
		return gf_err_set(e, GF_EINVAL,
				  "worker: default user '%.64s' is not a login "
				  "name",
				  o->default_user);
	if (o->node && !o->node->this_system && !o->env_only)
		return gf_err_set(e, GF_ENOTTHIS,
				  "worker: node '%s' is a recording, not this "
				  "machine: it cannot bind (env_only plans "
				  "the environment alone)",
				  o->node->source);
	return 0;
}

static int open_dirs(struct gf_worker *w, struct gf_err *e)
{
	/* the state directory has room for these (gf_worker_check_opts) */
	char path[GF_WORKER_PATH_MAX + 8], lock[GF_WORKER_PATH_MAX + 8];
	if (gf_fmt(path, sizeof(path), "%s/jobs", w->state_dir) != 0 ||
	    gf_fmt(lock, sizeof(lock), "%s/lock", w->state_dir) != 0)
		return gf_err_set(e, GF_ETOOBIG,
				  "worker: '%.100s...': too long",
				  w->state_dir);
	int rc = gf_mkdir_p(w->state_dir, 0750, e);
	if (rc == 0)
		rc = gf_mkdir_p(path, 0750, e);
	if (rc == 0)
		rc = gf_mkdir_p(w->log_dir, 0750, e);
	if (rc != 0)
		return rc;
	w->lock_fd =
		open(lock, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (w->lock_fd < 0)
		return gf_err_set(e, -errno, "worker: cannot open '%s': %s",
				  lock, gf_strerror(-errno));
	if (flock(w->lock_fd, LOCK_EX | LOCK_NB) != 0)
		return gf_err_set(e,
				  errno == EWOULDBLOCK ? GF_ECONFLICT : -errno,
				  "worker: '%s' is held by another worker "
				  "(%s)",
				  w->state_dir, gf_strerror(-errno));
	w->jobs_fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (w->jobs_fd < 0)
		return gf_err_set(e, -errno, "worker: cannot open '%s': %s",
				  path, gf_strerror(-errno));
	rc = gf__boot_id(w->boot_id, sizeof(w->boot_id));
	if (rc != 0)
		return gf_err_set(e, rc, "worker: cannot read the boot id: %s",
				  gf_strerror(rc));
	return 0;
}

int gf_worker_open(const struct gf_worker_opts *o, struct gf_worker **out,
		   struct gf_err *e)
{
	*out = NULL;
	int rc = gf_worker_check_opts(o, e);
	if (rc != 0)
		return rc;
	struct gf_worker *w = gf_calloc(1, sizeof(*w));
	w->lock_fd = w->jobs_fd = -1;
	w->node = o->node;
	w->env_only = o->env_only;
	w->grace_ms = o->grace_ms ? o->grace_ms : GF_WORKER_GRACE_DEFAULT_MS;
	/* the lengths were checked (gf_worker_check_opts) */
	if (gf_fmt(w->state_dir, sizeof(w->state_dir), "%s", o->state_dir) ||
	    gf_fmt(w->log_dir, sizeof(w->log_dir), "%s", o->log_dir) ||
	    gf_fmt(w->node_name, sizeof(w->node_name), "%s", o->node_name) ||
	    gf_fmt(w->lease_path, sizeof(w->lease_path), "%s",
		   o->lease_path ? o->lease_path : "") ||
	    gf_fmt(w->default_user, sizeof(w->default_user), "%s",
		   o->default_user ? o->default_user : ""))
		rc = gf_err_set(e, GF_ETOOBIG, "worker: a path too long");
	else
		rc = open_dirs(w, e);
	if (rc != 0) {
		gf_worker_close(w);
		return rc;
	}
	if (o->cgroup) {
		char probe[GF_WORKER_NODE_MAX + 48];
		if (gf_fmt(probe, sizeof(probe), "gpufleet-probe@%s.%d",
			   w->node_name, (int)getpid()) == 0)
			gf__cgroup_detect(&w->cg, probe);
		else /* cannot be: room for the node name kept */
			gf_note(w->cg.why, sizeof(w->cg.why),
				"probe name too long");
	} else {
		gf_note(w->cg.why, sizeof(w->cg.why), "cgroups not asked for");
	}
	if (w->cg.ok)
		gf_note(w->isolation, sizeof(w->isolation),
			"cgroup v2 under %s%s", w->cg.base,
			w->cg.has_kill ? "" : " (no cgroup.kill)");
	else
		gf_note(w->isolation, sizeof(w->isolation),
			"process groups (%s)", w->cg.why);
	gf_log(GF_LOG_INFO, "worker", "node=%s state=%s jobs isolated by %s",
	       w->node_name, w->state_dir, w->isolation);
	gf__recover(w);
	*out = w;
	return 0;
}

void gf_worker_close(struct gf_worker *w)
{
	if (w == NULL)
		return;
	if (w->jobs_fd >= 0)
		close(w->jobs_fd);
	if (w->lock_fd >= 0)
		close(w->lock_fd); /* releases the flock */
	gf_free(w->jobs);
	gf_free(w->ev);
	gf_free(w);
}

const char *gf_worker_isolation(const struct gf_worker *w)
{
	return w->isolation;
}

void gf__worker_request_stop(struct gf_worker *w, struct gf__wjob *j,
			     enum gf_worker_end reason, int64_t now)
{
	char text[96];
	int rc = gf_fmt(text, sizeof(text), "reason=%s\nstop_ms=%lld\n",
			gf_worker_end_name(reason), (long long)now);
	int dfd = rc ? -1
		     : openat(w->jobs_fd, j->key,
			      O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (rc == 0)
		rc = dfd < 0 ? -errno : gf__rec_write(dfd, "stop", text);
	if (dfd >= 0)
		close(dfd);
	if (rc != 0) /* still stop it: only a crash now would forget */
		gf_log(GF_LOG_WARN, "worker",
		       "job=%s replica=%d attempt=%d: cannot record the stop: %s",
		       j->job, j->replica, j->attempt, gf_strerror(rc));
	j->stop_reason = reason;
	j->stop_ms = now;
	j->kill_at_ms = now + w->grace_ms;
	gf__signal_job(j, SIGTERM);
	gf_log(GF_LOG_INFO, "worker",
	       "job=%s replica=%d attempt=%d: SIGTERM to its %s (%s), SIGKILL "
	       "in %lld ms",
	       j->job, j->replica, j->attempt,
	       j->iso == GF_WORKER_ISO_CGROUP ? "cgroup" : "process group",
	       gf_worker_end_name(reason), (long long)w->grace_ms);
}

#if GF_DEBUG
#define DEBUG_CHECK(w)                                         \
	do {                                                   \
		char m_[256];                                  \
		if (gf_worker_check((w), m_, sizeof(m_)) != 0) \
			gf_check_failed("worker", m_);         \
	} while (0)
#else
#define DEBUG_CHECK(w) ((void)0)
#endif

/* The run job.replica.attempt, or NULL with e saying it is not here. */
static struct gf__wjob *known(const struct gf_worker *w, const char *job,
			      int replica, int attempt, struct gf_err *e)
{
	struct gf__wjob *j =
		attempt < 0 ? NULL : gf__worker_find(w, job, replica, attempt);
	if (j == NULL)
		gf_err_set(e, GF_ENOTFOUND,
			   "job '%s' replica %d attempt %d: not on this node",
			   job, replica, attempt);
	return j;
}

int gf_worker_stop(struct gf_worker *w, const char *job, int replica,
		   int attempt, struct gf_err *e)
{
	struct gf__wjob *j = known(w, job, replica, attempt, e);
	if (j == NULL)
		return GF_ENOTFOUND;
	if (j->state != GF__W_RUNNING)
		return gf_err_set(e, GF_ECONFLICT,
				  "job '%s' replica %d attempt %d: has ended "
				  "already",
				  job, replica, attempt);
	if (j->stop_reason != GF_WORKER_END_NONE)
		return 0;
	gf__worker_request_stop(w, j, GF_WORKER_END_STOPPED,
				gf_clock_wall_ms());
	DEBUG_CHECK(w);
	return 0;
}

int gf_worker_poll(struct gf_worker *w, struct gf_worker_event *ev, int max)
{
	return gf_worker_poll_at(w, gf_clock_wall_ms(), ev, max);
}

int gf_worker_poll_at(struct gf_worker *w, int64_t now,
		      struct gf_worker_event *ev, int max)
{
	for (int i = 0; i < w->njobs; i++) {
		struct gf__wjob *j = &w->jobs[i];
		if (j->state == GF__W_RUNNING)
			gf__watch(w, j, now);
		else if (j->cgroup_left && gf__cgroup_remove(j->cgroup) == 0)
			j->cgroup_left = false;
	}
	int n = max < w->nev ? max : w->nev;
	if (n > 0) {
		memcpy(ev, w->ev, sizeof(*ev) * (size_t)n);
		memmove(w->ev, w->ev + n, sizeof(*ev) * (size_t)(w->nev - n));
		w->nev -= n;
	}
	DEBUG_CHECK(w);
	return n;
}

int gf_worker_running(const struct gf_worker *w, struct gf_worker_job *out,
		      int max)
{
	int n = 0;
	for (int i = 0; i < w->njobs; i++) {
		const struct gf__wjob *j = &w->jobs[i];
		if (j->state != GF__W_RUNNING)
			continue;
		if (n < max) {
			struct gf_worker_job *o = &out[n];
			memset(o, 0, sizeof(*o));
			_Static_assert(sizeof(o->job) == sizeof(j->job) &&
					       sizeof(o->cgroup) ==
						       sizeof(j->cgroup) &&
					       sizeof(o->log) == sizeof(j->log),
				       "the same sizes: copies never cut");
			memcpy(o->job, j->job, sizeof(o->job));
			o->replica = j->replica;
			o->attempt = j->attempt;
			o->pid = j->pid;
			o->start_ms = j->start_ms;
			o->recovered = j->recovered;
			o->stopping = j->stop_reason != GF_WORKER_END_NONE;
			o->supervised = j->supervised;
			o->isolation = j->iso;
			memcpy(o->cgroup, j->cgroup, sizeof(o->cgroup));
			memcpy(o->log, j->log, sizeof(o->log));
		}
		n++;
	}
	return n;
}

int gf_worker_forget(struct gf_worker *w, const char *job, int replica,
		     int attempt, struct gf_err *e)
{
	struct gf__wjob *j = known(w, job, replica, attempt, e);
	if (j == NULL)
		return GF_ENOTFOUND;
	if (j->state == GF__W_RUNNING)
		return gf_err_set(e, GF_ECONFLICT,
				  "job '%s' replica %d attempt %d: still "
				  "running",
				  job, replica, attempt);
	if (j->cgroup_left && gf__cgroup_remove(j->cgroup) != 0)
		gf_log(GF_LOG_WARN, "worker", "cannot remove cgroup '%s': %s",
		       j->cgroup, gf_strerror(-errno));
	int rc = gf__job_remove(w->jobs_fd, j->key);
	if (rc != 0)
		return gf_err_set(e, rc,
				  "job '%s' replica %d: cannot remove its "
				  "state: %s",
				  job, replica, gf_strerror(rc));
	*j = w->jobs[--w->njobs];
	DEBUG_CHECK(w);
	return 0;
}

__attribute__((format(printf, 3, 4))) static int bad(char *msg, unsigned size,
						     const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	gf_vnote(msg, size, fmt, ap);
	va_end(ap);
	return GF_EINVAL;
}

static int check_job(const struct gf__wjob *j, char *msg, unsigned size)
{
	char key[GF__KEY_MAX];
	if (gf__key(key, sizeof(key), j->job, j->replica, j->attempt) != 0 ||
	    !gf__valid_id(j->job, sizeof(j->job)) || strcmp(key, j->key))
		return bad(msg, size, "job '%s': key '%s'", j->job, j->key);
	if (j->state != GF__W_RUNNING && j->state != GF__W_ENDED)
		return bad(msg, size, "job '%s': state %d", j->key,
			   (int)j->state);
	if (j->pid <= 0 || j->shim_pid <= 0 || j->start_ms <= 0)
		return bad(msg, size, "job '%s': pid %d shim %d start %lld",
			   j->key, j->pid, j->shim_pid, (long long)j->start_ms);
	bool stopping = j->stop_reason != GF_WORKER_END_NONE;
	if ((stopping && j->stop_reason != GF_WORKER_END_STOPPED &&
	     j->stop_reason != GF_WORKER_END_MAX_RUNTIME) ||
	    stopping != (j->kill_at_ms > 0))
		return bad(msg, size, "job '%s': stop %d kill at %lld", j->key,
			   (int)j->stop_reason, (long long)j->kill_at_ms);
	if ((j->iso == GF_WORKER_ISO_CGROUP) != (j->cgroup[0] == '/') ||
	    (j->cgroup_left && j->state != GF__W_ENDED))
		return bad(msg, size, "job '%s': cgroup '%s'", j->key,
			   j->cgroup);
	return 0;
}

int gf_worker_check(const struct gf_worker *w, char *msg, unsigned size)
{
	if (w->njobs < 0 || w->njobs > w->cap || w->nev < 0 ||
	    w->nev > w->evcap || w->lock_fd < 0 || w->jobs_fd < 0)
		return bad(msg, size, "counts: %d/%d jobs, %d/%d events",
			   w->njobs, w->cap, w->nev, w->evcap);
	for (int i = 0; i < w->njobs; i++) {
		int rc = check_job(&w->jobs[i], msg, size);
		if (rc != 0)
			return rc;
		for (int k = 0; k < i; k++)
			if (strcmp(w->jobs[k].key, w->jobs[i].key) == 0)
				return bad(msg, size, "job '%s' twice",
					   w->jobs[i].key);
	}
	return 0;
}
