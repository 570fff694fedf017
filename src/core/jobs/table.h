/*
 * table.h - internal to src/core/jobs (table.c): the job table: every job
 * the core knows (jr, by jrec index; a job's slot never moves), in
 * submission order (by_seq), by id (ids), and the lists of jobs the
 * other modules keep (running, holding, the pass order, changed later).
 * The lowest module with jobs_find.c: it calls no other file of
 * core/jobs.
 */
#ifndef GF_CORE_JOBS_TABLE_H
#define GF_CORE_JOBS_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <gpufleet/ctl.h>

#include "util/hash.h"

struct gf_err;

/* What the core keeps beside each job. */
struct gf__jrec {
	struct gf_job *job; /* owned */
	struct gf_req req;  /* one replica for the engine; MIG: CPU, memory */
	int team, cls;
	int model;	/* cluster model of gpu_model; -1 any; -2 none here */
	int prof;	/* MIG profile id; -1 none; -2 none here */
	int64_t max_ms; /* max runtime in effect (spec, else class); 0 none */
	int64_t milli;	/* GPU milli of the whole job (fair share, demand) */
	uint32_t mark;	/* the pass it last changed in */
	uint32_t preempted; /* the pass that preempted it: it waits that one
			       out */
	int awaiting;	    /* replicas it preempted still completing (hold
			       mode): it preempts no more meanwhile */
	int run_pos;	    /* index in running; -1 */
	bool queued;	    /* in its queue's array (maybe lazily) */
	bool in_order;	    /* in order (maybe lazily) */
	bool never;	    /* can never be placed on this cluster */
	int mask;	    /* selector mask slot; -1 none */
	uint32_t mask_gen;
	uint64_t start_epoch; /* the nodes' epoch when it last started; 0
				 restored (gf_ctl_add) */
	int arr;	      /* its array's slot (arrays.c); -1 none */
	int dep;	      /* its dependencies' slot (depend.c); -1 none */
};

/* A list of jrec indexes. */
struct gf__ids {
	int *v;
	int n;
	size_t cap;
};

struct gf__jobtab {
	struct gf__jrec *jr; /* by jrec index (never moves a job) */
	int n, cap;
	int *by_seq;		/* jrec indexes in submission order */
	struct gf_hmap ids;	/* job ids to jrec indexes */
	struct gf__ids running; /* jrec at run_pos (jobs_state.c) */
	struct gf__ids holding; /* jobs with held replicas (held.c) */
	struct gf__ids order;	/* the queue as the last pass tried it, then
				   adds (order.c) */
	struct gf__ids later;	/* changed outside a pass, reported by the
				   next (jobs_changes.c) */
	int npending;		/* PENDING jobs */
	uint32_t pass;		/* the last mark given (jobs_changes.c) */
};

/* jid appended to l. */
void gf__ids_push(struct gf__ids *l, int jid);
/* The index of jid in l, or -1. */
int gf__ids_find(const struct gf__ids *l, int jid);

/* jid inserted into ids[0..n) (room for n + 1) by its job's seq,
 * ascending; ids' jobs are in the table or in its next slot. */
void gf__seq_insert(const struct gf__jobtab *t, int *ids, int n, int jid);

/* A zeroed record for job in the slot after the table's last (jr[n]),
 * not yet in the table (a trial may place it): its index. */
int gf__jobtab_slot(struct gf__jobtab *t, struct gf_job *job);
/* The record in slot jid (gf__jobtab_slot) in the table: findable by
 * id, listed in submission order. */
void gf__jobtab_register(struct gf__jobtab *t, int jid);
/* The i-th job in submission order, or NULL. */
const struct gf_job *gf__jobtab_at(const struct gf__jobtab *t, int i);
/* The jrec index of job id, or -1. */
int gf__job_find(const struct gf__jobtab *t, const char *id);
/* The jrec index of job id, or GF_ENOTFOUND with e saying so. */
int gf__job_get(const struct gf__jobtab *t, const char *id, struct gf_err *e);
/* Every job released, the table empty. */
void gf__jobtab_free(struct gf__jobtab *t);

#endif
