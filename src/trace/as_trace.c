/*
 * as_trace.c - arrival traces for `simulate autoscale`: the Azure LLM
 * inference trace 2023 (Splitwise; TIMESTAMP, ContextTokens,
 * GeneratedTokens), a simple t,tokens_in,tokens_out CSV, and a seeded
 * synthetic day.  Times become seconds after the first request; a time
 * that goes back is an error naming the line (the simulator replays in
 * order and a shuffled trace would be silently wrong).
 */
#include "trace/as_trace.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gpufleet/rng.h>

#include "util/clock.h"
#include "util/csv.h"
#include "util/mem.h"

static bool digits(const char *s, int n, int *out)
{
	int v = 0;
	for (int i = 0; i < n; i++) {
		if (!isdigit((unsigned char)s[i]))
			return false;
		v = v * 10 + (s[i] - '0');
	}
	*out = v;
	return true;
}

/* "YYYY-MM-DD hh:mm:ss[.fffffff]" (or 'T' between) as UTC seconds. */
static bool parse_timestamp(const char *s, double *out)
{
	int y, mo, d, h, mi, se;
	if (strlen(s) < 19 || !digits(s, 4, &y) || s[4] != '-' ||
	    !digits(s + 5, 2, &mo) || s[7] != '-' || !digits(s + 8, 2, &d) ||
	    (s[10] != ' ' && s[10] != 'T') || !digits(s + 11, 2, &h) ||
	    s[13] != ':' || !digits(s + 14, 2, &mi) || s[16] != ':' ||
	    !digits(s + 17, 2, &se))
		return false;
	if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 ||
	    se > 60)
		return false;
	double frac = 0, scale = 0.1;
	const char *p = s + 19;
	if (*p == '.') {
		for (p++; isdigit((unsigned char)*p); p++, scale /= 10)
			frac += (*p - '0') * scale;
	}
	if (*p && strcmp(p, "Z") != 0)
		return false;
	int64_t days = gf_days_from_civil(y, (int)mo, (int)d);
	*out = (double)(days * 86400 + h * 3600 + mi * 60 + se) + frac;
	return true;
}

static bool parse_tokens(const char *s, uint32_t *out)
{
	char *end;
	errno = 0;
	unsigned long v = strtoul(s, &end, 10);
	if (!*s || *end || errno || v > 100000000UL || *s == '-')
		return false;
	*out = (uint32_t)v;
	return true;
}

static bool parse_seconds(const char *s, double *out)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (!*s || *end || errno || !isfinite(v))
		return false;
	*out = v;
	return true;
}

static int push(struct gf_as_trace *t, size_t *alloc, const struct gf_as_req *r)
{
	if (t->n == *alloc) {
		if (t->n >= GF_AST_MAX_REQUESTS)
			return GF_ETOOBIG;
		*alloc = *alloc ? 2 * *alloc : 4096;
		t->r = gf_reallocarray(t->r, *alloc, sizeof(*t->r));
	}
	t->r[t->n++] = *r;
	return 0;
}

struct cols {
	int t, in, out;
	bool azure;
};

static int find_cols(const struct gf_csv *c, const char *path, struct cols *k,
		     struct gf_err *e)
{
	k->azure = gf_csv_column(c, "TIMESTAMP") >= 0;
	k->t = gf_csv_column(c, k->azure ? "TIMESTAMP" : "t");
	k->in = gf_csv_column(c, k->azure ? "ContextTokens" : "tokens_in");
	k->out = gf_csv_column(c, k->azure ? "GeneratedTokens" : "tokens_out");
	if (k->t < 0 || k->in < 0 || k->out < 0)
		return gf_err_set(e, GF_EPARSE,
				  "%s:1: expected the columns TIMESTAMP, "
				  "ContextTokens, GeneratedTokens (Azure LLM "
				  "trace) or t, tokens_in, tokens_out",
				  path);
	return 0;
}

static int row(const struct gf_csv *c, const char *path, const struct cols *k,
	       struct gf_as_req *r, double *abs_t, struct gf_err *e)
{
	const char *ts = gf_csv_get(c, k->t);
	bool ok = k->azure ? parse_timestamp(ts, abs_t)
			   : parse_seconds(ts, abs_t);
	if (!ok)
		return gf_err_set(e, GF_EPARSE,
				  "%s:%ld: field '%s': '%.40s' is not %s", path,
				  c->line, k->azure ? "TIMESTAMP" : "t", ts,
				  k->azure ? "a timestamp YYYY-MM-DD "
					     "hh:mm:ss.f"
					   : "a number of seconds");
	const char *in = gf_csv_get(c, k->in), *out = gf_csv_get(c, k->out);
	if (!parse_tokens(in, &r->in))
		return gf_err_set(e, GF_EPARSE,
				  "%s:%ld: field '%s': '%.40s' is not a token "
				  "count",
				  path, c->line,
				  k->azure ? "ContextTokens" : "tokens_in", in);
	if (!parse_tokens(out, &r->out))
		return gf_err_set(e, GF_EPARSE,
				  "%s:%ld: field '%s': '%.40s' is not a token "
				  "count",
				  path, c->line,
				  k->azure ? "GeneratedTokens" : "tokens_out",
				  out);
	return 0;
}

int gf_as_trace_read(const char *path, struct gf_as_trace *t, struct gf_err *e)
{
	memset(t, 0, sizeof(*t));
	struct gf_csv c;
	int rc = gf_csv_open(&c, path, e);
	if (rc)
		return rc;
	struct cols k;
	rc = find_cols(&c, path, &k, e);
	size_t alloc = 0;
	double t0 = 0, prev = -INFINITY;
	while (rc == 0) {
		int got = gf_csv_next(&c, e);
		if (got <= 0) {
			rc = got;
			break;
		}
		struct gf_as_req r;
		double abs_t = 0;
		rc = row(&c, path, &k, &r, &abs_t, e);
		if (rc)
			break;
		if (abs_t < prev) {
			rc = gf_err_set(
				e, GF_EPARSE,
				"%s:%ld: field '%s': '%.40s' is before "
				"the previous request's (the trace must "
				"be in time order)",
				path, c.line, k.azure ? "TIMESTAMP" : "t",
				gf_csv_get(&c, k.t));
			break;
		}
		if (t->n == 0)
			t0 = abs_t;
		prev = abs_t;
		r.t = abs_t - t0;
		if ((rc = push(t, &alloc, &r)) != 0) {
			gf_err_set(e, rc, "%s:%ld: more than %d requests", path,
				   c.line, GF_AST_MAX_REQUESTS);
			break;
		}
	}
	gf_csv_close(&c);
	if (rc == 0 && t->n == 0)
		rc = gf_err_set(e, GF_EPARSE, "%s: no requests", path);
	if (rc < 0) {
		gf_as_trace_release(t);
		return rc;
	}
	return 0;
}

static double normal(struct gf_rng *g)
{
	double u1 = gf_rng_double(g), u2 = gf_rng_double(g);
	if (u1 < 1e-300)
		u1 = 1e-300;
	return sqrt(-2.0 * log(u1)) * cos(2.0 * M_PI * u2);
}

static uint32_t lognormal(struct gf_rng *g, double median, double mean,
			  uint32_t cap)
{
	double mu = log(median);
	double sigma = sqrt(2.0 * (log(mean) - mu));
	double v = exp(mu + sigma * normal(g));
	if (v < 1)
		v = 1;
	return v > cap ? cap : (uint32_t)v;
}

void gf_as_trace_synth(struct gf_as_trace *t, size_t n, double hours,
		       uint64_t seed)
{
	struct gf_rng g;
	gf_rng_seed(&g, seed);
	t->n = n;
	t->r = gf_calloc(n ? n : 1, sizeof(*t->r));
	double span = hours * 3600.0;
	double mean = (double)n / span, now = 0;
	for (size_t i = 0; i < n; i++) {
		/* rate: the mean, half again at the day's peak */
		double rate =
			mean *
			(1.0 + 0.5 * sin(2.0 * M_PI * now / span - M_PI / 2.0));
		double u = gf_rng_double(&g);
		now += -log(1.0 - u) / rate;
		t->r[i].t = now;
		t->r[i].in = lognormal(&g, 1020, 1155, 16384);
		t->r[i].out = lognormal(&g, 129, 211, 4096);
	}
}

void gf_as_trace_window(const struct gf_as_trace *t, double from, double to,
			struct gf_as_trace *w)
{
	size_t a = 0, b;
	while (a < t->n && t->r[a].t < from)
		a++;
	for (b = a; b < t->n && t->r[b].t < to; b++)
		;
	w->n = b - a;
	w->r = w->n ? gf_calloc(w->n, sizeof(*w->r)) : NULL;
	for (size_t i = 0; i < w->n; i++) {
		w->r[i] = t->r[a + i];
		w->r[i].t -= from;
	}
}

void gf_as_trace_release(struct gf_as_trace *t)
{
	gf_free(t->r);
	t->n = 0;
}
