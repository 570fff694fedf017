/*
 * replay.c - a trace played on a virtual clock through the controller's
 * scheduling core (ctl.h), as `gpufleet serve` drives it: each arrival
 * admitted and added as a submitted job, each end reported as a finish,
 * each deletion as a cancel, and one gf_ctl_schedule pass per instant.
 * The core decides everything; this file says when, and counts.
 *
 * The clock.  Time jumps from one instant to the next at which something
 * happens: a run's end (start + its duration, known once the core starts
 * it), a deletion from the trace, an arrival, or the follow-up pass a
 * tick after a pass that preempted.  At one instant, in this order: the
 * runs that end (gf_ctl_finish, exit 0), the deletions (gf_ctl_cancel),
 * the arrivals in trace order (gf_ctl_admit, then gf_ctl_add; refused
 * ones end there), then one pass; then the state is recorded.  Between
 * instants nothing changes, so the GPU allocated integrates exactly.
 *
 * Invariants (gf_replay_check): a job arrives at most once and ends at
 * most once; its fate agrees with the two; an end event of an attempt the
 * core has put back (preempted) is stale and ignored; a run is open iff
 * the job is RUNNING in the core, so the GPU time summed over the jobs'
 * runs equals the engine's allocated GPU integrated over time.
 */
#include "sim/replay.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "util/clock.h"
#include "util/fmt.h"
#include "util/mem.h"

#define PROGRESS_EVERY 4096

void gf_replay_config(struct gf_ctl_config *cfg, enum gf_policy policy,
		      uint64_t seed)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->policy = policy;
	cfg->seed = seed;
	cfg->open_teams = true;
	cfg->nblocks = 1;
	gf_note(cfg->blocks[0], GF_NODE_NAME_MAX, "default");
	static const struct {
		const char *name;
		int priority;
		bool preemptible;
	} cls[] = { { "inference", 20, false },
		    { "training", 10, false },
		    { "batch", 0, true } };
	for (int i = 0; i < 3; i++) {
		gf_note(cfg->classes[i].name, GF_CLASS_NAME_MAX, "%s",
			cls[i].name);
		cfg->classes[i].priority = cls[i].priority;
		cfg->classes[i].preemptible = cls[i].preemptible;
	}
	cfg->nclasses = 3;
}

/* ---- the run's state ---- */

struct end_ev {
	int64_t t;
	int32_t job;
	int32_t attempt;
};

/* A record of the state after one instant. */
struct rec {
	int64_t t, alloc, pending_milli;
	double frag;
	int pending, running;
};

struct run {
	const struct gf_replay_trace *t;
	const struct gf_replay_opts *o;
	struct gf_replay_result *r;
	struct gf_ctl *ctl;
	const struct gf_job **jp; /* the core's job, per trace job */
	int *seq_job;		  /* trace job of a seq (1..) */
	int *att;		  /* attempt of the open run */
	int64_t *run_start;	  /* -1: no open run */
	struct end_ev *heap;
	int nheap, capheap;
	struct rec *recs;
	int nrecs, caprecs;
	int seq;
	bool preempted; /* in the last pass */
};

static bool ev_less(const struct end_ev *a, const struct end_ev *b)
{
	return a->t < b->t || (a->t == b->t && a->job < b->job);
}

static void heap_push(struct run *x, struct end_ev ev)
{
	if (x->nheap == x->capheap) {
		x->capheap = x->capheap ? 2 * x->capheap : 1024;
		x->heap = gf_reallocarray(x->heap, (size_t)x->capheap,
					  sizeof(*x->heap));
	}
	int i = x->nheap++;
	while (i > 0 && ev_less(&ev, &x->heap[(i - 1) / 2])) {
		x->heap[i] = x->heap[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	x->heap[i] = ev;
}

static struct end_ev heap_pop(struct run *x)
{
	struct end_ev top = x->heap[0], last = x->heap[--x->nheap];
	int i = 0;
	for (;;) {
		int c = 2 * i + 1;
		if (c >= x->nheap)
			break;
		if (c + 1 < x->nheap && ev_less(&x->heap[c + 1], &x->heap[c]))
			c++;
		if (!ev_less(&x->heap[c], &last))
			break;
		x->heap[i] = x->heap[c];
		i = c;
	}
	if (x->nheap > 0)
		x->heap[i] = last;
	return top;
}

/* Milli-GPU a job holds while it runs, all replicas. */
static int64_t job_milli(const struct gf_replay_job *j)
{
	int64_t per = j->gpus > 0 ? (int64_t)j->gpus * 1000 : j->gpu_milli;
	return per * (j->replicas > 0 ? j->replicas : 1);
}

static void close_run(struct run *x, int j, int64_t now)
{
	int64_t d = now - x->run_start[j];
	x->r->run_ms[j] += d;
	x->r->gpu_milli_ms_jobs += d * job_milli(&x->t->jobs[j]);
	x->run_start[j] = -1;
}

static void end_job(struct run *x, int j, enum gf_replay_fate f, int64_t now)
{
	struct gf_replay_result *r = x->r;
	r->fate[j] = (uint8_t)f;
	r->ends[j]++;
	r->end_at_ms[j] = now;
}

static void log_start(struct run *x, int j, const struct gf_job *job,
		      int64_t now)
{
	struct gf_replay_result *r = x->r;
	for (int k = 0; k < job->spec.replicas; k++) {
		if (r->nlog == r->caplog) {
			r->caplog = r->caplog ? 2 * r->caplog : 1024;
			r->log = gf_reallocarray(r->log, (size_t)r->caplog,
						 sizeof(*r->log));
		}
		struct gf_replay_start *s = &r->log[r->nlog++];
		const struct gf_job_place *p = &job->place[k];
		memset(s, 0, sizeof(*s));
		s->job = j;
		s->t_ms = now;
		s->replica = k;
		s->node = p->node;
		s->ngpus = p->ngpus;
		for (int g = 0; g < p->ngpus && g < GF_CNODE_MAX_GPUS; g++)
			s->gpus[g] = p->gpus[g]; /* the rest stays 0 */
	}
}

/* A job the last pass (or call) changed: close and open its runs. */
static void changed(struct run *x, int j, int64_t now)
{
	struct gf_replay_result *r = x->r;
	const struct gf_job *job = x->jp[j];
	bool was = r->fate[j] == GF_REPLAY_RUNNING;
	bool is = job->state == GF_JOB_RUNNING;
	if (was && (!is || job->attempts != x->att[j])) {
		close_run(x, j, now);
		r->fate[j] = GF_REPLAY_QUEUED;
		if (job->state == GF_JOB_PENDING || is) {
			r->preemptions++;
			x->preempted = true;
		}
	}
	if (is && r->fate[j] != GF_REPLAY_RUNNING) {
		const struct gf_replay_job *tj = &x->t->jobs[j];
		r->fate[j] = GF_REPLAY_RUNNING;
		x->att[j] = job->attempts;
		x->run_start[j] = now;
		if (r->first_start_ms[j] < 0) {
			r->first_start_ms[j] = now;
			r->started++;
		}
		if (tj->duration_ms > 0)
			heap_push(x, (struct end_ev){ now + tj->duration_ms, j,
						      job->attempts });
		/* a max runtime under the run: a pass when it is reached (the
		 * core fails the job then); attempt -1 ends nothing */
		int64_t max_ms = job->spec.max_runtime_s * 1000;
		if (max_ms > 0 && max_ms < tj->duration_ms)
			heap_push(x, (struct end_ev){ now + max_ms, j, -1 });
		if (x->o->keep_log)
			log_start(x, j, job, now);
	}
	if (gf_job_is_final(job->state) && r->ends[j] == 0) {
		if (job->state == GF_JOB_FAILED) {
			r->failed++;
			end_job(x, j, GF_REPLAY_FAILED, now);
		} else { /* not by this file's calls: count it as ended */
			r->completed++;
			end_job(x, j, GF_REPLAY_COMPLETED, now);
		}
	}
}

static int job_of_id(const struct run *x, const char *id)
{
	long s = strtol(id + 1, NULL, 10);
	return s >= 1 && s <= x->seq ? x->seq_job[s] : -1;
}

static void pass(struct run *x, int64_t now)
{
	struct gf_ctl_changes ch = { 0 };
	x->preempted = false;
	(void)!gf_ctl_schedule(x->ctl, GF_REPLAY_EPOCH_MS + now, &ch);
	x->r->passes++;
	for (int i = 0; i < ch.n; i++) {
		int j = job_of_id(x, ch.ids[i]);
		if (j >= 0)
			changed(x, j, now);
	}
	gf_ctl_changes_release(&ch);
}

/* splitmix64: the noisy estimates' draws, a pure function of the seed
 * and the job (the same for every policy). */
static uint64_t mix64(uint64_t z)
{
	z += UINT64_C(0x9e3779b97f4a7c15);
	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	return z ^ (z >> 31);
}

/* |Z|, Z standard normal (Box-Muller), drawn from (seed, job). */
static double half_normal(uint64_t seed, int job)
{
	uint64_t a = mix64(seed ^ mix64((uint64_t)job + 1));
	uint64_t b = mix64(a);
	double u1 = ((double)(a >> 11) + 1.0) / 9007199254740993.0; /* (0,1] */
	double u2 = (double)(b >> 11) / 9007199254740992.0;
	return fabs(sqrt(-2.0 * log(u1)) * cos(2.0 * M_PI * u2));
}

/* The max runtime job idx states (replay.h: enum gf_replay_est), s. */
static int64_t estimate_s(const struct gf_replay_job *j, int idx,
			  const struct gf_replay_opts *o)
{
	if (!o->estimates)
		return 0;
	double ms;
	switch (o->est) {
	case GF_REPLAY_EST_REQUESTED:
		ms = (double)j->requested_ms;
		break;
	case GF_REPLAY_EST_NOISY: {
		double sg = o->est_sigma > 0 ? o->est_sigma
					     : GF_REPLAY_SIGMA_DEFAULT;
		ms = (double)j->duration_ms *
		     exp(sg * half_normal(o->est_seed, idx));
		break;
	}
	default:
		ms = (double)j->duration_ms;
	}
	if (!(ms > 0))
		return 0;
	double sec = ceil(ms / 1000.0);
	return sec > (double)GF_JOB_RUNTIME_MAX_S ? GF_JOB_RUNTIME_MAX_S
						  : (int64_t)sec;
}

static void spec_of(const struct gf_replay_trace *t, int idx,
		    const struct gf_replay_opts *o, struct gf_job_spec *s)
{
	const struct gf_replay_job *j = &t->jobs[idx];
	memset(s, 0, sizeof(*s));
	gf_note(s->name, sizeof(s->name), "job-%d", idx);
	gf_note(s->team, sizeof(s->team), "%s",
		j->team < t->nteams ? t->teams[j->team] : "default");
	gf_note(s->class_name, sizeof(s->class_name), "%s",
		j->cls < t->nclasses ? t->classes[j->cls] : "batch");
	s->replicas = j->replicas > 0 ? j->replicas : 1;
	s->gpus = j->gpus;
	s->gpu_milli = j->gpus > 0 ? 0 : j->gpu_milli;
	if (j->model >= 0 && j->model < t->nmodels)
		gf_note(s->gpu_model, sizeof(s->gpu_model), "%s",
			t->models[j->model]);
	s->cpu_milli = j->cpu_milli;
	s->memory_mib = j->memory_mib;
	if (j->duration_ms > 0)
		s->max_runtime_s = estimate_s(j, idx, o);
	if (o->partition_by_team)
		gf_note(s->node_selector, sizeof(s->node_selector), "vc=%s",
			s->team);
}

static void arrive(struct run *x, int j, int64_t now)
{
	struct gf_replay_result *r = x->r;
	struct gf_err e;
	gf_err_clear(&e);
	r->arrivals[j]++;
	r->arrived++;
	struct gf_job *job = gf_calloc(1, sizeof(*job));
	spec_of(x->t, j, x->o, &job->spec);
	if (gf_ctl_admit(x->ctl, &job->spec, &e) != 0) {
		gf_free(job);
		r->refused++;
		end_job(x, j, GF_REPLAY_REFUSED, now);
		return;
	}
	job->seq = (uint64_t)++x->seq;
	gf_note(job->id, sizeof(job->id), "j%d", x->seq);
	job->state = GF_JOB_PENDING;
	job->submitted_ms = GF_REPLAY_EPOCH_MS + now;
	job->block = -1;
	if (gf_ctl_add(x->ctl, job, &e) != 0) { /* too many teams */
		x->seq--;
		gf_job_release(job);
		gf_free(job);
		r->refused++;
		end_job(x, j, GF_REPLAY_REFUSED, now);
		return;
	}
	x->seq_job[x->seq] = j;
	x->jp[j] = gf_ctl_job(x->ctl, job->id);
	r->fate[j] = GF_REPLAY_QUEUED;
}

/* The run of job j is over (ev), or the trace deletes it (ev NULL). */
static void leave(struct run *x, int j, const struct end_ev *ev, int64_t now)
{
	struct gf_replay_result *r = x->r;
	if (r->arrivals[j] == 0 || r->ends[j] != 0)
		return;
	bool running = r->fate[j] == GF_REPLAY_RUNNING;
	if (ev && (!running || ev->attempt != x->att[j]))
		return; /* stale: that attempt was put back */
	const char *id = x->jp[j]->id;
	if (ev)
		(void)!gf_ctl_finish(x->ctl, id, 0, GF_REPLAY_EPOCH_MS + now,
				     NULL);
	else
		(void)!gf_ctl_cancel(x->ctl, id, GF_REPLAY_EPOCH_MS + now,
				     NULL);
	if (running) {
		close_run(x, j, now);
		r->completed++;
		end_job(x, j, GF_REPLAY_COMPLETED, now);
	} else {
		r->deleted++;
		end_job(x, j, GF_REPLAY_DELETED, now);
	}
}

static void record(struct run *x, int64_t now)
{
	struct gf_ctl_stats st;
	gf_ctl_stats(x->ctl, &st);
	int64_t pm = 0;
	gf_ctl_pending_by(x->ctl, -1, -1, &pm);
	if (x->nrecs > 0 && x->recs[x->nrecs - 1].t == now)
		x->nrecs--; /* the same instant again: keep the last */
	if (x->nrecs == x->caprecs) {
		x->caprecs = x->caprecs ? 2 * x->caprecs : 4096;
		x->recs = gf_reallocarray(x->recs, (size_t)x->caprecs,
					  sizeof(*x->recs));
	}
	if (x->r->capacity_milli > 0 &&
	    (double)st.gpus_alloc_milli / (double)x->r->capacity_milli >
		    x->r->peak_alloc)
		x->r->peak_alloc = (double)st.gpus_alloc_milli /
				   (double)x->r->capacity_milli;
	x->recs[x->nrecs++] = (struct rec){ .t = now,
					    .alloc = st.gpus_alloc_milli,
					    .pending_milli = pm,
					    .frag = st.frag_milli,
					    .pending = st.pending,
					    .running = st.running };
}

/* ---- orders ---- */

static const struct gf_replay_trace *sort_t;

static int by_arrival(const void *a, const void *b)
{
	int i = *(const int *)a, j = *(const int *)b;
	int64_t x = sort_t->jobs[i].arrival_ms, y = sort_t->jobs[j].arrival_ms;
	return x < y ? -1 : x > y ? 1 : (i > j) - (i < j);
}

static int by_delete(const void *a, const void *b)
{
	int i = *(const int *)a, j = *(const int *)b;
	int64_t x = sort_t->jobs[i].delete_ms, y = sort_t->jobs[j].delete_ms;
	return x < y ? -1 : x > y ? 1 : (i > j) - (i < j);
}

/* ---- results ---- */

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* Nearest rank: the smallest value with at least p of the sample at or
 * below it. */
static double rank(const double *v, int n, double p)
{
	int k = (int)ceil(p * n) - 1;
	return v[k < 0 ? 0 : k >= n ? n - 1 : k];
}

static void dist(double *v, int n, struct gf_replay_dist *d)
{
	memset(d, 0, sizeof(*d));
	d->n = n;
	if (n == 0)
		return;
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	double sum = 0;
	for (int i = 0; i < n; i++)
		sum += v[i];
	d->mean = sum / n;
	d->p50 = rank(v, n, 0.50);
	d->p95 = rank(v, n, 0.95);
	d->p99 = rank(v, n, 0.99);
	d->max = v[n - 1];
}

static double frag_ratio(const struct rec *c, int64_t cap)
{
	int64_t idle = cap - c->alloc;
	return idle > 0 ? c->frag / (double)idle : 0;
}

/* The time-weighted means over [sp->from_ms, sp->to_ms] (the state
 * after each instant holds until the next; a span of no length: the
 * state at its instant). */
static void span_means(const struct run *x, struct gf_replay_span *sp)
{
	int64_t cap = x->r->capacity_milli, lo = sp->from_ms, hi = sp->to_ms;
	double a = 0, f = 0, p = 0;
	const struct rec *at = NULL; /* the last record at or before lo */
	for (int i = 0; i < x->nrecs; i++) {
		const struct rec *c = &x->recs[i];
		if (c->t <= lo)
			at = c;
		int64_t s = c->t > lo ? c->t : lo;
		int64_t e = i + 1 < x->nrecs ? x->recs[i + 1].t : x->r->end_ms;
		if (e > hi)
			e = hi;
		if (e <= s)
			continue;
		double dt = (double)(e - s);
		a += dt * (double)c->alloc;
		f += dt * frag_ratio(c, cap);
		p += dt * (double)c->pending_milli;
	}
	if (hi > lo) {
		double span = (double)(hi - lo);
		sp->mean_alloc = cap > 0 ? a / span / (double)cap : 0;
		sp->mean_frag = f / span;
		sp->mean_pending_gpus = p / span / 1000.0;
	} else if (at) {
		sp->mean_alloc = cap > 0 ? (double)at->alloc / (double)cap : 0;
		sp->mean_frag = frag_ratio(at, cap);
		sp->mean_pending_gpus = (double)at->pending_milli / 1000.0;
	}
}

/* The queueing delays of the jobs that first started in [lo, hi]. */
static void span_wait(const struct run *x, struct gf_replay_span *sp,
		      bool lo_open, double *v)
{
	const struct gf_replay_result *r = x->r;
	int n = 0;
	for (int j = 0; j < x->t->n; j++) {
		int64_t s = r->first_start_ms[j];
		if (s < 0 || s > sp->to_ms || s < sp->from_ms ||
		    (lo_open && s == sp->from_ms))
			continue;
		v[n++] = (double)(s - x->t->jobs[j].arrival_ms) / 1e3;
	}
	sp->started = n;
	dist(v, n, &sp->wait);
}

/* The arrival window, the tail after it, and the figures over one of
 * them or the whole run (o->whole_run). */
static void windows(struct run *x, double *v)
{
	struct gf_replay_result *r = x->r;
	const struct gf_replay_trace *t = x->t;
	int64_t first = -1, last = -1;
	for (int j = 0; j < t->n; j++) {
		if (!r->arrivals[j])
			continue;
		int64_t at = t->jobs[j].arrival_ms;
		if (first < 0 || at < first)
			first = at;
		if (at > last)
			last = at;
	}
	if (first < 0)
		first = last = 0;
	r->window.from_ms = first;
	r->window.to_ms = last;
	r->tail.from_ms = last;
	r->tail.to_ms = r->end_ms > last ? r->end_ms : last;
	span_means(x, &r->window);
	span_wait(x, &r->window, false, v);
	span_means(x, &r->tail);
	span_wait(x, &r->tail, true, v);
	struct gf_replay_span all = { .from_ms = 0, .to_ms = r->end_ms };
	span_wait(x, &all, false, v); /* every job that started */
	const struct gf_replay_span *use = &r->window;
	if (x->o->whole_run) {
		span_means(x, &all);
		use = &all;
	}
	r->mean_alloc = use->mean_alloc;
	r->mean_frag = use->mean_frag;
	r->mean_pending_gpus = use->mean_pending_gpus;
	r->wait = all.wait;
}

static void summarise(struct run *x)
{
	struct gf_replay_result *r = x->r;
	const struct gf_replay_trace *t = x->t;
	double *v = gf_calloc((size_t)(t->n > 0 ? t->n : 1), sizeof(*v));
	windows(x, v);
	int n = 0;
	for (int j = 0; j < t->n; j++)
		if (r->fate[j] == GF_REPLAY_COMPLETED)
			v[n++] = (double)(r->end_at_ms[j] -
					  t->jobs[j].arrival_ms) /
				 1e3;
	dist(v, n, &r->jct);
	gf_free(v);
	for (int j = 0; j < t->n; j++) {
		r->running_end += r->fate[j] == GF_REPLAY_RUNNING;
		r->queued_end += r->fate[j] == GF_REPLAY_QUEUED;
	}
	int64_t cap = r->capacity_milli;
	/* the series: points evenly spaced over [0, end] */
	int np = x->o->points > 0 ? x->o->points : 400;
	if (r->end_ms == 0)
		np = 1;
	r->points = gf_calloc((size_t)np, sizeof(*r->points));
	r->npoints = np;
	for (int k = 0, i = -1; k < np; k++) {
		int64_t tk = np > 1 ? r->end_ms * k / (np - 1) : r->end_ms;
		while (i + 1 < x->nrecs && x->recs[i + 1].t <= tk)
			i++;
		struct gf_replay_point *pt = &r->points[k];
		pt->t_ms = tk;
		if (i < 0)
			continue;
		const struct rec *c = &x->recs[i];
		pt->alloc = cap > 0 ? (double)c->alloc / (double)cap : 0;
		pt->frag = frag_ratio(c, cap);
		pt->pending_milli = c->pending_milli;
		pt->pending = c->pending;
		pt->running = c->running;
	}
}

/* A heap copy of c0's nodes (empty), models and topologies. */
static struct gf_cluster *copy_cluster(const struct gf_cluster *c0,
				       struct gf_err *e)
{
	struct gf_cluster *c = gf_calloc(1, sizeof(*c));
	gf_cluster_init(c);
	for (int m = 0; m < c0->nmodels; m++)
		if (gf_cluster_model(c, c0->models[m]) < 0) {
			gf_cluster_release(c);
			gf_free(c);
			gf_err_set(e, GF_EINVAL, "cannot copy model '%s'",
				   c0->models[m]);
			return NULL;
		}
	for (int i = 0; i < c0->n; i++) {
		const struct gf_cnode *n = &c0->nodes[i];
		int rc = gf_cluster_add(c, c0->names[i], n->cpu_cap, n->mem_cap,
					n->ngpus, n->model);
		if (rc >= 0 && n->topo > 0)
			rc = gf_cluster_set_topo(c, i, &c0->topos[n->topo - 1]);
		if (rc < 0) {
			gf_cluster_release(c);
			gf_free(c);
			gf_err_set(e, GF_EINVAL, "cannot copy node '%s': %s",
				   c0->names[i], gf_strerror(rc));
			return NULL;
		}
	}
	return c;
}

static void result_alloc(struct gf_replay_result *r, int n)
{
	size_t m = (size_t)(n > 0 ? n : 1);
	r->fate = gf_calloc(m, 1);
	r->arrivals = gf_calloc(m, 1);
	r->ends = gf_calloc(m, 1);
	r->first_start_ms = gf_malloc(m * sizeof(int64_t));
	r->end_at_ms = gf_malloc(m * sizeof(int64_t));
	r->run_ms = gf_calloc(m, sizeof(int64_t));
	for (int j = 0; j < n; j++)
		r->first_start_ms[j] = r->end_at_ms[j] = -1;
}

int gf_replay_run(const struct gf_ctl_config *cfg, const struct gf_cluster *c0,
		  const struct gf_ctl_node *nodes,
		  const struct gf_replay_trace *t,
		  const struct gf_replay_opts *o, struct gf_replay_result *r,
		  struct gf_err *e)
{
	static const struct gf_replay_opts defaults = { 0 };
	double t0 = gf_clock_s();
	memset(r, 0, sizeof(*r));
	if (o == NULL)
		o = &defaults;
	struct gf_cluster *c = copy_cluster(c0, e);
	if (c == NULL)
		return GF_EINVAL;
	int64_t cap = c->gpu_milli_total;
	struct gf_ctl *ctl;
	int rc = gf_ctl_new(cfg, c, nodes, &ctl, e);
	if (rc != 0) {
		gf_cluster_release(c);
		gf_free(c);
		return rc;
	}
	r->policy = cfg->policy;
	r->seed = cfg->seed;
	r->jobs = t->n;
	r->capacity_milli = cap;
	result_alloc(r, t->n);
	size_t m = (size_t)(t->n > 0 ? t->n : 1);
	struct run x = { .t = t, .o = o, .r = r, .ctl = ctl };
	x.jp = gf_calloc(m, sizeof(*x.jp));
	x.seq_job = gf_calloc(m + 1, sizeof(*x.seq_job));
	x.att = gf_calloc(m, sizeof(*x.att));
	x.run_start = gf_malloc(m * sizeof(*x.run_start));
	int *arr = gf_malloc(m * sizeof(*arr)),
	    *del = gf_malloc(m * sizeof(*del));
	int ndel = 0;
	for (int j = 0; j < t->n; j++) {
		x.run_start[j] = -1;
		arr[j] = j;
		if (t->jobs[j].delete_ms > 0)
			del[ndel++] = j;
	}
	sort_t = t; /* qsort has no argument: one run sorts at a time */
	qsort(arr, (size_t)t->n, sizeof(*arr), by_arrival);
	qsort(del, (size_t)ndel, sizeof(*del), by_delete);
	int ai = 0, di = 0;
	int64_t tick = o->tick_ms > 0 ? o->tick_ms : 100, tick_at = -1;
	int64_t last = 0, last_alloc = 0;
	for (;;) {
		int64_t now = INT64_MAX;
		if (x.nheap > 0)
			now = x.heap[0].t;
		if (di < ndel && t->jobs[del[di]].delete_ms < now)
			now = t->jobs[del[di]].delete_ms;
		if (ai < t->n && t->jobs[arr[ai]].arrival_ms < now)
			now = t->jobs[arr[ai]].arrival_ms;
		if (tick_at >= 0 && tick_at < now)
			now = tick_at;
		if (now == INT64_MAX || (o->until_ms > 0 && now > o->until_ms))
			break;
		r->gpu_milli_ms_engine += last_alloc * (now - last);
		last = now;
		while (x.nheap > 0 && x.heap[0].t == now) {
			struct end_ev ev = heap_pop(&x);
			leave(&x, ev.job, &ev, now);
		}
		while (di < ndel && t->jobs[del[di]].delete_ms == now)
			leave(&x, del[di++], NULL, now);
		int before = ai;
		while (ai < t->n && t->jobs[arr[ai]].arrival_ms == now)
			arrive(&x, arr[ai++], now);
		if (tick_at == now)
			tick_at = -1;
		pass(&x, now);
		if (x.preempted && tick_at < 0)
			tick_at = now + tick;
		record(&x, now);
		last_alloc = x.recs[x.nrecs - 1].alloc;
		r->end_ms = now;
		if (o->progress &&
		    ai / PROGRESS_EVERY != before / PROGRESS_EVERY)
			o->progress(o->arg, ai, t->n);
	}
	for (int j = 0; j < t->n; j++) /* runs still going: up to the end */
		if (x.run_start[j] >= 0)
			close_run(&x, j, r->end_ms);
	summarise(&x);
	if (o->progress)
		o->progress(o->arg, ai, t->n);
	gf_free(arr);
	gf_free(del);
	gf_free(x.jp);
	gf_free(x.seq_job);
	gf_free(x.att);
	gf_free(x.run_start);
	gf_free(x.heap);
	gf_free(x.recs);
	gf_ctl_free(ctl);
	r->wall_s = gf_clock_s() - t0;
	return 0;
}

int gf_replay_vc_cluster(char (*names)[GF_NODE_NAME_MAX], const int *count,
			 int n, int gpus, const char *model,
			 struct gf_cluster *c, struct gf_ctl_config *cfg,
			 struct gf_ctl_node **nodes_out, struct gf_err *e)
{
	int m = gf_cluster_model(c, model);
	if (m < 0)
		return gf_err_set(e, GF_EINVAL, "cannot add model '%s'", model);
	int total = 0;
	for (int v = 0; v < n; v++)
		total += count[v] > 0 ? count[v] : 0;
	struct gf_ctl_node *nodes = NULL;
	int rc = 0;
	if (nodes_out)
		nodes = gf_calloc((size_t)(c->n + total + 1), sizeof(*nodes));
	for (int v = 0; v < n; v++) {
		if (cfg->nteams >= GF_CTL_MAX_TEAMS) {
			rc = gf_err_set(e, GF_ETOOBIG, "more than %d VCs",
					GF_CTL_MAX_TEAMS);
			goto fail;
		}
		struct gf_ctl_team *t = &cfg->teams[cfg->nteams++];
		if (gf_fmt(t->name, sizeof(t->name), "%s", names[v])) {
			rc = gf_err_set(e, GF_ETOOBIG,
					"VC '%.40s...' longer than %zu bytes",
					names[v], sizeof(t->name) - 1);
			goto fail;
		}
		t->weight = count[v];
		for (int k = 0; k < count[v]; k++) {
			char name[GF_NODE_NAME_MAX];
			/* cannot fail: 30 + 1 + a count fit */
			(void)!gf_fmt(name, sizeof(name), "%.30s-%03d",
				      names[v], k);
			int i = gf_cluster_add(c, name, 64000, 524288, gpus, m);
			if (i < 0) {
				rc = gf_err_set(e, GF_ETOOBIG,
						"more than %d nodes",
						GF_MAX_CNODES);
				goto fail;
			}
			if (nodes &&
			    gf_fmt(nodes[i].labels, sizeof(nodes[i].labels),
				   "vc=%s", names[v])) {
				rc = gf_err_set(e, GF_ETOOBIG,
						"VC '%.40s...': label too long",
						names[v]);
				goto fail;
			}
		}
	}
	if (nodes_out)
		*nodes_out = nodes;
	return 0;
fail:
	gf_free(nodes);
	return rc;
}

void gf_replay_result_release(struct gf_replay_result *r)
{
	gf_free(r->points);
	gf_free(r->fate);
	gf_free(r->arrivals);
	gf_free(r->ends);
	gf_free(r->first_start_ms);
	gf_free(r->end_at_ms);
	gf_free(r->run_ms);
	gf_free(r->log);
	memset(r, 0, sizeof(*r));
}

int gf_replay_check(const struct gf_replay_trace *t,
		    const struct gf_replay_result *r, char *msg, unsigned size)
{
	int count[GF_REPLAY_FAILED + 1] = { 0 };
	int arrived = 0;
	for (int j = 0; j < t->n; j++) {
		int a = r->arrivals[j], en = r->ends[j], f = r->fate[j];
		bool final = f == GF_REPLAY_REFUSED ||
			     f == GF_REPLAY_COMPLETED ||
			     f == GF_REPLAY_DELETED || f == GF_REPLAY_FAILED;
		if (f < 0 || f > GF_REPLAY_FAILED) {
			gf_note(msg, size, "job %d has no fate (%d)", j, f);
			return GF_EINVAL;
		}
		const char *bad = NULL;
		if (a > 1 || en > 1)
			bad = "arrived or ended more than once";
		else if (f == GF_REPLAY_NOT_ARRIVED && (a || en))
			bad = "not arrived, yet counted";
		else if (f != GF_REPLAY_NOT_ARRIVED && a != 1)
			bad = "has a fate without its arrival";
		else if (final != (en == 1))
			bad = "has a fate that disagrees with its end";
		else if (r->first_start_ms[j] >= 0 &&
			 r->first_start_ms[j] < t->jobs[j].arrival_ms)
			bad = "started before it arrived";
		else if (en && r->end_at_ms[j] < t->jobs[j].arrival_ms)
			bad = "ended before it arrived";
		if (bad) {
			gf_note(msg, size, "job %d (line %d) %s", j,
				(int)t->jobs[j].line, bad);
			return GF_EINVAL;
		}
		arrived += a;
		count[f]++;
	}
	if (arrived != r->arrived || count[GF_REPLAY_REFUSED] != r->refused ||
	    count[GF_REPLAY_COMPLETED] != r->completed ||
	    count[GF_REPLAY_DELETED] != r->deleted ||
	    count[GF_REPLAY_FAILED] != r->failed ||
	    count[GF_REPLAY_RUNNING] != r->running_end ||
	    count[GF_REPLAY_QUEUED] != r->queued_end) {
		gf_note(msg, size,
			"counts disagree with the jobs' fates (arrived %d/%d, "
			"completed %d/%d, queued %d/%d)",
			r->arrived, arrived, r->completed,
			count[GF_REPLAY_COMPLETED], r->queued_end,
			count[GF_REPLAY_QUEUED]);
		return GF_EINVAL;
	}
	if (r->refused + r->completed + r->deleted + r->failed +
		    r->running_end + r->queued_end !=
	    r->arrived) {
		gf_note(msg, size, "arrived %d, accounted %d", r->arrived,
			r->refused + r->completed + r->deleted + r->failed +
				r->running_end + r->queued_end);
		return GF_EINVAL;
	}
	if (r->gpu_milli_ms_engine != r->gpu_milli_ms_jobs) {
		gf_note(msg, size,
			"GPU time: the engine allocated %lld milli-GPU ms, "
			"the jobs' runs sum to %lld",
			(long long)r->gpu_milli_ms_engine,
			(long long)r->gpu_milli_ms_jobs);
		return GF_EINVAL;
	}
	return 0;
}
