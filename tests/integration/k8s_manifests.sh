#!/bin/sh
# deploy/kubernetes/ checked offline (no cluster here), and the contract
# its scheduler configuration relies on, against a real server:
#   k8s-manifests           every built-in object against the upstream
#                           schema (Debian's python3-kubernetes models),
#                           the KubeSchedulerConfiguration against
#                           kube-scheduler's extender validation rules,
#                           the manifests against each other
#                           (tests/tools/k8s_manifests.py)
#   k8s-manifests-rules     each rule catches a manifest broken for it
#   k8s-extender-contract   `gpufleet serve --k8s-extender --nodes FILE`
#                           answers the configuration's four verbs under
#                           /k8s with the CSV's node names
# Prints "ok|FAIL|skip integration/NAME" lines.
set -u
B=${1:-build}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BIN="$ROOT/$B/gpufleet"
CHECK="$ROOT/tests/tools/k8s_manifests.py"
TMP=$(mktemp -d)
PID=
cleanup() {
	[ -n "$PID" ] && kill "$PID" 2>/dev/null && wait "$PID" 2>/dev/null
	rm -rf "$TMP"
}
trap cleanup EXIT

# The python that has the models: python3 on PATH may be another one
# (pyenv), Debian's is /usr/bin/python3.
PY=
for p in python3 /usr/bin/python3; do
	if "$p" -c 'import kubernetes.client, yaml' 2>/dev/null; then
		PY=$p
		break
	fi
done
if [ -z "$PY" ]; then
	echo "skip integration/k8s-manifests (python3-kubernetes absent: scripts/install-deps.sh installs it)"
	echo "skip integration/k8s-manifests-rules (python3-kubernetes absent)"
else
	if out=$("$PY" "$CHECK" "$ROOT/deploy/kubernetes" 2>&1); then
		echo "ok integration/k8s-manifests ($out)"
	else
		echo "FAIL integration/k8s-manifests"
		echo "$out" | sed 's/^/    /'
	fi
	if out=$("$PY" "$CHECK" --self-test "$ROOT/deploy/kubernetes" 2>&1); then
		echo "ok integration/k8s-manifests-rules"
	else
		echo "FAIL integration/k8s-manifests-rules"
		echo "$out" | sed 's/^/    /'
	fi
fi

# the contract, with the verbs and prefix the configuration names
if ! python3 -c 'import yaml' 2>/dev/null && [ -z "$PY" ]; then
	echo "skip integration/k8s-extender-contract (python3 with PyYAML absent)"
	exit 0
fi
PYY=${PY:-python3}
cat >"$TMP/nodes.csv" <<'EOF'
sn,cpu_milli,memory_mib,gpu,model
gpu-a01,96000,786432,8,V100M32
gpu-a02,96000,786432,2,V100M32
cpu-01,32000,131072,0,
EOF
"$BIN" serve --k8s-extender --nodes "$TMP/nodes.csv" \
	--listen 127.0.0.1:0 --db "sqlite:$TMP/state/gf.db" \
	>"$TMP/serve.out" 2>"$TMP/serve.err" &
PID=$!
URL=
for _ in $(seq 100); do
	URL=$(sed -n 's/.*listening on \(http:[^ ]*\)\/ .*/\1/p' "$TMP/serve.out" "$TMP/serve.err")
	[ -n "$URL" ] && break
	sleep 0.1
done
if [ -z "$URL" ]; then
	echo "FAIL integration/k8s-extender-contract (serve did not start)"
	sed 's/^/    /' "$TMP/serve.err"
	exit 0
fi
if out=$("$PYY" - "$URL" "$ROOT/deploy/kubernetes/scheduler-config.yaml" 2>&1 <<'PYEOF'
import json, sys, urllib.parse, urllib.request, yaml
url, cfg = sys.argv[1], sys.argv[2]
ext = [e for e in yaml.safe_load(open(cfg))["extenders"]
       if e["urlPrefix"].rstrip("/").endswith("/k8s")][0]
# urlPrefix's path on this server (kube-scheduler: TrimRight(prefix,"/")+"/"+verb)
prefix = url + urllib.parse.urlparse(ext["urlPrefix"]).path.rstrip("/")
pod = {"metadata": {"name": "t", "namespace": "ml", "uid": "u-1"},
       "spec": {"containers": [{"name": "c", "resources": {
           "limits": {"nvidia.com/gpu": "4"},
           "requests": {"nvidia.com/gpu": "4", "cpu": "500m", "memory": "1Gi"}}}]},
       "status": {"phase": "Pending"}}
def post(verb, body):
    req = urllib.request.Request(prefix + "/" + ext[verb], json.dumps(body).encode(),
                                 {"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=5) as r:
        assert r.status == 200, (verb, r.status)
        return json.load(r)
names = ["gpu-a01", "gpu-a02", "cpu-01"]
f = post("filterVerb", {"Pod": pod, "Nodes": None, "NodeNames": names})
assert list(f) == ["Nodes", "NodeNames", "FailedNodes", "FailedAndUnresolvableNodes",
                   "Error"], f
assert f["Nodes"] is None and f["NodeNames"] == ["gpu-a01"] and f["Error"] == "", f
assert set(f["FailedAndUnresolvableNodes"]) == {"gpu-a02", "cpu-01"}, f
# GFD's product label names the CSV's model (V100M32: the catalog's
# v100-32gb, NVML "Tesla V100-SXM2-32GB"); another model's filters all
for product, keep in (("Tesla-V100-SXM2-32GB", ["gpu-a01"]),
                      ("Tesla-V100-SXM2-32GB-SHARED", ["gpu-a01"]),
                      ("NVIDIA-H100-80GB-HBM3", [])):
    sel = dict(pod, spec=dict(pod["spec"], nodeSelector={
        "nvidia.com/gpu.product": product}))
    g = post("filterVerb", {"Pod": sel, "Nodes": None, "NodeNames": names})
    assert g["NodeNames"] == keep and g["Error"] == "", (product, g)
why = g["FailedAndUnresolvableNodes"]["gpu-a01"]
assert "V100M32" in why and "NVIDIA-H100-80GB-HBM3" in why, why
p = post("prioritizeVerb", {"Pod": pod, "Nodes": None, "NodeNames": names})
assert [h["Host"] for h in p] == names and all(0 <= h["Score"] <= 10 for h in p), p
v = post("preemptVerb", {"Pod": pod, "NodeNameToVictims": None,
                         "NodeNameToMetaVictims": {}})
assert v == {"NodeNameToMetaVictims": {}}, v
b = post("bindVerb", {"PodName": "t", "PodNamespace": "ml", "PodUID": "u-1",
                      "Node": "gpu-a01"})
assert list(b) == ["Error"] and "no Kubernetes API server" in b["Error"], b
print("filter, prioritize, preempt, bind at", prefix)
PYEOF
); then
	echo "ok integration/k8s-extender-contract ($out)"
else
	echo "FAIL integration/k8s-extender-contract"
	echo "$out" | sed 's/^/    /'
	sed 's/^/    serve: /' "$TMP/serve.err"
fi
