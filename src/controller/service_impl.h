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

#include <gpufleet/ctl.h>

#include "controller/authz.h"
#include "controller/service.h"
#include "nodeproto/nodeproto.h"
#include "server/server.h"
#include "store/store.h"

/* Submit-to-placed latency buckets, seconds (Prometheus histogram). */
#define GF_SERVE_LAT_BUCKETS 12

enum gf_op_kind {
	GF_OP_SUBMIT,
	GF_OP_CANCEL,
	GF_OP_REGISTER,	 /* PUT /v1/nodes/{name} */
	GF_OP_HEARTBEAT, /* POST /v1/nodes/{name}/heartbeat */
	GF_OP_POLL,	 /* GET /v1/nodes/{name}/assignments */
	GF_OP_K8S,	 /* the scheduler extender: a bind, a release */
	GF_OP_ADMIN,	 /* drain.c: drain, resume, release (admin) */
	GF_OP_SVC_PUT,	 /* PUT /v1/services/{name}: node = name, after =
			    replicas, spec and body the job */
	GF_OP_SVC_SCALE, /* PUT /v1/services/{name}/replicas */
	GF_OP_SVC_DELETE,
};

enum gf_admin_kind { GF_ADMIN_DRAIN, GF_ADMIN_RESUME, GF_ADMIN_RELEASE };

/* A request handed to the scheduler thread, and its answer. */
struct gf_op {
	enum gf_op_kind kind;
	struct gf_http_req *req; /* held: answered by the thread */
	struct gf_grant grant;	 /* who asked, and what it may touch */
	struct gf_job_spec spec; /* SUBMIT: owned until the thread takes it */
	char id[GF_JOB_ID_MAX];	 /* CANCEL */
	char node[GF_NODE_NAME_MAX]; /* REGISTER, HEARTBEAT, POLL */
	struct gf_np_inventory *inv; /* REGISTER (owned) */
	char *body;		     /* REGISTER: as it came (owned) */
	size_t body_len;
	struct gf_np_heartbeat hb; /* REGISTER, HEARTBEAT (owned) */
	uint64_t after;		   /* POLL: answer once past this */
	enum gf_admin_kind admin;  /* ADMIN: what (node or id names whom;
				      body the drain's reason) */
	int attempt, replica;	   /* ADMIN release: -1 any */
	int64_t deadline;	   /* POLL: answer by then (monotonic ms) */
	/* when the request arrived (gf__service_hold), realtime
	 * microseconds: a submitted job's submission time */
	int64_t arrived_us;
	/* the answer, set by the scheduler thread */
	unsigned status;
	char error[32];
	char detail[GF_ERR_MSG_MAX];
	char job_id[GF_JOB_ID_MAX];
	enum gf_job_state state;
	struct gf_np_ref *acked; /* HEARTBEAT, REGISTER: reports committed */
	int nacked;
	struct gf_k8s_op *k8s; /* K8S (owned; k8s_impl.h) */
	struct gf_op *next;
};

struct gf_agents;   /* agents.c */
struct gf_translog; /* translog.c */
struct gf_svc;	    /* ctl_services.c */
struct gf_k8s;	    /* k8s_bind.c: the scheduler extender */
struct gf_k8s_op;

/* What one turn writes: jobs (each once), the runs reported, and the
 * nodes that registered. */
struct gf_batch {
	const struct gf_job **jobs;
	int n, cap;
	struct gf_job_run *runs;
	int nruns, rcap;
};

struct gf_service {
	struct gf_service_opts o;
	struct gf_ctl *ctl;
	struct gf_store *store;
	struct gf_server *srv;
	struct gf_agents *ag;
	struct gf_k8s *k8s; /* NULL: no --k8s-extender */
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
int gf__service_queue(struct gf_service *s, struct gf_op *op);

/* Hold r and queue op for it; on refusal answer 503 and free op.
 * Returns 0 either way (the request is answered or will be). */
int gf__service_hold(struct gf_service *s, struct gf_http_req *r,
		     struct gf_op *op);

/* Free an op and what it owns (not its request). */
void gf__op_free(struct gf_op *op);

/* Set an op's answer to an error. */
void gf__op_error(struct gf_op *op, unsigned status, const char *error,
		  const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* Answer a held request from an op's error fields. */
void gf__op_reply_error(struct gf_op *op);

/* A job to write this turn (once). */
void gf__batch_add(struct gf_batch *b, const struct gf_job *j);

/* /metrics into b (under ctl_lock). */
void gf__service_metrics(struct gf_service *s, struct gf_buf *b);

/* ms since the epoch, now; and a monotonic clock in ms. */
int64_t gf__service_now_ms(void);
int64_t gf__service_mono_ms(void);

/* --- the node agents' side (agents.c), on the scheduler thread --- */

struct gf_agents *gf__agents_new(struct gf_service *s);
void gf__agents_free(struct gf_agents *ag);
/* Becoming the leader: the stored nodes into the core (before the jobs,
 * which may run on them), not ready until they call, given the full
 * requeue time from now; the runs kept (so a report sent twice counts
 * once).  0 or an error in e. */
int gf__agents_load(struct gf_agents *ag, struct gf_err *e);
/* After the jobs are loaded: the assignments of every running job. */
void gf__agents_index_all(struct gf_agents *ag);
/* An op of kind REGISTER, HEARTBEAT or POLL, under ctl_lock. */
void gf__agents_op(struct gf_agents *ag, struct gf_op *op, int64_t now,
		   struct gf_batch *b);
/* Nodes silent too long: NotReady, then their jobs requeued; under
 * ctl_lock. */
void gf__agents_sweep(struct gf_agents *ag, int64_t now, struct gf_batch *b);
/* A job changed (state or placements): where its replicas are assigned
 * follows; under ctl_lock. */
void gf__agents_job_changed(struct gf_agents *ag, const struct gf_job *j);
/* After the turn's write: store the nodes that registered (0, or the
 * error that stops the service). */
int gf__agents_commit(struct gf_agents *ag, struct gf_err *e);
/* Answer an agent op of this turn (or park a poll). */
void gf__agents_answer(struct gf_agents *ag, struct gf_op *op);
/* Answer the parked polls whose node changed or whose wait ended (all of
 * them when `all`, with status 503 when failing). */
void gf__agents_wake(struct gf_agents *ag, bool all, unsigned status);
/* Node i's GPU l->gpu gets MIG layout l: the core's node changes now
 * (refused while an instance of that GPU is in use), its agent is told
 * with its next assignments; under ctl_lock.  0 or an error in e. */
int gf__agents_mig_layout(struct gf_agents *ag, int i,
			  const struct gf_np_mig_layout *l, int64_t now,
			  struct gf_batch *b, struct gf_err *e);
/* With the config's mig_auto_apply: every few seconds, the proposal
 * applied on nodes whose agents are ready (ctl_mig.c); under ctl_lock. */
void gf__mig_auto(struct gf_service *s, int64_t now, struct gf_batch *b);
/* For GET /v1/nodes: the node's state ("ready", "notready"), its GPUs'
 * UUIDs; under ctl_lock. */
const char *gf__agents_state(const struct gf_agents *ag, int node);
/* Why it is not ready ("" when it is). */
const char *gf__agents_reason(const struct gf_agents *ag, int node);
const char *gf__agents_uuid(const struct gf_agents *ag, int node, int gpu);
/* The UUID of node's MIG instance (gpu, start), or NULL. */
const char *gf__agents_mig_uuid(const struct gf_agents *ag, int node, int gpu,
				int start);
/* A pod's job (the scheduler extender's, k8s_bind.c): Kubernetes runs
 * it, so no agent is ever assigned one. */
bool gf__k8s_is_pod(const struct gf_job *j);
/* Node i's heartbeat: the pods its agent sees on each GPU compared with
 * what the extender bound (k8s_reconcile.c); under ctl_lock. */
void gf__k8s_reconcile(struct gf_k8s *k, int node,
		       const struct gf_np_heartbeat *hb,
		       const struct gf_np_inventory *inv);
/* Node i went silent (NotReady, or lost): its mismatches, which only its
 * heartbeats showed, are dropped, and so is its series in /metrics,
 * until a heartbeat compares again; under ctl_lock. */
void gf__k8s_reconcile_forget(struct gf_k8s *k, int node);
/* The gpufleet_k8s_pod_gpu_mismatches family of /metrics. */
void gf__k8s_metrics(struct gf_k8s *k, struct gf_buf *b);
/* Its stored inventory text, or NULL. */
const char *gf__agents_inventory(const struct gf_agents *ag, int node,
				 size_t *len);

/* --- handlers ---------------------------------------------------------- */

/* The grant of a request's caller (authz.h), which the dispatcher
 * (ctl_api.c) has let through to its handler: the handler's scope. */
void gf__api_grant(const struct gf_service *s, struct gf_http_req *r,
		   struct gf_grant *g);
/* Every route has a row in the authorization table: 0 or GF_EINVAL. */
int gf__api_check_routes(struct gf_err *e);
/* A node as GET /v1/nodes lists it (under ctl_lock). */
void gf__api_node_json(struct gf_json *j, const struct gf_service *s, int i);

/* Inference services (ctl_services.c), on the scheduler thread. */
int gf__services_load(struct gf_service *s, struct gf_err *e);
void gf__services_free(struct gf_service *s);
void gf__services_op(struct gf_service *s, struct gf_op *op);
void gf__services_reconcile(struct gf_service *s, int64_t now,
			    struct gf_batch *b);
int gf__services_commit(struct gf_service *s, struct gf_err *e);
void gf__services_answer(struct gf_service *s, struct gf_op *op);
int gf__services_get(struct gf_http_req *r, void *arg);
int gf__services_put(struct gf_http_req *r, void *arg);
int gf__services_scale(struct gf_http_req *r, void *arg);
int gf__services_delete(struct gf_http_req *r, void *arg);
int gf__services_one(struct gf_http_req *r, void *arg); /* GET, DELETE */

/* MIG proposals (ctl_mig.c): the planner over the core's view now. */
struct gf_mig_proposal;
int gf__mig_proposal(const struct gf_ctl *ctl, struct gf_mig_proposal *p,
		     struct gf_err *e);
int gf__mig_get(struct gf_http_req *r, void *arg);
/* GET /v1/chargeback (charge.c). */
int gf__charge_get(struct gf_http_req *r, void *arg);

/* The node agents' routes (agents_http.c). */
int gf__nodes_put(struct gf_http_req *r, void *arg);
int gf__nodes_get_one(struct gf_http_req *r, void *arg);
int gf__nodes_heartbeat(struct gf_http_req *r, void *arg);
int gf__nodes_assignments(struct gf_http_req *r, void *arg);

/* translog.c: one info line per job transition (the scheduler thread's,
 * for every job a turn changed). */
void gf__translog(struct gf_service *s, const struct gf_job *j);
void gf__translog_free(struct gf_translog *t);

/* drain.c: an operator's routes (admin) and their work on the
 * scheduler thread. */
int gf__nodes_drain(struct gf_http_req *r, void *arg);
int gf__nodes_resume(struct gf_http_req *r, void *arg);
int gf__jobs_release(struct gf_http_req *r, void *arg);
void gf__admin_op(struct gf_service *s, struct gf_op *op, struct gf_batch *b);
void gf__admin_answer(struct gf_service *s, struct gf_op *op);
/* agents.c: node i drained with reason, or resumed (NULL): shown by
 * GET /v1/nodes ("draining", "drained"). */
void gf__agents_set_drain(struct gf_agents *ag, int i, const char *reason);

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
