/*
 * autoscale_render.c - the manifests that make Kubernetes do what `gpufleet
 * autoscale` does: a KEDA ScaledObject with a prometheus trigger on the
 * queue depth, and an autoscaling/v2 HorizontalPodAutoscaler on the
 * same metric as an External metric (served by an external-metrics
 * adapter such as prometheus-adapter).  Apply one of the two to a
 * target, not both: KEDA makes its own HPA.
 *
 * Field names are the upstream ones (manifest.c cites them; the test
 * tests/integration/autoscale_manifests.sh checks each against lists
 * taken from those sources).  Strings are written double-quoted with
 * YAML's escapes, so a PromQL query with quotes and braces reads back
 * as it was.
 */
#include <stdio.h>
#include <string.h>

#include "autoscale/autoscale.h"

static void quoted(struct gf_buf *b, const char *s)
{
	gf_buf_putc(b, '"');
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			gf_buf_printf(b, "\\%c", *s);
		else if (*s == '\n')
			gf_buf_puts(b, "\\n");
		else if ((unsigned char)*s < 0x20)
			gf_buf_printf(b, "\\x%02x", (unsigned char)*s);
		else
			gf_buf_putc(b, *s);
	}
	gf_buf_putc(b, '"');
}

static void kv(struct gf_buf *b, int indent, const char *key, const char *v)
{
	gf_buf_printf(b, "%*s%s: ", indent, "", key);
	quoted(b, v);
	gf_buf_putc(b, '\n');
}

static void metadata(struct gf_buf *b, const struct gf_as_manifest_opts *o,
		     const char *name)
{
	gf_buf_puts(b, "metadata:\n");
	kv(b, 2, "name", name);
	if (o->ns && *o->ns)
		kv(b, 2, "namespace", o->ns);
	gf_buf_puts(b, "  labels:\n");
	kv(b, 4, "app.kubernetes.io/managed-by", "gpufleet");
}

static void target_ref(struct gf_buf *b, const struct gf_as_manifest_opts *o)
{
	gf_buf_puts(b, "  scaleTargetRef:\n");
	kv(b, 4, "apiVersion", o->target_api ? o->target_api : "apps/v1");
	kv(b, 4, "kind", o->target_kind ? o->target_kind : "Deployment");
	kv(b, 4, "name", o->target_name);
}

/* behavior, as Kubernetes defaults it, with our scale-down window. */
static void behavior(struct gf_buf *b, int ind,
		     const struct gf_as_manifest_opts *o)
{
	gf_buf_printf(b,
		      "%*sbehavior:\n"
		      "%*s  scaleUp:\n"
		      "%*s    stabilizationWindowSeconds: 0\n"
		      "%*s    selectPolicy: Max\n"
		      "%*s    policies:\n"
		      "%*s    - type: Pods\n"
		      "%*s      value: 4\n"
		      "%*s      periodSeconds: 15\n"
		      "%*s    - type: Percent\n"
		      "%*s      value: 100\n"
		      "%*s      periodSeconds: 15\n"
		      "%*s  scaleDown:\n"
		      "%*s    stabilizationWindowSeconds: %d\n"
		      "%*s    selectPolicy: Max\n"
		      "%*s    policies:\n"
		      "%*s    - type: Percent\n"
		      "%*s      value: 100\n"
		      "%*s      periodSeconds: 15\n",
		      ind, "", ind, "", ind, "", ind, "", ind, "", ind, "", ind,
		      "", ind, "", ind, "", ind, "", ind, "", ind, "", ind, "",
		      o->down_window_s, ind, "", ind, "", ind, "", ind, "", ind,
		      "");
}

static void keda(struct gf_buf *b, const struct gf_as_manifest_opts *o)
{
	gf_buf_puts(b, "# KEDA: activation (0 <-> 1) and the HPA it makes "
		       "(1 <-> N) on the queue depth.\n"
		       "apiVersion: keda.sh/v1alpha1\n"
		       "kind: ScaledObject\n");
	metadata(b, o, o->name);
	gf_buf_puts(b, "spec:\n");
	target_ref(b, o);
	gf_buf_printf(b,
		      "  pollingInterval: %d\n"
		      "  cooldownPeriod: %d\n"
		      "  minReplicaCount: %d\n"
		      "  maxReplicaCount: %d\n"
		      "  advanced:\n"
		      "    horizontalPodAutoscalerConfig:\n",
		      o->polling_s, o->cooldown_s, o->min_replicas,
		      o->max_replicas);
	behavior(b, 6, o);
	gf_buf_puts(b, "  triggers:\n"
		       "  - type: prometheus\n"
		       "    metricType: AverageValue\n"
		       "    metadata:\n");
	kv(b, 6, "serverAddress", o->prometheus);
	kv(b, 6, "query", o->query);
	kv(b, 6, "threshold", o->target_value);
	kv(b, 6, "activationThreshold", o->activation ? o->activation : "0");
	kv(b, 6, "ignoreNullValues", "true");
}

static void hpa(struct gf_buf *b, const struct gf_as_manifest_opts *o)
{
	gf_buf_puts(b, "# Kubernetes alone: an HPA on the same metric as an "
		       "External metric\n"
		       "# (needs an external-metrics adapter serving it, e.g. "
		       "prometheus-adapter).\n"
		       "apiVersion: autoscaling/v2\n"
		       "kind: HorizontalPodAutoscaler\n");
	metadata(b, o, o->name);
	gf_buf_puts(b, "spec:\n");
	target_ref(b, o);
	/* minReplicas 0 needs the HPAScaleToZero gate: KEDA does that */
	gf_buf_printf(b,
		      "  minReplicas: %d\n"
		      "  maxReplicas: %d\n"
		      "  metrics:\n"
		      "  - type: External\n"
		      "    external:\n"
		      "      metric:\n",
		      o->min_replicas > 0 ? o->min_replicas : 1,
		      o->max_replicas);
	kv(b, 8, "name", o->metric);
	if (o->nlabels > 0) {
		gf_buf_puts(b, "        selector:\n"
			       "          matchLabels:\n");
		for (int i = 0; i < o->nlabels; i++)
			kv(b, 12, o->labels[i][0], o->labels[i][1]);
	}
	gf_buf_puts(b, "      target:\n"
		       "        type: AverageValue\n");
	kv(b, 8, "averageValue", o->target_value);
	behavior(b, 2, o);
}

int gf_as_render_manifests(const struct gf_as_manifest_opts *o,
			   struct gf_buf *out, struct gf_err *e)
{
	if (!o->name || !*o->name || !o->target_name || !*o->target_name ||
	    !o->target_value || !o->metric || !o->query || !o->prometheus)
		return gf_err_set(
			e, GF_EINVAL,
			"a name, a target, a target value, a metric, "
			"a query and a Prometheus address are needed");
	if (!gf_keda_replicas_ok(o->min_replicas, o->max_replicas))
		return gf_err_set(e, GF_EINVAL,
				  "replicas %d..%d: expected 0 <= min <= max, "
				  "max >= 1",
				  o->min_replicas, o->max_replicas);
	int64_t milli;
	if (gf_quantity_milli(o->target_value, &milli) || milli <= 0)
		return gf_err_set(e, GF_EINVAL,
				  "target value '%s': not a positive quantity",
				  o->target_value);
	bool first = true;
	if (o->keda) {
		keda(out, o);
		first = false;
	}
	if (o->hpa) {
		if (!first)
			gf_buf_puts(out, "---\n");
		hpa(out, o);
	}
	int rc = gf_buf_error(out);
	if (rc)
		return gf_err_set(e, rc, "manifests larger than the buffer");
	return 0;
}
