/*
 * join_ledger.c - the replicas this node runs or ran, by attempt (join_impl.h
 * has the states).  Running and ended replicas come back from the
 * worker's records after a restart (they carry the attempt); what only
 * the ledger knows is kept on disk: the tombstone of an attempt whose end
 * was acknowledged, one small file each, written atomically (tmp, fsync,
 * rename, fsync dir) before the worker forgets the run, so a crash leaves
 * the run reported again or the tombstone, never neither.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent/join_impl.h"
#include "util/fmt.h"
#include "util/log.h"
#include "util/mem.h"

/* "j12.3": a job id holds [A-Za-z0-9_-], so the last '.' splits. */
static int file_of(const struct gf_ledger *l, const char *job, int replica,
		   char *out, size_t size)
{
	return gf_fmt(out, size, "%s/%.40s.%d", l->dir, job, replica);
}

static int sync_dir(const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	int rc = fsync(fd) == 0 ? 0 : -errno;
	close(fd);
	return rc;
}

static int write_entry(const struct gf_ledger *l, const struct gf_le *le,
		       struct gf_err *e)
{
	char path[GF_WORKER_PATH_MAX + 64], tmp[GF_WORKER_PATH_MAX + 80];
	char text[96];
	if (file_of(l, le->job, le->replica, path, sizeof(path)) != 0 ||
	    gf_fmt(tmp, sizeof(tmp), "%s.tmp", path) != 0 ||
	    gf_fmt(text, sizeof(text), "attempt %d done %" PRIu64 "\n",
		   le->attempt, le->done_gen) != 0)
		return gf_err_set(e, GF_ETOOBIG, "ledger '%s': path too long",
				  l->dir);
	size_t len = strlen(text);
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	int rc = 0;
	if (fd < 0 || write(fd, text, len) != (ssize_t)len || fsync(fd) != 0)
		rc = -errno;
	if (fd >= 0)
		close(fd);
	if (rc == 0 && rename(tmp, path) != 0)
		rc = -errno;
	if (rc == 0)
		rc = sync_dir(l->dir);
	if (rc) {
		unlink(tmp);
		return gf_err_set(e, rc, "ledger '%s': %s", path,
				  gf_strerror(rc));
	}
	return 0;
}

static struct gf_le *grow(struct gf_ledger *l)
{
	if (l->n == l->cap) {
		l->cap = l->cap ? 2 * l->cap : 32;
		l->v = gf_reallocarray(l->v, (size_t)l->cap, sizeof(*l->v));
	}
	struct gf_le *le = &l->v[l->n++];
	memset(le, 0, sizeof(*le));
	return le;
}

/* One file back into an entry; false (said in the log) when it is not
 * one of ours. */
static bool read_entry(struct gf_ledger *l, const char *name)
{
	const char *dot = strrchr(name, '.');
	char path[GF_WORKER_PATH_MAX + 300], text[96] = "";
	if (!dot || dot == name || (size_t)(dot - name) >= GF_JOB_ID_MAX ||
	    !strcmp(dot, ".tmp") ||
	    gf_fmt(path, sizeof(path), "%s/%s", l->dir, name) != 0)
		return false;
	FILE *f = fopen(path, "re");
	if (f) {
		if (!fgets(text, sizeof(text), f))
			text[0] = '\0';
		fclose(f);
	}
	char *end;
	long replica = strtol(dot + 1, &end, 10);
	int attempt = 0;
	char st[16] = "";
	uint64_t gen = 0;
	int got = sscanf(text, "attempt %d %15s %" SCNu64, &attempt, st, &gen);
	if (*end || replica < 0 || replica >= GF_JOB_MAX_REPLICAS || got < 3 ||
	    attempt < 1 || strcmp(st, "done")) {
		gf_log(GF_LOG_ERROR, "join",
		       "ledger '%s': not a ledger entry ('%.40s'): ignored",
		       path, text);
		return false;
	}
	struct gf_le *le = grow(l);
	/* fits: the name before the dot is under GF_JOB_ID_MAX (above) */
	memcpy(le->job, name, (size_t)(dot - name));
	le->job[dot - name] = '\0';
	le->replica = (int)replica;
	le->attempt = attempt;
	le->st = GF_LE_DONE;
	le->done_gen = gen;
	return true;
}

int gf__ledger_init(struct gf_ledger *l, const char *state_dir,
		    struct gf_err *e)
{
	memset(l, 0, sizeof(*l));
	if (gf_fmt(l->dir, sizeof(l->dir), "%s/ledger", state_dir) != 0)
		return gf_err_set(e, GF_ETOOBIG,
				  "ledger: state directory '%.100s%s' is %zu "
				  "bytes, too long for its ledger",
				  state_dir,
				  strlen(state_dir) > 100 ? "..." : "",
				  strlen(state_dir));
	return 0;
}

int gf__ledger_open(struct gf_ledger *l, struct gf_err *e)
{
	if (mkdir(l->dir, 0700) != 0 && errno != EEXIST) {
		int rc = -errno;
		return gf_err_set(e, rc, "cannot create '%s': %s", l->dir,
				  gf_strerror(rc));
	}
	DIR *d = opendir(l->dir);
	if (!d) {
		int rc = -errno;
		return gf_err_set(e, rc, "cannot read '%s': %s", l->dir,
				  gf_strerror(rc));
	}
	struct dirent *de;
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.')
			continue;
		if (l->n >= 4 * GF_JOIN_MAX_ENTRIES) {
			closedir(d);
			gf__ledger_close(l);
			return gf_err_set(e, GF_ETOOBIG,
					  "'%s': more than %d entries", l->dir,
					  4 * GF_JOIN_MAX_ENTRIES);
		}
		read_entry(l, de->d_name);
	}
	closedir(d);
	return 0;
}

void gf__ledger_close(struct gf_ledger *l)
{
	gf_free(l->v);
	l->v = NULL;
	l->n = l->cap = 0;
}

struct gf_le *gf__ledger_find(struct gf_ledger *l, const char *job, int replica)
{
	for (int i = 0; i < l->n; i++)
		if (l->v[i].replica == replica && !strcmp(l->v[i].job, job))
			return &l->v[i];
	return NULL;
}

struct gf_le *gf__ledger_add(struct gf_ledger *l, const char *job, int replica,
			     int attempt, struct gf_err *e)
{
	if (l->n >= 4 * GF_JOIN_MAX_ENTRIES) {
		gf_err_set(e, GF_ETOOBIG, "more than %d ledger entries",
			   4 * GF_JOIN_MAX_ENTRIES);
		return NULL;
	}
	if (strlen(job) >= GF_JOB_ID_MAX) {
		gf_err_set(e, GF_EINVAL, "ledger: job id '%.40s...' too long",
			   job);
		return NULL;
	}
	struct gf_le *le = grow(l);
	memcpy(le->job, job, strlen(job) + 1);
	le->replica = replica;
	le->attempt = attempt;
	le->st = GF_LE_RUNNING;
	return le;
}

int gf__ledger_done(struct gf_ledger *l, struct gf_le *le, uint64_t gen,
		    struct gf_err *e)
{
	struct gf_le next = *le;
	next.st = GF_LE_DONE;
	next.done_gen = gen;
	int rc = write_entry(l, &next, e);
	if (rc == 0)
		*le = next;
	return rc;
}

void gf__ledger_remove(struct gf_ledger *l, struct gf_le *le)
{
	char path[GF_WORKER_PATH_MAX + 64];
	/* the name fits: init checked the directory, a job id is short */
	if (file_of(l, le->job, le->replica, path, sizeof(path)) == 0 &&
	    unlink(path) != 0 && errno != ENOENT)
		gf_log(GF_LOG_WARN, "join", "cannot remove '%s': %s", path,
		       gf_strerror(-errno));
	*le = l->v[--l->n];
}
