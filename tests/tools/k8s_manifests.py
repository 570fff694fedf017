#!/usr/bin/env python3
"""Check deploy/kubernetes/ offline (tests/integration/k8s_manifests.sh).

1. Every built-in object against the upstream schema, through Debian's
   python3-kubernetes models: each key must be a field of its model
   (attribute_map), each value of the model's type (openapi_types), and
   the object must deserialize (the models refuse a missing required
   field).
2. The KubeSchedulerConfiguration against kubescheduler.config.k8s.io/v1's
   fields (staging/src/k8s.io/kube-scheduler/config/v1/types.go) and
   against validateExtenders' rules
   (pkg/scheduler/apis/config/validation/validation.go), written here by
   hand: a prioritize verb needs a positive weight; at most one extender
   binds; managed resources are qualified extended-resource names, never
   twice; urlPrefix is required.  Then gpufleet's contract: urlPrefix
   https://HOST:PORT/k8s on the controller's Service, the four verbs,
   nodeCacheCapable, HTTPS with a CA and a client certificate in
   tlsConfig; the controller serving TLS with --client-ca beside its
   tokens, the agents reaching it over https with --ca.
3. What the issue asks of each manifest: the agent's hostPID, port 9400,
   Prometheus annotations, NVML and /dev/nvidia* from the host, its node
   name from spec.nodeName; the RBAC rules exactly the least set.

Usage: k8s_manifests.py DIR            check, print problems, exit 1 on any
       k8s_manifests.py --self-test DIR   each rule must catch its mutation
Exit 2 when python3-kubernetes or PyYAML is absent.
"""
import copy
import glob
import json
import os
import re
import sys

try:
    import yaml
    import kubernetes.client as kc
    from kubernetes.client import ApiClient
except ImportError as exc:  # the shell script says skip
    print("missing: %s" % exc)
    sys.exit(2)

PRIMITIVE = {"str": str, "int": int, "bool": bool, "float": (int, float)}


def model_of(api_version, kind):
    """The python3-kubernetes model class of a built-in kind, or None."""
    version = api_version.split("/")[-1]
    return getattr(kc, version.capitalize() + kind, None)


def check_value(v, t, path, bad):
    """v against the openapi type string t ('str', 'list[V1Container]',
    'dict(str, str)', 'V1PodSpec', 'object', 'datetime')."""
    if v is None:
        return
    if t == "object":  # IntOrString, RawExtension: anything
        return
    if t in PRIMITIVE:
        if t == "int" and isinstance(v, bool) or not isinstance(v, PRIMITIVE[t]):
            bad.append("%s: expected %s, got %r" % (path, t, v))
        return
    if t == "datetime" or t == "date":
        if not isinstance(v, str):
            bad.append("%s: expected a timestamp" % path)
        return
    m = re.fullmatch(r"list\[(.+)\]", t)
    if m:
        if not isinstance(v, list):
            bad.append("%s: expected a list" % path)
            return
        for i, x in enumerate(v):
            check_value(x, m.group(1), "%s[%d]" % (path, i), bad)
        return
    m = re.fullmatch(r"dict\(str, (.+)\)", t)
    if m:
        if not isinstance(v, dict):
            bad.append("%s: expected a mapping" % path)
            return
        for k, x in v.items():
            check_value(x, m.group(1), "%s.%s" % (path, k), bad)
        return
    cls = getattr(kc, t, None)
    if cls is None:
        bad.append("%s: unknown model type %s" % (path, t))
        return
    check_model(v, cls, path, bad)


def check_model(v, cls, path, bad):
    if not isinstance(v, dict):
        bad.append("%s: expected a mapping (%s)" % (path, cls.__name__))
        return
    by_key = {json_key: attr for attr, json_key in cls.attribute_map.items()}
    for k, x in v.items():
        if k not in by_key:
            bad.append("%s.%s: not a field of %s" % (path, k, cls.__name__))
            continue
        check_value(x, cls.openapi_types[by_key[k]], path + "." + k, bad)


class _Answer:  # what ApiClient.deserialize reads
    def __init__(self, obj):
        self.data = json.dumps(obj)


def check_builtin(doc, where, bad):
    cls = model_of(doc.get("apiVersion", ""), doc.get("kind", ""))
    if cls is None:
        bad.append("%s: %s %s is not a built-in kind" %
                   (where, doc.get("apiVersion"), doc.get("kind")))
        return
    check_model(doc, cls, where, bad)
    try:
        ApiClient().deserialize(_Answer(doc), cls.__name__)
    except (ValueError, TypeError) as exc:
        bad.append("%s: %s does not deserialize: %s" % (where, cls.__name__, exc))


# ---- kubescheduler.config.k8s.io/v1, by hand ------------------------------

S, I, B, F = "str", "int", "bool", "float"
LEADER = {"leaderElect": B, "leaseDuration": S, "renewDeadline": S,
          "retryPeriod": S, "resourceLock": S, "resourceName": S,
          "resourceNamespace": S}
CLIENT = {"acceptContentTypes": S, "contentType": S, "qps": F, "burst": I,
          "kubeconfig": S}
PLUGIN = {"name": S, "weight": I}
PLUGIN_SET = {"enabled": [PLUGIN], "disabled": [PLUGIN]}
PLUGINS = {k: PLUGIN_SET for k in (
    "preEnqueue", "queueSort", "preFilter", "filter", "postFilter", "preScore",
    "score", "reserve", "permit", "preBind", "bind", "postBind", "multiPoint")}
PROFILE = {"schedulerName": S, "percentageOfNodesToScore": I,
           "plugins": PLUGINS, "pluginConfig": [{"name": S, "args": "any"}]}
TLS = {"insecure": B, "serverName": S, "certFile": S, "keyFile": S,
       "caFile": S, "certData": S, "keyData": S, "caData": S}
EXTENDER = {"urlPrefix": S, "filterVerb": S, "preemptVerb": S,
            "prioritizeVerb": S, "weight": I, "bindVerb": S,
            "enableHTTPS": B, "tlsConfig": TLS, "httpTimeout": S,
            "nodeCacheCapable": B,
            "managedResources": [{"name": S, "ignoredByScheduler": B}],
            "ignorable": B}
KSC = {"apiVersion": S, "kind": S, "parallelism": I,
       "leaderElection": LEADER, "clientConnection": CLIENT,
       "healthzBindAddress": S, "metricsBindAddress": S,
       "enableProfiling": B, "enableContentionProfiling": B,
       "percentageOfNodesToScore": I, "podInitialBackoffSeconds": I,
       "podMaxBackoffSeconds": I, "profiles": [PROFILE],
       "extenders": [EXTENDER], "delayCacheUntilActive": B}


def check_fields(v, schema, path, bad):
    if schema == "any" or v is None:
        return
    if isinstance(schema, dict):
        if not isinstance(v, dict):
            bad.append("%s: expected a mapping" % path)
            return
        for k, x in v.items():
            if k not in schema:
                bad.append("%s.%s: not a field of KubeSchedulerConfiguration"
                           % (path, k))
            else:
                check_fields(x, schema[k], path + "." + k, bad)
    elif isinstance(schema, list):
        if not isinstance(v, list):
            bad.append("%s: expected a list" % path)
            return
        for i, x in enumerate(v):
            check_fields(x, schema[0], "%s[%d]" % (path, i), bad)
    else:
        check_value(v, schema, path, bad)


QNAME = re.compile(r"[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?")
DNS1123 = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")


def qualified_name(s):
    """IsQualifiedName: [DNS-subdomain-prefix/]name, name <= 63."""
    parts = s.split("/")
    if len(parts) > 2:
        return False
    if len(parts) == 2:
        if not parts[0] or len(parts[0]) > 253 or not DNS1123.fullmatch(parts[0]):
            return False
    name = parts[-1]
    return 0 < len(name) <= 63 and bool(QNAME.fullmatch(name))


def extended_resource_name(s):
    """IsExtendedResourceName (pkg/apis/core/helper): not native (no
    '/' or in kubernetes.io), not 'requests.'-prefixed, and
    'requests.'+name a qualified name."""
    if "/" not in s or "kubernetes.io/" in s:
        return False
    if s.startswith("requests."):
        return False
    return qualified_name("requests." + s)


DURATION = re.compile(r"(\d+(\.\d+)?(ns|us|µs|ms|s|m|h))+")


def check_scheduler(doc, where, bad):
    """The fields, validateExtenders, and gpufleet's contract; returns the
    extender that names /k8s (or None)."""
    if doc.get("apiVersion") != "kubescheduler.config.k8s.io/v1":
        bad.append("%s: apiVersion must be kubescheduler.config.k8s.io/v1" % where)
    check_fields(doc, KSC, where, bad)
    exts = doc.get("extenders") or []
    binders = 0
    seen = {}
    for i, e in enumerate(exts):
        p = "%s.extenders[%d]" % (where, i)
        if not e.get("urlPrefix"):
            bad.append("%s.urlPrefix: required" % p)
        if e.get("prioritizeVerb") and (e.get("weight") or 0) <= 0:
            bad.append("%s.weight: must have a positive weight applied to it"
                       % p)
        if e.get("bindVerb"):
            binders += 1
        if e.get("httpTimeout") and not DURATION.fullmatch(str(e["httpTimeout"])):
            bad.append("%s.httpTimeout: not a duration" % p)
        for j, r in enumerate(e.get("managedResources") or []):
            n = r.get("name", "")
            if not extended_resource_name(n):
                bad.append("%s.managedResources[%d].name: '%s' is not an "
                           "extended resource name" % (p, j, n))
            if n in seen:
                bad.append("%s.managedResources[%d].name: duplicate '%s'"
                           % (p, j, n))
            seen[n] = True
    if binders > 1:
        bad.append("%s.extenders: only one extender can implement bind" % where)
    names = [pr.get("schedulerName") for pr in doc.get("profiles") or []]
    if len(names) != len(set(names)):
        bad.append("%s.profiles: duplicate schedulerName" % where)
    ours = [e for e in exts if str(e.get("urlPrefix", "")).rstrip("/").endswith("/k8s")]
    if len(ours) != 1:
        bad.append("%s: no extender with urlPrefix https://HOST:PORT/k8s" % where)
        return None
    e = ours[0]
    want = {"filterVerb": "filter", "prioritizeVerb": "prioritize",
            "preemptVerb": "preempt", "bindVerb": "bind",
            "nodeCacheCapable": True, "ignorable": False}
    for k, v in want.items():
        if e.get(k) != v:
            bad.append("%s: gpufleet's extender needs %s: %s" % (where, k, json.dumps(v)))
    managed = {r.get("name"): r for r in e.get("managedResources") or []}
    for n in ("nvidia.com/gpu", "gpufleet.io/gpu-milli"):
        if n not in managed:
            bad.append("%s: managedResources lacks %s" % (where, n))
    for n, r in managed.items():
        if r.get("ignoredByScheduler") is not True:
            bad.append("%s: %s needs ignoredByScheduler: true" % (where, n))
    if not re.fullmatch(r"https://[^/:]+:\d+/k8s/?", e.get("urlPrefix", "")):
        bad.append("%s: urlPrefix is not https://HOST:PORT/k8s" % where)
    tls = e.get("tlsConfig") or {}
    if e.get("enableHTTPS") is not True or \
            not (tls.get("certFile") or tls.get("certData")) or \
            not (tls.get("keyFile") or tls.get("keyData")) or \
            not (tls.get("caFile") or tls.get("caData")) or tls.get("insecure"):
        bad.append("%s: gpufleet's extender needs enableHTTPS and a tlsConfig "
                   "with a CA and a client certificate and key (the /k8s "
                   "routes take a client certificate)" % where)
    return e


# ---- the manifests together ------------------------------------------------


def find(docs, kind, name=None):
    for where, d in docs:
        if d.get("kind") == kind and (name is None or
                                      d.get("metadata", {}).get("name") == name):
            return where, d
    return None, None


def container(d):
    return d["spec"]["template"]["spec"]["containers"][0]


def check_agent(docs, bad):
    where, ds = find(docs, "DaemonSet")
    if not ds:
        bad.append("no agent DaemonSet")
        return
    pod = ds["spec"]["template"]["spec"]
    ann = ds["spec"]["template"]["metadata"].get("annotations", {})
    c = container(ds)
    if pod.get("hostPID") is not True:
        bad.append("%s: the agent needs hostPID (processes to pods)" % where)
    if ann.get("prometheus.io/scrape") != "true" or ann.get("prometheus.io/port") != "9400":
        bad.append("%s: Prometheus annotations (scrape, port 9400)" % where)
    if not any(p.get("containerPort") == 9400 for p in c.get("ports", [])):
        bad.append("%s: the agent's port 9400" % where)
    args = c.get("args", [])
    if "0.0.0.0:9400" not in args:
        bad.append("%s: the agent listens on 0.0.0.0:9400" % where)
    if "--name" not in args or args[args.index("--name") + 1] != "$(NODE_NAME)":
        bad.append("%s: --name $(NODE_NAME): the node's Kubernetes name" % where)
    env = {e["name"]: e for e in c.get("env", [])}
    if env.get("NODE_NAME", {}).get("valueFrom", {}).get("fieldRef", {}).get(
            "fieldPath") != "spec.nodeName":
        bad.append("%s: NODE_NAME from spec.nodeName" % where)
    if env.get("NVIDIA_VISIBLE_DEVICES", {}).get("value") != "all" or \
            c.get("securityContext", {}).get("privileged") is not True:
        bad.append("%s: NVML and /dev/nvidia* from the host (NVIDIA_VISIBLE_DEVICES"
                   "=all, privileged)" % where)
    if pod.get("automountServiceAccountToken") is not False:
        bad.append("%s: the agent needs no API token" % where)


def check_controller(docs, ext, bad):
    where, dep = find(docs, "Deployment", "gpufleet-controller")
    swhere, svc = find(docs, "Service", "gpufleet-controller")
    if not dep or not svc:
        bad.append("no gpufleet-controller Deployment and Service")
        return
    args = container(dep).get("args", [])
    for a in ("serve", "--k8s-extender", "--agents"):
        if a not in args:
            bad.append("%s: the controller runs gpufleet serve %s" % (where, a))
    if "--token-file" in args and not all(
            a in args for a in ("--tls-cert", "--tls-key", "--client-ca")):
        bad.append("%s: with --token-file, gpufleet serve --k8s-extender needs "
                   "--tls-cert, --tls-key and --client-ca" % where)
    sel = svc["spec"].get("selector", {})
    labels = dep["spec"]["template"]["metadata"].get("labels", {})
    if not sel or any(labels.get(k) != v for k, v in sel.items()):
        bad.append("%s: the Service selects no controller pod" % swhere)
    ns = svc["metadata"].get("namespace", "default")
    port = svc["spec"]["ports"][0]["port"]
    if ext is not None:
        want = "https://%s.%s.svc:%d/k8s" % (svc["metadata"]["name"], ns, port)
        if ext.get("urlPrefix", "").rstrip("/") != want:
            bad.append("extender urlPrefix %s is not the Service's %s"
                       % (ext.get("urlPrefix"), want))
    listen = args[args.index("--listen") + 1] if "--listen" in args else ""
    if not listen.endswith(":%d" % port) and not any(
            p.get("containerPort") == port for p in container(dep).get("ports", [])):
        bad.append("%s: the controller does not listen on the Service's port" % where)
    _, ds = find(docs, "DaemonSet")
    if ds:
        dargs = container(ds).get("args", [])
        if "--controller" in dargs and \
                dargs[dargs.index("--controller") + 1] != \
                "https://%s.%s.svc:%d" % (svc["metadata"]["name"], ns, port):
            bad.append("the agent's --controller is not the Service")
        if "--ca" not in dargs:
            bad.append("the agent needs --ca, the CA of the controller's "
                       "certificate")


LEAST = {("", "pods"): {"get", "list"}, ("", "pods/binding"): {"create"}}


def check_rbac(docs, bad):
    where, role = find(docs, "ClusterRole", "gpufleet-extender")
    if not role:
        bad.append("no ClusterRole gpufleet-extender")
        return
    got = {}
    for r in role.get("rules", []):
        for g in r.get("apiGroups", []):
            for res in r.get("resources", []):
                got.setdefault((g, res), set()).update(r.get("verbs", []))
    if got != LEAST:
        bad.append("%s: rules %s, not the least set %s" % (
            where, sorted((k, sorted(v)) for k, v in got.items()),
            sorted((k, sorted(v)) for k, v in LEAST.items())))
    _, dep = find(docs, "Deployment", "gpufleet-controller")
    bwhere, binding = find(docs, "ClusterRoleBinding")
    if dep and binding:
        sa = dep["spec"]["template"]["spec"].get("serviceAccountName")
        subs = [(s.get("kind"), s.get("name")) for s in binding.get("subjects", [])]
        if ("ServiceAccount", sa) not in subs or \
                binding.get("roleRef", {}).get("name") != "gpufleet-extender":
            bad.append("%s: the controller's account is not bound to the role"
                       % bwhere)


def load(d):
    docs = []
    for f in sorted(glob.glob(os.path.join(d, "*.yaml"))):
        with open(f) as fh:
            for i, doc in enumerate(yaml.safe_load_all(fh)):
                if doc is not None:
                    docs.append(("%s#%d" % (os.path.basename(f), i), doc))
    return docs


def check(docs):
    bad = []
    ext = None
    for where, d in docs:
        if d.get("kind") == "KubeSchedulerConfiguration":
            ext = check_scheduler(d, where, bad)
        else:
            check_builtin(d, where, bad)
    if ext is None:
        bad.append("no KubeSchedulerConfiguration with gpufleet's extender")
    check_agent(docs, bad)
    check_controller(docs, ext, bad)
    check_rbac(docs, bad)
    return bad


# ---- self-test: each rule catches its mutation ------------------------------


def mutate(docs, kind, fn):
    out = copy.deepcopy(docs)
    for _, d in out:
        if d.get("kind") == kind:
            fn(d)
            break
    return out


def ext0(d):
    return d["extenders"][0]


MUTATIONS = [
    ("weight 0 with a prioritize verb", "KubeSchedulerConfiguration",
     lambda d: ext0(d).update(weight=0), "positive weight"),
    ("two binders", "KubeSchedulerConfiguration",
     lambda d: d["extenders"].append({"urlPrefix": "http://x:1/y", "bindVerb": "bind"}),
     "only one extender can implement bind"),
    ("kubernetes.io/foo managed", "KubeSchedulerConfiguration",
     lambda d: ext0(d)["managedResources"].append({"name": "kubernetes.io/foo"}),
     "not an extended resource name"),
    ("a duplicate managed resource", "KubeSchedulerConfiguration",
     lambda d: ext0(d)["managedResources"].append({"name": "nvidia.com/gpu",
                                                   "ignoredByScheduler": True}),
     "duplicate"),
    ("no urlPrefix", "KubeSchedulerConfiguration",
     lambda d: ext0(d).pop("urlPrefix"), "urlPrefix: required"),
    ("nodeCacheCapable false", "KubeSchedulerConfiguration",
     lambda d: ext0(d).update(nodeCacheCapable=False), "nodeCacheCapable"),
    ("an unknown extender field", "KubeSchedulerConfiguration",
     lambda d: ext0(d).update(filterverb="filter"), "not a field"),
    ("a bad httpTimeout", "KubeSchedulerConfiguration",
     lambda d: ext0(d).update(httpTimeout="5 seconds"), "not a duration"),
    ("an unknown Deployment field", "Deployment",
     lambda d: d["spec"].update(replica=2), "not a field of V1DeploymentSpec"),
    ("a container port as text", "Deployment",
     lambda d: container(d)["ports"][0].update(containerPort="9500"), "expected int"),
    ("a container without a name", "DaemonSet",
     lambda d: container(d).pop("name"), "does not deserialize"),
    ("no hostPID", "DaemonSet",
     lambda d: d["spec"]["template"]["spec"].pop("hostPID"), "hostPID"),
    ("no Prometheus port", "DaemonSet",
     lambda d: d["spec"]["template"]["metadata"]["annotations"].pop(
         "prometheus.io/port"), "Prometheus"),
    ("watch on pods", "ClusterRole",
     lambda d: d["rules"][0]["verbs"].append("watch"), "least set"),
    ("a Service on another port", "Service",
     lambda d: d["spec"]["ports"][0].update(port=80), "Service's"),
    ("an extender without a client certificate", "KubeSchedulerConfiguration",
     lambda d: ext0(d)["tlsConfig"].pop("certFile"), "tlsConfig"),
    ("a controller with tokens and no --client-ca", "Deployment",
     lambda d: container(d)["args"].remove("--client-ca"), "--client-ca"),
    ("an agent without --ca", "DaemonSet",
     lambda d: container(d)["args"].remove("--ca"), "--ca"),
]


def self_test(docs):
    failures = []
    if check(docs):
        failures.append("the manifests themselves do not pass")
    for what, kind, fn, expect in MUTATIONS:
        bad = check(mutate(docs, kind, fn))
        if not any(expect in b for b in bad):
            failures.append("%s: not caught (wanted '%s', got %s)" % (what, expect, bad))
    return failures


def main():
    args = sys.argv[1:]
    selftest = bool(args) and args[0] == "--self-test"
    if selftest:
        args = args[1:]
    if len(args) != 1:
        print(__doc__.strip().splitlines()[-3])
        return 2
    docs = load(args[0])
    problems = self_test(docs) if selftest else check(docs)
    for p in problems:
        print(p)
    if not problems:
        kinds = sorted({d.get("kind") for _, d in docs})
        print("%d objects (%s)%s" % (len(docs), ", ".join(kinds),
                                     ", %d mutations caught" % len(MUTATIONS)
                                     if selftest else ""))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
