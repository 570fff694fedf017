/*
 * jobs_add.h - internal to src/core/jobs (jobs_add.c): a job taken into
 * the job table (gf_ctl_add and the Kubernetes extender's gf_ctl_add_on).
 */
#ifndef GF_CORE_JOBS_ADD_H
#define GF_CORE_JOBS_ADD_H

#include "core/jobs/ctl_impl.h"

/* What gf_ctl_add checks before it takes a job (0 or an error in e). */
int gf__add_check(struct gf_ctl *ctl, const struct gf_job *job,
		  struct gf_err *e);
/* A job's record filled in the slot after the table's last, not yet in
 * the table (gf__jobtab_slot: a trial may place it). */
int gf__jrec_fill(struct gf_ctl *ctl, struct gf_job *job);

#endif
