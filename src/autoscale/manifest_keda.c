/*
 * manifest_keda.c - a KEDA ScaledObject (keda.sh/v1alpha1) into a
 * gf_as_scaler: spec.pollingInterval, cooldownPeriod,
 * initialCooldownPeriod, idleReplicaCount, minReplicaCount,
 * maxReplicaCount, fallback.{failureThreshold,replicas},
 * advanced.horizontalPodAutoscalerConfig.behavior (the HPA's, read by
 * manifest.c), triggers[].{type,metricType,metadata.{serverAddress,query,
 * threshold,activationThreshold}} and the metadata.annotations
 * autoscaling.keda.sh/{paused,paused-replicas}, as kedacore/keda-docs
 * content/docs/2.15/reference/scaledobject-spec.md and
 * scalers/prometheus.md name them.  manifest.c reads the root and hands
 * the spec and the metadata here.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "autoscale/manifest_impl.h"

/* A KEDA metadata value: a string holding a float (strconv.ParseFloat),
 * made milli-units as KEDA does (int64(v * 1000)). */
static int keda_float(const struct rd *r, const node_t *v, const char *what,
		      int64_t *milli)
{
	const char *s = gf_yn_str(v);
	char *end;
	errno = 0;
	double x = s && *s ? strtod(s, &end) : NAN;
	if (!s || !*s || *end || errno || !isfinite(x) || x < 0 || x > 9e15)
		return fail(r, v, "field '%s': '%.40s' is not a number >= 0",
			    what, s ? s : "");
	*milli = (int64_t)(x * 1000.0);
	return 0;
}

struct trigger_ctx {
	struct gf_as_scaler *out;
	const node_t *md;
	bool threshold;
};

static int trigger_field(const struct rd *r, const char *key, const node_t *k,
			 const node_t *v, void *obj)
{
	(void)k;
	struct trigger_ctx *x = obj;
	const char *t = gf_yn_str(v);
	if (!strcmp(key, "type")) {
		if (!t || strcmp(t, "prometheus"))
			return fail(r, v,
				    "triggers[0].type '%.40s': this "
				    "autoscaler reads a prometheus trigger",
				    t ? t : "");
		return 0;
	}
	if (!strcmp(key, "metricType")) {
		static const char *const types[] = { "AverageValue", "Value",
						     NULL };
		int i = gf__as_one_of(t, types);
		if (i < 0)
			return fail(r, v,
				    "field 'metricType': '%.40s' is not "
				    "AverageValue or Value",
				    t ? t : "");
		x->out->keda.hpa.target =
			i == 0 ? GF_HPA_AVERAGE_VALUE : GF_HPA_VALUE;
		return 0;
	}
	if (!strcmp(key, "metadata")) {
		x->md = v;
		return 0;
	}
	return gf_yaml_known(key, "name, useCachedMetrics, authenticationRef")
		       ? 0
		       : FIELD_UNKNOWN;
}

/* triggers[0].metadata: other keys are the scaler's, not ours to judge */
static int metadata_field(const struct rd *r, const char *key, const node_t *k,
			  const node_t *v, void *obj)
{
	(void)k;
	struct trigger_ctx *x = obj;
	struct gf_as_scaler *out = x->out;
	if (!strcmp(key, "threshold")) {
		x->threshold = true;
		return keda_float(r, v, key, &out->keda.hpa.target_milli);
	}
	if (!strcmp(key, "activationThreshold"))
		return keda_float(r, v, key, &out->keda.activation_milli);
	if (!strcmp(key, "serverAddress"))
		return gf_yr_str(&r->yr, v, key, 0, out->server,
				 sizeof(out->server));
	if (!strcmp(key, "query"))
		return gf_yr_str(&r->yr, v, key, 0, out->query,
				 sizeof(out->query));
	return 0;
}

static int parse_trigger(const struct rd *r, const node_t *n,
			 struct gf_as_scaler *out)
{
	struct trigger_ctx x = { out, NULL, false };
	int rc = gf__as_walk(r, n, "triggers[0]", trigger_field, &x);
	if (rc)
		return rc;
	if (!x.md)
		return fail(r, n, "triggers[0]: field 'metadata' missing");
	rc = gf__as_walk(r, x.md, "triggers[0].metadata", metadata_field, &x);
	if (rc == 0 && !x.threshold)
		rc = fail(r, x.md,
			  "triggers[0].metadata: field 'threshold' "
			  "missing");
	return rc;
}

static int advanced_field(const struct rd *r, const char *key, const node_t *k,
			  const node_t *v, void *obj)
{
	struct gf_as_scaler *out = obj;
	if (!strcmp(key, "horizontalPodAutoscalerConfig")) {
		if (gf_yn_type(v) != GF_YN_MAP)
			return fail(r, v, "field '%s': expected a mapping",
				    key);
		const node_t *b = gf_yn_get(v, "behavior");
		return gf_yn_null(b)
			       ? 0
			       : gf__as_parse_behavior(r, b, &out->keda.hpa);
	}
	if (!strcmp(key, "scalingModifiers"))
		return fail(r, k, "advanced.scalingModifiers: not supported");
	return strcmp(key, "restoreToOriginalReplicaCount") ? FIELD_UNKNOWN : 0;
}

static int fallback_field(const struct rd *r, const char *key, const node_t *k,
			  const node_t *v, void *obj)
{
	(void)k;
	struct gf_keda_spec *s = obj;
	if (!strcmp(key, "failureThreshold"))
		return gf__as_get_int(r, v, key, &s->fallback_failures);
	if (!strcmp(key, "replicas"))
		return gf__as_get_int(r, v, key, &s->fallback_replicas);
	return 0;
}

static int keda_field(const struct rd *r, const char *key, const node_t *k,
		      const node_t *v, void *obj)
{
	(void)k;
	struct spec_ctx *x = obj;
	struct gf_keda_spec *s = &x->out->keda;
	static const char *const ints[] = { "pollingInterval",
					    "cooldownPeriod",
					    "initialCooldownPeriod",
					    "minReplicaCount",
					    "maxReplicaCount",
					    "idleReplicaCount",
					    NULL };
	int32_t *to[] = { &s->polling_s,	  &s->cooldown_s,
			  &s->initial_cooldown_s, &s->min_replicas,
			  &s->max_replicas,	  &s->idle_replicas };
	int i = gf__as_one_of(key, ints);
	if (i == 3)
		s->min_set = true;
	if (i == 5) {
		long long idle;
		int rc = gf_yr_int(&r->yr, v, key, 0, INT32_MAX, &idle);
		if (rc == 0 && idle > 0)
			gf__as_warn(
				r, v,
				"idleReplicaCount %lld: KEDA documents that only "
				"0 works (its HPA raises the target back to "
				"minReplicaCount)",
				idle);
		if (rc == 0)
			s->idle_replicas = (int32_t)idle;
		return rc;
	}
	if (i >= 0)
		return gf__as_get_int(r, v, key, to[i]);
	if (!strcmp(key, "fallback"))
		return gf__as_walk(r, v, "fallback", fallback_field, s);
	if (!strcmp(key, "advanced"))
		return gf__as_walk(r, v, "advanced", advanced_field, x->out);
	if (!strcmp(key, "triggers")) {
		if (gf_yn_type(v) != GF_YN_SEQ || gf_yn_len(v) != 1)
			return fail(r, v,
				    "field 'triggers': this autoscaler reads "
				    "exactly one trigger");
		x->trigger = true;
		return parse_trigger(r, gf_yn_at(v, 0), x->out);
	}
	return strcmp(key, "scaleTargetRef") ? FIELD_UNKNOWN : 0;
}

int gf__as_parse_keda_spec(const struct rd *r, const node_t *n,
			   struct gf_as_scaler *out)
{
	struct spec_ctx x = { out, false, false, false };
	int rc = gf__as_walk(r, n, "spec", keda_field, &x);
	if (rc == 0 && !x.trigger)
		rc = fail(r, n, "spec: field 'triggers' missing");
	return rc;
}

/* metadata.annotations of a ScaledObject: KEDA's pause (scaledobject
 * -spec.md, "Pause autoscaling"; ScaledObject.NeedToBePausedByAnnotation). */
#define KEDA_ANN "autoscaling.keda.sh/"
static int annotation_field(const struct rd *r, const char *key,
			    const node_t *k, const node_t *v, void *obj)
{
	struct gf_keda_spec *s = obj;
	if (!strcmp(key, KEDA_ANN "paused-replicas")) {
		long long n;
		int rc = gf_yr_int(&r->yr, v,
				   "metadata.annotations." KEDA_ANN
				   "paused-replicas",
				   0, INT32_MAX, &n);
		if (rc == 0)
			s->paused_replicas = (int32_t)n;
		return rc;
	}
	if (!strcmp(key, KEDA_ANN "paused")) {
		bool b;
		const char *t = gf_yn_str(v);
		/* strconv.ParseBool's words; anything else pauses */
		static const char *const yes[] = { "1",	   "t",	   "T", "true",
						   "TRUE", "True", NULL };
		static const char *const no[] = { "0",	   "f",	    "F",
						  "false", "FALSE", "False",
						  NULL };
		if (gf__as_one_of(t, yes) >= 0)
			b = true;
		else if (gf__as_one_of(t, no) >= 0)
			b = false;
		else {
			b = true;
			gf__as_warn(r, v,
				    "annotation '" KEDA_ANN
				    "paused': '%.40s' is "
				    "not a boolean: paused, as KEDA does",
				    t ? t : "");
		}
		s->paused = b;
		return 0;
	}
	if (!strncmp(key, KEDA_ANN, strlen(KEDA_ANN)))
		gf__as_warn(r, k,
			    "annotation '%.60s': not read (KEDA 2.16 has "
			    "paused and paused-replicas)",
			    key);
	return 0;
}

int gf__as_parse_annotations(const struct rd *r, const node_t *md,
			     struct gf_as_scaler *out)
{
	const node_t *a = gf_yn_get(md, "annotations");
	if (gf_yn_null(a))
		return 0;
	return gf__as_walk(r, a, "metadata.annotations", annotation_field,
			   &out->keda);
}
