/*
 * recorded.c - the recorded samples file (format in recorded.h).
 */
#include "telemetry/recorded.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util/csv.h"
#include "util/mem.h"

enum { C_T, C_GPU, C_GI, C_UTIL, C_FB_USED, C_FB_TOTAL, C_RX, C_PROCS, NREQ };

static const char *const required[NREQ] = { "t_s",	   "gpu",
					    "gi",	   "util",
					    "fb_used_mib", "fb_total_mib",
					    "pcie_rx_bps", "procs" };

/* Optional activity columns, DCGM ratios, in gf_diag_signal order. */
static const char *const optional[3] = {
	"DCGM_FI_PROF_GR_ENGINE_ACTIVE",
	"DCGM_FI_PROF_SM_ACTIVE",
	"DCGM_FI_PROF_PIPE_TENSOR_ACTIVE",
};

/* What a field may hold: the least value, the most, integers only. */
static const struct {
	double min, max;
	bool integer;
} range[NREQ] = {
	[C_T] = { 0, 1e10, false },	 [C_GPU] = { 0, 1e5, true },
	[C_GI] = { -1, 1e5, true },	 [C_UTIL] = { -1, 100, false },
	[C_FB_USED] = { 0, 1e9, false }, [C_FB_TOTAL] = { 0, 1e9, false },
	[C_RX] = { -1, 1e15, false },	 [C_PROCS] = { -1, 1e6, true },
};

static int field(struct gf_csv *c, int col, const char *name, double min,
		 double max, bool integer, double *v, struct gf_err *e)
{
	const char *f = gf_csv_get(c, col);
	char *end;
	*v = strtod(f, &end);
	if (*f == '\0' || *end != '\0' || !isfinite(*v))
		return gf_err_set(e, GF_EPARSE,
				  "%s:%ld: field '%s': expected a number, got "
				  "'%.30s'",
				  c->path, c->line, name, f);
	if (integer && *v != floor(*v))
		return gf_err_set(e, GF_EPARSE,
				  "%s:%ld: field '%s': expected an integer, "
				  "got '%.30s'",
				  c->path, c->line, name, f);
	/* -1 is "not recorded" wherever it is allowed at all */
	if ((*v < min || *v > max) && !(min < 0 && *v == -1))
		return gf_err_set(e, GF_EPARSE,
				  "%s:%ld: field '%s': %.30s is out of range "
				  "(%g to %g%s)",
				  c->path, c->line, name, f, min < 0 ? 0 : min,
				  max,
				  min < 0 ? ", or -1 when not recorded" : "");
	return 0;
}

static int add_point(struct gf_recording *r, const struct gf_csv *c, int gpu,
		     int gi, const struct gf_diag_point *p, struct gf_err *e)
{
	int k;
	for (k = 0; k < r->n; k++)
		if (r->s[k].gpu == gpu && r->s[k].gi == gi)
			break;
	if (k == r->n) {
		if (r->n >= GF_REC_MAX_SERIES)
			return gf_err_set(e, GF_ETOOBIG,
					  "%s:%ld: more than %d series",
					  c->path, c->line, GF_REC_MAX_SERIES);
		memset(&r->s[k], 0, sizeof(r->s[k]));
		r->s[k].gpu = gpu;
		r->s[k].gi = gi;
		r->n++;
	}
	struct gf_rec_series *x = &r->s[k];
	if (x->n >= GF_REC_MAX_POINTS)
		return gf_err_set(e, GF_ETOOBIG,
				  "%s:%ld: more than %d samples in a series",
				  c->path, c->line, GF_REC_MAX_POINTS);
	if (x->n > 0 && p->t_ms < x->p[x->n - 1].t_ms)
		return gf_err_set(e, GF_EPARSE,
				  "%s:%ld: field 't_s': time goes backwards "
				  "for GPU %d%s",
				  c->path, c->line, gpu,
				  gi >= 0 ? "'s instance" : "");
	if (x->n == x->cap) {
		x->cap = x->cap ? x->cap * 2 : 64;
		x->p = gf_reallocarray(x->p, (size_t)x->cap, sizeof(*x->p));
	}
	x->p[x->n++] = *p;
	return 0;
}

static int read_rows(struct gf_csv *c, struct gf_recording *r, struct gf_err *e)
{
	int col[NREQ], opt[3];
	for (int i = 0; i < NREQ; i++)
		if ((col[i] = gf_csv_column(c, required[i])) < 0)
			return gf_err_set(e, GF_EPARSE,
					  "%s: missing required column '%s'",
					  c->path, required[i]);
	for (int i = 0; i < 3; i++)
		opt[i] = gf_csv_column(c, optional[i]);
	int rc;
	while ((rc = gf_csv_next(c, e)) > 0) {
		double v[NREQ];
		for (int i = 0; i < NREQ; i++)
			if ((rc = field(c, col[i], required[i], range[i].min,
					range[i].max, range[i].integer, &v[i],
					e)) < 0)
				return rc;
		struct gf_diag_point p;
		gf_diag_point_init(&p, (int64_t)llround(v[C_T] * 1e3));
		p.act[GF_DIAG_UTIL] = v[C_UTIL];
		for (int i = 0; i < 3; i++) {
			double a;
			if (opt[i] < 0)
				continue;
			if ((rc = field(c, opt[i], optional[i], -1, 1, false,
					&a, e)) < 0)
				return rc;
			p.act[GF_DIAG_GR + i] = a < 0 ? -1 : 100 * a;
		}
		p.fb_used = v[C_FB_USED];
		p.fb_total = v[C_FB_TOTAL];
		p.pcie_rx = v[C_RX];
		p.nproc = (int)v[C_PROCS];
		if ((rc = add_point(r, c, (int)v[C_GPU], (int)v[C_GI], &p, e)) <
		    0)
			return rc;
	}
	if (rc == 0 && r->n == 0)
		rc = gf_err_set(e, GF_EPARSE, "%s: no samples after the header",
				c->path);
	return rc;
}

int gf_recording_read(const char *path, struct gf_recording *r,
		      struct gf_err *e)
{
	struct gf_csv c;
	r->n = 0;
	int rc = gf_csv_open(&c, path, e);
	if (rc == 0)
		rc = read_rows(&c, r, e);
	gf_csv_close(&c); /* also when its header was bad */
	if (rc < 0)
		gf_recording_release(r);
	return rc < 0 ? rc : 0;
}

void gf_recording_release(struct gf_recording *r)
{
	for (int k = 0; k < r->n; k++)
		gf_free(r->s[k].p);
	r->n = 0;
}

int gf_recording_judge(const struct gf_recording *r,
		       const struct gf_diag_opts *o,
		       struct gf_diag_verdict **out)
{
	struct gf_diag_verdict *v = gf_calloc((size_t)r->n + 1, sizeof(*v));
	for (int k = 0; k < r->n; k++) {
		const struct gf_rec_series *s = &r->s[k];
		v[k].gpu = s->gpu;
		v[k].gi = s->gi;
		gf_diagnose(s->p, s->n, s->gi >= 0, o, &v[k].r);
	}
	*out = v;
	return r->n;
}
