/*
 * report_html.c - the simulators' documents (read by report_read.c)
 * drawn as one self-contained page (report_html.h): line charts in inline SVG
 * (no clipPath: nothing the page refers to by url()), points outside
 * the x range dropped and y clamped to the axis; a series longer than
 * two points per pixel column keeps each column's lowest and highest
 * point, so peaks survive and the page stays small.
 */
#include "sim/report_html.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gpufleet/sched.h>

#include "util/fmt.h"
#include "util/html_page.h"
#include "util/mem.h"

/* -- drawing ---------------------------------------------------------------*/

#define W	 960
#define H	 340
#define M_LEFT	 70
#define M_RIGHT	 20
#define M_TOP	 14
#define M_BOTTOM 46

/* One colour per policy of the table, the same on every chart. */
static const char *const pol_colour[] = {
	"#9a9a9a", /* random */
	"#56b4e9", /* dotprod */
	"#009e73", /* clustering */
	"#7f3c8d", /* packing */
	"#cc79a7", /* bestfit */
	"#d55e00", /* fgd */
	"#0b4ea2", /* fgdplus */
};
static const char *const other_colour[] = { "#6a3d9a", "#b15928", "#1f78b4",
					    "#33a02c", "#e31a1c", "#444444" };

static const char *colour_of(const char *name, int i)
{
	enum gf_policy p;
	if (gf_policy_parse(name, &p) == 0 &&
	    (size_t)p < sizeof(pol_colour) / sizeof(pol_colour[0]))
		return pol_colour[p];
	return other_colour[(size_t)i %
			    (sizeof(other_colour) / sizeof(other_colour[0]))];
}

static const char *label_of(const char *name)
{
	enum gf_policy p;
	return gf_policy_parse(name, &p) == 0 ? gf_policy_label(p) : name;
}

struct line {
	const char *name, *colour;
	const double *x, *y, *lo, *hi; /* lo, hi: a band, or NULL */
	size_t n;
	double scale; /* y drawn as y x scale */
};

struct axes {
	const char *id, *aria, *xlabel, *ylabel;
	double x0, x1, y0, y1;
	double xdiv;	/* tick labels show x / xdiv */
	bool legend;	/* in the plot, top right */
	bool wide_band; /* draw the lo..hi bands */
};

static double px(const struct axes *a, double x)
{
	return M_LEFT + (x - a->x0) / (a->x1 - a->x0) * (W - M_LEFT - M_RIGHT);
}

static double py(const struct axes *a, double y)
{
	double h = H - M_TOP - M_BOTTOM;
	if (y < a->y0)
		y = a->y0;
	if (y > a->y1)
		y = a->y1;
	return M_TOP + h - (y - a->y0) / (a->y1 - a->y0) * h;
}

static void num_text(char *out, size_t size, double v)
{
	if (fabs(v) < 1e-9)
		v = 0;
	gf_note(out, size, "%.6g", v);
}

static void grid(struct gf_buf *b, const struct axes *a)
{
	double ys = gf_html_nice((a->y1 - a->y0) / 6);
	double xs = gf_html_nice((a->x1 - a->x0) / a->xdiv / 10) * a->xdiv;
	char t[32];
	for (double y = ceil(a->y0 / ys) * ys; y <= a->y1 + ys * 1e-6;
	     y += ys) {
		num_text(t, sizeof(t), y);
		gf_buf_printf(b,
			      "<line x1=\"%d\" x2=\"%d\" y1=\"%.1f\" "
			      "y2=\"%.1f\" stroke=\"#e6e6e6\"/><text x=\"%d\" "
			      "y=\"%.1f\" font-size=\"11\" text-anchor=\"end\" "
			      "fill=\"#555\">%s</text>\n",
			      M_LEFT, W - M_RIGHT, py(a, y), py(a, y),
			      M_LEFT - 6, py(a, y) + 4, t);
	}
	for (double x = ceil(a->x0 / xs) * xs; x <= a->x1 + xs * 1e-6;
	     x += xs) {
		num_text(t, sizeof(t), x / a->xdiv);
		gf_buf_printf(
			b,
			"<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%d\" "
			"y2=\"%d\" stroke=\"#f0f0f0\"/><text x=\"%.1f\" "
			"y=\"%d\" font-size=\"11\" "
			"text-anchor=\"middle\" fill=\"#555\">%s</text>\n",
			px(a, x), px(a, x), M_TOP, H - M_BOTTOM, px(a, x),
			H - M_BOTTOM + 16, t);
	}
	gf_buf_printf(b,
		      "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" "
		      "fill=\"none\" stroke=\"#888\"/>\n",
		      M_LEFT, M_TOP, W - M_LEFT - M_RIGHT,
		      H - M_TOP - M_BOTTOM);
	gf_buf_printf(b,
		      "<text x=\"%d\" y=\"%d\" font-size=\"13\" "
		      "text-anchor=\"middle\">",
		      (W + M_LEFT - M_RIGHT) / 2, H - 8);
	gf_html_esc(b, a->xlabel);
	gf_buf_printf(b,
		      "</text>\n<text transform=\"translate(16 %d) "
		      "rotate(-90)\" font-size=\"13\" "
		      "text-anchor=\"middle\">",
		      (H - M_BOTTOM + M_TOP) / 2);
	gf_html_esc(b, a->ylabel);
	gf_buf_puts(b, "</text>\n");
}

/* Indexes of the points drawn: those in the x range, at most the lowest
 * and the highest of each pixel column (in their order). */
static size_t pick(const struct axes *a, const struct line *l, size_t *idx)
{
	size_t k = 0, cols = W - M_LEFT - M_RIGHT;
	bool thin = l->n > 2 * cols;
	long col = -1;
	size_t lo = 0, hi = 0;
	for (size_t i = 0; i < l->n; i++) {
		if (l->x[i] < a->x0 || l->x[i] > a->x1 || isnan(l->y[i]))
			continue;
		if (!thin) {
			idx[k++] = i;
			continue;
		}
		long c = lround(px(a, l->x[i]));
		if (c != col) {
			if (col >= 0) {
				idx[k++] = lo < hi ? lo : hi;
				if (lo != hi)
					idx[k++] = lo < hi ? hi : lo;
			}
			col = c;
			lo = hi = i;
		}
		if (l->y[i] < l->y[lo])
			lo = i;
		if (l->y[i] > l->y[hi])
			hi = i;
	}
	if (thin && col >= 0) {
		idx[k++] = lo < hi ? lo : hi;
		if (lo != hi)
			idx[k++] = lo < hi ? hi : lo;
	}
	return k;
}

static void band(struct gf_buf *b, const struct axes *a, const struct line *l,
		 const size_t *idx, size_t k)
{
	if (!l->lo || !l->hi || k < 2)
		return;
	gf_buf_printf(
		b,
		"<polygon class=\"band\" fill=\"%s\" fill-opacity=\"0.14\" "
		"stroke=\"none\" points=\"",
		l->colour);
	for (size_t j = 0; j < k; j++)
		gf_buf_printf(b, "%.1f,%.1f ", px(a, l->x[idx[j]]),
			      py(a, l->hi[idx[j]] * l->scale));
	for (size_t j = k; j-- > 0;)
		gf_buf_printf(b, "%.1f,%.1f ", px(a, l->x[idx[j]]),
			      py(a, l->lo[idx[j]] * l->scale));
	gf_buf_puts(b, "\"/>\n");
}

static void polyline(struct gf_buf *b, const struct axes *a,
		     const struct line *l, const size_t *idx, size_t k)
{
	gf_buf_puts(b, "<polyline class=\"curve\" data-policy=\"");
	gf_html_esc(b, l->name);
	gf_buf_printf(b,
		      "\" fill=\"none\" stroke=\"%s\" stroke-width=\"2\" "
		      "stroke-linejoin=\"round\" points=\"",
		      l->colour);
	for (size_t j = 0; j < k; j++)
		gf_buf_printf(b, "%s%.1f,%.1f", j ? " " : "",
			      px(a, l->x[idx[j]]),
			      py(a, l->y[idx[j]] * l->scale));
	gf_buf_puts(b, "\"><title>");
	gf_html_esc(b, label_of(l->name));
	gf_buf_puts(b, "</title></polyline>\n");
}

static void svg_legend(struct gf_buf *b, const struct line *l, int nl)
{
	int w = 150, h = 10 + 18 * nl;
	int x = W - M_RIGHT - w - 10, y = M_TOP + 10;
	gf_buf_printf(b,
		      "<g class=\"legend\"><rect x=\"%d\" y=\"%d\" "
		      "width=\"%d\" height=\"%d\" fill=\"#fff\" "
		      "fill-opacity=\"0.9\" stroke=\"#bbb\"/>\n",
		      x, y, w, h);
	for (int i = 0; i < nl; i++) {
		int ly = y + 14 + 18 * i;
		gf_buf_printf(b,
			      "<line x1=\"%d\" x2=\"%d\" y1=\"%d\" y2=\"%d\" "
			      "stroke=\"%s\" stroke-width=\"3\"/><text "
			      "x=\"%d\" y=\"%d\" font-size=\"12\">",
			      x + 10, x + 36, ly, ly, l[i].colour, x + 44,
			      ly + 4);
		gf_html_esc(b, label_of(l[i].name));
		gf_buf_puts(b, "</text>\n");
	}
	gf_buf_puts(b, "</g>\n");
}

static void chart(struct gf_buf *b, const struct axes *a, const struct line *l,
		  int nl)
{
	gf_buf_puts(b, "<svg id=\"");
	gf_html_esc(b, a->id);
	gf_buf_puts(b, "\" class=\"chart\" role=\"img\" aria-label=\"");
	gf_html_esc(b, a->aria);
	gf_buf_printf(b,
		      "\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
		      "xmlns=\"http://www.w3.org/2000/svg\">\n",
		      W, H, W, H);
	grid(b, a);
	size_t most = 0;
	for (int i = 0; i < nl; i++)
		most = l[i].n > most ? l[i].n : most;
	size_t *idx = gf_calloc(most + 1, sizeof(*idx));
	if (a->wide_band)
		for (int i = 0; i < nl; i++)
			band(b, a, &l[i], idx, pick(a, &l[i], idx));
	for (int i = 0; i < nl; i++)
		polyline(b, a, &l[i], idx, pick(a, &l[i], idx));
	gf_free(idx);
	if (a->legend)
		svg_legend(b, l, nl);
	gf_buf_puts(b, "</svg>\n");
}

static void chart_id(char *out, size_t size, const char *base, int k)
{
	if (k > 1)
		gf_note(out, size, "%s-%d", base, k);
	else
		gf_note(out, size, "%s", base);
}

/* A table cell with digits decimals and a unit ("" or " %"); a dash
 * for NAN. */
static void cell(struct gf_buf *b, int digits, const char *unit, double v)
{
	if (isnan(v))
		gf_buf_puts(b, "<td>&mdash;</td>");
	else
		gf_buf_printf(b, "<td>%.*f%s</td>", digits, v, unit);
}

static void name_cell(struct gf_buf *b, const char *name, const char *colour)
{
	gf_buf_printf(b,
		      "<tr><td><i style=\"display:inline-block;width:10px;"
		      "height:10px;margin-right:6px;background:%s\"></i>",
		      colour);
	gf_html_esc(b, label_of(name));
	gf_buf_puts(b, "</td>");
}

static void fill_section(struct gf_buf *b, const struct gf_rdoc *d, int k)
{
	struct line *l = gf_calloc((size_t)d->npol, sizeof(*l));
	double xmax = 100, ymax = 0;
	for (int i = 0; i < d->npol; i++) {
		const struct gf_rdoc_fill_pol *p = &d->fill[i];
		l[i] = (struct line){ .name = p->name,
				      .colour = colour_of(p->name, i),
				      .x = p->x,
				      .y = p->y,
				      .lo = p->lo,
				      .hi = p->hi,
				      .n = p->n,
				      .scale = 1 };
		for (size_t j = 0; j < p->n; j++) {
			xmax = fmax(xmax, p->x[j]);
			if (p->x[j] >= 80)
				ymax = fmax(ymax, p->hi ? p->hi[j] : p->y[j]);
		}
	}
	xmax = ceil(xmax / 10) * 10;
	gf_buf_puts(b, "<h2>Fill: unallocated GPU against arrived load</h2>\n"
		       "<p class=\"sub\">");
	gf_html_esc(b, d->source);
	gf_buf_printf(b, "; %lld nodes, %lld GPUs; %lld requests; ",
		      (long long)d->nodes, (long long)d->gpus,
		      (long long)d->work);
	if (isnan(d->tune))
		gf_buf_puts(b, "demand not scaled");
	else
		gf_buf_printf(b, "demand scaled to %.2fx capacity", d->tune);
	gf_buf_puts(b, "; seeds ");
	gf_html_esc(b, d->seeds);
	gf_buf_puts(b, " &middot; ");
	gf_html_esc(b, d->file);
	gf_buf_puts(b, "</p>\n");
	char id[48];
	chart_id(id, sizeof(id), "chart-fill", k);
	struct axes a = {
		.id = id,
		.aria = "unallocated GPU against arrived load",
		.xlabel = "Arrived workload (% of cluster GPU capacity)",
		.ylabel = "Unallocated GPU (%)",
		.x0 = 0,
		.x1 = xmax,
		.y0 = 0,
		.y1 = 100,
		.xdiv = 1,
		.legend = true,
	};
	chart(b, &a, l, d->npol);
	gf_buf_puts(b, "<p class=\"sub\">From 80 % arrived load (mean over "
		       "seeds; shaded: min..max over seeds where the file has "
		       "them).</p>\n");
	chart_id(id, sizeof(id), "chart-fill-zoom", k);
	a.aria = "unallocated GPU against arrived load, from 80 %";
	a.x0 = 80;
	a.y1 = gf_html_nice(ymax > 0 ? ymax * 1.05 : 1);
	a.wide_band = true;
	chart(b, &a, l, d->npol);
	gf_buf_puts(b, "<table>\n<tr><th>policy</th>");
	for (int i = 0; i < GF_REPORT_NPOINTS; i++)
		gf_buf_printf(b, "<th>%d %%</th>", gf_report_points[i]);
	gf_buf_puts(b, "<th>frag @100 %</th><th>failed</th><th>run s</th>"
		       "</tr>\n");
	for (int i = 0; i < d->npol; i++) {
		const struct gf_rdoc_fill_pol *p = &d->fill[i];
		name_cell(b, p->name, l[i].colour);
		for (int j = 0; j < GF_REPORT_NPOINTS; j++)
			cell(b, 2, "", p->at[j]);
		cell(b, 1, " %", p->frag100);
		cell(b, 0, "", p->failed_mean);
		cell(b, 3, "", p->wall_s);
		gf_buf_puts(b, "</tr>\n");
	}
	gf_buf_puts(b, "</table>\n<p class=\"sub\">Unallocated GPU % at "
		       "arrived load, mean over seeds; frag: GPU fragmentation "
		       "as a share of idle GPU; failed: requests no node "
		       "could take (mean per run).</p>\n");
	gf_free(l);
}

/* Time on the x axis in the unit its span reads best in. */
static void time_unit(double span, double *div, const char **label)
{
	if (span >= 2 * 86400) {
		*div = 86400;
		*label = "Time (days)";
	} else if (span >= 2 * 3600) {
		*div = 3600;
		*label = "Time (hours)";
	} else if (span >= 120) {
		*div = 60;
		*label = "Time (minutes)";
	} else {
		*div = 1;
		*label = "Time (s)";
	}
}

/* 100 when every value (and mean) is a ratio in 0..1, else 1. */
static double ratio_scale(const struct gf_rdoc *d, bool frag)
{
	for (int i = 0; i < d->npol; i++) {
		const struct gf_rdoc_replay_pol *p = &d->replay[i];
		const double *v = frag ? p->frag : p->alloc;
		double m = frag ? p->mean_frag : p->mean_alloc;
		if (m > 1 + 1e-9)
			return 1;
		for (size_t j = 0; j < p->n; j++)
			if (v[j] > 1 + 1e-9)
				return 1;
	}
	return 100;
}

static void replay_charts(struct gf_buf *b, const struct gf_rdoc *d, int k,
			  struct line *l)
{
	double tmax = 0, fmax_ = 0, gmax = 0, amax = 0;
	double sa = ratio_scale(d, false), sf = ratio_scale(d, true);
	for (int i = 0; i < d->npol; i++) {
		const struct gf_rdoc_replay_pol *p = &d->replay[i];
		for (size_t j = 0; j < p->n; j++) {
			tmax = fmax(tmax, p->t[j]);
			amax = fmax(amax, p->alloc[j] * sa);
			fmax_ = fmax(fmax_, p->frag[j] * sf);
			gmax = fmax(gmax, p->pending_gpus[j]);
		}
	}
	double div;
	const char *xl;
	time_unit(tmax, &div, &xl);
	char id[48];
	struct axes a = { .id = id,
			  .xlabel = xl,
			  .x0 = 0,
			  .x1 = tmax > 0 ? tmax : 1,
			  .y0 = 0,
			  .xdiv = div };
	static const struct {
		const char *id, *aria;
	} what[3] = {
		{ "chart-alloc", "GPU allocation over time" },
		{ "chart-frag", "fragmentation over time" },
		{ "chart-pending", "pending GPU demand over time" },
	};
	for (int c = 0; c < 3; c++) {
		for (int i = 0; i < d->npol; i++) {
			const struct gf_rdoc_replay_pol *p = &d->replay[i];
			l[i] = (struct line){
				.name = p->name,
				.colour = colour_of(p->name, i),
				.x = p->t,
				.y = c == 0   ? p->alloc
				     : c == 1 ? p->frag
					      : p->pending_gpus,
				.n = p->n,
				.scale = c == 0	  ? sa
					 : c == 1 ? sf
						  : 1,
			};
		}
		chart_id(id, sizeof(id), what[c].id, k);
		a.aria = what[c].aria;
		if (c == 0) {
			a.ylabel = sa == 100 ? "GPU allocated (%)"
					     : "GPU allocation";
			a.y1 = sa == 100 ? 100 : gf_html_nice(amax);
		} else if (c == 1) {
			a.ylabel = sf == 100 ? "Fragmentation (%)"
					     : "Fragmentation";
			a.y1 = gf_html_nice(fmax_);
		} else {
			a.ylabel = "Pending GPU demand (GPUs)";
			a.y1 = gf_html_nice(gmax);
		}
		gf_buf_printf(b, "<h3>%s</h3>\n",
			      c == 0   ? "GPU allocation"
			      : c == 1 ? "Fragmentation"
				       : "Pending GPU demand");
		chart(b, &a, l, d->npol);
	}
}

static void replay_tables(struct gf_buf *b, const struct gf_rdoc *d,
			  const struct line *l)
{
	double sa = ratio_scale(d, false), sf = ratio_scale(d, true);
	gf_buf_puts(b, "<h3>Jobs</h3>\n<table>\n<tr><th>policy</th>"
		       "<th>seed</th><th>arrived</th><th>refused</th>"
		       "<th>started</th><th>completed</th><th>deleted</th>"
		       "<th>failed</th><th>preemptions</th>"
		       "<th>running at end</th><th>queued at end</th></tr>\n");
	for (int i = 0; i < d->npol; i++) {
		const struct gf_rdoc_replay_pol *p = &d->replay[i];
		name_cell(b, p->name, l[i].colour);
		const int64_t v[] = { p->seed,	      p->arrived,
				      p->refused,     p->started,
				      p->completed,   p->deleted,
				      p->failed,      p->preemptions,
				      p->running_end, p->queued_end };
		for (size_t j = 0; j < sizeof(v) / sizeof(v[0]); j++)
			gf_buf_printf(b, "<td>%lld</td>", (long long)v[j]);
		gf_buf_puts(b, "</tr>\n");
	}
	gf_buf_puts(b, "</table>\n<h3>Waiting, completion and use</h3>\n"
		       "<table>\n<tr><th>policy</th><th>wait p50 s</th>"
		       "<th>p95</th><th>p99</th><th>mean</th>"
		       "<th>JCT p50 s</th><th>p95</th><th>p99</th>"
		       "<th>mean</th><th>GPU alloc</th><th>frag</th>"
		       "<th>pending GPUs</th><th>GPU-hours</th>"
		       "<th>run s</th></tr>\n");
	for (int i = 0; i < d->npol; i++) {
		const struct gf_rdoc_replay_pol *p = &d->replay[i];
		name_cell(b, p->name, l[i].colour);
		const struct gf_rdoc_stat *s[2] = { &p->wait, &p->jct };
		for (int j = 0; j < 2; j++) {
			cell(b, 0, "", s[j]->p50);
			cell(b, 0, "", s[j]->p95);
			cell(b, 0, "", s[j]->p99);
			cell(b, 0, "", s[j]->mean);
		}
		cell(b, sa == 100 ? 1 : 3, sa == 100 ? " %" : "",
		     p->mean_alloc * sa);
		cell(b, sf == 100 ? 1 : 3, sf == 100 ? " %" : "",
		     p->mean_frag * sf);
		cell(b, 1, "", p->mean_pending_gpus);
		cell(b, 1, "", p->gpu_hours);
		cell(b, 2, "", p->wall_s);
		gf_buf_puts(b, "</tr>\n");
	}
	gf_buf_puts(b, "</table>\n<p class=\"sub\">Wait: arrival to start; "
		       "JCT: arrival to completion (seconds, over the jobs "
		       "that got there); GPU alloc, frag and pending GPUs: "
		       "means over the replay.</p>\n");
}

static void replay_section(struct gf_buf *b, const struct gf_rdoc *d, int k)
{
	struct line *l = gf_calloc((size_t)d->npol, sizeof(*l));
	gf_buf_puts(b, "<h2>Replay: ");
	gf_html_esc(b, d->trace);
	gf_buf_puts(b, "</h2>\n<p class=\"sub\">");
	gf_html_esc(b, d->source);
	gf_buf_printf(b, "; %lld nodes, %lld GPUs; %lld jobs",
		      (long long)d->nodes, (long long)d->gpus,
		      (long long)d->work);
	if (d->load != 1)
		gf_buf_printf(b, "; load %g (arrivals %g times as dense)",
			      d->load, d->load);
	gf_buf_puts(b, " &middot; ");
	gf_html_esc(b, d->file);
	gf_buf_puts(b, "</p>\n<div class=\"legend\">");
	for (int i = 0; i < d->npol; i++)
		gf_html_legend_item(b, colour_of(d->replay[i].name, i),
				    label_of(d->replay[i].name));
	gf_buf_puts(b, "</div>\n");
	replay_charts(b, d, k, l);
	replay_tables(b, d, l);
	gf_free(l);
}

int gf_report_html(const struct gf_rdoc *docs, int n, struct gf_buf *out)
{
	gf_html_head(out, "gpufleet simulation report",
		     "h3{font-size:15px;margin:18px 0 4px}\n"
		     "svg.chart{display:block;margin:6px 0 10px}\n");
	gf_buf_puts(out, "<h1>Simulation report</h1>\n<p class=\"sub\">");
	for (int i = 0; i < n; i++) {
		if (i)
			gf_buf_puts(out, ", ");
		gf_html_esc(out, docs[i].file);
		gf_buf_puts(out, docs[i].kind == GF_RDOC_FILL ? " (fill)"
							      : " (replay)");
	}
	gf_buf_puts(out, "</p>\n");
	int nfill = 0, nreplay = 0;
	for (int i = 0; i < n; i++) {
		if (docs[i].kind == GF_RDOC_FILL)
			fill_section(out, &docs[i], ++nfill);
		else
			replay_section(out, &docs[i], ++nreplay);
	}
	gf_buf_puts(out, "</body>\n</html>\n");
	return gf_buf_error(out);
}
