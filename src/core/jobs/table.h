/*
 * table.h - internal to src/core/jobs (table.c): the job table: add,
 * restore, submission order.
 */
#ifndef GF_CORE_JOBS_TABLE_H
#define GF_CORE_JOBS_TABLE_H

#include "core/jobs/ctl_impl.h"

/* What gf_ctl_add checks before it takes a job (0 or an error in e). */
int gf__add_check(struct gf_ctl *ctl, const struct gf_job *job,
		  struct gf_err *e);
/* A job's record filled in the slot after the table's last (jr[njr]),
 * not yet in the table (a trial may place it), then registered: in the
 * table, findable by id, listed in submission order. */
int gf__jrec_fill(struct gf_ctl *ctl, struct gf_job *job);
void gf__jrec_register(struct gf_ctl *ctl, int jid);

#endif
