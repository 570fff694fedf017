/*
 * k8s_reconcile.c - what runs against what was bound (report only): on
 * each heartbeat of a node, the pods its agent sees on each GPU (the
 * heartbeat's gpu_pods, from cgroups) are compared with the pods the
 * extender bound (uid -> job -> placement):
 *
 *   wrong-gpu  a pod gpufleet bound runs on a GPU (or MIG instance, or
 *              node) it was not given: the device plugin chose others
 *   not-bound  a pod gpufleet never bound runs on the node's GPU:
 *              another scheduler, or a pod placed before gpufleet
 *
 * A bound pod with no process is not a mismatch (it may not have
 * started).  Nothing is killed or released: the list is served on GET
 * /k8s/reconcile and counted on /metrics, and each new mismatch is
 * logged once.  Each node's list is replaced by its latest heartbeat's,
 * so a mismatch clears when the heartbeat stops showing it.
 *
 * Runs on the scheduler thread under ctl_lock, in proportion to what
 * the heartbeat carries (at most GF_NP_MAX_GPU_PODS x
 * GF_NP_PODS_PER_GPU pairs, each a hash look-up); a node's list holds at
 * most as many entries.
 */
#include <stdio.h>
#include <string.h>

#include "controller/k8s_impl.h"
#include "controller/service_impl.h"
#include "util/fmt.h"
#include "util/log.h"
#include "util/mem.h"

#define MM_MAX (GF_NP_MAX_GPU_PODS * GF_NP_PODS_PER_GPU)

static const char *const kind_names[] = { "wrong-gpu", "not-bound" };

/* "NS/NAME" of a pod's job (command "k8s-pod UID NS/NAME"), or "". */
static void pod_name(const struct gf_job *j, char *out, size_t size)
{
	size_t skip = strlen(GF_JOB_K8S_COMMAND);
	const char *c = j->spec.command && strlen(j->spec.command) > skip
				? strchr(j->spec.command + skip, ' ')
				: NULL;
	gf_note(out, size, "%.*s", c ? (int)strcspn(c + 1, " ") : 0,
		c ? c + 1 : "");
}

/* The device of node i a UUID names: its GPU, and the MIG instance's
 * start (-1 a whole GPU); false when the node has no such device. */
static bool device_of(const struct gf_np_inventory *inv, const char *uuid,
		      int *gpu, int *start)
{
	for (int g = 0; g < inv->ngpus; g++)
		if (inv->gpus[g].uuid[0] && !strcmp(inv->gpus[g].uuid, uuid)) {
			*gpu = g;
			*start = -1;
			return true;
		}
	for (int k = 0; k < inv->nmig; k++)
		if (inv->mig[k].uuid[0] && !strcmp(inv->mig[k].uuid, uuid)) {
			*gpu = inv->mig[k].gpu;
			*start = inv->mig[k].start;
			return true;
		}
	return false;
}

/* What job j was given: "GPU-a,GPU-b on node n1" (UUIDs where known). */
static void bound_to(struct gf_service *s, const struct gf_job *j, char *out,
		     size_t size)
{
	const struct gf_job_place *p = &j->place[0];
	size_t len = 0;
	out[0] = '\0';
	for (int g = 0; g < p->ngpus && len < size; g++) {
		const char *u =
			j->spec.mig_profile[0]
				? gf__agents_mig_uuid(s->ag, p->node,
						      p->gpus[g], p->mig_start)
				: gf__agents_uuid(s->ag, p->node, p->gpus[g]);
		int n = u ? snprintf(out + len, size - len, "%s%s",
				     g ? "," : "", u)
			  : snprintf(out + len, size - len, "%sgpu %d",
				     g ? "," : "", p->gpus[g]);
		len += n > 0 ? (size_t)n : 0;
	}
	if (len < size)
		gf_note(out + len, size - len, " on node %s",
			p->node >= 0 ? gf_ctl_cluster(s->ctl)->names[p->node]
				     : p->node_name);
}

/* Does job j's placement hold (node, gpu, start)? */
static bool holds(const struct gf_job *j, int node, int gpu, int start)
{
	const struct gf_job_place *p = &j->place[0];
	if (p->node != node)
		return false;
	for (int g = 0; g < p->ngpus; g++)
		if (p->gpus[g] == gpu)
			/* a MIG instance named: it must be the pod's */
			return start < 0 || !j->spec.mig_profile[0] ||
			       p->mig_start == start;
	return false;
}

static bool has(const struct gf_k8s_mm *v, int n, const struct gf_k8s_mm *m)
{
	for (int i = 0; i < n; i++)
		if (v[i].kind == m->kind && !strcmp(v[i].uid, m->uid) &&
		    !strcmp(v[i].device, m->device))
			return true;
	return false;
}

void gf__k8s_reconcile(struct gf_k8s *k, int node,
		       const struct gf_np_heartbeat *hb,
		       const struct gf_np_inventory *inv)
{
	struct gf_service *s = k->s;
	size_t cap = (size_t)k->mmcap;
	k->mm = gf_grow(k->mm, sizeof(*k->mm), &cap, (size_t)node, 16);
	k->mmcap = (int)cap;
	struct gf_k8s_mm_node *mn = &k->mm[node];
	mn->seen = true;
	struct gf_k8s_mm *v = NULL;
	int n = 0;
	const char *name = gf_ctl_cluster(s->ctl)->names[node];
	for (int d = 0; d < hb->ngpu_pods; d++) {
		const struct gf_np_gpu_pods *gp = &hb->gpu_pods[d];
		int gpu = -1, start = -1;
		bool known = device_of(inv, gp->uuid, &gpu, &start);
		for (int u = 0; u < gp->npods && n < MM_MAX; u++) {
			struct gf_k8s_mm m;
			memset(&m, 0, sizeof(m));
			GF__COPY_SAME(m.uid, gp->pods[u]);
			GF__COPY_SAME(m.device, gp->uuid);
			const char *id = gf__k8s_job_of(k, gp->pods[u]);
			const struct gf_job *j =
				id ? gf_ctl_job(s->ctl, id) : NULL;
			if (j && j->place && known &&
			    holds(j, node, gpu, start))
				continue;
			if (j && j->place) {
				char pod[GF_JOB_NAME_MAX + 64];
				pod_name(j, pod, sizeof(pod));
				m.kind = GF_K8S_MM_WRONG_GPU;
				GF__COPY_SAME(m.pod, pod);
				bound_to(s, j, m.bound, sizeof(m.bound));
				gf_note(m.reason, sizeof(m.reason),
					"pod %s uid %s runs on %s on node %s, "
					"bound to %s",
					pod[0] ? pod : "?", m.uid, m.device,
					name, m.bound);
			} else {
				m.kind = GF_K8S_MM_NOT_BOUND;
				gf_note(m.reason, sizeof(m.reason),
					"pod uid %s runs on %s on node %s, "
					"which gpufleet did not bind to it "
					"(another scheduler, or placed "
					"before gpufleet)",
					m.uid, m.device, name);
			}
			if (has(v, n, &m))
				continue;
			if (n % 16 == 0)
				v = gf_reallocarray(v, (size_t)n + 16,
						    sizeof(*v));
			v[n++] = m;
		}
	}
	for (int i = 0; i < n; i++)
		if (!has(mn->v, mn->n, &v[i]))
			gf_log(GF_LOG_WARN, "k8s", "mismatch %s: %s",
			       kind_names[v[i].kind], v[i].reason);
	gf_free(mn->v);
	mn->v = v;
	mn->n = n;
}

void gf__k8s_reconcile_forget(struct gf_k8s *k, int node)
{
	if (node < 0 || node >= k->mmcap)
		return;
	struct gf_k8s_mm_node *mn = &k->mm[node];
	if (mn->n && k->s)
		gf_log(GF_LOG_INFO, "k8s",
		       "node %s: %d mismatches dropped: its agent is silent",
		       gf_ctl_cluster(k->s->ctl)->names[node], mn->n);
	gf_free(mn->v);
	mn->n = 0;
	mn->seen = false;
}

void gf__k8s_reconcile_free(struct gf_k8s *k)
{
	for (int i = 0; i < k->mmcap; i++)
		gf_free(k->mm[i].v);
	gf_free(k->mm);
	k->mm = NULL;
	k->mmcap = 0;
}

void gf__k8s_metrics(struct gf_k8s *k, struct gf_buf *b)
{
	const struct gf_cluster *c = gf_ctl_cluster(k->s->ctl);
	gf_buf_printf(b,
		      "# HELP gpufleet_k8s_pod_gpu_mismatches Pods whose GPU "
		      "processes differ from what the extender bound, per "
		      "node, as its agent's last heartbeat shows: wrong-gpu "
		      "(a bound pod on a GPU it was not given), not-bound (a "
		      "pod gpufleet did not bind). GET /k8s/reconcile lists "
		      "them.\n# TYPE gpufleet_k8s_pod_gpu_mismatches gauge\n");
	for (int i = 0; i < k->mmcap && i < gf_ctl_nnodes(k->s->ctl); i++) {
		const struct gf_k8s_mm_node *mn = &k->mm[i];
		if (!mn->seen)
			continue;
		int count[2] = { 0, 0 };
		for (int m = 0; m < mn->n; m++)
			count[mn->v[m].kind]++;
		for (int kd = 0; kd < 2; kd++)
			gf_buf_printf(b,
				      "gpufleet_k8s_pod_gpu_mismatches{node=\""
				      "%s\",kind=\"%s\"} %d\n",
				      c->names[i], kind_names[kd], count[kd]);
	}
}

int gf__k8s_reconcile_get(struct gf_http_req *r, void *arg)
{
	struct gf_service *s = ((struct gf_call *)arg)->s;
	if (!s->k8s)
		return gf_reply_error(r, 404, "not-found",
				      "the Kubernetes extender is off: start "
				      "gpufleet serve with --k8s-extender");
	struct gf_buf b;
	struct gf_json j;
	gf_json_open(&j, &b, 8u << 20);
	gf_json_obj_begin(&j, NULL);
	gf_json_arr_begin(&j, "mismatches");
	pthread_mutex_lock(&s->ctl_lock);
	struct gf_k8s *k = s->k8s;
	const struct gf_cluster *c = gf_ctl_cluster(s->ctl);
	int total = 0;
	for (int i = 0; i < k->mmcap && i < gf_ctl_nnodes(s->ctl); i++)
		for (int m = 0; m < k->mm[i].n; m++) {
			const struct gf_k8s_mm *x = &k->mm[i].v[m];
			gf_json_obj_begin(&j, NULL);
			gf_json_str(&j, "node", c->names[i]);
			gf_json_str(&j, "kind", kind_names[x->kind]);
			gf_json_str(&j, "pod_uid", x->uid);
			gf_json_str(&j, "pod", x->pod);
			gf_json_str(&j, "device", x->device);
			gf_json_str(&j, "bound_to", x->bound);
			gf_json_str(&j, "reason", x->reason);
			gf_json_obj_end(&j);
			total++;
		}
	pthread_mutex_unlock(&s->ctl_lock);
	gf_json_arr_end(&j);
	gf_json_int(&j, "count", total);
	gf_json_obj_end(&j);
	int rc = gf_json_error(&j) ? gf_reply_error(r, 500, "too-big",
						    "the answer is over 8 MiB")
				   : gf_reply_json(r, 200, &b);
	gf_buf_release(&b);
	return rc;
}
