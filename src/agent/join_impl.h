/*
 * join_impl.h - internal to src/join: the link's state, the ledger of
 * replicas this node runs or ran, and the steps of the loop.
 *
 * The ledger: one entry per (job, replica) the worker knows or a
 * tombstone, each with the attempt it belongs to.  Running and ended
 * entries are rebuilt from the worker's records after a restart; a
 * tombstone is a file under STATE/ledger ("attempt N done GEN"), so a
 * restarted agent never starts an acknowledged attempt again.  An
 * entry's states:
 *
 *   RUNNING --ended (worker event, or a start that failed)--> ENDED
 *   ENDED --the controller acknowledged the report--> DONE (tombstone)
 *   DONE --assignments at or past its generation no longer list it--> gone
 */
#ifndef GF_JOIN_IMPL_H
#define GF_JOIN_IMPL_H

#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include <gpufleet/job.h>

#include "agent/join.h"
#include "agent/worker.h"
#include "nodeproto/nodeproto.h"
#include "server/client.h"

#define GF_JOIN_MAX_ENTRIES GF_WORKER_MAX_JOBS
/* Reports in one heartbeat: the rest wait for the next (they stay until
 * acknowledged).  Written, a report is about 220 bytes, so 1,024 keep a
 * heartbeat well under its body cap (GF_NP_BODY_MAX) beside a running
 * list of every replica. */
#define GF_JOIN_REPORTS_PER_BEAT 1024

enum gf_le_state { GF_LE_RUNNING, GF_LE_ENDED, GF_LE_DONE };

struct gf_le {
	char job[GF_JOB_ID_MAX];
	int replica, attempt;
	enum gf_le_state st;
	bool stopping;	       /* asked to stop (why in stop_why) */
	char stop_why[16];     /* "stopped", "fenced" */
	bool synthetic;	       /* ENDED without the worker (a failed start) */
	uint32_t gpus;	       /* its GPUs (bit g); all when not known (a run
				  found again after a restart) */
	struct gf_job_run run; /* ENDED: the report (seq and node unset) */
	uint64_t done_gen;     /* DONE: the acknowledgement's generation */
};

struct gf_ledger {
	char dir[GF_WORKER_PATH_MAX];
	struct gf_le *v;
	int n, cap;
};

/* Empty, on STATE/ledger; nothing touched on disk: 0, or GF_ETOOBIG
 * naming the path. */
int gf__ledger_init(struct gf_ledger *l, const char *state_dir,
		    struct gf_err *e) GF_MUST_CHECK;
/* Read the ledger's directory (created when missing); 0 or -errno /
 * GF_ETOOBIG. */
int gf__ledger_open(struct gf_ledger *l, struct gf_err *e) GF_MUST_CHECK;
void gf__ledger_close(struct gf_ledger *l);
struct gf_le *gf__ledger_find(struct gf_ledger *l, const char *job,
			      int replica);
/* A new RUNNING entry (memory only); NULL with e set (GF_ETOOBIG). */
struct gf_le *gf__ledger_add(struct gf_ledger *l, const char *job, int replica,
			     int attempt, struct gf_err *e);
/* ENDED -> DONE at generation gen, durable. */
int gf__ledger_done(struct gf_ledger *l, struct gf_le *le, uint64_t gen,
		    struct gf_err *e) GF_MUST_CHECK;
/* Forget an entry (its file too). */
void gf__ledger_remove(struct gf_ledger *l, struct gf_le *le);

struct gf_join {
	struct gf_join_opts o;
	char url_put[512], url_hb[512], url_poll[512];
	char fence[GF_WORKER_PATH_MAX]; /* STATE/fence: the fence clock */
	struct gf_worker *w;
	struct gf_ledger led;
	struct gf_np_inventory inv; /* what the PUT says the node is */
	pthread_t loop_tid, poll_tid;

	atomic_bool cancel;   /* stop: the poller's exchange gives up */
	pthread_mutex_t lock; /* everything below */
	pthread_cond_t wake;  /* new assignments, or stop */
	bool stop;
	bool need_register;
	struct gf_np_assignments next; /* from the poller, not yet applied */
	bool have_next;
	uint64_t received; /* the generation last received */
	struct gf_join_stats st;

	/* the loop's own (no lock) */
	uint64_t applied; /* the generation last applied whole */
	int64_t hb_every_ms;
	int64_t fence_after_ms; /* 0: unknown yet */
	int64_t last_ok_wall;	/* ms since the epoch: the send of the last
				   answered heartbeat (kept on disk) */
	int64_t last_ok_mono;	/* the same, monotonic (this process) */
	bool fenced;
	uint64_t acked_gen; /* the generation the last answer said */
};

/* join_inventory.c: j->inv from the node, its MIG state (through NVML, under
 * the agent's lock) and the options. */
int gf__join_inventory(struct gf_join *j, struct gf_err *e) GF_MUST_CHECK;

/* join_apply.c: the loop's work on the worker. */
/* Worker events into the ledger; true if a run ended. */
bool gf__join_events(struct gf_join *j);
/* Make the worker run exactly a's replicas; true when all were handled
 * (then j->applied = a->generation). */
bool gf__join_apply(struct gf_join *j, const struct gf_np_assignments *a);
/* The jobs running on the node's devices, from a's replicas the ledger
 * runs, handed to the agent's page (gf_agent_set_jobs: job and team
 * labels). */
void gf__join_jobs(struct gf_join *j, const struct gf_np_assignments *a);
/* join_mig.c: the MIG layouts the controller wants, applied on GPUs where no
 * replica runs; j->inv re-read and a registration asked when one
 * changed.  True when every layout is in place. */
bool gf__join_mig(struct gf_join *j, const struct gf_np_assignments *a);
/* The MIG device UUID of the instance at (gpu, start), "" unknown. */
const char *gf__join_mig_uuid(const struct gf_join *j, int gpu, int start);
/* Stop every running replica, saying why ("fenced"). */
void gf__join_stop_all(struct gf_join *j, const char *why);
/* The heartbeat members: health, running, pending reports (hb owns its
 * arrays: gf_np_heartbeat_release). */
void gf__join_heartbeat(struct gf_join *j, struct gf_np_heartbeat *hb);
/* Reports acknowledged: forgotten, tombstoned at gen. */
void gf__join_acked(struct gf_join *j, const struct gf_np_ack *a);

#endif
