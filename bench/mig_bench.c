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
 *   mig.propose.1000_gpus    a proposal for pending demand (issue 11):
 *       1,000 MIG GPUs of four models, a third running jobs, a third
 *       idle with free instances, a third empty; 5,000 instances
 *       pending, some limited to one model (s)
 * Targets (issue 4): 64 GPUs under 1 s, 1,024 under 10 s.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <gpufleet/mig_plan.h>
#include <gpufleet/mig_propose.h>
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

/* A random valid layout of m (r draws it). */
static struct gf_mig_layout random_layout(struct gf_rng *r,
					  const struct gf_mig_model *m)
{
	struct pick p = { r, 0, 0, { 0 } };
	long total = gf_mig_enumerate(m, NULL, NULL);
	p.target = (long)gf_rng_below(r, (uint64_t)total);
	gf_mig_enumerate(m, pick_cb, &p);
	return p.out;
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
			g[i].current = random_layout(&r, g[i].model);
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

static void run_propose(int n)
{
	static const char *const ids[4] = { "h100-80gb", "a100-80gb",
					    "a100-40gb", "a30" };
	struct gf_mig_propose_gpu *g = calloc((size_t)n, sizeof(*g));
	struct gf_rng r;
	gf_rng_seed(&r, 23);
	for (int i = 0; i < n; i++) {
		g[i].node = i / 8;
		g[i].gpu = i % 8;
		g[i].model = gf_mig_model_by_id(ids[i % 4]);
		int kind = (int)gf_rng_below(&r, 3);
		if (kind == 2)
			continue; /* empty */
		g[i].current = random_layout(&r, g[i].model);
		if (kind == 0 && g[i].current.n > 0)
			g[i].current.inst[0].busy = true;
	}
	static const struct {
		const char *model, *profile;
		int count;
	} mix[] = {
		{ NULL, "1g.10gb", 1200 },
		{ "h100-80gb", "1g.10gb", 500 },
		{ NULL, "2g.20gb", 350 },
		{ NULL, "3g.40gb", 250 },
		{ "a100-80gb", "4g.40gb", 100 },
		{ NULL, "1g.5gb", 900 },
		{ NULL, "2g.10gb", 300 },
		{ NULL, "3g.20gb", 150 },
		{ NULL, "1g.6gb", 800 },
		{ NULL, "2g.12gb", 300 },
		{ "a30", "4g.24gb", 150 },
	};
	int nd = (int)(sizeof(mix) / sizeof(mix[0]));
	struct gf_mig_propose_demand d[16];
	long asked = 0;
	for (int k = 0; k < nd; k++) {
		d[k].model =
			mix[k].model ? gf_mig_model_by_id(mix[k].model) : NULL;
		snprintf(d[k].profile, sizeof(d[k].profile), "%s",
			 mix[k].profile);
		d[k].count = mix[k].count;
		asked += mix[k].count;
	}
	struct gf_mig_proposal p;
	struct gf_err e;
	double t0 = now_ms();
	int rc = gf_mig_propose(g, n, d, nd, &p, &e);
	double t = now_ms() - t0;
	if (rc) {
		printf("# propose: %s\n", e.msg);
		free(g);
		return;
	}
	printf("BENCH mig.propose.%d_gpus %.3f s\n", n, t / 1e3);
	printf("# propose: %d GPUs (%d idle), %ld instances pending: met "
	       "%ld before, %ld after; %d GPUs changed, %s\n",
	       n, p.idle, asked, p.before, p.after, p.nchanges,
	       p.optimal ? "optimal" : "not proved optimal");
	gf_mig_proposal_release(&p);
	free(g);
}

int main(void)
{
	run("64.idle", 64, false);
	run("1024.idle", 1024, false);
	run("64.mixed", 64, true);
	run("1024.mixed", 1024, true);
	run_propose(1000);
	return 0;
}
