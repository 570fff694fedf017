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

void gf_as_report_table(struct gf_buf *b, const struct gf_as_result *r,
			size_t n, const struct gf_as_sim_opts *o);
void gf_as_report_json(struct gf_buf *b, const struct gf_as_result *r, size_t n,
		       const struct gf_as_sim_opts *o);
/* policy,t_s,arrivals,waiting,running,ready,warming,desired,ttft_max_s */
void gf_as_report_series(struct gf_buf *b, const struct gf_as_result *r,
			 size_t n, double tick_s);
void gf_as_report_svg(struct gf_buf *b, const struct gf_as_result *r, size_t n,
		      const struct gf_as_sim_opts *o, const char *title);

#endif
