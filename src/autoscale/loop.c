/*
 * loop.c - `gpufleet autoscale run`: every interval, read the queue
 * depth, decide as Kubernetes would (the HPA, or KEDA with its HPA), act
 * through the actuator, report.  A source that cannot be read is a
 * failed metric: reported, and nothing changes (HPA's rule; KEDA never
 * scales to zero on a scaler error).  The count is the actuator's when
 * it can read one, else the loop's last decision (replicas assumed
 * ready at once, as in `recommend`).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "autoscale/autoscale.h"
#include "util/clock.h"
#include "util/log.h"

int gf_as_controller_actuator(const char *base_url, const char *token,
			      const char *service, struct gf_as_actuator *out,
			      struct gf_err *e)
{
	(void)base_url;
	(void)token;
	memset(out, 0, sizeof(*out));
	return gf_err_set(e, GF_ENOTSUP,
			  "cannot act on service '%s': the controller has no "
			  "replica-count route yet (gf_as_controller_actuator "
			  "is the seam); use --dry-run",
			  service ? service : "");
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

/* One sync at t_ms with the count cur: read, decide, act, report. */
static int sync_once(const struct gf_as_loop *l, struct decider *d,
		     int64_t t_ms, int32_t *cur, struct gf_err *e)
{
	struct gf_as_tick tk;
	memset(&tk, 0, sizeof(tk));
	tk.t_s = (double)t_ms / 1000.0;
	if (l->act.current) {
		int rc = l->act.current(l->act.ctx, cur, e);
		if (rc)
			return rc;
	}
	tk.before = *cur;
	struct gf_err re;
	gf_err_clear(&re);
	tk.ok = gf_as_source_read(l->src, &tk.value, &re) == 0;
	if (!tk.ok)
		snprintf(tk.why, sizeof(tk.why), "%s", re.msg);
	double milli = tk.ok ? ceil(tk.value * 1000.0) : 0;
	struct gf_hpa_input in = {
		t_ms, *cur,  *cur,
		*cur, tk.ok, milli > 9.2e18 ? INT64_MAX : (int64_t)milli
	};
	struct gf_hpa_output o;
	int rc = d->keda ? gf_keda_sync(&d->k, &in, &o)
			 : gf_hpa_sync(&d->hpa, &in, &o);
	if (rc)
		return gf_err_set(e, rc, "the decision failed at t=%.1f s",
				  tk.t_s);
	tk.after = o.replicas;
	tk.reason = o.reason;
	if (o.rescale) {
		rc = l->act.apply(l->act.ctx, *cur, o.replicas, e);
		if (rc)
			return rc;
		*cur = o.replicas;
	}
	if (l->report)
		l->report(l->report_ctx, &tk);
	return 0;
}

int gf_as_loop_run(const struct gf_as_loop *l, struct gf_err *e)
{
	struct decider d;
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
