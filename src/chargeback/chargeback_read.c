/*
 * chargeback_read.c - the CSV inputs of `gpufleet chargeback`: usage records
 * and assets (the scripts' contract, docs/chargeback.md), GPU telemetry; times
 * (RFC3339 or unix seconds) and windows.
 *
 * Columns are found by the header, so they may come in any order; a
 * required one missing or an unknown one is an error naming it (a typo
 * would otherwise drop data silently).  An empty numeric field is
 * "absent" (NaN to the core); anything else that is not a finite number
 * is an error naming the file, line and field.
 */
#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chargeback/chargeback.h"
#include "util/clock.h"
#include "util/csv.h"
#include "util/duration.h"
#include "util/fmt.h"
#include "util/mem.h"

void gf_cb_skips_release(struct gf_cb_skips *sk)
{
	gf_free(sk->v);
	sk->n = sk->total = 0;
}

static void skip_add(struct gf_cb_skips *sk, uint32_t src, uint32_t line,
		     const char *why)
{
	if (sk->n < GF_CHARGE_SKIPS_KEPT) {
		if (!sk->v)
			sk->v = gf_calloc(GF_CHARGE_SKIPS_KEPT, sizeof(*sk->v));
		struct gf_charge_skip *s = &sk->v[sk->n++];
		s->src = src;
		s->line = line;
		gf_note(s->why, sizeof(s->why), "%s", why);
	}
	sk->total++;
}

/* --- times -----------------------------------------------------------------
 */

/* n digits at s as a number, or -1. */
static long digits(const char *s, int n)
{
	long v = 0;
	for (int i = 0; i < n; i++) {
		if (!isdigit((unsigned char)s[i]))
			return -1;
		v = v * 10 + (s[i] - '0');
	}
	return v;
}

static int parse_unix(const char *s, int64_t *ms)
{
	char *end;
	double v = strtod(s, &end);
	if (end == s || *end || !isfinite(v) || v < 0 || v > 1e13)
		return -1;
	*ms = (int64_t)llround(v * 1000.0);
	return 0;
}

/*
 * Every index below is checked against the length first: s may be a
 * field cut short ("" for a row that ended early, "2024-0"), and a read
 * past its NUL is a read past the buffer.
 */
int gf_cb_parse_time(const char *s, int64_t *ms)
{
	bool num = *s != '\0';
	for (const char *p = s; *p && num; p++)
		num = isdigit((unsigned char)*p) || *p == '.';
	if (num)
		return parse_unix(s, ms);
	if (strlen(s) < 20) /* YYYY-MM-DDTHH:MM:SS and a zone */
		return -1;
	long y = digits(s, 4), mo = digits(s + 5, 2), d = digits(s + 8, 2);
	if (y < 0 || mo < 1 || mo > 12 || d < 1 || d > 31 || s[4] != '-' ||
	    s[7] != '-' || (s[10] != 'T' && s[10] != 't' && s[10] != ' '))
		return -1;
	long h = digits(s + 11, 2), mi = digits(s + 14, 2),
	     se = digits(s + 17, 2);
	if (h < 0 || h > 23 || mi < 0 || mi > 59 || se < 0 || se > 60 ||
	    s[13] != ':' || s[16] != ':')
		return -1;
	const char *p = s + 19;
	double frac = 0;
	if (*p == '.') {
		char *end;
		frac = strtod(p, &end);
		if (end == p + 1)
			return -1;
		p = end;
	}
	long off = 0;
	if (*p == 'Z' || *p == 'z') {
		p++;
	} else if ((*p == '+' || *p == '-') && strlen(p) >= 6) {
		long oh = digits(p + 1, 2), om = digits(p + 4, 2);
		if (oh < 0 || om < 0 || p[3] != ':')
			return -1;
		off = (oh * 60 + om) * 60 * (*p == '-' ? -1 : 1);
		p += 6;
	} else {
		return -1; /* RFC3339 requires a zone */
	}
	if (*p)
		return -1;
	int64_t days = gf_days_from_civil(y, (int)mo, (int)d);
	int64_t secs = days * 86400 + h * 3600 + mi * 60 + se - off;
	*ms = secs * 1000 + (int64_t)llround(frac * 1000.0);
	return 0;
}

int gf_cb_parse_window(const char *s, int64_t now_ms, int64_t *start,
		       int64_t *end, struct gf_err *e)
{
	const char *comma = strchr(s, ',');
	if (comma) {
		char a[64];
		size_t n = (size_t)(comma - s);
		if (n >= sizeof(a) ||
		    (snprintf(a, sizeof(a), "%.*s", (int)n, s),
		     gf_cb_parse_time(a, start)) ||
		    gf_cb_parse_time(comma + 1, end))
			return gf_err_set(
				e, GF_EINVAL,
				"cannot parse '--window %s': expected "
				"START,END as RFC3339 times or unix "
				"seconds, or a duration like 7d",
				s);
		if (*end <= *start)
			return gf_err_set(e, GF_EINVAL,
					  "'--window %s': the end is not after "
					  "the start",
					  s);
		return 0;
	}
	/* a duration as every flag takes one (util/duration.h), with its
	 * unit: a bare number is refused (days? seconds?) */
	double secs = 0;
	bool bare = s[strspn(s, "0123456789.")] == '\0';
	if (bare || gf_duration_parse(s, 1, &secs, NULL) != 0 ||
	    !(secs >= 0.001) || secs * 1e3 > 1e12)
		return gf_err_set(e, GF_EINVAL,
				  "cannot parse '--window %s': expected "
				  "START,END as RFC3339 times or unix seconds, "
				  "or a duration like 7d, 24h or 90m",
				  s);
	*end = now_ms - now_ms % 60000;
	*start = *end - (int64_t)llround(secs * 1e3);
	return 0;
}

/* --- fields ----------------------------------------------------------------
 */

struct rd {
	struct gf_charge_input *in;
	struct gf_csv *c;
	uint32_t src;
	bool lenient;
	struct gf_cb_skips *sk;
	struct gf_err *e;
	char why[300]; /* the row's failure */
};

static bool bad(struct rd *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static bool bad(struct rd *r, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(r->why, sizeof(r->why), fmt, ap);
	va_end(ap);
	return false;
}

static bool num(struct rd *r, int col, const char *name, double *out)
{
	const char *s = gf_csv_get(r->c, col);
	if (col < 0 || *s == '\0') {
		*out = NAN;
		return true;
	}
	char *end;
	*out = strtod(s, &end);
	if (end == s || *end || !isfinite(*out))
		return bad(r, "field '%s': expected a number, got '%.60s'",
			   name, s);
	return true;
}

static bool when(struct rd *r, int col, const char *name, int64_t *out)
{
	const char *s = gf_csv_get(r->c, col);
	if (gf_cb_parse_time(s, out))
		return bad(r,
			   "field '%s': expected an RFC3339 time or unix "
			   "seconds, got '%.60s'",
			   name, s);
	return true;
}

static bool str(struct rd *r, int col, const char *name, bool required,
		uint32_t *out)
{
	const char *s = gf_csv_get(r->c, col);
	*out = 0;
	if (col < 0)
		return true;
	if (required && *s == '\0')
		return bad(r, "field '%s': must not be empty", name);
	if (gf_charge_intern(r->in, s, strlen(s), out))
		return bad(r, "field '%s': longer than 256 bytes", name);
	return true;
}

/* The columns of a file: required ones first, then optional. */
struct cols {
	const char *const *req;
	const char *const *opt;
	int at[32];
};

static int find_cols(struct rd *r, struct cols *k)
{
	int n = 0;
	for (const char *const *p = k->req; *p; p++, n++) {
		k->at[n] = gf_csv_column(r->c, *p);
		if (k->at[n] < 0)
			return gf_err_set(r->e, GF_EPARSE,
					  "'%s':1: column '%s' is missing",
					  r->c->path, *p);
	}
	for (const char *const *p = k->opt; *p; p++, n++)
		k->at[n] = gf_csv_column(r->c, *p);
	for (int i = 0; i < r->c->nheader; i++) {
		bool known = false;
		for (const char *const *p = k->req; *p && !known; p++)
			known = strcmp(*p, r->c->hfield[i]) == 0;
		for (const char *const *p = k->opt; *p && !known; p++)
			known = strcmp(*p, r->c->hfield[i]) == 0;
		if (!known)
			return gf_err_set(r->e, GF_EPARSE,
					  "'%s':1: unknown column '%.60s'",
					  r->c->path, r->c->hfield[i]);
	}
	return 0;
}

/* The row's verdict: kept (1), skipped (0), or the error (< 0). */
static int row_done(struct rd *r, bool ok)
{
	if (ok)
		return 1;
	if (!r->lenient)
		return gf_err_set(r->e, GF_EPARSE, "'%s':%ld: %s", r->c->path,
				  r->c->line, r->why);
	skip_add(r->sk, r->src, (uint32_t)r->c->line, r->why);
	return 0;
}

/* Open path, find its columns, call row() for each line. */
static int each_row(struct gf_charge_input *in, const char *path, bool lenient,
		    struct gf_cb_skips *sk, struct gf_err *e, struct cols *k,
		    bool (*row)(struct rd *, const int *, void *), void *arg)
{
	struct gf_csv *c = gf_malloc(sizeof(*c));
	struct rd r = { in, c, 0, lenient, sk, e, "" };
	int rc = gf_csv_open(c, path, e);
	if (rc) {
		gf_free(c);
		return rc;
	}
	if (gf_charge_intern(in, path, strlen(path), &r.src))
		rc = gf_err_set(e, GF_ETOOBIG, "'%.60s...': path too long",
				path);
	if (rc == 0)
		rc = find_cols(&r, k);
	while (rc == 0 && (rc = gf_csv_next(c, e)) == 1) {
		r.why[0] = '\0';
		rc = row_done(&r, row(&r, k->at, arg));
		rc = rc < 0 ? rc : 0;
	}
	gf_csv_close(c);
	gf_free(c);
	return rc < 0 ? rc : 0;
}

/* --- records ---------------------------------------------------------------
 */

static const char *const rec_req[] = { "cluster", "node",	 "namespace",
				       "pod",	  "container",	 "start",
				       "end",	  "gpus",	 "cpu_req",
				       "cpu_use", "ram_req_gib", "ram_use_gib",
				       NULL };
static const char *const rec_opt[] = { "labels",      "gpu_model",
				       "mig_profile", "gpu_ids",
				       "other_cost",  "controller_kind",
				       "controller",  "services",
				       "annotations", NULL };

/* "k=v;k=v" (labels, annotations): every item a NAME=VALUE. */
static bool pairs(struct rd *r, int col, const char *name, uint32_t *out)
{
	if (!str(r, col, name, false, out))
		return false;
	const char *s = gf_csv_get(r->c, col);
	while (col >= 0 && *s) {
		size_t len = strcspn(s, ";");
		const char *eq = memchr(s, '=', len);
		if (len && (!eq || eq == s))
			return bad(r,
				   "field '%s': expected NAME=VALUE items "
				   "split by ';', got '%.*s'",
				   name, (int)(len > 60 ? 60 : len), s);
		s += len + (s[len] == ';');
	}
	return true;
}

/* The pod's owner and services (OpenCost's controllerKind, controller,
 * services, annotations). */
static bool owner(struct rd *r, const int *at, struct gf_charge_extra *xe)
{
	if (!(str(r, at[17], "controller_kind", false, &xe->controller_kind) &&
	      str(r, at[18], "controller", false, &xe->controller) &&
	      str(r, at[19], "services", false, &xe->services) &&
	      pairs(r, at[20], "annotations", &xe->annotations)))
		return false;
	const char *k = gf_charge_str(r->in, xe->controller_kind);
	for (const char *p = k; *p; p++)
		if (*p == ':' || *p == '/' || *p == ';')
			return bad(r,
				   "field 'controller_kind': '%.60s' is not a "
				   "kind (no ':', '/' or ';')",
				   k);
	return true;
}

static bool record_row(struct rd *r, const int *at, void *arg)
{
	(void)arg;
	struct gf_charge_record x;
	struct gf_charge_extra xe;
	memset(&xe, 0, sizeof(xe));
	memset(&x, 0, sizeof(x));
	bool ok = str(r, at[0], "cluster", true, &x.cluster) &&
		  str(r, at[1], "node", true, &x.node) &&
		  str(r, at[2], "namespace", false, &x.ns) &&
		  str(r, at[3], "pod", false, &x.pod) &&
		  str(r, at[4], "container", false, &x.container) &&
		  when(r, at[5], "start", &x.start_ms) &&
		  when(r, at[6], "end", &x.end_ms) &&
		  num(r, at[7], "gpus", &x.gpus) &&
		  num(r, at[8], "cpu_req", &x.cpu_req) &&
		  num(r, at[9], "cpu_use", &x.cpu_use) &&
		  num(r, at[10], "ram_req_gib", &x.ram_req) &&
		  num(r, at[11], "ram_use_gib", &x.ram_use) &&
		  str(r, at[12], "labels", false, &xe.labels) &&
		  str(r, at[13], "gpu_model", false, &xe.gpu_model) &&
		  str(r, at[14], "mig_profile", false, &xe.mig_profile) &&
		  str(r, at[15], "gpu_ids", false, &xe.gpu_ids) &&
		  num(r, at[16], "other_cost", &x.other_cost) &&
		  owner(r, at, &xe);
	if (!ok)
		return false;
	if (x.end_ms < x.start_ms)
		return bad(r, "field '%s': before 'start' (%.60s)", "end",
			   gf_csv_get(r->c, at[6]));
	x.extra = gf_charge_extra_id(r->in, &xe);
	x.src = r->src;
	x.line = (uint32_t)r->c->line;
	if (gf_charge_add_record(r->in, &x))
		return bad(r, "more than %u records",
			   GF_CHARGE_RECORDS_MAX - 1);
	return true;
}

int gf_cb_read_records(struct gf_charge_input *in, const char *path,
		       bool lenient, struct gf_cb_skips *sk, struct gf_err *e)
{
	struct cols k = { rec_req, rec_opt, { 0 } };
	return each_row(in, path, lenient, sk, e, &k, record_row, NULL);
}

/* --- assets ----------------------------------------------------------------
 */

static const char *const asset_req[] = { "cluster",
					 "node",
					 "start",
					 "end",
					 "gpus",
					 "cpu_cores",
					 "ram_gib",
					 "gpu_price_hr",
					 "cpu_core_price_hr",
					 "ram_gib_price_hr",
					 NULL };
static const char *const asset_opt[] = { "gpu_model", "node_price_hr", NULL };

/* Prices a row leaves empty, from the prices file; a node price split
 * by the base prices (OpenCost's spec, appendix A). */
static bool fill_prices(struct rd *r, struct gf_charge_asset *a, double node_hr,
			const struct gf_cb_prices *p)
{
	const char *model = gf_charge_str(r->in, a->gpu_model);
	const char *node = gf_charge_str(r->in, a->node);
	for (int i = 0; p && isnan(node_hr) && i < p->nnodes; i++)
		if (strcmp(p->node[i], node) == 0)
			node_hr = p->node_hr[i];
	if (!isnan(node_hr)) {
		if (!isnan(a->gpu_price_hr) || !isnan(a->cpu_price_hr) ||
		    !isnan(a->ram_price_hr))
			return bad(r,
				   "node '%s' has both a node price and unit "
				   "prices: give one or the other",
				   node);
		double bg = p ? gf_cb_gpu_price(p, model) : NAN;
		double bc = p && !isnan(p->cpu_core_hr) ? p->cpu_core_hr
							: GF_CB_BASE_CPU_HR;
		double bm = p && !isnan(p->ram_gib_hr) ? p->ram_gib_hr
						       : GF_CB_BASE_RAM_HR;
		if (isnan(bg))
			bg = GF_CB_BASE_GPU_HR;
		double base =
			a->gpus * bg + a->cpu_cores * bc + a->ram_gib * bm;
		if (!(base > 0) || node_hr < 0)
			return bad(r,
				   "node '%s': a node price needs capacity to "
				   "split over and must be >= 0",
				   node);
		double f = node_hr / base;
		a->gpu_price_hr = bg * f;
		a->cpu_price_hr = bc * f;
		a->ram_price_hr = bm * f;
		return true;
	}
	if (p && isnan(a->gpu_price_hr))
		a->gpu_price_hr = gf_cb_gpu_price(p, model);
	if (p && isnan(a->cpu_price_hr))
		a->cpu_price_hr = p->cpu_core_hr;
	if (p && isnan(a->ram_price_hr))
		a->ram_price_hr = p->ram_gib_hr;
	return true;
}

static bool asset_row(struct rd *r, const int *at, void *arg)
{
	const struct gf_cb_prices *p = arg;
	struct gf_charge_asset a;
	double node_hr;
	memset(&a, 0, sizeof(a));
	bool ok = str(r, at[0], "cluster", true, &a.cluster) &&
		  str(r, at[1], "node", true, &a.node) &&
		  when(r, at[2], "start", &a.start_ms) &&
		  when(r, at[3], "end", &a.end_ms) &&
		  num(r, at[4], "gpus", &a.gpus) &&
		  num(r, at[5], "cpu_cores", &a.cpu_cores) &&
		  num(r, at[6], "ram_gib", &a.ram_gib) &&
		  num(r, at[7], "gpu_price_hr", &a.gpu_price_hr) &&
		  num(r, at[8], "cpu_core_price_hr", &a.cpu_price_hr) &&
		  num(r, at[9], "ram_gib_price_hr", &a.ram_price_hr) &&
		  str(r, at[10], "gpu_model", false, &a.gpu_model) &&
		  num(r, at[11], "node_price_hr", &node_hr);
	if (!ok)
		return false;
	if (a.end_ms <= a.start_ms)
		return bad(r, "field '%s': not after 'start' (%.60s)", "end",
			   gf_csv_get(r->c, at[3]));
	if (isnan(a.gpus))
		a.gpus = 0;
	if (isnan(a.cpu_cores))
		a.cpu_cores = 0;
	if (isnan(a.ram_gib))
		a.ram_gib = 0;
	if (!fill_prices(r, &a, node_hr, p))
		return false;
	a.src = r->src;
	a.line = (uint32_t)r->c->line;
	if (gf_charge_add_asset(r->in, &a))
		return bad(r, "more than %u asset rows",
			   GF_CHARGE_ASSETS_MAX - 1);
	return true;
}

int gf_cb_read_assets(struct gf_charge_input *in, const char *path,
		      const struct gf_cb_prices *p, struct gf_err *e)
{
	struct cols k = { asset_req, asset_opt, { 0 } };
	struct gf_cb_skips none = { NULL, 0, 0 };
	return each_row(in, path, false, &none, e, &k, asset_row,
			(void *)(uintptr_t)p);
}

/* --- telemetry -------------------------------------------------------------
 */

static const char *const tele_req[] = { "node", "gpu", "start", "end", NULL };
static const char *const tele_opt[] = { "gr_engine_active", "sm_active",
					"gpu_util", "diagnosis", NULL };

static bool tele_row(struct rd *r, const int *at, void *arg)
{
	(void)arg;
	struct gf_charge_tele t;
	double act[GF_CHARGE_NSIG];
	memset(&t, 0, sizeof(t));
	bool ok = str(r, at[0], "node", true, &t.node) &&
		  str(r, at[1], "gpu", true, &t.gpu) &&
		  when(r, at[2], "start", &t.start_ms) &&
		  when(r, at[3], "end", &t.end_ms) &&
		  num(r, at[4], "gr_engine_active", &act[GF_CHARGE_SIG_GR]) &&
		  num(r, at[5], "sm_active", &act[GF_CHARGE_SIG_SM]) &&
		  num(r, at[6], "gpu_util", &act[GF_CHARGE_SIG_UTIL]);
	if (!ok)
		return false;
	if (t.end_ms <= t.start_ms)
		return bad(r, "field '%s': not after 'start' (%.60s)", "end",
			   gf_csv_get(r->c, at[3]));
	t.activity = -1;
	for (int s = 0; s < GF_CHARGE_NSIG; s++) {
		if (isnan(act[s]))
			continue;
		if (act[s] < 0 || act[s] > 100)
			return bad(r,
				   "field '%s': expected a percentage from 0 "
				   "to 100, got '%s'",
				   s == 0   ? "gr_engine_active"
				   : s == 1 ? "sm_active"
					    : "gpu_util",
				   gf_csv_get(r->c, at[4 + s]));
		if (t.activity < 0) {
			t.activity = act[s];
			t.signal = (int8_t)s;
		}
	}
	const char *d = gf_csv_get(r->c, at[7]);
	t.waste = -1;
	if (at[7] >= 0 && *d) {
		int w = strcmp(d, "mig-slack") == 0 ? GF_CHARGE_WASTE_OVERPROV
						    : gf_charge_waste_parse(d);
		if (w < 0)
			return bad(r,
				   "field '%s': expected allocated-idle, "
				   "data-starvation, memory-overprovisioned "
				   "or mig-slack, got '%.60s'",
				   "diagnosis", d);
		t.waste = (int8_t)w;
	}
	t.src = r->src;
	t.line = (uint32_t)r->c->line;
	if (gf_charge_add_tele(r->in, &t))
		return bad(r, "more than %u telemetry rows",
			   GF_CHARGE_TELE_MAX - 1);
	return true;
}

int gf_cb_read_telemetry(struct gf_charge_input *in, const char *path,
			 bool lenient, struct gf_cb_skips *sk, struct gf_err *e)
{
	struct cols k = { tele_req, tele_opt, { 0 } };
	return each_row(in, path, lenient, sk, e, &k, tele_row, NULL);
}
