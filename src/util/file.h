/*
 * file.h - opening input files the same way everywhere: a path that is
 * missing, unreadable, a directory or too large gets the same one-line
 * message from every reader ("cannot read 'PATH': CAUSE").
 */
#ifndef GF_UTIL_FILE_H
#define GF_UTIL_FILE_H

#include <stddef.h>
#include <stdio.h>

struct gf_err;

/*
 * Open path for reading (mode "r" or "rb"); refuses anything that is not
 * a regular file (a directory, a device) and, when cap > 0, a file larger
 * than cap bytes.  Returns the stream (caller fcloses) or NULL with e set:
 * -errno, GF_EINVAL (not a regular file) or GF_ETOOBIG.
 */
FILE *gf_file_open(const char *path, const char *mode, size_t cap,
		   struct gf_err *e);

/*
 * Read a whole regular file of at most cap bytes into *out (NUL-terminated,
 * caller frees with gf_free), its length in *len.  0 or a negative code
 * with e set, as gf_file_open.
 */
int gf_file_read(const char *path, size_t cap, char **out, size_t *len,
		 struct gf_err *e);

/*
 * mkdir -p: path and every missing parent, each new one with mode.  0,
 * or -errno ("cannot create 'DIR': CAUSE"), GF_EINVAL (a part that is not
 * a directory), GF_ETOOBIG (an empty path, or one of PATH_MAX or more).
 */
int gf_mkdir_p(const char *path, unsigned mode, struct gf_err *e);

/*
 * Write len bytes of data to path all at once: into PATH.tmp.<pid> in
 * the same directory, then renamed over path, so that path is either as
 * it was or complete (the temporary is removed on failure).  0, or
 * -errno / GF_ETOOBIG with e set ("cannot write 'PATH': CAUSE").
 */
int gf_file_write_atomic(const char *path, const void *data, size_t len,
			 struct gf_err *e);

#endif
