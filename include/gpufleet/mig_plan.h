/*
 * mig_plan.h - choose MIG layouts for a fleet of GPUs that serve a demand
 * mix, in this order of priority:
 *   1. serve the most demand, counted in memory slices (a 3g.40gb on an
 *      H100 counts 4, a 1g.10gb counts 1);
 *   2. use the fewest GPUs (a GPU with any instance counts as used);
 *   3. move no busy instance (a hard rule) and change the fewest GPUs.
 * Exact: integer programs over per-GPU layouts (patterns), solved by
 * GLPK's branch and cut; docs/mig.md argues the choice.  A search cut
 * short by its time limit (large, varied fleets) keeps its best plan and
 * reports how far it may be from optimal (bound_slices, bound_gpus).  Demand
 * larger than the fleet is not an error: the rest is reported unserved.
 */
#ifndef GPUFLEET_MIG_PLAN_H
#define GPUFLEET_MIG_PLAN_H

#include <gpufleet/mig.h>

#define GF_MIG_MAX_GPUS	   4096
#define GF_MIG_MAX_DEMANDS 32

struct gf_mig_gpu {
	const struct gf_mig_model *model;
	struct gf_mig_layout current; /* instances there now (busy flags) */
};

struct gf_mig_demand {
	char profile[32]; /* a profile name, e.g. "1g.10gb" */
	int count;
};

struct gf_mig_gpu_plan {
	struct gf_mig_layout layout; /* final, in creation order */
	bool used;
	bool changed;
	int ndestroy; /* current instances to destroy (idle, not kept) */
	struct gf_mig_instance destroy[GF_MIG_MAX_INSTANCES];
	int ncreate; /* instances to create, largest first */
	struct gf_mig_instance create[GF_MIG_MAX_INSTANCES];
};

struct gf_mig_plan {
	int ngpus;
	struct gf_mig_gpu_plan *gpus; /* ngpus entries */
	int ndemands;
	int served[GF_MIG_MAX_DEMANDS]; /* instances, per demand */
	int unserved[GF_MIG_MAX_DEMANDS];
	long served_slices, demand_slices; /* memory slices */
	int used_gpus, changed_gpus;
	bool optimal;	     /* the solver proved all three objectives */
	bool proved[3];	     /* per objective: served, GPUs, unchanged */
	double bound_slices; /* LP upper bound on served slices */
	double bound_gpus;   /* lower bound on GPUs used, at that service */
	double solve_ms;
};

/*
 * Plan.  Errors (e->msg says what and where): GF_EINVAL for an unknown
 * profile on every GPU model of the fleet, a current layout that breaks
 * the rules, too many GPUs or demands; GF_ENOTSUP when the solver fails.
 * p->gpus is allocated; release with gf_mig_plan_release().
 */
int gf_mig_plan(const struct gf_mig_gpu *gpus, int ngpus,
		const struct gf_mig_demand *d, int nd, struct gf_mig_plan *p,
		struct gf_err *e);
void gf_mig_plan_release(struct gf_mig_plan *p);

#endif
