/*
 * order.c - the order a pass tries pending jobs in: classes by priority
 * (highest first; equal priorities in config order), inside a class fair
 * share between teams, inside a team submission order.
 *
 * Fair share is dominant share on GPU, weighted: the team whose running
 * milli-GPU (all classes; a MIG instance counts as its fraction of a GPU)
 * divided by its weight is the smallest goes next; on a tie, the team
 * whose next job is older.  The share is read again after every job the
 * pass tries, so a team that just started a job yields to the others as
 * soon as its share passes theirs (a min-heap of teams; rebuilt when a
 * preemption lowered other teams' shares).
 *
 * Invariants: each PENDING job is in exactly one queue, its team's for
 * its class, kept by seq; queues may hold jobs that left PENDING until
 * gf__queue_compact; ctl->jobs.order holds every PENDING job once (plus
 * stale entries skipped when read): the last pass's order, then the jobs
 * that became PENDING since.
 */
#include "core/jobs/order.h"

#include <stdlib.h>
#include <string.h>

#include "core/jobs/ctl_impl.h"
#include "core/jobs/table.h"
#include "util/mem.h"

static uint64_t seq_of(const struct gf__jobtab *jt, int jid)
{
	return jt->jr[jid].job->seq;
}

void gf__queue_push(struct gf_ctl *ctl, int jid)
{
	struct gf__jrec *j = &ctl->jobs.jr[jid];
	if (j->queued)
		return;
	struct gf__queue *q = &ctl->teams.t[j->team].q[j->cls];
	q->ids = gf_grow(q->ids, sizeof(*q->ids), &q->cap, (size_t)q->n, 16);
	gf__seq_insert(&ctl->jobs, q->ids, q->n, jid);
	q->n++;
	j->queued = true;
}

static void queue_compact(struct gf_ctl *ctl)
{
	for (int t = 0; t < ctl->teams.n; t++)
		for (int c = 0; c < ctl->cfg.nclasses; c++) {
			struct gf__queue *q = &ctl->teams.t[t].q[c];
			int k = 0;
			for (int i = 0; i < q->n; i++) {
				struct gf__jrec *j = &ctl->jobs.jr[q->ids[i]];
				if (j->job->state == GF_JOB_PENDING)
					q->ids[k++] = q->ids[i];
				else
					j->queued = false;
			}
			q->n = k;
			q->cur = 0;
		}
}

static void order_append(struct gf_ctl *ctl, int jid)
{
	if (ctl->jobs.jr[jid].in_order)
		return;
	gf__ids_push(&ctl->jobs.order, jid);
	ctl->jobs.jr[jid].in_order = true;
}

void gf__order_push(struct gf_ctl *ctl, int jid)
{
	if (!ctl->in_pass)
		order_append(ctl, jid);
}

void gf__order_sort_classes(struct gf_ctl *ctl)
{
	int n = ctl->cfg.nclasses;
	for (int i = 0; i < n; i++) {
		int k = i;
		while (k > 0 &&
		       ctl->cfg.classes[ctl->prio_order[k - 1]].priority <
			       ctl->cfg.classes[i].priority) {
			ctl->prio_order[k] = ctl->prio_order[k - 1];
			k--;
		}
		ctl->prio_order[k] = i;
	}
}

/* The min-heap of teams of one class (fair share). */
struct heap {
	int *team;
	int n;
	int cls;
};

/* Skip the queue's entries that are no longer PENDING. */
static bool queue_next(const struct gf__jobtab *jt, struct gf__queue *q)
{
	while (q->cur < q->n &&
	       jt->jr[q->ids[q->cur]].job->state != GF_JOB_PENDING)
		q->cur++;
	return q->cur < q->n;
}

/* Does team a go before team b? */
static bool before(const struct gf_ctl *ctl, int cls, int a, int b)
{
	const struct gf__team *x = &ctl->teams.t[a], *y = &ctl->teams.t[b];
	double sx = (double)x->run_milli / x->weight;
	double sy = (double)y->run_milli / y->weight;
	if (sx != sy)
		return sx < sy;
	uint64_t qa = seq_of(&ctl->jobs, x->q[cls].ids[x->q[cls].cur]);
	uint64_t qb = seq_of(&ctl->jobs, y->q[cls].ids[y->q[cls].cur]);
	if (qa != qb)
		return qa < qb;
	return a < b;
}

static void sift_down(const struct gf_ctl *ctl, struct heap *h, int i)
{
	for (;;) {
		int l = 2 * i + 1, r = l + 1, m = i;
		if (l < h->n && before(ctl, h->cls, h->team[l], h->team[m]))
			m = l;
		if (r < h->n && before(ctl, h->cls, h->team[r], h->team[m]))
			m = r;
		if (m == i)
			return;
		int t = h->team[i];
		h->team[i] = h->team[m];
		h->team[m] = t;
		i = m;
	}
}

/* Every team with a pending job of the class, heap-ordered. */
static void heap_build(struct gf_ctl *ctl, struct heap *h)
{
	h->n = 0;
	for (int t = 0; t < ctl->teams.n; t++)
		if (queue_next(&ctl->jobs, &ctl->teams.t[t].q[h->cls]))
			h->team[h->n++] = t;
	for (int i = h->n / 2 - 1; i >= 0; i--)
		sift_down(ctl, h, i);
}

static void walk_class(struct gf_ctl *ctl, struct gf__pass *ps, gf__visit_fn fn,
		       struct heap *h)
{
	for (int t = 0; t < ctl->teams.n; t++)
		ctl->teams.t[t].q[h->cls].cur = 0;
	heap_build(ctl, h);
	while (h->n > 0) {
		int t = h->team[0];
		struct gf__queue *q = &ctl->teams.t[t].q[h->cls];
		int jid = q->ids[q->cur++];
		ctl->heap_dirty = false;
		fn(ctl, ps, jid);
		if (ctl->jobs.jr[jid].job->state == GF_JOB_PENDING)
			order_append(ctl, jid);
		if (ctl->heap_dirty) {
			heap_build(ctl, h);
			continue;
		}
		if (queue_next(&ctl->jobs, q)) {
			sift_down(ctl, h, 0);
		} else {
			h->team[0] = h->team[--h->n];
			sift_down(ctl, h, 0);
		}
	}
}

void gf__order_walk(struct gf_ctl *ctl, struct gf__pass *ps, gf__visit_fn fn)
{
	for (int i = 0; i < ctl->jobs.order.n; i++)
		ctl->jobs.jr[ctl->jobs.order.v[i]].in_order = false;
	ctl->jobs.order.n = 0;
	ctl->in_pass = true;
	struct heap h = {
		.team = gf_calloc((size_t)ctl->teams.n + 1, sizeof(int)),
	};
	for (int k = 0; k < ctl->cfg.nclasses; k++) {
		h.cls = ctl->prio_order[k];
		walk_class(ctl, ps, fn, &h);
	}
	gf_free(h.team);
	ctl->in_pass = false;
	queue_compact(ctl);
}

int gf_ctl_queue(const struct gf_ctl *ctl, const struct gf_job **out, int max)
{
	int k = 0;
	for (int i = 0; i < ctl->jobs.order.n && k < max; i++) {
		const struct gf_job *j = ctl->jobs.jr[ctl->jobs.order.v[i]].job;
		if (j->state == GF_JOB_PENDING)
			out[k++] = j;
	}
	return ctl->jobs.npending;
}

int gf_ctl_pending_by(const struct gf_ctl *ctl, int class_idx, int team_idx,
		      int64_t *gpu_milli)
{
	int n = 0;
	int64_t milli = 0;
	if (class_idx < -1 || class_idx >= ctl->cfg.nclasses || team_idx < -1 ||
	    team_idx >= ctl->teams.n)
		return GF_EINVAL;
	for (int t = 0; t < ctl->teams.n; t++)
		for (int c = 0; c < ctl->cfg.nclasses; c++)
			if ((team_idx < 0 || t == team_idx) &&
			    (class_idx < 0 || c == class_idx)) {
				n += ctl->teams.t[t].pend_n[c];
				milli += ctl->teams.t[t].pend_milli[c];
			}
	if (gpu_milli)
		*gpu_milli = milli;
	return n;
}
