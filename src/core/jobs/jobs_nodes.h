/*
 * jobs_nodes.h - internal to src/core/jobs (jobs_nodes.c): nodes at run
 * time: added, updated, reshaped; the per-node arrays, the blocks.
 */
#ifndef GF_CORE_JOBS_JOBS_NODES_H
#define GF_CORE_JOBS_JOBS_NODES_H

#include "core/jobs/ctl_impl.h"

void gf__nodes_reserve(struct gf_ctl *ctl, int n);
void gf__block_join(struct gf_ctl *ctl, int i);
void gf__nodes_free(struct gf_ctl *ctl);

#endif
