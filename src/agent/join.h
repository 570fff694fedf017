/*
 * join.h - a node agent's link to the controller (`gpufleet agent
 * --controller URL`): it registers the node, sends heartbeats (GPU
 * health, what runs, the runs that ended), waits on a long poll for its
 * assignments and makes the worker (worker/worker.h) run exactly them.
 * docs/cluster.md has the protocol and the failure cases.
 *
 * Two threads: the loop (it alone owns the worker and the ledger: it
 * registers, applies assignments, polls the worker, heartbeats, fences)
 * and the poller (the long poll; it hands each answer to the loop).
 *
 * Guarantees:
 *   - a run's end is reported until the controller acknowledges it
 *     (committed), across agent restarts (the worker keeps it on disk);
 *   - a replica never runs twice at once on this node, and an attempt
 *     that ended is never started again (a tombstone stays until the
 *     controller no longer assigns it);
 *   - fencing: when no heartbeat got an answer for fence_after (the
 *     controller says how long: its requeue time less the kill grace and
 *     a margin), every job is stopped, so the controller may requeue
 *     them elsewhere without the job ever running twice at once; the
 *     clock starts at the send of the last answered heartbeat, and the
 *     time and the fence are kept on disk for a restarted agent.
 */
#ifndef GF_JOIN_JOIN_H
#define GF_JOIN_JOIN_H

#include <stdbool.h>
#include <stdint.h>

#include <gpufleet/err.h>
#include <gpufleet/node.h>

#include "agent/agent.h"

struct gf_join_opts {
	const char *controller; /* "http://HOST:PORT" (no trailing '/') */
	const char *name;	/* this node's name */
	const char *token;	/* bearer token, or NULL */
	const char *labels;	/* "k=v,k=v", or NULL */
	const char *block;	/* its network block (NVLink domain, IB leaf) or
				   NULL: the label gpufleet.io/block, else the
				   controller's config */
	const char *address;	/* how others reach this node; NULL: name */
	const char *agent_url;	/* this agent's metrics URL, or NULL */
	const char *version;	/* gpufleet's, or NULL */
	const char *state_dir;	/* the worker's and the ledger's */
	const char *log_dir;	/* jobs' output; NULL: STATE/logs */
	const struct gf_node *node; /* this node (borrowed, outlives) */
	const char *topology;	    /* `topo --json` of it, or NULL */
	bool bind;		    /* bind jobs (the node is this machine) */
	bool cgroup;		    /* a cgroup v2 per job where possible */
	int64_t kill_grace_ms;	    /* 0: the worker's default */
	const char *default_user;   /* a job without a user; NULL: ours */
	struct gf_agent *agent;	    /* GPU health, NVML lock; NULL: none */

	/* https://: the controller's CA file (--ca), NULL the system's */
	const char *ca;
	/* the token over http:// to a controller that is not loopback */
	bool insecure_http;
	/* one connection to the controller, not two: no long poll; the
	 * assignments are read when a heartbeat's answer says a newer
	 * generation, so they arrive up to a heartbeat late */
	bool one_connection;
};

struct gf_join;

/*
 * Open the worker on the state directory (recovering what runs), read
 * the node's MIG state, and start the two threads (one with
 * one_connection); registration happens
 * on the loop (retried until the controller answers).  0 with *out, or
 * the worker's error (GF_ECONFLICT: another agent uses the state
 * directory), GF_EINVAL for bad options, GF_ETOOBIG for a state directory
 * whose paths would not fit (named; checked before anything is made on
 * disk), with e set.
 */
int gf_join_start(struct gf_join **out, const struct gf_join_opts *o,
		  struct gf_err *e) GF_MUST_CHECK;

/* Stop both threads; jobs keep running (a restarted agent finds them).
 * NULL is a no-op. */
void gf_join_stop(struct gf_join *j);

/* Figures for logs and tests (any thread). */
struct gf_join_stats {
	bool registered;
	bool fenced;
	uint64_t generation; /* the assignments last applied */
	int running;
	int pending_reports;
	uint64_t heartbeats, heartbeat_failures;
};
void gf_join_stats(struct gf_join *j, struct gf_join_stats *st);

#endif
