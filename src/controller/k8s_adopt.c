/*
 * k8s_adopt.c - pods that gpufleet bound and the core does not hold:
 * taken back on exactly the GPUs their annotations name.
 *
 * A bind is answered once its Binding is made.  The Binding carries the
 * pod's annotations (node, job, GPUs, MIG instance, share: the API
 * server sets them with spec.nodeName in one write), and the turn that
 * started the job writes its row without the bind waiting for it
 * (service.c hands the bind on before the write).  A controller that
 * stops between the two comes back without the row while the pod runs
 * on those GPUs.  The resync's pod list shows such a pod: spec.nodeName
 * set, gpufleet.io/job annotated, its uid held by no job.  The
 * scheduler thread then adds its job RUNNING on the annotated GPUs
 * (gf_ctl_add restores a RUNNING job's placement as it does a
 * restart's), under the annotated id.
 *
 * Invariants: a job id the core knows (running, or ended by gpufleet:
 * DELETE, a failed bind, a lost node) is never adopted again; GPUs that
 * are not free any more are not taken twice: the job is written
 * cancelled, with why; an annotation that does not parse, or does not
 * match what the pod asks, adopts nothing and says so in the log.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "controller/k8s_impl.h"
#include "controller/service_impl.h"
#include "util/fmt.h"
#include "util/log.h"
#include "util/mem.h"

static const char *ann(const struct gf_jv *a, const char *key)
{
	const char *v = gf_jv_str(gf_jv_get(a, key));
	return v ? v : "";
}

/* "4,5,6" into pl's GPUs: 0, or -1 (not such a list). */
static int gpu_list(const char *s, struct gf_job_place *pl)
{
	pl->ngpus = 0;
	while (*s) {
		char *end;
		long g = strtol(s, &end, 10);
		if (end == s || g < 0 || g >= GF_CNODE_MAX_GPUS ||
		    pl->ngpus == GF_CNODE_MAX_GPUS || (*end && *end != ','))
			return -1;
		for (int k = 0; k < pl->ngpus; k++)
			if (pl->gpus[k] == g)
				return -1;
		pl->gpus[pl->ngpus++] = (int)g;
		s = *end ? end + 1 : end;
	}
	return pl->ngpus > 0 ? 0 : -1;
}

/* The placement annotations a name on node, into pl: 0, or -1. */
static int placement(const struct gf_jv *a, const char *node,
		     struct gf_job_place *pl)
{
	memset(pl, 0, sizeof(*pl));
	pl->node = -1;
	pl->mig_start = -1;
	pl->gpu_milli = 1000;
	if (gf_fmt(pl->node_name, sizeof(pl->node_name), "%s", node) != 0 ||
	    gpu_list(ann(a, GF_K8S_ANN_GPUS), pl) != 0)
		return -1;
	const char *mig = ann(a, GF_K8S_ANN_MIG);
	const char *share = ann(a, GF_K8S_ANN_SHARE);
	if (*mig) {
		const char *g = strstr(mig, ",gpu="),
			   *st = strstr(mig, ",start=");
		if (!g || !st || pl->ngpus != 1 ||
		    strtol(g + 5, NULL, 10) != pl->gpus[0])
			return -1;
		char *end;
		long start = strtol(st + 7, &end, 10);
		if (end == st + 7 || start < 0 || start > 7)
			return -1;
		pl->mig_start = (int)start;
		pl->gpu_milli = 0;
	} else if (*share) {
		char *end;
		long m = strtol(share, &end, 10);
		if (*end || m < 1 || m > 999 || pl->ngpus != 1)
			return -1;
		pl->gpu_milli = (int)m;
	}
	return 0;
}

void gf__k8s_bound_collect(struct gf_k8s *k, const struct gf_jv *pod,
			   struct gf_k8s_bound_list *l)
{
	const struct gf_jv *meta = gf_jv_get(pod, "metadata");
	const struct gf_jv *a = gf_jv_get(meta, "annotations");
	const char *job = ann(a, GF_K8S_ANN_JOB);
	const char *node =
		gf_jv_str(gf_jv_get(gf_jv_get(pod, "spec"), "nodeName"));
	const char *uid = gf_jv_str(gf_jv_get(meta, "uid"));
	if (!*job || !node || !*node || !uid)
		return; /* not bound, or not by gpufleet */
	pthread_mutex_lock(&k->s->ctl_lock);
	bool held = gf__k8s_held(k, uid);
	pthread_mutex_unlock(&k->s->ctl_lock);
	if (held)
		return; /* the usual case: nothing more read */
	struct gf_k8s_bound v;
	memset(&v, 0, sizeof(v));
	struct gf_err e;
	gf_err_clear(&e);
	if (gf_k8s_pod_read(pod, &v.pod, &e) != 0) {
		gf_log(GF_LOG_WARN, "k8s", "resync: a bound pod: %s", e.msg);
		return;
	}
	if (gf_fmt(v.job, sizeof(v.job), "%s", job) != 0 ||
	    strcmp(ann(a, GF_K8S_ANN_NODE), node) != 0 ||
	    placement(a, node, &v.place) != 0) {
		gf_log(GF_LOG_WARN, "k8s",
		       "resync: pod %s/%s on node %s has gpufleet's "
		       "annotations (job '%.32s', gpus '%.64s', node '%.64s') "
		       "that name no placement there: not taken back",
		       v.pod.ns, v.pod.name, node, job, ann(a, GF_K8S_ANN_GPUS),
		       ann(a, GF_K8S_ANN_NODE));
		return;
	}
	if (l->n == l->cap) {
		l->cap = l->cap ? 2 * l->cap : 8;
		l->v = gf_reallocarray(l->v, (size_t)l->cap, sizeof(*l->v));
	}
	l->v[l->n++] = v;
}

/* The number of job id "j41": 41, or 0 (not one of ours). */
static uint64_t seq_of(const char *id)
{
	if (id[0] != 'j' || id[1] < '1' || id[1] > '9')
		return 0;
	char *end;
	unsigned long long n = strtoull(id + 1, &end, 10);
	return *end ? 0 : (uint64_t)n;
}

/* What the pod asks, against its annotated placement: true when they
 * agree (the whole GPUs' count, the share, the MIG profile). */
static bool agrees(const struct gf_k8s_ask *ask, const struct gf_job_place *pl)
{
	switch (ask->kind) {
	case GF_K8S_ASK_WHOLE:
		return pl->ngpus == ask->req.ngpus && pl->gpu_milli == 1000;
	case GF_K8S_ASK_SHARE:
		return pl->gpu_milli == ask->req.gpu_milli;
	case GF_K8S_ASK_MIG:
		return pl->mig_start >= 0;
	default:
		return false;
	}
}

void gf__k8s_adopt(struct gf_k8s *k, const struct gf_k8s_bound *v, int64_t now,
		   struct gf_batch *b)
{
	struct gf_service *s = k->s;
	const struct gf_k8s_pod *p = &v->pod;
	if (gf__k8s_held(k, p->uid) || gf_ctl_job(s->ctl, v->job))
		return; /* bound since the list, or known: never again */
	struct gf_err e;
	gf_err_clear(&e);
	struct gf_k8s_ask ask;
	int i = gf_ctl_node_find(s->ctl, v->place.node_name);
	if (i < 0)
		gf_err_set(&e, GF_ENOTFOUND, "no node %s here",
			   v->place.node_name);
	else if (gf_k8s_ask_of(s->ctl, p, &ask, &e) == 0 &&
		 !agrees(&ask, &v->place))
		gf_err_set(&e, GF_EINVAL,
			   "its annotated GPUs are not what it asks");
	if (e.msg[0]) {
		gf_log(GF_LOG_WARN, "k8s",
		       "resync: pod %s/%s bound to %s as job %s: %s; not "
		       "taken back",
		       p->ns, p->name, v->place.node_name, v->job, e.msg);
		return;
	}
	uint64_t seq = seq_of(v->job);
	if (!seq)
		seq = s->seq + 1;
	if (seq > s->seq)
		s->seq = seq;
	struct gf_job *j = gf_k8s_job_new(s->ctl, p, &ask, i, seq, k->cls, now);
	j->state = GF_JOB_RUNNING;
	j->started_ms = now;
	j->attempts = 1;
	j->block = gf_ctl_node(s->ctl, i)->block;
	j->place = gf_calloc(1, sizeof(*j->place));
	j->place[0] = v->place;
	if (gf_ctl_add(s->ctl, j, &e) != 0) {
		gf_log(GF_LOG_WARN, "k8s",
		       "resync: pod %s/%s bound to %s as job %s: %s; not "
		       "taken back",
		       p->ns, p->name, v->place.node_name, v->job, e.msg);
		gf_job_release(j);
		gf_free(j);
		return;
	}
	gf__batch_add(b, j);
	if (j->state != GF_JOB_RUNNING) { /* its GPUs are taken now */
		gf_log(GF_LOG_WARN, "k8s",
		       "resync: pod %s/%s runs on GPUs of %s that are not "
		       "free here (%s): job %s written cancelled",
		       p->ns, p->name, v->place.node_name, j->reason, j->id);
		if (gf_ctl_cancel(s->ctl, j->id, now, &e) != 0)
			gf_log(GF_LOG_ERROR, "k8s", "job %s: %s", j->id, e.msg);
		return;
	}
	gf__k8s_pods_put(k, p->uid, j->seq);
	k->adopted++;
	gf_log(GF_LOG_WARN, "k8s",
	       "resync: pod %s/%s was bound to %s before the store had its "
	       "job: job %s taken back on its annotated GPUs",
	       p->ns, p->name, v->place.node_name, j->id);
}
