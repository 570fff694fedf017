/*
 * teams.h - internal to src/core/jobs (teams.c): the teams: each one's
 * quota limits and figures (quota.c), fair-share usage and pending
 * queues per class (order.c); teams[0..cfg.nteams) are the config's in
 * its order, teams not in the config follow.  It calls only jobs_find.c
 * (gf__name_index).
 */
#ifndef GF_CORE_JOBS_TEAMS_H
#define GF_CORE_JOBS_TEAMS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <gpufleet/ctl.h>

#define GF__MAX_PROFILES   64	/* distinct MIG profile names in a cluster */
#define GF__MAX_OPEN_TEAMS 4096 /* teams not in the config (open_teams) */

/* A team's quota figures (what its running jobs hold). */
struct gf__use {
	int64_t gpus[GF_MAX_MODELS]; /* whole GPUs by cluster model id */
	int64_t gpus_all;
	int64_t mig[GF__MAX_PROFILES]; /* instances by profile id */
	int64_t mig_all;
	int64_t milli; /* shares */
};

/* Pending jobs of one team and class, by seq; entries that left PENDING
 * stay until the next compaction (gf__queue_compact). */
struct gf__queue {
	int *ids; /* jrec indexes */
	int n;
	size_t cap;
	int cur; /* the pass's cursor */
};

struct gf__team {
	char name[GF_TEAM_NAME_MAX];
	double weight; /* > 0 */
	int cfg;       /* index into cfg.teams; -1: not in the config */
	bool limited;  /* has_quota */
	int64_t gpu_lim[GF_MAX_MODELS]; /* -1: model not listed */
	int64_t gpu_all_lim;		/* "*"; -1: none */
	bool gpu_listed;		/* any GPU entry */
	int64_t mig_lim[GF__MAX_PROFILES];
	int64_t mig_all_lim;
	bool mig_listed;
	int64_t milli_lim; /* -1: unlimited */
	struct gf__use use;
	int64_t run_milli; /* fair share: milli-GPU of its running jobs */
	struct gf__queue q[GF_CTL_MAX_CLASSES];
	int pend_n[GF_CTL_MAX_CLASSES];
	int64_t pend_milli[GF_CTL_MAX_CLASSES];
};

struct gf__teams {
	struct gf__team *t;
	int n;
	size_t cap;
};

/* The index of the team named name, or -1. */
int gf__teams_find(const struct gf__teams *ts, const char *name);
/* A team named name appended (weight 1, not in the config, no limits
 * set: the caller's gf__team_limits): its index, or GF_ETOOBIG for a
 * name too long (nothing added). */
int gf__teams_add(struct gf__teams *ts, const char *name);
/* The name of team i, or NULL. */
const char *gf__teams_name(const struct gf__teams *ts, int i);
/* Every team and its queues freed. */
void gf__teams_free(struct gf__teams *ts);

#endif
