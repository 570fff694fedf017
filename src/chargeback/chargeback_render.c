/*
 * chargeback_render.c - a chargeback result as OpenCost's allocation API
 * answers it (JSON: {"code": 200, "data": [{name: allocation}, ... one per
 * step]}, its field names where they mean the same, every float rounded to 5
 * decimals and NaN as null), as CSV, and as a text table; the skipped
 * records as lines.  Field meanings: docs/chargeback.md.
 */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "chargeback/chargeback.h"
#include "util/fmt.h"
#include "util/json.h"

#define GIB 1073741824.0

/* A finite float rounded to 5 decimals, no trailing zeros, never "-0";
 * one too long for 5 decimals (past 1e50) in %g. */
static void decimals(char s[static 64], double v)
{
	if (gf_fmt(s, 64, "%.5f", gf_charge_round(v))) {
		gf_note(s, 64, "%g", v);
		return;
	}
	char *dot = strchr(s, '.');
	char *end = s + strlen(s) - 1;
	while (dot && end > dot && *end == '0')
		*end-- = '\0';
	if (dot && end == dot)
		*end = '\0';
	if (strcmp(s, "-0") == 0)
		memcpy(s, "0", 2);
}

/* A float as OpenCost prints it: rounded to 5 decimals, no trailing
 * zeros; null when not finite. */
static void num(struct gf_json *j, const char *key, double v)
{
	char s[64];
	if (!isfinite(v)) {
		gf_json_null(j, key);
		return;
	}
	decimals(s, v);
	gf_json_raw(j, key, s, strlen(s));
}

static void time_str(struct gf_json *j, const char *key, int64_t ms)
{
	char t[40];
	gf_charge_time_str(ms, t, sizeof(t));
	gf_json_str(j, key, t);
}

static double per(double a, double b)
{
	return b > 0 ? a / b : 0;
}

/* The labels or annotations (kind) among the keys, as one object. */
static void pairs_json(struct gf_json *j, const struct gf_cb_view *v,
		       const struct gf_charge_row *r,
		       enum gf_charge_key_kind kind, const char *name)
{
	bool any = false;
	for (int i = 0; i < v->o->nagg; i++) {
		if (v->o->agg[i].kind != kind)
			continue;
		if (!any)
			gf_json_obj_begin(j, name);
		any = true;
		gf_json_str(j, gf_charge_str(v->in, v->o->agg[i].label),
			    gf_charge_str(v->in, r->keyval[i]));
	}
	if (any)
		gf_json_obj_end(j);
}

static void properties(struct gf_json *j, const struct gf_cb_view *v,
		       const struct gf_charge_row *r)
{
	/* by key kind; deployment and the like name the controller */
	static const char *const names[] = {
		"cluster",    "node",	     "namespace",  "pod",
		"container",  "labels",	     "gpuModel",   "controllerKind",
		"controller", "services",    "controller", "controller",
		"controller", "annotations",
	};
	gf_json_obj_begin(j, "properties");
	if (r->kind == GF_CHARGE_ROW_ALLOC) {
		for (int i = 0; i < v->o->nagg; i++) {
			const struct gf_charge_key *k = &v->o->agg[i];
			const char *val = gf_charge_str(v->in, r->keyval[i]);
			if (k->kind == GF_CHARGE_KEY_LABEL ||
			    k->kind == GF_CHARGE_KEY_ANNOTATION)
				continue;
			if (k->kind == GF_CHARGE_KEY_SERVICE) {
				gf_json_arr_begin(j, names[k->kind]);
				gf_json_str(j, NULL, val);
				gf_json_arr_end(j);
				continue;
			}
			gf_json_str(j, names[k->kind], val);
		}
		pairs_json(j, v, r, GF_CHARGE_KEY_LABEL, "labels");
		pairs_json(j, v, r, GF_CHARGE_KEY_ANNOTATION, "annotations");
	}
	gf_json_obj_end(j);
}

static void gpu_fields(struct gf_json *j, const struct gf_charge_row *r,
		       double hours, double minutes)
{
	double eff = gf_charge_row_gpu_eff(r);
	double req = per(r->gpu_req_min, minutes);
	num(j, "gpuCount", per(r->gpu_hours, hours));
	num(j, "gpuRequestAverage", req);
	num(j, "gpuUsageAverage", isnan(eff) ? NAN : req * eff);
	num(j, "gpuHours", r->gpu_hours);
	num(j, "gpuCost", r->gpu_cost);
	num(j, "gpuCostAdjustment", 0);
	num(j, "gpuCostIdle", r->gpu_cost_idle);
	num(j, "gpuEfficiency", eff);
}

/* Ours, after OpenCost's fields. */
static void our_fields(struct gf_json *j, const struct gf_charge_row *r)
{
	num(j, "otherCost", r->other_cost);
	num(j, "idleCost", gf_charge_row_idle(r));
	num(j, "gpuSeconds", r->gpu_hours * 3600.0);
	num(j, "gpuTelemetryHours", r->gpu_tele_hours);
	num(j, "gpuActiveHours", r->gpu_active_hours);
	gf_json_arr_begin(j, "gpuEfficiencySignals");
	for (int s = 0; s < GF_CHARGE_NSIG; s++)
		if (r->signals & (1u << s))
			gf_json_str(j, NULL, gf_charge_signal_name(s));
	gf_json_arr_end(j);
	gf_json_obj_begin(j, "wasteCost");
	for (int w = 0; w < GF_CHARGE_NWASTE; w++)
		num(j, gf_charge_waste_name(w), r->waste[w]);
	gf_json_obj_end(j);
	num(j, "wasteCostTotal", gf_charge_row_waste(r));
}

/* OpenCost's sharedCostBreakdown: {name: SharedCostBreakdown}; our
 * otherCost holds what OpenCost splits into PV, network, LB and
 * external. */
static void breakdown_json(struct gf_json *j, const struct gf_charge_row *r)
{
	gf_json_obj_begin(j, "sharedCostBreakdown");
	for (size_t i = 0; i < r->nshares; i++) {
		const struct gf_charge_share *s = &r->shares[i];
		gf_json_obj_begin(j, s->name);
		const double v[] = { s->total_cost, s->cpu_cost, s->gpu_cost,
				     s->ram_cost, s->other_cost };
		static const char *const k[] = { "totalCost", "cpuCost",
						 "gpuCost", "ramCost",
						 "otherCost" };
		gf_json_str(j, "name", s->name);
		for (size_t f = 0; f < sizeof(v) / sizeof(v[0]); f++)
			num(j, k[f], v[f]);
		gf_json_obj_end(j);
	}
	gf_json_obj_end(j);
}

static void row_json(struct gf_json *j, const struct gf_cb_view *v,
		     const struct gf_charge_step *st,
		     const struct gf_charge_row *r)
{
	double minutes = gf_charge_row_minutes(r), hours = minutes / 60.0;
	gf_json_obj_begin(j, r->name);
	gf_json_str(j, "name", r->name);
	properties(j, v, r);
	gf_json_obj_begin(j, "window");
	time_str(j, "start", st->start_ms);
	time_str(j, "end", st->end_ms);
	gf_json_obj_end(j);
	time_str(j, "start", r->start_ms);
	time_str(j, "end", r->end_ms);
	num(j, "minutes", minutes);
	num(j, "cpuCores", per(r->cpu_core_hours, hours));
	num(j, "cpuCoreRequestAverage", per(r->cpu_req_min, minutes));
	num(j, "cpuCoreUsageAverage", per(r->cpu_use_min, minutes));
	num(j, "cpuCoreHours", r->cpu_core_hours);
	num(j, "cpuCost", r->cpu_cost);
	num(j, "cpuCostAdjustment", 0);
	num(j, "cpuCostIdle", r->cpu_cost_idle);
	num(j, "cpuEfficiency", gf_charge_row_cpu_eff(r));
	gpu_fields(j, r, hours, minutes);
	num(j, "ramBytes", per(r->ram_gib_hours, hours) * GIB);
	num(j, "ramByteRequestAverage", per(r->ram_req_min, minutes) * GIB);
	num(j, "ramByteUsageAverage", per(r->ram_use_min, minutes) * GIB);
	num(j, "ramByteHours", r->ram_gib_hours * GIB);
	num(j, "ramCost", r->ram_cost);
	num(j, "ramCostAdjustment", 0);
	num(j, "ramCostIdle", r->ram_cost_idle);
	num(j, "ramEfficiency", gf_charge_row_ram_eff(r));
	num(j, "sharedCost", r->shared_cost);
	num(j, "totalCost", gf_charge_row_total(r));
	num(j, "totalEfficiency", gf_charge_row_total_eff(r));
	if (v->o->shared_breakdown)
		breakdown_json(j, r);
	our_fields(j, r);
	gf_json_obj_end(j);
}

static void skips_json(struct gf_json *j, const struct gf_cb_view *v,
		       const struct gf_charge_result *res)
{
	const struct gf_cb_skips *rs = v->read_skips;
	size_t total = res->nskipped_total + (rs ? rs->total : 0);
	if (!v->o->lenient)
		return;
	gf_json_obj_begin(j, "skipped");
	gf_json_int(j, "count", (int64_t)total);
	gf_json_arr_begin(j, "records");
	for (int pass = 0; pass < 2; pass++) {
		const struct gf_charge_skip *s =
			pass ? res->skipped : (rs ? rs->v : NULL);
		size_t n = pass ? res->nskipped : (rs ? rs->n : 0);
		for (size_t i = 0; i < n; i++) {
			char where[GF_CHARGE_STR_MAX + 32];
			if (s[i].line)
				gf_note(where, sizeof(where), "%s:%u",
					gf_charge_str(v->in, s[i].src),
					s[i].line);
			else
				gf_note(where, sizeof(where), "%s",
					gf_charge_str(v->in, s[i].src));
			gf_json_obj_begin(j, NULL);
			gf_json_str(j, "record", where);
			gf_json_str(j, "why", s[i].why);
			gf_json_obj_end(j);
		}
	}
	gf_json_arr_end(j);
	gf_json_obj_end(j);
}

int gf_cb_render_json(const struct gf_cb_view *v,
		      const struct gf_charge_result *res, struct gf_buf *out)
{
	struct gf_json j;
	gf_json_init(&j, out);
	gf_json_obj_begin(&j, NULL);
	gf_json_int(&j, "code", 200);
	gf_json_arr_begin(&j, "data");
	for (int k = 0; k < res->nsteps; k++) {
		const struct gf_charge_step *st = &res->steps[k];
		gf_json_obj_begin(&j, NULL);
		for (size_t i = 0; i < st->nrows; i++)
			row_json(&j, v, st, &st->rows[i]);
		gf_json_obj_end(&j);
	}
	gf_json_arr_end(&j);
	skips_json(&j, v, res);
	gf_json_obj_end(&j);
	gf_buf_putc(out, '\n');
	int rc = gf_json_error(&j);
	return rc ? rc : gf_buf_error(out);
}

/* --- CSV ------------------------------------------------------------------ */

/* A CSV field: quoted when it holds a comma, quote or newline. */
static void csv_str(struct gf_buf *b, const char *s)
{
	if (!strpbrk(s, ",\"\n\r")) {
		gf_buf_puts(b, s);
		return;
	}
	gf_buf_putc(b, '"');
	for (; *s; s++) {
		if (*s == '"')
			gf_buf_putc(b, '"');
		gf_buf_putc(b, *s);
	}
	gf_buf_putc(b, '"');
}

static void csv_num(struct gf_buf *b, double v)
{
	if (!isfinite(v)) {
		gf_buf_puts(b, ",");
		return;
	}
	char s[64];
	decimals(s, v);
	gf_buf_printf(b, ",%s", s);
}

int gf_cb_render_csv(const struct gf_cb_view *v,
		     const struct gf_charge_result *res, struct gf_buf *out)
{
	(void)v;
	gf_buf_puts(out,
		    "window_start,window_end,name,minutes,gpu_hours,gpu_cost,"
		    "gpu_cost_idle,cpu_core_hours,cpu_cost,cpu_cost_idle,"
		    "ram_gib_hours,ram_cost,ram_cost_idle,other_cost,"
		    "shared_cost,total_cost,gpu_efficiency,"
		    "waste_allocated_idle,waste_data_starvation,"
		    "waste_memory_overprovisioned\n");
	for (int k = 0; k < res->nsteps; k++) {
		const struct gf_charge_step *st = &res->steps[k];
		char a[40], b[40];
		gf_charge_time_str(st->start_ms, a, sizeof(a));
		gf_charge_time_str(st->end_ms, b, sizeof(b));
		for (size_t i = 0; i < st->nrows; i++) {
			const struct gf_charge_row *r = &st->rows[i];
			gf_buf_printf(out, "%s,%s,", a, b);
			csv_str(out, r->name);
			csv_num(out, gf_charge_row_minutes(r));
			csv_num(out, r->gpu_hours);
			csv_num(out, r->gpu_cost);
			csv_num(out, r->gpu_cost_idle);
			csv_num(out, r->cpu_core_hours);
			csv_num(out, r->cpu_cost);
			csv_num(out, r->cpu_cost_idle);
			csv_num(out, r->ram_gib_hours);
			csv_num(out, r->ram_cost);
			csv_num(out, r->ram_cost_idle);
			csv_num(out, r->other_cost);
			csv_num(out, r->shared_cost);
			csv_num(out, gf_charge_row_total(r));
			csv_num(out, gf_charge_row_gpu_eff(r));
			for (int w = 0; w < GF_CHARGE_NWASTE; w++)
				csv_num(out, r->waste[w]);
			gf_buf_putc(out, '\n');
		}
	}
	return gf_buf_error(out);
}

/* --- text ----------------------------------------------------------------- */

/* The first column's header: the aggregation's keys as named (TEAM,
 * NAMESPACE, NODE/LABEL:CLASS), upper-cased; NAME without keys. */
static void name_header(const struct gf_cb_view *v, char *out, size_t size)
{
	size_t len = 0;
	out[0] = '\0';
	for (int i = 0; i < v->o->nagg && len + 1 < size; i++) {
		char k[GF_CHARGE_STR_MAX + 8];
		gf_charge_key_name(v->in, &v->o->agg[i], k, sizeof(k));
		gf_note(out + len, size - len, "%s%s", i ? "/" : "", k);
		len += strlen(out + len);
	}
	if (!out[0])
		gf_note(out, size, "name");
	for (char *p = out; *p; p++)
		*p = (char)toupper((unsigned char)*p);
}

int gf_cb_render_table(const struct gf_cb_view *v,
		       const struct gf_charge_result *res, struct gf_buf *out)
{
	char head[64];
	name_header(v, head, sizeof(head));
	for (int k = 0; k < res->nsteps; k++) {
		const struct gf_charge_step *st = &res->steps[k];
		char a[40], b[40];
		gf_charge_time_str(st->start_ms, a, sizeof(a));
		gf_charge_time_str(st->end_ms, b, sizeof(b));
		gf_buf_printf(out, "%s%s to %s (%s)\n", k ? "\n" : "", a, b,
			      v->currency);
		gf_buf_printf(out,
			      "%-24s %10s %11s %10s %10s %10s %11s %7s %10s\n",
			      head, "GPU-HOURS", "GPU", "CPU", "RAM", "SHARED",
			      "TOTAL", "GPU-EFF", "WASTE");
		double total = 0, gh = 0;
		for (size_t i = 0; i < st->nrows; i++) {
			const struct gf_charge_row *r = &st->rows[i];
			double eff = gf_charge_row_gpu_eff(r);
			char effs[16] = "-";
			if (!isnan(eff))
				gf_note(effs, sizeof(effs), "%.0f%%",
					eff * 100.0);
			gf_buf_printf(out,
				      "%-24.24s %10.2f %11.2f %10.2f %10.2f "
				      "%10.2f %11.2f %7s %10.2f\n",
				      r->name[0] ? r->name : "(all)",
				      r->gpu_hours, r->gpu_cost, r->cpu_cost,
				      r->ram_cost, r->shared_cost,
				      gf_charge_row_total(r), effs,
				      gf_charge_row_waste(r));
			total += gf_charge_row_total(r);
			gh += r->gpu_hours;
		}
		gf_buf_printf(out, "%-24s %10.2f %11s %10s %10s %10s %11.2f\n",
			      "total", gh, "", "", "", "", total);
		gf_buf_printf(out, "priced capacity %.2f\n", st->asset_cost);
	}
	return gf_buf_error(out);
}

void gf_cb_skips_text(const struct gf_cb_view *v,
		      const struct gf_charge_result *res, struct gf_buf *out)
{
	const struct gf_cb_skips *rs = v->read_skips;
	size_t total = res->nskipped_total + (rs ? rs->total : 0), shown = 0;
	for (int pass = 0; pass < 2; pass++) {
		const struct gf_charge_skip *s =
			pass ? res->skipped : (rs ? rs->v : NULL);
		size_t n = pass ? res->nskipped : (rs ? rs->n : 0);
		for (size_t i = 0; i < n; i++, shown++) {
			if (s[i].line)
				gf_buf_printf(out, "  '%s':%u: %s\n",
					      gf_charge_str(v->in, s[i].src),
					      s[i].line, s[i].why);
			else
				gf_buf_printf(out, "  '%s': %s\n",
					      gf_charge_str(v->in, s[i].src),
					      s[i].why);
		}
	}
	if (total > shown)
		gf_buf_printf(out, "  ... and %zu more\n", total - shown);
}
