/*
 * ctl_impl.h - internal: the scheduling core's state (struct gf_ctl),
 * shared by the files of src/core/jobs/; nothing else includes it.
 *
 * Who keeps what:
 *   ctl.c       the core's lifecycle, its config checks, accessors, stats
 *   jobs_nodes.c    nodes at run time: added, updated, reshaped; the per-node
 *               arrays, the blocks, the names
 *   jobs_health.c   a node ready or not, a GPU healthy or not, the engine's
 *               holds and cordons that follow
 *   table.c     the job table (submission order, ids), add and restore,
 *               cancel, finish, requeue
 *   jobs_state.c    a job starting and stopping: placements, quota charges,
 *               the running list, pending counters, change lists
 *   order.c     the queues (class x team), fair share, gf_ctl_queue
 *   quota.c     typed quotas: room now, charges, never within quota
 *   mask.c      labels and node selectors, cached node masks
 *   jobs_mig.c      MIG instances: validation, placement, release
 *   gang.c      a job's replicas on nodes: capacity, one block, all or none
 *   preempt.c   the fewest victims
 *   held.c      replicas completing: held until their processes are gone
 *   explain.c   why a job waits: the resource short, nodes not ready
 *   external.c  jobs another scheduler places (the Kubernetes extender):
 *               started on the node it chose, victims on one node,
 *               read-only probes of a node
 *   backfill.c  the head job's reservation (shadow time)
 *   admit.c     admission: node groups and request shapes
 *   never.c     jobs never placeable, looked at again as nodes change
 *   typical.c   the FGD typical mix: default and refreshed from the jobs
 *   schedule.c  the pass
 *   jobs_check.c    gf_ctl_check
 */
#ifndef GF_CORE_CTL_IMPL_H
#define GF_CORE_CTL_IMPL_H

#include <stdbool.h>
#include <stdint.h>

#include <gpufleet/ctl.h>
#include <gpufleet/frag.h>
#include <gpufleet/mig.h>

#include "util/hash.h"

#define GF__MAX_PROFILES   64	/* distinct MIG profile names in a cluster */
#define GF__MAX_OPEN_TEAMS 4096 /* teams not in the config (open_teams) */
#define GF__INF		   INT64_MAX

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
	int n, cap;
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
	int run_pos;	    /* index in ctl->running; -1 */
	bool queued;	    /* in its queue's array (maybe lazily) */
	bool in_order;	    /* in ctl->order (maybe lazily) */
	bool never;	    /* can never be placed on this cluster */
	int mask;	    /* selector mask slot; -1 none */
	uint32_t mask_gen;
	uint64_t start_epoch; /* ctl->epoch when it last started; 0
				 restored (gf_ctl_add) */
};

/* A node's state (jobs_health.c). */
enum gf__nstate {
	GF__READY = 0,
	GF__WAITING, /* added, never ready since: restored jobs may run */
	GF__LOST,    /* made not ready: holds no running replica */
};

#define GF__WHY_MAX 96 /* a GPU's health reason */

/* What the core keeps per node beside gf_ctl_node. */
struct gf__node {
	const struct gf_mig_model *mig; /* its MIG model; NULL none */
	uint16_t sick;			/* unhealthy GPUs */
	uint16_t mig_gpus;		/* GPUs holding MIG instances */
	uint8_t state;			/* enum gf__nstate */
	int nrep;	       /* replicas of running jobs placed on it */
	int grp;	       /* admission group (admit.c) */
	int bpos;	       /* index in its block's node list */
	uint64_t down_epoch;   /* ctl->epoch when it stopped being ready */
	bool cordon;	       /* cordoned (gf_ctl_node_cordon): nothing new */
	uint64_t cordon_epoch; /* ctl->epoch when it was cordoned */
	bool drain;	       /* drained by an operator (gf_ctl_node_drain) */
	uint64_t drain_epoch;  /* ctl->epoch when it was drained */
	uint64_t sick_epoch[GF_CNODE_MAX_GPUS]; /* ... a GPU became sick */
	char reason[GF_JOB_REASON_MAX];		/* why not ready */
	char (*gpu_why)[GF__WHY_MAX]; /* per GPU, why sick; NULL none */
};

/* A MIG instance a node offers. */
struct gf__inst {
	int node, gpu, start, prof;
	int user; /* jrec running on it; -1 free */
};

struct gf__block {
	int *nodes;
	int n, cap;
	int64_t idle;  /* free GPU milli of its nodes */
	int64_t nfree; /* fully free GPUs */
};

/* A cached node mask for one selector. */
struct gf__mask {
	char sel[GF_SELECTOR_MAX];
	uint8_t *on;
	int count;
};

/* Nodes alike for admission (see admit.c). */
struct gf__group {
	int rep;   /* a node of the group */
	int count; /* nodes in it */
	int block;
};

struct gf__shape; /* admit.c */
struct gf__nkey;  /* never.c */

struct gf__admit {
	struct gf__group *grp; /* count 0: empty, skipped */
	int ngrp, grp_cap, nempty;
	int *slot;     /* open addressing over node hashes: group + 1 */
	uint64_t *key; /* the hash of each slot's group */
	int scap;
	struct gf__shape *shapes; /* open addressing */
	int nshapes, cap;
	uint32_t gen; /* cached shapes of another generation are gone */
};

struct gf_ctl {
	struct gf_ctl_config cfg;
	int prio_order[GF_CTL_MAX_CLASSES]; /* classes, highest first */
	struct gf_cluster *c;		    /* owned */
	struct gf_ctl_node *nodes;	    /* per node (ncap) */
	struct gf__node *ns;		    /* per node (ncap) */
	int ncap;			    /* room in the per-node arrays */
	uint64_t epoch; /* bumped when a node or GPU stops taking work */
	struct gf_sched *s;
	struct gf_typical *typ;
	int ntyp;
	int64_t typ_base;  /* replicas the mix was built from; 0: default */
	int64_t typ_added; /* jobs added since */
	/* nodes */
	struct gf_hmap names;  /* node names (jobs_find.c) */
	int name_n;	       /* nodes 0..name_n-1 are in it */
	struct gf__block *blk; /* GF_CTL_MAX_BLOCKS entries */
	int nblk;	       /* = cfg.nblocks */
	/* MIG */
	char prof_name[GF__MAX_PROFILES][GF_MIG_PROFILE_MAX];
	int prof_milli[GF__MAX_PROFILES]; /* a GPU's fraction, for shares */
	int nprof;
	struct gf__inst *inst; /* by node */
	int ninst;
	int inst_cap;
	int *node_inst;	  /* first instance of node i; c->n + 1 entries */
	int **prof_nodes; /* per profile: nodes offering it */
	int *prof_nnodes;
	int mig_used;
	/* teams */
	struct gf__team *teams;
	int nteams, teams_cap;
	/* jobs */
	struct gf__jrec *jr; /* by jrec index (never moves a job) */
	int njr, jr_cap;
	int *by_seq;	    /* jrec indexes in submission order */
	struct gf_hmap ids; /* job ids (jobs_find.c) */
	int *running;	    /* jrec indexes */
	int nrunning, running_cap;
	int *holding; /* jrec indexes of jobs with held replicas */
	int nholding, holding_cap;
	int npending;
	int *order; /* the queue as the last pass tried it, then adds */
	int norder, order_cap;
	int *later; /* changed outside a pass, reported by the next */
	int nlater, later_cap;
	/* jobs marked never, grouped by what admission reads (never.c) */
	struct gf__nkey *nk;
	int nnk, nk_cap;
	int *nk_slot; /* open addressing: key + 1 */
	int nk_scap;
	uint32_t pass;
	bool in_pass;	 /* a pass walks the queues: it builds the order */
	bool heap_dirty; /* a preemption changed other teams' shares */
	/* masks */
	struct gf__mask *masks; /* each on[] has ncap entries */
	int nmasks, masks_cap;
	uint32_t mask_gen;
	/* scratch, per node (ncap): zero / -1 between uses */
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
	int explained; /* waiting jobs explained in detail (schedule.c) */
};

static inline struct gf__team *gf__team_of(struct gf_ctl *ctl,
					   const struct gf__jrec *j)
{
	return &ctl->teams[j->team];
}

static inline int gf__prio(const struct gf_ctl *ctl, const struct gf__jrec *j)
{
	return ctl->cfg.classes[j->cls].priority;
}

static inline int gf__jid(const struct gf_ctl *ctl, const struct gf__jrec *j)
{
	return (int)(j - ctl->jr);
}

/* jobs_nodes.c */
void gf__nodes_reserve(struct gf_ctl *ctl, int n);
void gf__block_join(struct gf_ctl *ctl, int i);
void gf__nodes_free(struct gf_ctl *ctl);

/* jobs_health.c */
/* The engine cordons node i iff it is not ready, cordoned or drained. */
void gf__cordon_sync(struct gf_ctl *ctl, int node);
/* Requeue (gf__requeue) every job running on node i, or only the gangs;
 * each reported (gf__report) under mark. */
void gf__requeue_node(struct gf_ctl *ctl, int i, const char *why, int64_t now,
		      struct gf_ctl_changes *out, uint32_t mark,
		      bool gangs_only);
/* The nodes' states against the engine and the running replicas
 * (nrep[i]: counted afresh); 0 or GF_EINVAL with msg. */
int gf__nodes_check(const struct gf_ctl *ctl, const int *nrep, char *msg,
		    unsigned size);

/* mask.c */
int gf__labels_check(const char *s, char *why, unsigned size);
bool gf__labels_match(const char *labels, const char *selector);
/* The job's selector as a node mask (borrowed), NULL for every node. */
const uint8_t *gf__mask(struct gf_ctl *ctl, struct gf__jrec *j);
void gf__masks_free(struct gf_ctl *ctl);
/* Node i's labels are new (or it is): every cached mask follows. */
void gf__masks_node(struct gf_ctl *ctl, int i);
/* The per-node arrays grew from old to ncap entries. */
void gf__masks_grow(struct gf_ctl *ctl, int old);

/* jobs_mig.c */
const struct gf_mig_model *gf__mig_model_of(const char *model_name);
/* The MIG model a node states (mig_id) or, for mig_id "", its GPU model
 * implies; *m NULL for none.  GF_EINVAL for an unknown mig_id. */
int gf__mig_model_for(const char *mig_id, const char *gpu_model,
		      const struct gf_mig_model **m);
/* A node's instances against its model: GF_EINVAL (e names node and
 * GPU), GF_ETOOBIG when the profile names would pass GF__MAX_PROFILES
 * (names[0..*nnames) gathers the ones the core lacks). */
int gf__mig_check(const struct gf_ctl *ctl, const char *node, int ngpus,
		  const struct gf_mig_model *m, const char *model_name,
		  const struct gf_ctl_mig *mig, int nmig,
		  char names[][GF_MIG_PROFILE_MAX], int *nnames,
		  struct gf_err *e);
/* Would node i taking the instances mig[0..nmig) touch one in use, or put
 * a GPU in use into MIG mode?  GF_ECONFLICT naming it. */
int gf__mig_conflict(const struct gf_ctl *ctl, int i,
		     const struct gf_ctl_mig *mig, int nmig, struct gf_err *e);
/* Node i's instances become ctl->nodes[i].mig (users kept where an
 * instance stays); its GPUs in MIG mode held; profiles listed. */
void gf__mig_install(struct gf_ctl *ctl, int i);
int gf__mig_offered(const struct gf_ctl *ctl, int node, int prof);
/* Does node i offer exactly the instances mig[0..nmig)? */
bool gf__mig_same(const struct gf_ctl *ctl, int i, const struct gf_ctl_mig *mig,
		  int nmig);
void gf__mig_free(struct gf_ctl *ctl);
int gf__prof_find(const struct gf_ctl *ctl, const char *name);
int gf__mig_free_on(const struct gf_ctl *ctl, int node, int prof);
int gf__mig_take(struct gf_ctl *ctl, int node, int prof, int user);
int gf__mig_find(const struct gf_ctl *ctl, int node, int gpu, int start);
void gf__mig_give(struct gf_ctl *ctl, int inst);
/* The engine holds node i's GPUs in MIG mode and its unhealthy ones,
 * no other; the block's figures follow. */
void gf__gpu_sync(struct gf_ctl *ctl, int i);

/* quota.c */
void gf__team_limits(struct gf_ctl *ctl, struct gf__team *t,
		     const struct gf_ctl_team *cfg);
int gf__quota_room(struct gf_ctl *ctl, const struct gf__jrec *j, uint32_t *spec,
		   char *why, unsigned size);
void gf__quota_charge(struct gf_ctl *ctl, const struct gf__jrec *j,
		      const struct gf_job_place *pl, int sign);
int gf__quota_never(const struct gf_ctl *ctl, const struct gf__team *t,
		    const struct gf_job_spec *s, int model, int prof,
		    struct gf_err *e);
void gf__use_of(const struct gf_ctl *ctl, const struct gf__jrec *j,
		const struct gf_job_place *pl, struct gf__use *u, int sign);

/* order.c */
void gf__queue_push(struct gf_ctl *ctl, int jid);
void gf__queue_compact(struct gf_ctl *ctl);
void gf__order_push(struct gf_ctl *ctl, int jid);
void gf__order_sort_classes(struct gf_ctl *ctl);
typedef void (*gf__visit_fn)(struct gf_ctl *ctl, struct gf__pass *ps, int jid);
void gf__order_walk(struct gf_ctl *ctl, struct gf__pass *ps, gf__visit_fn fn);
void gf__queues_free(struct gf_ctl *ctl);

/* jobs_state.c */
int gf__team_get(struct gf_ctl *ctl, const char *name);
void gf__start(struct gf_ctl *ctl, int jid, struct gf_job_place *pl, int block,
	       int64_t now);
void gf__restored(struct gf_ctl *ctl, int jid, struct gf_job_place *pl,
		  int block);
void gf__enqueue(struct gf_ctl *ctl, int jid);
/* A running job stops: its placements given back to the engine, or kept
 * as completing replicas (cfg.hold_until_gone) tagged why. */
void gf__stop(struct gf_ctl *ctl, int jid, int64_t now, const char *why);
/* RUNNING (stopped as gf__stop, why) or new -> PENDING with reason. */
void gf__to_pending(struct gf_ctl *ctl, int jid, int64_t now, const char *why,
		    const char *reason);
void gf__to_final(struct gf_ctl *ctl, int jid, enum gf_job_state st,
		  int64_t now, const char *reason);
/* Put back by the infrastructure (its node lost, fenced, reshaped, a
 * start that failed): PENDING with reason, counted in requeues, never
 * against its attempts. */
void gf__requeue(struct gf_ctl *ctl, int jid, const char *reason, int64_t now);
/* Its own failure (a non-zero exit, its max runtime): counted; PENDING
 * again while its failures are below its class's max_attempts (default
 * 1: a failure is final), else FAILED with reason. */
void gf__failed(struct gf_ctl *ctl, int jid, int64_t now, const char *reason);
void gf__pend_count(struct gf_ctl *ctl, struct gf__jrec *j, int sign);

/* held.c: replicas completing (job.h's gf_job_held).  The jobs holding
 * any are listed in ctl->holding. */
/* Job jid's placements (it is stopping) kept taken as completing. */
void gf__held_keep(struct gf_ctl *ctl, int jid, int64_t now, const char *why);
/* Completing replica k of job jid gone: given back to the engine. */
void gf__held_drop(struct gf_ctl *ctl, int jid, int k);
/* A restored job's held replicas committed to the engine; those that no
 * longer fit (node gone, changed) dropped: true if any was. */
bool gf__held_restore(struct gf_ctl *ctl, int jid);
/* Every replica held on node i dropped (it was rebuilt); jobs reported. */
void gf__held_drop_node(struct gf_ctl *ctl, int i, struct gf_ctl_changes *out,
			uint32_t mark);

/* explain.c: why a job waits.  gf__explain sets its reason: the
 * resource short on the node that comes closest, or that every node it
 * may use is not ready or drained.  gf__room_somewhere: could it start
 * now, no reservation held (a gang: room for all its replicas, blocks
 * not told apart)? */
void gf__explain(struct gf_ctl *ctl, struct gf__jrec *j,
		 const struct gf_req *r);
bool gf__room_somewhere(struct gf_ctl *ctl, struct gf__jrec *j,
			const struct gf_req *r);

/* gang.c */
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
int gf__eng_place(struct gf_ctl *ctl, const struct gf_req *r,
		  const uint8_t *allowed, struct gf_placement *p);

/* preempt.c */
int gf__preempt(struct gf_ctl *ctl, struct gf__pass *ps, int jid,
		const struct gf_req *r);
/* The fewest of cand[0..ncand) (jrec indexes of jobs running on node)
 * whose release lets j fit there by fits(); their jrec indexes into
 * out (VMAX entries).  The count (0: it fits already), or GF_ENOTFOUND.
 * Changes nothing (trials run on copies of the node). */
int gf__victims(struct gf_ctl *ctl, struct gf__jrec *j, int node,
		const int *cand, int ncand, gf_ctl_fit_fn fits, void *arg,
		int *out);

/* backfill.c */
void gf__reserve(struct gf_ctl *ctl, struct gf__pass *ps, int jid,
		 const struct gf_req *r);

/* admit.c */
int gf__admit_setup(struct gf_ctl *ctl);
void gf__admit_free(struct gf_ctl *ctl);
/* Node i joins the group of nodes alike (it is new or changed), or
 * leaves it (before it changes); cached answers are dropped. */
void gf__group_join(struct gf_ctl *ctl, int i);
void gf__group_leave(struct gf_ctl *ctl, int i);
int gf__admit_check(const struct gf_ctl *ctl, char *msg, unsigned size);
int gf__admit_spec(const struct gf_ctl *ctl, const struct gf_job_spec *s,
		   bool api, struct gf_err *e);
/* The request, kinds, runtime and share kept beside a job. */
void gf__derive(struct gf_ctl *ctl, struct gf__jrec *j);

/* table.c */
/* What gf_ctl_add checks before it takes a job (0 or an error in e). */
int gf__add_check(struct gf_ctl *ctl, const struct gf_job *job,
		  struct gf_err *e);
/* A job's record filled in the slot after the table's last (jr[njr]),
 * not yet in the table (a trial may place it), then registered: in the
 * table, findable by id, listed in submission order. */
int gf__jrec_fill(struct gf_ctl *ctl, struct gf_job *job);
void gf__jrec_register(struct gf_ctl *ctl, int jid);

/* never.c: jobs marked never looked at again (all: every job not final,
 * after a node changed; else those marked, group by group, after a node
 * came); a job marked never joins its group. */
void gf__reconsider(struct gf_ctl *ctl, bool all);
void gf__never_push(struct gf_ctl *ctl, int jid);
void gf__never_free(struct gf_ctl *ctl);

/* typical.c */
int gf__typical_default(struct gf_ctl *ctl);
void gf__typical_refresh(struct gf_ctl *ctl, bool force);

#endif
