/*
 * history.c - every job's runs as the API shows them (issue 21): the runs
 * that ended, as their nodes reported them (kept in memory from the
 * store's runs table when leading, and from each report as it comes),
 * and the replicas that run now or are still completing (from the core's
 * job: ended null).  Where a run ran (its GPUs, their UUIDs, its MIG
 * instance's: gf__agents_where) is taken from its placement and the
 * node's inventory when its end is reported.  A feature: it loads the
 * stored runs when leading and takes each turn's reported runs from the
 * batch (its step: agents.c adds them while applying the reports, before
 * the features' steps).
 *
 * Invariants: one kept run per (seq, attempt, replica) (a second is
 * ignored: the first report stands, as in the store); runs of a job are
 * kept in the order they came; the table is indexed by seq (dense, as
 * the agents' per-job table is).  Under ctl_lock: the scheduler thread
 * adds, handlers read.
 */
#include <stdlib.h>
#include <string.h>

#include "controller/jobjson.h"
#include "controller/service_impl.h"
#include "util/fmt.h"
#include "util/mem.h"

/* One ended run, compactly (strings owned; NULL for ""). */
struct hrun {
	int attempt, replica, exit_code;
	uint16_t mask;	  /* bit g: GPU g */
	int8_t mig_start; /* -1 none */
	int64_t started_ms, ended_ms;
	char *node, *reason, *uuids, *mig;
};

struct hjob {
	struct hrun *v;
	int n, cap;
};

struct gf_history {
	struct hjob *by_seq;
	size_t cap;
};

static char *dup_or_null(const char *s)
{
	return s && s[0] ? gf_strdup(s) : NULL;
}

static void hist_free(void *arg)
{
	struct gf_service *s = arg;
	struct gf_history *h = s->hist;
	if (!h)
		return;
	for (size_t i = 0; i < h->cap; i++) {
		struct hjob *x = &h->by_seq[i];
		for (int k = 0; k < x->n; k++) {
			gf_free(x->v[k].node);
			gf_free(x->v[k].reason);
			gf_free(x->v[k].uuids);
			gf_free(x->v[k].mig);
		}
		gf_free(x->v);
	}
	gf_free(h->by_seq);
	gf_free(h);
	s->hist = NULL;
}

static int take_run(const struct gf_job_run *r, void *arg)
{
	gf__history_add(arg, r);
	return 0;
}

/* Leading: the stored runs (a second lead adds none twice). */
static int hist_load(void *arg, struct gf_err *e)
{
	struct gf_service *s = arg;
	return gf_store_load_runs(s->store, take_run, s->hist, e);
}

/* The runs the turn's reports brought (agents.c puts them in b). */
static void hist_step(void *arg, int64_t now, struct gf_batch *b)
{
	struct gf_service *s = arg;
	(void)now;
	for (int k = 0; k < b->nruns; k++)
		gf__history_add(s->hist, &b->runs[k]);
}

int gf__history_register(struct gf_service *s)
{
	s->hist = gf_calloc(1, sizeof(*s->hist));
	struct gf_feature f = {
		.name = "history",
		.arg = s,
		.load = hist_load,
		.step = hist_step,
		.free = hist_free,
	};
	int rc = gf__service_register(s, &f);
	if (rc)
		hist_free(s);
	return rc;
}

static const struct hjob *hjob_of(const struct gf_history *h, uint64_t seq)
{
	return h && seq < h->cap ? &h->by_seq[seq] : NULL;
}

void gf__history_add(struct gf_history *h, const struct gf_job_run *r)
{
	if (!h || r->seq == 0 || r->seq > (uint64_t)SIZE_MAX / 2)
		return;
	h->by_seq = gf_grow(h->by_seq, sizeof(*h->by_seq), &h->cap,
			    (size_t)r->seq, 1024);
	struct hjob *x = &h->by_seq[r->seq];
	for (int k = 0; k < x->n; k++)
		if (x->v[k].attempt == r->attempt &&
		    x->v[k].replica == r->replica)
			return; /* the first report stands */
	if (x->n == x->cap) {
		x->cap = x->cap ? 2 * x->cap : 2;
		x->v = gf_reallocarray(x->v, (size_t)x->cap, sizeof(*x->v));
	}
	struct hrun *o = &x->v[x->n++];
	*o = (struct hrun){
		.attempt = r->attempt,
		.replica = r->replica,
		.exit_code = r->exit_code,
		.mig_start = (int8_t)(r->mig_start >= 0 && r->mig_start < 64
					      ? r->mig_start
					      : -1),
		.started_ms = r->started_ms,
		.ended_ms = r->ended_ms,
		.node = gf_strdup(r->node),
		.reason = dup_or_null(r->reason),
		.uuids = dup_or_null(r->gpu_uuids),
		.mig = dup_or_null(r->mig_uuid)
	};
	for (int g = 0; g < r->ngpus; g++)
		if (r->gpus[g] >= 0 && r->gpus[g] < GF_CNODE_MAX_GPUS)
			o->mask |= (uint16_t)(1u << r->gpus[g]);
}

bool gf__history_ran_on(const struct gf_history *h, uint64_t seq,
			const char *node)
{
	const struct hjob *x = hjob_of(h, seq);
	for (int k = 0; x && k < x->n; k++)
		if (!strcmp(x->v[k].node, node))
			return true;
	return false;
}

/* Is (attempt, replica) among the ended runs? */
static bool ended(const struct hjob *x, int attempt, int replica)
{
	for (int k = 0; x && k < x->n; k++)
		if (x->v[k].attempt == attempt && x->v[k].replica == replica)
			return true;
	return false;
}

static struct gf_job_run *push(struct gf_job_run **v, int *n, int *cap)
{
	if (*n == *cap) {
		*cap = *cap ? 2 * *cap : 4;
		*v = gf_reallocarray(*v, (size_t)*cap, sizeof(**v));
	}
	struct gf_job_run *r = &(*v)[(*n)++];
	memset(r, 0, sizeof(*r));
	return r;
}

/* A replica not ended: running now, or completing (why). */
static void open_run(const struct gf_service *s, const struct gf_job *j,
		     int attempt, int replica, const struct gf_job_place *p,
		     const char *why, struct gf_job_run *r)
{
	r->seq = j->seq;
	r->attempt = attempt;
	r->replica = replica;
	r->mig_start = -1;
	gf_note(r->node, sizeof(r->node), "%s", p->node_name);
	/* started_ms is the last run's start: an earlier one's is not
	 * known until its node reports its end */
	r->started_ms = attempt == j->attempts ? j->started_ms : 0;
	gf_note(r->reason, sizeof(r->reason), "%s", why);
	if (s->ag)
		gf__agents_where(s->ag, j, p, r);
}

static int by_run(const void *a, const void *b)
{
	const struct gf_job_run *x = a, *y = b;
	if (x->attempt != y->attempt)
		return x->attempt < y->attempt ? -1 : 1;
	return (x->replica > y->replica) - (x->replica < y->replica);
}

int gf__history_runs(const struct gf_service *s, const struct gf_job *j,
		     struct gf_job_run **out)
{
	const struct hjob *x = hjob_of(s->hist, j->seq);
	struct gf_job_run *v = NULL;
	int n = 0, cap = 0;
	for (int k = 0; x && k < x->n; k++) {
		const struct hrun *h = &x->v[k];
		struct gf_job_run *r = push(&v, &n, &cap);
		r->seq = j->seq;
		r->attempt = h->attempt;
		r->replica = h->replica;
		r->exit_code = h->exit_code;
		r->mig_start = h->mig_start;
		r->started_ms = h->started_ms;
		r->ended_ms = h->ended_ms;
		gf_note(r->node, sizeof(r->node), "%s", h->node);
		gf_note(r->reason, sizeof(r->reason), "%s",
			h->reason ? h->reason : "");
		gf_note(r->gpu_uuids, sizeof(r->gpu_uuids), "%s",
			h->uuids ? h->uuids : "");
		gf_note(r->mig_uuid, sizeof(r->mig_uuid), "%s",
			h->mig ? h->mig : "");
		for (int g = 0; g < GF_CNODE_MAX_GPUS; g++)
			if (h->mask & (1u << g))
				r->gpus[r->ngpus++] = g;
	}
	for (int k = 0; k < j->nheld; k++) {
		const struct gf_job_held *h = &j->held[k];
		if (!ended(x, h->attempt, h->replica))
			open_run(s, j, h->attempt, h->replica, &h->place,
				 h->why, push(&v, &n, &cap));
	}
	for (int r = 0; j->place && r < j->spec.replicas; r++)
		if (!ended(x, j->attempts, r))
			open_run(s, j, j->attempts, r, &j->place[r], "",
				 push(&v, &n, &cap));
	if (n > 1)
		qsort(v, (size_t)n, sizeof(*v), by_run);
	*out = v;
	return n;
}

void gf__history_job_json(struct gf_json *j, const struct gf_service *s,
			  const struct gf_job *job)
{
	struct gf_job_run *runs = NULL;
	int n = gf__history_runs(s, job, &runs);
	gf_jobjson_write(j, NULL, job, gf_ctl_config(s->ctl), runs, n);
	gf_free(runs);
}
