/*
 * admit.h - internal to src/core/jobs (admit.c): admission: a spec's
 * request derived, node groups and request shapes.
 */
#ifndef GF_CORE_JOBS_ADMIT_H
#define GF_CORE_JOBS_ADMIT_H

#include "core/jobs/ctl_impl.h"

int gf__admit_setup(struct gf_ctl *ctl);
void gf__admit_free(struct gf_ctl *ctl);
/* Node i joins the group of nodes alike (it is new or changed), or
 * leaves it (before it changes); cached answers are dropped. */
void gf__group_join(struct gf_ctl *ctl, int i);
void gf__group_leave(struct gf_ctl *ctl, int i);
int gf__admit_check(const struct gf_ctl *ctl, char *msg, unsigned size);
int gf__admit_spec(const struct gf_ctl *ctl, const struct gf_job_spec *s,
		   bool api, struct gf_err *e);
/* The request, kinds, runtime and share kept beside a job. */
void gf__derive(struct gf_ctl *ctl, struct gf__jrec *j);

#endif
