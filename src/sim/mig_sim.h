/*
 * mig_sim.h - a stream of MIG-instance requests, and how many GPUs each
 * way of partitioning needs to serve it: NVIDIA's static layouts
 * (all-1g: seven 1g per GPU; all-balanced: 2 x 1g + 2g + 3g, as the GPU
 * Operator's default config) against layouts planned for the demand.
 */
#ifndef GF_SIM_MIG_SIM_H
#define GF_SIM_MIG_SIM_H

#include <gpufleet/err.h>
#include <gpufleet/mig_plan.h>

#define GF_MIGSIM_POINTS 4 /* demand checkpoints: 25, 50, 75, 100 % */

struct gf_migsim_mix {
	char profile[32];
	int weight;
};

struct gf_migsim_row {
	int requests;			/* arrived so far */
	int demand[GF_MIG_MAX_DEMANDS]; /* per mix entry */
	int all_1g;	  /* GPUs needed; -1: cannot serve some request */
	int all_balanced; /* idem */
	int planned;	  /* from the planner (proved or bounded) */
	bool planned_optimal;
	double plan_ms; /* the planner's solve time */
};

/*
 * Draw `requests` requests from the mix (weights, seeded) and fill rows
 * for the checkpoints.  Errors: GF_EINVAL (a profile the model lacks, an
 * empty mix), or the planner's.
 */
int gf_migsim_run(const struct gf_mig_model *m, const struct gf_migsim_mix *mix,
		  int nmix, int requests, uint64_t seed,
		  struct gf_migsim_row rows[GF_MIGSIM_POINTS],
		  struct gf_err *e) GF_MUST_CHECK;

#endif
