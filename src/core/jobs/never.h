/*
 * never.h - internal to src/core/jobs (never.c): jobs never placeable,
 * looked at again (all: every job not final, after a node changed; else
 * those marked, group by group, after a node came); a job marked never
 * joins its group.
 */
#ifndef GF_CORE_JOBS_NEVER_H
#define GF_CORE_JOBS_NEVER_H

#include "core/jobs/ctl_impl.h"

void gf__reconsider(struct gf_ctl *ctl, bool all);
void gf__never_push(struct gf_ctl *ctl, int jid);
void gf__never_free(struct gf_ctl *ctl);

#endif
