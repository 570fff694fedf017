/*
 * mig_propose.h - new MIG layouts for a running fleet's pending demand.
 *
 * Input: the pending demand, as (model, profile, count): instances jobs
 * wait for, each limited to GPUs of one model or not; and the fleet's
 * GPUs in MIG mode, each with its node and GPU index, model and current
 * layout, an instance's busy flag meaning a running job uses it.
 * Output: a new layout for some GPUs, by these rules:
 *   - only GPUs with no instance in use change: destroying an instance
 *     kills the job on it, so a GPU with one busy instance is left as it
 *     is, free instances included;
 *   - demand that free instances of today's layouts already meet is not
 *     unmet (free instances on GPUs that cannot change count first,
 *     demand limited to one model is matched first), and stays met: no
 *     demand is served less than today to serve another more;
 *   - as much of the unmet demand as can be is met, in the planner's
 *     units (gf_mig_profile_units);
 *   - then the fewest GPUs change (each change drains that GPU: its
 *     free instances are destroyed or wait while it is rebuilt), then
 *     the fewest GPUs are used; a free instance a changed GPU still
 *     needs stays where it is;
 *   - a changed GPU holds only instances that serve the demand, and its
 *     new layout differs from its current one.
 * The packing is the MIG planner's (gf_mig_plan_with with demand_model,
 * demand_min and fewest_changes) on the GPUs with no instance in use,
 * with the demand that free instances elsewhere do not meet.  Pure,
 * deterministic (the same input gives the same proposal while the
 * solver finishes within its time limits, which fleets of a few thousand
 * GPUs do), thread-safe.
 */
#ifndef GPUFLEET_MIG_PROPOSE_H
#define GPUFLEET_MIG_PROPOSE_H

#include <stdbool.h>

#include <gpufleet/err.h>
#include <gpufleet/mig_plan.h>

/* Caps: GPUs given (GF_ETOOBIG past it; of those with no instance in
 * use, the planner is given the first GF_MIG_MAX_GPUS), demand entries
 * given and distinct (model, profile) demands after merging, instances
 * one merged demand asks. */
#define GF_MIG_PROPOSE_MAX_GPUS	     65536
#define GF_MIG_PROPOSE_MAX_ENTRIES   100000
#define GF_MIG_PROPOSE_MAX_DEMANDS   GF_MIG_MAX_DEMANDS
#define GF_MIG_PROPOSE_MAX_INSTANCES 1000000

struct gf_mig_propose_demand {
	const struct gf_mig_model
		*model;	  /* only GPUs of this model; NULL any */
	char profile[32]; /* "1g.10gb" */
	int count;	  /* instances asked (job replicas) */
};

struct gf_mig_propose_gpu {
	int node; /* the caller's node index */
	int gpu;  /* GPU index on that node */
	const struct gf_mig_model *model;
	struct gf_mig_layout current; /* busy: in use by a running job */
};

struct gf_mig_change {
	int at;	  /* index of the GPU in the input */
	int node; /* as given */
	int gpu;
	const struct gf_mig_model *model;
	struct gf_mig_layout current; /* as given */
	struct gf_mig_layout layout;  /* new, in creation order */
	int ndestroy;		      /* current instances it drops */
	struct gf_mig_instance destroy[GF_MIG_MAX_INSTANCES];
	int ncreate; /* instances it adds, largest first */
	struct gf_mig_instance create[GF_MIG_MAX_INSTANCES];
};

struct gf_mig_proposal {
	int nchanges;
	struct gf_mig_change *changes; /* nchanges entries, input order */
	/* the demand, merged by (model, profile) in order of first
	 * appearance, and per entry the instances free instances meet with
	 * today's layouts and with the proposed ones */
	int ndemands;
	struct gf_mig_propose_demand demand[GF_MIG_PROPOSE_MAX_DEMANDS];
	int met_before[GF_MIG_PROPOSE_MAX_DEMANDS];
	int met_after[GF_MIG_PROPOSE_MAX_DEMANDS];
	long demanded, before, after; /* instances, over every demand */
	int ngpus;		      /* GPUs given */
	int idle;		      /* of them, with no instance in use */
	int planned;		      /* of those, given to the planner */
	bool optimal; /* the planner proved its objectives (or had nothing
		       * to do) */
};

/*
 * Propose layouts (rules above) into *p; p->changes is allocated (NULL
 * when there is none): release with gf_mig_proposal_release.  Errors,
 * with e->msg saying what and where: GF_EINVAL for a GPU without a model
 * or whose current layout breaks its model's rules, a demand with a
 * negative count or an unterminated profile name; GF_ETOOBIG past a
 * cap; GF_ENOTSUP when the solver fails.  A profile no GPU has is not an
 * error: that demand stays unmet.  Nothing to do (every demand met, no
 * idle GPU) is an empty proposal, not an error.
 */
int gf_mig_propose(const struct gf_mig_propose_gpu *gpus, int ngpus,
		   const struct gf_mig_propose_demand *d, int nd,
		   struct gf_mig_proposal *p, struct gf_err *e) GF_MUST_CHECK;
void gf_mig_proposal_release(struct gf_mig_proposal *p);

#endif
