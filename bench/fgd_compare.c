/*
 * fgd_compare.c - our fill simulator against the FGD paper's published
 * per-seed results, for every trace variant that has them.
 *
 *   fgd_compare SHARED_DIR [SEEDS]       (SEEDS default 10: 42..51)
 * Prints, per trace, the published and our mean unallocated GPU % at
 * 100 % arrived load for the six policies, then BENCH lines:
 *   fgd.compare.default.<policy>.delta   ours - published, default trace
 *   fgd.compare.mean_abs_delta           over all traces x policies
 *   fgd.compare.max_abs_delta
 *   fgd.compare.wall                     for the whole matrix
 * Targets (issue 3): default trace within 0.5 points per policy; mean
 * absolute difference over the 17 x 6 cells at most 0.3 points.
 * Our FGD+ (issue 16), which the paper did not run, per trace:
 *   fill.fgdplus.<trace>_100             its unallocated GPU % at 100 %
 *   fill.fgdplus.<trace>_100.vs_fgd      minus FGD's (ours), points
 *   fill.fgdplus.<trace>_100.reduction   (FGD - FGD+) / FGD, %
 * Targets (issue 16): default <= 4.05 % (15 % under the published 4.77);
 * no trace worse than FGD by more than 0.1 points.  Every load point
 * from 90 to 130 % (issue 23: within 0.05 points of FGD): fgd_sweep.sh.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <gpufleet/sim.h>

#include "bench.h"
#include "sim/pool.h"
#include "sim/report.h"
#include "trace/published.h"
#include "trace/trace.h"

#define NTRACES 17
static const char *const traces[NTRACES] = {
	"default",    "cpu050",	    "cpu100",	  "cpu200",	 "cpu250",
	"gpushare40", "gpushare60", "gpushare80", "gpushare100", "gpuspec10",
	"gpuspec20",  "gpuspec25",  "gpuspec33",  "multigpu20",	 "multigpu30",
	"multigpu40", "multigpu50",
};
static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int load_published(const char *shared, int nseeds,
			  double pub[NTRACES][GF_POLICY_COUNT])
{
	char path[1024];
	struct gf_err e;
	snprintf(path, sizeof(path),
		 "%s/traces/alibaba-gpu-v2023/fgd_expected_results/"
		 "analysis_allo_discrete.csv",
		 shared);
	for (int t = 0; t < NTRACES; t++)
		if (gf_published_unalloc(path, traces[t], nseeds, 100, pub[t],
					 &e) != 0) {
			printf("# %s\n", e.msg);
			return -1;
		}
	return 0;
}

static int run_trace(const char *shared, const char *trace, int nseeds,
		     double ours[GF_POLICY_COUNT])
{
	char nodes[1024], pods[1024];
	snprintf(nodes, sizeof(nodes),
		 "%s/traces/alibaba-gpu-v2023/openb_node_list_gpu_node.csv",
		 shared);
	snprintf(pods, sizeof(pods),
		 "%s/traces/alibaba-gpu-v2023/openb_pod_list_%s.csv", shared,
		 trace);
	struct gf_cluster c;
	struct gf_workload w;
	struct gf_err e;
	gf_cluster_init(&c);
	gf_workload_init(&w);
	if (gf_trace_load_nodes(nodes, &c, &e) ||
	    gf_trace_load_pods(pods, &c, &w, &e)) {
		printf("# %s\n", e.msg);
		return -1;
	}
	gf_workload_sort_by_name(&w);
	gf_workload_classify(&w);
	struct gf_typical *typ;
	int ntyp = gf_typical_build(w.reqs, w.n, 0.95, &typ);
	int njobs = GF_POLICY_COUNT * nseeds;
	struct gf_fill_job *jobs = calloc((size_t)njobs, sizeof(*jobs));
	gf_fill_jobs_reference(jobs, nseeds);
	struct gf_fill_pool pool = { .c = &c,
				     .w = &w,
				     .typ = typ,
				     .ntyp = ntyp,
				     .jobs = jobs,
				     .njobs = njobs };
	BENCH_MUST(gf_fill_pool_run(&pool, 0, NULL));
	for (int p = 0; p < GF_POLICY_COUNT; p++) {
		struct gf_fill_result *res =
			calloc((size_t)nseeds, sizeof(*res));
		double *wall = calloc((size_t)nseeds, sizeof(*wall));
		struct gf_fill_summary *sum = calloc(1, sizeof(*sum));
		for (int s = 0; s < nseeds; s++)
			res[s] = jobs[p * nseeds + s].res;
		gf_fill_summarise((enum gf_policy)p, res, wall, nseeds, sum);
		ours[p] = sum->have[100] ? sum->unalloc_mean[100] : NAN;
		free(sum);
		free(wall);
		free(res);
	}
	free(jobs);
	free(typ);
	gf_workload_release(&w);
	gf_cluster_release(&c);
	return 0;
}

int main(int argc, char **argv)
{
	const char *shared = argc > 1 ? argv[1] : "../shared";
	int nseeds = argc > 2 ? atoi(argv[2]) : 10;
	if (nseeds < 1 || nseeds > 10)
		nseeds = 10;
	static double pub[NTRACES][GF_POLICY_COUNT];
	if (load_published(shared, nseeds, pub) != 0) {
		printf("# skipped FGD comparison: published results absent "
		       "(set GPUFLEET_SHARED)\n");
		return 0;
	}
	printf("# unallocated GPU %% at 100 %% arrived load, tune 1.3, seeds "
	       "42..%d: published / ours\n",
	       41 + nseeds);
	printf("%-12s", "# trace");
	for (int p = 0; p < GF_POLICY_COUNT; p++)
		printf(" %15s", gf_policy_label((enum gf_policy)p));
	printf("\n");
	double t0 = now_s(), sum_abs = 0, max_abs = 0;
	int cells = 0;
	for (int t = 0; t < NTRACES; t++) {
		double ours[GF_POLICY_COUNT];
		if (run_trace(shared, traces[t], nseeds, ours) != 0)
			continue;
		printf("%-12s", traces[t]);
		for (int p = 0; p < GF_POLICY_COUNT; p++) {
			printf("   %5.2f / %5.2f", pub[t][p], ours[p]);
			double d = ours[p] - pub[t][p];
			if (isnan(d))
				continue;
			sum_abs += fabs(d);
			max_abs = fabs(d) > max_abs ? fabs(d) : max_abs;
			cells++;
		}
		printf("\n");
		if (t == 0)
			for (int p = 0; p < GF_POLICY_COUNT; p++)
				if (!isnan(pub[0][p]))
					printf("BENCH fgd.compare.default.%s."
					       "delta %+.2f pp\n",
					       gf_policy_name(
						       (enum gf_policy)p),
					       ours[p] - pub[0][p]);
		double plus = ours[GF_POLICY_FGDPLUS],
		       fgd = ours[GF_POLICY_FGD];
		printf("BENCH fill.fgdplus.%s_100 %.2f %%\n", traces[t], plus);
		printf("BENCH fill.fgdplus.%s_100.vs_fgd %+.2f pp\n", traces[t],
		       plus - fgd);
		printf("BENCH fill.fgdplus.%s_100.reduction %.1f %%\n",
		       traces[t], 100.0 * (fgd - plus) / fgd);
		fflush(stdout);
	}
	printf("BENCH fgd.compare.cells %d count\n", cells);
	printf("BENCH fgd.compare.mean_abs_delta %.3f pp\n",
	       cells ? sum_abs / cells : NAN);
	printf("BENCH fgd.compare.max_abs_delta %.2f pp\n", max_abs);
	printf("BENCH fgd.compare.wall %.1f s\n", now_s() - t0);
	return 0;
}
