/*
 * gang.h - internal to src/core/jobs (gang.c): a job's replicas on nodes:
 * capacity, one block, all or none.
 */
#ifndef GF_CORE_JOBS_GANG_H
#define GF_CORE_JOBS_GANG_H

#include "core/jobs/ctl_impl.h"

int gf__cap(const struct gf_ctl *ctl, const struct gf__jrec *j,
	    const struct gf_req *r, const struct gf_cnode *n, int node,
	    int mig_free, int most);
bool gf__usable(struct gf_ctl *ctl, struct gf__jrec *j, const struct gf_req *r,
		int node);
int gf__place_job(struct gf_ctl *ctl, int jid, const struct gf_req *r,
		  const uint8_t *avoid, int only_node, int only_block,
		  struct gf_job_place **out, int *block);
void gf__unplace_job(struct gf_ctl *ctl, int jid,
		     const struct gf_job_place *pl);
void gf__unplace_some(struct gf_ctl *ctl, int jid,
		      const struct gf_job_place *pl, int k);
int gf__replica_commit(struct gf_ctl *ctl, int jid, struct gf_job_place *p);
/* A gang's replicas stay on one GPU model unless the job named one (or
 * asks for no GPU): the model masks it may use, one each, into out[32];
 * the count, 0 for "as asked". */
int gf__gang_models(const struct gf_ctl *ctl, const struct gf__jrec *j,
		    const struct gf_req *r, uint32_t *out);

/* Trial copies of nodes (backfill's shadow time, preemption's victims):
 * work released on copies, never on the engine.  ctl->trial_of maps a
 * node to its copy; all -1 outside a use (gf__trials_reset). */
struct gf__trial {
	int node;
	int base; /* the caller's: the job's capacity there before */
	int mig;  /* free instances of the job's MIG profile there */
	struct gf_cnode n;
};

struct gf__trials {
	struct gf__trial *t;
	int n, cap;
	int prof; /* the job's MIG profile; -1 none */
};

/* Node i's copy, made on first use (*fresh true then). */
struct gf__trial *gf__trial_get(struct gf_ctl *ctl, struct gf__trials *ts,
				int i, bool *fresh);
/* Running job v's replica on t's node given back on the copy: its GPUs,
 * and its MIG instance when of the profile and on a healthy GPU. */
void gf__trial_give(const struct gf_ctl *ctl, const struct gf__trials *ts,
		    struct gf__trial *t, int v, const struct gf_job_place *p);
/* Every copy dropped (trial_of all -1 again); the memory kept. */
void gf__trials_reset(struct gf_ctl *ctl, struct gf__trials *ts);

#endif
