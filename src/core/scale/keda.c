/*
 * keda.c - a KEDA ScaledObject: the operator's executor (activation,
 * cooldown, minReplicaCount) at each pollingInterval, around the HPA it
 * generates, which scales 1..N at every sync (scale.h says the rules
 * and where they come from).
 *
 * State: whether the scaler was active at the last poll, the last time
 * it was (lastActiveTime), consecutive scaler errors (fallback), and the
 * HPA's own memory.
 */
#include <string.h>

#include <gpufleet/scale.h>

void gf_keda_spec_init(struct gf_keda_spec *s)
{
	memset(s, 0, sizeof(*s));
	s->min_replicas = 0;
	s->max_replicas = 100;
	s->activation_milli = 0;
	s->polling_s = 30;
	s->cooldown_s = 300;
	s->initial_cooldown_s = 0;
	s->idle_replicas = -1;
	s->paused_replicas = -1;
	gf_hpa_spec_init(&s->hpa);
}

/* KEDA's CheckReplicaCountBoundsAreValid for idleReplicaCount: below
 * the generated HPA's minimum (minReplicaCount, 1 when given as 0, 0
 * when absent); and the paused-replicas count.  0 or GF_EINVAL. */
static int idle_paused_ok(const struct gf_keda_spec *spec, struct gf_err *e)
{
	int32_t min = spec->min_replicas > 0 ? spec->min_replicas
					     : (spec->min_set ? 1 : 0);
	int32_t idle = spec->idle_replicas;
	if (idle < -1)
		return gf_err_set(e, GF_EINVAL,
				  "idleReplicaCount %d: expected >= 0", idle);
	if (idle != -1 && idle >= min)
		return gf_err_set(e, GF_EINVAL,
				  "idleReplicaCount %d must be less than "
				  "minReplicaCount %d",
				  idle, min);
	if (spec->paused_replicas < -1)
		return gf_err_set(e, GF_EINVAL,
				  "autoscaling.keda.sh/paused-replicas %d: "
				  "expected >= 0",
				  spec->paused_replicas);
	return 0;
}

int gf_keda_init(struct gf_keda *k, const struct gf_keda_spec *spec,
		 int64_t created_ms, struct gf_err *e)
{
	memset(k, 0, sizeof(*k));
	if (idle_paused_ok(spec, e))
		return GF_EINVAL;
	if (!gf_keda_replicas_ok(spec->min_replicas, spec->max_replicas))
		return gf_err_set(e, GF_EINVAL,
				  "minReplicaCount %d, maxReplicaCount %d: "
				  "expected 0 <= min <= max and max >= 1",
				  spec->min_replicas, spec->max_replicas);
	if (spec->polling_s < 1 || spec->cooldown_s < 0 ||
	    spec->initial_cooldown_s < 0 || spec->activation_milli < 0 ||
	    spec->fallback_failures < 0 || spec->fallback_replicas < 0)
		return gf_err_set(e, GF_EINVAL,
				  "pollingInterval, cooldownPeriod, "
				  "initialCooldownPeriod, activationThreshold "
				  "and fallback: expected values >= 0 "
				  "(pollingInterval >= 1)");
	k->spec = *spec;
	struct gf_hpa_spec hs = spec->hpa;
	/* KEDA's generated HPA: minReplicas is minReplicaCount, or 1 */
	hs.min_replicas = spec->min_replicas > 0 ? spec->min_replicas : 1;
	hs.max_replicas = spec->max_replicas;
	int rc = gf_hpa_init(&k->hpa, &hs, e);
	if (rc) {
		memset(k, 0, sizeof(*k));
		return rc;
	}
	k->spec.hpa = k->hpa.spec;
	k->created_ms = created_ms;
	return 0;
}

void gf_keda_release(struct gf_keda *k)
{
	gf_hpa_release(&k->hpa);
	memset(k, 0, sizeof(*k));
}

/* Inactive: to idleReplicaCount (or 0) once the cooldown is over. */
static int32_t to_idle(struct gf_keda *k, int64_t now, enum gf_hpa_reason *why)
{
	const struct gf_keda_spec *s = &k->spec;
	if (k->created_ms + (int64_t)s->initial_cooldown_s * 1000 > now)
		return -1;
	if (k->has_last_active &&
	    k->last_active_ms + (int64_t)s->cooldown_s * 1000 >= now)
		return -1;
	*why = GF_HPA_REASON_DEACTIVATE;
	return s->idle_replicas >= 0 ? s->idle_replicas : 0;
}

/* The executor's RequestScale: the new count, or -1 for no change. */
static int32_t executor(struct gf_keda *k, const struct gf_hpa_input *in,
			enum gf_hpa_reason *why)
{
	const struct gf_keda_spec *s = &k->spec;
	int64_t now = in->now_ms;
	int32_t cur = in->spec_replicas;
	bool error = !in->metric_ok;
	bool idle = s->idle_replicas >= 0;
	/* minReplicaCount >= 1 keeps the scaler active, unless an idle
	 * count asks the executor to look at the triggers themselves */
	bool active = (!idle && s->min_replicas >= 1) ||
		      (!error && in->usage_milli > s->activation_milli);
	k->active = active;
	if (active) {
		k->has_last_active = true;
		k->last_active_ms = now;
		if (cur == 0 || (idle && cur < s->min_replicas)) {
			*why = GF_HPA_REASON_ACTIVATE;
			return s->min_replicas > 0 ? s->min_replicas : 1;
		}
		return -1;
	}
	if (error)
		return -1; /* cannot scale in while a trigger errs */
	if ((idle && cur > s->idle_replicas) ||
	    (cur > 0 && s->min_replicas == 0))
		return to_idle(k, now, why);
	if (!idle && cur < s->min_replicas) {
		*why = GF_HPA_REASON_KEDA_MIN;
		return s->min_replicas;
	}
	return -1;
}

int gf_keda_sync(struct gf_keda *k, const struct gf_hpa_input *in,
		 struct gf_hpa_output *out)
{
	if (in->spec_replicas < 0 || (in->metric_ok && in->usage_milli < 0) ||
	    (k->polled && in->now_ms < k->last_poll_ms))
		return GF_EINVAL;
	if (k->spec.paused_replicas >= 0 || k->spec.paused) {
		/* paused: KEDA holds the target and runs no HPA */
		int32_t n = k->spec.paused_replicas >= 0
				    ? k->spec.paused_replicas
				    : in->spec_replicas;
		*out = (struct gf_hpa_output){ n, n != in->spec_replicas, -1,
					       -1, GF_HPA_REASON_KEDA_PAUSED };
		return 0;
	}
	struct gf_hpa_input hin = *in;
	if (in->metric_ok)
		k->failures = 0;
	else if (k->failures < INT32_MAX)
		k->failures++;
	/* fallback: the metrics server answers target * replicas */
	if (!in->metric_ok && k->spec.fallback_failures > 0 &&
	    k->failures >= k->spec.fallback_failures &&
	    k->hpa.spec.target == GF_HPA_AVERAGE_VALUE) {
		hin.metric_ok = true;
		hin.usage_milli = k->hpa.spec.target_milli *
				  (int64_t)k->spec.fallback_replicas;
	}
	bool due = !k->polled || in->now_ms - k->last_poll_ms >=
					 (int64_t)k->spec.polling_s * 1000;
	if (due) {
		k->polled = true;
		k->last_poll_ms = in->now_ms;
		enum gf_hpa_reason why = GF_HPA_REASON_COMPUTED;
		int32_t next = executor(k, in, &why);
		if (next >= 0 && next != in->spec_replicas) {
			*out = (struct gf_hpa_output){ next, true, -1, -1,
						       why };
			return 0;
		}
	}
	return gf_hpa_sync(&k->hpa, &hin, out);
}
