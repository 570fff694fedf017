/*
 * agents_ending.c - replicas completing on agent nodes (issue 19): a
 * replica the controller stopped (cancel, preemption, a requeue, a
 * failure) is held by the core (core/jobs/held.c) until its node says its
 * processes are gone.  Per node, the replicas unassigned while their
 * processes may live ("endings"), each with the generation that dropped
 * it; gone when the node reports its end, or when the node, having
 * applied that generation, no longer lists it running; shown stuck when
 * it still runs well past its kill grace.
 *
 * Invariant: every ending names a replica the core holds on that node;
 * one that is not held any more (released by a report, or by an
 * operator) is dropped at the node's next heartbeat.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "controller/agents_impl.h"
#include "controller/service_impl.h"
#include "util/log.h"
#include "util/mem.h"

void gf__agents_ending_add(struct gf_agents *ag, int node, uint64_t seq,
			   int attempt, int replica)
{
	struct anode *n = gf__anode(ag, node);
	if (n->nends == n->ecap) {
		n->ecap = n->ecap ? 2 * n->ecap : 8;
		n->ends = gf_reallocarray(n->ends, (size_t)n->ecap,
					  sizeof(*n->ends));
	}
	n->ends[n->nends++] = (struct ending){ seq, attempt, replica, n->gen };
}

/* Is (seq, attempt, replica) held by the core on node i? */
const struct gf_job_held *gf__held_on(const struct gf_job *j, int attempt,
				      int replica, int i)
{
	for (int k = 0; j && k < j->nheld; k++)
		if (j->held[k].attempt == attempt &&
		    j->held[k].replica == replica && j->held[k].place.node == i)
			return &j->held[k];
	return NULL;
}

/* The replica's processes are gone: its resources back to the core, its
 * ending entry on node i (if any) dropped; the job to the store. */
void gf__agents_gone(struct gf_agents *ag, const struct gf_job *j, int attempt,
		     int replica, int i, const char *how, struct gf_batch *b)
{
	struct gf_err e;
	if (gf_ctl_held_release(ag->s->ctl, j->id, attempt, replica, &e) == 0) {
		gf_log(GF_LOG_INFO, "serve",
		       "job=%s attempt=%d replica=%d node=%s completed: %s; "
		       "its resources are free",
		       j->id, attempt, replica,
		       gf_ctl_cluster(ag->s->ctl)->names[i], how);
		if (b)
			gf__batch_add(b, j);
	}
	struct anode *n = gf__anode(ag, i);
	for (int k = 0; k < n->nends; k++)
		if (n->ends[k].seq == j->seq && n->ends[k].attempt == attempt &&
		    n->ends[k].replica == replica) {
			n->ends[k] = n->ends[--n->nends];
			break;
		}
}

/* Is (job, attempt, replica) in the node's running list? */
bool gf__hb_runs(const struct gf_np_heartbeat *hb, const char *id, int attempt,
		 int replica)
{
	for (int k = 0; k < hb->nrunning; k++)
		if (hb->running[k].attempt == attempt &&
		    hb->running[k].replica == replica &&
		    !strcmp(hb->running[k].job, id))
			return true;
	return false;
}

/* A replica completing on node i that its agent still runs well past its
 * kill grace: its processes outlive SIGKILL (D state, an unkillable
 * driver call).  Said once, on the job (its completing entry's why) and
 * in the log, with how an operator frees it. */
#define STUCK_AFTER_MS 5000 /* past the kill grace */
static void stuck(struct gf_agents *ag, const struct gf_job *j,
		  const struct ending *en, int i, int64_t now,
		  struct gf_batch *b)
{
	const struct gf_job_held *h =
		gf__held_on(j, en->attempt, en->replica, i);
	int64_t grace = ag->s->o.cfg->agents.kill_grace_ms;
	if (!h || !strncmp(h->why, "stuck", 5) ||
	    now - h->since_ms < grace + STUCK_AFTER_MS)
		return;
	(void)!gf_ctl_held_note(ag->s->ctl, j->id, en->attempt, en->replica,
				"stuck: outlives SIGKILL");
	gf__batch_add(b, j);
	gf_log(GF_LOG_WARN, "serve",
	       "job=%s attempt=%d replica=%d node=%s still runs %lld s after "
	       "it was stopped (SIGKILL due after %lld s): its resources stay "
	       "held; POST /v1/jobs/%s/release frees them once its "
	       "processes are known gone",
	       j->id, en->attempt, en->replica,
	       gf_ctl_cluster(ag->s->ctl)->names[i],
	       (long long)((now - h->since_ms) / 1000),
	       (long long)(grace / 1000), j->id);
}

void gf__agents_endings(struct gf_agents *ag, int i,
			const struct gf_np_heartbeat *hb, int64_t now,
			struct gf_batch *b)
{
	struct gf_ctl *ctl = ag->s->ctl;
	struct anode *n = &ag->n[i];
	/* replicas completing here that its agent, having applied their
	 * unassignment, no longer runs: gone */
	for (int k = n->nends - 1; k >= 0; k--) {
		if (k >= n->nends)
			continue;
		struct ending en = n->ends[k];
		char id[GF_JOB_ID_MAX];
		snprintf(id, sizeof(id), "j%" PRIu64, en.seq);
		const struct gf_job *j = gf_ctl_job(ctl, id);
		if (!j || !gf__held_on(j, en.attempt, en.replica, i)) {
			n->ends[k] = n->ends[--n->nends]; /* released already */
			continue;
		}
		if (en.gen > hb->generation)
			continue; /* not told yet */
		if (gf__hb_runs(hb, id, en.attempt, en.replica)) {
			stuck(ag, j, &en, i, now, b); /* still stopping */
			continue;
		}
		gf__agents_gone(ag, j, en.attempt, en.replica, i,
				"its agent runs it no more", b);
	}
}
