#!/bin/sh
# The replay tables of docs/simulator.md, rerun: Philly at 6x its load,
# every policy, with the defaults (metrics over the arrival window, the
# tail apart; noisy runtime estimates, sigma 1), VCs as teams and as node
# partitions; then each trace's peak allocation at its largest load.
# Prints markdown tables and a BENCH line per run (its wall time).
#   sh bench/replay_tables.sh [BUILD_DIR] [OUT_DIR]
# The runs go two at a time (nice -n 10); the JSON stays in OUT_DIR.
# EXTRA="--limit 300" (say) is added to every run: a quick smoke test.
set -eu
B=${1:-build}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
OUT=${2:-$(mktemp -d)}
export GPUFLEET_SHARED="${GPUFLEET_SHARED:-$ROOT/../shared}"
G="$ROOT/$B/gpufleet"
T="$GPUFLEET_SHARED/traces/alibaba-gpu-v2023"
mkdir -p "$OUT"
run() { # NAME ARGS...: the JSON to OUT/NAME.json, its time to OUT/NAME.s
	n=$1
	shift
	s=$(date +%s)
	# shellcheck disable=SC2086 # EXTRA is words
	nice -n 10 "$G" simulate replay "$@" ${EXTRA:-} --json \
		>"$OUT/$n.json" 2>/dev/null
	echo $(($(date +%s) - s)) >"$OUT/$n.s"
}
run teams philly --load 6 --policy all &
run vcs philly --load 6 --policy all --vc-partitions &
wait
run exact philly --load 6 --policy fgd,bestfit --runtime-estimate exact &
(
	for f in "$T"/openb_pod_list_*.csv; do
		b=${f##*/openb_pod_list_}
		# the multigpu lists carry no times: fill only
		head -n 1 "$f" | grep -q creation_time || continue
		run "peak-alibaba-${b%.csv}" alibaba2023 "$f" --load 1000 \
			--policy fgd --points 2
	done
	run peak-dlrm dlrm2025 --load 1000 --policy fgd --points 2
) &
wait
python3 - "$OUT" <<'PY'
import json, os, sys
out = sys.argv[1]
def load(n):
    with open(os.path.join(out, n + ".json")) as f:
        return json.load(f)
def secs(n):
    with open(os.path.join(out, n + ".s")) as f:
        return f.read().strip()
def c(v):
    return f"{v:,.0f}"
for name, what in (("teams", "VCs as teams (fair share)"),
                   ("vcs", "VCs as node partitions (--vc-partitions)"),
                   ("exact", "exact run times (--runtime-estimate exact)")):
    d = load(name)
    w = d["policies"][0]["window"]
    print(f"\n### Philly at {d['load']:g}x, {what}; estimates "
          f"{d['runtime_estimate']}; window day {w['from_s']/86400:.1f}"
          f"-{w['to_s']/86400:.1f}\n")
    print("| policy | refused | wait p50 s | wait p95 s | wait p99 s | "
          "wait mean s | JCT p50 s | JCT p99 s | GPU alloc | frag | "
          "pending GPUs | tail: started | tail: wait p99 s | tail: alloc "
          "| tail: end day |")
    print("|---|" + "---:|" * 14)
    for p in d["policies"]:
        t = p["tail"]
        print(f"| {p['policy']} | {p['refused']} | {c(p['wait_s']['p50'])} "
              f"| {c(p['wait_s']['p95'])} | {c(p['wait_s']['p99'])} | "
              f"{c(p['wait_s']['mean'])} | {c(p['jct_s']['p50'])} | "
              f"{c(p['jct_s']['p99'])} | {100*p['mean_alloc']:.1f} % | "
              f"{100*p['mean_frag']:.1f} % | {p['mean_pending_gpus']:,.0f} "
              f"| {t['started']} | {c(t['wait_s']['p99'])} | "
              f"{100*t['mean_alloc']:.1f} % | {t['to_s']/86400:.1f} |")
    print(f"\nBENCH replay.table.{name} {secs(name)} s")
print("\n| trace | load | jobs | cluster GPUs | peak alloc | mean alloc "
      "(window) |")
print("|---|---:|---:|---:|---:|---:|")
def peak(label, d, p):
    print(f"| {label} | {d['load']:g} | {d['jobs']:,} | {d['gpus']:,} | "
          f"{100*p['peak_alloc']:.1f} % | {100*p['mean_alloc']:.1f} % |")
for n in sorted(x[:-5] for x in os.listdir(out)
                if x.startswith("peak-") and x.endswith(".json")):
    d = load(n)
    peak(n[5:], d, d["policies"][0])
d = load("teams")
peak("philly (fgd)", d, [p for p in d["policies"] if p["policy"] == "fgd"][0])
PY
