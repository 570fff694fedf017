/*
 * arrays.h - internal to src/core/jobs (arrays.c): job arrays, each
 * rebuilt from its tasks as they are added (jobflow.h): its tasks, its
 * %max, how many of them run now.  Calls only the job table (table.c).
 */
#ifndef GF_CORE_JOBS_ARRAYS_H
#define GF_CORE_JOBS_ARRAYS_H

#include <stdbool.h>
#include <stddef.h>

#include "core/jobs/table.h"

/* One array: its tasks (jrec indexes, submission order; the first is the
 * array's id), its cap, and its tasks RUNNING now. */
struct gf__arr {
	struct gf__ids tasks;
	int max;     /* 0: no cap */
	int running; /* its tasks RUNNING */
};

struct gf__arrays {
	struct gf__arr *a;
	int n, cap;
};

struct gf_ctl;

/* Job jid (added, not yet started or restored) joins its array (a new
 * one when it is the array's first task, or its first is unknown). */
void gf__array_add(struct gf_ctl *ctl, int jid);
/* Job jid of an array started (+1) or stopped (-1) running. */
void gf__array_run(struct gf_ctl *ctl, int jid, int sign);
/* Would job jid pass its array's %max by starting now?  true with the
 * reason in why. */
bool gf__array_throttled(const struct gf_ctl *ctl, int jid, char *why,
			 size_t size);
/* The arrays' running counts as the tasks' states say: 0 or -1 with msg. */
int gf__arrays_check(const struct gf_ctl *ctl, char *msg, unsigned size);
void gf__arrays_free(struct gf__arrays *as);

#endif
