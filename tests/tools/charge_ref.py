#!/usr/bin/env python3
"""charge_ref.py - a reference model of OpenCost's cost allocation, written
from its rules (../shared/reference/autoscale-chargeback-engines.md, section
B1, and opencost/opencost core/pkg/opencost/allocation.go AggregateBy), kept
apart from gpufleet's C core: it prices every record into a per-container
allocation (a dict keyed by cluster/node/namespace/pod/container, as an
OpenCost AllocationSet), builds idle allocations from the asset totals, and
runs AggregateBy step by step on those allocations, not on groups.

  charge_ref.py --random N --seed S --bin BUILD/gpufleet [--keep DIR]
      N random cases: each written as records.csv and assets.csv, run
      through `gpufleet chargeback --json` with random options, and
      compared with this model to 1e-5 on every cost field.  Prints
      "ok charge/random-parity (N cases)" or "FAIL ..." with the first
      difference and the case kept.

  charge_ref.py --records R --assets A --window S,E [options as the CLI]
      prints this model's {name: totalCost} as JSON.
"""
import argparse
import csv
import json
import math
import os
import random
import shutil
import subprocess
import sys
import tempfile
from datetime import datetime, timezone

IDLE = "__idle__"
FILTERED = "__filtered__"
UNALLOC = "__unallocated__"
RES = ("cpu", "gpu", "ram")


def parse_time(s):
    try:
        return float(s)
    except ValueError:
        return datetime.fromisoformat(s.replace("Z", "+00:00")).timestamp()


def fnum(s):
    return None if s == "" else float(s)


class Alloc:
    def __init__(self, name, props):
        self.name = name
        self.props = props  # cluster node namespace pod container labels
        self.cost = {r: 0.0 for r in RES}
        self.hours = {r: 0.0 for r in RES}
        self.other = 0.0
        self.shared = 0.0

    def total(self):
        return sum(self.cost.values()) + self.other + self.shared

    def is_idle(self):
        return IDLE in self.name


def value(props, key):
    if key.startswith("label:"):
        labels = props.get("labels")
        if labels is None:
            return UNALLOC
        return labels.get(key[6:], UNALLOC)
    return props.get(key, "")


def gen_key(props, agg):
    return "/".join(value(props, k) for k in agg)


def matches_all(props, filt):
    """filt: list of (key, value); same key OR, different keys AND."""
    keys = {}
    for k, v in filt:
        keys.setdefault(k, []).append(v)
    for k, vals in keys.items():
        if k.startswith("label:") and props.get("labels") is None:
            return False
        if value(props, k) not in vals:
            return False
    return True


def price(records, assets, ws, we):
    """The allocation set and the idle inputs (asset costs per node)."""
    allocs = {}
    for r in records:
        s, t = max(r["start"], ws), min(r["end"], we)
        if t <= s:
            continue
        props = {k: r[k] for k in ("cluster", "node", "namespace", "pod",
                                   "container")}
        props["labels"] = r["labels"]
        name = "/".join(props[k] for k in ("cluster", "node", "namespace",
                                           "pod", "container"))
        a = allocs.setdefault(name, Alloc(name, props))
        cpu = max(x for x in (r["cpu_req"], r["cpu_use"], 0.0)
                  if x is not None) if (r["cpu_req"] is not None or
                                        r["cpu_use"] is not None) else 0.0
        ram = max(x for x in (r["ram_req"], r["ram_use"], 0.0)
                  if x is not None) if (r["ram_req"] is not None or
                                        r["ram_use"] is not None) else 0.0
        for row in assets:
            if (row["cluster"], row["node"]) != (r["cluster"], r["node"]):
                continue
            s2, t2 = max(s, row["start"]), min(t, row["end"])
            if t2 <= s2:
                continue
            h = (t2 - s2) / 3600.0
            a.hours["cpu"] += cpu * h
            a.hours["gpu"] += r["gpus"] * h
            a.hours["ram"] += ram * h
            a.cost["cpu"] += cpu * h * row["cpu_price"]
            a.cost["gpu"] += r["gpus"] * h * row["gpu_price"]
            a.cost["ram"] += ram * h * row["ram_price"]
        if r.get("other"):
            whole = r["end"] - r["start"]
            a.other += r["other"] * ((t - s) / whole if whole > 0 else 1)
    return allocs


def idle_allocs(allocs, assets, ws, we, by_node):
    """computeIdleAllocations: per node or cluster, asset - allocated."""
    asset_tot, alloc_tot = {}, {}
    for row in assets:
        s, t = max(ws, row["start"]), min(we, row["end"])
        if t <= s:
            continue
        h = (t - s) / 3600.0
        key = (row["cluster"], row["node"] if by_node else "")
        d = asset_tot.setdefault(key, {r: 0.0 for r in RES})
        d["cpu"] += row["cpu"] * row["cpu_price"] * h
        d["gpu"] += row["gpus"] * row["gpu_price"] * h
        d["ram"] += row["ram"] * row["ram_price"] * h
    for a in allocs.values():
        key = (a.props["cluster"], a.props["node"] if by_node else "")
        d = alloc_tot.setdefault(key, {r: 0.0 for r in RES})
        for r in RES:
            d[r] += a.cost[r]
    out = []
    for key, d in asset_tot.items():
        al = alloc_tot.get(key, {r: 0.0 for r in RES})
        name = "/".join(x for x in key if x) + "/" + IDLE
        i = Alloc(name, {"cluster": key[0], "node": key[1]})
        for r in RES:
            i.cost[r] = d[r] - al[r]
        out.append(i)
    return out


def idle_id(a, by_node):
    c = a.props.get("cluster", "")
    return c + "/" + a.props.get("node", "") if by_node else c


def idle_coeffs(main, shared, by_node):
    coeffs, totals = {}, {}
    for a in list(main) + list(shared):
        iid = idle_id(a, by_node)
        c = coeffs.setdefault(iid, {}).setdefault(a.name,
                                                  {r: 0.0 for r in RES})
        t = totals.setdefault(iid, {r: 0.0 for r in RES})
        for r in RES:
            c[r] += a.cost[r]
            t[r] += a.cost[r]
    for iid in coeffs:
        for n in coeffs[iid]:
            for r in RES:
                if coeffs[iid][n][r] > 0 and totals[iid][r] > 0:
                    coeffs[iid][n][r] /= totals[iid][r]
    return coeffs, totals


def aggregate(allocs, idles, o):
    """AllocationSet.AggregateBy, in its order."""
    by_node = o["idle_by_node"]
    share_idle = o["share_idle"]
    filt = o["filter"]
    main, shared, agg = {}, {}, {}
    idle_set = []
    for a in allocs.values():
        if any(value(a.props, k) == v for k, v in o["share"]):
            shared[a.name] = a
        else:
            main[a.name] = a
    for i in idles:  # (1)
        if share_idle:
            idle_set.append(i)
        else:
            agg.setdefault(i.name, []).append(i)
    if not main:
        return {}
    coeffs = totals = None
    if idle_set and share_idle:  # (2a)
        coeffs, totals = idle_coeffs(main.values(), shared.values(), by_node)
    ifc = None
    if filt and not share_idle:  # (2c)
        ifc, _ = idle_coeffs(main.values(), shared.values(), by_node)
    hourly = []
    for name, cost in o["hourly"]:  # (2d)
        if cost > 0:
            hours = (o["we"] - o["ws"]) / 3600.0
            h = Alloc(name + "/__shared__", {"cluster": "__shared__"})
            h.shared = cost * hours
            hourly.append(h)
    share_list = list(shared.values()) + hourly
    share_coeff = None
    if share_list:  # (2e)
        share_coeff, total = {}, 0.0
        for a in main.values():
            name = gen_key(a.props, o["agg"])
            if filt and not matches_all(a.props, filt):
                name = FILTERED
            if o["even"]:
                share_coeff[name] = 1.0
                total = float(len(share_coeff))
            else:
                w = a.total() - a.shared
                share_coeff[name] = share_coeff.get(name, 0.0) + w
                total += w
        for k in share_coeff:
            share_coeff[k] = (share_coeff[k] / total
                              if share_coeff[k] > 0 and total > 0 else 0.0)
    rows = {}
    for a in main.values():  # (3-5)
        iid = idle_id(a, by_node)
        if filt and not matches_all(a.props, filt):
            if ifc is not None and iid in ifc:
                ifc[iid].pop(a.name, None)
            continue
        b = Alloc(a.name, a.props)
        b.cost = dict(a.cost)
        b.other = a.other
        b.idle = {r: 0.0 for r in RES}
        for i in idle_set:
            if idle_id(i, by_node) != iid:
                continue
            for r in RES:
                add = i.cost[r] * coeffs[iid][a.name][r]
                b.cost[r] += add
                b.idle[r] += add
        key = gen_key(a.props, o["agg"])
        rows.setdefault(key, []).append(b)
    shared_total = 0.0
    for a in shared.values():  # (6)
        t = a.total()
        iid = idle_id(a, by_node)
        for i in idle_set:
            if idle_id(i, by_node) != iid:
                continue
            for r in RES:
                t += i.cost[r] * coeffs[iid][a.name][r]
        shared_total += t
    shared_total += sum(h.total() for h in hourly)
    out = {}
    for key, parts in rows.items():
        tot = sum(p.total() for p in parts)
        if share_coeff is not None and key in share_coeff:  # (8)
            tot += shared_total * share_coeff[key]
        out[key] = {"totalCost": tot,
                    "gpuCost": sum(p.cost["gpu"] for p in parts),
                    "cpuCost": sum(p.cost["cpu"] for p in parts),
                    "ramCost": sum(p.cost["ram"] for p in parts),
                    "gpuHours": sum(a.hours["gpu"] for a in main.values()
                                    if gen_key(a.props, o["agg"]) == key and
                                    (not filt or
                                     matches_all(a.props, filt)))}
    idle_rows = []
    if not share_idle:  # idle kept as rows, (7) filtration
        group = {}
        if ifc is not None:
            for iid, m in ifc.items():
                g = group.setdefault(iid, {r: 0.0 for r in RES})
                for n in m.values():
                    for r in RES:
                        g[r] += n[r]
        for name, parts in agg.items():
            for i in parts:
                c = dict(i.cost)
                iid = idle_id(i, by_node)
                if iid in group:
                    for r in RES:
                        c[r] *= group[iid][r]
                idle_rows.append((i, c))
    else:  # (10) undistributable idle
        for i in idle_set:
            if filt and not matches_all(i.props, filt):
                continue
            iid = idle_id(i, by_node)
            c, keep = {}, False
            for r in RES:
                if i.cost[r] > 0 and totals.get(iid, {}).get(r, 0.0) == 0:
                    c[r] = i.cost[r]
                    keep = True
                else:
                    c[r] = 0.0
            if keep:
                idle_rows.append((i, c))
    for i, c in idle_rows:  # (11)
        if o["split_idle"]:
            name = idle_id(i, by_node) + "/" + IDLE
        else:
            name = IDLE
        d = out.setdefault(name, {"totalCost": 0.0, "gpuCost": 0.0,
                                  "cpuCost": 0.0, "ramCost": 0.0,
                                  "gpuHours": 0.0})
        d["totalCost"] += sum(c.values())
        d["gpuCost"] += c["gpu"]
        d["cpuCost"] += c["cpu"]
        d["ramCost"] += c["ram"]
    return out


def read_inputs(records_path, assets_path):
    records, assets = [], []
    with open(records_path) as f:
        for r in csv.DictReader(f):
            labels = None
            if r.get("labels"):
                labels = dict(p.split("=", 1) for p in r["labels"].split(";")
                              if "=" in p)
            records.append({
                "cluster": r["cluster"], "node": r["node"],
                "namespace": r["namespace"], "pod": r["pod"],
                "container": r["container"],
                "start": parse_time(r["start"]), "end": parse_time(r["end"]),
                "gpus": fnum(r["gpus"]) or 0.0,
                "cpu_req": fnum(r["cpu_req"]), "cpu_use": fnum(r["cpu_use"]),
                "ram_req": fnum(r["ram_req_gib"]),
                "ram_use": fnum(r["ram_use_gib"]),
                "labels": labels,
                "other": fnum(r.get("other_cost", "") or ""),
            })
    with open(assets_path) as f:
        for r in csv.DictReader(f):
            assets.append({
                "cluster": r["cluster"], "node": r["node"],
                "start": parse_time(r["start"]), "end": parse_time(r["end"]),
                "gpus": float(r["gpus"]), "cpu": float(r["cpu_cores"]),
                "ram": float(r["ram_gib"]),
                "gpu_price": float(r["gpu_price_hr"]),
                "cpu_price": float(r["cpu_core_price_hr"]),
                "ram_price": float(r["ram_gib_price_hr"]),
            })
    return records, assets


def model(records, assets, o):
    allocs = price(records, assets, o["ws"], o["we"])
    idles = idle_allocs(allocs, assets, o["ws"], o["we"], o["idle_by_node"])
    return aggregate(allocs, idles, o)


# --- random cases ---------------------------------------------------------

def iso(t):
    return datetime.fromtimestamp(t, timezone.utc).strftime(
        "%Y-%m-%dT%H:%M:%SZ")


def random_case(rng, d):
    ws = 1714521600 + rng.randrange(0, 100) * 3600
    hours = rng.choice([1, 6, 10, 24, 48])
    we = ws + hours * 3600
    clusters = ["c1", "c2", "c3"][:rng.randint(1, 3)]
    nodes = []
    for c in clusters:
        for n in range(rng.randint(1, 3)):
            nodes.append((c, "%s-n%d" % (c, n)))
    namespaces = ["teamA", "teamB", "teamC", "kube-system", "ops"]
    teams = ["red", "blue", "green"]
    assets = []
    for c, n in nodes:
        gpus = rng.choice([0, 4, 8, 16])
        cpu, ram = rng.choice([32, 64, 128]), rng.choice([256, 512, 1024])
        prices = lambda: (round(rng.uniform(0.5, 4), 3),
                          round(rng.uniform(0.01, 0.08), 4),
                          round(rng.uniform(0.001, 0.01), 5))
        a0 = ws - rng.randrange(0, 5) * 3600
        a1 = we + rng.randrange(0, 5) * 3600
        if rng.random() < 0.3:
            mid = rng.randrange(ws + 600, we - 60, 60)
            spans = [(a0, mid), (mid, a1)]
        else:
            spans = [(a0, a1)]
        for s, t in spans:
            g, cp, rp = prices()
            assets.append([c, n, iso(s), iso(t), gpus, cpu, ram, g, cp, rp])
    records = []
    load = {}
    labels_of = {}
    for i in range(rng.randint(3, 30)):
        c, n = rng.choice(nodes)
        cap = [a[4] for a in assets if a[1] == n][0]
        s = rng.randrange(ws - 7200, we, 60)
        t = rng.randrange(s, we + 7200, 60)
        g = 0.0
        if cap and rng.random() < 0.7:
            g = rng.choice([0.25, 0.5, 1, 2, 0.125])
            if load.get(n, 0.0) + g > cap:  # stay within capacity
                g = 0.0
            load[n] = load.get(n, 0.0) + g
        opt = lambda lo, hi: ("" if rng.random() < 0.15 else
                              round(rng.uniform(lo, hi), 3))
        ns = rng.choice(namespaces)
        pod, ctr = "pod%d" % rng.randint(0, 8), "ctr%d" % rng.randint(0, 2)
        # a container's labels are its own: the same on every record
        who = (c, n, ns, pod, ctr)
        if who not in labels_of:
            labels = ""
            if rng.random() < 0.7:
                labels = "team=%s" % rng.choice(teams)
                if rng.random() < 0.5:
                    labels += ";app=app%d" % rng.randint(1, 3)
            labels_of[who] = labels
        records.append([c, n, ns, pod, ctr, iso(s), iso(t), g,
                        opt(0, 8), opt(0, 8), opt(0, 64), opt(0, 64),
                        labels_of[who]])
    with open(os.path.join(d, "records.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["cluster", "node", "namespace", "pod", "container",
                    "start", "end", "gpus", "cpu_req", "cpu_use",
                    "ram_req_gib", "ram_use_gib", "labels"])
        w.writerows(records)
    with open(os.path.join(d, "assets.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["cluster", "node", "start", "end", "gpus", "cpu_cores",
                    "ram_gib", "gpu_price_hr", "cpu_core_price_hr",
                    "ram_gib_price_hr"])
        w.writerows(assets)
    agg = rng.choice([["namespace"], ["cluster"], ["node"], ["label:team"],
                      ["namespace", "label:team"], ["cluster", "namespace"],
                      ["pod"]])
    o = {"ws": ws, "we": we, "agg": agg,
         "share_idle": rng.random() < 0.5,
         "idle_by_node": rng.random() < 0.5,
         "split_idle": rng.random() < 0.2,
         "even": rng.random() < 0.3, "share": [], "filter": [],
         "hourly": []}
    if rng.random() < 0.4:
        o["share"].append(("namespace", "kube-system"))
    if rng.random() < 0.15:
        o["share"].append(("label:app", "app1"))
    if rng.random() < 0.3:
        o["hourly"].append(("ops", round(rng.uniform(0.1, 5), 2)))
    if rng.random() < 0.25:
        o["filter"].append(rng.choice([("cluster", "c1"),
                                       ("namespace", "teamA"),
                                       ("namespace", "teamB"),
                                       ("node", "c1-n0")]))
    return o


def cli_args(o, d):
    a = ["chargeback", "--records", os.path.join(d, "records.csv"),
         "--assets", os.path.join(d, "assets.csv"),
         "--window", "%d,%d" % (o["ws"], o["we"]),
         "--aggregate", ",".join(o["agg"]), "--json"]
    if o["share_idle"]:
        a.append("--share-idle")
    if o["idle_by_node"]:
        a.append("--idle-by-node")
    if o["split_idle"]:
        a.append("--split-idle")
    if o["even"]:
        a += ["--share-split", "even"]
    for k, v in o["share"]:
        a += ["--share", "%s=%s" % (k, v)]
    for k, v in o["filter"]:
        a += ["--filter", "%s=%s" % (k, v)]
    for k, v in o["hourly"]:
        a += ["--shared-hourly", "%s=%s" % (k, v)]
    return a


def compare(want, got):
    """The first difference beyond 1e-5 (after OpenCost's rounding)."""
    if set(want) != set(got):
        return "rows differ: model %s, gpufleet %s" % (sorted(want),
                                                        sorted(got))
    for name in want:
        for f in ("totalCost", "gpuCost", "cpuCost", "ramCost", "gpuHours"):
            w = round(want[name][f] * 1e5) / 1e5
            g = got[name][f]
            if g is None or abs(w - g) > 1e-5 + 1e-9 * abs(w):
                return "%s.%s: model %.6f, gpufleet %s" % (name, f, w, g)
    return None


def run_random(n, seed, binary, keep):
    rng = random.Random(seed)
    for i in range(n):
        d = tempfile.mkdtemp(prefix="charge-ref-")
        o = random_case(rng, d)
        args = cli_args(o, d)
        p = subprocess.run([binary] + args, capture_output=True, text=True)
        why = None
        if p.returncode != 0:
            why = "gpufleet failed: %s" % p.stderr.strip()
        else:
            got = json.loads(p.stdout)["data"][0]
            records, assets = read_inputs(os.path.join(d, "records.csv"),
                                          os.path.join(d, "assets.csv"))
            want = model(records, assets, o)
            why = compare(want, got)
        if why:
            dest = keep or d
            if keep:
                shutil.copytree(d, os.path.join(keep, "case%d" % i),
                                dirs_exist_ok=True)
            print("FAIL charge/random-parity (case %d of seed %d)" %
                  (i, seed))
            print("    %s" % why)
            print("    args: %s" % " ".join(args))
            print("    case kept in %s" % dest)
            return 1
        shutil.rmtree(d)
    print("ok charge/random-parity (%d cases, seed %d)" % (n, seed))
    return 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--random", type=int)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--bin")
    ap.add_argument("--keep")
    ap.add_argument("--records")
    ap.add_argument("--assets")
    ap.add_argument("--window")
    ap.add_argument("--aggregate", default="namespace")
    ap.add_argument("--share-idle", action="store_true")
    ap.add_argument("--idle-by-node", action="store_true")
    ap.add_argument("--split-idle", action="store_true")
    ap.add_argument("--share-split", default="weighted")
    ap.add_argument("--share", action="append", default=[])
    ap.add_argument("--filter", action="append", default=[])
    ap.add_argument("--shared-hourly", action="append", default=[])
    a = ap.parse_args()
    if a.random:
        return run_random(a.random, a.seed, a.bin, a.keep)
    ws, we = (parse_time(x) for x in a.window.split(","))
    o = {"ws": ws, "we": we, "agg": a.aggregate.split(","),
         "share_idle": a.share_idle, "idle_by_node": a.idle_by_node,
         "split_idle": a.split_idle, "even": a.share_split == "even",
         "share": [tuple(s.split("=", 1)) for s in a.share],
         "filter": [tuple(s.split("=", 1)) for s in a.filter],
         "hourly": [(s.split("=", 1)[0], float(s.split("=", 1)[1]))
                    for s in a.shared_hourly]}
    records, assets = read_inputs(a.records, a.assets)
    out = model(records, assets, o)
    print(json.dumps({k: round(v["totalCost"], 5) for k, v in
                      sorted(out.items())}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
