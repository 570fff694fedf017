/*
 * agents_read.c - what the other controller files read of the agents'
 * nodes, under ctl_lock (agents_impl.h holds the state; agents.c changes
 * it): a node's state and reason as the API shows them, its agent's URL,
 * its GPUs' and MIG instances' UUIDs, its inventory, and where a job's
 * placement is in those terms.  Nothing here changes a node.
 */
#include <stdlib.h>
#include <string.h>

#include "controller/agents_impl.h"
#include "controller/service_impl.h"
#include "util/fmt.h"

const char *gf__agents_url(const struct gf_agents *ag, int node)
{
	if (node < 0 || node >= ag->cap)
		return NULL;
	const struct anode *n = &ag->n[node];
	if (n->st != AN_READY || !n->inv || !n->inv->agent_url[0])
		return NULL;
	return n->inv->agent_url;
}

const char *gf__agents_state(const struct gf_agents *ag, int node)
{
	bool ready = node < ag->cap && ag->n[node].st != AN_NONE
			     ? ag->n[node].st == AN_READY
			     : gf_ctl_node_is_ready(ag->s->ctl, node);
	if (!ready)
		return "notready";
	if (!gf_ctl_node_is_draining(ag->s->ctl, node))
		return "ready";
	return gf_ctl_node_replicas(ag->s->ctl, node) > 0 ? "draining"
							  : "drained";
}

void gf__agents_heartbeats(const struct gf_agents *ag, uint64_t *quick,
			   uint64_t *repeat, uint64_t *slow)
{
	*quick = ag ? ag->quick : 0;
	*repeat = ag ? ag->repeat : 0;
	*slow = ag ? ag->slow : 0;
}

void gf__agents_polls(const struct gf_agents *ag, uint64_t *here,
		      uint64_t *turn)
{
	*here = ag ? ag->polls_here : 0;
	*turn = ag ? ag->polls_turn : 0;
}

const char *gf__agents_reason(const struct gf_agents *ag, int node)
{
	if (gf_ctl_node_is_draining(ag->s->ctl, node) && node < ag->cap &&
	    ag->n[node].drain &&
	    (ag->n[node].st == AN_READY || ag->n[node].st == AN_NONE))
		return ag->n[node].drain;
	if (node < ag->cap && ag->n[node].st != AN_NONE &&
	    ag->n[node].st != AN_READY)
		return ag->n[node].why;
	return gf_ctl_node_reason(ag->s->ctl, node);
}

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;
	return (x > y) - (x < y);
}

void gf__agents_where(const struct gf_agents *ag, const struct gf_job *j,
		      const struct gf_job_place *p, struct gf_job_run *r)
{
	r->ngpus = 0;
	r->gpu_uuids[0] = r->mig_uuid[0] = '\0';
	r->mig_start = j->spec.mig_profile[0] ? p->mig_start : -1;
	for (int g = 0; g < p->ngpus && g < GF_CNODE_MAX_GPUS; g++)
		if (p->gpus[g] >= 0 && p->gpus[g] < GF_CNODE_MAX_GPUS)
			r->gpus[r->ngpus++] = p->gpus[g];
	qsort(r->gpus, (size_t)r->ngpus, sizeof(r->gpus[0]), cmp_int);
	int n = 0; /* without repeats: the store wants them ascending */
	for (int g = 0; g < r->ngpus; g++)
		if (n == 0 || r->gpus[g] != r->gpus[n - 1])
			r->gpus[n++] = r->gpus[g];
	r->ngpus = n;
	if (p->node < 0)
		return; /* UUIDs unknown */
	if (j->spec.mig_profile[0] && p->mig_start >= 0 && n == 1) {
		const char *u = gf__agents_mig_uuid(ag, p->node, r->gpus[0],
						    p->mig_start);
		if (u)
			gf_note(r->mig_uuid, sizeof(r->mig_uuid), "%s", u);
	}
	size_t len = 0;
	for (int g = 0; g < n; g++) {
		const char *u = gf__agents_uuid(ag, p->node, r->gpus[g]);
		size_t ul = u ? strlen(u) : 0;
		if (!u || len + ul + 2 > sizeof(r->gpu_uuids)) {
			r->gpu_uuids[0] = '\0'; /* one unknown: all unknown */
			return;
		}
		if (g)
			r->gpu_uuids[len++] = ',';
		memcpy(r->gpu_uuids + len, u, ul + 1);
		len += ul;
	}
}

const char *gf__agents_uuid(const struct gf_agents *ag, int node, int gpu)
{
	if (node >= ag->cap || !ag->n[node].inv ||
	    gpu >= ag->n[node].inv->ngpus ||
	    !ag->n[node].inv->gpus[gpu].uuid[0])
		return NULL;
	return ag->n[node].inv->gpus[gpu].uuid;
}

const char *gf__agents_mig_uuid(const struct gf_agents *ag, int node, int gpu,
				int start)
{
	const struct gf_np_inventory *inv =
		node < ag->cap ? ag->n[node].inv : NULL;
	for (int k = 0; inv && k < inv->nmig; k++)
		if (inv->mig[k].gpu == gpu && inv->mig[k].start == start &&
		    inv->mig[k].uuid[0])
			return inv->mig[k].uuid;
	return NULL;
}

const char *gf__agents_inventory(const struct gf_agents *ag, int node,
				 size_t *len)
{
	if (node >= ag->cap || !ag->n[node].text)
		return NULL;
	*len = ag->n[node].len;
	return ag->n[node].text;
}
