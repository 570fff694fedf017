/*
 * csv.h - a line-at-a-time reader for simple CSV (comma-separated, no
 * quoting, CRLF or LF), with a capped line length, a header map, and the
 * current line number for error messages.
 */
#ifndef GF_UTIL_CSV_H
#define GF_UTIL_CSV_H

#include <stdbool.h>
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
/* Column index of a header name, or GF_EPARSE ("PATH: missing
 * required column 'NAME'"). */
int gf_csv_require(const struct gf_csv *c, const char *name, struct gf_err *e);
/* The columns of names (NULL-ended, all required) into cols: 0, or the
 * first one missing as gf_csv_require says. */
int gf_csv_columns(const struct gf_csv *c, const char *const *names, int *cols,
		   struct gf_err *e);
/* gf_csv_open, then gf_csv_columns; c closed on any error. */
int gf_csv_open_cols(struct gf_csv *c, const char *path,
		     const char *const *names, int *cols, struct gf_err *e);
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
/* Field i as a number (any unit) in lo..hi, errors as gf_csv_int's;
 * "" and "NaN" are absent (*present false, *out 0) when absent_ok, else
 * an error.  present may be NULL unless absent_ok. */
int gf_csv_num(const struct gf_csv *c, int i, const char *name, double lo,
	       double hi, bool absent_ok, double *out, bool *present,
	       struct gf_err *e);

#endif
