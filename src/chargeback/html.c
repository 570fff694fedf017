/*
 * html.c - the chargeback page: one self-contained HTML file (inline
 * CSS and SVG; no script, no font, no image, nothing fetched) with the
 * totals, a bar per row split into used, shared, idle and waste, a daily
 * trend of each row's cost as stacked columns, the table, and the waste
 * in words ("teamA: $1,240.00 on GPUs allocated and idle").
 *
 * Every name is escaped.  The charts keep their ids (chart-teams,
 * chart-trend) so that a test can find them in the rendered DOM.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chargeback/chargeback.h"
#include "util/fmt.h"
#include "util/html_page.h"
#include "util/mem.h"

#define BARS_MAX   25 /* rows drawn; the rest as one "others" bar */
#define SERIES_MAX 8  /* rows with their own colour in the trend */
#define W	   960

static const char *const palette[SERIES_MAX] = {
	"#2f6fdf", "#e69f00", "#009e73", "#cc79a7",
	"#56b4e9", "#d55e00", "#0072b2", "#f0e442",
};
#define C_USED	 "#2f6fdf"
#define C_SHARED "#8e7cc3"
#define C_IDLE	 "#b8b8b8"
#define C_WASTE	 "#e4572e"

/* "$1,240.00" (USD), "1,240.00 EUR" otherwise. */
static void money(struct gf_buf *b, const char *cur, double v)
{
	char digits[64], out[96];
	if (gf_fmt(digits, sizeof(digits), "%.2f", fabs(v))) {
		gf_buf_printf(b, "%g %s", v, cur); /* past 1e60: as it is */
		return;
	}
	char *dot = strchr(digits, '.');
	size_t ni = (size_t)(dot - digits), k = 0;
	if (v < 0 && gf_charge_round(v) != 0)
		out[k++] = '-';
	for (size_t i = 0; i < ni; i++) {
		if (i && (ni - i) % 3 == 0)
			out[k++] = ',';
		out[k++] = digits[i];
	}
	memcpy(out + k, dot, strlen(dot) + 1); /* ".dd" after < 86 bytes */
	if (strcmp(cur, "USD") == 0)
		gf_buf_printf(b, "$%s", out);
	else if (!*cur)
		gf_buf_puts(b, out);
	else
		gf_buf_printf(b, "%s %s", out, cur);
}

static const char *row_name(const struct gf_charge_row *r)
{
	return r->name[0] ? r->name : "(all)";
}

struct parts {
	double used, shared, idle, waste, total;
};

static struct parts parts_of(const struct gf_charge_row *r)
{
	struct parts p;
	p.total = gf_charge_row_total(r);
	p.idle = gf_charge_row_idle(r);
	p.waste = r->kind == GF_CHARGE_ROW_IDLE ? 0 : gf_charge_row_waste(r);
	p.shared = r->shared_cost;
	p.used = p.total - p.idle - p.waste - p.shared;
	if (p.used < 0)
		p.used = 0;
	return p;
}

static int cmp_total(const void *a, const void *b)
{
	const struct gf_charge_row *const *p = a, *const *q = b;
	double x = gf_charge_row_total(*p), y = gf_charge_row_total(*q);
	return x < y ? 1 : x > y ? -1 : strcmp((*p)->name, (*q)->name);
}

/* The step's rows by total cost, largest first (borrowed pointers). */
static const struct gf_charge_row **by_cost(const struct gf_charge_step *st)
{
	const struct gf_charge_row **v = gf_calloc(st->nrows + 1, sizeof(*v));
	for (size_t i = 0; i < st->nrows; i++)
		v[i] = &st->rows[i];
	qsort(v, st->nrows, sizeof(*v), cmp_total);
	return v;
}

static void head(struct gf_buf *b, const struct gf_cb_view *v)
{
	gf_html_head(b, v->title ? v->title : "gpufleet chargeback",
		     ".cards{display:flex;gap:12px;margin:16px 0}\n"
		     ".card{border:1px solid #ddd;border-radius:6px;"
		     "padding:10px 14px;min-width:150px}\n"
		     ".card b{display:block;font-size:20px}\n"
		     ".card span{color:#666;font-size:12px}\n"
		     "ul.waste{font-size:14px}\n");
}

static void summary(struct gf_buf *b, const struct gf_cb_view *v,
		    const struct gf_charge_step *st)
{
	char a[40], z[40], key[300] = "";
	gf_charge_time_str(st->start_ms, a, sizeof(a));
	gf_charge_time_str(st->end_ms, z, sizeof(z));
	size_t len = 0;
	for (int i = 0; i < v->o->nagg; i++) {
		char k[GF_CHARGE_STR_MAX + 8];
		gf_charge_key_name(v->in, &v->o->agg[i], k, sizeof(k));
		gf_note(key + len, sizeof(key) - len, "%s%s", i ? ", " : "", k);
		len += strlen(key + len);
		if (len + 1 >= sizeof(key))
			break; /* cut, marked "..." */
	}
	double total = 0, gh = 0, idle = 0, waste = 0;
	for (size_t i = 0; i < st->nrows; i++) {
		const struct gf_charge_row *r = &st->rows[i];
		struct parts p = parts_of(r);
		total += p.total;
		gh += r->gpu_hours;
		idle += p.idle;
		waste += p.waste;
	}
	gf_buf_puts(b, "<h1>GPU chargeback</h1>\n<div class=\"sub\">");
	gf_buf_printf(b, "%s to %s &middot; by ", a, z);
	gf_html_esc(b, key);
	gf_buf_printf(
		b, " &middot; idle %s%s &middot; MIG by %s slices</div>\n",
		v->o->share_idle ? "shared by cost" : "kept apart",
		v->o->idle_by_node ? ", per node" : "",
		v->o->mig_rule == GF_CHARGE_MIG_MEMORY ? "memory" : "compute");
	gf_buf_puts(b, "<div class=\"cards\">\n<div class=\"card\"><b>");
	money(b, v->currency, total);
	gf_buf_puts(b, "</b><span>total cost</span></div>\n"
		       "<div class=\"card\"><b>");
	money(b, "", gh);
	gf_buf_puts(b, "</b><span>GPU-hours allocated</span></div>\n"
		       "<div class=\"card\"><b>");
	money(b, v->currency, idle);
	gf_buf_puts(b, "</b><span>idle capacity</span></div>\n"
		       "<div class=\"card\"><b>");
	money(b, v->currency, waste);
	gf_buf_puts(b, "</b><span>waste on allocated GPUs</span></div>\n"
		       "</div>\n");
}

static void seg(struct gf_buf *b, double x, double y, double w, double h,
		const char *colour, const char *title, const char *cur,
		double v)
{
	if (!(w > 0.05))
		return;
	gf_buf_printf(b,
		      "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" "
		      "height=\"%.2f\" fill=\"%s\"><title>",
		      x, y, w, h, colour);
	gf_html_esc(b, title);
	gf_buf_puts(b, ": ");
	money(b, cur, v);
	gf_buf_puts(b, "</title></rect>");
}

/* One bar per row (the largest BARS_MAX), used | shared | idle | waste. */
static void bars(struct gf_buf *b, const struct gf_cb_view *v,
		 const struct gf_charge_step *st)
{
	const struct gf_charge_row **r = by_cost(st);
	size_t n = st->nrows < BARS_MAX ? st->nrows : BARS_MAX;
	struct parts rest = { 0, 0, 0, 0, 0 };
	for (size_t i = n; i < st->nrows; i++) {
		struct parts p = parts_of(r[i]);
		rest.used += p.used;
		rest.shared += p.shared;
		rest.idle += p.idle;
		rest.waste += p.waste;
		rest.total += p.total;
	}
	size_t nb = n + (st->nrows > n);
	double max = 0;
	for (size_t i = 0; i < n; i++)
		max = fmax(max, gf_charge_row_total(r[i]));
	max = fmax(max, rest.total);
	double bh = 22, gap = 8, left = 170, right = 120;
	double plot = W - left - right;
	double h = 10 + (double)nb * (bh + gap);
	gf_buf_puts(b, "<h2>Cost per row</h2>\n<div class=\"legend\">");
	gf_html_legend_item(b, C_USED, "used");
	gf_html_legend_item(b, C_SHARED, "shared costs");
	gf_html_legend_item(b, C_IDLE, "idle capacity");
	gf_html_legend_item(b, C_WASTE, "waste (diagnosed)");
	gf_buf_printf(b,
		      "</div>\n<svg id=\"chart-teams\" role=\"img\" "
		      "aria-label=\"cost per row\" width=\"%d\" "
		      "height=\"%.0f\" viewBox=\"0 0 %d %.0f\" "
		      "xmlns=\"http://www.w3.org/2000/svg\">\n",
		      W, h, W, h);
	for (size_t i = 0; i < nb; i++) {
		struct parts p = i < n ? parts_of(r[i]) : rest;
		char others[48];
		gf_note(others, sizeof(others), "(%zu others)", st->nrows - n);
		const char *name = i < n ? row_name(r[i]) : others;
		double y = 5 + (double)i * (bh + gap), x = left;
		double k = max > 0 ? plot / max : 0;
		gf_buf_printf(b,
			      "<text x=\"%.0f\" y=\"%.1f\" font-size=\"13\" "
			      "text-anchor=\"end\">",
			      left - 8, y + bh * 0.7);
		gf_html_esc(b, name);
		gf_buf_puts(b, "</text>");
		const double val[4] = { p.used, p.shared, p.idle, p.waste };
		static const char *const col[4] = { C_USED, C_SHARED, C_IDLE,
						    C_WASTE };
		static const char *const what[4] = { "used", "shared", "idle",
						     "waste" };
		for (int s = 0; s < 4; s++) {
			seg(b, x, y, val[s] * k, bh, col[s], what[s],
			    v->currency, val[s]);
			x += val[s] * k;
		}
		gf_buf_printf(b,
			      "<text x=\"%.1f\" y=\"%.1f\" font-size=\"12\" "
			      "fill=\"#444\">",
			      x + 6, y + bh * 0.7);
		money(b, v->currency, p.total);
		gf_buf_puts(b, "</text>\n");
	}
	gf_buf_puts(b, "</svg>\n");
	gf_free(r);
}

/* Series of the trend: the largest rows of the whole window. */
static int series_of(const char *name, const struct gf_charge_row **top,
		     size_t ntop)
{
	for (size_t i = 0; i < ntop; i++)
		if (strcmp(top[i]->name, name) == 0)
			return (int)i;
	return -1;
}

static void trend_axes(struct gf_buf *b, const struct gf_cb_view *v,
		       const struct gf_charge_result *d, double max,
		       double left, double top, double plot_w, double plot_h)
{
	for (int t = 0; t <= 4; t++) {
		double y = top + plot_h - plot_h * t / 4;
		gf_buf_printf(b,
			      "<line x1=\"%.0f\" x2=\"%.0f\" y1=\"%.1f\" "
			      "y2=\"%.1f\" stroke=\"#e4e4e4\"/>"
			      "<text x=\"%.0f\" y=\"%.1f\" font-size=\"11\" "
			      "text-anchor=\"end\" fill=\"#555\">",
			      left, left + plot_w, y, y, left - 6, y + 4);
		money(b, v->currency, max * t / 4);
		gf_buf_puts(b, "</text>\n");
	}
	int every = d->nsteps > 12 ? (d->nsteps + 11) / 12 : 1;
	for (int k = 0; k < d->nsteps; k += every) {
		char day[40];
		gf_charge_time_str(d->steps[k].start_ms, day, sizeof(day));
		day[10] = '\0';
		double x = left + plot_w * (k + 0.5) / d->nsteps;
		gf_buf_printf(
			b,
			"<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\" "
			"text-anchor=\"middle\" fill=\"#555\">%s</text>\n",
			x, top + plot_h + 16, day + 5);
	}
}

static void trend(struct gf_buf *b, const struct gf_cb_view *v,
		  const struct gf_charge_step *whole,
		  const struct gf_charge_result *d)
{
	gf_buf_puts(b, "<h2>Daily cost</h2>\n");
	if (!d || d->nsteps < 2) {
		gf_buf_puts(b, "<p class=\"sub\">The window is a day or less: "
			       "no daily trend.</p>\n");
		return;
	}
	const struct gf_charge_row **top = by_cost(whole);
	size_t ntop = 0;
	for (size_t i = 0; i < whole->nrows && ntop < SERIES_MAX; i++)
		if (top[i]->kind == GF_CHARGE_ROW_ALLOC)
			top[ntop++] = top[i];
	double max = 0;
	for (int k = 0; k < d->nsteps; k++) {
		double s = 0;
		for (size_t i = 0; i < d->steps[k].nrows; i++)
			s += gf_charge_row_total(&d->steps[k].rows[i]);
		max = fmax(max, s);
	}
	max = gf_html_nice(max);
	double left = 90, topm = 10, plot_w = W - left - 20, plot_h = 240;
	gf_buf_puts(b, "<div class=\"legend\">");
	for (size_t i = 0; i < ntop; i++)
		gf_html_legend_item(b, palette[i], row_name(top[i]));
	gf_html_legend_item(b, "#7f7f7f", "others");
	gf_html_legend_item(b, C_IDLE, "idle");
	gf_buf_printf(b,
		      "</div>\n<svg id=\"chart-trend\" role=\"img\" "
		      "aria-label=\"daily cost\" width=\"%d\" height=\"%.0f\" "
		      "viewBox=\"0 0 %d %.0f\" "
		      "xmlns=\"http://www.w3.org/2000/svg\">\n",
		      W, topm + plot_h + 26, W, topm + plot_h + 26);
	trend_axes(b, v, d, max, left, topm, plot_w, plot_h);
	double cw = plot_w / d->nsteps;
	for (int k = 0; k < d->nsteps; k++) {
		double y = topm + plot_h, x = left + cw * k + cw * 0.1;
		const struct gf_charge_step *st = &d->steps[k];
		char day[40];
		gf_charge_time_str(st->start_ms, day, sizeof(day));
		day[10] = '\0';
		for (size_t i = 0; i < st->nrows; i++) {
			const struct gf_charge_row *r = &st->rows[i];
			int s = series_of(r->name, top, ntop);
			const char *c = r->kind == GF_CHARGE_ROW_IDLE ? C_IDLE
					: s >= 0 ? palette[s]
						 : "#7f7f7f";
			double h = gf_charge_row_total(r) / max * plot_h;
			if (!(h > 0.05))
				continue;
			y -= h;
			char t[GF_CHARGE_STR_MAX + 48];
			gf_note(t, sizeof(t), "%s %s", day, row_name(r));
			seg(b, x, y, cw * 0.8, h, c, t, v->currency,
			    gf_charge_row_total(r));
		}
		gf_buf_putc(b, '\n');
	}
	gf_buf_puts(b, "</svg>\n");
	gf_free(top);
}

static void cell_money(struct gf_buf *b, const char *cur, double v)
{
	gf_buf_puts(b, "<td>");
	money(b, cur, v);
	gf_buf_puts(b, "</td>");
}

static void table(struct gf_buf *b, const struct gf_cb_view *v,
		  const struct gf_charge_step *st)
{
	gf_buf_puts(b, "<h2>Rows</h2>\n<table>\n<tr><th>name</th><th>total</th>"
		       "<th>GPU</th><th>CPU</th><th>RAM</th><th>shared</th>"
		       "<th>of which idle</th><th>GPU-hours</th>"
		       "<th>GPU efficiency</th><th>waste</th></tr>\n");
	const struct gf_charge_row **r = by_cost(st);
	for (size_t i = 0; i < st->nrows; i++) {
		const struct gf_charge_row *w = r[i];
		double eff = gf_charge_row_gpu_eff(w);
		gf_buf_puts(b, "<tr><td>");
		gf_html_esc(b, row_name(w));
		gf_buf_puts(b, "</td>");
		cell_money(b, v->currency, gf_charge_row_total(w));
		cell_money(b, v->currency, w->gpu_cost);
		cell_money(b, v->currency, w->cpu_cost);
		cell_money(b, v->currency, w->ram_cost);
		cell_money(b, v->currency, w->shared_cost);
		cell_money(b, v->currency, gf_charge_row_idle(w));
		gf_buf_printf(b, "<td>%.2f</td>", w->gpu_hours);
		if (isnan(eff))
			gf_buf_puts(b, "<td>&mdash;</td>");
		else
			gf_buf_printf(b, "<td>%.0f%%</td>", eff * 100);
		cell_money(b, v->currency, gf_charge_row_waste(w));
		gf_buf_puts(b, "</tr>\n");
	}
	gf_buf_puts(b, "</table>\n");
	gf_free(r);
}

static void waste_words(struct gf_buf *b, const struct gf_cb_view *v,
			const struct gf_charge_step *st)
{
	static const char *const words[GF_CHARGE_NWASTE] = {
		"on GPUs allocated and idle",
		"on GPUs starved for data",
		"on GPUs with memory over-provisioned",
	};
	gf_buf_puts(b, "<h2>Waste</h2>\n");
	const struct gf_charge_row **r = by_cost(st);
	size_t said = 0;
	for (size_t i = 0; i < st->nrows; i++)
		for (int k = 0; k < GF_CHARGE_NWASTE; k++) {
			if (!(r[i]->waste[k] >= 0.005))
				continue;
			gf_buf_puts(b, said++ ? "<li>"
					      : "<ul class=\"waste\">\n<li>");
			gf_html_esc(b, row_name(r[i]));
			gf_buf_puts(b, ": ");
			money(b, v->currency, r[i]->waste[k]);
			gf_buf_printf(b, " %s</li>\n", words[k]);
		}
	gf_buf_puts(b, said ? "</ul>\n"
			    : "<p class=\"sub\">No waste diagnosed (the "
			      "telemetry given names none, or none was "
			      "given).</p>\n");
	gf_buf_puts(
		b,
		"<p class=\"sub\">GPU efficiency is the graphics engine's "
		"activity (DCGM_FI_PROF_GR_ENGINE_ACTIVE), else SM activity, "
		"else GPU utilisation, over the GPU-hours the telemetry "
		"covers; never CPU. Waste is the GPU cost of time under the "
		"node agent's diagnoses.</p>\n");
	gf_free(r);
}

int gf_cb_render_html(const struct gf_cb_view *v,
		      const struct gf_charge_result *res,
		      const struct gf_charge_result *daily, struct gf_buf *out)
{
	const struct gf_charge_step *st = &res->steps[0];
	head(out, v);
	summary(out, v, st);
	bars(out, v, st);
	trend(out, v, st, daily);
	table(out, v, st);
	waste_words(out, v, st);
	gf_buf_puts(out, "</body>\n</html>\n");
	return gf_buf_error(out);
}
