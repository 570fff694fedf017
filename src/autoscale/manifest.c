/*
 * manifest.c - an autoscaling/v2 HorizontalPodAutoscaler or a KEDA
 * ScaledObject, read from YAML through util/yaml (nodes carry their
 * line), into a gf_as_scaler: the root and the HPA here, the
 * ScaledObject's spec in manifest_keda.c (shared parts: manifest_impl.h).
 *
 * Field names are the upstream ones: kubernetes/api autoscaling/v2
 * types.go (spec.minReplicas, maxReplicas, metrics[].external.metric,
 * .target.{type,value,averageValue}, behavior.scaleUp|scaleDown
 * .{stabilizationWindowSeconds,selectPolicy,policies[].{type,value,
 * periodSeconds},tolerance}).  A null value is an absent field, as the
 * API's JSON decoding makes it (so `behavior: null` is the legacy path).
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "autoscale/autoscale.h"
#include "autoscale/manifest_impl.h"
#include "util/file.h"
#include "util/fmt.h"
#include "util/mem.h"
#include "util/yaml.h"

void gf__as_warn(const struct rd *r, const node_t *n, const char *fmt, ...)
{
	struct gf_as_scaler *o = r->out;
	if (o->nwarn < 8) {
		char msg[256];
		va_list ap;
		va_start(ap, fmt);
		gf_vnote(msg, sizeof(msg), fmt, ap);
		va_end(ap);
		gf_note(o->warn[o->nwarn], sizeof(o->warn[0]), "%s:%d: %s",
			gf_yaml_name(r->yr.y), gf_yn_line(n), msg);
	}
	o->nwarn++;
}

/* Each pair of mapping n whose value is not null, handed to fn. */
int gf__as_walk(const struct rd *r, const node_t *n, const char *what,
		field_fn fn, void *obj)
{
	if (gf_yn_type(n) != GF_YN_MAP)
		return fail(r, n, "field '%s': expected a mapping", what);
	const node_t *k, *v;
	for (size_t i = 0; gf_yn_pair(n, i, &k, &v); i++) {
		const char *key = gf_yn_str(k);
		if (!key || gf_yn_null(v))
			continue;
		int rc = fn(r, key, k, v, obj);
		if (rc == FIELD_UNKNOWN)
			gf__as_warn(r, k,
				    "unknown field '%.60s' in %s: ignored", key,
				    what);
		else if (rc)
			return rc;
	}
	return 0;
}

int gf__as_get_int(const struct rd *r, const node_t *n, const char *what,
		   int32_t *out)
{
	long long v;
	int rc = gf_yr_int(&r->yr, n, what, INT32_MIN, INT32_MAX, &v);
	if (rc == 0)
		*out = (int32_t)v;
	return rc;
}

static int get_quantity(const struct rd *r, const node_t *n, const char *what,
			int64_t *milli)
{
	const char *s = gf_yn_str(n);
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
static int get_tolerance(const struct rd *r, const node_t *n, const char *what,
			 double *out)
{
	const char *s = gf_yn_str(n);
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

/* A 32-bit integer the API server caps at max: a larger one is warned
 * about and used as it is (the decision can still take it). */
static int get_capped(const struct rd *r, const node_t *n, const char *what,
		      int32_t max, int32_t *out)
{
	int rc = gf__as_get_int(r, n, what, out);
	if (rc == 0 && *out > max)
		gf__as_warn(
			r, n,
			"%s %d: the API server takes at most %d (used as it "
			"is)",
			what, *out, max);
	return rc;
}

/* s is one of names (a NULL-terminated list): its index, else -1. */
int gf__as_one_of(const char *s, const char *const *names)
{
	for (int i = 0; s && names[i]; i++)
		if (!strcmp(s, names[i]))
			return i;
	return -1;
}

struct policy_ctx {
	struct gf_hpa_policy *p;
	const char *what;
	bool type, value, period;
};

static int policy_field(const struct rd *r, const char *key, const node_t *k,
			const node_t *v, void *obj)
{
	(void)k;
	struct policy_ctx *x = obj;
	if (!strcmp(key, "type")) {
		static const char *const types[] = { "Pods", "Percent", NULL };
		int t = gf__as_one_of(gf_yn_str(v), types);
		x->type = true;
		x->p->type = t == 1 ? GF_HPA_PERCENT : GF_HPA_PODS;
		if (t < 0)
			return fail(r, v,
				    "field '%s.type': '%.40s' is not Pods or "
				    "Percent",
				    x->what, gf_yn_str(v) ? gf_yn_str(v) : "");
		return 0;
	}
	if (!strcmp(key, "value")) {
		x->value = true;
		return gf__as_get_int(r, v, "value", &x->p->value);
	}
	if (!strcmp(key, "periodSeconds")) {
		x->period = true;
		return get_capped(r, v, "periodSeconds", GF_HPA_PERIOD_MAX,
				  &x->p->period_s);
	}
	return FIELD_UNKNOWN;
}

static int parse_policy(const struct rd *r, const node_t *n, const char *dir,
			struct gf_hpa_policy *p)
{
	char what[96];
	gf_note(what, sizeof(what), "behavior.%s.policies[]", dir);
	struct policy_ctx x = { p, what, false, false, false };
	int rc = gf__as_walk(r, n, what, policy_field, &x);
	if (rc == 0 && (!x.type || !x.value || !x.period))
		rc = fail(r, n,
			  "%s: a policy needs type, value and periodSeconds",
			  what);
	return rc;
}

struct rules_ctx {
	struct gf_hpa_rules *ru;
	const char *dir, *what;
};

static int parse_policies(const struct rd *r, const node_t *v,
			  const struct rules_ctx *x)
{
	struct gf_hpa_rules *ru = x->ru;
	if (gf_yn_type(v) != GF_YN_SEQ)
		return fail(r, v, "field '%s.policies': expected a list",
			    x->what);
	ru->has_policies = true;
	ru->npolicies = 0;
	for (size_t i = 0; i < gf_yn_len(v); i++) {
		if (ru->npolicies == GF_HPA_POLICIES_MAX)
			return fail(r, v, "field '%s.policies': more than %d",
				    x->what, GF_HPA_POLICIES_MAX);
		int rc = parse_policy(r, gf_yn_at(v, i), x->dir,
				      &ru->policies[ru->npolicies++]);
		if (rc)
			return rc;
	}
	return 0;
}

static int rules_field(const struct rd *r, const char *key, const node_t *k,
		       const node_t *v, void *obj)
{
	(void)k;
	struct rules_ctx *x = obj;
	struct gf_hpa_rules *ru = x->ru;
	if (!strcmp(key, "stabilizationWindowSeconds")) {
		ru->has_window = true;
		return get_capped(r, v, key, GF_HPA_WINDOW_MAX, &ru->window_s);
	}
	if (!strcmp(key, "selectPolicy")) {
		static const char *const sel[] = { "Max", "Min", "Disabled",
						   NULL };
		static const enum gf_hpa_select to[] = {
			GF_HPA_SELECT_MAX, GF_HPA_SELECT_MIN,
			GF_HPA_SELECT_DISABLED
		};
		int s = gf__as_one_of(gf_yn_str(v), sel);
		ru->has_select = true;
		if (s < 0)
			return fail(r, v,
				    "field '%s.selectPolicy': '%.40s' is not "
				    "Max, Min or Disabled",
				    x->what, gf_yn_str(v) ? gf_yn_str(v) : "");
		ru->select = to[s];
		return 0;
	}
	if (!strcmp(key, "policies"))
		return parse_policies(r, v, x);
	if (!strcmp(key, "tolerance")) {
		ru->has_tolerance = true;
		return get_tolerance(r, v, key, &ru->tolerance);
	}
	return FIELD_UNKNOWN;
}

static int behavior_field(const struct rd *r, const char *key, const node_t *k,
			  const node_t *v, void *obj)
{
	(void)k;
	struct gf_hpa_spec *s = obj;
	bool up = !strcmp(key, "scaleUp");
	if (!up && strcmp(key, "scaleDown"))
		return FIELD_UNKNOWN;
	char what[64];
	gf_note(what, sizeof(what), "behavior.%s", key);
	struct rules_ctx x = { up ? &s->up : &s->down, key, what };
	return gf__as_walk(r, v, what, rules_field, &x);
}

int gf__as_parse_behavior(const struct rd *r, const node_t *n,
			  struct gf_hpa_spec *s)
{
	s->behavior = true;
	return gf__as_walk(r, n, "behavior", behavior_field, s);
}

struct target_ctx {
	const node_t *type, *value, *avg, *util;
	bool per_pod; /* Pods or Resource: no Value target */
};

static int target_field(const struct rd *r, const char *key, const node_t *k,
			const node_t *v, void *obj)
{
	struct target_ctx *x = obj;
	if (!strcmp(key, "type"))
		x->type = v;
	else if (!strcmp(key, "value"))
		x->value = v;
	else if (!strcmp(key, "averageValue"))
		x->avg = v;
	else if (!strcmp(key, "averageUtilization") && x->per_pod)
		x->util = v;
	else if (!strcmp(key, "averageUtilization"))
		return fail(r, k,
			    "field 'averageUtilization': External "
			    "metrics take Value or AverageValue");
	else
		return FIELD_UNKNOWN;
	return 0;
}

/* The target's type against the fields given. */
static int target_type(const struct rd *r, const node_t *n, const char *what,
		       const struct target_ctx *x)
{
	const char *t = gf_yn_str(x->type);
	if (!t)
		return fail(r, n, "%s: field 'type' missing", what);
	if (!strcmp(t, "AverageValue")) {
		if (!x->avg)
			return fail(r, x->type,
				    "type AverageValue needs 'averageValue'");
	} else if (!strcmp(t, "Value") && !x->per_pod) {
		if (!x->value)
			return fail(r, x->type, "type Value needs 'value'");
	} else if (!strcmp(t, "Utilization") && x->per_pod) {
		if (!x->util && !x->avg)
			return fail(r, x->type,
				    "type Utilization needs "
				    "'averageUtilization'");
	} else {
		return fail(r, x->type, "field 'type': '%.40s' is not %s", t,
			    x->per_pod ? "AverageValue or Utilization"
				       : "AverageValue or Value");
	}
	return 0;
}

/* metrics[].{external,pods,resource}.target into m (kind set) */
static int parse_target(const struct rd *r, const node_t *n, const char *what,
			struct gf_hpa_metric *m)
{
	struct target_ctx x = { NULL, NULL, NULL, NULL,
				m->kind == GF_HPA_PER_POD };
	int rc = gf__as_walk(r, n, what, target_field, &x);
	if (rc == 0)
		rc = target_type(r, n, what, &x);
	if (rc)
		return rc;
	/* the controller tests averageValue first, whatever type says */
	if (x.avg) {
		m->target = GF_HPA_AVERAGE_VALUE;
		return get_quantity(r, x.avg, "averageValue", &m->target_milli);
	}
	if (x.util) {
		/* percent of the request; samples give percents */
		int32_t pct = 0;
		m->target = GF_HPA_AVERAGE_VALUE;
		m->kind = GF_HPA_UTILIZATION;
		rc = gf__as_get_int(r, x.util, "averageUtilization", &pct);
		if (rc == 0 && pct <= 0)
			rc = fail(r, x.util,
				  "field 'averageUtilization': %d: must be "
				  "greater than zero",
				  pct);
		m->target_milli = (int64_t)pct * 1000;
		return rc;
	}
	m->target = GF_HPA_VALUE;
	return get_quantity(r, x.value, "value", &m->target_milli);
}

/* The string at key name of mapping n (when there is one) into out. */
static int name_of(const struct rd *r, const node_t *n, const char *what,
		   char *out, size_t size)
{
	const node_t *v = gf_yn_get(n, "name");
	return v ? gf_yr_str(&r->yr, v, what, 0, out, size) : 0;
}

/* One metrics[] entry being read: its kind's mapping and what it names. */
struct source_ctx {
	struct gf_hpa_metric *m;
	const char *what; /* "external", "pods" or "resource" */
	struct gf_as_metric_ref *ref;
	bool target;
};

/* metric.selector.matchLabels: each pair a label filter. */
static int match_label(const struct rd *r, const char *key, const node_t *k,
		       const node_t *v, void *obj)
{
	struct gf_as_metric_ref *ref = obj;
	if (ref->nlabels >= GF_AS_LABELS_MAX)
		return fail(r, k,
			    "field 'metric.selector.matchLabels': more than "
			    "%d labels",
			    GF_AS_LABELS_MAX);
	char(*row)[128] = ref->labels[ref->nlabels];
	if (gf_fmt(row[0], sizeof(row[0]), "%s", key))
		return fail(r, k,
			    "field 'metric.selector.matchLabels': label "
			    "'%.40s...' is over %zu bytes",
			    key, sizeof(row[0]) - 1);
	int rc = gf_yr_str(&r->yr, v, "metric.selector.matchLabels", 0, row[1],
			   sizeof(row[1]));
	if (rc == 0)
		ref->nlabels++;
	return rc;
}

static int selector_field(const struct rd *r, const char *key, const node_t *k,
			  const node_t *v, void *obj)
{
	(void)k;
	struct gf_as_metric_ref *ref = obj;
	if (!strcmp(key, "matchLabels"))
		return gf__as_walk(r, v, "metric.selector.matchLabels",
				   match_label, ref);
	if (!strcmp(key, "matchExpressions")) {
		ref->expressions = gf_yn_len(v) > 0;
		return 0;
	}
	return FIELD_UNKNOWN;
}

/* metric (MetricIdentifier): name and selector */
static int metric_id_field(const struct rd *r, const char *key, const node_t *k,
			   const node_t *v, void *obj)
{
	(void)k;
	struct gf_as_metric_ref *ref = obj;
	if (!strcmp(key, "name"))
		return gf_yr_str(&r->yr, v, "metric.name", 0, ref->name,
				 sizeof(ref->name));
	if (!strcmp(key, "selector"))
		return gf__as_walk(r, v, "metric.selector", selector_field,
				   ref);
	return FIELD_UNKNOWN;
}

static int source_field(const struct rd *r, const char *key, const node_t *k,
			const node_t *v, void *obj)
{
	(void)k;
	struct source_ctx *x = obj;
	char what[32];
	if (!strcmp(key, "target")) {
		x->target = true;
		gf_note(what, sizeof(what), "%s.target", x->what);
		return parse_target(r, v, what, x->m);
	}
	if (!strcmp(key, "metric") && strcmp(x->what, "resource")) {
		gf_note(what, sizeof(what), "%s.metric", x->what);
		return gf__as_walk(r, v, what, metric_id_field, x->ref);
	}
	if (!strcmp(key, "name") && !strcmp(x->what, "resource"))
		return gf_yr_str(&r->yr, v, "resource.name", 0, x->ref->name,
				 sizeof(x->ref->name));
	return FIELD_UNKNOWN;
}

struct metric_ctx {
	const node_t *type, *ext, *pods, *res;
};

static int metric_field(const struct rd *r, const char *key, const node_t *k,
			const node_t *v, void *obj)
{
	(void)r;
	(void)k;
	struct metric_ctx *x = obj;
	if (!strcmp(key, "type"))
		x->type = v;
	else if (!strcmp(key, "external"))
		x->ext = v;
	else if (!strcmp(key, "pods"))
		x->pods = v;
	else if (!strcmp(key, "resource"))
		x->res = v;
	else if (!gf_yaml_known(key, "object, containerResource"))
		return FIELD_UNKNOWN;
	return 0;
}

/* metrics[i] into m, what it names into out->metrics[i] (the first
 * entry's name also into out->metric). */
static int parse_metric(const struct rd *r, const node_t *n, size_t i,
			struct gf_hpa_metric *m, struct gf_as_scaler *out)
{
	char what[32];
	gf_note(what, sizeof(what), "metrics[%zu]", i);
	struct metric_ctx x = { NULL, NULL, NULL, NULL };
	int rc = gf__as_walk(r, n, what, metric_field, &x);
	if (rc)
		return rc;
	const char *t = gf_yn_str(x.type);
	static const char *const kinds[] = { "External", "Pods", "Resource",
					     NULL };
	const node_t *src[] = { x.ext, x.pods, x.res };
	static const char *const keys[] = { "external", "pods", "resource" };
	int k = t ? gf__as_one_of(t, kinds) : -1;
	if (k < 0)
		return fail(r, x.type ? x.type : n,
			    "%s.type '%.40s': this autoscaler reads External, "
			    "Pods and Resource metrics",
			    what, t ? t : "");
	if (!src[k])
		return fail(r, n, "%s: field '%s' missing", what, keys[k]);
	m->kind = k == 0 ? GF_HPA_EXTERNAL : GF_HPA_PER_POD;
	struct gf_as_metric_ref *ref = &out->metrics[i];
	memset(ref, 0, sizeof(*ref));
	ref->type = (enum gf_as_metric_type)k;
	ref->line = gf_yn_line(n);
	struct source_ctx sx = { m, keys[k], ref, false };
	rc = gf__as_walk(r, src[k], keys[k], source_field, &sx);
	if (rc == 0 && !sx.target)
		rc = fail(r, src[k], "%s: field 'target' missing", keys[k]);
	if (rc == 0 && i == 0)
		gf_note(out->metric, sizeof(out->metric), "%s", ref->name);
	return rc;
}

/* spec.metrics: the first into the spec's own fields, the others into
 * its more[] (computeReplicasForMetrics takes the largest proposal). */
static int parse_metrics(const struct rd *r, const node_t *n,
			 struct gf_as_scaler *out)
{
	if (gf_yn_type(n) != GF_YN_SEQ)
		return fail(r, n, "field 'metrics': expected a list");
	size_t len = gf_yn_len(n);
	if (len < 1 || len > GF_HPA_METRICS_MAX)
		return fail(r, n,
			    "field 'metrics': %zu metrics; this autoscaler "
			    "reads 1 to %d",
			    len, GF_HPA_METRICS_MAX);
	struct gf_hpa_spec *s = &out->hpa;
	for (size_t i = 0; i < len; i++) {
		struct gf_hpa_metric m = { GF_HPA_EXTERNAL,
					   GF_HPA_AVERAGE_VALUE, 0 };
		int rc = parse_metric(r, gf_yn_at(n, i), i, &m, out);
		if (rc)
			return rc;
		if (i == 0) {
			s->kind = m.kind;
			s->target = m.target;
			s->target_milli = m.target_milli;
		} else {
			s->more[i - 1] = m;
		}
	}
	s->nmore = (int)len - 1;
	out->nmetrics = (int)len;
	return 0;
}

static int hpa_field(const struct rd *r, const char *key, const node_t *k,
		     const node_t *v, void *obj)
{
	(void)k;
	struct spec_ctx *x = obj;
	struct gf_hpa_spec *s = &x->out->hpa;
	if (!strcmp(key, "minReplicas"))
		return gf__as_get_int(r, v, key, &s->min_replicas);
	if (!strcmp(key, "maxReplicas")) {
		x->max = true;
		return gf__as_get_int(r, v, key, &s->max_replicas);
	}
	if (!strcmp(key, "metrics")) {
		x->metrics = true;
		return parse_metrics(r, v, x->out);
	}
	if (!strcmp(key, "behavior"))
		return gf__as_parse_behavior(r, v, s);
	return strcmp(key, "scaleTargetRef") ? FIELD_UNKNOWN : 0;
}

static int parse_hpa_spec(const struct rd *r, const node_t *n,
			  struct gf_as_scaler *out)
{
	struct spec_ctx x = { out, false, false, false };
	int rc = gf__as_walk(r, n, "spec", hpa_field, &x);
	if (rc == 0 && !x.max)
		rc = fail(r, n, "spec: field 'maxReplicas' missing");
	if (rc == 0 && !x.metrics)
		rc = fail(r, n,
			  "spec: field 'metrics' missing (one External "
			  "metric)");
	return rc;
}

/* apiVersion must be want for this kind. */
static int want_api(const struct rd *r, const node_t *root, const node_t *api,
		    const char *want)
{
	const char *as = gf_yn_str(api);
	if (!as || strcmp(as, want))
		return fail(r, api ? api : root,
			    "apiVersion '%.40s': expected %s", as ? as : "",
			    want);
	return 0;
}

static int parse_root(const struct rd *r, const node_t *root,
		      struct gf_as_scaler *out)
{
	if (gf_yn_type(root) != GF_YN_MAP)
		return fail(r, root,
			    "expected a Kubernetes object (a mapping)");
	const node_t *k, *v;
	for (size_t i = 0; gf_yn_pair(root, i, &k, &v); i++) {
		const char *key = gf_yn_str(k);
		if (key && !gf_yaml_known(key, "kind, apiVersion, spec, "
					       "metadata, status"))
			gf__as_warn(r, k,
				    "unknown field '%.60s' in the object: "
				    "ignored",
				    key);
	}
	const node_t *kind = gf_yn_get(root, "kind");
	const node_t *api = gf_yn_get(root, "apiVersion");
	const node_t *spec = gf_yn_get(root, "spec");
	const node_t *md = gf_yn_get(root, "metadata");
	int rc = gf_yn_type(md) == GF_YN_MAP
			 ? name_of(r, md, "metadata.name", out->name,
				   sizeof(out->name))
			 : 0;
	if (rc)
		return rc;
	const char *ks = gf_yn_str(kind);
	if (!ks)
		return fail(r, root, "field 'kind' missing");
	if (gf_yn_null(spec))
		return fail(r, root, "field 'spec' missing");
	if (!strcmp(ks, "HorizontalPodAutoscaler")) {
		out->kind = GF_AS_HPA;
		rc = want_api(r, root, api, "autoscaling/v2");
		return rc ? rc : parse_hpa_spec(r, spec, out);
	}
	if (!strcmp(ks, "ScaledObject")) {
		out->kind = GF_AS_KEDA;
		rc = want_api(r, root, api, "keda.sh/v1alpha1");
		if (rc == 0 && gf_yn_type(md) == GF_YN_MAP)
			rc = gf__as_parse_annotations(r, md, out);
		return rc ? rc : gf__as_parse_keda_spec(r, spec, out);
	}
	return fail(r, kind,
		    "kind '%.40s': expected HorizontalPodAutoscaler or "
		    "ScaledObject",
		    ks);
}

/* Apply the spec's defaulting and validation; errors name the spec. */
static int finish(const struct rd *r, const node_t *root,
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
		return gf_err_set(r->yr.e, GF_EINVAL, "%s:%d: spec: %s",
				  gf_yaml_name(r->yr.y), gf_yn_line(root),
				  e2.msg);
	return 0;
}

int gf_as_parse_manifest(const char *text, size_t len, const char *name,
			 struct gf_as_scaler *out, struct gf_err *e)
{
	memset(out, 0, sizeof(*out));
	gf_hpa_spec_init(&out->hpa);
	gf_keda_spec_init(&out->keda);
	struct gf_yaml *y;
	int rc = gf_yaml_parse(text, len, name, 0, &y, e);
	if (rc)
		return rc;
	struct rd r = { { y, e }, out };
	const node_t *root = gf_yaml_root(y);
	rc = parse_root(&r, root, out);
	if (rc == 0)
		rc = finish(&r, root, out);
	gf_yaml_free(y);
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
