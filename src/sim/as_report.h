/*
 * as_report.h - the outputs of `simulate autoscale` (as_report.c): a
 * table, JSON, the per-tick series as CSV, an SVG plot.  Each appends
 * to a bounded buffer; the caller checks gf_buf_error() once.
 */
#ifndef GF_SIM_AS_REPORT_H
#define GF_SIM_AS_REPORT_H

#include <stddef.h>

#include "sim/autoscale.h"
#include "util/buf.h"

/* One window of `simulate autoscale --windows`: its requests simulated
 * on their own under each policy (r[0..n)), sized from the window
 * before it. */
struct gf_as_window {
	size_t index;	    /* window number in the trace, from 0 */
	double start_s;	    /* from the trace's first arrival */
	size_t requests;    /* arriving in the window */
	int32_t prev_sized; /* static's size, from the window before */
	struct gf_as_result r[GF_ASP_COUNT];
	size_t n;
};

/* One policy (index k in each window's r) over the windows. */
struct gf_as_summary {
	size_t windows;
	double gpu_total, gpu_min, gpu_max;
	double over_total, over_min, over_max; /* requests over the SLO */
	/* against static in the same window: better on both axes (or
	 * equal on one), worse on both, better on one and worse on the
	 * other, equal (GPU-hours within 0.5 %) */
	size_t beats_static, loses_static, trade_static, ties_static;
};

void gf_as_window_summary(const struct gf_as_window *w, size_t nw, size_t k,
			  struct gf_as_summary *s);

void gf_as_report_table(struct gf_buf *b, const struct gf_as_result *r,
			size_t n, const struct gf_as_sim_opts *o);
void gf_as_report_json(struct gf_buf *b, const struct gf_as_result *r, size_t n,
		       const struct gf_as_sim_opts *o);
/* Per window, one cell per policy (over the SLO / GPU-hours), then the
 * summary per policy: sum, mean, min and max, and the count against
 * static. */
void gf_as_report_windows(struct gf_buf *b, const struct gf_as_window *w,
			  size_t nw, double window_s,
			  const struct gf_as_sim_opts *o);
void gf_as_report_windows_json(struct gf_buf *b, const struct gf_as_window *w,
			       size_t nw, double window_s,
			       const struct gf_as_sim_opts *o);
/* policy,t_s,arrivals,waiting,running,ready,warming,desired,ttft_max_s */
void gf_as_report_series(struct gf_buf *b, const struct gf_as_result *r,
			 size_t n, double tick_s);
void gf_as_report_svg(struct gf_buf *b, const struct gf_as_result *r, size_t n,
		      const struct gf_as_sim_opts *o, const char *title);

#endif
