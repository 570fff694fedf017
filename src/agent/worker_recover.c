/*
 * worker_recover.c - what the state files and the processes say about a job:
 * at open (every directory under STATE/jobs) and at every poll (each
 * running job).
 *
 * The order of the questions is the invariant that makes it safe:
 *   1. an "exit" file: the shim saw the end; its status is the truth
 *   2. another boot id: the job died with the boot (LOST)
 *   3. the shim alive (its pid AND start time): the job runs
 *   4. "exit" again: the shim may have written it between 1 and 3
 *   5. the job itself alive (pid AND start time): it runs without a shim
 *      (the shim was killed); watched by pid, its status will be unknown
 *   6. else: LOST, no status.
 * A pid alone never counts: a reused pid has another start time, and a
 * zombie is dead.  A signal goes to a process group only while its leader
 * is verified alive (so the group id cannot have been reused).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "agent/worker_impl.h"
#include "util/clock.h"
#include "util/fmt.h"
#include "util/log.h"
#include "util/mem.h"

void gf__wait_gone(int pid, int ms)
{
	struct timespec ten_ms = { 0, 10 * 1000 * 1000 };
	for (int t = 0; t < ms; t += 10) {
		uint64_t start;
		char st;
		if (gf__proc_stat(pid, &start, &st) != 0 || st == 'Z' ||
		    st == 'X')
			return;
		nanosleep(&ten_ms, NULL);
	}
}

void gf__signal_job(const struct gf__wjob *j, int sig)
{
	/* the process group is signalled as well (below) */
	int rc = j->cgroup[0] ? gf__cgroup_signal(j->cgroup, sig) : 0;
	if (rc != 0)
		gf_log(GF_LOG_DEBUG, "worker", "cgroup '%s': %s", j->cgroup,
		       gf_strerror(rc));
	if (gf__proc_alive(j->pid, j->pid_start) && kill(-j->pid, sig) != 0)
		kill(j->pid, sig); /* not a group leader (cannot happen) */
}

/* The shim's "exit" file: 1 with its status (and whether the shim
 * fenced the job), 0 when absent, < 0 bad. */
static int read_exit(const struct gf_worker *w, const struct gf__wjob *j,
		     int *status, int64_t *end_ms, bool *fenced)
{
	char name[GF__KEY_MAX + 8], buf[256];
	int64_t st;
	if (gf_fmt(name, sizeof(name), "%s/exit", j->key) != 0)
		return GF_ETOOBIG; /* cannot be: a key is under GF__KEY_MAX */
	int rc = gf__rec_read(w->jobs_fd, name, buf, sizeof(buf));
	if (rc == -ENOENT)
		return 0;
	if (rc != 0)
		return rc;
	if (!gf__rec_i64(buf, "status", &st) || st < 0 || st > 0xffff ||
	    !gf__rec_i64(buf, "end_ms", end_ms))
		return GF_EPARSE;
	*status = (int)st;
	int64_t f = 0;
	*fenced = gf__rec_i64(buf, "fenced", &f) && f == 1;
	return 1;
}

/* Steps 1 and 4: ended when the shim wrote the status (true). */
static bool ended_by_file(struct gf_worker *w, struct gf__wjob *j)
{
	int status = 0;
	int64_t end_ms = 0;
	bool fenced = false;
	int rc = read_exit(w, j, &status, &end_ms, &fenced);
	if (rc == 1) {
		gf__worker_ended(w, j, status, true, end_ms,
				 fenced ? GF__FENCED : NULL);
		return true;
	}
	if (rc < 0) {
		char why[GF_WORKER_NOTE_MAX];
		gf_note(why, sizeof(why),
			"its exit record cannot be read (%s): status unknown",
			gf_strerror(rc));
		gf__worker_ended(w, j, 0, false, gf_clock_wall_ms(), why);
		return true;
	}
	return false;
}

void gf__watch(struct gf_worker *w, struct gf__wjob *j, int64_t now)
{
	if (ended_by_file(w, j))
		return;
	if (j->supervised && !gf__proc_alive(j->shim_pid, j->shim_start)) {
		if (ended_by_file(w, j))
			return;
		j->supervised = false;
		gf_log(GF_LOG_WARN, "worker",
		       "job=%s replica=%d attempt=%d: its shim (pid %d) is "
		       "gone without "
		       "a status; watching the job by pid",
		       j->job, j->replica, j->attempt, j->shim_pid);
	}
	if (!j->supervised && !gf__proc_alive(j->pid, j->pid_start)) {
		gf__worker_ended(w, j, 0, false, now,
				 "its shim was killed and the job is gone: "
				 "exit code unknown");
		return;
	}
	if (j->max_runtime_ms > 0 && j->stop_reason == GF_WORKER_END_NONE &&
	    now - j->start_ms >= j->max_runtime_ms)
		gf__worker_request_stop(w, j, GF_WORKER_END_MAX_RUNTIME, now);
	if (j->stop_reason != GF_WORKER_END_NONE && now >= j->kill_at_ms)
		gf__signal_job(j, SIGKILL);
}

/* A stop asked for before the crash keeps its reason and deadline. */
static void read_stop(struct gf_worker *w, struct gf__wjob *j)
{
	char name[GF__KEY_MAX + 8], buf[256], reason[32];
	int64_t ms;
	if (gf_fmt(name, sizeof(name), "%s/stop", j->key) != 0 ||
	    gf__rec_read(w->jobs_fd, name, buf, sizeof(buf)) != 0 ||
	    !gf__rec_get(buf, "reason", reason, sizeof(reason)) ||
	    !gf__rec_i64(buf, "stop_ms", &ms) || ms <= 0)
		return;
	if (strcmp(reason, "stopped") == 0)
		j->stop_reason = GF_WORKER_END_STOPPED;
	else if (strcmp(reason, "max-runtime") == 0)
		j->stop_reason = GF_WORKER_END_MAX_RUNTIME;
	else
		return;
	j->stop_ms = ms;
	j->kill_at_ms = ms + w->grace_ms;
}

static void classify(struct gf_worker *w, struct gf__wjob *j,
		     const char *boot_id)
{
	if (ended_by_file(w, j))
		return;
	if (strcmp(boot_id, w->boot_id) != 0) {
		int64_t boot = gf__boot_time_ms();
		gf__worker_ended(w, j, 0, false,
				 boot > j->start_ms ? boot : gf_clock_wall_ms(),
				 "the node rebooted while it ran: exit code "
				 "unknown");
		return;
	}
	j->supervised = gf__proc_alive(j->shim_pid, j->shim_start);
	if (!j->supervised && ended_by_file(w, j))
		return;
	if (!j->supervised && !gf__proc_alive(j->pid, j->pid_start)) {
		gf__worker_ended(w, j, 0, false, gf_clock_wall_ms(),
				 "its shim and the job are gone without a "
				 "status: exit code unknown");
		return;
	}
	gf__worker_started(w, j);
}

/* A directory we cannot read goes aside (".bad.KEY"), never silently. */
static void set_aside(struct gf_worker *w, const char *key, int rc)
{
	char bad[GF__KEY_MAX + 16];
	int mv = gf_fmt(bad, sizeof(bad), ".bad.%s", key);
	if (mv == 0 && renameat(w->jobs_fd, key, w->jobs_fd, bad) != 0)
		mv = -errno;
	gf_log(GF_LOG_ERROR, "worker",
	       "state of '%s' cannot be read (%s): moved to jobs/%s%s%s", key,
	       gf_strerror(rc), bad, mv ? ": " : "", mv ? gf_strerror(mv) : "");
}

static void recover_one(struct gf_worker *w, const char *key)
{
	char name[GF__KEY_MAX + 8], boot[GF__BOOT_ID_MAX];
	char *text = gf_malloc(GF__REC_MAX);
	struct gf__wjob tmp;
	/* a key is under GF__KEY_MAX (gf__recover lists no other) */
	char run[GF__KEY_MAX + 8];
	if (gf_fmt(name, sizeof(name), "%s/nogo", key) != 0 ||
	    gf_fmt(run, sizeof(run), "%s/run", key) != 0) {
		set_aside(w, key, GF_ETOOBIG);
		goto out;
	}
	bool nogo = faccessat(w->jobs_fd, name, F_OK, 0) == 0;
	int rc = gf__rec_read(w->jobs_fd, run, text, GF__REC_MAX);
	if (rc == -ENOENT || nogo) {
		/* a start that did not finish: its process ran nothing */
		int rm = gf__job_remove(w->jobs_fd, key);
		if (rm != 0)
			gf_log(GF_LOG_WARN, "worker", "cannot remove '%s': %s",
			       key, gf_strerror(rm));
		gf_log(GF_LOG_INFO, "worker",
		       "removed '%s': a start that did not finish (nothing "
		       "ran)",
		       key);
		goto out;
	}
	if (rc == 0)
		rc = gf__job_parse(text, &tmp, boot, sizeof(boot));
	if (rc == 0 && strcmp(tmp.key, key) != 0)
		rc = GF_EPARSE;
	if (rc != 0) {
		set_aside(w, key, rc);
		goto out;
	}
	if (w->njobs >= GF_WORKER_MAX_JOBS) {
		gf_log(GF_LOG_ERROR, "worker",
		       "'%s' left alone: %d jobs known already", key, w->njobs);
		goto out;
	}
	struct gf__wjob *j = gf__worker_add(w);
	*j = tmp;
	j->recovered = true;
	j->state = GF__W_RUNNING;
	read_stop(w, j);
	classify(w, j, boot);
out:
	gf_free(text);
}

void gf__recover(struct gf_worker *w)
{
	int fd = dup(w->jobs_fd);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	if (d == NULL) {
		int rc = -errno;
		if (fd >= 0)
			close(fd);
		gf_log(GF_LOG_ERROR, "worker", "cannot list '%s/jobs': %s",
		       w->state_dir, gf_strerror(rc));
		return;
	}
	/* names first: recovery removes and renames entries */
	char(*names)[GF__KEY_MAX] = NULL;
	int n = 0, cap = 0;
	struct dirent *de;
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.')
			continue; /* ".", "..", ".bad.*" */
		size_t len = strlen(de->d_name);
		if (len >= GF__KEY_MAX ||
		    !gf__valid_id(de->d_name, GF__KEY_MAX)) {
			gf_log(GF_LOG_WARN, "worker",
			       "'%s/jobs/%.80s' is not a job: left alone",
			       w->state_dir, de->d_name);
			continue;
		}
		if (n == cap) {
			cap = cap ? 2 * cap : 16;
			names = gf_reallocarray(names, (size_t)cap,
						sizeof(*names));
		}
		memcpy(names[n++], de->d_name, len + 1);
	}
	closedir(d);
	for (int i = 0; i < n; i++)
		recover_one(w, names[i]);
	gf_free(names);
}
