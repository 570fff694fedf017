/*
 * ctl_impl.h - internal: the scheduling core's shared state (struct
 * gf_ctl, the facade's), shared by the files of src/core/jobs/ and read
 * by the core's unit tests; nothing else includes it.  Each part of the
 * state with a module of its own has its struct in that module's header,
 * embedded here: the job table (table.h, struct gf__jobtab), the teams
 * (teams.h, struct gf__teams), the nodes (jobs_nodes.h, struct
 * gf__nodes).  Each module's functions are in its own header (X.c: X.h),
 * which a file includes only when it calls them.
 *
 * The modules, lowest first (none calls up into one above it;
 * tests/tools/cycles.py: no cycle):
 *   jobs_find.c     lookups by name: models, classes, nodes
 *   teams.c         the teams: found, added, freed with their queues
 *   mask.c          labels and node selectors, cached node masks
 *   job.c           job.h: a job, its spec checked, its states named
 *   table.c         the job table: records, submission order, ids, the
 *                   lists of jobs (running, holding, order, later)
 *   jobs_changes.c  the jobs a call changed, reported or kept; reasons
 *   jobs_mig.c      MIG instances: validation, placement, release; the
 *                   engine's holds on GPUs in MIG mode or unhealthy
 *   quota.c         typed quotas: a team's limits, room now, charges,
 *                   never within quota
 *   admit.c         admission: a spec's request derived, node groups and
 *                   request shapes
 *   gang.c          a job's replicas on nodes: capacity, one block, all or
 *                   none
 *   order.c         the queues (class x team), fair share, gf_ctl_queue
 *   typical.c       the FGD typical mix: default and refreshed from jobs
 *   backfill.c      the head job's reservation (shadow time)
 *   held.c          replicas completing: held until their processes are
 *                   gone
 *   arrays.c        job arrays: tasks, %max, running tasks counted
 *   jobs_state.c    a job starting and stopping: placements, quota
 *                   charges, the running list, pending counters
 *   depend.c        dependencies: parents found, judged before a pass
 *                   (an impossible one cancels)
 *   flow.c          a pending job gated: its user's hold, a dependency,
 *                   its array's %max; gf_ctl_hold
 *   explain.c       why a job waits: the resource short, nodes not ready
 *   never.c         jobs never placeable, looked at again as nodes change
 *   preempt.c       the fewest victims
 *   jobs_health.c   a node ready or not, a GPU healthy or not, the
 *                   engine's cordons that follow
 *   jobs_add.c      a job added (gf_ctl_add) and restored, cancel,
 *                   finish, requeue
 *   external.c      jobs another scheduler places (the Kubernetes
 *                   extender): started on the node it chose, victims on
 *                   one node, read-only probes of a node
 *   schedule.c      the pass
 *   jobs_nodes.c    nodes at run time: added, updated, reshaped; the
 *                   per-node arrays, the blocks
 *   jobs_check.c    gf_ctl_check
 *   ctl.c           the facade: the core's lifecycle, its config checks,
 *                   accessors, stats
 */
#ifndef GF_CORE_CTL_IMPL_H
#define GF_CORE_CTL_IMPL_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <gpufleet/ctl.h>
#include <gpufleet/frag.h>
#include <gpufleet/mig.h>

#include "core/jobs/arrays.h"
#include "core/jobs/depend.h"
#include "core/jobs/jobs_nodes.h"
#include "core/jobs/table.h"
#include "core/jobs/teams.h"
#include "util/hash.h"

#define GF__INF INT64_MAX

/* A MIG instance a node offers. */
struct gf__inst {
	int node, gpu, start, prof;
	int user; /* jrec running on it; -1 free */
};

/* A cached node mask for one selector. */
struct gf__mask {
	char sel[GF_SELECTOR_MAX];
	uint8_t *on;
	int count;
};

/* The MIG instances nodes offer and the profiles they name (jobs_mig.c). */
struct gf__migs {
	char prof_name[GF__MAX_PROFILES][GF_MIG_PROFILE_MAX];
	int prof_milli[GF__MAX_PROFILES]; /* a GPU's fraction, for shares */
	int nprof;
	struct gf__inst *inst; /* by node */
	int ninst;
	int inst_cap;
	int *node_inst;	  /* first instance of node i; c->n + 1 entries */
	int **prof_nodes; /* per profile: nodes offering it */
	int *prof_nnodes;
	int used; /* instances in use */
};

/* The cached node masks, one per selector (mask.c). */
struct gf__masks {
	struct gf__mask *m; /* each on[] has nodes.cap entries */
	int n, cap;
	uint32_t gen; /* a job's cached slot is valid at this generation */
};

/* Nodes alike for admission (see admit.c). */
struct gf__group {
	int rep;   /* a node of the group */
	int count; /* nodes in it */
	int block;
};

struct gf__shape; /* admit.c */
struct gf__nkey;  /* never.c */

/* Jobs marked never, grouped by what admission reads (never.c). */
struct gf__nevers {
	struct gf__nkey *nk; /* the groups */
	int nnk, nk_cap;
	struct gf_hmap idx; /* a spec to its group */
};

struct gf__admit {
	struct gf__group *grp; /* count 0: empty, skipped */
	int ngrp, grp_cap, nempty;
	struct gf_hmap grp_idx;	  /* node fields to the group of nodes alike */
	struct gf__shape *shapes; /* the cached answers (SHAPES_MAX) */
	int nshapes;
	struct gf_hmap shape_idx; /* shape to its cached answer */
};

struct gf_ctl {
	struct gf_ctl_config cfg;
	int prio_order[GF_CTL_MAX_CLASSES]; /* classes, highest first */
	struct gf_cluster *c;		    /* owned */
	struct gf_sched *s;
	struct gf_typical *typ; /* typical.c: the learned mix, 95 % */
	int ntyp;
	struct gf_typical *mix; /* all of it (FGD+'s pressure) */
	int nmix;
	struct gf__mixlearn *learn;
	int64_t typ_base;	  /* arrivals' weight the mix was built from */
	int64_t typ_added;	  /* replicas arrived since */
	struct gf__nodes nodes;	  /* the nodes (jobs_nodes.h) */
	struct gf__migs mig;	  /* MIG instances (jobs_mig.c) */
	struct gf__teams teams;	  /* the teams (teams.c) */
	struct gf__jobtab jobs;	  /* the job table (table.c) */
	struct gf__nevers nevers; /* jobs marked never (never.c) */
	struct gf__arrays arrays; /* job arrays (arrays.c) */
	struct gf__deps deps;	  /* dependencies waited for (depend.c) */
	bool in_pass;	 /* a pass walks the queues: it builds the order */
	bool heap_dirty; /* a preemption changed other teams' shares */
	struct gf__masks masks; /* cached selector masks (mask.c) */
	/* scratch, per node (nodes.cap): zero / -1 between uses */
	uint8_t *scratch;
	uint8_t *not_h;
	int *trial_of;
	struct gf__admit *adm; /* a pointer: admission takes a const core
				  but fills its cache of shapes */
};

struct fail;

/* The state of one pass (schedule.c). */
struct gf__pass {
	int64_t now;
	int head;	/* jrec holding the reservation; -1 */
	int64_t shadow; /* when the head can start; GF__INF unknown */
	bool avoid;	/* not_h holds the nodes the head can use */
	uint32_t pass;
	struct gf_ctl_changes *out;
	struct fail *fails; /* shapes that found no room after the head */
	int nfails;
	struct gf_hmap fail_idx; /* a shape to its entry in fails */
	int explained; /* waiting jobs explained in detail (schedule.c) */
};

/* dst = src, two char arrays, dst at least as large (the compiler checks
 * the sizes), src terminated inside its array as every name the core
 * keeps is (checked on the way in): a copy that cannot cut. */
#define GF__ACOPY(dst, src)                                           \
	do {                                                          \
		_Static_assert(sizeof(dst) >= sizeof(src),            \
			       "destination as large as the source"); \
		size_t gf__n_ = strnlen((src), sizeof(src) - 1);      \
		memcpy((dst), (src), gf__n_);                         \
		(dst)[gf__n_] = '\0';                                 \
	} while (0)

/* An index with a 64-bit sort key; gf__keyed_cmp orders by key, then by
 * index (qsort: a total, deterministic order). */
struct gf__keyed {
	int64_t key;
	int id;
};

static inline int gf__keyed_cmp(const void *a, const void *b)
{
	const struct gf__keyed *x = a, *y = b;
	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return (x->id > y->id) - (x->id < y->id);
}

static inline struct gf__team *gf__team_of(struct gf_ctl *ctl,
					   const struct gf__jrec *j)
{
	return &ctl->teams.t[j->team];
}

static inline int gf__prio(const struct gf_ctl *ctl, const struct gf__jrec *j)
{
	return ctl->cfg.classes[j->cls].priority;
}

static inline int gf__jid(const struct gf_ctl *ctl, const struct gf__jrec *j)
{
	return (int)(j - ctl->jobs.jr);
}

#endif
