/*
 * k8s_bind.c - the scheduler extender's binds and releases
 * (k8s_impl.h has the flow): the pods' jobs on the scheduler thread, the
 * API workers that create Bindings (with the annotations), and the
 * pod-list resync that releases the GPUs of pods that are gone or ended
 * and takes back those bound but not held (k8s_adopt.c).
 *
 * Invariants: a pod's job is started only by a bind, on the node the
 * bind names, and only if the pod fits there now (the filter's verdict,
 * then gf_ctl_add_on), or taken back by the resync on the GPUs its
 * Binding named; it is RUNNING while the pods table maps its uid to it;
 * it is in the core (and the pods table) before its Binding is made; a
 * bind is answered with an empty Error only once the API server has its
 * Binding with the annotations (the job's row is written by the same
 * turn, not waited for); a job whose API step failed is released by the
 * next turn.
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
#include "util/fmt.h"
#include "util/log.h"
#include "util/mem.h"

#define RESYNC_SELECTOR "status.phase!=Succeeded,status.phase!=Failed"

/* ---- the scheduler thread ------------------------------------------- */

static void fail_bind(struct gf_op *op, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void fail_bind(struct gf_op *op, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	gf_vnote(gf__k8s_x(op)->error, sizeof(gf__k8s_x(op)->error), fmt, ap);
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
		_Static_assert(sizeof(x->mig) >=
				       GF_MIG_PROFILE_MAX + GF_NP_UUID_MAX + 48,
			       "the MIG annotation fits");
		if (gf_fmt(x->mig, sizeof(x->mig),
			   "profile=%s,gpu=%d,start=%d%s%s",
			   j->spec.mig_profile, p->gpus[0], p->mig_start,
			   mu ? ",uuid=" : "", mu ? mu : "") != 0)
			x->mig[0] = '\0'; /* cannot happen: the assertion */
	}
	if (j->spec.gpu_milli > 0)
		if (gf_fmt(x->share, sizeof(x->share), "%d",
			   j->spec.gpu_milli) != 0)
			x->share[0] = '\0'; /* an int fits in 16 bytes */
}

/* A pod already held.  On the same node the Binding is made again (with
 * the job's annotations): an earlier call's Binding may never have been
 * made (a stop between the job and its Binding), and if it was, the API
 * server's refusal leads to the pod read back, bound here (bind_api).
 * Another node is an Error. */
static bool already(struct gf_k8s *k, struct gf_op *op)
{
	struct gf_k8s_op *x = gf__k8s_x(op);
	const char *id = gf__k8s_job_of(k, x->pod.uid);
	const struct gf_job *j = id ? gf_ctl_job(k->s->ctl, id) : NULL;
	if (!j)
		return false;
	if (strcmp(j->place[0].node_name, x->b.node) != 0) {
		fail_bind(op,
			  "gpufleet: pod %s/%s is bound already, to node %s "
			  "(job %s)",
			  x->b.ns, x->b.pod, j->place[0].node_name, j->id);
		x->stage = GF_K8S_RECORD;
		return true;
	}
	GF__COPY_SAME(x->job_id, j->id);
	x->recorded = true; /* released if its Binding is refused */
	annotations(k, x, j);
	x->stage = GF_K8S_API;
	op->status = 200;
	return true;
}

static void record(struct gf_k8s *k, struct gf_op *op, int64_t now,
		   struct gf_batch *b)
{
	struct gf_service *s = k->s;
	struct gf_k8s_op *x = gf__k8s_x(op);
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
	gf__k8s_pods_put(k, x->pod.uid, j->seq);
	GF__COPY_SAME(x->job_id, j->id);
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

struct gone {
	struct gf_k8s *k;
	const struct gf_k8s_op *x;
	int64_t now;
	struct gf_batch *b;
};

/* A pod held that the resync's list no longer has: its job ended. */
static void release_gone(const char *uid, uint64_t seq, void *arg)
{
	struct gone *g = arg;
	const struct gf_k8s_op *x = g->x;
	char id[GF_JOB_ID_MAX];
	if (x->nlive > 0 && /* none: x->live is NULL */
	    bsearch(uid, x->live, (size_t)x->nlive, sizeof(*x->live), cmp_uid))
		return;
	gf__job_id(id, seq);
	const struct gf_job *j = gf_ctl_job(g->k->s->ctl, id);
	if (j && j->state == GF_JOB_RUNNING && j->started_ms >= x->before_ms)
		return; /* bound after the list began */
	end_job(g->k, id, "its pod is gone or ended (resync)", g->now, g->b);
	char key[GF_K8S_UID_MAX];
	memcpy(key, uid, sizeof(key)); /* uid is the row's: deleted below */
	gf__k8s_pods_del(g->k, key);
}

static void release(struct gf_k8s *k, struct gf_k8s_op *x, int64_t now,
		    struct gf_batch *b)
{
	char uid[GF_K8S_UID_MAX];
	for (int n = 0; n < x->nids; n++) {
		const struct gf_job *j = gf_ctl_job(k->s->ctl, x->ids[n]);
		end_job(k, x->ids[n], "its bind failed", now, b);
		if (j && gf_k8s_job_uid(j, uid, sizeof(uid)))
			gf__k8s_pods_del(k, uid);
	}
	if (x->resync) {
		struct gone g = { k, x, now, b };
		gf__k8s_pods_each(k, release_gone, &g);
		for (int n = 0; n < x->bound.n; n++)
			gf__k8s_adopt(k, &x->bound.v[n], now, b);
	}
}

static void k8s_apply(struct gf_service *s, struct gf_op *op, int64_t now,
		      struct gf_batch *b)
{
	struct gf_k8s *k = s->k8s;
	struct gf_k8s_op *x = gf__k8s_x(op);
	if (x->stage == GF_K8S_RELEASE) {
		release(k, x, now, b);
		op->status = 200;
	} else {
		record(k, op, now, b);
		if (x->error[0])
			k->bind_errors++;
	}
}

/* Pods' jobs the turn put back to pending: cancelled (under ctl_lock). */
static void guard(void *arg, int64_t now, struct gf_batch *b)
{
	struct gf_k8s *k = arg;
	char uid[GF_K8S_UID_MAX];
	for (int i = 0, n = b->n; i < n; i++) {
		const struct gf_job *j = b->jobs[i];
		if (j->spec.origin != GF_JOB_ORIGIN_K8S ||
		    j->state == GF_JOB_RUNNING)
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
			gf__k8s_pods_del(k, uid);
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

/* As soon as the turn applied it: a recorded bind goes to a worker,
 * which makes its Binding (the record kube-scheduler and a restart go
 * by: k8s_adopt.c) while the turn runs its pass and writes the job. */
static bool k8s_early(struct gf_service *s, struct gf_op *op)
{
	struct gf_k8s_op *x = gf__k8s_x(op);
	if (!op->req || op->status != 200 || x->stage != GF_K8S_API ||
	    x->error[0])
		return false;
	gf__k8s_push(s->k8s, op);
	return true;
}

/* After the turn's write: answer the op. */
static void k8s_answer(struct gf_service *s, struct gf_op *op)
{
	(void)s;
	struct gf_k8s_op *x = gf__k8s_x(op);
	if (!op->req) { /* a release: nobody waits */
		gf__op_free(op);
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
	struct gf_k8s_op *x = gf__k8s_x(op);
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
		gf_note(msg, sizeof(msg), "gpufleet: %s", e.msg);
		gf__k8s_reply_bind(op->req, msg);
		gf__op_free(op);
		return;
	}
	x->stage = GF_K8S_RECORD;
	to_thread(k, op);
}

/* After a Binding the API server refused or did not answer: whether the
 * pod is bound to the node after all (an earlier call's Binding, or this
 * one's answer lost), with this job's annotation when one was recorded.
 * A refusal for another reason, or a pod read that fails, is not. */
static bool bound_after_all(struct gf_k8s_conn *c, const struct gf_k8s_op *x)
{
	struct gf_jv *pod = NULL;
	struct gf_err e;
	if (gf_k8s_pod_get(c, x->b.ns, x->b.pod, &pod, &e) != 0)
		return false;
	const struct gf_jv *meta = gf_jv_get(pod, "metadata");
	const char *uid = gf_jv_str(gf_jv_get(meta, "uid"));
	const char *node =
		gf_jv_str(gf_jv_get(gf_jv_get(pod, "spec"), "nodeName"));
	const char *job = gf_jv_str(
		gf_jv_get(gf_jv_get(meta, "annotations"), GF_K8S_ANN_JOB));
	bool here = uid && !strcmp(uid, x->pod.uid) && node &&
		    !strcmp(node, x->b.node) &&
		    (!x->recorded || (job && !strcmp(job, x->job_id)));
	gf_jv_free(pod);
	return here;
}

/* The Binding, with the annotations of a recorded pod; on failure the
 * job is released, unless the pod is bound to the node after all. */
static void bind_api(struct gf_k8s *k, struct gf_k8s_conn *c, struct gf_op *op)
{
	struct gf_k8s_op *x = gf__k8s_x(op);
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
	int rc = c ? gf_k8s_bind(c, x->b.ns, x->b.pod, x->pod.uid, x->b.node,
				 k2, vals, x->recorded ? n : 0, &e)
		   : gf_err_set(&e, GF_ENOTSUP,
				"no Kubernetes API server configured "
				"(--kubeconfig, or in-cluster)");
	if (rc != 0 && c && bound_after_all(c, x)) {
		gf_log(GF_LOG_INFO, "k8s",
		       "pod %s/%s: the Binding said '%s', but the pod is bound "
		       "to %s%s%s: done",
		       x->b.ns, x->b.pod, e.msg, x->b.node,
		       x->recorded ? " as job " : "", x->job_id);
		rc = 0;
	}
	if (rc == 0) {
		gf__k8s_reply_bind(op->req, "");
		gf__op_free(op);
		return;
	}
	char msg[GF_ERR_MSG_MAX + 16];
	gf_note(msg, sizeof(msg), "gpufleet: %s", e.msg);
	gf_log(GF_LOG_WARN, "k8s", "pod %s/%s: %s", x->b.ns, x->b.pod, e.msg);
	gf__k8s_reply_bind(op->req, msg);
	op->req = NULL;
	if (!x->recorded) {
		gf__op_free(op);
		return;
	}
	x->stage = GF_K8S_RELEASE; /* the same op releases its job */
	x->ids = gf_calloc(1, sizeof(*x->ids));
	memcpy(x->ids[0], x->job_id, sizeof(x->ids[0])); /* same size */
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
		} else if (gf__k8s_x(op)->stage == GF_K8S_FETCH) {
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
	struct gf_k8s *k;
	char (*uid)[GF_K8S_UID_MAX];
	int n, cap;
	struct gf_k8s_bound_list bound;
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
	if (gf_fmt(l->uid[l->n], GF_K8S_UID_MAX, "%s", uid) == 0)
		l->n++; /* a uid too long is no pod we hold */
	gf__k8s_bound_collect(l->k, pod, &l->bound);
	return 0;
}

static void resync_once(struct gf_k8s *k, struct gf_k8s_conn *c)
{
	int64_t t0 = gf_clock_wall_ms();
	struct live l = { .k = k };
	struct gf_err e;
	gf_err_clear(&e);
	if (gf_k8s_pods_list(c, RESYNC_SELECTOR, live_add, &l, &e) != 0) {
		gf_log(GF_LOG_WARN, "k8s", "resync: %s", e.msg);
		gf_free(l.uid);
		gf_free(l.bound.v);
		return;
	}
	if (l.n > 1) /* no pods: l.uid is NULL, which qsort must not get */
		qsort(l.uid, (size_t)l.n, sizeof(*l.uid), cmp_uid);
	struct gf_k8s_op *x = gf__k8s_op_new();
	struct gf_op *op = &x->op;
	x->stage = GF_K8S_RELEASE;
	x->resync = true;
	x->live = l.uid;
	x->nlive = l.n;
	x->before_ms = t0;
	x->bound = l.bound;
	gf_log(GF_LOG_DEBUG, "k8s",
	       "resync: %d pods not ended, %d bound by gpufleet not held", l.n,
	       l.bound.n);
	to_thread(k, op);
}

static void *resync(void *arg)
{
	struct gf_k8s *k = arg;
	struct gf_k8s_conn *c = gf_k8s_conn_new(k->api);
	long ms = k->o.resync_ms > 0 ? k->o.resync_ms : GF_K8S_RESYNC_MS;
	for (;;) {
		struct timespec ts;
		gf_clock_deadline(&ts, (double)ms);
		pthread_mutex_lock(&k->wlock);
		int rc = 0;
		while (!k->wstop && !k->resync_due && rc != ETIMEDOUT)
			rc = pthread_cond_timedwait(&k->rwake, &k->wlock, &ts);
		bool stop = k->wstop;
		k->resync_due = false;
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
	GF__COPY_SAME(k->cls, cfg->classes[best].name);
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
		memcpy(cfg.server, k->o.api_url, strlen(k->o.api_url) + 1);
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

static void k8s_free(void *arg);

static int k8s_new(struct gf_service *s, const struct gf_k8s_opts *o,
		   struct gf_k8s **out, struct gf_err *e)
{
	struct gf_k8s *k = gf_calloc(1, sizeof(*k));
	k->s = s;
	k->o = *o;
	gf__k8s_cache_init(k);
	k->answers = gf_k8s_answers_new();
	pthread_mutex_init(&k->wlock, NULL);
	gf_cond_init_mono(&k->wwake);
	gf_cond_init_mono(&k->rwake);
	int rc = pick_class(k, &s->o.cfg->ctl, e);
	if (rc == 0)
		rc = api_of(k, e);
	if (rc) {
		k8s_free(k);
		return rc;
	}
	*out = k;
	return 0;
}

/* Start the workers and the resync (after the server and the thread). */
static int k8s_start(void *arg, struct gf_err *e)
{
	struct gf_k8s *k = arg;
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

/* The server stops: queued work is answered 503, the threads end. */
static void k8s_draining(void *arg)
{
	struct gf_k8s *k = arg;
	pthread_mutex_lock(&k->wlock);
	k->wstop = true;
	pthread_cond_broadcast(&k->wwake);
	pthread_cond_broadcast(&k->rwake);
	pthread_mutex_unlock(&k->wlock);
}

static void k8s_free(void *arg)
{
	struct gf_k8s *k = arg;
	if (!k)
		return;
	k8s_draining(k);
	for (int i = 0; i < k->ntids; i++)
		pthread_join(k->tids[i], NULL);
	if (k->resync_on)
		pthread_join(k->resync_tid, NULL);
	gf_free(k->tids);
	gf_k8s_api_free(k->api);
	gf__k8s_pods_free(k);
	gf__k8s_reconcile_free(k);
	gf__k8s_cache_release(k);
	gf_k8s_answers_free(k->answers);
	pthread_mutex_destroy(&k->wlock);
	pthread_cond_destroy(&k->wwake);
	pthread_cond_destroy(&k->rwake);
	gf_free(k);
}

static void k8s_release(struct gf_op *op)
{
	struct gf_k8s_op *x = gf__k8s_x(op);
	gf_free(x->ids);
	gf_free(x->live);
	gf_free(x->bound.v);
	gf_free(x);
}

const struct gf_op_kind gf__k8s_kind = {
	.name = "k8s",
	.apply = k8s_apply,
	.answer = k8s_answer,
	.release = k8s_release,
	.early = k8s_early,
};

struct gf_k8s_op *gf__k8s_op_new(void)
{
	struct gf_k8s_op *x = gf_calloc(1, sizeof(*x));
	x->op.kind = &gf__k8s_kind;
	return x;
}

static void k8s_loaded(void *arg)
{
	struct gf_k8s *k = arg;
	gf_k8s_answers_clear(k->answers); /* another core: versions anew */
	gf__k8s_index(k);
	/* a list now: pods bound while no store had their jobs are taken
	 * back before the next period (k8s_adopt.c) */
	pthread_mutex_lock(&k->wlock);
	k->resync_due = true;
	pthread_cond_broadcast(&k->rwake);
	pthread_mutex_unlock(&k->wlock);
}

static void k8s_heartbeat(void *arg, int node, const struct gf_np_heartbeat *hb,
			  const struct gf_np_inventory *inv)
{
	gf__k8s_reconcile(arg, node, hb, inv);
}

static void k8s_node_lost(void *arg, int node)
{
	gf__k8s_reconcile_forget(arg, node);
}

/* The extender's counters, then the mismatches (under ctl_lock). */
static void k8s_metrics(void *arg, struct gf_buf *b)
{
	struct gf_k8s *k = arg;
	gf_buf_printf(
		b,
		"# HELP gpufleet_k8s_gpu_pod_calls_total Filter and preempt "
		"calls about pods that ask for GPUs, answered while leading.\n"
		"# TYPE gpufleet_k8s_gpu_pod_calls_total counter\n"
		"gpufleet_k8s_gpu_pod_calls_total{verb=\"filter\"} %llu\n"
		"gpufleet_k8s_gpu_pod_calls_total{verb=\"preempt\"} %llu\n"
		"# HELP gpufleet_k8s_binds_total Binds by what became of "
		"them on the scheduler thread: started (a job started for the "
		"pod; released again if its Binding is refused), refused (an "
		"Error answered before any job started).\n"
		"# TYPE gpufleet_k8s_binds_total counter\n"
		"gpufleet_k8s_binds_total{result=\"started\"} %llu\n"
		"gpufleet_k8s_binds_total{result=\"refused\"} %llu\n"
		"# HELP gpufleet_k8s_jobs_released_total Pods' jobs ended by "
		"gpufleet: the pod gone or ended, its Binding refused, or put "
		"back to pending.\n"
		"# TYPE gpufleet_k8s_jobs_released_total counter\n"
		"gpufleet_k8s_jobs_released_total %llu\n"
		"# HELP gpufleet_k8s_jobs_taken_back_total Pods bound by "
		"gpufleet whose job the store did not have, taken back by the "
		"resync on their annotated GPUs.\n"
		"# TYPE gpufleet_k8s_jobs_taken_back_total counter\n"
		"gpufleet_k8s_jobs_taken_back_total %llu\n",
		(unsigned long long)k->filters, (unsigned long long)k->preempts,
		(unsigned long long)k->binds,
		(unsigned long long)k->bind_errors,
		(unsigned long long)k->releases,
		(unsigned long long)k->adopted);
	gf__k8s_metrics(k, b);
}

int gf__k8s_register(struct gf_service *s, const struct gf_k8s_opts *o,
		     struct gf_err *e)
{
	int rc = k8s_new(s, o, &s->k8s, e);
	if (rc)
		return rc;
	/* pods' jobs a node lost (each turn), or a preemption put back
	 * (after a pass): never placed again */
	struct gf_feature f = {
		.name = "k8s",
		.arg = s->k8s,
		.loaded = k8s_loaded,
		.step = guard,
		.passed = guard,
		.heartbeat = k8s_heartbeat,
		.node_lost = k8s_node_lost,
		.metrics = k8s_metrics,
		.start = k8s_start,
		.stopping = k8s_draining,
		.free = k8s_free,
	};
	rc = gf__service_register(s, &f);
	if (rc) {
		k8s_free(s->k8s);
		s->k8s = NULL;
	}
	return rc;
}
