/*
 * held.h - internal to src/core/jobs (held.c): replicas completing
 * (job.h's gf_job_held), held until their processes are gone; the jobs
 * holding any are listed in ctl->jobs.holding.
 */
#ifndef GF_CORE_JOBS_HELD_H
#define GF_CORE_JOBS_HELD_H

#include "core/jobs/ctl_impl.h"

/* Job jid's placements (it is stopping) kept taken as completing. */
void gf__held_keep(struct gf_ctl *ctl, int jid, int64_t now, const char *why);
/* A restored job's held replicas committed to the engine; those that no
 * longer fit (node gone, changed) dropped: true if any was. */
bool gf__held_restore(struct gf_ctl *ctl, int jid);
/* Every replica held on node i dropped (it was rebuilt); jobs reported. */
void gf__held_drop_node(struct gf_ctl *ctl, int i, struct gf_ctl_changes *out,
			uint32_t mark);

#endif
