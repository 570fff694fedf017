/*
 * published.h - the FGD paper's published per-seed results
 * (fgd_expected_results/analysis_allo_discrete.csv), for comparisons.
 */
#ifndef GF_TRACE_PUBLISHED_H
#define GF_TRACE_PUBLISHED_H

#include <gpufleet/err.h>
#include <gpufleet/sched.h>

/*
 * Mean over seeds 42 .. 42+nseeds-1 of the published unallocated GPU %
 * (100 - allocation %) at arrived load `pct`, for trace variant `trace`
 * ("default", "cpu050", ...), per policy (NaN where absent).
 */
int gf_published_unalloc(const char *csv_path, const char *trace, int nseeds,
			 int pct, double out[GF_POLICY_COUNT],
			 struct gf_err *e) GF_MUST_CHECK;

#endif
