/*
 * typical.h - internal to src/core/jobs (typical.c): the FGD typical mix:
 * default and refreshed from the jobs.
 */
#ifndef GF_CORE_JOBS_TYPICAL_H
#define GF_CORE_JOBS_TYPICAL_H

#include "core/jobs/ctl_impl.h"

int gf__typical_default(struct gf_ctl *ctl);
void gf__typical_refresh(struct gf_ctl *ctl, bool force);

#endif
