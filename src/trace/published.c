/*
 * published.c - reading the authors' analysis_allo_discrete.csv: one row
 * per (workload, sc_policy, tune, seed) and one column per arrived-load
 * percent holding the allocation %.
 */
#include "trace/published.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/csv.h"
#include "util/fmt.h"

/* sc_policy labels of the published files by policy; NULL for ours
 * that the paper did not run (FGD+): NAN */
static const char *const labels[GF_POLICY_COUNT] = {
	[GF_POLICY_RANDOM] = "01-Random",
	[GF_POLICY_DOTPROD] = "02-DotProd",
	[GF_POLICY_CLUSTERING] = "03-GpuClustering",
	[GF_POLICY_PACKING] = "04-GpuPacking",
	[GF_POLICY_BESTFIT] = "05-BestFit",
	[GF_POLICY_FGD] = "06-FGD",
};

int gf_published_unalloc(const char *csv_path, const char *trace, int nseeds,
			 int pct, double out[GF_POLICY_COUNT], struct gf_err *e)
{
	char col[16], name[96];
	if (gf_fmt(col, sizeof(col), "%d", pct) ||
	    gf_fmt(name, sizeof(name), "openb_pod_list_%s", trace))
		return gf_err_set(e, GF_ETOOBIG,
				  "trace variant '%.40s': too long", trace);
	struct gf_csv c;
	int rc = gf_csv_open(&c, csv_path, e);
	if (rc)
		return rc;
	int cw = gf_csv_column(&c, "workload");
	int cp = gf_csv_column(&c, "sc_policy");
	int cs = gf_csv_column(&c, "seed");
	int cv = gf_csv_column(&c, col);
	if (cw < 0 || cp < 0 || cs < 0 || cv < 0) {
		gf_csv_close(&c);
		return gf_err_set(e, GF_EPARSE,
				  "%s: not a published results file (needs "
				  "workload, sc_policy, seed, %s)",
				  csv_path, col);
	}
	int count[GF_POLICY_COUNT] = { 0 };
	double sum[GF_POLICY_COUNT] = { 0 };
	while ((rc = gf_csv_next(&c, e)) > 0) {
		long seed = strtol(gf_csv_get(&c, cs), NULL, 10);
		if (seed < 42 || seed >= 42 + nseeds ||
		    strcmp(gf_csv_get(&c, cw), name) != 0)
			continue;
		for (int p = 0; p < GF_POLICY_COUNT; p++)
			if (labels[p] &&
			    strcmp(gf_csv_get(&c, cp), labels[p]) == 0) {
				sum[p] += 100.0 -
					  strtod(gf_csv_get(&c, cv), NULL);
				count[p]++;
			}
	}
	gf_csv_close(&c);
	for (int p = 0; p < GF_POLICY_COUNT; p++)
		out[p] = count[p] ? sum[p] / count[p] : NAN;
	return rc < 0 ? rc : 0;
}
