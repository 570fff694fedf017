/*
 * csv.c - simple CSV rows.  A row longer than the cap is an error, never
 * silently split; so is a row with more fields than the cap.
 */
#include "util/csv.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <gpufleet/err.h>

#include "util/file.h"

static int read_line(struct gf_csv *c, char *dst, struct gf_err *e)
{
	if (fgets(dst, GF_CSV_LINE_MAX + 2, c->f) == NULL)
		return ferror(c->f) ? gf_err_set(e, -EIO, "cannot read '%s'",
						 c->path)
				    : 0;
	c->line++;
	size_t len = strlen(dst);
	if (len > 0 && dst[len - 1] == '\n')
		dst[--len] = '\0';
	else if (!feof(c->f))
		return gf_err_set(e, GF_ETOOBIG,
				  "%s:%ld: line longer than %d bytes", c->path,
				  c->line, GF_CSV_LINE_MAX);
	if (len > 0 && dst[len - 1] == '\r')
		dst[--len] = '\0';
	return 1;
}

static int split(struct gf_csv *c, char *s, char **out, int *n,
		 struct gf_err *e)
{
	*n = 0;
	for (;;) {
		if (*n >= GF_CSV_FIELD_MAX)
			return gf_err_set(e, GF_ETOOBIG,
					  "%s:%ld: more than %d fields",
					  c->path, c->line, GF_CSV_FIELD_MAX);
		out[(*n)++] = s;
		char *comma = strchr(s, ',');
		if (comma == NULL)
			return 0;
		*comma = '\0';
		s = comma + 1;
	}
}

int gf_csv_open(struct gf_csv *c, const char *path, struct gf_err *e)
{
	memset(c, 0, sizeof(*c));
	c->path = path;
	c->f = gf_file_open(path, "r", 0, e);
	if (c->f == NULL)
		return e ? e->code : GF_EINVAL;
	int rc = read_line(c, c->header, e);
	if (rc == 0)
		rc = gf_err_set(e, GF_EPARSE, "%s: empty file (no header)",
				path);
	if (rc < 0) {
		gf_csv_close(c);
		return rc;
	}
	return split(c, c->header, c->hfield, &c->nheader, e);
}

void gf_csv_close(struct gf_csv *c)
{
	if (c->f)
		fclose(c->f);
	c->f = NULL;
}

int gf_csv_column(const struct gf_csv *c, const char *name)
{
	for (int i = 0; i < c->nheader; i++)
		if (strcmp(c->hfield[i], name) == 0)
			return i;
	return -1;
}

int gf_csv_next(struct gf_csv *c, struct gf_err *e)
{
	for (;;) {
		int rc = read_line(c, c->buf, e);
		if (rc <= 0)
			return rc;
		if (c->buf[0] == '\0')
			continue;
		rc = split(c, c->buf, c->field, &c->nfield, e);
		return rc < 0 ? rc : 1;
	}
}

const char *gf_csv_get(const struct gf_csv *c, int i)
{
	return i >= 0 && i < c->nfield ? c->field[i] : "";
}

/* GF_ERANGE: "PATH:LINE: field 'NAME': " and what fmt says. */
static int out_of_range(const struct gf_csv *c, const char *name,
			struct gf_err *e, const char *fmt, va_list ap)
	__attribute__((format(printf, 4, 0)));
static int out_of_range(const struct gf_csv *c, const char *name,
			struct gf_err *e, const char *fmt, va_list ap)
{
	char range[128];
	vsnprintf(range, sizeof(range), fmt, ap);
	return gf_err_set(e, GF_ERANGE, "%s:%ld: field '%s': %s", c->path,
			  c->line, name, range);
}

/* The verdict on field name of the current row, text s: not parsed
 * (GF_EPARSE "PATH:LINE: field 'NAME': expected WHAT, got 'S'"), out of
 * range (GF_ERANGE, what fmt says), or 0. */
static int verdict(const struct gf_csv *c, const char *name, const char *s,
		   bool parsed, const char *what, bool in_range,
		   struct gf_err *e, const char *fmt, ...)
	__attribute__((format(printf, 8, 9)));
static int verdict(const struct gf_csv *c, const char *name, const char *s,
		   bool parsed, const char *what, bool in_range,
		   struct gf_err *e, const char *fmt, ...)
{
	if (!parsed)
		return gf_err_set(e, GF_EPARSE,
				  "%s:%ld: field '%s': expected %s, got "
				  "'%.40s'",
				  c->path, c->line, name, what, s);
	if (in_range)
		return 0;
	va_list ap;
	va_start(ap, fmt);
	int rc = out_of_range(c, name, e, fmt, ap);
	va_end(ap);
	return rc;
}

int gf_csv_int(const struct gf_csv *c, int i, const char *name, long long lo,
	       long long hi, long long *out, struct gf_err *e)
{
	const char *s = gf_csv_get(c, i);
	char *end;
	errno = 0;
	long long v = strtoll(s, &end, 10);
	int rc = verdict(c, name, s, *s && !*end && !errno, "an integer",
			 v >= lo && v <= hi, e, "%lld is outside %lld..%lld", v,
			 lo, hi);
	if (rc == 0)
		*out = v;
	return rc;
}

int gf_csv_num(const struct gf_csv *c, int i, const char *name, double lo,
	       double hi, bool absent_ok, double *out, bool *present,
	       struct gf_err *e)
{
	const char *s = gf_csv_get(c, i);
	if (present)
		*present = true;
	if ((*s == '\0' || strcasecmp(s, "nan") == 0) && absent_ok) {
		*present = false;
		*out = 0;
		return 0;
	}
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	int rc = verdict(c, name, s, *s && !*end && !errno && isfinite(v),
			 "a number", v >= lo && v <= hi, e,
			 "%.40s is outside %g..%g", s, lo, hi);
	if (rc == 0)
		*out = v;
	return rc;
}

int gf_csv_require(const struct gf_csv *c, const char *name, struct gf_err *e)
{
	int col = gf_csv_column(c, name);
	if (col < 0)
		return gf_err_set(e, GF_EPARSE,
				  "%s: missing required column '%s'", c->path,
				  name);
	return col;
}

int gf_csv_columns(const struct gf_csv *c, const char *const *names, int *cols,
		   struct gf_err *e)
{
	for (int i = 0; names[i]; i++)
		if ((cols[i] = gf_csv_require(c, names[i], e)) < 0)
			return cols[i];
	return 0;
}

int gf_csv_open_cols(struct gf_csv *c, const char *path,
		     const char *const *names, int *cols, struct gf_err *e)
{
	int rc = gf_csv_open(c, path, e);
	if (rc == 0 && (rc = gf_csv_columns(c, names, cols, e)))
		gf_csv_close(c);
	return rc;
}
