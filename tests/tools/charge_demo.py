#!/usr/bin/env python3
"""charge_demo.py - writes the chargeback demo fixture (deterministic):
a week of one cluster of three nodes (hgx-a and hgx-b: 8 H100 each, GPU 7
of hgx-b in MIG mode; l40s-a: 8 L40S), five teams, GPU telemetry with the
agent's diagnoses, and a prices file.

  python3 tests/tools/charge_demo.py tests/fixtures/chargeback/demo

writes demo-records.csv, demo-assets.csv, demo-telemetry.csv and
demo-prices.yaml (the committed files are this script's output).
"""
import random
import sys
from datetime import datetime, timedelta, timezone

T0 = datetime(2024, 5, 1, tzinfo=timezone.utc)
SLOT_H = 6
DAYS = 7
TEAMS = ["vision", "nlp", "search", "research"]


def iso(t):
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


def main(prefix):
    rng = random.Random(15)
    nodes = [("hgx-a", "H100"), ("hgx-b", "H100"), ("l40s-a", "L40S")]
    with open(prefix + "-assets.csv", "w") as f:
        f.write("cluster,node,start,end,gpus,cpu_cores,ram_gib,"
                "gpu_price_hr,cpu_core_price_hr,ram_gib_price_hr,"
                "gpu_model\n")
        for n, m in nodes:
            f.write("prod,%s,%s,%s,8,96,1024,,,,%s\n" %
                    (n, iso(T0), iso(T0 + timedelta(days=DAYS)), m))
    recs, tele = [], []
    for slot in range(DAYS * 24 // SLOT_H):
        s = T0 + timedelta(hours=slot * SLOT_H)
        t = s + timedelta(hours=SLOT_H)
        for n, m in nodes:
            # the node agent and its exporter, every slot: shared costs
            recs.append(("prod", n, "platform", "agent-" + n, "agent", s, t,
                         0, 1, 0.4, 4, 2.5, "team=platform", "", "", ""))
            gpus = list(range(8 if n != "hgx-b" else 7))
            rng.shuffle(gpus)
            i = 0
            while i < len(gpus):
                if rng.random() < 0.22:  # left idle
                    i += 1
                    continue
                team = rng.choice(TEAMS)
                k = min(rng.choice([1, 1, 2, 4]), len(gpus) - i)
                ids = sorted(gpus[i:i + k])
                i += k
                job = "%s-%d-%s%d" % (team, slot, n[0], ids[0])
                if k == 1 and rng.random() < 0.25:  # a shared GPU
                    for part, milli in (("a", 0.5), ("b", 0.25)):
                        recs.append(("prod", n, team, job + part, "main", s,
                                     t, milli, 4, 3, 32, 28, "team=" + team,
                                     "", "", str(ids[0])))
                else:
                    recs.append(("prod", n, team, job, "main", s, t, k,
                                 10 * k, 7 * k, 100 * k, 80 * k,
                                 "team=" + team, "", "",
                                 ";".join(str(g) for g in ids)))
                for g in ids:
                    act = rng.choice([92, 85, 70, 55, 40, 3, 0])
                    diag = ""
                    if act == 0:
                        diag = "allocated-idle"
                    elif act == 40 and rng.random() < 0.5:
                        diag = "data-starvation"
                    elif act == 55 and rng.random() < 0.3:
                        diag = "memory-overprovisioned"
                    tele.append((n, str(g), s, t, act, diag))
            if n == "hgx-b":  # GPU 7: 3g.40gb + 2g.20gb (+ 2g.20gb)
                layout = [("3g.40gb", "7/gi1"), ("2g.20gb", "7/gi5")]
                if slot % 2:
                    layout.append(("2g.20gb", "7/gi6"))
                for prof, dev in layout:
                    team = rng.choice(["nlp", "search"])
                    recs.append(("prod", n, team, "%s-mig-%d-%s" %
                                 (team, slot, dev[2:]), "main", s, t, 1, 2,
                                 1.5, 16, 12, "team=" + team, prof, "", dev))
                    tele.append((n, dev, s, t, rng.choice([80, 60, 20]), ""))
    with open(prefix + "-records.csv", "w") as f:
        f.write("cluster,node,namespace,pod,container,start,end,gpus,"
                "cpu_req,cpu_use,ram_req_gib,ram_use_gib,labels,"
                "mig_profile,gpu_model,gpu_ids\n")
        for r in recs:
            f.write(",".join(iso(x) if isinstance(x, datetime) else str(x)
                             for x in r) + "\n")
    with open(prefix + "-telemetry.csv", "w") as f:
        f.write("node,gpu,start,end,gr_engine_active,diagnosis\n")
        for n, g, s, t, act, diag in tele:
            f.write("%s,%s,%s,%s,%d,%s\n" % (n, g, iso(s), iso(t), act,
                                             diag))
    with open(prefix + "-prices.yaml", "w") as f:
        f.write("# prices of the chargeback demo (per hour)\n"
                "currency: USD\n"
                "gpu:\n  H100: 2.50\n  L40S: 1.10\n"
                "cpu_core: 0.031611\n"
                "ram_gib: 0.004237\n"
                "mig_rule: compute\n")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "demo")
