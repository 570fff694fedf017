#!/usr/bin/env python3
"""hpa_ref.py - an independent reference model of Kubernetes' HPA (and
KEDA around it), written in Python from the reference's rules
(../shared/reference/autoscale-chargeback-engines.md section A, which
reads kubernetes/kubernetes pkg/controller/podautoscaler), to check
`gpufleet autoscale recommend` on randomized inputs.  It shares no code
with the C implementation.

  hpa_ref.py recommend --hpa FILE --samples FILE [--start-replicas N] [--json]
      the same contract as `gpufleet autoscale recommend`
  hpa_ref.py compare --gpufleet BIN [--cases N] [--seed S] [--keep DIR]
      N random manifests and traces, run through both; one line
      "ok autoscale/ref-random-..." or "FAIL ..." with the first
      difference, and "ok ..." for the published vectors A, B, C

Exit status: 0 when everything matched (compare) or the recommendation
was printed, 1 otherwise, 2 for usage errors.
"""
import argparse
import math
import os
import random
import subprocess
import sys
import tempfile
from decimal import Decimal, ROUND_CEILING

try:
    import yaml
except ImportError:  # the caller skips
    yaml = None

SUFFIX = {
    "Ki": Decimal(2) ** 10, "Mi": Decimal(2) ** 20, "Gi": Decimal(2) ** 30,
    "Ti": Decimal(2) ** 40, "Pi": Decimal(2) ** 50, "Ei": Decimal(2) ** 60,
    "m": Decimal("0.001"), "": Decimal(1), "k": Decimal(1000),
    "M": Decimal(10) ** 6, "G": Decimal(10) ** 9, "T": Decimal(10) ** 12,
    "P": Decimal(10) ** 15, "E": Decimal(10) ** 18,
}


def milli(q):
    """A Kubernetes quantity as milli-units, rounded up (MilliValue)."""
    s = str(q).strip()
    i = 0
    while i < len(s) and (s[i].isdigit() or s[i] in "+-."):
        i += 1
    num, suf = s[:i], s[i:]
    if suf[:1] in ("e", "E") and len(suf) > 1:
        value = Decimal(num) * (Decimal(10) ** int(suf[1:]))
    else:
        if suf not in SUFFIX:
            raise ValueError("bad quantity " + s)
        value = Decimal(num) * SUFFIX[suf]
    if value < 0:
        raise ValueError("negative " + s)
    return int((value * 1000).to_integral_value(rounding=ROUND_CEILING))


class Rules:
    """One direction of behavior, after Kubernetes' defaulting."""

    def __init__(self, raw, up, down_window, tolerance):
        raw = raw or {}
        self.select = raw.get("selectPolicy") or "Max"
        w = raw.get("stabilizationWindowSeconds")
        self.window = w if w is not None else (0 if up else down_window)
        pol = raw.get("policies")
        if pol is None:
            pol = ([{"type": "Pods", "value": 4, "periodSeconds": 15},
                    {"type": "Percent", "value": 100, "periodSeconds": 15}]
                   if up else
                   [{"type": "Percent", "value": 100, "periodSeconds": 15}])
        self.policies = [(p["type"], int(p["value"]), int(p["periodSeconds"]))
                         for p in pol]
        t = raw.get("tolerance")
        self.tolerance = (milli(t) / 1000.0 if str(t).endswith("m")
                          else float(t)) if t is not None else tolerance


class Hpa:
    """The controller's memory and decision for one HPA."""

    def __init__(self, spec, tolerance=0.1, down_window=300):
        self.min = spec.get("minReplicas")
        self.min = 1 if self.min is None else int(self.min)
        self.max = int(spec["maxReplicas"])
        target = spec["metrics"][0]["external"]["target"]
        if target.get("averageValue") is not None:
            self.average, self.target = True, milli(target["averageValue"])
        else:
            self.average, self.target = False, milli(target["value"])
        b = spec.get("behavior")
        self.behavior = b is not None
        self.tol = tolerance
        self.down_window = down_window
        if self.behavior:
            self.up = Rules(b.get("scaleUp"), True, down_window, tolerance)
            self.down = Rules(b.get("scaleDown"), False, down_window,
                              tolerance)
        self.recs = None          # [[replicas, t]]
        self.ups, self.downs = [], []  # [[change, t, outdated]]

    def tolerances(self):
        if self.behavior:
            return self.down.tolerance, self.up.tolerance
        return self.tol, self.tol

    def proposal(self, spec_r, status_r, ready_r, usage):
        down, up = self.tolerances()
        inside = lambda r: (1.0 - down) <= r <= (1.0 + up)
        if self.average:
            if status_r == 0:
                ratio = math.inf if usage > 0 else math.nan
            else:
                ratio = usage / (self.target * status_r)
            if inside(ratio):
                return status_r
            return math.ceil(usage / self.target)
        ratio = usage / self.target
        if spec_r != 0:
            if inside(ratio):
                return spec_r
            return math.ceil(ratio * ready_r)
        return math.ceil(ratio)

    def sync(self, now, cur, metric):
        """now in ms; metric in milli-units or None (unavailable)."""
        if self.recs is None:
            self.recs = [[cur, now]]
        if cur == 0 and self.min != 0:
            return cur
        if cur > self.max:
            want = self.max
        elif cur < self.min:
            want = self.min
        elif metric is None:
            return cur
        else:
            prop = max(0, self.proposal(cur, cur, cur, metric))
            if self.behavior:
                want = self.with_behavior(now, cur, prop)
            else:
                want = self.legacy(now, cur, prop)
        if want != cur and self.behavior:
            self.store(now, cur, want)
        return want

    def legacy(self, now, cur, prop):
        cutoff = now - self.down_window * 1000
        best, old = prop, None
        for i, (r, t) in enumerate(self.recs):
            if t < cutoff:
                old = i
            elif r > best:
                best = r
        if old is None:
            self.recs.append([prop, now])
        else:
            self.recs[old] = [prop, now]
        hi = min(self.max, int(max(2.0 * cur, 4.0)))
        if best < self.min:
            return self.min
        return min(best, hi)

    def with_behavior(self, now, cur, prop):
        upc = now - self.up.window * 1000
        downc = now - self.down.window * 1000
        lo, hi, old = prop, prop, None
        for i, (r, t) in enumerate(self.recs):
            if t > upc:
                lo = min(lo, r)
            if t > downc:
                hi = max(hi, r)
            if t < upc and t < downc:
                old = i
        rec = max(cur, lo)
        rec = min(rec, hi)
        if old is None:
            self.recs.append([prop, now])
        else:
            self.recs[old] = [prop, now]
        if rec > cur:
            limit = max(self.limit(now, cur, self.up, True), cur)
            return min(rec, self.max, limit)
        if rec < cur:
            limit = min(self.limit(now, cur, self.down, False), cur)
            return max(rec, self.min, limit)
        return rec

    def changed(self, now, period, events):
        cutoff = now - period * 1000
        return sum(c for c, t, _ in events if t > cutoff)

    def limit(self, now, cur, rules, up):
        if rules.select == "Disabled":
            return cur
        vals = []
        for kind, value, period in rules.policies:
            start = (cur - self.changed(now, period, self.ups)
                     + self.changed(now, period, self.downs))
            if up:
                v = (start + value if kind == "Pods"
                     else math.ceil(start * (1 + value / 100)))
            else:
                v = (start - value if kind == "Pods"
                     else int(start * (1 - value / 100)))
            vals.append(v)
        # Max = the biggest change: up the largest, down the smallest
        if (rules.select == "Max") == up:
            return max(vals)
        return min(vals)

    def store(self, now, prev, new):
        up = new > prev
        events = self.ups if up else self.downs
        rules = self.up if up else self.down
        longest = max(p for _, _, p in rules.policies)
        for ev in events:
            if ev[1] < now - longest * 1000:
                ev[2] = True
        slot = None
        for i, ev in enumerate(events):
            if ev[2]:
                slot = i
        ev = [abs(new - prev), now, False]
        if slot is None:
            events.append(ev)
        else:
            events[slot] = ev


class Keda:
    """A ScaledObject: the executor every pollingInterval, its HPA."""

    def __init__(self, spec, created):
        self.min = int(spec.get("minReplicaCount", 0) or 0)
        self.max = int(spec.get("maxReplicaCount", 100) or 100)
        self.poll = int(spec.get("pollingInterval", 30) or 30)
        cd = spec.get("cooldownPeriod")
        self.cooldown = 300 if cd is None else int(cd)
        self.initial = int(spec.get("initialCooldownPeriod", 0) or 0)
        idle = spec.get("idleReplicaCount")
        self.idle = None if idle is None else int(idle)
        trig = spec["triggers"][0]
        md = trig["metadata"]
        self.activation = int(float(md.get("activationThreshold", 0)) * 1000)
        fb = spec.get("fallback") or {}
        self.fb_n = int(fb.get("failureThreshold", 0) or 0)
        self.fb_r = int(fb.get("replicas", 0) or 0)
        target = int(float(md["threshold"]) * 1000)
        kind = trig.get("metricType") or "AverageValue"
        hspec = {"minReplicas": max(self.min, 1), "maxReplicas": self.max,
                 "metrics": [{"external": {"target": (
                     {"averageValue": str(target) + "m"}
                     if kind == "AverageValue"
                     else {"value": str(target) + "m"})}}]}
        adv = (spec.get("advanced") or {}).get(
            "horizontalPodAutoscalerConfig") or {}
        if adv.get("behavior") is not None:
            hspec["behavior"] = adv["behavior"]
        self.hpa = Hpa(hspec)
        self.created = created
        self.last_poll = None
        self.last_active = None
        self.fails = 0

    def sync(self, now, cur, metric):
        self.fails = 0 if metric is not None else self.fails + 1
        hmetric = metric
        if (metric is None and self.fb_n > 0 and self.fails >= self.fb_n
                and self.hpa.average):
            hmetric = self.hpa.target * self.fb_r
        if self.last_poll is None or now - self.last_poll >= self.poll * 1000:
            self.last_poll = now
            # KEDA's executor (scale_scaledobjects.go): with an idle
            # count the triggers' own activity decides
            active = ((self.idle is None and self.min >= 1)
                      or (metric is not None and metric > self.activation))
            new = None
            if active:
                self.last_active = now
                if cur == 0 or (self.idle is not None and cur < self.min):
                    new = self.min if self.min > 0 else 1
            elif metric is None:
                pass
            elif ((self.idle is not None and cur > self.idle)
                  or (cur > 0 and self.min == 0)):
                if self.created + self.initial * 1000 <= now and (
                        self.last_active is None
                        or self.last_active + self.cooldown * 1000 < now):
                    new = self.idle if self.idle is not None else 0
            elif self.idle is None and cur < self.min:
                new = self.min
            if new is not None and new != cur:
                return new
        return self.hpa.sync(now, cur, hmetric)


def read_samples(path):
    out = []
    with open(path) as f:
        for line in f:
            line = line.strip()
            if not line or line.startswith("#") or line.startswith("t_s"):
                continue
            t, v = line.split(",")
            out.append((t.strip(), int(round(float(t) * 1000)),
                        milli(v.strip())))
    return out


def recommend(manifest, samples, start):
    obj = yaml.safe_load(open(manifest))
    if obj["kind"] == "ScaledObject":
        scaler = Keda(obj["spec"], samples[0][1] if samples else 0)
    else:
        scaler = Hpa(obj["spec"])
    cur, res = start, []
    for _, t, v in samples:
        cur = scaler.sync(t, cur, v)
        res.append(cur)
    return res


# ---- random cases -----------------------------------------------------------

def rand_quantity(rng):
    return rng.choice([str(rng.randint(1, 20)), "%d" % rng.randint(1, 9),
                       "%dm" % rng.randint(100, 20000),
                       "%.1f" % rng.uniform(0.5, 12.0),
                       rng.randint(1, 15)])


def rand_rules(rng, up):
    r = {}
    if rng.random() < 0.6:
        r["stabilizationWindowSeconds"] = rng.choice(
            [0, 15, 30, 45, 60, 90, 120, 300, rng.randint(0, 600), 3700])
    if rng.random() < 0.4:
        r["selectPolicy"] = rng.choice(["Max", "Min", "Disabled", "Max"])
    if rng.random() < 0.7:
        r["policies"] = [{"type": rng.choice(["Pods", "Percent"]),
                          "value": rng.choice([1, 2, 4, 10, 50, 100, 200,
                                               rng.randint(1, 300)]),
                          "periodSeconds": rng.choice(
                              [15, 30, 60, 90, rng.randint(1, 600), 2000])}
                         for _ in range(rng.randint(1, 3))]
    if rng.random() < 0.15:
        r["tolerance"] = rng.choice(["0.05", "0", "0.2", "50m"])
    return r if r or rng.random() < 0.5 else None


def rand_hpa(rng):
    mn = rng.choice([0, 1, 1, 1, 2, 3, 5])
    mx = rng.randint(max(1, mn), max(1, mn) + rng.choice([1, 5, 20, 60]))
    target = {"type": "AverageValue", "averageValue": rand_quantity(rng)}
    if rng.random() < 0.25:
        target = {"type": "Value", "value": rand_quantity(rng)}
    spec = {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment",
                               "name": "llm"},
            "maxReplicas": mx,
            "metrics": [{"type": "External", "external": {
                "metric": {"name": "gpufleet_queue_pending_jobs"},
                "target": target}}]}
    if mn != 1 or rng.random() < 0.5:
        spec["minReplicas"] = mn
    roll = rng.random()
    if roll < 0.3:
        pass  # legacy
    elif roll < 0.45:
        spec["behavior"] = {}
    else:
        b = {}
        for key, up in (("scaleUp", True), ("scaleDown", False)):
            r = rand_rules(rng, up)
            if r is not None:
                b[key] = r
        spec["behavior"] = b
    return {"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
            "metadata": {"name": "llm"}, "spec": spec}


def rand_keda(rng):
    spec = {"scaleTargetRef": {"name": "llm"},
            "minReplicaCount": rng.choice([0, 0, 1, 2]),
            "maxReplicaCount": rng.choice([5, 10, 30]),
            "pollingInterval": rng.choice([15, 30]),
            "cooldownPeriod": rng.choice([0, 60, 90, 300]),
            "triggers": [{"type": "prometheus", "metadata": {
                "serverAddress": "http://prometheus:9090",
                "query": "sum(gpufleet_queue_pending_jobs)",
                "threshold": rng.choice(["2", "5", "4.5"]),
                "activationThreshold": rng.choice(["0", "3", "10"])}}]}
    if rng.random() < 0.3:
        spec["initialCooldownPeriod"] = rng.choice([0, 60, 120])
    if spec["minReplicaCount"] >= 1 and rng.random() < 0.5:
        spec["idleReplicaCount"] = 0
    if rng.random() < 0.4:
        spec["advanced"] = {"horizontalPodAutoscalerConfig": {
            "behavior": {"scaleDown": rand_rules(rng, False) or {}}}}
    spec["maxReplicaCount"] = max(spec["maxReplicaCount"],
                                  spec["minReplicaCount"], 1)
    return {"apiVersion": "keda.sh/v1alpha1", "kind": "ScaledObject",
            "metadata": {"name": "llm"}, "spec": spec}


def rand_trace(rng):
    n = rng.randint(5, 120)
    level, vals = rng.uniform(0, 60), []
    for _ in range(n):
        r = rng.random()
        if r < 0.1:
            level = 0
        elif r < 0.2:
            level = rng.uniform(0, 200)
        else:
            level = max(0.0, level + rng.gauss(0, 8))
        if rng.random() < 0.5:
            vals.append(str(int(level)))
        else:
            vals.append("%.3f" % level)
    step = rng.choice([15, 15, 15, 10, 30, 7])
    t, rows = 0, []
    for v in vals:
        rows.append((t, v))
        t += step if rng.random() < 0.9 else rng.randint(1, 40)
    return rows


def compare(args):
    if yaml is None:
        print("skip autoscale/ref-random (python3-yaml not installed)")
        return 0
    rng = random.Random(args.seed)
    tmp = args.keep or tempfile.mkdtemp(prefix="hpa-ref-")
    os.makedirs(tmp, exist_ok=True)
    failed = 0
    for case in range(args.cases):
        kind = "keda" if rng.random() < args.keda else "hpa"
        obj = rand_keda(rng) if kind == "keda" else rand_hpa(rng)
        rows = rand_trace(rng)
        start = rng.choice([0, 1, 1, 2, 3, 7, 25])
        mf = os.path.join(tmp, "case%04d.yaml" % case)
        sf = os.path.join(tmp, "case%04d.csv" % case)
        with open(mf, "w") as f:
            yaml.safe_dump(obj, f, sort_keys=False)
        with open(sf, "w") as f:
            f.write("t_s,value\n")
            for t, v in rows:
                f.write("%s,%s\n" % (t, v))
        want = recommend(mf, read_samples(sf), start)
        p = subprocess.run([args.gpufleet, "autoscale", "recommend",
                            "--hpa", mf, "--samples", sf,
                            "--start-replicas", str(start)],
                           capture_output=True, text=True)
        got = None
        if p.returncode == 0:
            got = [int(line.split(",")[1]) for line in p.stdout.split()]
        if got != want:
            failed += 1
            i = next((k for k in range(len(want))
                      if got is None or k >= len(got) or got[k] != want[k]),
                     0)
            print("FAIL autoscale/ref-random-%d (%s, seed %d): sample %d "
                  "(t=%s): gpufleet %s, reference %s (kept in %s)%s" % (
                      case, kind, args.seed, i + 1, rows[i][0] if rows else
                      "-", got[i] if got and i < len(got) else p.stderr.strip(),
                      want[i] if i < len(want) else "-", tmp,
                      "" if args.keep else ""))
            if not args.keep:
                args.keep = tmp
    print("%s autoscale/ref-random (%d cases, seed %d, %d failed)" % (
        "ok" if failed == 0 else "FAIL", args.cases, args.seed, failed))
    return 1 if failed else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("recommend")
    r.add_argument("--hpa", required=True)
    r.add_argument("--samples", required=True)
    r.add_argument("--start-replicas", type=int, default=1)
    r.add_argument("--json", action="store_true")
    c = sub.add_parser("compare")
    c.add_argument("--gpufleet", required=True)
    c.add_argument("--cases", type=int, default=300)
    c.add_argument("--seed", type=int, default=1)
    c.add_argument("--keda", type=float, default=0.2)
    c.add_argument("--keep")
    a = ap.parse_args()
    if a.cmd == "compare":
        return compare(a)
    if yaml is None:
        print("hpa_ref.py: python3-yaml is not installed", file=sys.stderr)
        return 1
    s = read_samples(a.samples)
    res = recommend(a.hpa, s, a.start_replicas)
    if a.json:
        print('{"replicas": [%s]}' % ", ".join(str(x) for x in res))
    else:
        for (t, _, _), x in zip(s, res):
            print("%s,%d" % (t, x))
    return 0


if __name__ == "__main__":
    sys.exit(main())
