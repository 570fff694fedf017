/*
 * mig_sim.c - static MIG layouts against planned ones.
 *
 * A static layout L serves a demand d with max over profiles of
 * ceil(d_p / L_p) GPUs, and cannot serve it at all when some demanded
 * profile is not in L (a 3g request does not run on 1g instances).  The
 * planned count is the planner's fewest GPUs serving everything.
 */
#include "sim/mig_sim.h"

#include <stdio.h>
#include <string.h>

#include <gpufleet/rng.h>

#include "util/clock.h"
#include "util/fmt.h"
#include "util/mem.h"

/* GPUs a static layout (counts per profile index) needs; -1 if never. */
static int static_need(const struct gf_mig_model *m, const int *layout,
		       const struct gf_migsim_mix *mix, const int *demand,
		       int nmix)
{
	int need = 0;
	for (int k = 0; k < nmix; k++) {
		if (demand[k] == 0)
			continue;
		int p = gf_mig_profile_find(m, mix[k].profile);
		if (p < 0 || layout[p] == 0)
			return -1;
		int n = (demand[k] + layout[p] - 1) / layout[p];
		need = n > need ? n : need;
	}
	return need;
}

/* The smallest profile of a class (not +me) in m, or -1. */
static int class_profile(const struct gf_mig_model *m, enum gf_mig_class c)
{
	for (int i = 0; i < m->nprofiles; i++)
		if (m->profiles[i].cls == c && !m->profiles[i].me)
			return i;
	return -1;
}

int gf_migsim_run(const struct gf_mig_model *m, const struct gf_migsim_mix *mix,
		  int nmix, int requests, uint64_t seed,
		  struct gf_migsim_row rows[GF_MIGSIM_POINTS], struct gf_err *e)
{
	int total_w = 0;
	if (nmix <= 0 || nmix > GF_MIG_MAX_DEMANDS || requests <= 0)
		return gf_err_set(e, GF_EINVAL, "empty mix or no requests");
	for (int k = 0; k < nmix; k++) {
		if (gf_mig_profile_find(m, mix[k].profile) < 0)
			return gf_err_set(e, GF_EINVAL,
					  "%s has no profile '%s'", m->id,
					  mix[k].profile);
		if (mix[k].weight < 0)
			return gf_err_set(e, GF_EINVAL, "negative weight");
		total_w += mix[k].weight;
	}
	if (total_w == 0)
		return gf_err_set(e, GF_EINVAL, "all weights are 0");
	/* the static layouts, per profile index */
	int all1g[GF_MIG_MAX_PROFILES] = { 0 },
	    bal[GF_MIG_MAX_PROFILES] = { 0 };
	int p1 = class_profile(m, GF_MIG_1G), p2 = class_profile(m, GF_MIG_2G);
	int p3 = class_profile(m, GF_MIG_3G);
	if (p1 >= 0)
		all1g[p1] = m->profiles[p1].max;
	if (m->slices == 8 && p1 >= 0 && p2 >= 0 && p3 >= 0) {
		bal[p1] = 2;
		bal[p2] = 1;
		bal[p3] = 1;
	} else if (p1 >= 0 && p2 >= 0) { /* A30: 2 x 1g + 2g */
		bal[p1] = 2;
		bal[p2] = 1;
	}
	struct gf_rng r;
	gf_rng_seed(&r, seed);
	int demand[GF_MIG_MAX_DEMANDS] = { 0 };
	int point = 0;
	for (int i = 1; i <= requests && point < GF_MIGSIM_POINTS; i++) {
		int x = (int)gf_rng_below(&r, (uint64_t)total_w), k = 0;
		while (x >= mix[k].weight)
			x -= mix[k++].weight;
		demand[k]++;
		if (i != requests * (point + 1) / GF_MIGSIM_POINTS)
			continue;
		struct gf_migsim_row *row = &rows[point++];
		memset(row, 0, sizeof(*row));
		row->requests = i;
		memcpy(row->demand, demand, sizeof(demand));
		row->all_1g = static_need(m, all1g, mix, demand, nmix);
		row->all_balanced = static_need(m, bal, mix, demand, nmix);
		/* planned: a fleet big enough for everything, then the
		 * planner's fewest GPUs */
		int ngpus = 0;
		for (int k2 = 0; k2 < nmix; k2++)
			ngpus += demand[k2];
		if (ngpus > GF_MIG_MAX_GPUS)
			return gf_err_set(e, GF_ETOOBIG,
					  "more than %d requests at a point",
					  GF_MIG_MAX_GPUS);
		struct gf_mig_gpu *g = gf_calloc((size_t)ngpus, sizeof(*g));
		for (int j = 0; j < ngpus; j++)
			g[j].model = m;
		struct gf_mig_demand d[GF_MIG_MAX_DEMANDS];
		memset(d, 0, sizeof(d));
		for (int k2 = 0; k2 < nmix; k2++) {
			gf_note(d[k2].profile, sizeof(d[k2].profile), "%s",
				mix[k2].profile);
			d[k2].count = demand[k2];
		}
		struct gf_mig_plan plan;
		struct gf_mig_plan_opts po = { .clock_ms = gf_clock_ms };
		int rc = gf_mig_plan_with(g, ngpus, d, nmix, &po, &plan, e);
		gf_free(g);
		if (rc)
			return rc;
		row->planned = plan.used_gpus;
		row->planned_optimal = plan.proved[0] && plan.proved[1];
		row->plan_ms = plan.solve_ms;
		gf_mig_plan_release(&plan);
	}
	return 0;
}
