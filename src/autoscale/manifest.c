/*
 * manifest.c - an autoscaling/v2 HorizontalPodAutoscaler or a KEDA
 * ScaledObject, read from YAML through libyaml's document API (nodes
 * carry their line), into a gf_as_scaler.
 *
 * Field names are the upstream ones: kubernetes/api autoscaling/v2
 * types.go (spec.minReplicas, maxReplicas, metrics[].external.metric,
 * .target.{type,value,averageValue}, behavior.scaleUp|scaleDown
 * .{stabilizationWindowSeconds,selectPolicy,policies[].{type,value,
 * periodSeconds},tolerance}) and kedacore/keda-docs
 * content/docs/2.15/reference/scaledobject-spec.md and
 * scalers/prometheus.md (spec.pollingInterval, cooldownPeriod,
 * initialCooldownPeriod, minReplicaCount, maxReplicaCount,
 * fallback.{failureThreshold,replicas},
 * advanced.horizontalPodAutoscalerConfig.behavior, triggers[].{type,
 * metricType,metadata.{serverAddress,query,threshold,
 * activationThreshold}}).  A null value is an absent field, as the API's
 * JSON decoding makes it (so `behavior: null` is the legacy path).
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "autoscale/autoscale.h"
#include "util/file.h"
#include "util/mem.h"

struct rd {
	yaml_document_t *doc;
	const char *path;
	struct gf_err *e;
	struct gf_as_scaler *out;
};

static int line_of(const yaml_node_t *n)
{
	return n ? (int)n->start_mark.line + 1 : 0;
}

__attribute__((format(printf, 3, 4))) static int
fail(const struct rd *r, const yaml_node_t *n, const char *fmt, ...)
{
	char msg[400];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return gf_err_set(r->e, GF_EPARSE, "%s:%d: %s", r->path, line_of(n),
			  msg);
}

static yaml_node_t *node(const struct rd *r, int id)
{
	return yaml_document_get_node(r->doc, id);
}

static bool is_null(const yaml_node_t *n)
{
	if (!n)
		return true;
	if (n->type != YAML_SCALAR_NODE ||
	    n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
		return false;
	const char *s = (const char *)n->data.scalar.value;
	return !*s || !strcmp(s, "~") || !strcmp(s, "null") ||
	       !strcmp(s, "Null") || !strcmp(s, "NULL");
}

static const char *scalar(const yaml_node_t *n)
{
	return n && n->type == YAML_SCALAR_NODE
		       ? (const char *)n->data.scalar.value
		       : NULL;
}

static void unknown(const struct rd *r, const yaml_node_t *k, const char *in)
{
	struct gf_as_scaler *o = r->out;
	if (o->nwarn < 8)
		snprintf(o->warn[o->nwarn], sizeof(o->warn[0]),
			 "%s:%d: unknown field '%.60s' in %s: ignored", r->path,
			 line_of(k), scalar(k) ? scalar(k) : "?", in);
	o->nwarn++;
}

static int want_map(const struct rd *r, const yaml_node_t *n, const char *what)
{
	if (n->type != YAML_MAPPING_NODE)
		return fail(r, n, "field '%s': expected a mapping", what);
	return 0;
}

static int get_int(const struct rd *r, const yaml_node_t *n, const char *what,
		   int32_t *out)
{
	const char *s = scalar(n);
	char *end;
	if (!s || !*s)
		return fail(r, n, "field '%s': expected an integer", what);
	errno = 0;
	long long v = strtoll(s, &end, 10);
	if (*end || errno || v < INT32_MIN || v > INT32_MAX)
		return fail(r, n, "field '%s': '%.40s' is not a 32-bit integer",
			    what, s);
	*out = (int32_t)v;
	return 0;
}

static int get_str(const struct rd *r, const yaml_node_t *n, const char *what,
		   char *out, size_t size)
{
	const char *s = scalar(n);
	if (!s)
		return fail(r, n, "field '%s': expected a string", what);
	if (strlen(s) >= size)
		return fail(r, n, "field '%s': longer than %zu bytes", what,
			    size - 1);
	snprintf(out, size, "%s", s);
	return 0;
}

static int get_quantity(const struct rd *r, const yaml_node_t *n,
			const char *what, int64_t *milli)
{
	const char *s = scalar(n);
	int rc = s ? gf_quantity_milli(s, milli) : GF_EPARSE;
	if (rc == GF_ERANGE)
		return fail(r, n,
			    "field '%s': '%.40s' is negative or too large",
			    what, s);
	if (rc)
		return fail(r, n, "field '%s': '%.40s' is not a quantity", what,
			    s ? s : "");
	return 0;
}

/* A tolerance Quantity as AsApproximateFloat64 reads it. */
static int get_tolerance(const struct rd *r, const yaml_node_t *n,
			 const char *what, double *out)
{
	const char *s = scalar(n);
	char *end;
	if (s && *s) {
		errno = 0;
		double v = strtod(s, &end);
		if (!*end && !errno && isfinite(v) && v >= 0) {
			*out = v;
			return 0;
		}
	}
	int64_t milli;
	int rc = get_quantity(r, n, what, &milli);
	if (rc == 0)
		*out = (double)milli / 1000.0;
	return rc;
}

/* A value the API server's validation would refuse, which the decision
 * can still take: warned about, as an unknown field is. */
static void beyond(const struct rd *r, const yaml_node_t *n, const char *what,
		   int32_t v, int32_t max)
{
	struct gf_as_scaler *o = r->out;
	if (o->nwarn < 8)
		snprintf(o->warn[o->nwarn], sizeof(o->warn[0]),
			 "%s:%d: %s %d: the API server takes at most %d (used "
			 "as it is)",
			 r->path, line_of(n), what, v, max);
	o->nwarn++;
}

static int parse_policy(const struct rd *r, yaml_node_t *n, const char *dir,
			struct gf_hpa_policy *p)
{
	char what[96];
	snprintf(what, sizeof(what), "behavior.%s.policies[]", dir);
	int rc = want_map(r, n, what);
	bool has_type = false, has_value = false, has_period = false;
	for (yaml_node_pair_t *pr = n->data.mapping.pairs.start;
	     rc == 0 && pr < n->data.mapping.pairs.top; pr++) {
		yaml_node_t *k = node(r, pr->key), *v = node(r, pr->value);
		const char *key = scalar(k);
		if (!key || is_null(v))
			continue;
		if (!strcmp(key, "type")) {
			const char *t = scalar(v);
			if (t && !strcmp(t, "Pods"))
				p->type = GF_HPA_PODS;
			else if (t && !strcmp(t, "Percent"))
				p->type = GF_HPA_PERCENT;
			else
				rc = fail(r, v,
					  "field '%s.type': '%.40s' is not "
					  "Pods or Percent",
					  what, t ? t : "");
			has_type = true;
		} else if (!strcmp(key, "value")) {
			rc = get_int(r, v, "value", &p->value);
			has_value = true;
		} else if (!strcmp(key, "periodSeconds")) {
			rc = get_int(r, v, "periodSeconds", &p->period_s);
			has_period = true;
			if (rc == 0 && p->period_s > GF_HPA_PERIOD_MAX)
				beyond(r, v, "periodSeconds", p->period_s,
				       GF_HPA_PERIOD_MAX);
		} else {
			unknown(r, k, what);
		}
	}
	if (rc == 0 && (!has_type || !has_value || !has_period))
		rc = fail(r, n,
			  "%s: a policy needs type, value and periodSeconds",
			  what);
	return rc;
}

static int parse_rules(const struct rd *r, yaml_node_t *n, const char *dir,
		       struct gf_hpa_rules *ru)
{
	char what[64];
	snprintf(what, sizeof(what), "behavior.%s", dir);
	int rc = want_map(r, n, what);
	for (yaml_node_pair_t *pr = n->data.mapping.pairs.start;
	     rc == 0 && pr < n->data.mapping.pairs.top; pr++) {
		yaml_node_t *k = node(r, pr->key), *v = node(r, pr->value);
		const char *key = scalar(k);
		if (!key || is_null(v))
			continue;
		if (!strcmp(key, "stabilizationWindowSeconds")) {
			rc = get_int(r, v, "stabilizationWindowSeconds",
				     &ru->window_s);
			ru->has_window = true;
			if (rc == 0 && ru->window_s > GF_HPA_WINDOW_MAX)
				beyond(r, v, "stabilizationWindowSeconds",
				       ru->window_s, GF_HPA_WINDOW_MAX);
		} else if (!strcmp(key, "selectPolicy")) {
			const char *t = scalar(v);
			if (t && !strcmp(t, "Max"))
				ru->select = GF_HPA_SELECT_MAX;
			else if (t && !strcmp(t, "Min"))
				ru->select = GF_HPA_SELECT_MIN;
			else if (t && !strcmp(t, "Disabled"))
				ru->select = GF_HPA_SELECT_DISABLED;
			else
				rc = fail(r, v,
					  "field '%s.selectPolicy': '%.40s' "
					  "is not Max, Min or Disabled",
					  what, t ? t : "");
			ru->has_select = true;
		} else if (!strcmp(key, "policies")) {
			if (v->type != YAML_SEQUENCE_NODE) {
				rc = fail(r, v,
					  "field '%s.policies': expected "
					  "a list",
					  what);
				break;
			}
			ru->has_policies = true;
			ru->npolicies = 0;
			for (yaml_node_item_t *it =
				     v->data.sequence.items.start;
			     rc == 0 && it < v->data.sequence.items.top; it++) {
				if (ru->npolicies == GF_HPA_POLICIES_MAX) {
					rc = fail(r, v,
						  "field '%s.policies': more "
						  "than %d",
						  what, GF_HPA_POLICIES_MAX);
					break;
				}
				rc = parse_policy(
					r, node(r, *it), dir,
					&ru->policies[ru->npolicies++]);
			}
		} else if (!strcmp(key, "tolerance")) {
			rc = get_tolerance(r, v, "tolerance", &ru->tolerance);
			ru->has_tolerance = true;
		} else {
			unknown(r, k, what);
		}
	}
	return rc;
}

static int parse_behavior(const struct rd *r, yaml_node_t *n,
			  struct gf_hpa_spec *s)
{
	int rc = want_map(r, n, "behavior");
	s->behavior = true;
	for (yaml_node_pair_t *pr = n->data.mapping.pairs.start;
	     rc == 0 && pr < n->data.mapping.pairs.top; pr++) {
		yaml_node_t *k = node(r, pr->key), *v = node(r, pr->value);
		const char *key = scalar(k);
		if (!key || is_null(v))
			continue;
		if (!strcmp(key, "scaleUp"))
			rc = parse_rules(r, v, "scaleUp", &s->up);
		else if (!strcmp(key, "scaleDown"))
			rc = parse_rules(r, v, "scaleDown", &s->down);
		else
			unknown(r, k, "behavior");
	}
	return rc;
}

/* metrics[].external.target */
static int parse_target(const struct rd *r, yaml_node_t *n,
			struct gf_hpa_spec *s)
{
	int rc = want_map(r, n, "external.target");
	yaml_node_t *type = NULL, *value = NULL, *avg = NULL;
	for (yaml_node_pair_t *pr = n->data.mapping.pairs.start;
	     rc == 0 && pr < n->data.mapping.pairs.top; pr++) {
		yaml_node_t *k = node(r, pr->key), *v = node(r, pr->value);
		const char *key = scalar(k);
		if (!key || is_null(v))
			continue;
		if (!strcmp(key, "type"))
			type = v;
		else if (!strcmp(key, "value"))
			value = v;
		else if (!strcmp(key, "averageValue"))
			avg = v;
		else if (!strcmp(key, "averageUtilization"))
			rc = fail(r, k,
				  "field 'averageUtilization': External "
				  "metrics take Value or AverageValue");
		else
			unknown(r, k, "external.target");
	}
	if (rc)
		return rc;
	const char *t = scalar(type);
	if (!t)
		return fail(r, n, "external.target: field 'type' missing");
	if (!strcmp(t, "AverageValue")) {
		if (!avg)
			return fail(r, type,
				    "type AverageValue needs 'averageValue'");
	} else if (!strcmp(t, "Value")) {
		if (!value)
			return fail(r, type, "type Value needs 'value'");
	} else {
		return fail(r, type,
			    "field 'type': '%.40s' is not AverageValue or "
			    "Value",
			    t);
	}
	/* the controller tests averageValue first, whatever type says */
	if (avg) {
		s->target = GF_HPA_AVERAGE_VALUE;
		return get_quantity(r, avg, "averageValue", &s->target_milli);
	}
	s->target = GF_HPA_VALUE;
	return get_quantity(r, value, "value", &s->target_milli);
}

static int parse_external(const struct rd *r, yaml_node_t *n,
			  struct gf_as_scaler *out)
{
	int rc = want_map(r, n, "external");
	bool has_target = false;
	for (yaml_node_pair_t *pr = n->data.mapping.pairs.start;
	     rc == 0 && pr < n->data.mapping.pairs.top; pr++) {
		yaml_node_t *k = node(r, pr->key), *v = node(r, pr->value);
		const char *key = scalar(k);
		if (!key || is_null(v))
			continue;
		if (!strcmp(key, "target")) {
			rc = parse_target(r, v, &out->hpa);
			has_target = true;
		} else if (!strcmp(key, "metric")) {
			rc = want_map(r, v, "external.metric");
			for (yaml_node_pair_t *q = v->data.mapping.pairs.start;
			     rc == 0 && q < v->data.mapping.pairs.top; q++) {
				const char *mk = scalar(node(r, q->key));
				if (mk && !strcmp(mk, "name"))
					rc = get_str(r, node(r, q->value),
						     "metric.name", out->metric,
						     sizeof(out->metric));
			}
		} else {
			unknown(r, k, "external");
		}
	}
	if (rc == 0 && !has_target)
		rc = fail(r, n, "external: field 'target' missing");
	return rc;
}

static int parse_metrics(const struct rd *r, yaml_node_t *n,
			 struct gf_as_scaler *out)
{
	if (n->type != YAML_SEQUENCE_NODE)
		return fail(r, n, "field 'metrics': expected a list");
	int count = (int)(n->data.sequence.items.top -
			  n->data.sequence.items.start);
	if (count != 1)
		return fail(r, n,
			    "field 'metrics': %d metrics; this autoscaler "
			    "reads exactly one (type External)",
			    count);
	yaml_node_t *m = node(r, *n->data.sequence.items.start);
	int rc = want_map(r, m, "metrics[0]");
	yaml_node_t *type = NULL, *ext = NULL;
	for (yaml_node_pair_t *pr = m->data.mapping.pairs.start;
	     rc == 0 && pr < m->data.mapping.pairs.top; pr++) {
		yaml_node_t *k = node(r, pr->key), *v = node(r, pr->value);
		const char *key = scalar(k);
		if (!key || is_null(v))
			continue;
		if (!strcmp(key, "type"))
			type = v;
		else if (!strcmp(key, "external"))
			ext = v;
		else if (strcmp(key, "object") && strcmp(key, "pods") &&
			 strcmp(key, "resource") &&
			 strcmp(key, "containerResource"))
			unknown(r, k, "metrics[0]");
	}
	if (rc)
		return rc;
	const char *t = scalar(type);
	if (!t || strcmp(t, "External"))
		return fail(r, type ? type : m,
			    "metrics[0].type '%.40s': this autoscaler reads "
			    "an External metric",
			    t ? t : "");
	if (!ext)
		return fail(r, m, "metrics[0]: field 'external' missing");
	return parse_external(r, ext, out);
}

static int parse_hpa_spec(const struct rd *r, yaml_node_t *n,
			  struct gf_as_scaler *out)
{
	int rc = want_map(r, n, "spec");
	bool has_max = false, has_metrics = false;
	for (yaml_node_pair_t *pr = n->data.mapping.pairs.start;
	     rc == 0 && pr < n->data.mapping.pairs.top; pr++) {
		yaml_node_t *k = node(r, pr->key), *v = node(r, pr->value);
		const char *key = scalar(k);
		if (!key || is_null(v))
			continue;
		if (!strcmp(key, "minReplicas")) {
			rc = get_int(r, v, "minReplicas",
				     &out->hpa.min_replicas);
		} else if (!strcmp(key, "maxReplicas")) {
			rc = get_int(r, v, "maxReplicas",
				     &out->hpa.max_replicas);
			has_max = true;
		} else if (!strcmp(key, "metrics")) {
			rc = parse_metrics(r, v, out);
			has_metrics = true;
		} else if (!strcmp(key, "behavior")) {
			rc = parse_behavior(r, v, &out->hpa);
		} else if (strcmp(key, "scaleTargetRef")) {
			unknown(r, k, "spec");
		}
	}
	if (rc == 0 && !has_max)
		rc = fail(r, n, "spec: field 'maxReplicas' missing");
	if (rc == 0 && !has_metrics)
		rc = fail(r, n,
			  "spec: field 'metrics' missing (one External "
			  "metric)");
	return rc;
}

/* A KEDA metadata value: a string holding a float (strconv.ParseFloat),
 * made milli-units as KEDA does (int64(v * 1000)). */
static int keda_float(const struct rd *r, const yaml_node_t *v,
		      const char *what, int64_t *milli)
{
	const char *s = scalar(v);
	char *end;
	errno = 0;
	double x = s && *s ? strtod(s, &end) : NAN;
	if (!s || !*s || *end || errno || !isfinite(x) || x < 0 || x > 9e15)
		return fail(r, v, "field '%s': '%.40s' is not a number >= 0",
			    what, s ? s : "");
	*milli = (int64_t)(x * 1000.0);
	return 0;
}

static int parse_trigger(const struct rd *r, yaml_node_t *n,
			 struct gf_as_scaler *out)
{
	int rc = want_map(r, n, "triggers[0]");
	yaml_node_t *md = NULL;
	bool has_threshold = false;
	for (yaml_node_pair_t *pr = n->data.mapping.pairs.start;
	     rc == 0 && pr < n->data.mapping.pairs.top; pr++) {
		yaml_node_t *k = node(r, pr->key), *v = node(r, pr->value);
		const char *key = scalar(k);
		if (!key || is_null(v))
			continue;
		if (!strcmp(key, "type")) {
			const char *t = scalar(v);
			if (!t || strcmp(t, "prometheus"))
				rc = fail(r, v,
					  "triggers[0].type '%.40s': this "
					  "autoscaler reads a prometheus "
					  "trigger",
					  t ? t : "");
		} else if (!strcmp(key, "metricType")) {
			const char *t = scalar(v);
			if (t && !strcmp(t, "AverageValue"))
				out->keda.hpa.target = GF_HPA_AVERAGE_VALUE;
			else if (t && !strcmp(t, "Value"))
				out->keda.hpa.target = GF_HPA_VALUE;
			else
				rc = fail(r, v,
					  "field 'metricType': '%.40s' is not "
					  "AverageValue or Value",
					  t ? t : "");
		} else if (!strcmp(key, "metadata")) {
			md = v;
		} else if (strcmp(key, "name") &&
			   strcmp(key, "useCachedMetrics") &&
			   strcmp(key, "authenticationRef")) {
			unknown(r, k, "triggers[0]");
		}
	}
	if (rc)
		return rc;
	if (!md)
		return fail(r, n, "triggers[0]: field 'metadata' missing");
	rc = want_map(r, md, "triggers[0].metadata");
	for (yaml_node_pair_t *pr = md->data.mapping.pairs.start;
	     rc == 0 && pr < md->data.mapping.pairs.top; pr++) {
		yaml_node_t *k = node(r, pr->key), *v = node(r, pr->value);
		const char *key = scalar(k);
		if (!key || is_null(v))
			continue;
		if (!strcmp(key, "threshold")) {
			rc = keda_float(r, v, "threshold",
					&out->keda.hpa.target_milli);
			has_threshold = true;
		} else if (!strcmp(key, "activationThreshold")) {
			rc = keda_float(r, v, "activationThreshold",
					&out->keda.activation_milli);
		} else if (!strcmp(key, "serverAddress")) {
			rc = get_str(r, v, "serverAddress", out->server,
				     sizeof(out->server));
		} else if (!strcmp(key, "query")) {
			rc = get_str(r, v, "query", out->query,
				     sizeof(out->query));
		}
	}
	if (rc == 0 && !has_threshold)
		rc = fail(r, md,
			  "triggers[0].metadata: field 'threshold' "
			  "missing");
	return rc;
}

static int parse_advanced(const struct rd *r, yaml_node_t *n,
			  struct gf_as_scaler *out)
{
	int rc = want_map(r, n, "advanced");
	for (yaml_node_pair_t *pr = n->data.mapping.pairs.start;
	     rc == 0 && pr < n->data.mapping.pairs.top; pr++) {
		yaml_node_t *k = node(r, pr->key), *v = node(r, pr->value);
		const char *key = scalar(k);
		if (!key || is_null(v))
			continue;
		if (!strcmp(key, "horizontalPodAutoscalerConfig")) {
			rc = want_map(r, v, "horizontalPodAutoscalerConfig");
			for (yaml_node_pair_t *q = v->data.mapping.pairs.start;
			     rc == 0 && q < v->data.mapping.pairs.top; q++) {
				const char *hk = scalar(node(r, q->key));
				yaml_node_t *hv = node(r, q->value);
				if (hk && !strcmp(hk, "behavior") &&
				    !is_null(hv))
					rc = parse_behavior(r, hv,
							    &out->keda.hpa);
			}
		} else if (!strcmp(key, "scalingModifiers")) {
			rc = fail(r, k,
				  "advanced.scalingModifiers: not "
				  "supported");
		} else if (strcmp(key, "restoreToOriginalReplicaCount")) {
			unknown(r, k, "advanced");
		}
	}
	return rc;
}

static int parse_keda_spec(const struct rd *r, yaml_node_t *n,
			   struct gf_as_scaler *out)
{
	int rc = want_map(r, n, "spec");
	bool has_trigger = false;
	struct gf_keda_spec *k = &out->keda;
	for (yaml_node_pair_t *pr = n->data.mapping.pairs.start;
	     rc == 0 && pr < n->data.mapping.pairs.top; pr++) {
		yaml_node_t *kn = node(r, pr->key), *v = node(r, pr->value);
		const char *key = scalar(kn);
		if (!key || is_null(v))
			continue;
		if (!strcmp(key, "pollingInterval"))
			rc = get_int(r, v, key, &k->polling_s);
		else if (!strcmp(key, "cooldownPeriod"))
			rc = get_int(r, v, key, &k->cooldown_s);
		else if (!strcmp(key, "initialCooldownPeriod"))
			rc = get_int(r, v, key, &k->initial_cooldown_s);
		else if (!strcmp(key, "minReplicaCount"))
			rc = get_int(r, v, key, &k->min_replicas);
		else if (!strcmp(key, "maxReplicaCount"))
			rc = get_int(r, v, key, &k->max_replicas);
		else if (!strcmp(key, "idleReplicaCount")) {
			int32_t idle;
			rc = get_int(r, v, key, &idle);
			if (rc == 0 && idle != 0)
				rc = fail(r, v,
					  "field 'idleReplicaCount': only 0 "
					  "works (KEDA's documentation)");
		} else if (!strcmp(key, "fallback")) {
			rc = want_map(r, v, "fallback");
			for (yaml_node_pair_t *q = v->data.mapping.pairs.start;
			     rc == 0 && q < v->data.mapping.pairs.top; q++) {
				const char *fk = scalar(node(r, q->key));
				yaml_node_t *fv = node(r, q->value);
				if (fk && !strcmp(fk, "failureThreshold"))
					rc = get_int(r, fv, fk,
						     &k->fallback_failures);
				else if (fk && !strcmp(fk, "replicas"))
					rc = get_int(r, fv, fk,
						     &k->fallback_replicas);
			}
		} else if (!strcmp(key, "advanced")) {
			rc = parse_advanced(r, v, out);
		} else if (!strcmp(key, "triggers")) {
			if (v->type != YAML_SEQUENCE_NODE ||
			    v->data.sequence.items.top -
					    v->data.sequence.items.start !=
				    1) {
				rc = fail(r, v,
					  "field 'triggers': this autoscaler "
					  "reads exactly one trigger");
				break;
			}
			rc = parse_trigger(
				r, node(r, *v->data.sequence.items.start), out);
			has_trigger = true;
		} else if (strcmp(key, "scaleTargetRef")) {
			unknown(r, kn, "spec");
		}
	}
	if (rc == 0 && !has_trigger)
		rc = fail(r, n, "spec: field 'triggers' missing");
	return rc;
}

static int parse_root(const struct rd *r, yaml_node_t *root,
		      struct gf_as_scaler *out)
{
	if (!root || root->type != YAML_MAPPING_NODE)
		return fail(r, root,
			    "expected a Kubernetes object (a mapping)");
	yaml_node_t *kind = NULL, *api = NULL, *spec = NULL;
	int rc = 0;
	for (yaml_node_pair_t *pr = root->data.mapping.pairs.start;
	     rc == 0 && pr < root->data.mapping.pairs.top; pr++) {
		yaml_node_t *k = node(r, pr->key), *v = node(r, pr->value);
		const char *key = scalar(k);
		if (!key)
			continue;
		if (!strcmp(key, "kind"))
			kind = v;
		else if (!strcmp(key, "apiVersion"))
			api = v;
		else if (!strcmp(key, "spec"))
			spec = v;
		else if (!strcmp(key, "metadata") &&
			 v->type == YAML_MAPPING_NODE) {
			for (yaml_node_pair_t *q = v->data.mapping.pairs.start;
			     rc == 0 && q < v->data.mapping.pairs.top; q++) {
				const char *mk = scalar(node(r, q->key));
				if (mk && !strcmp(mk, "name"))
					rc = get_str(r, node(r, q->value),
						     "metadata.name", out->name,
						     sizeof(out->name));
			}
		} else if (strcmp(key, "metadata") && strcmp(key, "status")) {
			unknown(r, k, "the object");
		}
	}
	if (rc)
		return rc;
	const char *ks = scalar(kind), *as = scalar(api);
	if (!ks)
		return fail(r, root, "field 'kind' missing");
	if (!spec || is_null(spec))
		return fail(r, root, "field 'spec' missing");
	if (!strcmp(ks, "HorizontalPodAutoscaler")) {
		if (!as || strcmp(as, "autoscaling/v2"))
			return fail(r, api ? api : root,
				    "apiVersion '%.40s': expected "
				    "autoscaling/v2",
				    as ? as : "");
		out->kind = GF_AS_HPA;
		return parse_hpa_spec(r, spec, out);
	}
	if (!strcmp(ks, "ScaledObject")) {
		if (!as || strcmp(as, "keda.sh/v1alpha1"))
			return fail(r, api ? api : root,
				    "apiVersion '%.40s': expected "
				    "keda.sh/v1alpha1",
				    as ? as : "");
		out->kind = GF_AS_KEDA;
		return parse_keda_spec(r, spec, out);
	}
	return fail(r, kind,
		    "kind '%.40s': expected HorizontalPodAutoscaler or "
		    "ScaledObject",
		    ks);
}

/* Apply the spec's defaulting and validation; errors name the spec. */
static int finish(const struct rd *r, yaml_node_t *root,
		  struct gf_as_scaler *out)
{
	struct gf_err e2;
	gf_err_clear(&e2);
	int rc;
	if (out->kind == GF_AS_HPA) {
		struct gf_hpa_spec s = out->hpa;
		rc = gf_hpa_spec_finish(&s, &e2);
	} else {
		struct gf_keda k;
		rc = gf_keda_init(&k, &out->keda, 0, &e2);
		if (rc == 0)
			gf_keda_release(&k);
	}
	if (rc)
		return gf_err_set(r->e, GF_EINVAL, "%s:%d: spec: %s", r->path,
				  line_of(root), e2.msg);
	return 0;
}

int gf_as_parse_manifest(const char *text, size_t len, const char *name,
			 struct gf_as_scaler *out, struct gf_err *e)
{
	memset(out, 0, sizeof(*out));
	gf_hpa_spec_init(&out->hpa);
	gf_keda_spec_init(&out->keda);
	yaml_parser_t p;
	yaml_document_t doc;
	if (!yaml_parser_initialize(&p))
		return gf_err_set(e, -ENOMEM, "%s: cannot start libyaml", name);
	yaml_parser_set_input_string(&p, (const unsigned char *)text, len);
	if (!yaml_parser_load(&p, &doc)) {
		int rc = gf_err_set(e, GF_EPARSE, "%s:%d: %s", name,
				    (int)p.problem_mark.line + 1,
				    p.problem ? p.problem : "not YAML");
		yaml_parser_delete(&p);
		return rc;
	}
	yaml_parser_delete(&p);
	struct rd r = { &doc, name, e, out };
	yaml_node_t *root = yaml_document_get_root_node(&doc);
	int rc = parse_root(&r, root, out);
	if (rc == 0)
		rc = finish(&r, root, out);
	yaml_document_delete(&doc);
	return rc;
}

int gf_as_read_manifest(const char *path, struct gf_as_scaler *out,
			struct gf_err *e)
{
	char *text;
	size_t len;
	int rc = gf_file_read(path, GF_AS_MANIFEST_MAX, &text, &len, e);
	if (rc)
		return rc;
	rc = gf_as_parse_manifest(text, len, path, out, e);
	gf_free(text);
	return rc;
}
