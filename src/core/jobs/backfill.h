/*
 * backfill.h - internal to src/core/jobs (backfill.c): the head job's
 * reservation (shadow time).
 */
#ifndef GF_CORE_JOBS_BACKFILL_H
#define GF_CORE_JOBS_BACKFILL_H

#include "core/jobs/ctl_impl.h"

void gf__reserve(struct gf_ctl *ctl, struct gf__pass *ps, int jid,
		 const struct gf_req *r);

#endif
