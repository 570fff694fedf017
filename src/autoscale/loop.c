/*
 * loop.c - `gpufleet autoscale run`: every interval, read each metric
 * of the HPA (the queue depth, and the others from their own sources),
 * decide as Kubernetes would (the HPA, or KEDA with its HPA), act
 * through the actuator, report.  A source that cannot be read is a
 * failed metric: reported, and the HPA's rule for it holds (the others
 * may scale up, never down; none read, nothing changes; KEDA never
 * scales to zero on a scaler error).  The count is the actuator's when
 * it can read one, else the loop's last decision (replicas assumed
 * ready at once, as in `recommend`).
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "autoscale/autoscale.h"
#include "server/client.h"
#include "util/clock.h"
#include "util/fmt.h"
#include "util/json.h"
#include "util/log.h"
#include "util/mem.h"

/* What the controller actuator needs between calls (one per loop). */
struct ctl_act {
	char url[1024]; /* .../v1/services/NAME */
	char token[512];
	char *ca; /* or NULL */
	bool insecure_http;
	struct gf_client *c;
	/* the last GET's "running" and "pending" (the service's jobs) */
	bool has_pods;
	int32_t running, pending;
};

static int ctl_call(struct ctl_act *a, unsigned method, const char *url,
		    const char *body, struct gf_client_answer *ans,
		    struct gf_err *e)
{
	struct gf_client_req q = { .method = method,
				   .url = url,
				   .token = a->token[0] ? a->token : NULL,
				   .body = body,
				   .body_len = body ? strlen(body) : 0,
				   .ca = a->ca,
				   .insecure_http = a->insecure_http };
	int rc = gf_client_request(a->c, &q, ans, e);
	if (rc == 0 && ans->status != 200) {
		rc = gf_err_set(
			e, ans->status == 404 ? GF_ENOTFOUND : GF_ECONFLICT,
			"%s %s: %ld %.300s", gf_http_method_name(method), url,
			ans->status, gf_buf_str(&ans->body));
	}
	return rc;
}

static int ctl_apply(void *ctx, int32_t current, int32_t desired,
		     struct gf_err *e)
{
	struct ctl_act *a = ctx;
	char url[1100], body[64];
	(void)current;
	if (gf_fmt(url, sizeof(url), "%s/replicas", a->url) ||
	    gf_fmt(body, sizeof(body), "{\"replicas\": %d}", (int)desired))
		return gf_err_set(e, GF_ETOOBIG,
				  "the controller's URL is too "
				  "long");
	struct gf_client_answer ans;
	int rc = ctl_call(a, GF_HTTP_PUT, url, body, &ans, e);
	gf_client_answer_release(&ans);
	return rc;
}

static int ctl_current(void *ctx, int32_t *replicas, struct gf_err *e)
{
	struct ctl_act *a = ctx;
	struct gf_client_answer ans;
	int rc = ctl_call(a, GF_HTTP_GET, a->url, NULL, &ans, e);
	struct gf_jv *v = NULL;
	int64_t n = 0;
	if (rc == 0 && (gf_jv_parse(ans.body.data, ans.body.len, &v, e) != 0 ||
			!gf_jv_int(gf_jv_get(v, "replicas"), &n)))
		rc = gf_err_set(e, GF_EPARSE,
				"GET %s: no 'replicas' in the answer", a->url);
	if (rc == 0)
		*replicas = (int32_t)n;
	int64_t run = 0, pend = 0;
	a->has_pods = rc == 0 && gf_jv_int(gf_jv_get(v, "running"), &run) &&
		      gf_jv_int(gf_jv_get(v, "pending"), &pend) && run >= 0 &&
		      pend >= 0 && run <= INT32_MAX && pend <= INT32_MAX;
	a->running = a->has_pods ? (int32_t)run : 0;
	a->pending = a->has_pods ? (int32_t)pend : 0;
	gf_jv_free(v);
	gf_client_answer_release(&ans);
	return rc;
}

static bool ctl_pods(void *ctx, int32_t *ready, int32_t *unready)
{
	const struct ctl_act *a = ctx;
	*ready = a->running;
	*unready = a->pending;
	return a->has_pods;
}

int gf_as_controller_actuator(const char *base_url,
			      const struct gf_as_source *conn,
			      const char *service, struct gf_as_actuator *out,
			      struct gf_err *e)
{
	memset(out, 0, sizeof(*out));
	if (!base_url || !service || !*service ||
	    strlen(base_url) + strlen(service) + 32 >= 1024)
		return gf_err_set(e, GF_EINVAL,
				  "an actuator needs the controller's URL and "
				  "a service name");
	if (conn && conn->token &&
	    strlen(conn->token) >= sizeof(((struct ctl_act *)0)->token))
		return gf_err_set(e, GF_EINVAL,
				  "the controller's token is over %zu bytes",
				  sizeof(((struct ctl_act *)0)->token) - 1);
	struct ctl_act *a = gf_calloc(1, sizeof(*a));
	size_t n = strlen(base_url);
	while (n && base_url[n - 1] == '/')
		n--;
	/* both fit: their lengths are checked above */
	if (gf_fmt(a->url, sizeof(a->url), "%.*s/v1/services/%s", (int)n,
		   base_url, service) ||
	    gf_fmt(a->token, sizeof(a->token), "%s",
		   conn && conn->token ? conn->token : "")) {
		gf_free(a);
		return gf_err_set(e, GF_ETOOBIG,
				  "the controller's URL is too long");
	}
	a->ca = conn && conn->ca ? gf_strdup(conn->ca) : NULL;
	a->insecure_http = conn && conn->insecure_http;
	a->c = gf_client_new();
	*out = (struct gf_as_actuator){ "controller", ctl_apply, ctl_current, a,
					ctl_pods };
	return 0;
}

void gf_as_actuator_release(struct gf_as_actuator *act)
{
	struct ctl_act *a = act->ctx;
	if (act->apply == ctl_apply && a) {
		gf_client_free(a->c);
		gf_free(a->ca);
		gf_free(a);
	}
	act->ctx = NULL;
}

static void sleep_ms(double ms)
{
	if (ms <= 0)
		return;
	struct timespec ts = { (time_t)(ms / 1000),
			       (long)fmod(ms, 1000.0) * 1000000L };
	while (nanosleep(&ts, &ts) == -1 && errno == EINTR)
		;
}

/* Sleep until t (ms on gf_clock_ms), waking every 200 ms for *stop. */
static void wait_until(double t, volatile sig_atomic_t *stop)
{
	for (;;) {
		double left = t - gf_clock_ms();
		if (left <= 0 || (stop && *stop))
			return;
		sleep_ms(left < 200 ? left : 200);
	}
}

struct decider {
	bool keda;
	struct gf_hpa hpa;
	struct gf_keda k;
};

static int decider_init(struct decider *d, const struct gf_as_scaler *s,
			struct gf_err *e)
{
	memset(d, 0, sizeof(*d));
	d->keda = s->kind == GF_AS_KEDA;
	return d->keda ? gf_keda_init(&d->k, &s->keda, 0, e)
		       : gf_hpa_init(&d->hpa, &s->hpa, e);
}

static void decider_release(struct decider *d)
{
	if (d->keda)
		gf_keda_release(&d->k);
	else
		gf_hpa_release(&d->hpa);
}

/* A value as milli-units, rounded up (Quantity.MilliValue()). */
static int64_t to_milli(double v)
{
	double milli = ceil(v * 1000.0);
	return milli > 9.2e18 ? INT64_MAX : (int64_t)milli;
}

/* Read every metric's source into tk; in and mo take what the HPA sees
 * (a metric that could not be read is unread: ok false). */
static void read_metrics(const struct gf_as_loop *l, struct gf_as_tick *tk,
			 struct gf_hpa_input *in, struct gf_hpa_more *mo)
{
	tk->nmetrics = l->nsrc > 0 ? l->nsrc : 1;
	for (int i = 0; i < tk->nmetrics; i++) {
		struct gf_err re;
		gf_err_clear(&re);
		double v = 0;
		bool ok =
			(l->read ? l->read(l->read_ctx, &l->src[i], &v, &re)
				 : gf_as_source_read(&l->src[i], &v, &re)) == 0;
		tk->oks[i] = ok;
		tk->values[i] = ok ? v : 0;
		/* each unread metric's cause, named when several */
		size_t w = strlen(tk->why);
		if (!ok && tk->nmetrics > 1)
			gf_note(tk->why + w, sizeof(tk->why) - w,
				"%smetrics[%d]: %s", w ? "; " : "", i, re.msg);
		else if (!ok)
			gf_note(tk->why, sizeof(tk->why), "%s", re.msg);
		if (i == 0) {
			in->metric_ok = ok;
			in->usage_milli = ok ? to_milli(v) : 0;
		} else {
			mo->ok[i - 1] = ok;
			mo->usage_milli[i - 1] = ok ? to_milli(v) : 0;
		}
	}
	tk->ok = tk->oks[0];
	tk->value = tk->values[0];
}

/* One sync at t_ms with the count cur: read, decide, act, report. */
static int sync_once(const struct gf_as_loop *l, struct decider *d,
		     int64_t t_ms, int32_t *cur, struct gf_err *e)
{
	struct gf_as_tick tk;
	memset(&tk, 0, sizeof(tk));
	tk.ready = tk.unready = -1;
	tk.t_s = (double)t_ms / 1000.0;
	tk.before = *cur;
	struct gf_err ae;
	if (l->act.current && l->act.current(l->act.ctx, cur, &ae) != 0) {
		gf_note(tk.act_why, sizeof(tk.act_why), "%s", ae.msg);
		tk.after = *cur;
		if (l->report)
			l->report(l->report_ctx, &tk);
		return 0;
	}
	tk.before = *cur;
	struct gf_hpa_input in = { t_ms, *cur, *cur, *cur, false, 0 };
	struct gf_hpa_more mo;
	memset(&mo, 0, sizeof(mo));
	read_metrics(l, &tk, &in, &mo);
	/* the controller's service view: running jobs are the ready pods,
	 * pending ones the unready; status replicas are both.  No pod is
	 * missing: the loop reads External totals (or Pods totals) summed
	 * over the workload, not per-pod samples */
	if (l->act.pods && l->act.pods(l->act.ctx, &tk.ready, &tk.unready) &&
	    (int64_t)tk.ready + tk.unready > 0 &&
	    (int64_t)tk.ready + tk.unready <= INT32_MAX) {
		in.ready_replicas = tk.ready;
		in.status_replicas = tk.ready + tk.unready;
		mo.unready_replicas = tk.unready;
	} else {
		tk.ready = tk.unready = -1;
	}
	struct gf_hpa_output o;
	int rc = d->keda ? gf_keda_sync(&d->k, &in, &o)
			 : gf_hpa_sync_more(&d->hpa, &in, &mo, &o);
	if (rc)
		return gf_err_set(e, rc, "the decision failed at t=%.1f s",
				  tk.t_s);
	tk.after = o.replicas;
	tk.reason = o.reason;
	if (o.rescale) {
		if (l->act.apply(l->act.ctx, *cur, o.replicas, &ae) == 0)
			*cur = o.replicas;
		else
			gf_note(tk.act_why, sizeof(tk.act_why), "%s", ae.msg);
		tk.after = *cur;
	}
	if (l->report)
		l->report(l->report_ctx, &tk);
	return 0;
}

int gf_as_loop_run(const struct gf_as_loop *l, struct gf_err *e)
{
	struct decider d;
	int want = l->scaler->kind == GF_AS_HPA ? l->scaler->hpa.nmore + 1 : 1;
	int have = l->nsrc > 0 ? l->nsrc : 1;
	if (have != want || have > GF_HPA_METRICS_MAX)
		return gf_err_set(
			e, GF_EINVAL,
			"the %s has %d metric%s and the loop %d "
			"source%s (one per metric)",
			l->scaler->kind == GF_AS_HPA ? "HPA" : "ScaledObject",
			want, want == 1 ? "" : "s", have, have == 1 ? "" : "s");
	int rc = decider_init(&d, l->scaler, e);
	if (rc)
		return rc;
	long interval = l->interval_ms > 0 ? l->interval_ms : 15000;
	double t0 = gf_clock_ms();
	int32_t cur = l->start;
	for (long i = 0; l->count == 0 || i < l->count; i++) {
		if (l->stop && *l->stop)
			break;
		double due = t0 + (double)i * (double)interval;
		wait_until(due, l->stop);
		if (l->stop && *l->stop)
			break;
		rc = sync_once(l, &d, (int64_t)i * interval, &cur, e);
		if (rc)
			break;
	}
	decider_release(&d);
	return rc;
}
