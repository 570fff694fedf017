/*
 * agents_impl.h - the node agents' side of the controller, shared by
 * agents.c (what the scheduler thread does with what agents say, the
 * assignment index, silence), agents_answer.c (the answers: acks,
 * assignments, long polls parked and woken), agents_quick.c (heartbeats
 * that change nothing, answered on arrival) and agents_ending.c
 * (replicas completing until their processes are gone).  agents.c says
 * the invariants.
 *
 * Threads: the scheduler thread changes a node's state in its turn,
 * under ctl_lock; handlers read it under ctl_lock, and two of them
 * write it there too: the quick heartbeat (last_seen, the q* fields,
 * the counters) and a parked poll (polls).  A node's polls, the wake
 * list and every wake are under ctl_lock.
 */
#ifndef GF_CONTROLLER_AGENTS_IMPL_H
#define GF_CONTROLLER_AGENTS_IMPL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "controller/service_impl.h"
#include "util/mem.h"

#define MASTER_PORT_BASE 29500
#define SWEEP_MS	 100 /* silent nodes looked for this often */
#define MASTER_PORTS	 2000

enum anode_state {
	AN_NONE = 0, /* a node of the config: no agent watched */
	AN_READY,
	AN_NOTREADY, /* silent: nothing new goes there, its jobs run on */
	AN_LOST,     /* silent past requeue_after: its jobs requeued */
};

struct aref {
	uint64_t seq;
	int replica;
	uint64_t gen; /* the node's generation that assigned it */
};

/* A replica unassigned from a node while its processes may live (held in
 * the core): gone once the node, having applied gen, no longer runs it,
 * or reports its end. */
struct ending {
	uint64_t seq;
	int attempt, replica;
	uint64_t gen;
};

struct anode {
	enum anode_state st;
	char why[GF_JOB_REASON_MAX]; /* why not ready, "" when ready */
	char *text;		     /* the inventory as it came (owned) */
	size_t len;
	struct gf_np_inventory *inv; /* parsed (owned) */
	bool dirty;		     /* store it this turn */
	int64_t registered_ms;
	int64_t last_seen; /* monotonic ms */
	uint64_t gen, applied;
	struct aref *refs;
	int nrefs, rcap;
	struct ending *ends; /* replicas completing here */
	int nends, ecap;
	struct gf_op *polls; /* parked */
	/* MIG layouts the controller applied to this node in the core and
	 * its agent has not reported yet (bit g: pending[g]) */
	uint16_t mig_pending;
	struct gf_np_mig_layout *pending; /* [GF_CNODE_MAX_GPUS], lazily */
	/* the last heartbeat answered quick (agents_quick.c): its body's
	 * hash, and the node's generation and sick GPUs then; valid while
	 * qok (cleared by any heartbeat the scheduler thread takes) */
	uint64_t qhash, qgen;
	uint16_t qsick;
	bool qok;
	bool woken;  /* on the wake list (its generation moved, polls parked) */
	char *drain; /* drained by an operator: the reason (owned); NULL */
};

/* Per running job: where its replicas are, which have ended. */
struct jside {
	int attempt;
	int nrep;
	int *node;	/* per replica */
	uint8_t *ended; /* per replica: a report came */
	uint8_t *up;	/* per replica: its agent said it runs (logged) */
	int port;	/* a gang's MASTER_PORT */
};

struct runkey {
	uint64_t seq; /* 0: empty */
	int attempt, replica;
	int node; /* where it ran (the core's index), -1 unknown now */
};

struct gf_agents {
	struct gf_service *s;
	struct anode *n;
	int cap;
	/* the per-turn walks are proportional to what changed: nodes whose
	 * generation moved while polls were parked, nodes to store, and the
	 * next poll deadline; silence is swept every SWEEP_MS */
	int *wake, nwake, wcap;
	int ndirty;
	int64_t next_deadline; /* the next walk for ended waits (mono ms) */
	int64_t next_sweep;
	struct jside **js; /* by seq */
	size_t jcap;
	struct runkey *seen; /* open addressing */
	size_t seen_cap, seen_n;
	uint64_t gen_base;
	/* heartbeats answered on their own thread (agents_quick.c) and on
	 * the scheduler thread (under ctl_lock: /metrics) */
	uint64_t quick, repeat, slow;
	uint64_t polls_here, polls_turn; /* long polls taken by their handler,
					    by the scheduler thread */
	/* polls may be parked by their handlers (the last wake did not
	 * answer every poll: leading, not draining or stopping) */
	bool open;
};

/* A node agent's request (agents_http.c makes it, agents.c applies it,
 * agents_answer.c answers it). */
enum agent_what { AG_REGISTER, AG_HEARTBEAT, AG_POLL };
struct agent_op {
	struct gf_op op;
	enum agent_what what;
	char node[GF_NODE_NAME_MAX];
	struct gf_np_inventory *inv; /* REGISTER (owned) */
	char *body;		     /* REGISTER: as it came (owned) */
	size_t body_len;
	/* REGISTER, HEARTBEAT (owned); NULL for a poll, which is held up
	 * to its wait: 2 KiB less per agent */
	struct gf_np_heartbeat *hb;
	uint64_t hb_hash;	 /* HEARTBEAT: its body's (gf_hash_bytes) */
	uint64_t after;		 /* POLL: answer once past this */
	int64_t deadline;	 /* POLL: answer by then (monotonic ms) */
	struct gf_np_ref *acked; /* reports committed */
	int nacked;
};

static inline struct agent_op *agent_op(struct gf_op *op)
{
	return (struct agent_op *)op;
}

/* agents.c: an agent's op on the scheduler thread, under ctl_lock. */
void gf__agents_apply(struct gf_service *s, struct gf_op *op, int64_t now,
		      struct gf_batch *b);
/* agents_answer.c: answer it after the turn's write (or park a poll). */
void gf__agents_answer(struct gf_service *s, struct gf_op *op);
/* A long poll taken by its handler, without the scheduler thread: true
 * when answered (its node's generation passed it) or parked (held) on
 * its node, under ctl_lock; false (nothing done) when the node is not
 * registered, the server does not lead or stops: held for the thread
 * as before.  n->polls, the wake list and every parking and waking are
 * under ctl_lock. */
bool gf__agents_park(struct gf_service *s, struct gf_http_req *r,
		     struct agent_op *x);
/* A register's or heartbeat's acknowledgement of node i (named node)
 * into b (opened here; the caller releases it): its state and generation
 * now, the reports acked.  Under ctl_lock, or on the scheduler thread. */
void gf__agents_ack(struct gf_agents *ag, struct gf_buf *b, int i,
		    const char *node, int nacked, struct gf_np_ref *acked);
/* agents_quick.c: a heartbeat that changes nothing answered on the
 * request's own thread, under ctl_lock: true (answered); false when the
 * scheduler thread must take it. */
bool gf__agents_quick(struct gf_service *s, struct gf_http_req *r,
		      struct agent_op *x);
/* The same before reading the body: true (answered) when node name's
 * heartbeat body has hash h, that of its last one answered quick, and
 * nothing that decided it has changed since. */
bool gf__agents_repeat(struct gf_service *s, struct gf_http_req *r,
		       const char *name, uint64_t h);

/* Node i's entry (grown as needed). */
static inline struct anode *gf__anode(struct gf_agents *ag, int i)
{
	size_t cap = (size_t)ag->cap;
	ag->n = gf_grow(ag->n, sizeof(*ag->n), &cap, (size_t)i, 64);
	ag->cap = (int)cap;
	return &ag->n[i];
}

/* Is (job id, attempt, replica) in the heartbeat's running list? */
bool gf__hb_runs(const struct gf_np_heartbeat *hb, const char *id, int attempt,
		 int replica);

/* agents_ending.c: replicas completing (see there). */
/* The replica of job j's run, held by the core on node i, or NULL. */
const struct gf_job_held *gf__held_on(const struct gf_job *j, int attempt,
				      int replica, int i);
/* Node i dropped it at its current generation; its agent stops it. */
void gf__agents_ending_add(struct gf_agents *ag, int node, uint64_t seq,
			   int attempt, int replica);
/* Its processes are gone: released in the core, its ending dropped, the
 * job into b (may be NULL: the caller stores it). */
void gf__agents_gone(struct gf_agents *ag, const struct gf_job *j, int attempt,
		     int replica, int i, const char *how, struct gf_batch *b);
/* Node i's heartbeat against its endings: gone, still stopping, stuck. */
void gf__agents_endings(struct gf_agents *ag, int i,
			const struct gf_np_heartbeat *hb, int64_t now,
			struct gf_batch *b);

static inline struct jside *jside_of(struct gf_agents *ag, uint64_t seq)
{
	return seq < ag->jcap ? ag->js[seq] : NULL;
}

#endif
