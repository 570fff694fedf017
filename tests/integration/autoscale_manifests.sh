#!/bin/sh
# `gpufleet autoscale manifests` checked offline against the upstream
# field names (no cluster here): every key of the ScaledObject and of the
# HPA it writes must be one the upstream API defines, with the value
# types and enums it takes, and each manifest must read back through
# `gpufleet autoscale recommend` as the autoscaler it describes.
# The field lists, with their sources:
#   HPA: kubernetes/api autoscaling/v2/types.go (HorizontalPodAutoscaler,
#     HorizontalPodAutoscalerSpec, CrossVersionObjectReference,
#     MetricSpec, ExternalMetricSource, MetricIdentifier, MetricTarget,
#     HorizontalPodAutoscalerBehavior, HPAScalingRules, HPAScalingPolicy)
#   ScaledObject: kedacore/keda-docs content/docs/2.15/reference/
#     scaledobject-spec.md (spec, scaleTargetRef, fallback, advanced,
#     triggers) and content/docs/2.15/scalers/prometheus.md (the
#     prometheus trigger's metadata; its values are strings)
# Prints "ok|FAIL|skip integration/NAME" lines.
set -u
B=${1:-build}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BIN="$ROOT/$B/gpufleet"
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
if ! python3 -c 'import yaml' 2>/dev/null; then
	echo "skip integration/autoscale-manifests (python3 with PyYAML absent)"
	exit 0
fi
"$BIN" autoscale manifests --target llm --target-value 6 --class inference \
	--team speech --min 0 --max 12 --namespace serving --activation 1.5 \
	--down-window 120 >"$TMP/all.yaml" &&
	"$BIN" autoscale manifests --target llm --name llm-hpa \
		--target-value 500m --only hpa --label model=llama \
		--target-kind StatefulSet >"$TMP/hpa.yaml" ||
	{ echo "FAIL integration/autoscale-manifests (the command failed)"; exit 0; }
python3 - "$TMP" "$BIN" <<'PYEOF'
import subprocess, sys, yaml
tmp, binary = sys.argv[1], sys.argv[2]
S, I, Q, B = "str", "int", "quantity", "bool"
REF = {"apiVersion": S, "kind": S, "name": S}
META = {"name": S, "namespace": S, "labels": {"*": S}, "annotations": {"*": S}}
RULES = {"stabilizationWindowSeconds": I, "selectPolicy": ("Max", "Min", "Disabled"),
         "policies": [{"type": ("Pods", "Percent"), "value": I, "periodSeconds": I}],
         "tolerance": Q}
BEHAVIOR = {"scaleUp": RULES, "scaleDown": RULES}
TARGET = {"type": ("Utilization", "Value", "AverageValue"), "value": Q,
          "averageValue": Q, "averageUtilization": I}
HPA = {"apiVersion": ("autoscaling/v2",), "kind": ("HorizontalPodAutoscaler",),
       "metadata": META,
       "spec": {"scaleTargetRef": REF, "minReplicas": I, "maxReplicas": I,
                "metrics": [{"type": ("External", "Object", "Pods", "Resource",
                                      "ContainerResource"),
                             "external": {"metric": {"name": S, "selector": {
                                 "matchLabels": {"*": S}, "matchExpressions": [{"*": S}]}},
                                 "target": TARGET}}],
                "behavior": BEHAVIOR}}
SO = {"apiVersion": ("keda.sh/v1alpha1",), "kind": ("ScaledObject",), "metadata": META,
      "spec": {"scaleTargetRef": dict(REF, envSourceContainerName=S),
               "pollingInterval": I, "cooldownPeriod": I, "initialCooldownPeriod": I,
               "idleReplicaCount": I, "minReplicaCount": I, "maxReplicaCount": I,
               "fallback": {"failureThreshold": I, "replicas": I},
               "advanced": {"restoreToOriginalReplicaCount": B,
                            "horizontalPodAutoscalerConfig": {"name": S, "behavior": BEHAVIOR}},
               "triggers": [{"type": ("prometheus",), "name": S, "useCachedMetrics": B,
                             "metricType": ("AverageValue", "Value", "Utilization"),
                             "authenticationRef": {"name": S, "kind": S},
                             "metadata": {k: S for k in (
                                 "serverAddress", "query", "queryParameters", "threshold",
                                 "activationThreshold", "namespace", "customHeaders",
                                 "ignoreNullValues", "unsafeSsl")}}]}}
bad = []
def check(v, schema, path):
    if isinstance(schema, dict):
        if not isinstance(v, dict):
            bad.append("%s: expected a mapping" % path); return
        for k, x in v.items():
            if k in schema: check(x, schema[k], path + "." + k)
            elif "*" in schema: check(x, schema["*"], path + "." + k)
            else: bad.append("%s.%s: not an upstream field" % (path, k))
    elif isinstance(schema, list):
        if not isinstance(v, list): bad.append("%s: expected a list" % path); return
        for i, x in enumerate(v): check(x, schema[0], "%s[%d]" % (path, i))
    elif isinstance(schema, tuple):
        if v not in schema: bad.append("%s: %r not one of %s" % (path, v, schema))
    elif schema == I:
        if type(v) is not int: bad.append("%s: %r is not an integer" % (path, v))
    elif schema == B:
        if type(v) is not bool: bad.append("%s: %r is not a boolean" % (path, v))
    elif schema == S:
        if not isinstance(v, str): bad.append("%s: %r is not a string" % (path, v))
    elif schema == Q:
        if not isinstance(v, (str, int)): bad.append("%s: %r is not a quantity" % (path, v))
docs = [d for f in ("all.yaml", "hpa.yaml") for d in yaml.safe_load_all(open("%s/%s" % (tmp, f)))]
kinds = [d["kind"] for d in docs]
if kinds != ["ScaledObject", "HorizontalPodAutoscaler", "HorizontalPodAutoscaler"]:
    bad.append("documents: %s" % kinds)
for d in docs:
    check(d, SO if d["kind"] == "ScaledObject" else HPA, d["kind"])
so = docs[0]
md = so["spec"]["triggers"][0]["metadata"]
float(md["threshold"]); float(md["activationThreshold"])
if md["query"] != 'sum(gpufleet_queue_pending_jobs{class="inference",team="speech"})':
    bad.append("query: %r" % md["query"])
if docs[2]["spec"]["scaleTargetRef"]["kind"] != "StatefulSet":
    bad.append("--target-kind not written")
# each document reads back through recommend (queue 0, 40, 40, 0 ...)
with open(tmp + "/s.csv", "w") as f:
    f.write("t_s,value\n" + "".join("%d,%d\n" % (15 * i, v) for i, v in
                                    enumerate([0, 40, 40, 40, 0, 0, 0])))
for i, d in enumerate(docs):
    p = "%s/doc%d.yaml" % (tmp, i)
    yaml.safe_dump(d, open(p, "w"))
    r = subprocess.run([binary, "autoscale", "recommend", "--hpa", p, "--samples",
                        tmp + "/s.csv", "--start-replicas", "1", "--json"],
                       capture_output=True, text=True)
    if r.returncode != 0 or r.stderr:
        bad.append("%s does not read back: %s" % (d["kind"], r.stderr.strip()))
print("ok integration/autoscale-manifests" if not bad else "FAIL integration/autoscale-manifests")
for b in bad:
    print("    " + b)
PYEOF
