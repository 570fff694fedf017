/*
 * file.c - input files opened and read with one set of checks and one
 * wording for their failures.
 */
#include "util/file.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gpufleet/err.h>

#include "util/log.h"
#include "util/mem.h"

static const char *kind(mode_t m)
{
	if (S_ISDIR(m))
		return "is a directory";
	if (S_ISCHR(m) || S_ISBLK(m))
		return "is a device";
	if (S_ISFIFO(m) || S_ISSOCK(m))
		return "is a pipe or socket";
	return "not a regular file";
}

FILE *gf_file_open(const char *path, const char *mode, size_t cap,
		   struct gf_err *e)
{
	FILE *f = fopen(path, mode);
	if (f == NULL) {
		int en = errno;
		gf_err_set(e, -en, "cannot read '%s': %s", path,
			   gf_strerror(-en));
		return NULL;
	}
	struct stat st;
	if (fstat(fileno(f), &st) != 0) {
		int en = errno;
		fclose(f);
		gf_err_set(e, -en, "cannot read '%s': %s", path,
			   gf_strerror(-en));
		return NULL;
	}
	if (!S_ISREG(st.st_mode)) {
		fclose(f);
		gf_err_set(e, GF_EINVAL, "cannot read '%s': %s", path,
			   kind(st.st_mode));
		return NULL;
	}
	if (cap > 0 && (unsigned long long)st.st_size > cap) {
		fclose(f);
		gf_err_set(e, GF_ETOOBIG,
			   "cannot read '%s': %lld bytes, more than the "
			   "limit of %zu",
			   path, (long long)st.st_size, cap);
		return NULL;
	}
	gf_log(GF_LOG_DEBUG, "file", "reading '%s' (%lld bytes)", path,
	       (long long)st.st_size);
	return f;
}

int gf_file_read(const char *path, size_t cap, char **out, size_t *len,
		 struct gf_err *e)
{
	FILE *f = gf_file_open(path, "rb", cap, e);
	if (f == NULL)
		return e ? e->code : GF_EINVAL;
	struct stat st;
	if (fstat(fileno(f), &st) != 0) {
		fclose(f);
		return gf_err_set(e, -EIO, "cannot read '%s': %s", path,
				  gf_strerror(-EIO));
	}
	size_t n = (size_t)st.st_size;
	char *buf = gf_malloc(n + 1);
	size_t got = fread(buf, 1, n, f);
	/* a file that grew while read: one byte more tells */
	int grew = got == n && fgetc(f) != EOF;
	int bad = ferror(f);
	fclose(f);
	if (bad || got != n || grew) {
		gf_free(buf);
		return gf_err_set(e, -EIO, "cannot read '%s': %s", path,
				  grew ? "it changed while being read"
				       : gf_strerror(-EIO));
	}
	buf[n] = '\0';
	*out = buf;
	*len = n;
	return 0;
}

int gf_mkdir_p(const char *path, unsigned mode, struct gf_err *e)
{
	char p[PATH_MAX];
	size_t len = strlen(path);
	if (len == 0 || len >= sizeof(p))
		return gf_err_set(e, GF_ETOOBIG,
				  "directory path '%.64s' is empty or too long",
				  path);
	memcpy(p, path, len + 1);
	for (size_t i = 1; i <= len; i++) {
		if (p[i] != '/' && p[i] != '\0')
			continue;
		char c = p[i];
		p[i] = '\0';
		if (mkdir(p, (mode_t)mode) != 0 && errno != EEXIST) {
			int rc = -errno;
			return gf_err_set(e, rc, "cannot create '%s': %s", p,
					  gf_strerror(rc));
		}
		p[i] = c;
	}
	struct stat st;
	if (stat(path, &st) != 0 || !S_ISDIR(st.st_mode))
		return gf_err_set(e, GF_EINVAL, "'%s' is not a directory",
				  path);
	return 0;
}

int gf_file_write_atomic(const char *path, const void *data, size_t len,
			 struct gf_err *e)
{
	char tmp[PATH_MAX];
	if ((size_t)snprintf(tmp, sizeof(tmp), "%s.tmp.%ld", path,
			     (long)getpid()) >= sizeof(tmp))
		return gf_err_set(e, GF_ETOOBIG, "cannot write '%.64s...': %s",
				  path, "the path is too long");
	int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
	if (fd < 0) {
		int rc = -errno;
		return gf_err_set(e, rc, "cannot write '%s': %s", path,
				  gf_strerror(rc));
	}
	int rc = 0;
	const char *p = data;
	while (rc == 0 && len > 0) {
		ssize_t n = write(fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			rc = n < 0 ? -errno : -EIO;
		else {
			p += n;
			len -= (size_t)n;
		}
	}
	if (close(fd) != 0 && rc == 0)
		rc = -errno;
	if (rc == 0 && rename(tmp, path) != 0)
		rc = -errno;
	if (rc) {
		unlink(tmp);
		return gf_err_set(e, rc, "cannot write '%s': %s", path,
				  gf_strerror(rc));
	}
	return 0;
}
