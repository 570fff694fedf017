/*
 * jobs_health.h - internal to src/core/jobs (jobs_health.c): a node ready
 * or not, a GPU healthy or not; the jobs on a node lost requeued; their
 * invariants checked.
 */
#ifndef GF_CORE_JOBS_JOBS_HEALTH_H
#define GF_CORE_JOBS_JOBS_HEALTH_H

#include "core/jobs/ctl_impl.h"

/* Requeue (gf__requeue) every job running on node i, or only the gangs;
 * each reported (gf__report) under mark. */
void gf__requeue_node(struct gf_ctl *ctl, int i, const char *why, int64_t now,
		      struct gf_ctl_changes *out, uint32_t mark,
		      bool gangs_only);
/* The nodes' states against the engine and the running replicas
 * (nrep[i]: counted afresh); 0 or GF_EINVAL with msg. */
int gf__nodes_check(const struct gf_ctl *ctl, const int *nrep, char *msg,
		    unsigned size);

#endif
