/*
 * jobs_changes.h - internal (src/core/jobs): the jobs a call changed,
 * reported to its caller or kept for the next pass; a job's reason.
 */
#ifndef GF_CORE_JOBS_CHANGES_H
#define GF_CORE_JOBS_CHANGES_H

#include <stdint.h>

struct gf__jobtab;
struct gf_ctl_changes;
struct gf_job;
struct gf__pass;

/* A change outside a pass: appended to out (once per mark), or reported
 * by the next pass when out is NULL; gf__mark gives a fresh mark. */
uint32_t gf__mark(struct gf__jobtab *t);
void gf__report(struct gf__jobtab *t, struct gf_ctl_changes *out, uint32_t mark,
		int jid);
/* Job jid changed in pass ps (once per pass; nothing when ps has no out). */
void gf__changed(struct gf__jobtab *t, struct gf__pass *ps, int jid);
/* Job jid changed outside a pass: the next pass reports it. */
void gf__later(struct gf__jobtab *t, int jid);
/* The job's reason, formatted (a cut marked "..."). */
void gf__reason(struct gf_job *j, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#endif
