/*
 * charge_bench.c - chargeback speed and memory (issue 15).
 *
 * A year of a 1,000-GPU cluster (125 nodes of 8 GPUs, 96 cores and
 * 1 TiB each, two clusters) as 10 million usage records, generated here:
 * each GPU runs back-to-back jobs of random length (exponential, mean
 * about 50 minutes) with idle gaps, a fifth of them GPU shares of 250 to
 * 1000 milli, twenty teams, 200,000 job names; CPU and memory requests
 * and usage random.  Then one gf_charge_run aggregated by team with idle
 * shared by cost (and the capacity check), as `gpufleet chargeback
 * --aggregate namespace --share-idle` does after reading its files.
 *
 * BENCH lines:
 *   charge.aggregate.10m_records       the run (s)
 *   charge.aggregate.10m_records_rss   the process's peak RSS, input
 *                                      included (MiB)
 *   charge.aggregate.10m_records_by_node   idle by node, the same
 *                                      records (s)
 * Targets: under 10 s on 2 cores, under 2 GiB.
 * `charge_bench N` runs N records instead.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include <gpufleet/charge.h>
#include <gpufleet/rng.h>

#include "bench.h"

#define NODES	125
#define GPUS	8
#define TEAMS	20
#define PODS	200000
#define YEAR_MS (365LL * 24 * 3600 * 1000)
#define T0	1704067200000LL /* 2024-01-01T00:00:00Z */

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static uint32_t intern(struct gf_charge_input *in, const char *s)
{
	uint32_t id = 0;
	if (gf_charge_intern(in, s, strlen(s), &id)) {
		fprintf(stderr, "charge_bench: cannot intern '%s'\n", s);
		exit(1);
	}
	return id;
}

static void generate(struct gf_charge_input *in, long want)
{
	struct gf_rng r;
	gf_rng_seed(&r, 15);
	uint32_t team[TEAMS], pod[PODS], node[NODES], cluster[2];
	char name[64];
	for (int i = 0; i < TEAMS; i++) {
		snprintf(name, sizeof(name), "team-%02d", i);
		team[i] = intern(in, name);
	}
	for (int i = 0; i < PODS; i++) {
		snprintf(name, sizeof(name), "job-%06d", i);
		pod[i] = intern(in, name);
	}
	cluster[0] = intern(in, "east");
	cluster[1] = intern(in, "west");
	uint32_t src = intern(in, "bench"), main_ctr = intern(in, "main");
	for (int n = 0; n < NODES; n++) {
		snprintf(name, sizeof(name), "gpu-node-%03d", n);
		node[n] = intern(in, name);
		struct gf_charge_asset a = { T0,
					     T0 + YEAR_MS,
					     GPUS,
					     96,
					     1024,
					     2.5,
					     0.031611,
					     0.004237,
					     cluster[n % 2],
					     node[n],
					     0,
					     src,
					     (uint32_t)n + 2 };
		BENCH_MUST(gf_charge_add_asset(in, &a));
	}
	/* records per GPU lane, so that no GPU is held twice at once */
	long per_lane = want / (NODES * GPUS) + 1, made = 0;
	double mean = (double)YEAR_MS / (double)per_lane;
	for (int n = 0; n < NODES && made < want; n++)
		for (int g = 0; g < GPUS && made < want; g++) {
			int64_t t = T0;
			for (long k = 0; k < per_lane && made < want; k++) {
				double u = gf_rng_double(&r);
				int64_t len =
					(int64_t)(-log(1 - u) * mean * 0.9);
				int64_t gap = (int64_t)(gf_rng_double(&r) *
							mean * 0.2);
				struct gf_charge_record x;
				memset(&x, 0, sizeof(x));
				x.cluster = cluster[n % 2];
				x.node = node[n];
				x.ns = team[gf_rng_below(&r, TEAMS)];
				x.pod = pod[gf_rng_below(&r, PODS)];
				x.container = main_ctr;
				x.start_ms = t;
				x.end_ms = t + len;
				if (x.end_ms > T0 + YEAR_MS)
					x.end_ms = T0 + YEAR_MS;
				if (x.end_ms < x.start_ms)
					x.end_ms = x.start_ms;
				t = x.end_ms + gap;
				x.gpus = gf_rng_below(&r, 5) == 0
						 ? 0.25 * (double)(1 +
								   gf_rng_below(
									   &r,
									   4))
						 : 1;
				x.cpu_req = (double)(1 + gf_rng_below(&r, 12));
				x.cpu_use = x.cpu_req * gf_rng_double(&r) * 1.2;
				x.ram_req = (double)(8 + gf_rng_below(&r, 120));
				x.ram_use = x.ram_req * gf_rng_double(&r);
				x.other_cost = NAN;
				x.src = src;
				x.line = (uint32_t)(made + 2);
				BENCH_MUST(gf_charge_add_record(in, &x));
				made++;
			}
		}
}

static double run(const struct gf_charge_input *in, bool by_node, double *total)
{
	struct gf_charge_opts o;
	struct gf_charge_result res;
	struct gf_err e;
	gf_charge_opts_init(&o, T0, T0 + YEAR_MS);
	BENCH_MUST(gf_charge_key_parse((struct gf_charge_input *)(uintptr_t)in,
				       "namespace", &o.agg[o.nagg++], &e));
	o.share_idle = true;
	o.idle_by_node = by_node;
	double t = now_s();
	if (gf_charge_run(in, &o, &res, &e)) {
		fprintf(stderr, "charge_bench: %s\n", e.msg);
		exit(1);
	}
	t = now_s() - t;
	*total = 0;
	for (size_t i = 0; i < res.steps[0].nrows; i++)
		*total += gf_charge_row_total(&res.steps[0].rows[i]);
	if (fabs(*total - res.steps[0].asset_cost) > 1e-6 * *total)
		fprintf(stderr,
			"charge_bench: rows sum to %.2f, capacity is %.2f\n",
			*total, res.steps[0].asset_cost);
	gf_charge_result_release(&res);
	return t;
}

int main(int argc, char **argv)
{
	long want = argc > 1 ? strtol(argv[1], NULL, 10) : 10000000;
	struct gf_charge_input in;
	gf_charge_input_init(&in);
	double t = now_s();
	generate(&in, want);
	fprintf(stderr, "# charge_bench: %zu records generated in %.1f s\n",
		in.nrec, now_s() - t);
	double total;
	double s = run(&in, false, &total);
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	const char *tag = want == 10000000 ? "10m_records" : "records";
	printf("BENCH charge.aggregate.%s %.2f s\n", tag, s);
	printf("BENCH charge.aggregate.%s_rss %.0f MiB\n", tag,
	       (double)ru.ru_maxrss / 1024.0);
	s = run(&in, true, &total);
	printf("BENCH charge.aggregate.%s_by_node %.2f s\n", tag, s);
	fprintf(stderr, "# charge_bench: %zu records, %.0f priced\n", in.nrec,
		total);
	gf_charge_input_release(&in);
	return 0;
}
