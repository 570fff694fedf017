/*
 * samples.c - the metric samples `gpufleet autoscale recommend` replays
 * (a CSV `t_s,value`), and the replay itself over an HPA or a KEDA
 * ScaledObject (replicas ready at once: status = ready = spec).
 *
 * Every line is checked before anything is decided: a file with one bad
 * line gives that line's FILE:LINE error and no decisions.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "autoscale/autoscale.h"
#include "util/file.h"
#include "util/fmt.h"
#include "util/mem.h"
#include "util/str.h"

#define LINE_MAX_LEN 4096

/* A finite decimal number of seconds, as milliseconds. */
static bool parse_time(const char *s, int64_t *ms)
{
	char *end;
	if (!*s)
		return false;
	errno = 0;
	double v = strtod(s, &end);
	if (*end || errno || !isfinite(v) || fabs(v) > 9e12)
		return false;
	*ms = llround(v * 1000.0);
	return true;
}

static int grow(struct gf_as_samples *out, size_t *alloc, bool more)
{
	if (out->n < *alloc)
		return 0;
	if (out->n >= GF_AS_SAMPLES_MAX)
		return GF_ETOOBIG;
	*alloc = *alloc ? 2 * *alloc : 256;
	out->s = gf_reallocarray(out->s, *alloc, sizeof(*out->s));
	if (more)
		out->more =
			gf_reallocarray(out->more, *alloc, sizeof(*out->more));
	out->t_text =
		gf_reallocarray(out->t_text, *alloc, sizeof(*out->t_text));
	return 0;
}

/* "FILE:LINE: field 'F': 'TEXT' WHY" */
static int bad_line(struct gf_err *e, const char *path, long line,
		    const char *field, const char *text, const char *why)
{
	return gf_err_set(e, GF_EPARSE, "%s:%ld: field '%s': '%.40s' %s", path,
			  line, field, text, why);
}

/* One data line into out (t and value checked). */
static int sample_line(const char *path, long line, char *s,
		       struct gf_as_samples *out, struct gf_err *e)
{
	char *comma = strchr(s, ',');
	if (!comma || strchr(comma + 1, ','))
		return gf_err_set(e, GF_EPARSE,
				  "%s:%ld: expected two fields 't_s,value', "
				  "got '%.40s'",
				  path, line, s);
	*comma = '\0';
	char *ts = gf_str_trim(s), *vs = gf_str_trim(comma + 1);
	int64_t ms, milli;
	if (!parse_time(ts, &ms))
		return bad_line(e, path, line, "t_s", ts,
				"is not a number of seconds");
	if (strlen(ts) >= sizeof(out->t_text[0]))
		return bad_line(e, path, line, "t_s", ts, "is too long");
	if (out->n > 0 && ms <= out->s[out->n - 1].t_ms)
		return gf_err_set(e, GF_EPARSE,
				  "%s:%ld: field 't_s': '%s' is not after the "
				  "previous sample's '%s' (samples must be in "
				  "time order, one per sync)",
				  path, line, ts, out->t_text[out->n - 1]);
	int rc = gf_quantity_milli(vs, &milli);
	if (rc == GF_ERANGE)
		return bad_line(e, path, line, "value", vs,
				"is negative or too large");
	if (rc)
		return bad_line(e, path, line, "value", vs,
				"is not a number (NaN and infinities are "
				"refused)");
	out->s[out->n] = (struct gf_hpa_sample){ ms, milli, true };
	memcpy(out->t_text[out->n], ts, strlen(ts) + 1); /* length checked */
	out->n++;
	return 0;
}

/* The columns of an extended header. */
enum col_kind {
	COL_T,
	COL_VALUE,
	COL_READY,
	COL_UNREADY,
	COL_MISSING,
	COL_STATUS
};

#define COLS_MAX (GF_HPA_METRICS_MAX + 5)

struct cols {
	int n; /* 0: the legacy `t_s,value` */
	enum col_kind kind[COLS_MAX];
	int metric[COLS_MAX]; /* COL_VALUE: 0 for value, 1 for value2 */
	char name[COLS_MAX][16];
};

/* "FILE:LINE: column N 'NAME': 'TEXT' WHY" */
static int bad_col(struct gf_err *e, const char *path, long line,
		   const struct cols *c, int i, const char *text,
		   const char *why)
{
	return gf_err_set(e, GF_EPARSE, "%s:%ld: column %d '%s': '%.40s' %s",
			  path, line, i + 1, c->name[i], text, why);
}

/* One header name into column i; 0 or an error. */
static int header_col(const char *path, long line, const char *h, int i,
		      struct cols *c, unsigned *seen, struct gf_err *e)
{
	static const char *const counts[] = { "ready", "unready", "missing",
					      "status" };
	int bit = -1;
	if (i == 0 && !strcmp(h, "t_s")) {
		c->kind[i] = COL_T;
		bit = 0;
	} else if (!strcmp(h, "value")) {
		c->kind[i] = COL_VALUE;
		c->metric[i] = 0;
		bit = 1;
	} else if (!strncmp(h, "value", 5) && h[5] >= '2' &&
		   h[5] < '1' + GF_HPA_METRICS_MAX && !h[6]) {
		c->kind[i] = COL_VALUE;
		c->metric[i] = h[5] - '1';
		bit = 1 + c->metric[i];
	}
	for (int k = 0; bit < 0 && k < 4; k++)
		if (!strcmp(h, counts[k])) {
			c->kind[i] = (enum col_kind)(COL_READY + k);
			bit = 1 + GF_HPA_METRICS_MAX + k;
		}
	if (bit < 0)
		return gf_err_set(e, GF_EPARSE,
				  "%s:%ld: header column %d '%.40s': expected "
				  "t_s first, then value, value2 .. value%d, "
				  "ready, unready, missing or status",
				  path, line, i + 1, h, GF_HPA_METRICS_MAX);
	if (*seen & (1u << bit))
		return gf_err_set(e, GF_EPARSE,
				  "%s:%ld: header column %d '%.40s': named "
				  "twice",
				  path, line, i + 1, h);
	*seen |= 1u << bit;
	gf_note(c->name[i], sizeof(c->name[i]), "%s", h);
	return 0;
}

/* A header line s: the legacy `t_s,value` leaves c->n 0. */
static int read_header(const char *path, long line, const char *s,
		       struct cols *c, struct gf_as_samples *out,
		       struct gf_err *e)
{
	char h[LINE_MAX_LEN + 2];
	memcpy(h, s, strlen(s) + 1); /* as long */
	unsigned seen = 0;
	int n = 0, rc = 0;
	memset(c, 0, sizeof(*c));
	for (char *p = h, *next; p && rc == 0; p = next, n++) {
		next = strchr(p, ',');
		if (next)
			*next++ = '\0';
		if (n == COLS_MAX)
			return gf_err_set(e, GF_EPARSE,
					  "%s:%ld: header: more than %d "
					  "columns",
					  path, line, COLS_MAX);
		rc = header_col(path, line, gf_str_trim(p), n, c, &seen, e);
	}
	if (rc)
		return rc;
	if (!(seen & 2u))
		return gf_err_set(e, GF_EPARSE,
				  "%s:%ld: header '%.40s': no column 'value'",
				  path, line, s);
	int nv = 0;
	while (nv < GF_HPA_METRICS_MAX && (seen & (1u << (1 + nv))))
		nv++;
	for (int k = nv; k < GF_HPA_METRICS_MAX; k++)
		if (seen & (1u << (1 + k)))
			return gf_err_set(e, GF_EPARSE,
					  "%s:%ld: header: column 'value%d' "
					  "without 'value%d'",
					  path, line, k + 1, nv + 1);
	out->nvalues = nv;
	if (n == 2 && c->kind[1] == COL_VALUE)
		c->n = 0; /* t_s,value */
	else
		c->n = n;
	return 0;
}

/* A count cell: empty is -1 (not given). */
static bool parse_count(const char *s, int32_t *v)
{
	if (!*s) {
		*v = -1;
		return true;
	}
	char *end;
	errno = 0;
	long long x = strtoll(s, &end, 10);
	if (*end || errno || x < 0 || x > INT32_MAX)
		return false;
	*v = (int32_t)x;
	return true;
}

/* One cell of an extended line into sample i. */
static int ext_cell(const char *path, long line, const struct cols *c, int k,
		    char *v, struct gf_as_samples *out, struct gf_err *e)
{
	struct gf_hpa_sample *s = &out->s[out->n];
	struct gf_hpa_sample_more *m = &out->more[out->n];
	if (c->kind[k] == COL_VALUE) {
		int mi = c->metric[k];
		int64_t milli = 0;
		bool ok = strcmp(v, "-") != 0;
		int rc = ok ? gf_quantity_milli(v, &milli) : 0;
		if (rc == GF_ERANGE)
			return bad_col(e, path, line, c, k, v,
				       "is negative or too large");
		if (rc)
			return bad_col(e, path, line, c, k, v,
				       "is not a number or '-' (unread)");
		if (mi == 0) {
			s->ok = ok;
			s->usage_milli = milli;
		} else {
			m->ok[mi - 1] = ok;
			m->usage_milli[mi - 1] = milli;
		}
		return 0;
	}
	int32_t *dst = c->kind[k] == COL_READY	   ? &m->ready
		       : c->kind[k] == COL_UNREADY ? &m->unready
		       : c->kind[k] == COL_MISSING ? &m->missing
						   : &m->status;
	if (!parse_count(v, dst))
		return bad_col(e, path, line, c, k, v,
			       "is not a count of replicas (0 or more, or "
			       "empty)");
	return 0;
}

/* A data line under an extended header. */
static int ext_line(const char *path, long line, char *s, const struct cols *c,
		    struct gf_as_samples *out, struct gf_err *e)
{
	char *cell[COLS_MAX];
	int n = 0;
	for (char *p = s, *next; p; p = next) {
		next = strchr(p, ',');
		if (next)
			*next++ = '\0';
		if (n == c->n) {
			n++;
			break;
		}
		cell[n++] = gf_str_trim(p);
	}
	if (n != c->n)
		return gf_err_set(e, GF_EPARSE,
				  "%s:%ld: expected %d fields as the header "
				  "names, got %s",
				  path, line, c->n,
				  n > c->n ? "more" : "fewer");
	out->more[out->n] =
		(struct gf_hpa_sample_more){ -1, -1, -1, -1, { false }, { 0 } };
	out->s[out->n] = (struct gf_hpa_sample){ 0, 0, true };
	for (int k = 1; k < n; k++) {
		int rc = ext_cell(path, line, c, k, cell[k], out, e);
		if (rc)
			return rc;
	}
	char ts[64];
	gf_note(ts, sizeof(ts), "%s,0", cell[0]);
	struct gf_hpa_sample keep = out->s[out->n];
	int rc = sample_line(path, line, ts, out, e);
	if (rc == 0)
		out->s[out->n - 1] =
			(struct gf_hpa_sample){ out->s[out->n - 1].t_ms,
						keep.usage_milli, keep.ok };
	return rc;
}

int gf_as_read_samples(const char *path, struct gf_as_samples *out,
		       struct gf_err *e)
{
	memset(out, 0, sizeof(*out));
	FILE *f = gf_file_open(path, "r", 0, e);
	if (!f)
		return e ? e->code : GF_EINVAL;
	char buf[LINE_MAX_LEN + 2];
	long line = 0;
	size_t alloc = 0;
	bool first = true;
	int rc = 0;
	struct cols c = { 0 };
	while (rc == 0 && fgets(buf, sizeof(buf), f)) {
		line++;
		size_t n = strlen(buf);
		if (n > LINE_MAX_LEN && buf[n - 1] != '\n') {
			rc = gf_err_set(e, GF_ETOOBIG,
					"%s:%ld: line longer than %d bytes",
					path, line, LINE_MAX_LEN);
			break;
		}
		char *s = gf_str_trim(buf);
		if (!*s || *s == '#')
			continue;
		if (first) {
			first = false;
			if (strncmp(s, "t_s", 3) == 0) {
				rc = read_header(path, line, s, &c, out, e);
				continue;
			}
		}
		rc = grow(out, &alloc, c.n > 0);
		if (rc) {
			gf_err_set(e, rc, "%s:%ld: more than %d samples", path,
				   line, GF_AS_SAMPLES_MAX);
			break;
		}
		rc = c.n ? ext_line(path, line, s, &c, out, e)
			 : sample_line(path, line, s, out, e);
	}
	if (c.n == 0)
		out->nvalues = 1;
	if (rc == 0 && ferror(f))
		rc = gf_err_set(e, -EIO, "cannot read '%s': %s", path,
				"read error");
	fclose(f);
	if (rc)
		gf_as_samples_release(out);
	return rc;
}

void gf_as_samples_release(struct gf_as_samples *s)
{
	gf_free(s->s);
	gf_free(s->t_text);
	gf_free(s->more);
	s->more = NULL;
	s->n = 0;
}

static int keda_sync(void *k, const struct gf_hpa_input *in,
		     struct gf_hpa_output *out)
{
	return gf_keda_sync(k, in, out);
}

/* KEDA over the samples (in time order, as read). */
static int recommend_keda(const struct gf_as_scaler *scaler, int32_t start,
			  const struct gf_as_samples *s, int32_t *out,
			  struct gf_err *e)
{
	struct gf_keda k;
	int rc = gf_keda_init(&k, &scaler->keda, s->n ? s->s[0].t_ms : 0, e);
	if (rc)
		return rc;
	rc = gf_scale_replay(keda_sync, &k, start, s->s, s->n, out, e);
	gf_keda_release(&k);
	return rc;
}

int gf_as_recommend(const struct gf_as_scaler *scaler, int32_t start,
		    const struct gf_as_samples *s, int32_t *out,
		    struct gf_err *e)
{
	if (start < 0)
		return gf_err_set(e, GF_EINVAL,
				  "start replicas %d: must be zero or more",
				  start);
	int metrics = scaler->kind == GF_AS_KEDA ? 1 : 1 + scaler->hpa.nmore;
	int nv = s->nvalues ? s->nvalues : 1;
	if (nv != metrics)
		return gf_err_set(e, GF_EINVAL,
				  "the samples have %d value column%s, the "
				  "%s has %d metric%s",
				  nv, nv == 1 ? "" : "s",
				  scaler->kind == GF_AS_KEDA ? "ScaledObject"
							     : "HPA",
				  metrics, metrics == 1 ? "" : "s");
	if (scaler->kind == GF_AS_KEDA) {
		if (s->more)
			return gf_err_set(e, GF_EINVAL,
					  "the samples' ready, unready, "
					  "missing and status columns are "
					  "read for an HPA only");
		return recommend_keda(scaler, start, s, out, e);
	}
	return gf_hpa_replay_more(&scaler->hpa, start, s->s, s->more, s->n, out,
				  e);
}
