/*
 * csv.h - a line-at-a-time reader for simple CSV (comma-separated, no
 * quoting, CRLF or LF), with a capped line length, a header map, and the
 * current line number for error messages.
 */
#ifndef GF_UTIL_CSV_H
#define GF_UTIL_CSV_H

#include <stdio.h>

#define GF_CSV_LINE_MAX	 4096
#define GF_CSV_FIELD_MAX 256

struct gf_csv {
	FILE *f;
	const char *path;
	long line; /* 1-based number of the last line read */
	char buf[GF_CSV_LINE_MAX + 2];
	char *field[GF_CSV_FIELD_MAX];
	int nfield;
	char header[GF_CSV_LINE_MAX + 2];
	char *hfield[GF_CSV_FIELD_MAX];
	int nheader;
};

/*
 * Open path and read its header line.  Errors (e->msg names the file):
 * -errno when unreadable, GF_EPARSE when empty, GF_ETOOBIG for a line
 * over GF_CSV_LINE_MAX or more than GF_CSV_FIELD_MAX fields.
 */
struct gf_err;
int gf_csv_open(struct gf_csv *c, const char *path, struct gf_err *e);
void gf_csv_close(struct gf_csv *c);
/* Column index of a header name, or -1. */
int gf_csv_column(const struct gf_csv *c, const char *name);
/* Next data row: 1 read, 0 end of file, < 0 error (e set).  Blank lines
 * are skipped. */
int gf_csv_next(struct gf_csv *c, struct gf_err *e);
/* Field i of the current row, "" when the row is shorter. */
const char *gf_csv_get(const struct gf_csv *c, int i);
/* Field i of the current row as an integer in lo..hi; errors name
 * path:line and the field (GF_EPARSE not an integer, GF_ERANGE out of
 * range). */
int gf_csv_int(const struct gf_csv *c, int i, const char *name, long long lo,
	       long long hi, long long *out, struct gf_err *e);

#endif
