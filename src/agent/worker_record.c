/*
 * worker_record.c - the worker's state files and what it reads from /proc.
 *
 * A state file is "key=value" lines, written whole or not at all: into
 * NAME.tmp, fsync, rename over NAME, fsync the directory, so a crash
 * leaves the old file or the new one, never a mix.  Values never hold a
 * newline (ids, numbers and paths are checked before they get here).
 * Invariants: a job's "run" file exists only once its process has been
 * told to run nothing but its record (see worker_launch.c); "exit" is written
 * only by the job's shim; "stop" only by the worker.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "agent/worker_impl.h"
#include "util/fmt.h"
#include "util/mem.h"

static int write_all(int fd, const char *s, size_t len)
{
	while (len > 0) {
		ssize_t n = write(fd, s, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		s += n;
		len -= (size_t)n;
	}
	return 0;
}

int gf__rec_write(int dirfd, const char *name, const char *text)
{
	char tmp[64];
	if (gf_fmt(tmp, sizeof(tmp), "%s.tmp", name) != 0)
		return GF_ETOOBIG;
	int fd = openat(dirfd, tmp,
			O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW,
			0600);
	if (fd < 0)
		return -errno;
	int rc = write_all(fd, text, strlen(text));
	if (rc == 0 && fsync(fd) != 0)
		rc = -errno;
	if (close(fd) != 0 && rc == 0)
		rc = -errno;
	if (rc == 0 && renameat(dirfd, tmp, dirfd, name) != 0)
		rc = -errno;
	if (rc == 0 && fsync(dirfd) != 0)
		rc = -errno;
	if (rc != 0)
		unlinkat(dirfd, tmp, 0);
	return rc;
}

int gf__rec_read(int dirfd, const char *name, char *buf, size_t size)
{
	int fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return -errno;
	size_t len = 0;
	int rc = 0;
	for (;;) {
		if (len + 1 >= size) {
			rc = GF_ETOOBIG;
			break;
		}
		ssize_t n = read(fd, buf + len, size - 1 - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			rc = -errno;
		if (n <= 0)
			break;
		len += (size_t)n;
	}
	close(fd);
	buf[len] = '\0';
	return rc;
}

bool gf__rec_get(const char *text, const char *key, char *out, size_t size)
{
	size_t klen = strlen(key);
	for (const char *p = text; p && *p;) {
		const char *nl = strchr(p, '\n');
		size_t llen = nl ? (size_t)(nl - p) : strlen(p);
		if (llen > klen && memcmp(p, key, klen) == 0 &&
		    p[klen] == '=') {
			size_t vlen = llen - klen - 1;
			if (vlen >= size)
				return false;
			memcpy(out, p + klen + 1, vlen);
			out[vlen] = '\0';
			return true;
		}
		if (llen == klen + 1 && memcmp(p, key, klen) == 0 &&
		    p[klen] == '=') {
			if (size == 0)
				return false;
			out[0] = '\0';
			return true;
		}
		p = nl ? nl + 1 : NULL;
	}
	return false;
}

bool gf__rec_i64(const char *text, const char *key, int64_t *out)
{
	char v[32], *end;
	if (!gf__rec_get(text, key, v, sizeof(v)) || v[0] == '\0')
		return false;
	errno = 0;
	long long x = strtoll(v, &end, 10);
	if (errno || *end)
		return false;
	*out = x;
	return true;
}

int gf__job_format(const struct gf__wjob *j, const char *boot_id, char *out,
		   size_t size)
{
	return gf_fmt(
		out, size,
		"version=1\njob=%s\nreplica=%d\nattempt=%d\nshim_pid=%d\n"
		"shim_start=%" PRIu64 "\npid=%d\npid_start=%" PRIu64 "\n"
		"boot_id=%s\nstart_ms=%" PRId64 "\nmax_runtime_ms=%" PRId64
		"\ngpu_milli=%d\nisolation=%s\ncgroup=%s\nisolation_note=%s\n"
		"log=%s\n",
		j->job, j->replica, j->attempt, j->shim_pid, j->shim_start,
		j->pid, j->pid_start, boot_id, j->start_ms, j->max_runtime_ms,
		j->gpu_milli,
		j->iso == GF_WORKER_ISO_CGROUP ? "cgroup" : "pgroup", j->cgroup,
		j->iso_note, j->log);
}

static bool get_int(const char *text, const char *key, int64_t lo, int64_t hi,
		    int64_t *out)
{
	return gf__rec_i64(text, key, out) && *out >= lo && *out <= hi;
}

/* Fill j from a "run" file; GF_EPARSE naming the first bad key. */
int gf__job_parse(const char *text, struct gf__wjob *j, char *boot_id,
		  size_t boot_size)
{
	int64_t ver, rep, att, sp, p, ss, ps, st, mr, gm;
	char iso[16];
	memset(j, 0, sizeof(*j));
	if (!get_int(text, "version", 1, 1, &ver))
		return GF_EPARSE;
	if (!gf__rec_get(text, "job", j->job, sizeof(j->job)) ||
	    !gf__valid_id(j->job, sizeof(j->job)))
		return GF_EPARSE;
	if (!get_int(text, "replica", 0, GF_WORKER_REPLICA_MAX, &rep) ||
	    !get_int(text, "attempt", 0, GF_WORKER_ATTEMPT_MAX, &att) ||
	    !get_int(text, "shim_pid", 1, INT32_MAX, &sp) ||
	    !get_int(text, "pid", 1, INT32_MAX, &p) ||
	    !get_int(text, "shim_start", 0, INT64_MAX, &ss) ||
	    !get_int(text, "pid_start", 0, INT64_MAX, &ps) ||
	    !get_int(text, "start_ms", 1, INT64_MAX, &st) ||
	    !get_int(text, "max_runtime_ms", 0, INT64_MAX, &mr) ||
	    !get_int(text, "gpu_milli", 0, 1000 * GF_MAX_GPUS, &gm))
		return GF_EPARSE;
	if (!gf__rec_get(text, "boot_id", boot_id, boot_size) ||
	    !gf__rec_get(text, "isolation", iso, sizeof(iso)) ||
	    !gf__rec_get(text, "cgroup", j->cgroup, sizeof(j->cgroup)) ||
	    !gf__rec_get(text, "log", j->log, sizeof(j->log)))
		return GF_EPARSE;
	if (!gf__rec_get(text, "isolation_note", j->iso_note,
			 sizeof(j->iso_note)))
		j->iso_note[0] = '\0'; /* optional */
	if (strcmp(iso, "cgroup") == 0)
		j->iso = GF_WORKER_ISO_CGROUP;
	else if (strcmp(iso, "pgroup") == 0)
		j->iso = GF_WORKER_ISO_PGROUP;
	else
		return GF_EPARSE;
	if ((j->iso == GF_WORKER_ISO_CGROUP) != (j->cgroup[0] == '/'))
		return GF_EPARSE;
	j->replica = (int)rep;
	j->attempt = (int)att;
	j->shim_pid = (int)sp;
	j->pid = (int)p;
	j->shim_start = (uint64_t)ss;
	j->pid_start = (uint64_t)ps;
	j->start_ms = st;
	j->max_runtime_ms = mr;
	j->gpu_milli = (int)gm;
	return gf__key(j->key, sizeof(j->key), j->job, j->replica, j->attempt)
		       ? GF_EPARSE
		       : 0;
}

int gf__job_remove(int jobs_fd, const char *key)
{
	static const char *const names[] = { "run",	 "run.tmp", "stop",
					     "stop.tmp", "exit",    "exit.tmp",
					     "nogo",	 "logend" };
	int dfd = openat(jobs_fd, key, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd >= 0) {
		for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
			unlinkat(dfd, names[i], 0);
		close(dfd);
	}
	if (unlinkat(jobs_fd, key, AT_REMOVEDIR) != 0 && errno != ENOENT)
		return -errno;
	return 0;
}

int gf__proc_stat(int pid, uint64_t *start, char *state)
{
	char path[64], buf[1024];
	if (gf_fmt(path, sizeof(path), "/proc/%d/stat", pid) != 0)
		return GF_ETOOBIG; /* cannot be: an int is short */
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT || errno == ESRCH ? -ENOENT : -errno;
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -ENOENT; /* it went while we read */
	buf[n] = '\0';
	/* "pid (comm) S ppid ...": comm may hold ')' and spaces, so the
	 * fields start after the last ')'.  Field 3 is the state, 22 the
	 * start time. */
	char *p = strrchr(buf, ')');
	if (p == NULL || p[1] != ' ')
		return GF_EPARSE;
	p += 2;
	*state = *p;
	for (int field = 3; field < 22; field++) {
		p = strchr(p, ' ');
		if (p == NULL)
			return GF_EPARSE;
		p++;
	}
	char *end;
	errno = 0;
	unsigned long long v = strtoull(p, &end, 10);
	if (errno || end == p)
		return GF_EPARSE;
	*start = v;
	return 0;
}

bool gf__proc_alive(int pid, uint64_t start)
{
	uint64_t s;
	char st;
	if (pid <= 0 || gf__proc_stat(pid, &s, &st) != 0)
		return false;
	return s == start && st != 'Z' && st != 'X' && st != 'x';
}

int gf__boot_id(char *out, size_t size)
{
	int fd = open("/proc/sys/kernel/random/boot_id", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	char buf[64];
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -EIO;
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	if (strlen(buf) >= size)
		return GF_ETOOBIG;
	memcpy(out, buf, strlen(buf) + 1);
	return 0;
}

int64_t gf__boot_time_ms(void)
{
	FILE *f = fopen("/proc/stat", "re");
	if (f == NULL)
		return 0;
	char line[256];
	long long bt = 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "btime %lld", &bt) == 1)
			break;
	fclose(f);
	return (int64_t)bt * 1000;
}
