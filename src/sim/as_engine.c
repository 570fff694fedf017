/*
 * as_engine.c - the fleet simulation of `simulate autoscale`
 * (sim/autoscale.h states the service model).  Discrete events in
 * exact time: arrivals (from the trace, in order), completions and
 * replicas becoming ready (a binary heap), the policy's syncs and the
 * series' ticks (a fixed grid).  At equal times completions and ready
 * replicas come first, then arrivals, then a sync, then a tick.
 *
 * Invariants: a request is waiting (the FIFO ring) or holds a slot on
 * one replica (counted in its inflight) or is done; a ready replica with
 * a free slot is in the bucket of its load (bucket[inflight]), and no
 * other replica is in a bucket; ready + warming is the count the policy
 * sees; a replica's GPUs are counted from its start to its removal (a
 * draining one: to its last completion).  Decisions come from
 * core/scale, the same code as the live loop.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gpufleet/scale.h>

#include "sim/autoscale.h"
#include "util/mem.h"

enum { R_WARMING, R_READY, R_DRAINING, R_GONE };
enum { EV_DONE, EV_READY };

struct replica {
	double start_t, ready_t, pf_free, busy_since, busy_acc;
	double occ_since, occ_acc; /* in flight x seconds since a sync */
	int32_t inflight, prev, next;
	int state;
};

struct ev {
	double t;
	float hold; /* EV_DONE: the request's slot time */
	int32_t rep;
	int kind;
};

struct sim {
	const struct gf_as_trace *tr;
	const struct gf_as_sim_opts *o;
	enum gf_as_policy pol;
	int32_t B;
	struct replica *rep;
	size_t nrep, arep;
	int32_t *head; /* bucket heads by load, B of them */
	int32_t minb;
	size_t *q, qhead, qlen, qcap;
	struct ev *heap;
	size_t nheap, aheap;
	float *ttft;
	size_t done;
	int32_t ready, warming;
	int64_t running;
	double gpu_s, end_t, svc_mean;
	size_t ai, wi; /* next arrival; first arrival in the rate window */
	struct gf_hpa hpa;
	struct gf_warm_spec ws;
	double *left; /* scratch: warming replicas' remaining warm-up */
	size_t aleft;
	int32_t desired;
	int events, peak;
	struct gf_as_point *ser;
	size_t nser, aser;
};

/* ---- heap ------------------------------------------------------------ */

static void heap_push(struct sim *s, struct ev v)
{
	if (s->nheap == s->aheap) {
		s->aheap = s->aheap ? 2 * s->aheap : 1024;
		s->heap = gf_reallocarray(s->heap, s->aheap, sizeof(*s->heap));
	}
	size_t i = s->nheap++;
	while (i > 0) {
		size_t p = (i - 1) / 2;
		if (s->heap[p].t <= v.t)
			break;
		s->heap[i] = s->heap[p];
		i = p;
	}
	s->heap[i] = v;
}

static struct ev heap_pop(struct sim *s)
{
	struct ev top = s->heap[0], last = s->heap[--s->nheap];
	size_t i = 0, n = s->nheap;
	for (;;) {
		size_t c = 2 * i + 1;
		if (c >= n)
			break;
		if (c + 1 < n && s->heap[c + 1].t < s->heap[c].t)
			c++;
		if (last.t <= s->heap[c].t)
			break;
		s->heap[i] = s->heap[c];
		i = c;
	}
	if (n)
		s->heap[i] = last;
	return top;
}

/* ---- buckets: ready replicas with a free slot, by load --------------- */

static void bucket_add(struct sim *s, int32_t r)
{
	struct replica *x = &s->rep[r];
	int32_t b = x->inflight;
	x->prev = -1;
	x->next = s->head[b];
	if (x->next >= 0)
		s->rep[x->next].prev = r;
	s->head[b] = r;
	if (b < s->minb)
		s->minb = b;
}

static void bucket_del(struct sim *s, int32_t r)
{
	struct replica *x = &s->rep[r];
	if (x->prev >= 0)
		s->rep[x->prev].next = x->next;
	else
		s->head[x->inflight] = x->next;
	if (x->next >= 0)
		s->rep[x->next].prev = x->prev;
}

static int32_t pick(struct sim *s)
{
	while (s->minb < s->B && s->head[s->minb] < 0)
		s->minb++;
	return s->minb < s->B ? s->head[s->minb] : -1;
}

/* ---- series ---------------------------------------------------------- */

static struct gf_as_point *point(struct sim *s, double t)
{
	if (!s->o->series)
		return NULL;
	size_t k = (size_t)(t / s->o->tick_s);
	if (k >= s->aser) {
		size_t n = s->aser ? s->aser : 4096;
		while (n <= k)
			n *= 2;
		s->ser = gf_reallocarray(s->ser, n, sizeof(*s->ser));
		memset(s->ser + s->aser, 0, (n - s->aser) * sizeof(*s->ser));
		s->aser = n;
	}
	if (k >= s->nser)
		s->nser = k + 1;
	return &s->ser[k];
}

/* ---- requests -------------------------------------------------------- */

/* Before x's in-flight count changes at t: its request-seconds so far. */
static void occ_note(struct replica *x, double t)
{
	x->occ_acc += (double)x->inflight * (t - x->occ_since);
	x->occ_since = t;
}

static void admit(struct sim *s, size_t qi, int32_t r, double t)
{
	struct replica *x = &s->rep[r];
	const struct gf_as_req *q = &s->tr->r[qi];
	const struct gf_svc_model *m = &s->o->m;
	double start = t > x->pf_free ? t : x->pf_free;
	double first = start + (double)q->in / m->prefill_tps;
	x->pf_free = first;
	uint32_t out = q->out > 0 ? q->out : 1;
	double end = first + (double)(out - 1) / m->decode_tps;
	float ttft = (float)(first - q->t);
	s->ttft[qi] = ttft;
	struct gf_as_point *p = point(s, q->t);
	if (p && ttft > p->ttft_max)
		p->ttft_max = ttft;
	bucket_del(s, r);
	occ_note(x, t);
	if (x->inflight++ == 0)
		x->busy_since = t;
	if (x->inflight < s->B)
		bucket_add(s, r);
	s->running++;
	heap_push(s, (struct ev){ end, (float)(end - t), r, EV_DONE });
}

static void drain_queue(struct sim *s, double t)
{
	while (s->qlen > 0) {
		int32_t r = pick(s);
		if (r < 0)
			return;
		size_t qi = s->q[s->qhead];
		s->qhead = (s->qhead + 1) % s->qcap;
		s->qlen--;
		admit(s, qi, r, t);
	}
}

static void enqueue(struct sim *s, size_t qi)
{
	if (s->qlen == s->qcap) {
		size_t n = s->qcap ? 2 * s->qcap : 1024;
		size_t *q = gf_calloc(n, sizeof(*q));
		for (size_t i = 0; i < s->qlen; i++)
			q[i] = s->q[(s->qhead + i) % s->qcap];
		gf_free(s->q);
		s->q = q;
		s->qcap = n;
		s->qhead = 0;
	}
	s->q[(s->qhead + s->qlen++) % s->qcap] = qi;
}

static void arrival(struct sim *s, double t)
{
	size_t qi = s->ai++;
	struct gf_as_point *p = point(s, t);
	if (p)
		p->arrivals++;
	int32_t r = s->qlen == 0 ? pick(s) : -1;
	if (r >= 0)
		admit(s, qi, r, t);
	else
		enqueue(s, qi);
}

static void gone(struct sim *s, int32_t r, double t)
{
	s->rep[r].state = R_GONE;
	s->gpu_s += (t - s->rep[r].start_t) * s->o->m.gpus;
}

static void completion(struct sim *s, const struct ev *v)
{
	struct replica *x = &s->rep[v->rep];
	s->done++;
	s->end_t = v->t;
	s->running--;
	s->svc_mean += ((double)v->hold - s->svc_mean) / 256.0;
	if (x->state == R_READY && x->inflight < s->B)
		bucket_del(s, v->rep);
	occ_note(x, v->t);
	if (--x->inflight == 0)
		x->busy_acc += v->t - x->busy_since;
	if (x->state == R_READY)
		bucket_add(s, v->rep);
	else if (x->state == R_DRAINING && x->inflight == 0)
		gone(s, v->rep, v->t);
	drain_queue(s, v->t);
}

static void became_ready(struct sim *s, const struct ev *v)
{
	struct replica *x = &s->rep[v->rep];
	if (x->state != R_WARMING)
		return; /* removed while warming */
	x->state = R_READY;
	s->warming--;
	s->ready++;
	bucket_add(s, v->rep);
	drain_queue(s, v->t);
}

/* ---- the policy ------------------------------------------------------ */

static int32_t new_replica(struct sim *s, double t, double ready_t)
{
	if (s->nrep == s->arep) {
		s->arep = s->arep ? 2 * s->arep : 64;
		s->rep = gf_reallocarray(s->rep, s->arep, sizeof(*s->rep));
	}
	int32_t r = (int32_t)s->nrep++;
	s->rep[r] = (struct replica){ t, ready_t, 0,  0,  0,	    t,
				      0, 0,	  -1, -1, R_WARMING };
	s->warming++;
	heap_push(s, (struct ev){ ready_t, 0, r, EV_READY });
	return r;
}

/* Which replicas go, in order.  Kubernetes' ReplicaSet deletes not-ready
 * pods first, then the ones ready for the shortest time; the
 * warm-up-aware actuator takes ready replicas only, idlest first (as a
 * controller.kubernetes.io/pod-deletion-cost annotation would). */
static int cmp_victim(const struct replica *x, const struct replica *y,
		      bool warm)
{
	if (!warm && (x->state == R_WARMING) != (y->state == R_WARMING))
		return x->state == R_WARMING ? -1 : 1;
	if (warm && x->inflight != y->inflight)
		return x->inflight < y->inflight ? -1 : 1;
	if (x->ready_t != y->ready_t)
		return x->ready_t > y->ready_t ? -1 : 1;
	return x < y ? 1 : -1;
}

static void remove_replicas(struct sim *s, int32_t k, double t)
{
	bool warm = s->pol == GF_ASP_WARM;
	for (; k > 0; k--) {
		int32_t best = -1;
		for (size_t i = 0; i < s->nrep; i++) {
			struct replica *x = &s->rep[i];
			if (x->state != R_READY &&
			    (warm || x->state != R_WARMING))
				continue;
			if (best < 0 || cmp_victim(x, &s->rep[best], warm) < 0)
				best = (int32_t)i;
		}
		if (best < 0)
			return;
		struct replica *x = &s->rep[best];
		if (x->state == R_WARMING) {
			s->warming--;
			gone(s, best, t);
			continue;
		}
		s->ready--;
		if (x->inflight < s->B)
			bucket_del(s, best);
		if (x->inflight == 0)
			gone(s, best, t);
		else
			x->state = R_DRAINING;
	}
}

/* Over the last sync, summed over the ready replicas, in percent: DCGM's
 * duty cycle (the share of the period a replica had a request in
 * flight), or with `occ` the occupancy (requests in flight over
 * max_batch, time-averaged, as a scrape averaged by rate() reads; a
 * replica ready for part of the sync counts its requests over the whole
 * period).  Resets every replica's counters. */
static double ready_sum(struct sim *s, double t, bool occ)
{
	double sum = 0;
	for (size_t i = 0; i < s->nrep; i++) {
		struct replica *x = &s->rep[i];
		if (x->state == R_GONE)
			continue;
		occ_note(x, t);
		double b =
			x->busy_acc + (x->inflight > 0 ? t - x->busy_since : 0);
		if (x->state == R_READY)
			sum += 100.0 * (occ ? x->occ_acc / s->B : b) /
			       s->o->sync_s;
		x->busy_acc = 0;
		x->occ_acc = 0;
		if (x->inflight > 0)
			x->busy_since = t;
	}
	return sum;
}

static double arrival_rate(struct sim *s, double t)
{
	double w = s->o->rate_window_s;
	while (s->wi < s->ai && s->tr->r[s->wi].t <= t - w)
		s->wi++;
	double span = t < w ? t : w;
	return span > 0 ? (double)(s->ai - s->wi) / span : 0;
}

static int32_t decide(struct sim *s, double t, int32_t cur, int *rc)
{
	int64_t now = llround(t * 1000.0);
	struct gf_hpa_input in = { now, cur, cur, s->ready, true, 0 };
	struct gf_hpa_output out;
	double qd = (double)s->qlen;
	if (s->o->qmetric == GF_AS_Q_OUTSTANDING)
		qd += (double)s->running;
	double rate = arrival_rate(s, t);
	switch (s->pol) {
	case GF_ASP_FIXED:
	case GF_ASP_STATIC:
		return cur;
	case GF_ASP_UTIL:
		in.usage_milli = llround(ready_sum(s, t, false) * 1000.0);
		*rc = gf_hpa_sync(&s->hpa, &in, &out);
		return out.replicas;
	case GF_ASP_OCC:
		in.usage_milli = llround(ready_sum(s, t, true) * 1000.0);
		*rc = gf_hpa_sync(&s->hpa, &in, &out);
		return out.replicas;
	case GF_ASP_QUEUE_LEGACY:
	case GF_ASP_QUEUE:
		in.usage_milli = llround(qd * 1000.0);
		*rc = gf_hpa_sync(&s->hpa, &in, &out);
		return out.replicas;
	default:
		break;
	}
	if ((size_t)s->warming > s->aleft) {
		s->aleft = (size_t)s->warming * 2;
		s->left = gf_reallocarray(s->left, s->aleft, sizeof(*s->left));
	}
	int32_t nw = 0;
	for (size_t i = 0; i < s->nrep && nw < s->warming; i++)
		if (s->rep[i].state == R_WARMING)
			s->left[nw++] = s->rep[i].ready_t - t;
	struct gf_warm_input wi = {
		s->ready,	    nw,	  s->left,    (double)s->qlen,
		(double)s->running, rate, s->svc_mean
	};
	*rc = gf_warm_sync(&s->hpa, &s->ws, &wi, &in, &out);
	return out.replicas;
}

static int control(struct sim *s, double t)
{
	int32_t cur = s->ready + s->warming;
	int rc = 0;
	int32_t want = decide(s, t, cur, &rc);
	if (rc)
		return rc;
	if (want > cur) {
		for (int32_t i = cur; i < want; i++)
			new_replica(s, t, t + s->o->m.warmup_s);
	} else if (want < cur) {
		remove_replicas(s, cur - want, t);
	}
	if (want != cur)
		s->events++;
	if (want > s->peak)
		s->peak = want;
	s->desired = want;
	return 0;
}

static void tick(struct sim *s, double t)
{
	struct gf_as_point *p = point(s, t);
	if (!p)
		return;
	p->waiting = (float)s->qlen;
	p->running = (float)s->running;
	p->ready = (float)s->ready;
	p->warming = (float)s->warming;
	p->desired = (float)s->desired;
}

/* ---- sizes, options, statistics -------------------------------------- */

void gf_svc_model_default(struct gf_svc_model *m)
{
	m->prefill_tps = 10000;
	m->decode_tps = 62;
	m->max_batch = 8;
	m->warmup_s = 120;
	m->gpus = 1;
}

void gf_as_sim_opts_default(struct gf_as_sim_opts *o)
{
	memset(o, 0, sizeof(*o));
	gf_svc_model_default(&o->m);
	o->qmetric = GF_AS_Q_OUTSTANDING;
	o->util_target = 70;
	o->occ_target = 75;
	o->min_replicas = 1;
	o->slo_s = 1.0;
	o->sync_s = 15;
	o->tick_s = 1;
	o->rate_window_s = 60;
	o->occupancy = 0.75;
	o->drain_s = 60;
}

static double queue_target(const struct gf_as_sim_opts *o)
{
	if (o->queue_target > 0)
		return o->queue_target;
	if (o->qmetric == GF_AS_Q_OUTSTANDING)
		return o->occupancy * o->m.max_batch;
	return o->m.max_batch / 4 > 1 ? o->m.max_batch / 4 : 1;
}

static double slot_time(const struct gf_svc_model *m, const struct gf_as_req *r)
{
	uint32_t out = r->out > 0 ? r->out : 1;
	return (double)r->in / m->prefill_tps +
	       (double)(out - 1) / m->decode_tps;
}

/* Replicas for `rate` requests/s at the target occupancy. */
static int32_t sized(const struct gf_as_sim_opts *o, double rate, double svc)
{
	double n = ceil(rate * svc / (o->m.max_batch * o->occupancy));
	if (n < o->min_replicas)
		n = o->min_replicas;
	return n < 1 ? 1 : n > 1e6 ? 1000000 : (int32_t)n;
}

int32_t gf_as_busiest_size(const struct gf_as_trace *t,
			   const struct gf_as_sim_opts *o)
{
	double svc = 0;
	size_t busiest = 0, cnt = 0;
	long minute = -1;
	for (size_t i = 0; i < t->n; i++) {
		svc += slot_time(&o->m, &t->r[i]);
		long m = (long)floor(t->r[i].t / 60.0);
		if (m != minute) {
			minute = m;
			cnt = 0;
		}
		cnt++;
		if (cnt > busiest)
			busiest = cnt;
	}
	svc = t->n ? svc / (double)t->n : 0;
	return sized(o, (double)busiest / 60.0, svc);
}

void gf_as_sim_sizes(const struct gf_as_trace *t,
		     const struct gf_as_sim_opts *o, int32_t *start,
		     int32_t *fixed, int32_t *max, int32_t *prev_sized)
{
	*prev_sized = o->prev ? gf_as_busiest_size(o->prev, o) : 0;
	*fixed = o->fixed_replicas > 0 ? o->fixed_replicas
				       : gf_as_busiest_size(t, o);
	*start = o->start_replicas > 0 ? o->start_replicas
		 : o->prev	       ? *prev_sized
				       : o->min_replicas;
	int32_t m = 4 * (*prev_sized > *start ? *prev_sized : *start);
	*max = o->max_replicas > 0 ? o->max_replicas : (m > 32 ? m : 32);
	if (*start > *max)
		*start = *max;
}

const char *gf_as_policy_name(enum gf_as_policy p)
{
	static const char *names[] = { "util",	"queue-legacy", "queue", "warm",
				       "fixed", "occupancy",	"static" };
	return (unsigned)p < GF_ASP_COUNT ? names[p] : "?";
}

int gf_as_policy_parse(const char *s)
{
	for (int i = 0; i < GF_ASP_COUNT; i++)
		if (!strcmp(s, gf_as_policy_name((enum gf_as_policy)i)))
			return i;
	return -1;
}

/* The k-th smallest (0-based) of a[0..n), reordering a (Hoare). */
static float select_k(float *a, size_t n, size_t k)
{
	size_t lo = 0, hi = n - 1;
	while (lo < hi) {
		float pivot = a[lo + (hi - lo) / 2];
		size_t i = lo, j = hi;
		while (i <= j) {
			while (a[i] < pivot)
				i++;
			while (a[j] > pivot)
				j--;
			if (i <= j) {
				float x = a[i];
				a[i] = a[j];
				a[j] = x;
				i++;
				if (j == 0)
					break;
				j--;
			}
		}
		if (k <= j)
			hi = j;
		else if (k >= i)
			lo = i;
		else
			return a[k];
	}
	return a[k];
}

/* Nearest rank: the value at rank ceil(p n). */
static double percentile(float *a, size_t n, double p)
{
	size_t rank = (size_t)ceil(p * (double)n);
	if (rank < 1)
		rank = 1;
	return select_k(a, n, rank - 1);
}

static void stats(struct sim *s, struct gf_as_result *r)
{
	size_t n = s->tr->n;
	double sum = 0;
	size_t over = 0;
	for (size_t i = 0; i < n; i++) {
		sum += s->ttft[i];
		if (s->ttft[i] > s->o->slo_s)
			over++;
	}
	r->requests = n;
	r->mean = sum / (double)n;
	r->over_slo = (double)over / (double)n;
	r->p50 = percentile(s->ttft, n, 0.50);
	r->p95 = percentile(s->ttft, n, 0.95);
	r->p99 = percentile(s->ttft, n, 0.99);
}

/* ---- the run --------------------------------------------------------- */

static int check_opts(const struct gf_as_sim_opts *o, struct gf_err *e)
{
	const struct gf_svc_model *m = &o->m;
	if (!(m->prefill_tps > 0) || !(m->decode_tps > 0) || m->max_batch < 1 ||
	    !(m->warmup_s >= 0) || m->gpus < 1 || !isfinite(m->prefill_tps) ||
	    !isfinite(m->decode_tps) || !isfinite(m->warmup_s))
		return gf_err_set(e, GF_EINVAL,
				  "the service model needs prefill and decode "
				  "rates > 0, a batch >= 1, a warm-up >= 0 and "
				  "GPUs >= 1");
	if (o->min_replicas < 1 || o->max_replicas < 0 ||
	    (o->max_replicas && o->max_replicas < o->min_replicas))
		return gf_err_set(e, GF_EINVAL,
				  "replicas: expected 1 <= min <= max");
	if (!(o->sync_s > 0) || !(o->tick_s > 0) || !(o->slo_s > 0) ||
	    !(o->util_target > 0) || !(o->occ_target > 0) ||
	    !(o->rate_window_s > 0) || !(o->occupancy > 0) ||
	    o->occupancy > 1 || !(o->drain_s > 0) || o->queue_target < 0)
		return gf_err_set(e, GF_EINVAL,
				  "sync, tick, SLO, targets, window and drain "
				  "must be > 0, the occupancy at most 1");
	return 0;
}

static int setup(struct sim *s, enum gf_as_policy p, struct gf_as_result *r,
		 struct gf_err *e)
{
	const struct gf_as_sim_opts *o = s->o;
	int32_t start, fixed, max, prev_sized;
	gf_as_sim_sizes(s->tr, o, &start, &fixed, &max, &prev_sized);
	if (p == GF_ASP_STATIC && !o->prev)
		return gf_err_set(
			e, GF_EINVAL,
			"the static policy needs a previous window to "
			"size from (--windows)");
	r->start = p == GF_ASP_FIXED	? fixed
		   : p == GF_ASP_STATIC ? prev_sized
					: start;
	r->fixed = fixed;
	r->max = max;
	r->prev_sized = prev_sized;
	r->queue_target = queue_target(o);
	s->B = o->m.max_batch;
	s->head = gf_calloc((size_t)s->B, sizeof(*s->head));
	for (int32_t b = 0; b < s->B; b++)
		s->head[b] = -1;
	s->minb = s->B;
	s->ttft = gf_calloc(s->tr->n, sizeof(*s->ttft));
	struct gf_as_req typical = { 0, 1024, 128 };
	s->svc_mean = slot_time(&o->m, &typical);
	struct gf_hpa_spec hs;
	gf_hpa_spec_init(&hs);
	hs.min_replicas = o->min_replicas;
	hs.max_replicas = max;
	hs.behavior = p != GF_ASP_QUEUE_LEGACY;
	hs.target_milli = llround((p == GF_ASP_UTIL  ? o->util_target
				   : p == GF_ASP_OCC ? o->occ_target
						     : r->queue_target) *
				  1000.0);
	s->ws = (struct gf_warm_spec){ o->m.warmup_s, s->B,
				       o->qmetric == GF_AS_Q_OUTSTANDING
					       ? fmin(1.0,
						      r->queue_target / s->B)
					       : o->occupancy,
				       o->drain_s };
	int rc = gf_hpa_init(&s->hpa, &hs, e);
	if (rc)
		return rc;
	for (int32_t i = 0; i < r->start; i++) {
		int32_t k = new_replica(s, 0, 0);
		s->rep[k].start_t = 0;
	}
	s->desired = s->peak = r->start;
	return 0;
}

static void release(struct sim *s)
{
	gf_hpa_release(&s->hpa);
	gf_free(s->rep);
	gf_free(s->head);
	gf_free(s->q);
	gf_free(s->heap);
	gf_free(s->ttft);
	gf_free(s->left);
}

/* The event loop; 0 or a decision's error. */
static int run(struct sim *s)
{
	const struct gf_as_trace *tr = s->tr;
	size_t jsync = 0, ktick = 0;
	for (;;) {
		if (s->done == tr->n && s->ai == tr->n)
			return 0;
		double te = s->nheap ? s->heap[0].t : INFINITY;
		double ta = s->ai < tr->n ? tr->r[s->ai].t : INFINITY;
		double tsync = (double)jsync * s->o->sync_s;
		double ttick = (double)ktick * s->o->tick_s;
		double tc = tsync < ttick ? tsync : ttick;
		if (te <= ta && te <= tc) {
			struct ev v = heap_pop(s);
			if (v.kind == EV_DONE)
				completion(s, &v);
			else
				became_ready(s, &v);
		} else if (ta <= tc) {
			arrival(s, ta);
		} else if (tsync <= ttick) {
			int rc = control(s, tsync);
			if (rc)
				return rc;
			jsync++;
		} else {
			tick(s, ttick);
			ktick++;
		}
	}
}

int gf_as_simulate(const struct gf_as_trace *t, enum gf_as_policy p,
		   const struct gf_as_sim_opts *o, struct gf_as_result *r,
		   struct gf_err *e)
{
	memset(r, 0, sizeof(*r));
	r->policy = p;
	if ((unsigned)p >= GF_ASP_COUNT)
		return gf_err_set(e, GF_EINVAL, "unknown policy %d", (int)p);
	if (t->n == 0)
		return gf_err_set(e, GF_EINVAL, "the trace has no requests");
	int rc = check_opts(o, e);
	if (rc)
		return rc;
	struct sim s;
	memset(&s, 0, sizeof(s));
	s.tr = t;
	s.o = o;
	s.pol = p;
	rc = setup(&s, p, r, e);
	if (rc == 0) {
		rc = run(&s);
		if (rc)
			gf_err_set(e, rc, "a decision failed");
	}
	if (rc == 0) {
		for (size_t i = 0; i < s.nrep; i++)
			if (s.rep[i].state != R_GONE)
				gone(&s, (int32_t)i, s.end_t);
		stats(&s, r);
		r->gpu_hours = s.gpu_s / 3600.0;
		r->scale_events = s.events;
		r->peak_replicas = s.peak;
		r->end_s = s.end_t;
		r->series = s.ser;
		r->nseries = s.nser;
		s.ser = NULL;
	}
	gf_free(s.ser);
	release(&s);
	return rc;
}

void gf_as_result_release(struct gf_as_result *r)
{
	gf_free(r->series);
	r->nseries = 0;
}
