/*
 * jobs_health.c - a node ready or not (gf_ctl_node_ready), a GPU healthy or
 * not (gf_ctl_gpu_health), and what follows in the engine: a node not
 * ready is cordoned (nothing new is placed there) and its running jobs
 * requeued; an unhealthy GPU is held out of placement (whole, shared, its
 * MIG instances), and what runs there stays.
 *
 * A node's states (ns[i].state):
 *   READY    takes work.
 *   WAITING  added by gf_ctl_node_add, never ready since: jobs restored
 *            running onto it (gf_ctl_add, a controller restart) stay
 *            running, their agent probably still runs them; nothing new.
 *   LOST     made not ready: its jobs were requeued, it holds no running
 *            replica, a restore onto it is refused (table.c); nothing new.
 *
 *   (none) -> READY      gf_ctl_new
 *   (none) -> WAITING    gf_ctl_node_add
 *   READY, WAITING -> LOST     gf_ctl_node_ready(false): jobs requeued
 *   WAITING, LOST -> READY     gf_ctl_node_ready(true)
 * Beside the state, a node may be cordoned (gf_ctl_node_cordon: its agent
 * went quiet, or an operator drains it): nothing new is placed there, its
 * jobs run on, whatever the state.
 *
 * Invariants (gf__nodes_check, from gf_ctl_check): the engine cordons
 * exactly the nodes not READY or cordoned, and holds exactly the GPUs in
 * MIG mode or unhealthy; a LOST node holds no running replica; a running
 * replica on a node not READY started before it stopped being ready
 * (down_epoch), on a cordoned node before the cordon (cordon_epoch), on
 * an unhealthy GPU before it became so (sick_epoch): a job records the
 * epoch it started at, restored jobs 0; nrep counts each node's running
 * replicas; the block lists and positions agree.
 */
#include "core/jobs/jobs_health.h"

#include <stdio.h>
#include <string.h>

#include "core/jobs/ctl_impl.h"
#include "core/jobs/jobs_changes.h"
#include "core/jobs/jobs_mig.h"
#include "core/jobs/jobs_state.h"
#include "util/fmt.h"
#include "util/mem.h"

void gf__requeue_node(struct gf_ctl *ctl, int i, const char *why, int64_t now,
		      struct gf_ctl_changes *out, uint32_t mark,
		      bool gangs_only)
{
	if (ctl->nodes.ns[i].nrep == 0)
		return;
	int *jids = gf_calloc((size_t)ctl->jobs.running.n, sizeof(int)), n = 0;
	for (int k = 0; k < ctl->jobs.running.n; k++) {
		const struct gf_job *job =
			ctl->jobs.jr[ctl->jobs.running.v[k]].job;
		if (gangs_only && job->spec.replicas == 1)
			continue;
		for (int r = 0; r < job->spec.replicas; r++)
			if (job->place[r].node == i) {
				jids[n++] = ctl->jobs.running.v[k];
				break;
			}
	}
	for (int k = 0; k < n; k++) {
		gf__requeue(ctl, jids[k], why, now);
		gf__report(&ctl->jobs, out, mark, jids[k]);
	}
	gf_free(jids);
}

/* The engine cordons node i iff it is not ready, cordoned or drained. */
static void cordon_sync(struct gf_ctl *ctl, int node)
{
	const struct gf__node *x = &ctl->nodes.ns[node];
	(void)!gf_sched_cordon(ctl->s, node, /* node is in range */
			       x->state != GF__READY || x->cordon || x->drain);
}

static int bad_node(const struct gf_ctl *ctl, int node, struct gf_err *e)
{
	if (node >= 0 && node < ctl->c->n)
		return 0;
	return gf_err_set(e, GF_EINVAL, "no node %d (%d nodes)", node,
			  ctl->c->n);
}

int gf_ctl_node_ready(struct gf_ctl *ctl, int node, bool ready,
		      const char *reason, int64_t now_ms,
		      struct gf_ctl_changes *out, struct gf_err *e)
{
	gf_err_clear(e);
	int rc = bad_node(ctl, node, e);
	if (rc)
		return rc;
	if (now_ms <= 0)
		return gf_err_set(e, GF_EINVAL,
				  "time %lld: expected ms since the epoch",
				  (long long)now_ms);
	struct gf__node *x = &ctl->nodes.ns[node];
	if (ready) {
		if (x->state != GF__READY) {
			x->state = GF__READY;
			x->reason[0] = '\0';
			cordon_sync(ctl, node);
		}
		return 0;
	}
	bool given = reason && reason[0];
	gf_note(x->reason, sizeof(x->reason), "%s",
		given ? reason : "not ready");
	if (x->state == GF__LOST)
		return 0;
	x->state = GF__LOST;
	x->down_epoch = ++ctl->nodes.epoch;
	cordon_sync(ctl, node);
	char why[GF_JOB_REASON_MAX];
	gf_note(why, sizeof(why), "node %s not ready%s%.100s",
		ctl->c->names[node], given ? ": " : "", given ? reason : "");
	gf__requeue_node(ctl, node, why, now_ms, out, gf__mark(&ctl->jobs),
			 false);
	return 0;
}

/* A node's cordon flag (drain false) or drain flag set (on: epoch noted,
 * for the check that nothing started there since), and the engine's
 * cordon following. */
static int set_flag(struct gf_ctl *ctl, int node, bool drain, bool on,
		    struct gf_err *e)
{
	gf_err_clear(e);
	int rc = bad_node(ctl, node, e);
	if (rc)
		return rc;
	struct gf__node *x = &ctl->nodes.ns[node];
	bool *flag = drain ? &x->drain : &x->cordon;
	if (*flag == on)
		return 0;
	*flag = on;
	if (on)
		*(drain ? &x->drain_epoch : &x->cordon_epoch) =
			++ctl->nodes.epoch;
	cordon_sync(ctl, node);
	return 0;
}

int gf_ctl_node_cordon(struct gf_ctl *ctl, int node, bool cordon,
		       struct gf_err *e)
{
	return set_flag(ctl, node, false, cordon, e);
}

int gf_ctl_node_drain(struct gf_ctl *ctl, int node, bool drain,
		      struct gf_err *e)
{
	return set_flag(ctl, node, true, drain, e);
}

bool gf_ctl_node_is_draining(const struct gf_ctl *ctl, int node)
{
	return node >= 0 && node < ctl->c->n && ctl->nodes.ns[node].drain;
}

int gf_ctl_node_replicas(const struct gf_ctl *ctl, int node)
{
	return node >= 0 && node < ctl->c->n ? ctl->nodes.ns[node].nrep : 0;
}

bool gf_ctl_node_is_cordoned(const struct gf_ctl *ctl, int node)
{
	return node >= 0 && node < ctl->c->n && ctl->nodes.ns[node].cordon;
}

int gf_ctl_gpu_health(struct gf_ctl *ctl, int node, int gpu, bool healthy,
		      const char *reason, struct gf_err *e)
{
	gf_err_clear(e);
	int rc = bad_node(ctl, node, e);
	if (rc)
		return rc;
	int ngpus = ctl->c->nodes[node].ngpus;
	if (gpu < 0 || gpu >= ngpus)
		return gf_err_set(e, GF_EINVAL, "node %s: no GPU %d (%d GPUs)",
				  ctl->c->names[node], gpu, ngpus);
	struct gf__node *x = &ctl->nodes.ns[node];
	uint16_t bit = (uint16_t)(1u << gpu);
	if (healthy) {
		x->sick &= (uint16_t)~bit;
		if (x->gpu_why)
			x->gpu_why[gpu][0] = '\0';
	} else {
		if (!(x->sick & bit))
			x->sick_epoch[gpu] = ++ctl->nodes.epoch;
		x->sick |= bit;
		if (x->gpu_why == NULL)
			x->gpu_why = gf_calloc(GF_CNODE_MAX_GPUS,
					       sizeof(*x->gpu_why));
		gf_note(x->gpu_why[gpu], GF__WHY_MAX, "%s",
			reason ? reason : "");
	}
	gf__gpu_sync(ctl, node);
	return 0;
}

bool gf_ctl_node_is_ready(const struct gf_ctl *ctl, int node)
{
	return node >= 0 && node < ctl->c->n &&
	       ctl->nodes.ns[node].state == GF__READY;
}

const char *gf_ctl_node_reason(const struct gf_ctl *ctl, int node)
{
	return node >= 0 && node < ctl->c->n ? ctl->nodes.ns[node].reason : "";
}

bool gf_ctl_gpu_is_healthy(const struct gf_ctl *ctl, int node, int gpu)
{
	return node >= 0 && node < ctl->c->n && gpu >= 0 &&
	       gpu < ctl->c->nodes[node].ngpus &&
	       !(ctl->nodes.ns[node].sick >> gpu & 1);
}

const char *gf_ctl_gpu_reason(const struct gf_ctl *ctl, int node, int gpu)
{
	if (gf_ctl_gpu_is_healthy(ctl, node, gpu) || node < 0 ||
	    node >= ctl->c->n || gpu < 0 || gpu >= GF_CNODE_MAX_GPUS ||
	    ctl->nodes.ns[node].gpu_why == NULL)
		return "";
	return ctl->nodes.ns[node].gpu_why[gpu];
}

static int fail(char *msg, unsigned size, const char *node, const char *what)
{
	gf_note(msg, size, "node %s: %s", node, what);
	return GF_EINVAL;
}

/* Replicas of running jobs against the states of their nodes and GPUs. */
static int check_replicas(const struct gf_ctl *ctl, char *msg, unsigned size)
{
	for (int k = 0; k < ctl->jobs.running.n; k++) {
		const struct gf__jrec *j =
			&ctl->jobs.jr[ctl->jobs.running.v[k]];
		for (int r = 0; r < j->job->spec.replicas; r++) {
			const struct gf_job_place *p = &j->job->place[r];
			const struct gf__node *x = &ctl->nodes.ns[p->node];
			const char *name = ctl->c->names[p->node];
			if (x->state == GF__LOST)
				return fail(msg, size, name,
					    "not ready, yet a replica runs "
					    "there");
			if (x->state != GF__READY &&
			    j->start_epoch >= x->down_epoch)
				return fail(msg, size, name,
					    "a job started there while not "
					    "ready");
			if (x->cordon && j->start_epoch >= x->cordon_epoch)
				return fail(msg, size, name,
					    "a job started there while "
					    "cordoned");
			if (x->drain && j->start_epoch >= x->drain_epoch)
				return fail(msg, size, name,
					    "a job started there while "
					    "draining");
			for (int g = 0; g < p->ngpus; g++)
				if ((x->sick >> p->gpus[g] & 1) &&
				    j->start_epoch >= x->sick_epoch[p->gpus[g]])
					return fail(msg, size, name,
						    "a job started on an "
						    "unhealthy GPU");
		}
	}
	return 0;
}

int gf__nodes_check(const struct gf_ctl *ctl, const int *nrep, char *msg,
		    unsigned size)
{
	for (int i = 0; i < ctl->c->n; i++) {
		const struct gf__node *x = &ctl->nodes.ns[i];
		const struct gf_cnode *n = &ctl->c->nodes[i];
		const char *name = ctl->c->names[i];
		if (gf_sched_is_cordoned(ctl->s, i) !=
		    (x->state != GF__READY || x->cordon || x->drain))
			return fail(msg, size, name,
				    "cordoned in the engine iff not ready or "
				    "cordoned: no");
		if (n->held_gpus != (x->sick | x->mig_gpus))
			return fail(msg, size, name,
				    "the engine holds other GPUs than the "
				    "unhealthy and MIG ones");
		if (x->nrep != nrep[i])
			return fail(msg, size, name,
				    "running replicas miscounted");
		const struct gf__block *b = gf__block_of(&ctl->nodes, i);
		if (x->bpos < 0 || x->bpos >= b->n || b->nodes[x->bpos] != i)
			return fail(msg, size, name, "not in its block's list");
		uint16_t mig = 0;
		for (int k = ctl->mig.node_inst[i];
		     k < ctl->mig.node_inst[i + 1]; k++)
			mig |= (uint16_t)(1u << ctl->mig.inst[k].gpu);
		if (mig != x->mig_gpus)
			return fail(msg, size, name,
				    "GPUs in MIG mode differ from its "
				    "instances");
	}
	int members = 0;
	for (int b = 0; b < ctl->nodes.nblk; b++)
		members += ctl->nodes.blk[b].n;
	if (members != ctl->c->n || ctl->nodes.nblk != ctl->cfg.nblocks) {
		gf_note(msg, size, "blocks hold %d nodes, the cluster %d",
			members, ctl->c->n);
		return GF_EINVAL;
	}
	return check_replicas(ctl, msg, size);
}
