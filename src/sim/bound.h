/*
 * bound.h - a lower bound on the unallocated GPU % of `gpufleet simulate
 * fill` (issue 23): for a seed's arrivals, an upper bound on the GPU any
 * placement could have given out after each arrival, recorded the way
 * fill.c records a run (same bins, same rounding), so that every policy's
 * figure at every arrived load is at least the bound's.
 *
 * The bound is a linear program (GLPK), aggregated: identical nodes form
 * node types, identical GPU requests request classes; x(c,t) is how many
 * requests of class c go to nodes of type t.  Maximise the GPU milli
 * given out subject to, per type, CPU, memory, GPU milli and GPU counts
 * weighed by dual-feasible functions (a GPU holds one share over half,
 * two over a third, ...; a whole GPU weighs 1), and per class the count
 * arrived so far; x(c,t) is 0 where one request of c does not fit one
 * node of t (CPU, memory, GPUs, model) and at most the nodes of t times
 * the copies one node could hold.  Every real placement is a point of
 * the program, so its optimum is an upper bound.  Requests without GPU
 * are left out: giving them nothing is feasible and they add no GPU.
 *
 * Pure: no I/O (the caller reports progress).
 */
#ifndef GF_SIM_BOUND_H
#define GF_SIM_BOUND_H

#include <gpufleet/err.h>
#include <gpufleet/sim.h>

struct gf_bound;

/*
 * Build the program for cluster c (every node empty) and workload w.
 * GF_EINVAL (with e) when c has no GPU or a node is not empty, w is
 * empty.
 */
int gf_bound_new(const struct gf_cluster *c, const struct gf_workload *w,
		 struct gf_bound **out, struct gf_err *e) GF_MUST_CHECK;
void gf_bound_free(struct gf_bound *b);

/* Node types and request classes (with a GPU) the program has. */
void gf_bound_size(const struct gf_bound *b, int *ntypes, int *nclasses);

/*
 * The bound for the arrivals of o (seed, tune, resample: policy is not
 * read; gf_fill_arrivals draws them as gf_fill_run does): res is filled
 * as gf_fill_run fills it (count, arrivals, arrived_milli, alloc_sum),
 * with alloc_sum the rounded upper bound on allocated GPU %, so that
 * gf_fill_value(res, res->alloc_sum, pct) is >= any policy's value for
 * the same arrivals.  The program is solved in the bins of the points
 * (or their neighbours where a point's bin has no arrival: the bins
 * gf_fill_value reads), at most `per_bin` times a bin (each solve bounds
 * the arrivals of the bin up to it);
 * elsewhere the bound is the arrived demand, capped at capacity.  *lps
 * counts the solves.  GF_ERANGE (with e) when GLPK fails.
 */
int gf_bound_run(struct gf_bound *b, const struct gf_fill_opts *o,
		 const int *points, int npoints, int per_bin,
		 struct gf_fill_result *res, int *lps,
		 struct gf_err *e) GF_MUST_CHECK;

#endif
