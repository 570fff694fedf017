/*
 * report.h - summaries of fill runs over seeds, and their text, JSON and
 * CSV forms.
 */
#ifndef GF_SIM_REPORT_H
#define GF_SIM_REPORT_H

#include <gpufleet/err.h>
#include <gpufleet/sim.h>

#include "util/buf.h"

/* The arrived-load points every report shows. */
#define GF_REPORT_NPOINTS 6
extern const int gf_report_points[GF_REPORT_NPOINTS];

struct gf_fill_summary {
	enum gf_policy policy;
	int nseeds;
	double unalloc_mean[GF_FILL_BINS];
	double unalloc_min[GF_FILL_BINS];
	double unalloc_max[GF_FILL_BINS];
	double frag_ratio_mean[GF_FILL_BINS];
	double frag_amount_mean[GF_FILL_BINS];
	bool have[GF_FILL_BINS]; /* every seed had a value at this load */
	double failed_mean;
	double arrivals_mean;
	double wall_s_mean; /* per run */
};

/* Summarise one policy's runs (one per seed); wall_s[i] per run. */
void gf_fill_summarise(enum gf_policy p, const struct gf_fill_result *runs,
		       const double *wall_s, int nseeds,
		       struct gf_fill_summary *out);

/*
 * The optimum's bound (sim/bound.h), when `--bound` asked for it: its
 * summary over seeds (unalloc_mean: the mean of each seed's bound), the
 * time it took in all, the linear programs solved and their size.
 */
struct gf_report_bound {
	const struct gf_fill_summary *s;
	double wall_s;
	int lps, ntypes, nclasses;
};

struct gf_report_info {
	int nodes;
	int64_t gpus;
	int requests;
	double tune; /* demand x capacity; 0: not scaled (JSON null) */
	const uint64_t *seeds;
	int nseeds;
	const char *source; /* "trace" description or "built-in" */
	const struct gf_report_bound *bound; /* NULL: not computed */
};

/* "42-51" for a run of seeds, "7" for one, "1,..." for a list. */
void gf_report_seeds_text(const uint64_t *seeds, int nseeds, char *out,
			  size_t size);

int gf_report_text(const struct gf_report_info *info,
		   const struct gf_fill_summary *s, int n,
		   struct gf_buf *out) GF_MUST_CHECK;
/*
 * The summary as JSON: the inputs, then per policy the unallocated and
 * fragmentation figures at gf_report_points, failed_mean, arrivals_mean,
 * wall_s, and "curve": the columns of gf_report_curve_csv (arrived_pct,
 * unallocated_mean/min/max, frag_ratio_mean, frag_amount_mean) as
 * arrays, one entry per arrived load every seed reached (added by issue
 * 16 for `gpufleet report`; keys are only ever added).  With info->bound,
 * a top-level "bound": {"unallocated_pct": {"90": ...}, ...} (issue 23).
 */
int gf_report_json(const struct gf_report_info *info,
		   const struct gf_fill_summary *s, int n,
		   struct gf_buf *out) GF_MUST_CHECK;
/* policy,arrived_pct,unallocated_mean,min,max,frag_ratio,frag_amount */
int gf_report_curve_csv(const struct gf_fill_summary *s, int n,
			struct gf_buf *out) GF_MUST_CHECK;

#endif
