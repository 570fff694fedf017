/*
 * report_read.c - the simulators' JSON read back (fill and replay
 * documents) for the report page (report_html.h).  Every key the writer
 * always writes is required, with its type; a message names the file
 * and the key's path ("policies[2].series[17].alloc").
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "sim/report_html.h"
#include "util/fmt.h"
#include "util/json.h"
#include "util/mem.h"

struct rd {
	const char *file;
	struct gf_err *e;
	int rc; /* first error; later ones are not reported */
};

static const char *type_name(const struct gf_jv *v)
{
	if (v == NULL)
		return "nothing";
	switch (gf_jv_type(v)) {
	case GF_JV_NULL:
		return "null";
	case GF_JV_BOOL:
		return "a boolean";
	case GF_JV_INT:
	case GF_JV_REAL:
		return "a number";
	case GF_JV_STR:
		return "a string";
	case GF_JV_ARR:
		return "an array";
	case GF_JV_OBJ:
		return "an object";
	}
	return "a value";
}

/* "policies[0]" + "wait_s" -> "policies[0].wait_s" */
static void path_of(char *out, size_t size, const char *ctx, const char *key)
{
	/* a path cut short still names the place in a message */
	if (snprintf(out, size, "%s%s%s", ctx, *ctx ? "." : "", key) >=
	    (int)size)
		out[size - 1] = '\0';
}

static bool fail(struct rd *r, int code, const char *ctx, const char *key,
		 const char *what, const struct gf_jv *v)
{
	if (r->rc == 0) {
		char p[160];
		path_of(p, sizeof(p), ctx, key);
		if (v == NULL)
			gf_err_set(r->e, code, "'%s': key '%s' missing (%s)",
				   r->file, p, what);
		else
			gf_err_set(r->e, code, "'%s': key '%s': %s, found %s",
				   r->file, p, what, type_name(v));
		r->rc = code;
	}
	return false;
}

/* The policies in ps, 1..GF_RDOC_POLICIES_MAX; 0 when none or too many
 * (failed). */
static size_t policies_count(struct rd *r, const struct gf_jv *ps)
{
	size_t np = gf_jv_len(ps);
	if (np == 0 || np > GF_RDOC_POLICIES_MAX) {
		fail(r, np ? GF_ETOOBIG : GF_EPARSE, "", "policies",
		     np ? "more than 64 policies" : "expected policies", ps);
		return 0;
	}
	return np;
}

static bool get_int(struct rd *r, const struct gf_jv *o, const char *ctx,
		    const char *key, int64_t *out)
{
	const struct gf_jv *v = gf_jv_get(o, key);
	if (!gf_jv_int(v, out))
		return fail(r, GF_EPARSE, ctx, key, "expected an integer", v);
	return true;
}

/* A number; null reads as NAN when nullable. */
static bool get_num(struct rd *r, const struct gf_jv *o, const char *ctx,
		    const char *key, double *out, bool nullable)
{
	const struct gf_jv *v = gf_jv_get(o, key);
	if (nullable && v && gf_jv_type(v) == GF_JV_NULL) {
		*out = NAN;
		return true;
	}
	if (!gf_jv_num(v, out) || !isfinite(*out))
		return fail(r, GF_EPARSE, ctx, key,
			    nullable ? "expected a number or null"
				     : "expected a number",
			    v);
	return true;
}

static bool get_str(struct rd *r, const struct gf_jv *o, const char *ctx,
		    const char *key, char *out, size_t size)
{
	const struct gf_jv *v = gf_jv_get(o, key);
	const char *s = gf_jv_str(v);
	if (s == NULL)
		return fail(r, GF_EPARSE, ctx, key, "expected a string", v);
	if (strlen(s) >= size)
		return fail(r, GF_ETOOBIG, ctx, key,
			    "a string longer than the limit", v);
	gf_note(out, size, "%s", s);
	return true;
}

static const struct gf_jv *get_kind(struct rd *r, const struct gf_jv *o,
				    const char *ctx, const char *key,
				    enum gf_jv_type t)
{
	const struct gf_jv *v = gf_jv_get(o, key);
	if (gf_jv_type(v) != t || v == NULL) {
		fail(r, GF_EPARSE, ctx, key,
		     t == GF_JV_OBJ ? "expected an object"
				    : "expected an array",
		     v);
		return NULL;
	}
	return v;
}

/* A array of n numbers (n 0: any length up to max, set in *n). */
static double *get_numbers(struct rd *r, const struct gf_jv *o, const char *ctx,
			   const char *key, size_t *n, size_t max)
{
	const struct gf_jv *a = get_kind(r, o, ctx, key, GF_JV_ARR);
	if (a == NULL)
		return NULL;
	size_t len = gf_jv_len(a);
	char p[160];
	path_of(p, sizeof(p), ctx, key);
	if (len > max || (*n && len != *n)) {
		if (r->rc == 0) {
			if (len > max)
				gf_err_set(r->e, GF_ETOOBIG,
					   "'%s': key '%s': %zu entries, more "
					   "than the limit of %zu",
					   r->file, p, len, max);
			else
				gf_err_set(r->e, GF_EPARSE,
					   "'%s': key '%s': length %zu, "
					   "expected %zu (that of "
					   "'arrived_pct')",
					   r->file, p, len, *n);
			r->rc = len > max ? GF_ETOOBIG : GF_EPARSE;
		}
		return NULL;
	}
	double *out = gf_calloc(len + 1, sizeof(*out));
	for (size_t i = 0; i < len; i++)
		if (!gf_jv_num(gf_jv_at(a, i), &out[i]) || !isfinite(out[i])) {
			char k[48];
			gf_note(k, sizeof(k), "%s[%zu]", key, i);
			fail(r, GF_EPARSE, ctx, k, "expected a number",
			     gf_jv_at(a, i));
			gf_free(out);
			return NULL;
		}
	*n = len;
	return out;
}

static void fill_curve(struct rd *r, const struct gf_jv *pv, const char *ctx,
		       struct gf_rdoc_fill_pol *p)
{
	const struct gf_jv *c = gf_jv_get(pv, "curve");
	char cx[160];
	path_of(cx, sizeof(cx), ctx, "curve");
	if (c == NULL) { /* a file from before the curve: its six points */
		p->x = gf_calloc(GF_REPORT_NPOINTS, sizeof(*p->x));
		p->y = gf_calloc(GF_REPORT_NPOINTS, sizeof(*p->y));
		for (int i = 0; i < GF_REPORT_NPOINTS; i++)
			if (!isnan(p->at[i])) {
				p->x[p->n] = gf_report_points[i];
				p->y[p->n++] = p->at[i];
			}
		return;
	}
	if (gf_jv_type(c) != GF_JV_OBJ) {
		fail(r, GF_EPARSE, ctx, "curve", "expected an object", c);
		return;
	}
	size_t n = 0;
	p->x = get_numbers(r, c, cx, "arrived_pct", &n, GF_RDOC_CURVE_MAX);
	if (p->x == NULL)
		return;
	p->y = get_numbers(r, c, cx, "unallocated_mean", &n, n);
	if (p->y == NULL)
		return;
	p->n = n;
	if (gf_jv_get(c, "unallocated_min") ||
	    gf_jv_get(c, "unallocated_max")) {
		p->lo = get_numbers(r, c, cx, "unallocated_min", &n, n);
		if (p->lo)
			p->hi = get_numbers(r, c, cx, "unallocated_max", &n, n);
	}
}

static void fill_policy(struct rd *r, const char *name, const struct gf_jv *pv,
			struct gf_rdoc_fill_pol *p)
{
	char ctx[160], k[8];
	gf_note(ctx, sizeof(ctx), "policies.%.100s", name);
	if (gf_jv_type(pv) != GF_JV_OBJ) {
		fail(r, GF_EPARSE, "policies", name, "expected an object", pv);
		return;
	}
	if (strlen(name) >= sizeof(p->name) || !*name) {
		fail(r, GF_EPARSE, "policies", name,
		     "a policy name of 1 to 63 bytes expected", pv);
		return;
	}
	gf_note(p->name, sizeof(p->name), "%s", name);
	const struct gf_jv *u =
		get_kind(r, pv, ctx, "unallocated_pct", GF_JV_OBJ);
	char ux[192];
	path_of(ux, sizeof(ux), ctx, "unallocated_pct");
	const struct gf_jv *m =
		u ? get_kind(r, u, ux, "mean", GF_JV_OBJ) : NULL;
	if (m == NULL)
		return;
	path_of(ux, sizeof(ux), ctx, "unallocated_pct.mean");
	for (int i = 0; i < GF_REPORT_NPOINTS; i++) {
		gf_note(k, sizeof(k), "%d", gf_report_points[i]);
		p->at[i] = NAN;
		if (gf_jv_get(m, k) && !get_num(r, m, ux, k, &p->at[i], true))
			return;
	}
	p->frag100 = NAN;
	const struct gf_jv *fm =
		gf_jv_get(gf_jv_get(pv, "frag_ratio_pct"), "mean");
	double v;
	if (fm && gf_jv_num(gf_jv_get(fm, "100"), &v))
		p->frag100 = v;
	if (!get_num(r, pv, ctx, "failed_mean", &p->failed_mean, false) ||
	    !get_num(r, pv, ctx, "arrivals_mean", &p->arrivals_mean, false) ||
	    !get_num(r, pv, ctx, "wall_s", &p->wall_s, false))
		return;
	fill_curve(r, pv, ctx, p);
}

static void read_fill(struct rd *r, const struct gf_jv *root, struct gf_rdoc *d)
{
	d->kind = GF_RDOC_FILL;
	if (!get_str(r, root, "", "source", d->source, sizeof(d->source)) ||
	    !get_int(r, root, "", "nodes", &d->nodes) ||
	    !get_int(r, root, "", "gpus", &d->gpus) ||
	    !get_int(r, root, "", "requests", &d->work) ||
	    !get_num(r, root, "", "tune", &d->tune, true))
		return;
	const struct gf_jv *s = get_kind(r, root, "", "seeds", GF_JV_ARR);
	if (s == NULL)
		return;
	uint64_t seeds[1000];
	int ns = 0;
	for (size_t i = 0; i < gf_jv_len(s) && ns < 1000; i++) {
		int64_t x;
		if (!gf_jv_int(gf_jv_at(s, i), &x) || x < 0) {
			char k[32];
			gf_note(k, sizeof(k), "seeds[%zu]", i);
			fail(r, GF_EPARSE, "", k, "expected a seed",
			     gf_jv_at(s, i));
			return;
		}
		seeds[ns++] = (uint64_t)x;
	}
	gf_report_seeds_text(seeds, ns, d->seeds, sizeof(d->seeds));
	const struct gf_jv *ps = gf_jv_get(root, "policies");
	size_t np = policies_count(r, ps);
	if (np == 0)
		return;
	d->fill = gf_calloc(np, sizeof(*d->fill));
	void *it = NULL;
	const struct gf_jv *pv;
	const char *name;
	while (r->rc == 0 && (name = gf_jv_next(ps, &it, &pv)) != NULL)
		fill_policy(r, name, pv, &d->fill[d->npol++]);
}

static void read_stat(struct rd *r, const struct gf_jv *pv, const char *ctx,
		      const char *key, struct gf_rdoc_stat *s)
{
	const struct gf_jv *o = get_kind(r, pv, ctx, key, GF_JV_OBJ);
	if (o == NULL)
		return;
	char sx[192];
	path_of(sx, sizeof(sx), ctx, key);
	if (get_num(r, o, sx, "n", &s->n, false) &&
	    get_num(r, o, sx, "mean", &s->mean, true) &&
	    get_num(r, o, sx, "p50", &s->p50, true) &&
	    get_num(r, o, sx, "p95", &s->p95, true) &&
	    get_num(r, o, sx, "p99", &s->p99, true))
		get_num(r, o, sx, "max", &s->max, true);
}

static void read_series(struct rd *r, const struct gf_jv *pv, const char *ctx,
			struct gf_rdoc_replay_pol *p)
{
	const struct gf_jv *a = get_kind(r, pv, ctx, "series", GF_JV_ARR);
	if (a == NULL)
		return;
	size_t n = gf_jv_len(a);
	if (n > GF_RDOC_SERIES_MAX) {
		char k[192];
		path_of(k, sizeof(k), ctx, "series");
		gf_err_set(r->e, GF_ETOOBIG,
			   "'%s': key '%s': %zu points, more than the limit "
			   "of %d",
			   r->file, k, n, GF_RDOC_SERIES_MAX);
		r->rc = GF_ETOOBIG;
		return;
	}
	p->t = gf_calloc(6 * n + 1, sizeof(*p->t));
	p->alloc = p->t + n;
	p->frag = p->alloc + n;
	p->pending_gpus = p->frag + n;
	p->pending = p->pending_gpus + n;
	p->running = p->pending + n;
	p->n = n;
	static const char *const keys[6] = { "t_s",	"alloc",
					     "frag",	"pending_gpus",
					     "pending", "running" };
	for (size_t i = 0; i < n; i++) {
		char px[192];
		gf_note(px, sizeof(px), "%s.series[%zu]", ctx, i);
		const struct gf_jv *o = gf_jv_at(a, i);
		if (gf_jv_type(o) != GF_JV_OBJ) {
			fail(r, GF_EPARSE, "", px, "expected an object", o);
			return;
		}
		for (int k = 0; k < 6; k++)
			if (!get_num(r, o, px, keys[k],
				     &p->t[(size_t)k * n + i], false))
				return;
	}
}

static void replay_policy(struct rd *r, const struct gf_jv *pv, size_t i,
			  struct gf_rdoc_replay_pol *p)
{
	char ctx[64];
	gf_note(ctx, sizeof(ctx), "policies[%zu]", i);
	if (gf_jv_type(pv) != GF_JV_OBJ) {
		fail(r, GF_EPARSE, "", ctx, "expected an object", pv);
		return;
	}
	if (!get_str(r, pv, ctx, "policy", p->name, sizeof(p->name)))
		return;
	if (!*p->name) {
		fail(r, GF_EPARSE, ctx, "policy", "expected a policy name",
		     gf_jv_get(pv, "policy"));
		return;
	}
	struct {
		const char *key;
		int64_t *v;
	} ints[] = {
		{ "seed", &p->seed },
		{ "arrived", &p->arrived },
		{ "refused", &p->refused },
		{ "started", &p->started },
		{ "completed", &p->completed },
		{ "deleted", &p->deleted },
		{ "failed", &p->failed },
		{ "running_end", &p->running_end },
		{ "queued_end", &p->queued_end },
		{ "preemptions", &p->preemptions },
	};
	for (size_t k = 0; k < sizeof(ints) / sizeof(ints[0]); k++)
		if (!get_int(r, pv, ctx, ints[k].key, ints[k].v))
			return;
	read_stat(r, pv, ctx, "wait_s", &p->wait);
	read_stat(r, pv, ctx, "jct_s", &p->jct);
	if (r->rc || !get_num(r, pv, ctx, "mean_alloc", &p->mean_alloc, true) ||
	    !get_num(r, pv, ctx, "mean_frag", &p->mean_frag, true) ||
	    !get_num(r, pv, ctx, "mean_pending_gpus", &p->mean_pending_gpus,
		     true) ||
	    !get_num(r, pv, ctx, "gpu_hours", &p->gpu_hours, false) ||
	    !get_num(r, pv, ctx, "wall_s", &p->wall_s, false))
		return;
	read_series(r, pv, ctx, p);
}

static void read_replay(struct rd *r, const struct gf_jv *root,
			struct gf_rdoc *d)
{
	d->kind = GF_RDOC_REPLAY;
	d->tune = NAN;
	d->load = 1;
	if (!get_str(r, root, "", "source", d->source, sizeof(d->source)) ||
	    !get_str(r, root, "", "trace", d->trace, sizeof(d->trace)) ||
	    !get_int(r, root, "", "nodes", &d->nodes) ||
	    !get_int(r, root, "", "gpus", &d->gpus) ||
	    !get_int(r, root, "", "jobs", &d->work))
		return;
	if (gf_jv_get(root, "load") &&
	    !get_num(r, root, "", "load", &d->load, false))
		return;
	const struct gf_jv *ps = get_kind(r, root, "", "policies", GF_JV_ARR);
	if (ps == NULL)
		return;
	size_t np = policies_count(r, ps);
	if (np == 0)
		return;
	d->replay = gf_calloc(np, sizeof(*d->replay));
	for (size_t i = 0; i < np && r->rc == 0; i++)
		replay_policy(r, gf_jv_at(ps, i), i, &d->replay[d->npol++]);
}

int gf_rdoc_parse(const char *file, const char *text, size_t len,
		  struct gf_rdoc *d, struct gf_err *e)
{
	memset(d, 0, sizeof(*d));
	gf_note(d->file, sizeof(d->file), "%s", file);
	struct gf_jv *root;
	struct gf_err pe;
	int rc = gf_jv_parse(text, len, &root, &pe);
	if (rc != 0)
		return gf_err_set(e, rc, "'%s': not JSON: %s", file, pe.msg);
	struct rd r = { .file = file, .e = e, .rc = 0 };
	const struct gf_jv *cmd = gf_jv_get(root, "command");
	const struct gf_jv *ps = gf_jv_get(root, "policies");
	if (gf_jv_type(root) != GF_JV_OBJ)
		rc = gf_err_set(e, GF_EPARSE,
				"'%s': expected an object at the top, found "
				"%s",
				file, type_name(root));
	else if (cmd && gf_jv_str(cmd) && strcmp(gf_jv_str(cmd), "replay"))
		rc = gf_err_set(e, GF_EINVAL,
				"'%s': key 'command': '%.64s' is not a report "
				"this command reads (known: replay, and the "
				"fill report without 'command')",
				file, gf_jv_str(cmd));
	else if (cmd && !gf_jv_str(cmd))
		fail(&r, GF_EPARSE, "", "command", "expected a string", cmd);
	else if (cmd)
		read_replay(&r, root, d);
	else if (gf_jv_type(ps) == GF_JV_OBJ)
		read_fill(&r, root, d);
	else
		rc = gf_err_set(e, GF_EINVAL,
				"'%s': neither a fill report (key 'policies' "
				"an object, from 'simulate fill --json') nor "
				"a replay report (key 'command': 'replay'): "
				"key 'policies' is %s",
				file, type_name(ps));
	gf_jv_free(root);
	if (rc == 0)
		rc = r.rc;
	if (rc)
		gf_rdoc_release(d);
	return rc;
}

void gf_rdoc_release(struct gf_rdoc *d)
{
	for (int i = 0; d->fill && i < d->npol; i++) {
		gf_free(d->fill[i].x);
		gf_free(d->fill[i].y);
		gf_free(d->fill[i].lo);
		gf_free(d->fill[i].hi);
	}
	for (int i = 0; d->replay && i < d->npol; i++)
		gf_free(d->replay[i].t);
	gf_free(d->fill);
	gf_free(d->replay);
	d->npol = 0;
}
