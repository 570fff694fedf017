/*
 * worker_cgroup.c - a cgroup v2 per job, where the agent may create one.
 *
 * The job cgroups are children of the agent's own cgroup (the "0::" line
 * of /proc/self/cgroup under the cgroup2 mount of /proc/self/mountinfo),
 * named "gpufleet@NODE@JOB.REPLICA" so that two agents sharing a host
 * (tests, --name) never meet.  They only group: no controller is enabled,
 * so the "no internal processes" rule does not bite while the agent stays
 * in its own cgroup.  The job's child joins its cgroup itself, before
 * exec, by writing "0" to a cgroup.procs opened before the fork.
 * Detection creates and removes a probe cgroup; any failure means
 * process groups, with the reason kept for gf_worker_isolation.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent/worker_impl.h"
#include "util/fmt.h"

/* The first line of path that take() accepts (it fills out): 0, -ENOENT
 * when none does, -errno when the file cannot be read. */
static int first_line(const char *path,
		      bool (*take)(char *line, char *out, size_t size),
		      char *out, size_t size)
{
	FILE *f = fopen(path, "re");
	if (f == NULL)
		return -errno;
	char line[4096];
	int rc = -ENOENT;
	while (rc != 0 && fgets(line, sizeof(line), f))
		if (take(line, out, size))
			rc = 0;
	fclose(f);
	return rc;
}

/* A mountinfo line of the cgroup2 mount: its mount point ("... MOUNTPOINT
 * ... - cgroup2 ..."). */
static bool cgroup2_mount(char *line, char *out, size_t size)
{
	if (strstr(line, " - cgroup2 ") == NULL)
		return false;
	/* fields: id parent major:minor root mountpoint ... */
	char *p = line;
	for (int i = 0; i < 4 && p; i++) {
		p = strchr(p, ' ');
		if (p)
			p++;
	}
	if (p == NULL)
		return false;
	size_t len = strcspn(p, " ");
	if (len == 0 || len >= size || memchr(p, '\\', len))
		return false; /* escaped characters: not ours to guess */
	memcpy(out, p, len);
	out[len] = '\0';
	return true;
}

/* The cgroup v2 line of /proc/self/cgroup: this process's path
 * ("0::/PATH"). */
static bool own_cgroup(char *line, char *out, size_t size)
{
	if (strncmp(line, "0::", 3) != 0)
		return false;
	line[strcspn(line, "\n")] = '\0';
	size_t len = strlen(line + 3);
	if (line[3] != '/' || len >= size)
		return false;
	memcpy(out, line + 3, len + 1);
	return true;
}

/* dir/name into out: 0, or GF_ETOOBIG. */
static int under(char *out, size_t size, const char *dir, const char *name)
{
	return gf_fmt(out, size, "%s/%s", dir, name);
}

void gf__cgroup_detect(struct gf_cgroup_env *cg, const char *probe_name)
{
	char mnt[GF_WORKER_PATH_MAX], own[GF_WORKER_PATH_MAX];
	char probe[GF_WORKER_PATH_MAX + 80], file[GF_WORKER_PATH_MAX + 100];
	memset(cg, 0, sizeof(*cg));
	if (first_line("/proc/self/mountinfo", cgroup2_mount, mnt,
		       sizeof(mnt)) != 0) {
		gf_note(cg->why, sizeof(cg->why), "no cgroup2 mount");
		return;
	}
	if (first_line("/proc/self/cgroup", own_cgroup, own, sizeof(own)) !=
	    0) {
		gf_note(cg->why, sizeof(cg->why),
			"no cgroup v2 line in /proc/self/cgroup");
		return;
	}
	if (gf_fmt(cg->base, sizeof(cg->base), "%s%s", mnt,
		   strcmp(own, "/") == 0 ? "" : own) != 0 ||
	    under(file, sizeof(file), cg->base, "cgroup.procs") != 0 ||
	    under(probe, sizeof(probe), cg->base, probe_name) != 0) {
		gf_note(cg->why, sizeof(cg->why), "cgroup path too long");
		return;
	}
	if (access(file, W_OK) != 0) {
		gf_note(cg->why, sizeof(cg->why), "cannot write '%s': %s", file,
			gf_strerror(-errno));
		return;
	}
	if (mkdir(probe, 0755) != 0 && errno != EEXIST) {
		gf_note(cg->why, sizeof(cg->why), "cannot create '%s': %s",
			probe, gf_strerror(-errno));
		return;
	}
	cg->has_kill = under(file, sizeof(file), probe, "cgroup.kill") == 0 &&
		       access(file, W_OK) == 0;
	if (rmdir(probe) != 0) {
		gf_note(cg->why, sizeof(cg->why), "cannot remove '%s': %s",
			probe, gf_strerror(-errno));
		return;
	}
	cg->ok = true;
}

int gf__cgroup_create(const struct gf_cgroup_env *cg, const char *name,
		      char *out, size_t size, int *procs_fd, int *kill_fd,
		      struct gf_err *e)
{
	char procs[GF_WORKER_PATH_MAX + 32], killf[GF_WORKER_PATH_MAX + 32];
	*procs_fd = *kill_fd = -1;
	if (under(out, size, cg->base, name) != 0 ||
	    under(procs, sizeof(procs), out, "cgroup.procs") != 0 ||
	    under(killf, sizeof(killf), out, "cgroup.kill") != 0)
		return gf_err_set(e, GF_ETOOBIG,
				  "cgroup path for '%s' too long", name);
	if (mkdir(out, 0755) != 0) {
		/* a leftover of an earlier run of this key: reuse it when
		 * empty (rmdir refuses one with processes) */
		if (errno != EEXIST || rmdir(out) != 0 || mkdir(out, 0755) != 0)
			return gf_err_set(
				e, errno == EBUSY ? GF_ECONFLICT : -errno,
				"cannot create cgroup '%s': %s", out,
				gf_strerror(-errno));
	}
	*procs_fd = open(procs, O_WRONLY | O_CLOEXEC);
	if (*procs_fd < 0) {
		int rc = gf_err_set(e, -errno, "cannot open '%s': %s", procs,
				    gf_strerror(-errno));
		rmdir(out);
		return rc;
	}
	if (cg->has_kill)
		*kill_fd = open(killf, O_WRONLY | O_CLOEXEC);
	return 0;
}

int gf__cgroup_signal(const char *path, int sig)
{
	char file[GF_WORKER_PATH_MAX + 32];
	if (sig == SIGKILL &&
	    under(file, sizeof(file), path, "cgroup.kill") == 0) {
		int fd = open(file, O_WRONLY | O_CLOEXEC);
		if (fd >= 0) {
			ssize_t w = write(fd, "1", 1);
			int err = errno;
			close(fd);
			if (w == 1)
				return 0;
			if (err != EINVAL && err != ENOENT)
				return -err;
		}
	}
	if (under(file, sizeof(file), path, "cgroup.procs") != 0)
		return GF_ETOOBIG; /* no cgroup of ours is so long */
	FILE *f = fopen(file, "re");
	if (f == NULL)
		return errno == ENOENT ? 0 : -errno;
	char line[32];
	while (fgets(line, sizeof(line), f)) {
		long pid = strtol(line, NULL, 10);
		if (pid > 1)
			kill((pid_t)pid, sig);
	}
	fclose(f);
	return 0;
}

int gf__cgroup_remove(const char *path)
{
	if (path[0] == '\0' || rmdir(path) == 0 || errno == ENOENT)
		return 0;
	return -errno;
}
