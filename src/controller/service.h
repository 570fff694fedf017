/*
 * service.h - `gpufleet serve` as a service: the scheduling core
 * (include/gpufleet/ctl.h) kept in a store (store/store.h), served over
 * HTTP (server/server.h) on the routes of gf_service_routes().  The
 * command is options and output around this.  docs/controller.md has the
 * API, the state machine, the scheduling order and the operations.
 *
 * Threads: a few HTTP event loops (no thread per connection: thousands
 * of agents each hold a long poll) and one scheduler thread.  The
 * scheduler thread alone changes the core and alone uses the store;
 * handlers hold the request and hand it submissions, cancels and what
 * nodes say through a queue, and read the core under its lock.  Each
 * turn of the scheduler thread takes every request queued, adds the new
 * jobs, runs a scheduling pass, and writes every new and changed job in
 * ONE transaction (group commit) before it answers: a 201 means
 * committed.
 * A failed write stops the service (it cannot undo what the core did in
 * memory); a restart reloads the store.
 *
 * Leader: with PostgreSQL two servers may run; the one holding the store's
 * leader lock serves, the other answers 503 {"error": "standby"} and tries
 * the lock every second; a leader that loses the lock stops (exit, to be
 * restarted as a standby), so no job is placed by two leaders.
 */
#ifndef GF_CONTROLLER_SERVICE_H
#define GF_CONTROLLER_SERVICE_H

#include <stdbool.h>

#include <gpufleet/err.h>

#include "controller/config.h"
#include "controller/k8s.h"
#include "server/auth.h"
#include "server/router.h"
#include "server/tls.h"

#define GF_SERVE_DEFAULT_LISTEN "127.0.0.1:9500"
#define GF_SERVE_DEFAULT_DB	"sqlite:gpufleet-state/gpufleet.db"
#define GF_SERVE_JOB_BODY_MAX	(64u << 10)
#define GF_SERVE_LIST_MAX	10000 /* jobs one list answer holds */
#define GF_SERVE_THREADS	4     /* HTTP event loops */
#define GF_SERVE_CONNECTIONS	32768 /* two per agent, and clients */
#define GF_SERVE_PER_CLIENT	1024  /* from one address: 512 agents */
/* libmicrohttpd's memory per connection (its default: 32 KiB): a
 * request's line and headers, and buffers; bodies stream past it */
#define GF_SERVE_CONN_MEMORY (8u << 10)

struct gf_service_opts {
	const char *listen;	     /* "IPv4:PORT" */
	const char *db;		     /* store URL */
	struct gf_serve_config *cfg; /* read by the caller; borrowed */
	const char *nodes_csv;	     /* or NULL */
	const struct gf_auth *auth;  /* NULL: no tokens (loopback only) */
	long tick_ms;		     /* scheduling pass period; 0: 100 */
	bool agents_only; /* no node but those agents register (--agents) */
	unsigned threads; /* HTTP event loops; 0: GF_SERVE_THREADS */
	unsigned max_connections; /* 0: GF_SERVE_CONNECTIONS */
	/* from one address; 0: GF_SERVE_PER_CLIENT, GF_SERVER_NO_LIMIT:
	 * none */
	unsigned max_per_client;
	/* the Kubernetes scheduler extender (--k8s-extender), NULL off */
	const struct gf_k8s_opts *k8s;
	/* HTTPS (server/tls.h), NULL: plain HTTP; borrowed, outlives */
	const struct gf_tls *tls;
};

struct gf_service;

/*
 * Build the node table and the core, open the store, serve.  Leading or
 * not is settled by the scheduler thread (a standby answers 503 until it
 * leads).  0 with *out set, or a negative code with e naming the config,
 * the store URL or the address.  Block SIGTERM/SIGINT before calling if
 * the caller waits for them.
 */
int gf_service_start(struct gf_service **out, const struct gf_service_opts *o,
		     struct gf_err *e) GF_MUST_CHECK;

/* "http://127.0.0.1:9500/" (borrowed). */
const char *gf_service_url(const struct gf_service *s);

/* Nonzero once the service stopped by itself (a failed write, a lost
 * lead), with why in msg. */
int gf_service_failed(struct gf_service *s, char *msg, unsigned size);

/* Wait up to ms milliseconds for the service to fail; true if it did. */
bool gf_service_wait_failure(struct gf_service *s, long ms);

/* Stop: no new requests, the scheduler thread finishes its turn, the
 * server drains, the store closes.  Frees s. */
void gf_service_stop(struct gf_service *s);

/* The routes served, for -h. */
int gf_service_routes(const struct gf_route **out);

#endif
