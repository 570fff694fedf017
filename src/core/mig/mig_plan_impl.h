/*
 * mig_plan_impl.h - internal to the MIG planner (mig_plan.c: the integer
 * programs; mig_groups.c: the GPUs grouped by model and busy instances,
 * the layout patterns each group may take, and a pattern realised on one
 * GPU).  Nothing else includes it.
 */
#ifndef GF_CORE_MIG_PLAN_IMPL_H
#define GF_CORE_MIG_PLAN_IMPL_H

#include <gpufleet/mig_plan.h>

struct pattern {
	int8_t counts[GF_MIG_MAX_PROFILES];
	int ninst;
	int holders; /* GPUs of the group holding exactly this now */
	int zcol;    /* GLPK column of z, or 0 */
};

struct group {
	const struct gf_mig_model *m;
	struct gf_mig_layout busy; /* the busy instances all its GPUs keep */
	int *gpus;
	int *curpat; /* per member: the pattern it holds now */
	int n;
	struct pattern *pat;
	int npat, cap;
	int col0; /* first GLPK column of x[g][*] */
};

/* Demand k may be served by model m (its model option, if any). */
bool gf__mig_demand_on(const struct gf_mig_plan_opts *o, int k,
		       const struct gf_mig_model *m);
/* Group g's patterns: the layouts of its model that keep its busy
 * instances, limited to demanded profiles and what its GPUs hold. */
void gf__mig_build_patterns(struct group *g, const struct gf_mig_gpu *gpus,
			    const struct gf_mig_demand *d, int nd,
			    const struct gf_mig_plan_opts *o);
/* Whether some group's model has demand d's profile (only: that model
 * alone), the largest memory it takes into *mem_max. */
int gf__mig_find_demand_mem(const struct group *g, int ng,
			    const struct gf_mig_demand *d,
			    const struct gf_mig_model *only, int *mem_max);
/* The fleet's distinct models into out: their count. */
int gf__mig_fleet_models(const struct group *g, int ng,
			 const struct gf_mig_model **out);
/* GPU gpu's final layout for pattern pat, keeping what it can. */
void gf__mig_realise(const struct group *g, const struct gf_mig_gpu *gpu,
		     const struct pattern *pat, bool unchanged,
		     struct gf_mig_gpu_plan *out);
/* The GPUs grouped by model and busy instances into g: the groups. */
int gf__mig_group_gpus(const struct gf_mig_gpu *gpus, int ngpus,
		       struct group *g);
/* Busy instances of profile p every GPU of group g keeps. */
int gf__mig_busy_count(const struct group *g, int p);
/* --fill: a used GPU's free room takes more of the demanded profiles
 * (the layout that adds the most memory), the creations listed. */
void gf__mig_fill_gpu(const struct gf_mig_gpu *gpu,
		      const struct gf_mig_demand *d, int nd,
		      const struct gf_mig_plan_opts *o,
		      struct gf_mig_gpu_plan *out);

#endif
