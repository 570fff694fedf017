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
 *
 * Repeats.  An agent at rest sends the same bytes every second.  The
 * node keeps the hash of the last body answered quick (gf_hash_bytes,
 * 64 bits), with its generation and its sick GPUs then.  A body with the
 * same hash, while the node is ready with no replica completing, its
 * generation (bumped by every assignment and unassignment) and sick GPUs
 * the same, and no heartbeat taken by the scheduler thread since (the
 * only one that changes its applied generation or sees a replica up),
 * is decided as before without being read again.  A replica ended since
 * only makes the checks looser.  Were two bodies ever to share a hash,
 * the second would be answered as the first: its reports would not be
 * acked and its agent sends them again (reports are sent until acked,
 * health and runs every time).
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

/* The core's sick GPUs of node i, a bit each. */
static uint16_t sick_of(const struct gf_ctl *ctl, int i)
{
	uint16_t m = 0;
	for (int g = 0; g < gf_ctl_cluster(ctl)->nodes[i].ngpus; g++)
		if (!gf_ctl_gpu_is_healthy(ctl, i, g))
			m |= (uint16_t)(1u << g);
	return m;
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

/* The node of name, answerable here (ctl_lock held): its index, or -1. */
static int node_here(struct gf_service *s, const char *name)
{
	struct gf_agents *ag = s->ag;
	if (!ag || !s->leading || atomic_load(&s->failed) || listened(s))
		return -1;
	int i = gf_ctl_node_find(s->ctl, name);
	return i >= 0 && i < ag->cap ? i : -1;
}

/* Node i answered quick (ctl_lock held): its last call now, its ack into
 * b; counted in *count. */
static void answered(struct gf_agents *ag, int i, const char *name,
		     struct gf_buf *b, uint64_t *count)
{
	ag->n[i].last_seen = gf__mono_ms();
	(*count)++;
	gf__agents_ack(ag, b, i, name, 0, NULL);
}

static void send_ack(struct gf_http_req *r, struct gf_buf *b)
{
	(void)gf_reply_json(r, 200, b); /* a failed send: its agent calls
					   again */
	gf_buf_release(b);
}

bool gf__agents_quick(struct gf_service *s, struct gf_http_req *r,
		      struct agent_op *x)
{
	struct gf_agents *ag = s->ag;
	if (x->what != AG_HEARTBEAT || !x->hb)
		return false;
	pthread_mutex_lock(&s->ctl_lock);
	int i = node_here(s, x->node);
	bool quick = i >= 0 && changes_nothing(ag, i, x->hb);
	struct gf_buf b;
	if (quick) {
		struct anode *n = &ag->n[i];
		n->qhash = x->hb_hash;
		n->qgen = n->gen;
		n->qsick = sick_of(s->ctl, i);
		n->qok = true;
		answered(ag, i, x->node, &b, &ag->quick);
	}
	pthread_mutex_unlock(&s->ctl_lock);
	if (quick)
		send_ack(r, &b);
	return quick;
}

bool gf__agents_repeat(struct gf_service *s, struct gf_http_req *r,
		       const char *name, uint64_t h)
{
	struct gf_agents *ag = s->ag;
	pthread_mutex_lock(&s->ctl_lock);
	int i = node_here(s, name);
	const struct anode *n = i >= 0 ? &ag->n[i] : NULL;
	bool same = n && n->qok && n->qhash == h && n->qgen == n->gen &&
		    n->st == AN_READY && n->nends == 0 &&
		    n->qsick == sick_of(s->ctl, i);
	struct gf_buf b;
	if (same)
		answered(ag, i, name, &b, &ag->repeat);
	pthread_mutex_unlock(&s->ctl_lock);
	if (same)
		send_ack(r, &b);
	return same;
}
