/*
 * teams.c - the teams' table: found by name (few: a scan), appended, and
 * freed with their queues.
 *
 * Invariants: names are unique; a team never moves (team indexes in the
 * job records are stable).
 */
#include "core/jobs/teams.h"

#include <stdio.h>
#include <string.h>

#include "core/jobs/jobs_find.h"
#include "util/fmt.h"
#include "util/mem.h"

int gf__teams_find(const struct gf__teams *ts, const char *name)
{
	return gf__name_index(ts->t, sizeof(*ts->t), ts->n, name);
}

int gf__teams_add(struct gf__teams *ts, const char *name)
{
	ts->t = gf_grow(ts->t, sizeof(*ts->t), &ts->cap, (size_t)ts->n, 16);
	struct gf__team *t = &ts->t[ts->n];
	memset(t, 0, sizeof(*t)); /* a slot a long name left */
	if (gf_fmt(t->name, sizeof(t->name), "%s", name))
		return GF_ETOOBIG;
	t->weight = 1;
	t->cfg = -1;
	return ts->n++;
}

const char *gf__teams_name(const struct gf__teams *ts, int i)
{
	return i >= 0 && i < ts->n ? ts->t[i].name : NULL;
}

void gf__teams_free(struct gf__teams *ts)
{
	for (int t = 0; t < ts->n; t++)
		for (int c = 0; c < GF_CTL_MAX_CLASSES; c++)
			gf_free(ts->t[t].q[c].ids);
	gf_free(ts->t);
	memset(ts, 0, sizeof(*ts));
}
