/*
 * spec.c - an HPA spec's defaults and validation: Kubernetes'
 * pkg/apis/autoscaling/v2/defaults.go (behavior filled one field at a
 * time, only when behavior is given), the controller's scale-down
 * window for a nil one, and the API's validation rules for the fields
 * we read that the decision cannot do without (min <= max, max >= 1, a
 * positive target, policies present with positive values and periods,
 * windows >= 0).  The API's upper bounds (periods of at most 1800 s,
 * windows of at most 3600 s) are the manifest reader's warnings: the
 * controller's arithmetic does not need them.
 */
#include <math.h>
#include <string.h>

#include <gpufleet/scale.h>

void gf_hpa_spec_init(struct gf_hpa_spec *s)
{
	memset(s, 0, sizeof(*s));
	s->min_replicas = 1;
	s->max_replicas = 0;
	s->target = GF_HPA_AVERAGE_VALUE;
	s->target_milli = 0;
	s->tolerance = 0.1;
	s->downscale_window_s = 300;
}

static void default_rules(struct gf_hpa_rules *r, bool up, int32_t down_win,
			  double tol)
{
	if (!r->has_select)
		r->select = GF_HPA_SELECT_MAX;
	if (!r->has_window)
		r->window_s = up ? 0 : down_win;
	if (!r->has_policies) {
		if (up) {
			r->npolicies = 2;
			r->policies[0] =
				(struct gf_hpa_policy){ GF_HPA_PODS, 4, 15 };
			r->policies[1] = (struct gf_hpa_policy){ GF_HPA_PERCENT,
								 100, 15 };
		} else {
			r->npolicies = 1;
			r->policies[0] = (struct gf_hpa_policy){ GF_HPA_PERCENT,
								 100, 15 };
		}
	}
	if (!r->has_tolerance)
		r->tolerance = tol;
	r->has_select = r->has_window = r->has_policies = r->has_tolerance =
		true;
}

static int check_rules(const struct gf_hpa_rules *r, const char *dir,
		       struct gf_err *e)
{
	if (r->window_s < 0)
		return gf_err_set(e, GF_EINVAL,
				  "behavior.%s.stabilizationWindowSeconds %d: "
				  "must be zero or more",
				  dir, r->window_s);
	if (r->npolicies < 1)
		return gf_err_set(e, GF_EINVAL,
				  "behavior.%s.policies: must specify at "
				  "least one policy",
				  dir);
	if (r->npolicies > GF_HPA_POLICIES_MAX)
		return gf_err_set(e, GF_EINVAL,
				  "behavior.%s.policies: more than %d", dir,
				  GF_HPA_POLICIES_MAX);
	for (int i = 0; i < r->npolicies; i++) {
		const struct gf_hpa_policy *p = &r->policies[i];
		if (p->value <= 0)
			return gf_err_set(e, GF_EINVAL,
					  "behavior.%s.policies[%d].value %d: "
					  "must be greater than zero",
					  dir, i, p->value);
		if (p->period_s <= 0)
			return gf_err_set(e, GF_EINVAL,
					  "behavior.%s.policies[%d]."
					  "periodSeconds %d: must be greater "
					  "than zero",
					  dir, i, p->period_s);
	}
	if (!(r->tolerance >= 0) || !isfinite(r->tolerance))
		return gf_err_set(e, GF_EINVAL,
				  "behavior.%s.tolerance: must be a number "
				  ">= 0",
				  dir);
	return 0;
}

int gf_hpa_spec_finish(struct gf_hpa_spec *s, struct gf_err *e)
{
	if (s->max_replicas < 1)
		return gf_err_set(e, GF_EINVAL,
				  "maxReplicas %d: must be greater than zero",
				  s->max_replicas);
	if (s->min_replicas < 0)
		return gf_err_set(e, GF_EINVAL,
				  "minReplicas %d: must be zero or more",
				  s->min_replicas);
	if (s->min_replicas > s->max_replicas)
		return gf_err_set(e, GF_EINVAL,
				  "minReplicas %d: must be less than or equal "
				  "to maxReplicas %d",
				  s->min_replicas, s->max_replicas);
	if (s->target_milli <= 0)
		return gf_err_set(e, GF_EINVAL,
				  "the metric's target: must be positive");
	if (s->nmore < 0 || s->nmore > GF_HPA_METRICS_MAX - 1)
		return gf_err_set(e, GF_EINVAL,
				  "%d metrics: at most %d are read",
				  s->nmore + 1, GF_HPA_METRICS_MAX);
	for (int i = 0; i < s->nmore; i++)
		if (s->more[i].target_milli <= 0)
			return gf_err_set(e, GF_EINVAL,
					  "metrics[%d]'s target: must be "
					  "positive",
					  i + 1);
	if (!(s->tolerance >= 0) || !isfinite(s->tolerance))
		return gf_err_set(e, GF_EINVAL,
				  "tolerance: must be a number >= 0");
	if (s->downscale_window_s < 0)
		return gf_err_set(e, GF_EINVAL,
				  "downscale stabilization window %d s: "
				  "must be zero or more",
				  s->downscale_window_s);
	if (s->behavior) {
		default_rules(&s->up, true, s->downscale_window_s,
			      s->tolerance);
		default_rules(&s->down, false, s->downscale_window_s,
			      s->tolerance);
		int rc = check_rules(&s->up, "scaleUp", e);
		if (rc == 0)
			rc = check_rules(&s->down, "scaleDown", e);
		if (rc)
			return rc;
	}
	s->finished = true;
	return 0;
}
