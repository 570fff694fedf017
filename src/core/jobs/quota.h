/*
 * quota.h - internal to src/core/jobs (quota.c): typed quotas: room now,
 * charges, never within quota.
 */
#ifndef GF_CORE_JOBS_QUOTA_H
#define GF_CORE_JOBS_QUOTA_H

#include "core/jobs/ctl_impl.h"

/* The index of the team named name, added (not in the config, no
 * limits) when new; GF_ETOOBIG past GF__MAX_OPEN_TEAMS or a name too
 * long. */
int gf__team_get(struct gf_ctl *ctl, const char *name);
void gf__team_limits(struct gf_ctl *ctl, struct gf__team *t,
		     const struct gf_ctl_team *cfg);
int gf__quota_room(struct gf_ctl *ctl, const struct gf__jrec *j, uint32_t *spec,
		   char *why, unsigned size);
void gf__quota_charge(struct gf_ctl *ctl, const struct gf__jrec *j,
		      const struct gf_job_place *pl, int sign);
int gf__quota_never(const struct gf_ctl *ctl, const struct gf__team *t,
		    const struct gf_job_spec *s, int model, int prof,
		    struct gf_err *e);
void gf__use_of(const struct gf_ctl *ctl, const struct gf__jrec *j,
		const struct gf_job_place *pl, struct gf__use *u, int sign);

#endif
