/*
 * mig_bench.c - MIG planner speed.
 *
 * BENCH lines:
 *   mig.plan.64.idle / mig.plan.1024.idle     idle H100 fleets (ms)
 *   mig.plan.64.mixed / mig.plan.1024.mixed   four models, a third of
 *       the GPUs already partitioned (random valid layouts, some busy),
 *       a demand mix over every model's profiles (ms)
 *   mig.plan.*.gap       LP bound - served (units: memory slices of each
 *                        profile on the model that defines it)
 *   mig.plan.*.gpu_gap   GPUs used - lower bound (0 = proved optimal)
 * Targets (issue 4): 64 GPUs under 1 s, 1,024 under 10 s.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <gpufleet/mig_plan.h>
#include <gpufleet/rng.h>

#include "util/clock.h"

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

struct pick {
	struct gf_rng *r;
	long target, seen;
	struct gf_mig_layout out;
};

static int pick_cb(const struct gf_mig_layout *l, void *arg)
{
	struct pick *p = arg;
	if (p->seen++ == p->target) {
		p->out = *l;
		return 1;
	}
	return 0;
}

static void run(const char *name, int n, bool mixed)
{
	static const char *const ids[4] = { "h100-80gb", "a100-80gb",
					    "a100-40gb", "a30" };
	struct gf_mig_gpu *g = calloc((size_t)n, sizeof(*g));
	struct gf_rng r;
	gf_rng_seed(&r, 11);
	for (int i = 0; i < n; i++) {
		g[i].model = gf_mig_model_by_id(mixed ? ids[i % 4] : ids[0]);
		if (mixed && gf_rng_below(&r, 3) == 0) {
			struct pick p = { &r, 0, 0, { 0 } };
			long total = gf_mig_enumerate(g[i].model, NULL, NULL);
			p.target = (long)gf_rng_below(&r, (uint64_t)total);
			gf_mig_enumerate(g[i].model, pick_cb, &p);
			g[i].current = p.out;
			for (int k = 0; k < g[i].current.n; k++)
				g[i].current.inst[k].busy =
					gf_rng_below(&r, 4) == 0;
		}
	}
	struct gf_mig_demand d[16];
	int nd = 0;
	/* demand scaled to the fleet: about 70 % of its slices */
	const char *mix_h[] = { "1g.10gb", "2g.20gb", "3g.40gb", "7g.80gb" };
	const char *mix_a[] = { "1g.5gb", "2g.10gb", "3g.20gb" };
	const char *mix_30[] = { "1g.6gb", "2g.12gb", "4g.24gb" };
	int per = n / 4;
	for (int k = 0; k < 4; k++, nd++) {
		snprintf(d[nd].profile, sizeof(d[nd].profile), "%s", mix_h[k]);
		d[nd].count = (mixed ? per : n) * (k == 0 ? 2 : 1) / (k + 1);
	}
	if (mixed) {
		for (int k = 0; k < 3; k++, nd++) {
			snprintf(d[nd].profile, sizeof(d[nd].profile), "%s",
				 mix_a[k]);
			d[nd].count = per * 2 / (k + 1);
		}
		for (int k = 0; k < 3; k++, nd++) {
			snprintf(d[nd].profile, sizeof(d[nd].profile), "%s",
				 mix_30[k]);
			d[nd].count = per / (k + 1);
		}
	}
	struct gf_mig_plan p;
	struct gf_err e;
	double t0 = now_ms();
	struct gf_mig_plan_opts po = { .clock_ms = gf_clock_ms };
	if (gf_mig_plan_with(g, n, d, nd, &po, &p, &e) != 0) {
		printf("# %s: %s\n", name, e.msg);
		free(g);
		return;
	}
	double t = now_ms() - t0;
	printf("BENCH mig.plan.%s %.1f ms\n", name, t);
	printf("BENCH mig.plan.%s.gap %.0f units\n", name,
	       p.bound_units - (double)p.served_units);
	if (p.proved[1])
		printf("BENCH mig.plan.%s.gpu_gap 0 gpus\n", name);
	else if (p.bound_gpus > 0)
		printf("BENCH mig.plan.%s.gpu_gap %.0f gpus\n", name,
		       p.used_gpus - p.bound_gpus);
	printf("# %s: proved optimal: served %s, GPUs %s, unchanged %s\n", name,
	       p.proved[0] ? "yes" : "no", p.proved[1] ? "yes" : "no",
	       p.proved[2] ? "yes" : "no");
	printf("# %s: served %ld of %ld units on %d of %d GPUs, %d changed, "
	       "%s\n",
	       name, p.served_units, p.demand_units, p.used_gpus, n,
	       p.changed_gpus, p.optimal ? "optimal" : "not proved optimal");
	printf("# %s: %d groups, %d patterns, %d columns x %d rows; stages "
	       "%.1f / %.1f / %.1f ms\n",
	       name, p.ngroups, p.npatterns, p.ncols, p.nrows, p.stage_ms[0],
	       p.stage_ms[1], p.stage_ms[2]);
	gf_mig_plan_release(&p);
	free(g);
}

int main(void)
{
	run("64.idle", 64, false);
	run("1024.idle", 1024, false);
	run("64.mixed", 64, true);
	run("1024.mixed", 1024, true);
	return 0;
}
