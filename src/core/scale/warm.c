/*
 * warm.c - the warm-up-aware mode (scale.h): a proposal that looks
 * warmup_s ahead, put through the HPA's own machinery.
 *
 * The projection, in slot-seconds (a request holds one of a replica's
 * `slots` for service_s on average):
 *   supply  = slots * (ready * W + sum over warming of max(0, W - left))
 *   demand  = running * service_s / 2 + waiting * service_s
 *             + arrival_rate * W * service_s
 *   backlog = max(0, demand - supply) / service_s   requests at t + W
 *   need    = ceil((arrival_rate * service_s + backlog * service_s /
 *                   drain_s) / (slots * occupancy))
 * and never below ceil((waiting + running) / (slots * occupancy)), what
 * the requests held now need at the target occupancy.
 */
#include <limits.h>
#include <math.h>

#include <gpufleet/scale.h>

#include "core/scale/scale_impl.h"

static bool spec_ok(const struct gf_warm_spec *ws)
{
	return isfinite(ws->warmup_s) && ws->warmup_s >= 0 && ws->slots >= 1 &&
	       ws->occupancy > 0 && ws->occupancy <= 1 &&
	       isfinite(ws->drain_s) && ws->drain_s > 0;
}

static bool input_ok(const struct gf_warm_input *wi)
{
	return wi->ready >= 0 && wi->nwarming >= 0 &&
	       (wi->nwarming == 0 || wi->warm_left_s) &&
	       isfinite(wi->waiting) && wi->waiting >= 0 &&
	       isfinite(wi->running) && wi->running >= 0 &&
	       isfinite(wi->arrival_rate) && wi->arrival_rate >= 0 &&
	       isfinite(wi->service_s) && wi->service_s >= 0;
}

static int32_t ceil32(double v)
{
	if (!(v > 0))
		return 0;
	if (v >= (double)INT32_MAX)
		return INT32_MAX;
	return (int32_t)ceil(v);
}

int32_t gf_warm_need(const struct gf_warm_spec *ws,
		     const struct gf_warm_input *wi)
{
	if (!spec_ok(ws) || !input_ok(wi))
		return 0;
	double per = (double)ws->slots * ws->occupancy;
	int32_t now_need = ceil32((wi->waiting + wi->running) / per);
	double s = wi->service_s;
	if (s <= 0)
		return now_need;
	double w = ws->warmup_s;
	double serving = (double)wi->ready * w;
	for (int32_t i = 0; i < wi->nwarming; i++) {
		double left = wi->warm_left_s[i];
		if (isfinite(left) && left < w)
			serving += w - (left > 0 ? left : 0);
	}
	double supply = (double)ws->slots * serving;
	double demand = wi->running * s / 2 + wi->waiting * s +
			wi->arrival_rate * w * s;
	double backlog = demand > supply ? (demand - supply) / s : 0;
	int32_t need = ceil32(
		(wi->arrival_rate * s + backlog * s / ws->drain_s) / per);
	return need > now_need ? need : now_need;
}

int gf_warm_sync(struct gf_hpa *h, const struct gf_warm_spec *ws,
		 const struct gf_warm_input *wi, const struct gf_hpa_input *in,
		 struct gf_hpa_output *out)
{
	if (!spec_ok(ws) || !input_ok(wi) ||
	    h->spec.target != GF_HPA_AVERAGE_VALUE)
		return GF_EINVAL;
	struct gf_hpa_input hin = *in;
	if (in->metric_ok) {
		int32_t need = gf_warm_need(ws, wi);
		int64_t t = h->spec.target_milli;
		hin.usage_milli = (int64_t)need > INT64_MAX / t
					  ? INT64_MAX
					  : (int64_t)need * t;
	}
	int rc = gf_hpa_sync(h, &hin, out);
	if (rc)
		return rc;
	/* a scale-down never takes a warming replica */
	if (out->replicas < in->spec_replicas && out->replicas < wi->nwarming) {
		out->replicas = wi->nwarming < in->spec_replicas
					? wi->nwarming
					: in->spec_replicas;
		out->rescale = out->replicas != in->spec_replicas;
		gf__hpa_amend(h, in->spec_replicas, out->replicas);
	}
	return 0;
}
