/*
 * depend.h - internal to src/core/jobs (depend.c): the dependencies of
 * pending jobs (jobflow.h): which jobs each waits for, the jobs still
 * waiting, resolved once per pass before the queue is walked.  Calls the
 * job table, a job's states (jobs_state.c: an impossible dependency
 * cancels) and the changes (jobs_changes.c).
 */
#ifndef GF_CORE_JOBS_DEPEND_H
#define GF_CORE_JOBS_DEPEND_H

#include <stdbool.h>
#include <stddef.h>

#include <gpufleet/jobflow.h>

#include "core/jobs/table.h"

/* One job's dependencies. */
struct gf__dep {
	int n; /* 0 with bad: its stored text did not parse */
	struct gf_dep v[GF_DEP_IDS_MAX];
	int target[GF_DEP_IDS_MAX]; /* jrec of each; -1 unknown */
	int unmet;		    /* the first not met at the last pass */
	bool met;		    /* all met once: never waits again */
	bool bad;
};

struct gf__deps {
	struct gf__dep *d;
	int n, cap;
	struct gf__ids waiting; /* jrec of the PENDING jobs not met yet,
				   submission order */
};

struct gf_ctl;
struct gf__pass;

/* Job jid (added) with a dependency and PENDING: waits from now on. */
void gf__dep_add(struct gf_ctl *ctl, int jid);
/* Before a pass walks the queue: each waiting job's dependencies judged
 * (in submission order, so a chain resolves in one pass): met (it is
 * scheduled from now on), never (CANCELLED with the reason, reported in
 * ps), or still waiting. */
void gf__deps_resolve(struct gf_ctl *ctl, struct gf__pass *ps);
/* Does job jid wait for a dependency?  true with the reason in why
 * ("dependency j12"). */
bool gf__dep_waits(const struct gf_ctl *ctl, int jid, char *why, size_t size);
void gf__deps_free(struct gf__deps *ds);

#endif
