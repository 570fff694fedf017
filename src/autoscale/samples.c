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

static int grow(struct gf_as_samples *out, size_t *alloc)
{
	if (out->n < *alloc)
		return 0;
	if (out->n >= GF_AS_SAMPLES_MAX)
		return GF_ETOOBIG;
	*alloc = *alloc ? 2 * *alloc : 256;
	out->s = gf_reallocarray(out->s, *alloc, sizeof(*out->s));
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
			char *c = strchr(s, ',');
			if (c && strncmp(s, "t_s", 3) == 0) {
				char h[LINE_MAX_LEN + 2];
				memcpy(h, s, strlen(s) + 1); /* as long */
				char *hc = strchr(h, ',');
				*hc = '\0';
				if (strcmp(gf_str_trim(h), "t_s") ||
				    strcmp(gf_str_trim(hc + 1), "value"))
					rc = gf_err_set(
						e, GF_EPARSE,
						"%s:%ld: header '%.40s':"
						" expected 't_s,value'",
						path, line, s);
				continue;
			}
		}
		rc = grow(out, &alloc);
		if (rc) {
			gf_err_set(e, rc, "%s:%ld: more than %d samples", path,
				   line, GF_AS_SAMPLES_MAX);
			break;
		}
		rc = sample_line(path, line, s, out, e);
	}
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
	if (scaler->kind == GF_AS_KEDA)
		return recommend_keda(scaler, start, s, out, e);
	return gf_hpa_replay(&scaler->hpa, start, s->s, s->n, out, e);
}
