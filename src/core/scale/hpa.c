/*
 * hpa.c - one HorizontalPodAutoscaler's decisions, as Kubernetes'
 * controller takes them (pkg/controller/podautoscaler/horizontal.go and
 * replica_calculator.go; the reference's A1), for one External metric.
 *
 * State: the recommendations (the controller's a.recommendations[key]),
 * and, with behavior, the scale-up and scale-down events.  The same
 * slot-reuse rules as the Go code: a recommendation replaces the last
 * stored one that is out of every window (legacy: older than the
 * cutoff), else is appended; an event replaces the last one older than
 * the direction's longest policy period (marked outdated then), else is
 * appended.  Arithmetic in doubles where Go's is float64, truncation
 * where Go converts float64 to int32, so ties and rounding match.
 *
 * Invariants (gf_hpa_check): counts within their allocations; stored
 * events have positive changes; recommendations are >= 0.
 */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <gpufleet/scale.h>

#include "core/scale/scale_impl.h"
#include "util/fmt.h"
#include "util/mem.h"

/* Go's time.Time Before/After on our millisecond stamps. */
static bool before(int64_t t, int64_t cutoff)
{
	return t < cutoff;
}

static bool after(int64_t t, int64_t cutoff)
{
	return t > cutoff;
}

/* Go's int32(float64) as amd64 does it, without C's undefined cases:
 * NaN and values out of range saturate (NaN to INT32_MIN). */
static int32_t clamp32(double v)
{
	if (isnan(v))
		return INT32_MIN;
	if (v >= (double)INT32_MAX)
		return INT32_MAX;
	if (v <= (double)INT32_MIN)
		return INT32_MIN;
	return (int32_t)v;
}

int gf_hpa_init(struct gf_hpa *h, const struct gf_hpa_spec *spec,
		struct gf_err *e)
{
	memset(h, 0, sizeof(*h));
	h->spec = *spec;
	int rc = gf_hpa_spec_finish(&h->spec, e);
	if (rc)
		memset(h, 0, sizeof(*h));
	return rc;
}

void gf_hpa_release(struct gf_hpa *h)
{
	gf_free(h->recs);
	gf_free(h->ups);
	gf_free(h->downs);
	memset(h, 0, sizeof(*h));
}

int gf_hpa_check(const struct gf_hpa *h, char *msg, size_t size)
{
	if (h->nrecs > h->arecs || h->nups > h->aups || h->ndowns > h->adowns) {
		gf_note(msg, size, "hpa: a count past its allocation");
		return -1;
	}
	for (size_t i = 0; i < h->nrecs; i++)
		if (h->recs[i].replicas < 0) {
			gf_note(msg, size, "hpa: recommendation %zu is %d", i,
				h->recs[i].replicas);
			return -1;
		}
	for (size_t i = 0; i < h->nups + h->ndowns; i++) {
		const struct gf_hpa_event *ev =
			i < h->nups ? &h->ups[i] : &h->downs[i - h->nups];
		if (ev->change <= 0) {
			gf_note(msg, size, "hpa: a scale event of %d",
				ev->change);
			return -1;
		}
	}
	if (!h->spec.finished) {
		gf_note(msg, size, "hpa: spec not finished");
		return -1;
	}
	return 0;
}

static void push_rec(struct gf_hpa *h, int32_t r, int64_t t)
{
	if (h->nrecs == h->arecs) {
		h->arecs = h->arecs ? 2 * h->arecs : 16;
		h->recs = gf_reallocarray(h->recs, h->arecs, sizeof(*h->recs));
	}
	h->recs[h->nrecs++] = (struct gf_hpa_rec){ r, t };
}

/* isWithin: (1 - down) <= ratio <= (1 + up); NaN is never within. */
static bool within(const struct gf_hpa_spec *s, double ratio)
{
	double up = s->behavior ? s->up.tolerance : s->tolerance;
	double down = s->behavior ? s->down.tolerance : s->tolerance;
	return (1.0 - down) <= ratio && ratio <= (1.0 + up);
}

/* One metric as computeReplicasForMetric sees it. */
struct metric_view {
	enum gf_hpa_metric_kind kind;
	enum gf_hpa_target_type target;
	double target_milli;
	double usage;
};

/* GetExternalPerPodMetricReplicas / GetExternalMetricReplicas. */
static int32_t proposal_external(const struct gf_hpa_spec *s,
				 const struct metric_view *m,
				 const struct gf_hpa_input *in)
{
	double usage = m->usage;
	double target = m->target_milli;
	if (m->target == GF_HPA_AVERAGE_VALUE) {
		/* GetExternalPerPodMetricReplicas(statusReplicas, ...) */
		int32_t n = in->status_replicas;
		/* n == 0: float64 division gives +Inf (or NaN for 0/0),
		 * never within the tolerance */
		double ratio = n ? usage / (target * (double)n)
				 : (usage > 0 ? INFINITY : NAN);
		if (within(s, ratio))
			return n;
		return clamp32(ceil(usage / target));
	}
	/* GetExternalMetricReplicas(specReplicas, ...) */
	double ratio = usage / target;
	if (in->spec_replicas != 0) {
		if (within(s, ratio))
			return in->spec_replicas;
		return clamp32(ceil(ratio * (double)in->ready_replicas));
	}
	return clamp32(ceil(ratio));
}

/* The per-pod average as the controller takes it: Go's integer division
 * of the milli total (GetMetricUsageRatio), or whole percents for a
 * utilization (GetResourceUtilizationRatio's int32 truncation). */
static double pod_avg(enum gf_hpa_metric_kind kind, double sum, double n)
{
	return kind == GF_HPA_UTILIZATION ? floor(sum / n / 1000.0) * 1000.0
					  : floor(sum / n);
}

/* calcPlainMetricReplicas and GetResourceReplicas over counts: the
 * average is over the ready pods that report; unready pods count as 0
 * on a scale-up; missing pods count as the target on a scale-down
 * (a utilization: max(100 %, target)) and 0 on a scale-up (a
 * utilization at ratio 1 leaves them out).  false: no ready pod
 * reports (an invalid metric). */
static bool proposal_per_pod(const struct gf_hpa_spec *s,
			     const struct metric_view *m,
			     const struct gf_hpa_input *in,
			     const struct gf_hpa_more *mo, int32_t *p)
{
	int32_t cur = in->spec_replicas;
	int32_t ready = in->ready_replicas;
	int32_t unready = mo ? mo->unready_replicas : 0;
	int32_t missing = mo ? mo->missing_replicas : 0;
	if (ready <= 0)
		return false;
	double target = m->target_milli;
	double ratio = pod_avg(m->kind, m->usage, (double)ready) / target;
	bool up_unready = unready > 0 && ratio > 1.0;
	if (!up_unready && missing == 0) {
		*p = within(s, ratio) ? cur
				      : clamp32(ceil(ratio * (double)ready));
		return true;
	}
	bool util = m->kind == GF_HPA_UTILIZATION;
	double n = (double)ready + (up_unready ? (double)unready : 0.0);
	double sum = m->usage;
	if (missing > 0 && ratio < 1.0) {
		n += (double)missing;
		sum += (double)missing *
		       (util ? fmax(100000.0, target) : target);
	} else if (missing > 0 && (ratio > 1.0 || !util)) {
		n += (double)missing; /* at 0 */
	}
	double nratio = pod_avg(m->kind, sum, n) / target;
	if (within(s, nratio) || (ratio > 1.0 && nratio < 1.0) ||
	    (ratio < 1.0 && nratio > 1.0)) {
		*p = cur;
		return true;
	}
	int32_t r = clamp32(ceil(nratio * n));
	if ((nratio < 1.0 && r > cur) || (nratio > 1.0 && r < cur))
		r = cur;
	*p = r;
	return true;
}

/* metric i of the spec with its usage at this sync; false when unread */
static bool metric_at(const struct gf_hpa_spec *s, int i,
		      const struct gf_hpa_input *in,
		      const struct gf_hpa_more *mo, struct metric_view *m)
{
	if (i == 0) {
		*m = (struct metric_view){ s->kind, s->target,
					   (double)s->target_milli,
					   (double)in->usage_milli };
		return in->metric_ok;
	}
	const struct gf_hpa_metric *sm = &s->more[i - 1];
	if (!mo || !mo->ok[i - 1])
		return false;
	*m = (struct metric_view){ sm->kind, sm->target,
				   (double)sm->target_milli,
				   (double)mo->usage_milli[i - 1] };
	return true;
}

/* computeReplicasForMetrics: the largest proposal of the valid metrics;
 * false when none is valid, or one is invalid and the largest would
 * scale down. */
static bool proposal(const struct gf_hpa_spec *s, const struct gf_hpa_input *in,
		     const struct gf_hpa_more *mo, int32_t *best)
{
	int invalid = 0;
	*best = 0;
	for (int i = 0; i <= s->nmore; i++) {
		struct metric_view m;
		int32_t p = 0;
		bool ok = metric_at(s, i, in, mo, &m);
		if (ok && m.kind != GF_HPA_EXTERNAL)
			ok = proposal_per_pod(s, &m, in, mo, &p);
		else if (ok)
			p = proposal_external(s, &m, in);
		if (!ok) {
			invalid++;
			continue;
		}
		if (*best == 0 || p > *best)
			*best = p;
	}
	return invalid <= s->nmore &&
	       !(invalid > 0 && *best < in->spec_replicas);
}

/* stabilizeRecommendation (legacy): max over recommendations not older
 * than the window; replaces the last old one or appends. */
static int32_t stabilize_legacy(struct gf_hpa *h, int64_t now, int32_t prop)
{
	int32_t best = prop;
	int64_t cutoff = now - (int64_t)h->spec.downscale_window_s * 1000;
	bool old = false;
	size_t oldi = 0;
	for (size_t i = 0; i < h->nrecs; i++) {
		if (before(h->recs[i].t_ms, cutoff)) {
			old = true;
			oldi = i;
		} else if (h->recs[i].replicas > best) {
			best = h->recs[i].replicas;
		}
	}
	if (old)
		h->recs[oldi] = (struct gf_hpa_rec){ prop, now };
	else
		push_rec(h, prop, now);
	return best;
}

/* convertDesiredReplicasWithRules: [min, min(max, max(2 cur, 4))]. */
static int32_t rules_legacy(const struct gf_hpa_spec *s, int32_t cur,
			    int32_t desired)
{
	int32_t limit = clamp32(fmax(2.0 * (double)cur, 4.0));
	int32_t maxa = s->max_replicas > limit ? limit : s->max_replicas;
	if (desired < s->min_replicas)
		return s->min_replicas;
	if (desired > maxa)
		return maxa;
	return desired;
}

/* stabilizeRecommendationWithBehaviors */
static int32_t stabilize_behavior(struct gf_hpa *h, int64_t now, int32_t cur,
				  int32_t prop)
{
	int64_t upc = now - (int64_t)h->spec.up.window_s * 1000;
	int64_t downc = now - (int64_t)h->spec.down.window_s * 1000;
	int32_t uprec = prop, downrec = prop;
	bool old = false;
	size_t oldi = 0;
	for (size_t i = 0; i < h->nrecs; i++) {
		const struct gf_hpa_rec *r = &h->recs[i];
		if (after(r->t_ms, upc) && r->replicas < uprec)
			uprec = r->replicas;
		if (after(r->t_ms, downc) && r->replicas > downrec)
			downrec = r->replicas;
		if (before(r->t_ms, upc) && before(r->t_ms, downc)) {
			old = true;
			oldi = i;
		}
	}
	int32_t rec = cur;
	if (rec < uprec)
		rec = uprec;
	if (rec > downrec)
		rec = downrec;
	if (old)
		h->recs[oldi] = (struct gf_hpa_rec){ prop, now };
	else
		push_rec(h, prop, now);
	return rec;
}

/* getReplicasChangePerPeriod */
static int32_t change_in(const struct gf_hpa_event *ev, size_t n, int64_t now,
			 int32_t period_s)
{
	int64_t cutoff = now - (int64_t)period_s * 1000;
	int64_t sum = 0;
	for (size_t i = 0; i < n; i++)
		if (after(ev[i].t_ms, cutoff))
			sum += ev[i].change;
	return sum > INT32_MAX ? INT32_MAX : (int32_t)sum;
}

/* calculateScaleUpLimitWithScalingRules and
 * calculateScaleDownLimitWithBehaviors */
static int32_t rate_limit(const struct gf_hpa *h, int64_t now, int32_t cur,
			  bool up)
{
	const struct gf_hpa_rules *r = up ? &h->spec.up : &h->spec.down;
	if (r->select == GF_HPA_SELECT_DISABLED)
		return cur;
	/* up: Min takes the smallest proposal, Max the largest; down: Min
	 * the largest (the smallest change), Max the smallest */
	bool take_min = (r->select == GF_HPA_SELECT_MIN) == up;
	int64_t result = take_min ? INT32_MAX : INT32_MIN;
	for (int i = 0; i < r->npolicies; i++) {
		const struct gf_hpa_policy *p = &r->policies[i];
		int64_t added = change_in(h->ups, h->nups, now, p->period_s);
		int64_t deleted =
			change_in(h->downs, h->ndowns, now, p->period_s);
		int64_t start = (int64_t)cur - added + deleted;
		double ps = (double)start;
		double v = (double)p->value;
		int64_t proposed;
		if (up)
			proposed =
				p->type == GF_HPA_PODS
					? start + p->value
					: clamp32(ceil(ps * (1.0 + v / 100.0)));
		else
			proposed = p->type == GF_HPA_PODS
					   ? start - p->value
					   : clamp32(ps * (1.0 - v / 100.0));
		if (proposed > INT32_MAX)
			proposed = INT32_MAX;
		if (proposed < INT32_MIN)
			proposed = INT32_MIN;
		if (take_min ? proposed < result : proposed > result)
			result = proposed;
	}
	return (int32_t)result;
}

/* convertDesiredReplicasWithBehaviorRate */
static int32_t rules_behavior(const struct gf_hpa *h, int64_t now, int32_t cur,
			      int32_t desired)
{
	const struct gf_hpa_spec *s = &h->spec;
	if (desired > cur) {
		int32_t limit = rate_limit(h, now, cur, true);
		if (limit < cur)
			limit = cur;
		int32_t maxa =
			s->max_replicas > limit ? limit : s->max_replicas;
		if (desired > maxa)
			return maxa;
	} else if (desired < cur) {
		int32_t limit = rate_limit(h, now, cur, false);
		if (limit > cur)
			limit = cur;
		int32_t mina =
			s->min_replicas < limit ? limit : s->min_replicas;
		if (desired < mina)
			return mina;
	}
	return desired;
}

static int32_t longest_period(const struct gf_hpa_rules *r)
{
	int32_t m = 0;
	for (int i = 0; i < r->npolicies; i++)
		if (r->policies[i].period_s > m)
			m = r->policies[i].period_s;
	return m;
}

/* storeScaleEvent: mark events older than the longest period outdated,
 * replace the last outdated one or append. */
static void store_event(struct gf_hpa *h, int64_t now, int32_t prev,
			int32_t next)
{
	bool up = next > prev;
	struct gf_hpa_event **ev = up ? &h->ups : &h->downs;
	size_t *n = up ? &h->nups : &h->ndowns;
	size_t *a = up ? &h->aups : &h->adowns;
	int64_t cutoff = now - (int64_t)longest_period(up ? &h->spec.up
							  : &h->spec.down) *
				       1000;
	int32_t change = up ? next - prev : prev - next;
	bool old = false;
	size_t oldi = 0;
	for (size_t i = 0; i < *n; i++) {
		if (before((*ev)[i].t_ms, cutoff))
			(*ev)[i].outdated = true;
		if ((*ev)[i].outdated) {
			old = true;
			oldi = i;
		}
	}
	struct gf_hpa_event ne = { change, now, false };
	h->last_event = true;
	h->last_event_up = up;
	if (old) {
		(*ev)[oldi] = ne;
		h->last_event_i = oldi;
		return;
	}
	if (*n == *a) {
		*a = *a ? 2 * *a : 8;
		*ev = gf_reallocarray(*ev, *a, sizeof(**ev));
	}
	h->last_event_i = *n;
	(*ev)[(*n)++] = ne;
}

void gf__hpa_amend(struct gf_hpa *h, int32_t cur, int32_t desired)
{
	if (!h->last_event)
		return;
	struct gf_hpa_event *ev = h->last_event_up ? h->ups : h->downs;
	size_t *n = h->last_event_up ? &h->nups : &h->ndowns;
	size_t i = h->last_event_i;
	int32_t change = desired > cur ? desired - cur : cur - desired;
	if (desired == cur || (desired > cur) != h->last_event_up) {
		ev[i] = ev[*n - 1]; /* order does not matter to the sums */
		(*n)--;
		h->last_event = false;
		return;
	}
	ev[i].change = change;
}

const char *gf_hpa_reason_name(enum gf_hpa_reason r)
{
	switch (r) {
	case GF_HPA_REASON_COMPUTED:
		return "computed";
	case GF_HPA_REASON_DISABLED:
		return "scaling-disabled";
	case GF_HPA_REASON_ABOVE_MAX:
		return "above-max";
	case GF_HPA_REASON_BELOW_MIN:
		return "below-min";
	case GF_HPA_REASON_NO_METRIC:
		return "no-metric";
	case GF_HPA_REASON_ACTIVATE:
		return "keda-activate";
	case GF_HPA_REASON_DEACTIVATE:
		return "keda-deactivate";
	case GF_HPA_REASON_KEDA_MIN:
		return "keda-min";
	case GF_HPA_REASON_KEDA_PAUSED:
		return "keda-paused";
	}
	return "unknown";
}

int gf_hpa_sync(struct gf_hpa *h, const struct gf_hpa_input *in,
		struct gf_hpa_output *out)
{
	return gf_hpa_sync_more(h, in, NULL, out);
}

static bool more_bad(const struct gf_hpa_spec *s, const struct gf_hpa_more *m)
{
	if (!m)
		return false;
	if (m->unready_replicas < 0 || m->missing_replicas < 0)
		return true;
	for (int i = 0; i < s->nmore; i++)
		if (m->ok[i] && m->usage_milli[i] < 0)
			return true;
	return false;
}

int gf_hpa_sync_more(struct gf_hpa *h, const struct gf_hpa_input *in,
		     const struct gf_hpa_more *more, struct gf_hpa_output *out)
{
	if (!h->spec.finished || more_bad(&h->spec, more) ||
	    in->spec_replicas < 0 || in->status_replicas < 0 ||
	    in->ready_replicas < 0 || (in->metric_ok && in->usage_milli < 0) ||
	    (h->seen && in->now_ms < h->last_ms))
		return GF_EINVAL;
	const struct gf_hpa_spec *s = &h->spec;
	int32_t cur = in->spec_replicas;
	int64_t now = in->now_ms;
	/* recordInitialRecommendation */
	if (!h->seen) {
		push_rec(h, cur, now);
		h->seen = true;
	}
	h->last_ms = now;
	h->last_event = false;
	*out = (struct gf_hpa_output){ cur, false, -1, -1,
				       GF_HPA_REASON_COMPUTED };
	int32_t desired;
	if (cur == 0 && s->min_replicas != 0) {
		out->reason = GF_HPA_REASON_DISABLED;
		return 0;
	} else if (cur > s->max_replicas) {
		desired = s->max_replicas;
		out->reason = GF_HPA_REASON_ABOVE_MAX;
	} else if (cur < s->min_replicas) {
		desired = s->min_replicas;
		out->reason = GF_HPA_REASON_BELOW_MIN;
	} else if (!proposal(s, in, more, &desired)) {
		/* every metric invalid, or one invalid on a scale-down: an
		 * error, no scaling, nothing kept */
		out->reason = GF_HPA_REASON_NO_METRIC;
		return 0;
	} else {
		desired = desired > 0 ? desired : 0;
		out->proposal = desired;
		if (!s->behavior) {
			out->stabilized = stabilize_legacy(h, now, desired);
			desired = rules_legacy(s, cur, out->stabilized);
		} else {
			out->stabilized =
				stabilize_behavior(h, now, cur, desired);
			desired = rules_behavior(h, now, cur, out->stabilized);
		}
	}
	if (desired != cur) {
		out->replicas = desired;
		out->rescale = true;
		if (s->behavior)
			store_event(h, now, cur, desired);
	}
	return 0;
}

static int hpa_sync(void *h, const struct gf_hpa_input *in,
		    struct gf_hpa_output *out)
{
	return gf_hpa_sync(h, in, out);
}

/* The sync input of sample s (with more, when given) at cur replicas. */
static void sample_input(const struct gf_hpa_sample *s,
			 const struct gf_hpa_sample_more *sm, int32_t cur,
			 struct gf_hpa_input *in, struct gf_hpa_more *mo)
{
	*in = (struct gf_hpa_input){ s->t_ms, cur,   cur,
				     cur,     s->ok, s->usage_milli };
	memset(mo, 0, sizeof(*mo));
	if (!sm)
		return;
	if (sm->status >= 0)
		in->status_replicas = sm->status;
	mo->unready_replicas = sm->unready > 0 ? sm->unready : 0;
	mo->missing_replicas = sm->missing > 0 ? sm->missing : 0;
	if (sm->ready >= 0) {
		in->ready_replicas = sm->ready;
	} else {
		int64_t r = (int64_t)in->status_replicas -
			    mo->unready_replicas - mo->missing_replicas;
		in->ready_replicas = r > 0 ? (int32_t)r : 0;
	}
	memcpy(mo->ok, sm->ok, sizeof(mo->ok));
	memcpy(mo->usage_milli, sm->usage_milli, sizeof(mo->usage_milli));
}

/* The replay of gf_hpa_replay_more: sample i's input at each sync. */
struct replay_more {
	struct gf_hpa h;
	const struct gf_hpa_sample *s;
	const struct gf_hpa_sample_more *more;
	size_t i; /* the next sample (gf_scale_replay syncs in order) */
};

static int replay_more_sync(void *ctx, const struct gf_hpa_input *in,
			    struct gf_hpa_output *out)
{
	struct replay_more *x = ctx;
	struct gf_hpa_input in2;
	struct gf_hpa_more mo;
	sample_input(&x->s[x->i], x->more ? &x->more[x->i] : NULL,
		     in->spec_replicas, &in2, &mo);
	x->i++;
	return gf_hpa_sync_more(&x->h, &in2, &mo, out);
}

int gf_hpa_replay_more(const struct gf_hpa_spec *spec, int32_t start,
		       const struct gf_hpa_sample *s,
		       const struct gf_hpa_sample_more *more, size_t n,
		       int32_t *out, struct gf_err *e)
{
	struct replay_more x = { .s = s, .more = more, .i = 0 };
	if (start < 0)
		return gf_err_set(e, GF_EINVAL,
				  "start replicas %d: must be zero or more",
				  start);
	int rc = gf_hpa_init(&x.h, spec, e);
	if (rc)
		return rc;
	rc = gf_scale_replay(replay_more_sync, &x, start, s, n, out, e);
	gf_hpa_release(&x.h);
	return rc;
}

int gf_hpa_replay(const struct gf_hpa_spec *spec, int32_t start,
		  const struct gf_hpa_sample *s, size_t n, int32_t *out,
		  struct gf_err *e)
{
	struct gf_hpa h;
	if (start < 0)
		return gf_err_set(e, GF_EINVAL,
				  "start replicas %d: must be zero or more",
				  start);
	int rc = gf_hpa_init(&h, spec, e);
	if (rc)
		return rc;
	rc = gf_scale_replay(hpa_sync, &h, start, s, n, out, e);
	gf_hpa_release(&h);
	return rc;
}

int gf_scale_replay(gf_scale_sync_fn sync, void *scaler, int32_t start,
		    const struct gf_hpa_sample *s, size_t n, int32_t *out,
		    struct gf_err *e)
{
	int rc = 0;
	int32_t cur = start;
	for (size_t i = 0; i < n; i++) {
		struct gf_hpa_input in = {
			s[i].t_ms, cur, cur, cur, s[i].ok, s[i].usage_milli
		};
		struct gf_hpa_output o;
		if (i > 0 && s[i].t_ms <= s[i - 1].t_ms) {
			rc = gf_err_set(e, GF_EINVAL,
					"sample %zu: time not after the "
					"previous sample's",
					i + 1);
			break;
		}
		rc = sync(scaler, &in, &o);
		if (rc) {
			rc = gf_err_set(e, rc, "sample %zu: invalid input",
					i + 1);
			break;
		}
		cur = o.replicas;
		out[i] = cur;
	}
	return rc;
}
