/*
 * worker_log.c - the log of one run (job, replica, attempt): its file
 * name, the marker line that opens it and the line that closes it, and
 * the tokens of --output / --error paths.  Pure but for the two calls
 * that write a line (gf__log_open, gf__log_close).
 *
 * One file per run, LOG_DIR/JOB.REPLICA.ATTEMPT.log, so that an attempt
 * is read exactly (GET /v1/logs/... on the agent, `gpufleet logs
 * --attempt A`).  Its first line is the start marker, its last the end
 * marker (written once: the "logend" mark in the run's state directory
 * says it was, so a run reported again after a restart is not closed
 * twice):
 *
 *   ==> gpufleet: j12 replica 0 attempt 2 on gpu-01 started
 *       2026-12-02T11:03:04Z <==          (one line)
 *   ==> gpufleet: j12 replica 0 attempt 2 on gpu-01 ended
 *       2026-12-02T11:05:00Z: exit code 3 <==
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "agent/worker_impl.h"
#include "util/clock.h"
#include "util/fmt.h"
#include "util/log.h"

int gf_worker_log_path(char *out, size_t size, const char *log_dir,
		       const char *job, int replica, int attempt)
{
	return gf_fmt(out, size, "%s/%s.%d.%d.log", log_dir, job, replica,
		      attempt);
}

/* "2026-12-02T11:03:04Z" */
static void utc(char *out, size_t size, int64_t ms)
{
	time_t t = (time_t)(ms / 1000);
	struct tm tm;
	if (!gmtime_r(&t, &tm) ||
	    !strftime(out, size, "%Y-%m-%dT%H:%M:%SZ", &tm))
		gf_note(out, size, "@%lld", (long long)(ms / 1000));
}

int gf_worker_marker_start(char *out, size_t size, const char *job, int replica,
			   int attempt, const char *node, int64_t ms)
{
	char at[40];
	utc(at, sizeof(at), ms);
	return gf_fmt(out, size,
		      "%s %s replica %d attempt %d on %s started %s %s\n",
		      GF_WORKER_MARK_OPEN, job, replica, attempt, node, at,
		      GF_WORKER_MARK_CLOSE);
}

/* Why a run stopped, in the end marker's words. */
static void why_stopped(char *out, size_t size,
			const struct gf_worker_event *ev)
{
	char how[64];
	if (ev->end == GF_WORKER_END_LOST) {
		gf_note(out, size, "lost (%s)", ev->note);
		return;
	}
	if (ev->signal > 0)
		gf_note(how, sizeof(how), "signal %d (%s)", ev->signal,
			strsignal(ev->signal));
	else
		gf_note(how, sizeof(how), "exit code %d", ev->exit_code);
	switch (ev->end) {
	case GF_WORKER_END_STOPPED:
		gf_note(out, size, "cancelled (stopped by the controller), %s",
			how);
		break;
	case GF_WORKER_END_MAX_RUNTIME:
		gf_note(out, size, "max runtime reached, %s", how);
		break;
	case GF_WORKER_END_FENCED:
		gf_note(out, size, "fenced (its lease ran out), %s", how);
		break;
	default:
		gf_note(out, size, "%s", how);
		break;
	}
}

int gf_worker_marker_end(char *out, size_t size,
			 const struct gf_worker_event *ev, const char *node)
{
	char at[40], why[GF_WORKER_NOTE_MAX + 64];
	utc(at, sizeof(at), ev->end_ms);
	why_stopped(why, sizeof(why), ev);
	return gf_fmt(out, size,
		      "%s %s replica %d attempt %d on %s ended %s: %s %s\n",
		      GF_WORKER_MARK_OPEN, ev->job, ev->replica, ev->attempt,
		      node, at, why, GF_WORKER_MARK_CLOSE);
}

/* Append one number in decimal; false when it does not fit. */
static bool put_int(char *out, size_t size, size_t *k, long v)
{
	char d[24];
	int n = 0;
	unsigned long u = v < 0 ? 0ul - (unsigned long)v : (unsigned long)v;
	do
		d[n++] = (char)('0' + u % 10);
	while ((u /= 10) != 0);
	if (v < 0)
		d[n++] = '-';
	if (*k + (size_t)n >= size)
		return false;
	while (n > 0)
		out[(*k)++] = d[--n];
	return true;
}

int gf_worker_expand(char *out, size_t size, const char *tmpl, const char *job,
		     int replica, int attempt, const char *node)
{
	size_t k = 0;
	if (size == 0)
		return GF_ETOOBIG;
	for (const char *p = tmpl; *p; p++) {
		const char *s = NULL;
		bool ok = true;
		if (*p != '%') {
			if (k + 1 >= size)
				ok = false;
			else
				out[k++] = *p;
		} else {
			switch (*++p) {
			case 'j':
				s = job;
				break;
			case 'n':
				s = node;
				break;
			case 'r':
				ok = put_int(out, size, &k, replica);
				break;
			case 'a':
				ok = put_int(out, size, &k, attempt);
				break;
			case '%':
				s = "%";
				break;
			default:
				out[k] = '\0';
				return GF_EINVAL; /* checked at submit */
			}
		}
		if (s) {
			size_t n = strlen(s);
			if (k + n >= size)
				ok = false;
			else {
				memcpy(out + k, s, n);
				k += n;
			}
		}
		if (!ok) {
			out[k] = '\0';
			return GF_ETOOBIG;
		}
	}
	out[k] = '\0';
	return 0;
}

int gf__log_open(const struct gf_worker *w, const char *job, int replica,
		 int attempt, char *path, size_t size, struct gf_err *e)
{
	if (gf_worker_log_path(path, size, w->log_dir, job, replica, attempt) !=
	    0)
		return gf_err_set(e, GF_ETOOBIG, "log path too long");
	/* the run's key was claimed: a file left here is a start that did
	 * not finish, not a run's log */
	int fd = open(path,
		      O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC |
			      O_NOFOLLOW,
		      0640);
	if (fd < 0)
		return gf_err_set(e, -errno, "cannot open its log '%s': %s",
				  path, gf_strerror(-errno));
	char line[GF_WORKER_ID_MAX + GF_WORKER_NODE_MAX + 128];
	if (gf_worker_marker_start(line, sizeof(line), job, replica, attempt,
				   w->node_name, gf_clock_wall_ms()) == 0) {
		size_t n = strlen(line);
		if (write(fd, line, n) != (ssize_t)n)
			gf_log(GF_LOG_WARN, "worker",
			       "job=%s replica=%d attempt=%d: cannot write its "
			       "start marker to '%s'",
			       job, replica, attempt, path);
	}
	return fd;
}

void gf__log_close(const struct gf_worker *w, const struct gf__wjob *j,
		   const struct gf_worker_event *ev)
{
	char mark[GF__KEY_MAX + 16];
	if (!j->log[0] || gf_fmt(mark, sizeof(mark), "%s/logend", j->key) != 0)
		return;
	int m = openat(w->jobs_fd, mark,
		       O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (m < 0) /* closed already (EEXIST), or the state is gone */
		return;
	close(m);
	int fd = open(j->log, O_RDWR | O_APPEND | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return;
	char line[GF_WORKER_ID_MAX + GF_WORKER_NODE_MAX + 2 * 128 +
		  GF_WORKER_NOTE_MAX];
	line[0] = '\n';
	/* on a line of its own, after output that did not end one */
	struct stat st;
	char last = '\n';
	if (fstat(fd, &st) == 0 && st.st_size > 0 &&
	    pread(fd, &last, 1, st.st_size - 1) != 1)
		last = '\n';
	size_t off = last == '\n' ? 1 : 0;
	if (gf_worker_marker_end(line + 1, sizeof(line) - 1, ev,
				 w->node_name) == 0) {
		size_t n = strlen(line + off);
		if (write(fd, line + off, n) != (ssize_t)n)
			gf_log(GF_LOG_WARN, "worker",
			       "job=%s replica=%d attempt=%d: cannot write its "
			       "end marker",
			       j->job, j->replica, j->attempt);
	}
	close(fd);
}
