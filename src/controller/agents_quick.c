/*
 * agents_quick.c - a heartbeat that changes nothing, answered on the
 * request's own thread.  Most heartbeats say only "alive, as before": a
 * ready node, no report, every GPU's health as the core has it, the
 * generation its agent last said it applied, and every replica assigned
 * up to it running and seen up.  The scheduler thread would only set
 * the node's last call and acknowledge it; holding the request for its
 * turn costs a suspend and a resume in libmicrohttpd, and each resume
 * makes it walk every suspended connection of its worker (the parked
 * long polls: one a node).  So such a heartbeat takes ctl_lock, sets the
 * node's last call (what the silence sweep reads, under the same lock)
 * and is acknowledged there; anything else goes to the scheduler thread
 * as before (agents.c).
 *
 * The checks are those agents.c's heartbeat() makes, read the same way:
 * any that would change something sends the heartbeat on.  Listeners of
 * heartbeats (the Kubernetes extender's pod comparison) also send it on:
 * they run on the scheduler thread.  A server that does not lead, or has
 * failed, sends it on (answered 503 there).
 */
#include <stdatomic.h>

#include "controller/agents_impl.h"
#include "controller/service_impl.h"
#include "util/buf.h"

/* Does a feature listen to heartbeats? */
static bool listened(const struct gf_service *s)
{
	for (int f = 0; f < s->nfeat; f++)
		if (s->feat[f].heartbeat)
			return true;
	return false;
}

/* Is every GPU health in hb the core's already? */
static bool health_same(const struct gf_ctl *ctl, int i,
			const struct gf_np_heartbeat *hb)
{
	int ngpus = gf_ctl_cluster(ctl)->nodes[i].ngpus;
	for (int k = 0; k < hb->nhealth; k++) {
		int g = hb->health[k].index;
		if (g < ngpus &&
		    gf_ctl_gpu_is_healthy(ctl, i, g) != hb->health[k].healthy)
			return false;
	}
	return true;
}

/* Does every replica assigned to node n up to the applied generation run
 * there, seen up already (reconcile() would do nothing)? */
static bool runs_same(struct gf_agents *ag, const struct anode *n,
		      const struct gf_np_heartbeat *hb)
{
	for (int k = 0; k < n->nrefs; k++) {
		const struct aref *a = &n->refs[k];
		const struct jside *x = jside_of(ag, a->seq);
		if (a->gen > hb->generation || !x || x->ended[a->replica])
			continue;
		char id[GF_JOB_ID_MAX];
		gf__job_id(id, a->seq);
		if (!x->up[a->replica] ||
		    !gf__hb_runs(hb, id, x->attempt, a->replica))
			return false;
	}
	return true;
}

/* Node i's heartbeat changes nothing but its last call (ctl_lock held). */
static bool changes_nothing(struct gf_agents *ag, int i,
			    const struct gf_np_heartbeat *hb)
{
	const struct anode *n = &ag->n[i];
	return n->st == AN_READY && hb->nreports == 0 && n->nends == 0 &&
	       hb->generation == n->applied && health_same(ag->s->ctl, i, hb) &&
	       runs_same(ag, n, hb);
}

bool gf__agents_quick(struct gf_service *s, struct gf_http_req *r,
		      struct agent_op *x)
{
	struct gf_agents *ag = s->ag;
	if (!ag || x->what != AG_HEARTBEAT || !x->hb)
		return false;
	pthread_mutex_lock(&s->ctl_lock);
	int i = gf_ctl_node_find(s->ctl, x->node);
	bool quick = s->leading && !atomic_load(&s->failed) && !listened(s) &&
		     i >= 0 && i < ag->cap && changes_nothing(ag, i, x->hb);
	struct gf_buf b;
	if (quick) {
		ag->n[i].last_seen = gf__mono_ms();
		ag->quick++;
		gf__agents_ack(ag, &b, i, x->node, 0, NULL);
	}
	pthread_mutex_unlock(&s->ctl_lock);
	if (quick) {
		(void)gf_reply_json(r, 200, &b); /* a failed send: its agent
						    calls again */
		gf_buf_release(&b);
	}
	return quick;
}
