/*
 * preempt.h - internal to src/core/jobs (preempt.c): preemption: the
 * fewest victims.
 */
#ifndef GF_CORE_JOBS_PREEMPT_H
#define GF_CORE_JOBS_PREEMPT_H

#include "core/jobs/ctl_impl.h"

int gf__preempt(struct gf_ctl *ctl, struct gf__pass *ps, int jid,
		const struct gf_req *r);
/* The fewest of cand[0..ncand) (jrec indexes of jobs running on node)
 * whose release lets j fit there by fits(); their jrec indexes into
 * out (VMAX entries).  The count (0: it fits already), or GF_ENOTFOUND.
 * Changes nothing (trials run on copies of the node). */
int gf__victims(struct gf_ctl *ctl, struct gf__jrec *j, int node,
		const int *cand, int ncand, gf_ctl_fit_fn fits, void *arg,
		int *out);

#endif
