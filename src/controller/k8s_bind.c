/*
 * k8s_bind.c - the scheduler extender's binds and releases
 * (k8s_impl.h has the flow): the pods' jobs on the scheduler thread, the
 * API workers that annotate pods and create Bindings, and the pod-list
 * resync that releases the GPUs of pods that are gone or ended.
 *
 * Invariants: a pod's job is started only by a bind, on the node the
 * bind names, and only if the pod fits there now (the filter's verdict,
 * then gf_ctl_add_on); it is RUNNING while the pods table maps its uid
 * to it; a bind is answered with an empty Error only once its job is
 * committed and the API server has the annotations and the Binding; a
 * job whose API step failed is released by the next turn.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "controller/k8s_impl.h"
#include "controller/service_impl.h"
#include "util/log.h"
#include "util/mem.h"

#define RESYNC_SELECTOR "status.phase!=Succeeded,status.phase!=Failed"

bool gf__k8s_is_pod(const struct gf_job *j)
{
	return j->spec.command && !strncmp(j->spec.command, "k8s-pod ", 8);
}

/* ---- the pods the core holds ---------------------------------------- */

static uint32_t uid_hash(const char *s)
{
	uint32_t h = 2166136261u;
	for (; *s; s++)
		h = (h ^ (uint8_t)*s) * 16777619u;
	return h;
}

static struct k8s_pod_ref *pod_find(struct gf_k8s *k, const char *uid)
{
	if (!k->pcap || !uid[0])
		return NULL;
	for (uint32_t i = uid_hash(uid) & (uint32_t)(k->pcap - 1), n = 0;
	     n < (uint32_t)k->pcap;
	     n++, i = (i + 1) & (uint32_t)(k->pcap - 1)) {
		struct k8s_pod_ref *p = &k->pods[i];
		if (!p->uid[0])
			return NULL;
		if (!strcmp(p->uid, uid))
			return p;
	}
	return NULL;
}

static void pods_grow(struct gf_k8s *k)
{
	if (2 * (k->pused + 1) <= k->pcap)
		return;
	struct k8s_pod_ref *old = k->pods;
	int oldcap = k->pcap;
	k->pcap = k->pcap ? k->pcap : 1024;
	while (2 * (k->pn + 1) > k->pcap / 2)
		k->pcap *= 2;
	k->pods = gf_calloc((size_t)k->pcap, sizeof(*k->pods));
	k->pused = k->pn = 0;
	for (int i = 0; i < oldcap; i++)
		if (old[i].uid[0] && strcmp(old[i].uid, "-")) {
			uint32_t h =
				uid_hash(old[i].uid) & (uint32_t)(k->pcap - 1);
			while (k->pods[h].uid[0])
				h = (h + 1) & (uint32_t)(k->pcap - 1);
			k->pods[h] = old[i];
			k->pn++;
			k->pused++;
		}
	gf_free(old);
}

static void pods_put(struct gf_k8s *k, const char *uid, uint64_t seq)
{
	struct k8s_pod_ref *p = pod_find(k, uid);
	if (!p) {
		pods_grow(k);
		uint32_t h = uid_hash(uid) & (uint32_t)(k->pcap - 1);
		while (k->pods[h].uid[0])
			h = (h + 1) & (uint32_t)(k->pcap - 1);
		p = &k->pods[h];
		snprintf(p->uid, sizeof(p->uid), "%s", uid);
		k->pn++;
		k->pused++;
	}
	p->seq = seq;
}

static void pods_del(struct gf_k8s *k, const char *uid)
{
	struct k8s_pod_ref *p = pod_find(k, uid);
	if (p) {
		snprintf(p->uid, sizeof(p->uid), "-"); /* a tombstone */
		k->pn--;
	}
}

const char *gf__k8s_job_of(struct gf_k8s *k, const char *uid)
{
	char id[GF_JOB_ID_MAX];
	struct k8s_pod_ref *p = pod_find(k, uid);
	if (!p)
		return NULL;
	snprintf(id, sizeof(id), "j%" PRIu64, p->seq);
	const struct gf_job *j = gf_ctl_job(k->s->ctl, id);
	return j && j->state == GF_JOB_RUNNING ? j->id : NULL;
}

void gf__k8s_index(struct gf_k8s *k)
{
	const struct gf_ctl *ctl = k->s->ctl;
	gf_free(k->pods);
	k->pods = NULL;
	k->pcap = k->pn = k->pused = 0;
	char uid[GF_K8S_UID_MAX];
	for (int i = 0, n = gf_ctl_njobs(ctl); i < n; i++) {
		const struct gf_job *j = gf_ctl_job_at(ctl, i);
		if (j->state == GF_JOB_RUNNING &&
		    gf_k8s_job_uid(j, uid, sizeof(uid)))
			pods_put(k, uid, j->seq);
	}
}

/* ---- the scheduler thread ------------------------------------------- */

static void fail_bind(struct gf_op *op, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void fail_bind(struct gf_op *op, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(op->k8s->error, sizeof(op->k8s->error), fmt, ap);
	va_end(ap);
	op->status = 200; /* an Error reply */
}

/* The annotations of a started job (under ctl_lock). */
static void annotations(struct gf_k8s *k, struct gf_k8s_op *x,
			const struct gf_job *j)
{
	const struct gf_job_place *p = &j->place[0];
	size_t gl = 0, ul = 0;
	bool uuids = true;
	for (int g = 0; g < p->ngpus; g++) {
		const char *u = gf__agents_uuid(k->s->ag, p->node, p->gpus[g]);
		gl += (size_t)snprintf(x->gpus + gl, sizeof(x->gpus) - gl,
				       "%s%d", g ? "," : "", p->gpus[g]);
		if (!u)
			uuids = false;
		else if (ul < sizeof(x->uuids))
			ul += (size_t)snprintf(x->uuids + ul,
					       sizeof(x->uuids) - ul, "%s%s",
					       g ? "," : "", u);
	}
	if (!uuids)
		x->uuids[0] = '\0';
	if (j->spec.mig_profile[0]) {
		const char *mu = gf__agents_mig_uuid(k->s->ag, p->node,
						     p->gpus[0], p->mig_start);
		snprintf(x->mig, sizeof(x->mig),
			 "profile=%s,gpu=%d,start=%d%s%s", j->spec.mig_profile,
			 p->gpus[0], p->mig_start, mu ? ",uuid=" : "",
			 mu ? mu : "");
	}
	if (j->spec.gpu_milli > 0)
		snprintf(x->share, sizeof(x->share), "%d", j->spec.gpu_milli);
}

/* A pod already held: the same node is a bind answered again. */
static bool already(struct gf_k8s *k, struct gf_op *op)
{
	struct gf_k8s_op *x = op->k8s;
	const char *id = gf__k8s_job_of(k, x->pod.uid);
	const struct gf_job *j = id ? gf_ctl_job(k->s->ctl, id) : NULL;
	if (!j)
		return false;
	if (!strcmp(j->place[0].node_name, x->b.node))
		op->status = 200; /* bound by an earlier call: done */
	else
		fail_bind(op,
			  "gpufleet: pod %s/%s is bound already, to node %s "
			  "(job %s)",
			  x->b.ns, x->b.pod, j->place[0].node_name, j->id);
	x->stage = GF_K8S_RECORD;
	return true;
}

static void record(struct gf_k8s *k, struct gf_op *op, int64_t now,
		   struct gf_batch *b)
{
	struct gf_service *s = k->s;
	struct gf_k8s_op *x = op->k8s;
	struct gf_err e;
	gf_err_clear(&e);
	struct gf_k8s_ask ask;
	if (x->b.uid[0] && strcmp(x->b.uid, x->pod.uid)) {
		fail_bind(op, "gpufleet: pod %s/%s has uid %s, not %s", x->b.ns,
			  x->b.pod, x->pod.uid, x->b.uid);
		return;
	}
	if (!k->api) { /* nothing recorded that could not be bound */
		fail_bind(op, "gpufleet: no Kubernetes API server configured "
			      "(--kubeconfig, or in-cluster)");
		return;
	}
	if (gf_k8s_ask_of(s->ctl, &x->pod, &ask, &e) != 0) {
		fail_bind(op, "%s", e.msg);
		return;
	}
	if (ask.kind == GF_K8S_ASK_NONE) { /* no GPU: bind it, no record */
		x->stage = GF_K8S_API;
		op->status = 200;
		return;
	}
	if (already(k, op))
		return;
	int i = gf_ctl_node_find(s->ctl, x->b.node);
	struct gf_k8s_verdict v;
	struct gf_k8s_memo *m = gf_k8s_memo_new(s->ctl, &ask, 1);
	gf_k8s_verdict(s->ctl, i, m, &v);
	gf_k8s_memo_free(m);
	if (v.kind != GF_K8S_FITS) {
		fail_bind(op, "gpufleet: cannot bind pod %s/%s to %s: %s",
			  x->b.ns, x->b.pod, x->b.node,
			  strncmp(v.why, "gpufleet: ", 10) ? v.why
							   : v.why + 10);
		return;
	}
	struct gf_job *j =
		gf_k8s_job_new(s->ctl, &x->pod, &ask, i, ++s->seq, k->cls, now);
	if (gf_ctl_add_on(s->ctl, j, i, now, &e) != 0) {
		s->seq--;
		gf_job_release(j);
		gf_free(j);
		{
			fail_bind(op,
				  "gpufleet: cannot bind pod %s/%s to %s: %s",
				  x->b.ns, x->b.pod, x->b.node, e.msg);
			return;
		}
	}
	gf__batch_add(b, j);
	pods_put(k, x->pod.uid, j->seq);
	snprintf(x->job_id, sizeof(x->job_id), "%s", j->id);
	x->recorded = true;
	annotations(k, x, j);
	x->stage = GF_K8S_API;
	op->status = 200;
	k->binds++;
	gf_log(GF_LOG_INFO, "k8s", "pod %s/%s job=%s node=%s gpus=%s%s%s",
	       x->b.ns, x->b.pod, j->id, x->b.node, x->gpus,
	       x->mig[0] ? " mig " : "", x->mig);
}

static int cmp_uid(const void *a, const void *b)
{
	return strcmp(a, b);
}

/* End job id (a pod's); changed jobs to the batch. */
static void end_job(struct gf_k8s *k, const char *id, const char *why,
		    int64_t now, struct gf_batch *b)
{
	const struct gf_job *j = gf_ctl_job(k->s->ctl, id);
	struct gf_err e;
	if (!j || gf_job_is_final(j->state))
		return;
	if (gf_ctl_cancel(k->s->ctl, id, now, &e) == 0) {
		gf__batch_add(b, j);
		k->releases++;
		gf_log(GF_LOG_INFO, "k8s", "job=%s released: %s", id, why);
	}
}

static void release(struct gf_k8s *k, struct gf_k8s_op *x, int64_t now,
		    struct gf_batch *b)
{
	char uid[GF_K8S_UID_MAX];
	for (int n = 0; n < x->nids; n++) {
		const struct gf_job *j = gf_ctl_job(k->s->ctl, x->ids[n]);
		end_job(k, x->ids[n], "its bind failed", now, b);
		if (j && gf_k8s_job_uid(j, uid, sizeof(uid)))
			pods_del(k, uid);
	}
	for (int i = 0; x->resync && i < k->pcap; i++) {
		struct k8s_pod_ref *p = &k->pods[i];
		if (!p->uid[0] || !strcmp(p->uid, "-") ||
		    (x->nlive > 0 && /* none: x->live is NULL */
		     bsearch(p->uid, x->live, (size_t)x->nlive,
			     sizeof(*x->live), cmp_uid)))
			continue;
		char id[GF_JOB_ID_MAX];
		snprintf(id, sizeof(id), "j%" PRIu64, p->seq);
		const struct gf_job *j = gf_ctl_job(k->s->ctl, id);
		if (j && j->state == GF_JOB_RUNNING &&
		    j->started_ms >= x->before_ms)
			continue; /* bound after the list began */
		end_job(k, id, "its pod is gone or ended (resync)", now, b);
		pods_del(k, p->uid);
	}
}

void gf__k8s_op(struct gf_k8s *k, struct gf_op *op, int64_t now,
		struct gf_batch *b)
{
	struct gf_k8s_op *x = op->k8s;
	if (x->stage == GF_K8S_RELEASE) {
		release(k, x, now, b);
		op->status = 200;
	} else {
		record(k, op, now, b);
		if (x->error[0])
			k->bind_errors++;
	}
}

void gf__k8s_guard(struct gf_k8s *k, int64_t now, struct gf_batch *b)
{
	char uid[GF_K8S_UID_MAX];
	for (int i = 0, n = b->n; i < n; i++) {
		const struct gf_job *j = b->jobs[i];
		if (!gf__k8s_is_pod(j) || j->state == GF_JOB_RUNNING)
			continue;
		if (j->state == GF_JOB_PENDING) {
			gf_log(GF_LOG_WARN, "k8s",
			       "job=%s (a pod) put back to pending: %s; "
			       "cancelled, Kubernetes decides where its pod "
			       "runs",
			       j->id, j->reason);
			end_job(k, j->id, "put back to pending", now, b);
		}
		if (gf_k8s_job_uid(j, uid, sizeof(uid)))
			pods_del(k, uid);
	}
}

/* ---- the API workers -------------------------------------------------- */

void gf__k8s_push(struct gf_k8s *k, struct gf_op *op)
{
	op->next = NULL;
	pthread_mutex_lock(&k->wlock);
	bool stop = k->wstop;
	if (!stop) {
		if (k->wtail)
			k->wtail->next = op;
		else
			k->whead = op;
		k->wtail = op;
		pthread_cond_signal(&k->wwake);
	}
	pthread_mutex_unlock(&k->wlock);
	if (stop) {
		gf_reply_error(op->req, 503, "unavailable",
			       "the server is stopping");
		gf__op_free(op);
	}
}

void gf__k8s_answer(struct gf_k8s *k, struct gf_op *op)
{
	struct gf_k8s_op *x = op->k8s;
	if (!op->req) { /* a release: nobody waits */
		gf__op_free(op);
		return;
	}
	if (op->status == 200 && x->stage == GF_K8S_API && !x->error[0]) {
		gf__k8s_push(k, op); /* a worker annotates and binds */
		return;
	}
	if (op->status == 200)
		gf__k8s_reply_bind(op->req, x->error);
	else
		gf__op_reply_error(op);
	gf__op_free(op);
}

/* Queue an op for the scheduler thread (its request held or NULL): on
 * refusal (stopping) the request is answered 503 and op freed. */
static void to_thread(struct gf_k8s *k, struct gf_op *op)
{
	if (gf__service_queue(k->s, op) == 0)
		return;
	if (op->req)
		gf_reply_error(op->req, 503, "unavailable",
			       "the server is stopping");
	gf__op_free(op);
}

static void fetch(struct gf_k8s *k, struct gf_k8s_conn *c, struct gf_op *op)
{
	struct gf_k8s_op *x = op->k8s;
	struct gf_err e;
	gf_err_clear(&e);
	struct gf_jv *pod = NULL;
	int rc = c ? gf_k8s_pod_get(c, x->b.ns, x->b.pod, &pod, &e)
		   : gf_err_set(&e, GF_ENOTSUP,
				"no Kubernetes API server configured "
				"(--kubeconfig, or in-cluster)");
	if (rc == 0)
		rc = gf_k8s_pod_read(pod, &x->pod, &e);
	gf_jv_free(pod);
	if (rc) {
		char msg[GF_ERR_MSG_MAX + 16];
		snprintf(msg, sizeof(msg), "gpufleet: %s", e.msg);
		gf__k8s_reply_bind(op->req, msg);
		gf__op_free(op);
		return;
	}
	x->stage = GF_K8S_RECORD;
	to_thread(k, op);
}

/* Annotate (a recorded pod) and bind; on failure the job is released. */
static void bind_api(struct gf_k8s *k, struct gf_k8s_conn *c, struct gf_op *op)
{
	struct gf_k8s_op *x = op->k8s;
	struct gf_err e;
	gf_err_clear(&e);
	const char *keys[] = { GF_K8S_ANN_NODE, GF_K8S_ANN_JOB,
			       GF_K8S_ANN_GPUS, GF_K8S_ANN_UUIDS,
			       GF_K8S_ANN_MIG,	GF_K8S_ANN_SHARE };
	const char *all[] = { x->b.node, x->job_id, x->gpus,
			      x->uuids,	 x->mig,    x->share };
	const char *k2[6], *vals[6];
	int n = 0;
	for (int a = 0; a < 6; a++)
		if (all[a][0]) { /* an empty one is not written */
			k2[n] = keys[a];
			vals[n++] = all[a];
		}
	int rc = c ? 0
		   : gf_err_set(&e, GF_ENOTSUP,
				"no Kubernetes API server configured "
				"(--kubeconfig, or in-cluster)");
	if (rc == 0 && x->recorded)
		rc = gf_k8s_annotate(c, x->b.ns, x->b.pod, x->pod.uid, k2, vals,
				     n, &e);
	if (rc == 0)
		rc = gf_k8s_bind(c, x->b.ns, x->b.pod, x->pod.uid, x->b.node,
				 &e);
	if (rc == 0) {
		gf__k8s_reply_bind(op->req, "");
		gf__op_free(op);
		return;
	}
	char msg[GF_ERR_MSG_MAX + 16];
	snprintf(msg, sizeof(msg), "gpufleet: %s", e.msg);
	gf_log(GF_LOG_WARN, "k8s", "pod %s/%s: %s", x->b.ns, x->b.pod, e.msg);
	gf__k8s_reply_bind(op->req, msg);
	op->req = NULL;
	if (!x->recorded) {
		gf__op_free(op);
		return;
	}
	x->stage = GF_K8S_RELEASE; /* the same op releases its job */
	x->ids = gf_calloc(1, sizeof(*x->ids));
	snprintf(x->ids[0], sizeof(x->ids[0]), "%s", x->job_id);
	x->nids = 1;
	to_thread(k, op);
}

static void *worker(void *arg)
{
	struct gf_k8s *k = arg;
	struct gf_k8s_conn *c = k->api ? gf_k8s_conn_new(k->api) : NULL;
	for (;;) {
		pthread_mutex_lock(&k->wlock);
		while (!k->whead && !k->wstop)
			pthread_cond_wait(&k->wwake, &k->wlock);
		struct gf_op *op = k->whead;
		if (op) {
			k->whead = op->next;
			if (!k->whead)
				k->wtail = NULL;
		}
		bool stop = k->wstop;
		pthread_mutex_unlock(&k->wlock);
		if (!op)
			break;
		if (stop) {
			gf_reply_error(op->req, 503, "unavailable",
				       "the server is stopping");
			gf__op_free(op);
		} else if (op->k8s->stage == GF_K8S_FETCH) {
			fetch(k, c, op);
		} else {
			bind_api(k, c, op);
		}
	}
	gf_k8s_conn_free(c);
	return NULL;
}

/* ---- the resync ------------------------------------------------------- */

struct live {
	char (*uid)[GF_K8S_UID_MAX];
	int n, cap;
};

static int live_add(void *arg, const struct gf_jv *pod)
{
	struct live *l = arg;
	const char *uid =
		gf_jv_str(gf_jv_get(gf_jv_get(pod, "metadata"), "uid"));
	if (!uid || strlen(uid) >= GF_K8S_UID_MAX)
		return 0;
	if (l->n == l->cap) {
		l->cap = l->cap ? 2 * l->cap : 1024;
		l->uid = gf_reallocarray(l->uid, (size_t)l->cap,
					 sizeof(*l->uid));
	}
	snprintf(l->uid[l->n++], GF_K8S_UID_MAX, "%s", uid);
	return 0;
}

static void resync_once(struct gf_k8s *k, struct gf_k8s_conn *c)
{
	int64_t t0 = gf__service_now_ms();
	struct live l = { 0 };
	struct gf_err e;
	gf_err_clear(&e);
	if (gf_k8s_pods_list(c, RESYNC_SELECTOR, live_add, &l, &e) != 0) {
		gf_log(GF_LOG_WARN, "k8s", "resync: %s", e.msg);
		gf_free(l.uid);
		return;
	}
	if (l.n > 1) /* no pods: l.uid is NULL, which qsort must not get */
		qsort(l.uid, (size_t)l.n, sizeof(*l.uid), cmp_uid);
	struct gf_op *op = gf_calloc(1, sizeof(*op));
	op->kind = GF_OP_K8S;
	op->k8s = gf_calloc(1, sizeof(*op->k8s));
	op->k8s->stage = GF_K8S_RELEASE;
	op->k8s->resync = true;
	op->k8s->live = l.uid;
	op->k8s->nlive = l.n;
	op->k8s->before_ms = t0;
	gf_log(GF_LOG_DEBUG, "k8s", "resync: %d pods not ended", l.n);
	to_thread(k, op);
}

static void *resync(void *arg)
{
	struct gf_k8s *k = arg;
	struct gf_k8s_conn *c = gf_k8s_conn_new(k->api);
	long ms = k->o.resync_ms > 0 ? k->o.resync_ms : GF_K8S_RESYNC_MS;
	for (;;) {
		struct timespec ts;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		ts.tv_sec += ms / 1000;
		ts.tv_nsec += (ms % 1000) * 1000000;
		ts.tv_sec += ts.tv_nsec / 1000000000;
		ts.tv_nsec %= 1000000000;
		pthread_mutex_lock(&k->wlock);
		int rc = 0;
		while (!k->wstop && rc != ETIMEDOUT)
			rc = pthread_cond_timedwait(&k->rwake, &k->wlock, &ts);
		bool stop = k->wstop;
		pthread_mutex_unlock(&k->wlock);
		if (stop)
			break;
		resync_once(k, c);
	}
	gf_k8s_conn_free(c);
	return NULL;
}

/* ---- lifecycle -------------------------------------------------------- */

/* The class of pods' jobs: given, or the highest priority class that is
 * not preemptible (else the highest). */
static int pick_class(struct gf_k8s *k, const struct gf_ctl_config *cfg,
		      struct gf_err *e)
{
	int best = -1;
	for (int c = 0; c < cfg->nclasses; c++) {
		const struct gf_ctl_class *x = &cfg->classes[c];
		if (k->o.cls && !strcmp(k->o.cls, x->name))
			best = c;
		else if (!k->o.cls &&
			 (best < 0 ||
			  (cfg->classes[best].preemptible && !x->preemptible) ||
			  (cfg->classes[best].preemptible == x->preemptible &&
			   x->priority > cfg->classes[best].priority)))
			best = c;
	}
	if (best < 0)
		return gf_err_set(e, GF_EINVAL,
				  "--k8s-class %s: no such class in the config",
				  k->o.cls ? k->o.cls : "");
	snprintf(k->cls, sizeof(k->cls), "%s", cfg->classes[best].name);
	if (cfg->classes[best].preemptible)
		gf_log(GF_LOG_WARN, "k8s",
		       "pods' jobs are of class %s, which is preemptible: a "
		       "preempted pod's GPUs are released while it runs on",
		       k->cls);
	return 0;
}

static int api_of(struct gf_k8s *k, struct gf_err *e)
{
	struct gf_k8s_api_cfg cfg;
	int rc;
	if (k->o.api_url) {
		memset(&cfg, 0, sizeof(cfg));
		if (strlen(k->o.api_url) >= sizeof(cfg.server))
			return gf_err_set(e, GF_EINVAL, "--k8s-api: too long");
		snprintf(cfg.server, sizeof(cfg.server), "%s", k->o.api_url);
		rc = 0;
	} else if (k->o.kubeconfig) {
		rc = gf_k8s_api_kubeconfig(k->o.kubeconfig, k->o.context, &cfg,
					   e);
	} else {
		rc = gf_k8s_api_incluster(NULL, NULL, NULL, &cfg, e);
		if (rc == GF_ENOTFOUND) {
			gf_log(GF_LOG_WARN, "k8s",
			       "no Kubernetes API server (%s; no "
			       "--kubeconfig): binds answer an Error",
			       e->msg);
			gf_err_clear(e);
			return 0;
		}
	}
	if (rc)
		return rc;
	k->api = gf_k8s_api_new(&cfg);
	gf_log(GF_LOG_INFO, "k8s", "API server %s", gf_k8s_api_server(k->api));
	return 0;
}

int gf__k8s_new(struct gf_service *s, const struct gf_k8s_opts *o,
		struct gf_k8s **out, struct gf_err *e)
{
	struct gf_k8s *k = gf_calloc(1, sizeof(*k));
	k->s = s;
	k->o = *o;
	gf__k8s_cache_init(k);
	pthread_mutex_init(&k->wlock, NULL);
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&k->wwake, &ca);
	pthread_cond_init(&k->rwake, &ca);
	pthread_condattr_destroy(&ca);
	int rc = pick_class(k, &s->o.cfg->ctl, e);
	if (rc == 0)
		rc = api_of(k, e);
	if (rc) {
		gf__k8s_free(k);
		return rc;
	}
	*out = k;
	return 0;
}

int gf__k8s_start(struct gf_k8s *k, struct gf_err *e)
{
	int n = k->o.workers ? (int)k->o.workers : GF_K8S_WORKERS;
	k->tids = gf_calloc((size_t)n, sizeof(*k->tids));
	for (; k->ntids < n; k->ntids++) {
		int rc = -pthread_create(&k->tids[k->ntids], NULL, worker, k);
		if (rc)
			return gf_err_set(e, rc,
					  "cannot start a k8s worker: %s",
					  gf_strerror(rc));
	}
	if (k->api && k->o.resync_ms >= 0) {
		int rc = -pthread_create(&k->resync_tid, NULL, resync, k);
		if (rc)
			return gf_err_set(e, rc, "cannot start the resync: %s",
					  gf_strerror(rc));
		k->resync_on = true;
	}
	return 0;
}

void gf__k8s_draining(struct gf_k8s *k)
{
	pthread_mutex_lock(&k->wlock);
	k->wstop = true;
	pthread_cond_broadcast(&k->wwake);
	pthread_cond_broadcast(&k->rwake);
	pthread_mutex_unlock(&k->wlock);
}

void gf__k8s_free(struct gf_k8s *k)
{
	if (!k)
		return;
	gf__k8s_draining(k);
	for (int i = 0; i < k->ntids; i++)
		pthread_join(k->tids[i], NULL);
	if (k->resync_on)
		pthread_join(k->resync_tid, NULL);
	gf_free(k->tids);
	gf_k8s_api_free(k->api);
	gf_free(k->pods);
	gf__k8s_reconcile_free(k);
	gf__k8s_cache_release(k);
	pthread_mutex_destroy(&k->wlock);
	pthread_cond_destroy(&k->wwake);
	pthread_cond_destroy(&k->rwake);
	gf_free(k);
}

void gf__k8s_op_free(struct gf_k8s_op *x)
{
	if (!x)
		return;
	gf_free(x->ids);
	gf_free(x->live);
	gf_free(x);
}
