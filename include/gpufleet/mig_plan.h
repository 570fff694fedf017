/*
 * mig_plan.h - choose MIG layouts for a fleet of GPUs that serve a demand
 * mix, in this order of priority:
 *   1. serve the most demand, counted in units that do not depend on
 *      where an instance lands: each instance counts its profile's
 *      memory slices on the model that defines the name
 *      (gf_mig_profile_units: a 3g.40gb counts 4, a 1g.10gb 1, on an
 *      H100 or an A100 40GB alike);
 *   2. use the fewest GPUs (a GPU with any instance counts as used);
 *   3. move no busy instance (a hard rule) and change the fewest GPUs
 *      (gf_mig_plan_opts.fewest_changes puts this before 2).
 * A plan creates what is demanded and no more: a GPU it changes holds its
 * busy instances and instances that serve the demand, nothing else (a GPU
 * left unchanged keeps what it has).  Filling the rest of the GPUs used
 * is an explicit option (gf_mig_plan_opts.fill), reported apart.
 * Exact: integer programs over per-GPU layouts (patterns), solved by
 * GLPK's branch and cut; docs/mig.md argues the choice.  A search cut
 * short by its time limit (large, varied fleets) keeps its best plan and
 * reports how far it may be from optimal (bound_units, bound_gpus).  Demand
 * larger than the fleet is not an error: the rest is reported unserved.
 */
#ifndef GPUFLEET_MIG_PLAN_H
#define GPUFLEET_MIG_PLAN_H

#include <gpufleet/err.h>
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
	int ncreate; /* instances to create, largest first (fill included) */
	struct gf_mig_instance create[GF_MIG_MAX_INSTANCES];
	int nfill; /* of those, added by opts.fill beyond the demand */
	struct gf_mig_instance fill[GF_MIG_MAX_INSTANCES];
};

struct gf_mig_plan_opts {
	/* after planning, fill each used GPU's free room with more
	 * instances of the demanded profiles (the layout that covers the
	 * most memory slices, then with the fewest instances) */
	bool fill;
	/* the caller's clock, for the solve times it reports (milliseconds,
	 * any origin); NULL: times are not measured (0) */
	double (*clock_ms)(void);
	/* per demand k (nd entries), the one model whose GPUs may serve it,
	 * or NULL for any; NULL: every demand any model.  Several demands
	 * may then name the same profile (one per model, one for any): they
	 * share its instances */
	const struct gf_mig_model *const *demand_model;
	/* per demand k (nd entries), serve at least this many instances of
	 * it (0 to its count; the current layouts must allow it, as when it
	 * is what they serve now); NULL: 0 each */
	const int *demand_min;
	/* objective 2 is the fewest GPUs changed, objective 3 the fewest
	 * used (for a running fleet, where a change drains a GPU); off: the
	 * fewest used, then the fewest changed */
	bool fewest_changes;
};

struct gf_mig_plan {
	int ngpus;
	struct gf_mig_gpu_plan *gpus; /* ngpus entries */
	int ndemands;
	int served[GF_MIG_MAX_DEMANDS]; /* instances, per demand */
	int unserved[GF_MIG_MAX_DEMANDS];
	int filled[GF_MIG_MAX_DEMANDS];	 /* beyond the demand (opts.fill) */
	int units[GF_MIG_MAX_DEMANDS];	 /* per instance of the demand */
	long served_units, demand_units; /* the objective's units */
	/* memory slices of the GPUs the served instances take (a 1g.10gb
	 * takes 1 on an H100, 2 on an A100 40GB) and of the demand (each at
	 * its largest on the fleet's models) */
	long served_slices, demand_slices;
	int used_gpus, changed_gpus;
	bool fill;	    /* opts.fill was on */
	bool optimal;	    /* the solver proved all three objectives */
	bool proved[3];	    /* per objective: served, GPUs, unchanged */
	double bound_units; /* LP upper bound on served units */
	double bound_gpus;  /* lower bound on GPUs used, at that service */
	double solve_ms;
	/* the integer programs' sizes and times per objective (served,
	 * GPUs, unchanged, whatever the order solved), for logs */
	int ngroups, npatterns, ncols, nrows;
	double stage_ms[3];
};

/*
 * Plan.  Errors (e->msg says what and where): GF_EINVAL for an unknown
 * profile on every GPU model of the fleet, a current layout that breaks
 * the rules, too many GPUs or demands; GF_ENOTSUP when the solver fails.
 * p->gpus is allocated; release with gf_mig_plan_release().  Pure: no
 * I/O, no clock of its own (times come from opts->clock_ms; GLPK keeps
 * its own time limits).
 * gf_mig_plan() is gf_mig_plan_with() with every option off.
 */
int gf_mig_plan(const struct gf_mig_gpu *gpus, int ngpus,
		const struct gf_mig_demand *d, int nd, struct gf_mig_plan *p,
		struct gf_err *e) GF_MUST_CHECK;
int gf_mig_plan_with(const struct gf_mig_gpu *gpus, int ngpus,
		     const struct gf_mig_demand *d, int nd,
		     const struct gf_mig_plan_opts *o, struct gf_mig_plan *p,
		     struct gf_err *e) GF_MUST_CHECK;
void gf_mig_plan_release(struct gf_mig_plan *p);

#endif
