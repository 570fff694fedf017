/*
 * autoscale_bench.c - `simulate autoscale` speed (issue 14).
 *
 * BENCH lines:
 *   autoscale.sim.azure_hour.<policy>   the Azure conversation trace
 *       (one hour, 19,366 requests) under each policy, the per-second
 *       series kept (s; target: well under a second each)
 *   autoscale.sim.synthetic_24h_1e7     a synthetic day of 10^7
 *       requests under the queue-depth HPA, series kept (s; target 10 s)
 *   autoscale.sim.synthetic_24h_1e7.gen drawing that day's requests (s)
 *   autoscale.sim.synthetic_24h_1e7.rss the process's peak RSS (MiB)
 *   autoscale.hpa.sync                  one HPA sync with behavior and a
 *       300 s history at 15 s syncs (ns)
 * Usage: autoscale_bench [SHARED_DIR]; the Azure lines are skipped (and
 * say so) when the trace is absent.
 */
#include <stdio.h>
#include <string.h>

#include <gpufleet/scale.h>

#include "bench.h"
#include "sim/autoscale.h"
#include "util/clock.h"

static double peak_rss_mib(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	double kib = 0;
	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "VmHWM: %lf", &kib) == 1)
			break;
	if (f)
		fclose(f);
	return kib / 1024.0;
}

static void azure_hour(const char *shared)
{
	char path[600];
	snprintf(path, sizeof(path),
		 "%s/traces/azure-llm-inference-2023/"
		 "AzureLLMInferenceTrace_conv.csv",
		 shared);
	struct gf_as_trace t;
	struct gf_err e;
	if (gf_as_trace_read(path, &t, &e)) {
		printf("# skip autoscale.sim.azure_hour: %s\n", e.msg);
		return;
	}
	struct gf_as_sim_opts o;
	gf_as_sim_opts_default(&o);
	o.series = true;
	/* timing only: the start of the earlier figures (4 replicas), and
	 * the hour as its own previous window so that static runs */
	o.start_replicas = 4;
	o.prev = &t;
	for (int p = 0; p < GF_ASP_COUNT; p++) {
		struct gf_as_result r;
		double t0 = gf_clock_ms();
		if (gf_as_simulate(&t, (enum gf_as_policy)p, &o, &r, &e)) {
			printf("# autoscale.sim.azure_hour: %s\n", e.msg);
			break;
		}
		printf("BENCH autoscale.sim.azure_hour.%s %.4f s\n",
		       gf_as_policy_name((enum gf_as_policy)p),
		       (gf_clock_ms() - t0) / 1000.0);
		gf_as_result_release(&r);
	}
	gf_as_trace_release(&t);
}

static void synthetic_day(void)
{
	struct gf_as_trace t;
	double t0 = gf_clock_ms();
	gf_as_trace_synth(&t, 10000000, 24, 1);
	double gen = (gf_clock_ms() - t0) / 1000.0;
	struct gf_as_sim_opts o;
	gf_as_sim_opts_default(&o);
	o.series = true;
	struct gf_as_result r;
	struct gf_err e;
	t0 = gf_clock_ms();
	if (gf_as_simulate(&t, GF_ASP_QUEUE, &o, &r, &e) == 0) {
		printf("BENCH autoscale.sim.synthetic_24h_1e7 %.3f s\n",
		       (gf_clock_ms() - t0) / 1000.0);
		gf_as_result_release(&r);
	} else {
		printf("# autoscale.sim.synthetic_24h_1e7: %s\n", e.msg);
	}
	printf("BENCH autoscale.sim.synthetic_24h_1e7.gen %.3f s\n", gen);
	printf("BENCH autoscale.sim.synthetic_24h_1e7.rss %.0f MiB\n",
	       peak_rss_mib());
	gf_as_trace_release(&t);
}

static void hpa_sync(void)
{
	struct gf_hpa_spec s;
	gf_hpa_spec_init(&s);
	s.max_replicas = 1000;
	s.target_milli = 6000;
	s.behavior = true;
	struct gf_hpa h;
	struct gf_err e;
	if (gf_hpa_init(&h, &s, &e))
		return;
	int32_t cur = 10;
	const int n = 1000000;
	double t0 = gf_clock_ms();
	for (int i = 0; i < n; i++) {
		struct gf_hpa_input in = { (int64_t)i * 15000,
					   cur,
					   cur,
					   cur,
					   true,
					   (((int64_t)i * 7919) % 600) * 1000 };
		struct gf_hpa_output out;
		BENCH_MUST(gf_hpa_sync(&h, &in, &out));
		cur = out.replicas;
	}
	printf("BENCH autoscale.hpa.sync %.0f ns\n",
	       (gf_clock_ms() - t0) * 1e6 / n);
	gf_hpa_release(&h);
}

int main(int argc, char **argv)
{
	const char *shared = argc > 1 ? argv[1] : "../shared";
	azure_hour(shared);
	synthetic_day();
	hpa_sync();
	return 0;
}
