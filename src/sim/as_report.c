/*
 * as_report.c - what `simulate autoscale` writes: the table (one row
 * per policy), its JSON, the per-tick series as CSV, and an SVG of
 * queue depth, replicas and TTFT over time (one line per policy, three
 * panels sharing the time axis).  All into bounded buffers; the SVG is
 * plain SVG 1.1 with no script.
 */
#include "sim/as_report.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "util/fmt.h"
#include "util/json.h"

void gf_as_report_table(struct gf_buf *b, const struct gf_as_result *r,
			size_t n, const struct gf_as_sim_opts *o)
{
	gf_buf_printf(b, "%-13s %9s %9s %9s %9s %7s %10s %7s %5s\n", "POLICY",
		      "P50_TTFT", "P95_TTFT", "P99_TTFT", "OVER_SLO", "OVER_%",
		      "GPU_HOURS", "EVENTS", "PEAK");
	for (size_t i = 0; i < n; i++)
		gf_buf_printf(b,
			      "%-13s %9.3f %9.3f %9.3f %9.0f %7.2f %10.2f %7d "
			      "%5d\n",
			      gf_as_policy_name(r[i].policy), r[i].p50,
			      r[i].p95, r[i].p99,
			      r[i].over_slo * (double)r[i].requests,
			      100.0 * r[i].over_slo, r[i].gpu_hours,
			      r[i].scale_events, r[i].peak_replicas);
	if (n > 0)
		gf_buf_printf(b,
			      "TTFT in seconds; SLO: TTFT <= %g s; %zu "
			      "requests; queue depth = %s, target %g per "
			      "replica; util target %g %%; occupancy target "
			      "%g %%; start %d%s, fixed %d (hindsight), max %d "
			      "replicas; warm-up %g s\n",
			      o->slo_s, r[0].requests,
			      o->qmetric == GF_AS_Q_OUTSTANDING
				      ? "waiting + in service"
				      : "waiting",
			      r[0].queue_target, o->util_target, o->occ_target,
			      r[0].start,
			      o->start_replicas ? ""
			      : o->prev		? " (previous window)"
						: " (cold)",
			      r[0].fixed, r[0].max, o->m.warmup_s);
}

static uint64_t over_requests(const struct gf_as_result *r)
{
	return (uint64_t)llround(r->over_slo * (double)r->requests);
}

/* ---- windows ----------------------------------------------------------- */

void gf_as_window_summary(const struct gf_as_window *w, size_t nw, size_t k,
			  struct gf_as_summary *s)
{
	memset(s, 0, sizeof(*s));
	s->gpu_min = s->over_min = INFINITY;
	for (size_t i = 0; i < nw; i++) {
		if (k >= w[i].n)
			continue;
		const struct gf_as_result *r = &w[i].r[k], *st = NULL;
		for (size_t p = 0; p < w[i].n; p++)
			if (w[i].r[p].policy == GF_ASP_STATIC)
				st = &w[i].r[p];
		double g = r->gpu_hours, q = (double)over_requests(r);
		s->windows++;
		s->gpu_total += g;
		s->over_total += q;
		s->gpu_min = fmin(s->gpu_min, g);
		s->gpu_max = fmax(s->gpu_max, g);
		s->over_min = fmin(s->over_min, q);
		s->over_max = fmax(s->over_max, q);
		if (!st || st == r)
			continue;
		double sg = st->gpu_hours, sq = (double)over_requests(st);
		/* GPU-hours equal to within 0.5 %: a tie on that axis */
		double eps = 0.005 * fmax(g, sg);
		int dg = g < sg - eps ? -1 : g > sg + eps ? 1 : 0;
		int dq = q < sq ? -1 : q > sq ? 1 : 0;
		if (dg <= 0 && dq <= 0 && (dg || dq))
			s->beats_static++;
		else if (dg >= 0 && dq >= 0 && (dg || dq))
			s->loses_static++;
		else if (dg || dq)
			s->trade_static++;
		else
			s->ties_static++;
	}
	if (s->windows == 0)
		s->gpu_min = s->over_min = 0;
}

static const char *window_cell(char *cell, size_t size,
			       const struct gf_as_result *r)
{
	gf_note(cell, size, "%llu/%.3f", (unsigned long long)over_requests(r),
		r->gpu_hours);
	return cell;
}

void gf_as_report_windows(struct gf_buf *b, const struct gf_as_window *w,
			  size_t nw, double window_s,
			  const struct gf_as_sim_opts *o)
{
	size_t np = nw ? w[0].n : 0;
	char cell[64];
	gf_buf_printf(b, "%-6s %8s %8s %6s", "WINDOW", "START_S", "REQUESTS",
		      "STATIC");
	for (size_t p = 0; p < np; p++)
		gf_buf_printf(b, " %13s", gf_as_policy_name(w[0].r[p].policy));
	gf_buf_putc(b, '\n');
	for (size_t i = 0; i < nw; i++) {
		gf_buf_printf(b, "%-6zu %8.0f %8zu %6d", w[i].index,
			      w[i].start_s, w[i].requests, w[i].prev_sized);
		for (size_t p = 0; p < w[i].n; p++)
			gf_buf_printf(
				b, " %13s",
				window_cell(cell, sizeof(cell), &w[i].r[p]));
		gf_buf_putc(b, '\n');
	}
	gf_buf_printf(b,
		      "(each cell: requests over the SLO / GPU-hours in "
		      "the window)\n\n%-13s %4s %9s %9s %9s %9s %9s %9s "
		      "%9s %9s %s\n",
		      "POLICY", "WIN", "GPU_H_SUM", "GPU_H_AVG", "GPU_H_MIN",
		      "GPU_H_MAX", "OVER_SUM", "OVER_AVG", "OVER_MIN",
		      "OVER_MAX", "VS_STATIC_B/L/T/=");
	for (size_t p = 0; p < np; p++) {
		struct gf_as_summary s;
		gf_as_window_summary(w, nw, p, &s);
		double n = s.windows ? (double)s.windows : 1;
		gf_buf_printf(b,
			      "%-13s %4zu %9.3f %9.3f %9.3f %9.3f %9.0f %9.1f "
			      "%9.0f %9.0f %zu/%zu/%zu/%zu\n",
			      gf_as_policy_name(w[0].r[p].policy), s.windows,
			      s.gpu_total, s.gpu_total / n, s.gpu_min,
			      s.gpu_max, s.over_total, s.over_total / n,
			      s.over_min, s.over_max, s.beats_static,
			      s.loses_static, s.trade_static, s.ties_static);
	}
	gf_buf_printf(b,
		      "%zu windows of %g s, each after the one before it "
		      "(its sizing history); SLO: TTFT <= %g s; static and "
		      "the start sized from the previous window's busiest "
		      "minute, fixed from the window's own (hindsight); "
		      "VS_STATIC: windows where the policy beats static on "
		      "both axes / loses on both / trades one for the other "
		      "/ ties (GPU-hours within 0.5 %%)\n",
		      nw, window_s, o->slo_s);
}

static void json_spread(struct gf_json *j, const char *key, double total,
			double n, double min, double max)
{
	gf_json_obj_begin(j, key);
	gf_json_double(j, "total", total);
	gf_json_double(j, "mean", total / n);
	gf_json_double(j, "min", min);
	gf_json_double(j, "max", max);
	gf_json_obj_end(j);
}

static void json_summary(struct gf_json *j, const struct gf_as_window *w,
			 size_t nw)
{
	gf_json_obj_begin(j, "summary");
	for (size_t p = 0; nw && p < w[0].n; p++) {
		struct gf_as_summary s;
		gf_as_window_summary(w, nw, p, &s);
		double n = s.windows ? (double)s.windows : 1;
		gf_json_obj_begin(j, gf_as_policy_name(w[0].r[p].policy));
		gf_json_uint(j, "windows", s.windows);
		json_spread(j, "gpu_hours", s.gpu_total, n, s.gpu_min,
			    s.gpu_max);
		json_spread(j, "over_slo_requests", s.over_total, n, s.over_min,
			    s.over_max);
		gf_json_obj_begin(j, "vs_static");
		gf_json_uint(j, "beats", s.beats_static);
		gf_json_uint(j, "loses", s.loses_static);
		gf_json_uint(j, "trades", s.trade_static);
		gf_json_uint(j, "ties", s.ties_static);
		gf_json_obj_end(j);
		gf_json_obj_end(j);
	}
	gf_json_obj_end(j);
}

/* One window's keys before its policies. */
static void json_window(struct gf_json *j, const struct gf_as_window *w)
{
	gf_json_obj_begin(j, NULL);
	gf_json_uint(j, "index", w->index);
	gf_json_double(j, "start_s", w->start_s);
	gf_json_uint(j, "requests", w->requests);
	gf_json_int(j, "static_replicas", w->prev_sized);
}

/* The "policies" array of r[0..n), through a copy of *jp. */
static void json_policies(struct gf_json *jp, const struct gf_as_result *r,
			  size_t n)
{
	struct gf_json j = *jp;
	gf_json_arr_begin(&j, "policies");
	for (size_t i = 0; i < n; i++) {
		gf_json_obj_begin(&j, NULL);
		gf_json_str(&j, "policy", gf_as_policy_name(r[i].policy));
		gf_json_uint(&j, "requests", r[i].requests);
		gf_json_double(&j, "ttft_p50_s", r[i].p50);
		gf_json_double(&j, "ttft_p95_s", r[i].p95);
		gf_json_double(&j, "ttft_p99_s", r[i].p99);
		gf_json_double(&j, "ttft_mean_s", r[i].mean);
		gf_json_double(&j, "over_slo", r[i].over_slo);
		gf_json_uint(&j, "over_slo_requests",
			     (uint64_t)llround(r[i].over_slo *
					       (double)r[i].requests));
		gf_json_double(&j, "gpu_hours", r[i].gpu_hours);
		gf_json_int(&j, "scale_events", r[i].scale_events);
		gf_json_int(&j, "peak_replicas", r[i].peak_replicas);
		gf_json_int(&j, "start_replicas", r[i].start);
		gf_json_int(&j, "max_replicas", r[i].max);
		gf_json_double(&j, "queue_target", r[i].queue_target);
		gf_json_double(&j, "end_s", r[i].end_s);
		gf_json_double(&j, "wall_s", r[i].wall_s);
		gf_json_obj_end(&j);
	}
	gf_json_arr_end(&j);
	*jp = j;
}

/* The JSON of one run (r[0..n)) or, with w, of windows (w[0..nw)). */
static void json_doc(struct gf_buf *b, const struct gf_as_result *r, size_t n,
		     const struct gf_as_window *w, size_t nw, double window_s,
		     const struct gf_as_sim_opts *o)
{
	struct gf_json j;
	gf_json_init(&j, b);
	gf_json_obj_begin(&j, NULL);
	gf_json_obj_begin(&j, "model");
	gf_json_double(&j, "prefill_tps", o->m.prefill_tps);
	gf_json_double(&j, "decode_tps", o->m.decode_tps);
	gf_json_int(&j, "max_batch", o->m.max_batch);
	gf_json_double(&j, "warmup_s", o->m.warmup_s);
	gf_json_int(&j, "gpus_per_replica", o->m.gpus);
	gf_json_obj_end(&j);
	gf_json_double(&j, "slo_ttft_s", o->slo_s);
	gf_json_str(&j, "queue_metric",
		    o->qmetric == GF_AS_Q_OUTSTANDING ? "outstanding"
						      : "waiting");
	gf_json_double(&j, "util_target_pct", o->util_target);
	gf_json_double(&j, "occ_target_pct", o->occ_target);
	if (w) {
		gf_json_double(&j, "window_s", window_s);
		gf_json_arr_begin(&j, "windows");
	}
	for (size_t k = 0; k < (w ? nw : 1); k++) {
		if (w) {
			json_window(&j, &w[k]);
			r = w[k].r;
			n = w[k].n;
		}
		json_policies(&j, r, n);
		if (w)
			gf_json_obj_end(&j);
	}
	if (w) {
		gf_json_arr_end(&j);
		json_summary(&j, w, nw);
	}
	gf_json_obj_end(&j);
	gf_buf_putc(b, '\n');
}

void gf_as_report_json(struct gf_buf *b, const struct gf_as_result *r, size_t n,
		       const struct gf_as_sim_opts *o)
{
	json_doc(b, r, n, NULL, 0, 0, o);
}

void gf_as_report_windows_json(struct gf_buf *b, const struct gf_as_window *w,
			       size_t nw, double window_s,
			       const struct gf_as_sim_opts *o)
{
	json_doc(b, NULL, 0, w, nw, window_s, o);
}

void gf_as_report_series(struct gf_buf *b, const struct gf_as_result *r,
			 size_t n, double tick_s)
{
	gf_buf_puts(b, "policy,t_s,arrivals,waiting,running,ready,warming,"
		       "desired,ttft_max_s\n");
	for (size_t i = 0; i < n; i++)
		for (size_t k = 0; k < r[i].nseries; k++) {
			const struct gf_as_point *p = &r[i].series[k];
			gf_buf_printf(b, "%s,%g,%g,%g,%g,%g,%g,%g,%.3f\n",
				      gf_as_policy_name(r[i].policy),
				      (double)k * tick_s, p->arrivals,
				      p->waiting, p->running, p->ready,
				      p->warming, p->desired, p->ttft_max);
		}
}

static const char *colour(enum gf_as_policy p)
{
	static const char *c[] = { "#d62728", "#9467bd", "#1f77b4", "#2ca02c",
				   "#7f7f7f", "#ff7f0e", "#8c564b" };
	return (unsigned)p < GF_ASP_COUNT ? c[p] : "#000000";
}

enum { W = 960, PH = 200, LM = 70, TM = 40, GAP = 40 };

/* One value of a point for panel k: queue depth, replicas, TTFT max. */
static double panel_value(const struct gf_as_point *p, int k,
			  enum gf_as_qmetric qm)
{
	if (k == 0)
		return p->waiting +
		       (qm == GF_AS_Q_OUTSTANDING ? p->running : 0);
	if (k == 1)
		return p->ready + p->warming;
	return p->ttft_max;
}

/* Points per polyline: at most ~W, the max over each bin. */
static void polyline(struct gf_buf *b, const struct gf_as_result *r, int k,
		     double y0, double ymax, double tmax, double tick_s,
		     enum gf_as_qmetric qm)
{
	size_t bins = W - LM - 20;
	gf_buf_printf(
		b,
		"<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"1\" "
		"points=\"",
		colour(r->policy));
	size_t k0 = 0;
	for (size_t bin = 0; bin < bins && k0 < r->nseries; bin++) {
		size_t k1 = (size_t)((double)(bin + 1) * tmax / tick_s /
				     (double)bins);
		if (k1 <= k0)
			k1 = k0 + 1;
		double v = 0;
		for (; k0 < k1 && k0 < r->nseries; k0++) {
			double x = panel_value(&r->series[k0], k, qm);
			if (x > v)
				v = x;
		}
		double px = LM + (double)bin;
		double py =
			y0 + PH - (ymax > 0 ? fmin(v, ymax) / ymax : 0) * PH;
		gf_buf_printf(b, "%.1f,%.1f ", px, py);
	}
	gf_buf_puts(b, "\"/>\n");
}

void gf_as_report_svg(struct gf_buf *b, const struct gf_as_result *r, size_t n,
		      const struct gf_as_sim_opts *o, const char *title)
{
	static const char *names[] = { "queue depth (requests)",
				       "replicas (ready + warming)",
				       "TTFT, max per second (s)" };
	double tmax = 0, ymax[3] = { 0, 0, 0 };
	for (size_t i = 0; i < n; i++) {
		double t = (double)r[i].nseries * o->tick_s;
		if (t > tmax)
			tmax = t;
		for (size_t k = 0; k < r[i].nseries; k++)
			for (int p = 0; p < 3; p++) {
				double v = panel_value(&r[i].series[k], p,
						       o->qmetric);
				if (v > ymax[p])
					ymax[p] = v;
			}
	}
	/* TTFT: clip at 10 x the SLO so the SLO line stays readable */
	if (ymax[2] > 10 * o->slo_s)
		ymax[2] = 10 * o->slo_s;
	int height = TM + 3 * (PH + GAP) + 20;
	gf_buf_printf(
		b,
		"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		"<svg xmlns=\"http://www.w3.org/2000/svg\" "
		"width=\"%d\" height=\"%d\" font-family=\"sans-serif\" "
		"font-size=\"11\">\n"
		"<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n"
		"<text x=\"%d\" y=\"20\" font-size=\"14\">",
		W, height, LM);
	for (const char *s = title; s && *s; s++) {
		if (*s == '<')
			gf_buf_puts(b, "&lt;");
		else if (*s == '&')
			gf_buf_puts(b, "&amp;");
		else
			gf_buf_putc(b, *s);
	}
	gf_buf_puts(b, "</text>\n");
	for (int p = 0; p < 3; p++) {
		double y0 = TM + p * (PH + GAP);
		gf_buf_printf(b,
			      "<rect x=\"%d\" y=\"%.0f\" width=\"%d\" "
			      "height=\"%d\" fill=\"none\" stroke=\"#ccc\"/>\n"
			      "<text x=\"%d\" y=\"%.0f\">%s</text>\n"
			      "<text x=\"%d\" y=\"%.0f\" text-anchor=\"end\">"
			      "%.4g</text>\n"
			      "<text x=\"%d\" y=\"%.0f\" text-anchor=\"end\">"
			      "0</text>\n",
			      LM, y0, W - LM - 20, PH, LM + 4, y0 - 4, names[p],
			      LM - 4, y0 + 10, ymax[p], LM - 4, y0 + PH);
		if (p == 2 && ymax[2] > 0)
			gf_buf_printf(b,
				      "<line x1=\"%d\" x2=\"%d\" y1=\"%.1f\" "
				      "y2=\"%.1f\" stroke=\"#000\" "
				      "stroke-dasharray=\"4 3\"/>\n",
				      LM, W - 20,
				      y0 + PH - o->slo_s / ymax[2] * PH,
				      y0 + PH - o->slo_s / ymax[2] * PH);
		for (size_t i = 0; i < n; i++)
			polyline(b, &r[i], p, y0, ymax[p], tmax, o->tick_s,
				 o->qmetric);
	}
	double ly = TM + 3 * (PH + GAP) - 20;
	gf_buf_printf(b,
		      "<text x=\"%d\" y=\"%.0f\">0 s</text>\n"
		      "<text x=\"%d\" y=\"%.0f\" text-anchor=\"end\">%.0f s"
		      "</text>\n",
		      LM, ly - 8, W - 20, ly - 8, tmax);
	for (size_t i = 0; i < n; i++)
		gf_buf_printf(
			b, "<text x=\"%d\" y=\"%.0f\" fill=\"%s\">%s</text>\n",
			LM + 120 * (int)i, ly + 12, colour(r[i].policy),
			gf_as_policy_name(r[i].policy));
	gf_buf_puts(b, "</svg>\n");
}
