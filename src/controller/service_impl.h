/*
 * service_impl.h - internal: the controller service's state, shared by
 * service.c (the scheduler thread), ctl_api.c (the job handlers), agents.c
 * and agents_http.c (the node agents' side of each turn, their handlers)
 * and ctl_metrics.c.
 *
 * Requests: the server runs event loops (no thread per connection), so a
 * handler never waits.  A handler that changes something parses the
 * request, holds it (gf_req_suspend) and queues an op; the scheduler
 * thread takes the queue each turn, changes the core, writes the store,
 * and only then answers every op of the turn (a 201 means committed).  A
 * long poll (an agent waiting for its assignments) is an op the thread
 * parks on its node until the node's assignments change or its wait ends.
 *
 * Locks, in the only order they are ever taken: qlock (the request
 * queue), then ctl_lock (the core, `leading`, the figures, the nodes'
 * states).  The scheduler thread takes qlock only to move the queue out,
 * and holds ctl_lock while it changes the core, never while it writes
 * the store or answers.  It alone changes the core and the agents'
 * state, so it reads them without the lock; handlers read them under it.
 */
#ifndef GF_CONTROLLER_SERVICE_IMPL_H
#define GF_CONTROLLER_SERVICE_IMPL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include <gpufleet/ctl.h>

#include "controller/authz.h"
#include "controller/service.h"
#include "nodeproto/nodeproto.h"
#include "server/server.h"
#include "store/store.h"
#include "util/clock.h"
#include "util/cond.h"

/* Submit-to-placed latency buckets, seconds (Prometheus histogram). */
#define GF_SERVE_LAT_BUCKETS 12

struct gf_op;
struct gf_batch;

/*
 * A request kind: one row, owned by the feature file whose handler makes
 * its ops (the op's payload is that file's: a struct beginning with a
 * struct gf_op).  The scheduler thread calls apply for each op of a turn
 * under ctl_lock, then, after the turn's write, answer (which takes the
 * op: it answers and frees it, or keeps it, a parked poll).
 */
struct gf_op_kind {
	const char *name;
	void (*apply)(struct gf_service *s, struct gf_op *op, int64_t now,
		      struct gf_batch *b);
	void (*answer)(struct gf_service *s, struct gf_op *op);
	/* free op and its payload (not its request) */
	void (*release)(struct gf_op *op);
	/* the job op submitted this turn, or NULL: its submit-to-placed
	 * time is measured from the request's arrival (NULL: none) */
	const struct gf_job *(*posted)(struct gf_service *s,
				       const struct gf_op *op);
	/* right after the turn's ops are applied (under ctl_lock, before
	 * its pass and its write): true when op was taken (its record is
	 * elsewhere and needs no wait for the store: a pod's Binding), so
	 * the turn neither answers nor frees it; false leaves op as it was
	 * (NULL: never taken) */
	bool (*early)(struct gf_service *s, struct gf_op *op);
};

/* A request handed to the scheduler thread, and its answer. */
struct gf_op {
	const struct gf_op_kind *kind;
	struct gf_http_req *req; /* held: answered by the thread */
	struct gf_grant grant;	 /* who asked, and what it may touch */
	/* when the request arrived (gf__service_hold), realtime
	 * microseconds: a submitted job's submission time */
	int64_t arrived_us;
	/* the answer, set by the scheduler thread */
	unsigned status;
	char error[32];
	char detail[GF_ERR_MSG_MAX];
	struct gf_op *next;
};

/* A handler's call: the service, and the grant the dispatcher decided
 * (authz.c's table, once per request): the handler's scope. */
struct gf_call {
	struct gf_service *s;
	struct gf_grant grant;
};

struct gf_agents;   /* agents.c */
struct gf_translog; /* translog.c */
struct gf_svc;	    /* ctl_services.c */
struct gf_k8s;	    /* k8s_bind.c: the scheduler extender */
struct gf_logs;	    /* ctl_logs.c: the logs read through agents */
struct gf_k8s_op;

/* What one turn writes: jobs (each once), the runs reported, and the
 * nodes that registered. */
struct gf_batch {
	const struct gf_job **jobs;
	int n, cap;
	struct gf_job_run *runs;
	int nruns, rcap;
};

/*
 * A feature of the service (agents, services, MIG, the scheduler
 * extender, the transition log): hooks the scheduler thread calls, in
 * the order the features registered (gf__service_register), so that the
 * service calls no feature by name.  Every hook may be NULL; arg is the
 * feature's.  Under ctl_lock unless said.
 */
struct gf_feature {
	const char *name;
	void *arg;
	/* becoming the leader: stored state in, before the jobs load (the
	 * nodes they run on), and after them; 0 or an error in e */
	int (*load_nodes)(void *arg, struct gf_err *e);
	int (*load)(void *arg, struct gf_err *e);
	/* everything loaded: index the jobs */
	void (*loaded)(void *arg);
	/* each turn, after its requests, before the scheduling pass */
	void (*step)(void *arg, int64_t now, struct gf_batch *b);
	/* after a scheduling pass */
	void (*passed)(void *arg, int64_t now, struct gf_batch *b);
	/* a job the turn changed (listeners: where replicas run follows) */
	void (*changed)(void *arg, const struct gf_job *j);
	/* after the turn's jobs are written, not under ctl_lock: 0, or the
	 * error that stops the service */
	int (*commit)(void *arg, struct gf_err *e);
	/* after the turn's answers, not under ctl_lock: wake what waits
	 * (all of it when `all`, answered `status`) */
	void (*wake)(void *arg, bool all, unsigned status);
	/* node i's heartbeat (with its inventory), or its agent went silent */
	void (*heartbeat)(void *arg, int node, const struct gf_np_heartbeat *hb,
			  const struct gf_np_inventory *inv);
	void (*node_lost)(void *arg, int node);
	/* its families of /metrics */
	void (*metrics)(void *arg, struct gf_buf *b);
	/* not under ctl_lock: the service runs (its threads start), the
	 * server stops, the service is freed */
	int (*start)(void *arg, struct gf_err *e);
	void (*stopping)(void *arg);
	void (*free)(void *arg);
};

#define GF_SERVICE_FEATURES_MAX 8

struct gf_service {
	struct gf_service_opts o;
	struct gf_ctl *ctl;
	struct gf_store *store;
	struct gf_server *srv;
	struct gf_agents *ag;
	struct gf_k8s *k8s;   /* NULL: no --k8s-extender */
	struct gf_logs *logs; /* ctl_logs.c's */
	pthread_t tid;
	bool running;

	pthread_mutex_t qlock;
	pthread_cond_t qwake; /* work queued, or stop */
	struct gf_op *head, *tail;
	bool stop;
	bool draining; /* the server stops: answer parked polls now */

	pthread_mutex_t ctl_lock;
	bool leading; /* the core holds the store's state */
	uint64_t seq; /* the last job number given */
	int64_t last_lead_ms;
	int64_t mig_last_ms; /* the last MIG auto-apply (gf__mig_auto) */
	/* figures for /metrics (under ctl_lock) */
	uint64_t lat_count[GF_SERVE_LAT_BUCKETS + 1];
	double lat_sum;
	/* submit to running: its first replica's agent runs it (agents) */
	uint64_t run_count[GF_SERVE_LAT_BUCKETS + 1];
	double run_sum;
	uint64_t submitted, rejected, cancelled, write_batches;
	uint64_t foreign_reports; /* runs a node reported of another's */

	/* inference services (ctl_services.c; the scheduler thread's, read by
	 * handlers under ctl_lock) */
	struct gf_svc *svc;
	int nsvc, svc_cap;
	struct gf_translog *tlog; /* what translog.c last said per job */
	int64_t svc_next_ms;	  /* the next count of their jobs */

	struct gf_history *hist; /* every job's runs (history.c) */

	struct gf_feature feat[GF_SERVICE_FEATURES_MAX];
	int nfeat;

	atomic_int failed;
	char fail_msg[GF_ERR_MSG_MAX];
	pthread_cond_t failed_cond; /* under qlock */
};

/* The bucket bounds, seconds. */
extern const double gf_serve_lat_bounds[GF_SERVE_LAT_BUCKETS];
/* v seconds into a histogram of those bounds (count has one more). */
void gf__hist_observe(uint64_t *count, double *sum, double v);

/*
 * Queue op (its request held by the caller already).  0, or GF_ECONFLICT
 * when the service is stopping or failed: the caller answers it then.
 */
int gf__service_queue(struct gf_service *s, struct gf_op *op) GF_MUST_CHECK;

/* Hold r and queue op for it; on refusal answer 503 and free op.
 * Returns 0 either way (the request is answered or will be). */
int gf__service_hold(struct gf_service *s, struct gf_http_req *r,
		     struct gf_op *op) GF_MUST_CHECK;

/* Free an op and what it owns (not its request). */
void gf__op_free(struct gf_op *op);

/* Set an op's answer to an error. */
void gf__op_error(struct gf_op *op, unsigned status, const char *error,
		  const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* Set an op's answer to the error rc (a GF_E* code; its HTTP status
 * and error word) with msg. */
void gf__op_fail(struct gf_op *op, int rc, const char *msg);

/* Answer a held request from an op's error fields. */
void gf__op_reply_error(struct gf_op *op);

/* An op's JSON answer begun: true, b and j opened (cap bytes at most);
 * false when the op failed: its error answered and the op freed. */
bool gf__op_answer_open(struct gf_op *op, struct gf_buf *b, struct gf_json *j,
			size_t cap);

/* An op's JSON answer (j and its buffer, from gf__op_answer_open) sent
 * with status (a failed send: nothing to do), or, when it did not fit
 * its cap, a 500 "too-big" that says so (never a cut answer); the buffer
 * released and the op freed. */
void gf__op_answer_close(struct gf_op *op, unsigned status, struct gf_json *j);

/* A job to write this turn (once). */
void gf__batch_add(struct gf_batch *b, const struct gf_job *j);

/* gf_clock_ms() in whole ms. */
static inline int64_t gf__mono_ms(void)
{
	return (int64_t)gf_clock_ms();
}

/* --- the service's core (service.c): features register into it --- */

/* Feature f's hooks, called after those registered before it: 0, or
 * GF_ETOOBIG past GF_SERVICE_FEATURES_MAX. */
int gf__service_register(struct gf_service *s,
			 const struct gf_feature *f) GF_MUST_CHECK;
/* A node's heartbeat, a node gone silent, the features' /metrics: told
 * to every feature with that hook (under ctl_lock). */
void gf__service_heartbeat(struct gf_service *s, int node,
			   const struct gf_np_heartbeat *hb,
			   const struct gf_np_inventory *inv);
void gf__service_node_lost(struct gf_service *s, int node);
void gf__service_feature_metrics(struct gf_service *s, struct gf_buf *b);
/* The service with its core built (no store, no server yet): 0 with *out
 * set, or an error in e. */
int gf__service_new(struct gf_service **out, const struct gf_service_opts *o,
		    struct gf_err *e) GF_MUST_CHECK;
/* Open the store, lead, serve routes, start the scheduler thread and the
 * features: 0, or an error in e (s is freed then). */
int gf__service_run(struct gf_service *s, const struct gf_route *routes,
		    int nroutes, struct gf_err *e) GF_MUST_CHECK;
/* Free a service that does not run (gf__service_run failed or was not
 * called): its features, core and store. */
void gf__service_free(struct gf_service *s);
/* Answer 503 unless this server leads (under ctl_lock): true if it does. */
bool gf__service_serving(struct gf_service *s, struct gf_http_req *r);
/* Copy a string between two arrays of the same size (checked when
 * compiled): it always fits, nothing is cut. */
#define GF__COPY_SAME(dst, src)                                         \
	do {                                                            \
		_Static_assert(sizeof(dst) == sizeof(src), "one size"); \
		memcpy(dst, src, sizeof(dst));                          \
	} while (0)

/* A call into the core that cannot fail here did (rc != 0): logged, with
 * what was asked and e's message; nothing else to do. */
void gf__core_warn(int rc, const struct gf_err *e, const char *what);

/* Job number seq's id, "j42" (it always fits: GF_JOB_ID_MAX). */
void gf__job_id(char id[GF_JOB_ID_MAX], uint64_t seq);
/* Job number seq of the core, or NULL. */
const struct gf_job *gf__job_by_seq(const struct gf_ctl *ctl, uint64_t seq);
/* An HTTP status for an error code, and its "error" word. */
unsigned gf__status_of(int rc);
const char *gf__error_of(unsigned status);

/* --- the node agents' side (agents*.c) --- */

struct gf_agents *gf__agents_new(struct gf_service *s);
void gf__agents_free(struct gf_agents *ag);
/* Becoming the leader: the stored nodes into the core (before the jobs,
 * which may run on them), not ready until they call, given the full
 * requeue time from now; the runs kept (so a report sent twice counts
 * once).  0 or an error in e. */
int gf__agents_load(struct gf_agents *ag, struct gf_err *e) GF_MUST_CHECK;
/* After the jobs are loaded: the assignments of every running job. */
void gf__agents_index_all(struct gf_agents *ag);
/* Nodes silent too long: NotReady, then their jobs requeued; under
 * ctl_lock. */
void gf__agents_sweep(struct gf_agents *ag, int64_t now, struct gf_batch *b);
/* A job changed (state or placements): where its replicas are assigned
 * follows; under ctl_lock. */
void gf__agents_job_changed(struct gf_agents *ag, const struct gf_job *j);
/* After the turn's write: store the nodes that registered (0, or the
 * error that stops the service). */
int gf__agents_commit(struct gf_agents *ag, struct gf_err *e) GF_MUST_CHECK;
/* Answer the parked polls whose node changed or whose wait ended (all of
 * them when `all`, with status 503 when failing). */
void gf__agents_wake(struct gf_agents *ag, bool all, unsigned status);
/* Node i's GPU l->gpu gets MIG layout l: the core's node changes now
 * (refused while an instance of that GPU is in use), its agent is told
 * with its next assignments; under ctl_lock.  0 or an error in e. */
int gf__agents_mig_layout(struct gf_agents *ag, int i,
			  const struct gf_np_mig_layout *l, int64_t now,
			  struct gf_batch *b, struct gf_err *e) GF_MUST_CHECK;
/* For GET /v1/nodes: the node's state ("ready", "notready"), its GPUs'
 * UUIDs; under ctl_lock. */
const char *gf__agents_state(const struct gf_agents *ag, int node);
/* Heartbeats answered on their request's thread (nothing changed: read
 * and checked, or the same bytes as the node's last such one) and by
 * the scheduler thread, since start. */
void gf__agents_heartbeats(const struct gf_agents *ag, uint64_t *quick,
			   uint64_t *repeat, uint64_t *slow);
/* Long polls taken by their handler (answered or parked on arrival) and
 * by the scheduler thread, since start. */
void gf__agents_polls(const struct gf_agents *ag, uint64_t *here,
		      uint64_t *turn);
/* Why it is not ready ("" when it is). */
const char *gf__agents_reason(const struct gf_agents *ag, int node);
const char *gf__agents_uuid(const struct gf_agents *ag, int node, int gpu);
/* The UUID of node's MIG instance (gpu, start), or NULL. */
const char *gf__agents_mig_uuid(const struct gf_agents *ag, int node, int gpu,
				int start);
/* Where replica `replica` of job j's attempt ran or runs: the core's
 * node index, with *live while it runs or completes (its end is still
 * to come); GF_ENOTFOUND when that run is not known (never started),
 * -ENODEV when it ended on a node this controller no longer knows.
 * Under ctl_lock. */
int gf__agents_run_node(const struct gf_agents *ag, const struct gf_job *j,
			int attempt, int replica, bool *live);
/* Node i's agent URL ("http://10.0.0.5:9400/", borrowed), or NULL when
 * it has none or is not ready (never registered, silent, lost); under
 * ctl_lock. */
const char *gf__agents_url(const struct gf_agents *ag, int node);

/* Where placement p of job j is: its GPUs (ascending), their UUIDs and
 * its MIG instance's from the node's inventory ("" unknown), into r. */
void gf__agents_where(const struct gf_agents *ag, const struct gf_job *j,
		      const struct gf_job_place *p, struct gf_job_run *r);
/* Its stored inventory text, or NULL. */
const char *gf__agents_inventory(const struct gf_agents *ag, int node,
				 size_t *len);
/* agents.c: node i drained with reason, or resumed (NULL): shown by
 * GET /v1/nodes ("draining", "drained"). */
void gf__agents_set_drain(struct gf_agents *ag, int i, const char *reason);
/* A node as GET /v1/nodes lists it (ctl_nodeview.c; under ctl_lock). */
void gf__node_json(struct gf_json *j, const struct gf_service *s, int i);

/* --- features: each registers itself (ctl_serve.c calls these) --- */

int gf__agents_register(struct gf_service *s) GF_MUST_CHECK;
int gf__services_register(struct gf_service *s) GF_MUST_CHECK;
int gf__mig_register(struct gf_service *s) GF_MUST_CHECK;
int gf__translog_register(struct gf_service *s) GF_MUST_CHECK;
int gf__logs_register(struct gf_service *s) GF_MUST_CHECK;
int gf__history_register(struct gf_service *s) GF_MUST_CHECK;

/* --- every job's runs (history.c; under ctl_lock) --- */

struct gf_history;
/* An ended run (reported, or loaded from the store) kept; a second of
 * the same (seq, attempt, replica) changes nothing.  h may be NULL. */
void gf__history_add(struct gf_history *h, const struct gf_job_run *r);
/* Did job seq have a run that ended on node? */
bool gf__history_ran_on(const struct gf_history *h, uint64_t seq,
			const char *node);
/* Job j's runs by attempt and replica: those that ended, then the
 * replicas running or completing (ended_ms 0; reason "" running, else
 * why it completes).  The count; *out allocated (gf_free; NULL for 0). */
int gf__history_runs(const struct gf_service *s, const struct gf_job *j,
		     struct gf_job_run **out);
/* Job j as the API shows it (jobjson.h), with its runs; key NULL. */
void gf__history_job_json(struct gf_json *j, const struct gf_service *s,
			  const struct gf_job *job);
/* The scheduler extender (k8s_bind.c), when o->k8s: 0 or an error in e. */
int gf__k8s_register(struct gf_service *s, const struct gf_k8s_opts *o,
		     struct gf_err *e) GF_MUST_CHECK;

/* The routes of each feature (handlers take a struct gf_call). */
/* The jobs, the queue, the nodes, health (ctl_api.c). */
int gf__jobs_submit(struct gf_http_req *r, void *arg);
int gf__jobs_list(struct gf_http_req *r, void *arg);
int gf__jobs_get(struct gf_http_req *r, void *arg);
int gf__jobs_cancel(struct gf_http_req *r, void *arg);
/* GET /v1/jobs/{id}/logs (ctl_logs.c). */
int gf__jobs_logs(struct gf_http_req *r, void *arg);
int gf__queue_get(struct gf_http_req *r, void *arg);
int gf__nodes_get(struct gf_http_req *r, void *arg);
int gf__healthz(struct gf_http_req *r, void *arg);
int gf__services_get(struct gf_http_req *r, void *arg);
int gf__services_put(struct gf_http_req *r, void *arg);
int gf__services_scale(struct gf_http_req *r, void *arg);
int gf__services_one(struct gf_http_req *r, void *arg); /* GET, DELETE */
/* MIG proposals (ctl_mig.c): the planner over the core's view now. */
struct gf_mig_proposal;
int gf__mig_proposal(const struct gf_ctl *ctl, struct gf_mig_proposal *p,
		     struct gf_err *e) GF_MUST_CHECK;
int gf__mig_get(struct gf_http_req *r, void *arg);
/* GET /v1/chargeback (charge.c). */
int gf__charge_get(struct gf_http_req *r, void *arg);
/* GET /metrics (ctl_metrics.c). */
int gf__metrics_get(struct gf_http_req *r, void *arg);
/* The node agents' routes (agents_http.c). */
int gf__nodes_put(struct gf_http_req *r, void *arg);
int gf__nodes_get_one(struct gf_http_req *r, void *arg);
int gf__nodes_heartbeat(struct gf_http_req *r, void *arg);
int gf__nodes_assignments(struct gf_http_req *r, void *arg);
/* drain.c: an operator's routes (admin). */
int gf__nodes_drain(struct gf_http_req *r, void *arg);
int gf__nodes_resume(struct gf_http_req *r, void *arg);
int gf__jobs_release(struct gf_http_req *r, void *arg);
/* ctl_flow.c: hold and release (POST, DELETE), requeue; an array's
 * cancel (DELETE /v1/jobs/{id} of an array's id: is_array, under no lock
 * held by the caller). */
int gf__jobs_hold(struct gf_http_req *r, void *arg);
int gf__jobs_requeue(struct gf_http_req *r, void *arg);
bool gf__flow_is_array(struct gf_service *s, const char *id);
int gf__flow_cancel_array(struct gf_http_req *r, void *arg);
/* A team grant's dependency names only its team's jobs (another's is
 * "no job", as unknown): 0 or GF_EINVAL in e.  Under ctl_lock. */
int gf__flow_deps_visible(const struct gf_service *s, const struct gf_grant *g,
			  const char *dependency,
			  struct gf_err *e) GF_MUST_CHECK;
#define GF__FLOW_ROUTES                                                       \
	{ GF_HTTP_POST | GF_HTTP_DELETE, "/v1/jobs/{id}/hold", gf__jobs_hold, \
	  0, "hold a pending job (an array: its tasks); DELETE releases" },   \
	{                                                                     \
		GF_HTTP_POST, "/v1/jobs/{id}/requeue", gf__jobs_requeue, 0,   \
			"a running job stopped and put back pending"          \
	}

#define GF__NODE_ROUTES                                                          \
	{ GF_HTTP_PUT, "/v1/nodes/{name}", gf__nodes_put, GF_NP_BODY_MAX,        \
	  "its agent registers a node: inventory" },                             \
		{ GF_HTTP_GET, "/v1/nodes/{name}", gf__nodes_get_one, 0,         \
		  "one node, with its agent's inventory" },                      \
		{ GF_HTTP_POST, "/v1/nodes/{name}/heartbeat",                    \
		  gf__nodes_heartbeat, GF_NP_BODY_MAX,                           \
		  "health, what runs, runs that ended" },                        \
		{ GF_HTTP_GET, "/v1/nodes/{name}/assignments",                   \
		  gf__nodes_assignments, 0,                                      \
		  "long poll: ?wait=30s&after=GENERATION" },                     \
		{ GF_HTTP_POST, "/v1/nodes/{name}/drain", gf__nodes_drain,       \
		  4096,                                                          \
		  "admin: nothing new there, its work finishes: {reason}" },     \
		{ GF_HTTP_POST, "/v1/nodes/{name}/resume", gf__nodes_resume,     \
		  0, "admin: take work again" },                                 \
	{                                                                        \
		GF_HTTP_POST, "/v1/jobs/{id}/release", gf__jobs_release, 0,      \
			"admin: free a completing replica: ?attempt=A&replica=R" \
	}

#endif
