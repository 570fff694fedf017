/*
 * worker_launch.c - how a job's process comes to be: agent -> intermediate ->
 * shim -> job.
 *
 *   agent         forks the intermediate and reaps it at once
 *   intermediate  setsid(), forks the shim, _exits: the shim is orphaned
 *                 at birth, so it is init's (or a subreaper's) child
 *                 whether or not the agent lives, and a restarted agent
 *                 treats it exactly as the first one did
 *   shim          becomes a child subreaper, forks the job, tells the
 *                 agent both pids, waits for the job, then kills what is
 *                 left of its process group (and cgroup), reaps it, and
 *                 writes STATE/jobs/KEY/exit atomically; then _exits
 *   job           own process group (setpgid), own cgroup when there is
 *                 one, stdout/stderr to its log, binding applied; says
 *                 READY and waits for the agent's "go": the agent writes
 *                 the job's record durably first, so no user code ever
 *                 runs without a record.  No "go" (the agent died or
 *                 failed): _exit(125) without running anything.
 *
 * Invariant: the agent may have threads, so nothing after fork() in this
 * file allocates, locks or formats: every path, argv, envp, CPU set and
 * file descriptor is prepared before the fork (struct child), and the
 * children use only async-signal-safe calls (and raw syscalls:
 * sched_setaffinity, set_mempolicy, close_range, prctl) until execve or
 * _exit.  This is also why the binding is not gf_topo_bind_self (hwloc
 * loads a topology: malloc, files): the plan's CPU set and NUMA nodes go
 * to the same kernel calls hwloc makes on Linux.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "agent/worker_impl.h"
#include "util/clock.h"
#include "util/mem.h"

#define GF__MPOL_BIND	  2 /* <numaif.h>, without needing libnuma */
#define GF__READY_WAIT_MS 10000
#define GF__DRAIN_TRIES	  500 /* x 10 ms: stragglers of a killed group */
#define GF__MEM_WORDS	  (GF_BITMAP_BITS / (8 * sizeof(unsigned long)))

enum { MSG_SHIM = 1, MSG_READY, MSG_ERR };
enum {
	STEP_SETSID = 1,
	STEP_FORK,
	STEP_SETPGID,
	STEP_CGROUP,
	STEP_STDIO,
	STEP_WORKDIR,
	STEP_CPUS,
	STEP_MEMS,
	STEP_USER,
};

/* One message up the report pipe: fixed size, < PIPE_BUF, so atomic. */
struct msg {
	int type, step, err, shim_pid, job_pid;
};

/* Everything the children touch, ready before fork. */
struct child {
	char *argv[4];
	char *const *envp;
	const char *workdir;
	/* its user (issue 21): groups, gid, uid set before the workdir */
	bool switch_user;
	uid_t uid;
	gid_t gid;
	const gid_t *groups;
	int ngroups;
	cpu_set_t cpus;
	bool bind_cpus;
	unsigned long mems[GF__MEM_WORDS];
	bool bind_mems;
	int null_fd, log_fd, dir_fd, procs_fd, cgkill_fd;
	/* --output / --error files (NULL: the log), opened by the job's
	 * process, and the start marker written at the output's top */
	const char *out_path, *err_path, *marker;
	size_t marker_len;
	const char *lease; /* NULL: none */
	int64_t grace_ms;
	int rep_w, go_r, go_w;
	int keep[8];
	int nkeep;
	int max_fd;
};

static void say(int fd, int type, int step, int err, int shim, int job)
{
	struct msg m = { type, step, err, shim, job };
	ssize_t n;
	do
		n = write(fd, &m, sizeof(m));
	while (n < 0 && errno == EINTR);
}

/* A child's step failed: errno to the worker, then gone with code. */
static _Noreturn void failed(const struct child *c, int step, int code)
{
	say(c->rep_w, MSG_ERR, step, errno, 0, 0);
	_exit(code);
}

/* Close every descriptor >= 3 not in c->keep (sorted). */
static void close_others(const struct child *c)
{
	unsigned lo = 3;
	for (int i = 0; i <= c->nkeep; i++) {
		unsigned hi = i < c->nkeep ? (unsigned)c->keep[i] : ~0u;
		if (hi < lo) /* a kept fd below 3 or repeated */
			continue;
		if (hi > lo) {
			unsigned last = hi == ~0u ? ~0u : hi - 1;
#ifdef SYS_close_range
			if (syscall(SYS_close_range, lo, last, 0) == 0) {
				lo = hi == ~0u ? hi : hi + 1;
				continue;
			}
#endif
			for (unsigned fd = lo;
			     fd <= last && fd < (unsigned)c->max_fd; fd++)
				close((int)fd);
		}
		lo = hi == ~0u ? hi : hi + 1;
	}
}

static void signals_default(bool shim)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sigemptyset(&sa.sa_mask);
	for (int sig = 1; sig < NSIG; sig++) {
		if (sig == SIGKILL || sig == SIGSTOP)
			continue;
		bool ign = shim &&
			   (sig == SIGTERM || sig == SIGINT || sig == SIGHUP ||
			    sig == SIGQUIT || sig == SIGPIPE);
		sa.sa_handler = ign ? SIG_IGN : SIG_DFL;
		sigaction(sig, &sa, NULL); /* EINVAL for libc's own: fine */
	}
	sigset_t none;
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
}

/* stdin from /dev/null; stdout and stderr to the log, or to the job's
 * --output / --error files (opened here, as the job's process: a path
 * the job could not write is refused as it would be to the job); 0 or
 * -1 with errno.  Async-signal-safe. */
static int redirect(const struct child *c)
{
	int flags = O_WRONLY | O_CREAT | O_APPEND | O_NOCTTY;
	int out = c->log_fd, err = c->log_fd;
	if (c->out_path) {
		out = open(c->out_path, flags, 0640);
		if (out < 0)
			return -1;
		if (c->marker_len &&
		    write(out, c->marker, c->marker_len) < 0) /* best effort */
			errno = 0;
		err = out;
	}
	if (c->err_path && (err = open(c->err_path, flags, 0640)) < 0)
		return -1;
	if (dup2(c->null_fd, 0) < 0 || dup2(out, 1) < 0 || dup2(err, 2) < 0)
		return -1;
	return 0;
}

static _Noreturn void job_child(const struct child *c)
{
	int step;
	signals_default(false);
	if (setpgid(0, 0) != 0) {
		step = STEP_SETPGID;
		goto fail;
	}
	if (c->procs_fd >= 0 && write(c->procs_fd, "0", 1) != 1) {
		step = STEP_CGROUP;
		goto fail;
	}
	if (redirect(c) != 0) {
		step = STEP_STDIO;
		goto fail;
	}
	/* the user last of the privileged steps, before its directory
	 * (which it must be able to enter itself) */
	if (c->switch_user && (setgroups((size_t)c->ngroups, c->groups) != 0 ||
			       setgid(c->gid) != 0 || setuid(c->uid) != 0)) {
		step = STEP_USER;
		goto fail;
	}
	if (chdir(c->workdir) != 0) {
		step = STEP_WORKDIR;
		goto fail;
	}
	if (c->bind_cpus && sched_setaffinity(0, sizeof(c->cpus), &c->cpus)) {
		step = STEP_CPUS;
		goto fail;
	}
	if (c->bind_mems && syscall(SYS_set_mempolicy, GF__MPOL_BIND, c->mems,
				    (unsigned long)GF_BITMAP_BITS + 1) != 0) {
		step = STEP_MEMS;
		goto fail;
	}
	say(c->rep_w, MSG_READY, 0, 0, 0, 0);
	char go = 0;
	ssize_t n;
	do
		n = read(c->go_r, &go, 1);
	while (n < 0 && errno == EINTR);
	if (n != 1 || go != 'g') {
		/* told nothing: the worker died or failed before the record;
		 * leave a mark so recovery knows nothing ran */
		int fd = openat(c->dir_fd, "nogo",
				O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
		if (fd >= 0)
			close(fd);
		_exit(GF__EXIT_NOGO);
	}
	execve(c->argv[0], c->argv, c->envp);
	_exit(127);
fail:
	failed(c, step, 126);
}

/* "status=S\nend_ms=T\n" without printf. */
static size_t put_num(char *p, int64_t v)
{
	char tmp[24];
	size_t n = 0, len = 0;
	bool neg = v < 0;
	uint64_t u = neg ? (uint64_t)(-(v + 1)) + 1 : (uint64_t)v;
	do {
		tmp[n++] = (char)('0' + u % 10);
		u /= 10;
	} while (u);
	if (neg)
		p[len++] = '-';
	while (n)
		p[len++] = tmp[--n];
	return len;
}

static size_t put_str(char *p, const char *s)
{
	size_t n = strlen(s);
	memcpy(p, s, n);
	return n;
}

static void write_exit(int dir_fd, int status, bool fenced)
{
	char buf[96];
	size_t len = 0;
	len += put_str(buf + len, "status=");
	len += put_num(buf + len, status);
	len += put_str(buf + len, "\nend_ms=");
	len += put_num(buf + len, gf_clock_wall_ms()); /* async-signal-safe */
	buf[len++] = '\n';
	if (fenced)
		len += put_str(buf + len, "fenced=1\n");
	int fd = openat(dir_fd, "exit.tmp",
			O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW,
			0600);
	if (fd < 0)
		return;
	bool ok = write(fd, buf, len) == (ssize_t)len && fsync(fd) == 0;
	close(fd);
	if (ok && renameat(dir_fd, "exit.tmp", dir_fd, "exit") == 0)
		fsync(dir_fd);
}

/* Reap children until the job's process group is empty (bounded: a
 * process in uninterruptible sleep may take its time). */
/* Until the job's process group is empty: its end is reported only then
 * (a resource is free only when the process that held it is gone).  A
 * process that outlives SIGKILL (D state) keeps the shim waiting, and
 * its replica running to the controller, which shows it stuck. */
static void drain_group(pid_t job, int cgkill_fd)
{
	struct timespec ten_ms = { 0, 10 * 1000 * 1000 };
	for (long i = 0;; i++) {
		while (waitpid(-1, NULL, WNOHANG) > 0)
			;
		if (kill(-job, 0) != 0 && errno == ESRCH)
			return;
		if (i >= GF__DRAIN_TRIES && i % 100 == 0) { /* each second */
			kill(-job, SIGKILL);
			if (cgkill_fd >= 0 && write(cgkill_fd, "1", 1) != 1)
				kill(-job, SIGKILL);
		}
		nanosleep(&ten_ms, NULL);
	}
}

/* A decimal number at *p, moving past it and the spaces after; false
 * when there is none. */
static bool take_num(const char **p, int64_t *out)
{
	int64_t v = 0;
	const char *s = *p;
	if (*s < '0' || *s > '9')
		return false;
	while (*s >= '0' && *s <= '9' && v < INT64_MAX / 10 - 10)
		v = v * 10 + (*s++ - '0');
	while (*s == ' ')
		s++;
	*p = s;
	*out = v;
	return true;
}

/* The lease's end (ms since the epoch), or INT64_MAX when there is no
 * lease to read.  Async-signal-safe: open, read, close. */
static int64_t lease_end(const char *path)
{
	char buf[64];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return INT64_MAX;
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return INT64_MAX;
	buf[n] = '\0';
	const char *p = buf;
	int64_t at, len;
	if (!take_num(&p, &at) || !take_num(&p, &len) || at <= 0 || len <= 0)
		return INT64_MAX;
	return at + len;
}

/*
 * Wait for the job while watching the lease (every second, or at once
 * when a child ends: SIGCHLD is blocked and waited for): once it runs
 * out, SIGTERM to the job's group, SIGKILL after the grace.  Returns
 * whether the lease stopped it; *status the job's wait status.
 */
static bool wait_leased(const struct child *c, pid_t job, int *status)
{
	sigset_t chld;
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	sigprocmask(SIG_BLOCK, &chld, NULL);
	bool fenced = false;
	int64_t kill_at = 0;
	for (;;) {
		pid_t r = waitpid(-1, status, WNOHANG);
		if (r == job)
			return fenced;
		if (r > 0)
			continue; /* an orphan of the job, reaped */
		int64_t now = gf_clock_wall_ms();
		if (!fenced && now >= lease_end(c->lease)) {
			fenced = true;
			kill(-job, SIGTERM);
			kill_at = now + c->grace_ms;
		}
		if (fenced && now >= kill_at) {
			kill(-job, SIGKILL);
			if (c->cgkill_fd >= 0 &&
			    write(c->cgkill_fd, "1", 1) != 1)
				kill(-job, SIGKILL);
		}
		struct timespec one = { 1, 0 };
		sigtimedwait(&chld, NULL, &one);
	}
}

static _Noreturn void shim(const struct child *c)
{
	close(c->go_w);
	dup2(c->null_fd, 0);
	dup2(c->null_fd, 1);
	dup2(c->null_fd, 2);
	close_others(c);
	signals_default(true);
	/* orphans of the job come to us, so none is left a zombie of an
	 * init that does not reap, and its process group can empty */
	prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
	pid_t job = fork();
	if (job < 0)
		failed(c, STEP_FORK, 1);
	if (job == 0)
		job_child(c);
	setpgid(job, job); /* no race with a stop: the group exists now */
	say(c->rep_w, MSG_SHIM, 0, 0, (int)getpid(), (int)job);
	close(c->rep_w);
	close(c->go_r);
	close(c->log_fd);
	if (c->procs_fd >= 0)
		close(c->procs_fd);
	int status = 0;
	bool fenced = false;
	if (c->lease) {
		fenced = wait_leased(c, job, &status);
	} else {
		for (;;) {
			pid_t r = waitpid(-1, &status, 0);
			if (r == job)
				break;
			if (r < 0 && errno != EINTR)
				_exit(1); /* cannot happen: our child */
		}
	}
	/* the job is its main process: what it leaves behind goes too */
	kill(-job, SIGKILL);
	if (c->cgkill_fd >= 0 && write(c->cgkill_fd, "1", 1) != 1)
		kill(-job, SIGKILL);
	drain_group(job, c->cgkill_fd);
	write_exit(c->dir_fd, status, fenced);
	/* descendants that left the group (setsid) are still ours to reap */
	while (waitpid(-1, NULL, 0) > 0 || errno == EINTR)
		;
	_exit(0);
}

static _Noreturn void intermediate(const struct child *c)
{
	if (setsid() < 0)
		failed(c, STEP_SETSID, 1);
	pid_t s = fork();
	if (s < 0)
		failed(c, STEP_FORK, 1);
	if (s == 0)
		shim(c);
	_exit(0);
}

/* Move fd above 2 (a daemon may run with 0-2 closed) keeping CLOEXEC. */
static int lift(int fd)
{
	if (fd < 0 || fd > 2)
		return fd;
	int n = fcntl(fd, F_DUPFD_CLOEXEC, 3);
	close(fd);
	return n;
}

static void keep(struct child *c, int fd)
{
	if (fd < 0)
		return;
	int i = c->nkeep++;
	while (i > 0 && c->keep[i - 1] > fd) {
		c->keep[i] = c->keep[i - 1];
		i--;
	}
	c->keep[i] = fd;
}

static void fill_child(struct child *c, const struct gf__launch_in *in,
		       char *cmd)
{
	static char sh[] = "sh", dash_c[] = "-c", shell[] = GF__SHELL;
	(void)sh;
	c->argv[0] = shell;
	c->argv[1] = dash_c;
	c->argv[2] = cmd;
	c->argv[3] = NULL;
	c->envp = in->prep->envp;
	c->workdir = in->workdir ? in->workdir : "/";
	c->switch_user = in->prep->switch_user;
	c->uid = in->prep->uid;
	c->gid = in->prep->gid;
	c->groups = in->prep->groups;
	c->ngroups = in->prep->ngroups;
	CPU_ZERO(&c->cpus);
	int i;
	gf_bitmap_for_each(i, &in->prep->cpus)
	{
		if (i < CPU_SETSIZE)
			CPU_SET((size_t)i, &c->cpus);
		c->bind_cpus = true;
	}
	memset(c->mems, 0, sizeof(c->mems));
	gf_bitmap_for_each(i, &in->prep->mems)
	{
		c->mems[(size_t)i / (8 * sizeof(unsigned long))] |=
			1ul << ((size_t)i % (8 * sizeof(unsigned long)));
		c->bind_mems = true;
	}
	c->log_fd = in->log_fd;
	c->out_path = in->out_path;
	c->err_path = in->err_path;
	c->marker = in->marker;
	c->marker_len = in->marker ? strlen(in->marker) : 0;
	c->dir_fd = in->dir_fd;
	c->procs_fd = in->procs_fd;
	c->cgkill_fd = in->cgkill_fd;
	c->lease = in->lease_path;
	c->grace_ms = in->grace_ms;
	struct rlimit rl;
	c->max_fd = 65536;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < 65536)
		c->max_fd = (int)rl.rlim_cur;
	keep(c, c->null_fd);
	keep(c, c->log_fd);
	keep(c, c->dir_fd);
	keep(c, c->procs_fd);
	keep(c, c->cgkill_fd);
	keep(c, c->rep_w);
	keep(c, c->go_r);
}

static const char *step_name(int step)
{
	static const char *const name[] = {
		[STEP_SETSID] = "setsid",
		[STEP_FORK] = "fork",
		[STEP_SETPGID] = "its own process group",
		[STEP_CGROUP] = "joining its cgroup",
		[STEP_STDIO] = "redirecting its output",
		[STEP_WORKDIR] = "entering its workdir",
		[STEP_CPUS] = "binding its CPUs",
		[STEP_MEMS] = "binding its memory",
		[STEP_USER] = "becoming its user",
	};
	int n = (int)(sizeof(name) / sizeof(name[0]));
	return step > 0 && step < n && name[step] ? name[step] : "?";
}

/* Wait for the shim's pids and the job's READY, or an error (then for
 * the pids too, while they come, so the caller can wait for the shim). */
static int await_ready(int rep_r, struct gf__launch_out *out, struct gf_err *e)
{
	bool shim = false, ready = false;
	int rc = 0;
	int64_t deadline = gf_clock_wall_ms() + GF__READY_WAIT_MS;
	while (!(shim && (ready || rc != 0))) {
		int64_t left = deadline - gf_clock_wall_ms();
		struct pollfd pf = { .fd = rep_r, .events = POLLIN };
		int pr = left > 0 ? poll(&pf, 1, (int)left) : 0;
		if (pr < 0 && errno == EINTR)
			continue;
		if (pr <= 0 && rc == 0)
			rc = gf_err_set(e, -ETIMEDOUT,
					"the job did not get ready in %d ms",
					GF__READY_WAIT_MS);
		if (pr <= 0)
			break;
		struct msg m;
		ssize_t n = read(rep_r, &m, sizeof(m));
		if (n < 0 && errno == EINTR)
			continue;
		if (n != (ssize_t)sizeof(m) && rc == 0)
			rc = gf_err_set(e, -EPIPE,
					"its shim ended before the job was "
					"ready");
		if (n != (ssize_t)sizeof(m))
			break;
		if (m.type == MSG_ERR && rc == 0)
			rc = gf_err_set(e,
					m.step == STEP_CPUS ||
							m.step == STEP_MEMS
						? GF_EBIND
						: -m.err,
					"%s failed: %s", step_name(m.step),
					gf_strerror(-m.err));
		if (m.type == MSG_SHIM) {
			out->shim_pid = m.shim_pid;
			out->pid = m.job_pid;
			shim = true;
		} else if (m.type == MSG_READY) {
			ready = true;
		}
	}
	return rc;
}

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

int gf__launch(const struct gf__launch_in *in, struct gf__launch_out *out,
	       struct gf_err *e)
{
	struct child c;
	int rep[2] = { -1, -1 }, go[2] = { -1, -1 };
	memset(&c, 0, sizeof(c));
	memset(out, 0, sizeof(*out));
	out->go_fd = -1;
	char *cmd = gf_strdup(in->command);
	c.null_fd = lift(open("/dev/null", O_RDWR | O_CLOEXEC));
	int rc = 0;
	if (c.null_fd < 0 || pipe2(rep, O_CLOEXEC) != 0 ||
	    socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, go) != 0) {
		rc = gf_err_set(e, -errno, "cannot make its pipes: %s",
				gf_strerror(-errno));
		goto out;
	}
	for (int i = 0; i < 2; i++) {
		rep[i] = lift(rep[i]);
		go[i] = lift(go[i]);
	}
	c.rep_w = rep[1];
	c.go_r = go[1];
	c.go_w = go[0];
	fill_child(&c, in, cmd);
	pid_t a = fork();
	if (a < 0) {
		rc = gf_err_set(e, -errno, "cannot fork: %s",
				gf_strerror(-errno));
		goto out;
	}
	if (a == 0)
		intermediate(&c);
	close_fd(&rep[1]);
	close_fd(&go[1]);
	while (waitpid(a, NULL, 0) < 0 && errno == EINTR)
		;
	rc = await_ready(rep[0], out, e);
	if (rc == 0) {
		out->go_fd = go[0];
		go[0] = -1;
	}
out:
	close_fd(&rep[0]);
	close_fd(&rep[1]);
	close_fd(&go[0]); /* on failure: the job reads EOF and runs nothing */
	close_fd(&go[1]);
	close_fd(&c.null_fd);
	gf_free(cmd);
	return rc;
}

int gf__launch_go(struct gf__launch_out *out)
{
	int rc = 0;
	if (send(out->go_fd, "g", 1, MSG_NOSIGNAL) != 1)
		rc = -errno;
	close_fd(&out->go_fd);
	return rc;
}

void gf__launch_abort(struct gf__launch_out *out)
{
	close_fd(&out->go_fd);
}
