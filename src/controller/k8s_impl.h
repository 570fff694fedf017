/*
 * k8s_impl.h - internal: the scheduler extender inside the controller
 * (k8s.c: the routes; k8s_bind.c: binds and releases on the scheduler
 * thread, the API workers, the pod-list resync).
 *
 * A pod is a job.  kube-scheduler asks filter and prioritize about node
 * names; the handlers answer from the core under ctl_lock and change
 * nothing.  Bind goes through the scheduler thread like a submission:
 * the handler holds the request and queues an op (fetching the pod from
 * the API first when filter did not see it), the thread starts the
 * pod's job on the node kube-scheduler chose (gf_ctl_add_on: the engine
 * picks the GPUs there) and hands the op at once to an API worker,
 * which creates the pod's Binding carrying the GPUs as annotations and
 * answers, while the turn writes the job in its transaction; if the API
 * refuses, the job is released again (an op) and the answer is the API
 * server's message.  A pod bound so whose job the store never got (a
 * stop in between) is taken back by the resync (k8s_adopt.c).  A pod
 * deleted or ended (the resync's list no longer has it) or DELETE
 * /v1/jobs/ID releases its GPUs.  A pod's job must never run anywhere
 * else: one that a node lost or a preemption put back to pending is
 * cancelled in the same turn (gf__k8s_guard), and the node agents are
 * never assigned one.
 *
 * Locks: pods (uid -> job) is changed by the scheduler thread under
 * ctl_lock and read by handlers under ctl_lock; the filter's pod cache
 * has its own lock (cache_lock, taken alone); the workers' queue its own
 * (wlock: taken alone, or under ctl_lock by the scheduler thread, which
 * hands a recorded bind on and wakes the resync when a core is loaded;
 * ctl_lock is never taken under it, nor wlock after qlock).
 */
#ifndef GF_CONTROLLER_K8S_IMPL_H
#define GF_CONTROLLER_K8S_IMPL_H

#include <pthread.h>
#include <stdatomic.h>

#include "controller/k8s.h"
#include "controller/service_impl.h"
#include "k8s/answers.h"
#include "k8s/api.h"
#include "k8s/decide.h"
#include "k8s/k8s.h"
#include "nodeproto/nodeproto.h"
#include "util/hash.h"

struct gf_service;
struct gf_op;
struct gf_batch;
struct gf_buf;
struct gf_http_req;

enum gf_k8s_stage {
	GF_K8S_FETCH,	/* a worker reads the pod from the API */
	GF_K8S_RECORD,	/* the scheduler thread starts its job */
	GF_K8S_API,	/* a worker annotates and binds */
	GF_K8S_RELEASE, /* the scheduler thread ends jobs */
};

/* A pod bound by gpufleet (annotated) that the core did not hold when
 * the resync listed it (k8s_adopt.c). */
struct gf_k8s_bound {
	struct gf_k8s_pod pod;
	char job[GF_JOB_ID_MAX];   /* gpufleet.io/job */
	struct gf_job_place place; /* node, GPUs, share, MIG start */
};

struct gf_k8s_bound_list {
	struct gf_k8s_bound *v;
	int n, cap;
};

/* What a bind or a release carries through its stages. */
struct gf_k8s_op {
	struct gf_op op; /* its kind gf__k8s_kind */
	enum gf_k8s_stage stage;
	struct gf_k8s_bind_args b;
	struct gf_k8s_pod pod;
	bool recorded; /* a job was started: released if the API refuses */
	char job_id[GF_JOB_ID_MAX];
	char error[GF_ERR_MSG_MAX]; /* the Error answered, "" none */
	/* the annotations (keys GF_K8S_ANN_*), "" for none */
	char gpus[64];
	char uuids[GF_CNODE_MAX_GPUS * 100];
	char mig[256];
	char share[16];
	/* RELEASE: the job ids to end, or (live) every pod job whose uid
	 * is not in live[0..nlive) (sorted) and that started before
	 * before_ms */
	char (*ids)[GF_JOB_ID_MAX];
	int nids;
	char (*live)[GF_K8S_UID_MAX];
	int nlive;
	bool resync;
	int64_t before_ms;
	struct gf_k8s_bound_list bound; /* resync: taken back after */
};

struct k8s_pod_ref {
	char uid[GF_K8S_UID_MAX];
	uint64_t seq;
};

struct k8s_cached {
	char uid[GF_K8S_UID_MAX];
	int next; /* the next slot in its uid's chain, -1 none */
	struct gf_k8s_pod pod;
};

/* A pod whose GPU processes differ from its bind (k8s_reconcile.c). */
enum gf_k8s_mm_kind {
	GF_K8S_MM_WRONG_GPU, /* bound by gpufleet, runs on another device */
	GF_K8S_MM_NOT_BOUND, /* runs on the node's GPU, never bound */
};

struct gf_k8s_mm {
	enum gf_k8s_mm_kind kind;
	char uid[GF_NP_POD_UID_MAX];
	char device[GF_NP_UUID_MAX];	/* where it runs: "GPU-..", "MIG-.." */
	char pod[GF_JOB_NAME_MAX + 64]; /* "ns/name", "" not known */
	char bound[256];		/* what it was given, "" none */
	char reason[640];		/* one line for a person */
};

/* A node's mismatches as its last heartbeat showed them. */
struct gf_k8s_mm_node {
	bool seen; /* a heartbeat was compared */
	int n;
	struct gf_k8s_mm *v; /* owned */
};

/* Chains of the pod cache: uid hash -> first slot (-1 none). */
#define GF_K8S_CACHE_CHAINS (2 * GF_K8S_POD_CACHE)

struct gf_k8s {
	struct gf_service *s;
	struct gf_k8s_opts o;
	struct gf_k8s_api *api; /* NULL: no API server configured */
	char cls[GF_CLASS_NAME_MAX];
	/* the pods the core holds (uid -> job seq): rows, and their index */
	struct k8s_pod_ref *pods;
	int pcap, pn;
	struct gf_hmap pidx;
	/* pods filter saw, for bind (a ring), found by uid through chains */
	pthread_mutex_t cache_lock;
	struct k8s_cached *cache;
	int *chain;
	int cnext;
	/* the API workers */
	pthread_mutex_t wlock;
	pthread_cond_t wwake; /* work for the workers, or stop */
	pthread_cond_t rwake; /* stop, for the resync */
	struct gf_op *whead, *wtail;
	bool wstop;
	pthread_t *tids;
	int ntids;
	pthread_t resync_tid;
	bool resync_on;
	bool resync_due; /* a core was loaded: list now (under wlock) */
	/* mismatches per node index (k8s_reconcile.c), under ctl_lock */
	struct gf_k8s_mm_node *mm;
	int mmcap;
	/* verdicts kept between calls per pod shape, and the last list's
	 * name indices (k8s/answers.h), under ctl_lock */
	struct gf_k8s_answers *answers;
	/* figures, under ctl_lock */
	uint64_t filters, binds, bind_errors, releases, preempts, adopted;
};

static inline struct gf_k8s_op *gf__k8s_x(struct gf_op *op)
{
	return (struct gf_k8s_op *)op;
}

/* --- k8s_bind.c --- */
/* The request kind of binds and releases. */
extern const struct gf_op_kind gf__k8s_kind;
/* A new bind or release op (its kind set, nothing held). */
struct gf_k8s_op *gf__k8s_op_new(void);
/* Hand a held bind to a worker (stage FETCH). */
void gf__k8s_push(struct gf_k8s *k, struct gf_op *op);

/* --- k8s_pods.c: the pods the core holds (uid -> job), and the filter's
 * pod cache --- */
/* The job id of the pod with this uid the core holds, or NULL (under
 * ctl_lock; borrowed until the lock is released). */
const char *gf__k8s_job_of(struct gf_k8s *k, const char *uid);
/* Whether the core holds a job of the pod with this uid (its row in the
 * table, whatever the job's state; under ctl_lock). */
bool gf__k8s_held(struct gf_k8s *k, const char *uid);
void gf__k8s_pods_put(struct gf_k8s *k, const char *uid, uint64_t seq);
void gf__k8s_pods_del(struct gf_k8s *k, const char *uid);
/* Every pod held: fn(uid, seq, arg) (under ctl_lock; fn may delete the
 * pod it is given). */
void gf__k8s_pods_each(struct gf_k8s *k,
		       void (*fn)(const char *uid, uint64_t seq, void *arg),
		       void *arg);
/* Leading: the pods' jobs the core loaded (under ctl_lock). */
void gf__k8s_index(struct gf_k8s *k);
void gf__k8s_pods_free(struct gf_k8s *k);

/* --- k8s_adopt.c: pods bound by gpufleet the core does not hold --- */
/* A listed pod (the resync's thread, no lock held): into l when it is
 * bound, annotated by gpufleet and not held (ctl_lock taken to see). */
void gf__k8s_bound_collect(struct gf_k8s *k, const struct gf_jv *pod,
			   struct gf_k8s_bound_list *l);
/* On the scheduler thread (under ctl_lock): v's job added RUNNING on
 * its annotated GPUs unless held or known since; the job to b. */
void gf__k8s_adopt(struct gf_k8s *k, const struct gf_k8s_bound *v, int64_t now,
		   struct gf_batch *b);

/* --- k8s_reconcile.c --- */
void gf__k8s_reconcile_free(struct gf_k8s *k);
/* Node i's heartbeat: the pods its agent sees on each GPU compared with
 * what the extender bound; under ctl_lock. */
void gf__k8s_reconcile(struct gf_k8s *k, int node,
		       const struct gf_np_heartbeat *hb,
		       const struct gf_np_inventory *inv);
/* Node i went silent (NotReady, or lost): its mismatches, which only its
 * heartbeats showed, are dropped, and so is its series in /metrics,
 * until a heartbeat compares again; under ctl_lock. */
void gf__k8s_reconcile_forget(struct gf_k8s *k, int node);
/* The gpufleet_k8s_pod_gpu_mismatches family of /metrics. */
void gf__k8s_metrics(struct gf_k8s *k, struct gf_buf *b);
/* GET /k8s/reconcile (an admin's token): the mismatches, each with a
 * reason. */
int gf__k8s_reconcile_get(struct gf_http_req *r, void *arg);

/* --- k8s.c: the routes --- */
/* --- (the pod cache and the bind answer are k8s_pods.c's) --- */
int gf__k8s_filter(struct gf_http_req *r, void *arg);
int gf__k8s_prioritize(struct gf_http_req *r, void *arg);
int gf__k8s_preempt(struct gf_http_req *r, void *arg);
int gf__k8s_bind(struct gf_http_req *r, void *arg);
/* The pod cache: a pod filter read, remembered for its bind (the last
 * GF_K8S_POD_CACHE uids; a pod seen again keeps its place); a copy of it
 * by uid, found through its uid's chain, not a scan. */
void gf__k8s_cache_init(struct gf_k8s *k);
void gf__k8s_cache_release(struct gf_k8s *k);
void gf__k8s_cache_put(struct gf_k8s *k, const struct gf_k8s_pod *p);
bool gf__k8s_cache_get(struct gf_k8s *k, const char *uid,
		       struct gf_k8s_pod *out);
/* The bind answer {"Error": error} (200), and the request is done. */
void gf__k8s_reply_bind(struct gf_http_req *r, const char *error);

#define GF__K8S_ROUTES                                                     \
	{ GF_HTTP_POST, "/k8s/filter", gf__k8s_filter, GF_K8S_BODY_MAX,    \
	  "scheduler extender: ExtenderArgs -> FilterResult" },            \
		{ GF_HTTP_POST, "/k8s/prioritize", gf__k8s_prioritize,     \
		  GF_K8S_BODY_MAX,                                         \
		  "scheduler extender: HostPriorityList, 0..10" },         \
		{ GF_HTTP_POST, "/k8s/preempt", gf__k8s_preempt,           \
		  GF_K8S_BODY_MAX,                                         \
		  "scheduler extender: the fewest victims per node" },     \
		{ GF_HTTP_GET, "/k8s/reconcile", gf__k8s_reconcile_get, 0, \
		  "pods whose GPU processes differ from their bind" },     \
	{                                                                  \
		GF_HTTP_POST, "/k8s/bind", gf__k8s_bind, 64u << 10,        \
			"scheduler extender: record, annotate, Binding"    \
	}

#endif
