#!/bin/sh
# fgd_sweep.sh - FGD+ against FGD at every arrived-load point (90..130 %)
# on every Alibaba trace variant, the built-in (demo) workload and three
# synthetic mixes of other shapes made here (a fixed generator, below),
# tune 1.3, seeds 42-51 (docs/placement.md, "FGD+ against FGD at every
# load").  With T=..., FGD+ runs at that temperature (--fgdplus-t).
#   sh bench/fgd_sweep.sh [BUILD_DIR] [T]
# Prints the table (FGD, FGD+, difference, '!' where FGD+ is worse by
# more than 0.05 points) and BENCH lines:
#   fill.sweep.worst_vs_fgd      the largest FGD+ - FGD over all points
#   fill.sweep.points_worse      points where FGD+ is worse by > 0.05
#   fill.sweep.default_100.reduction   (FGD - FGD+) / FGD at 100 %, %
#   fill.sweep.wall              seconds for the whole sweep
set -u
B=${1:-build}
T=${2:-}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
SHARED=${GPUFLEET_SHARED:-$ROOT/../shared}
BIN="$ROOT/$B/gpufleet"
A="$SHARED/traces/alibaba-gpu-v2023"
if [ ! -f "$A/openb_node_list_gpu_node.csv" ]; then
	echo "# skipped fgd_sweep: $A absent (set GPUFLEET_SHARED)"
	exit 0
fi
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
TARG=""
[ -n "$T" ] && TARG="--fgdplus-t $T"
START=$(date +%s)

# Synthetic mixes: per kind "weight:ngpus:milli list:cores lo-hi:spec",
# kinds apart by semicolons
# (a fixed LCG, so every run draws the same requests).
synth() {
	awk -v name="$1" -v n=8000 'BEGIN {
		srand(1); x = 12345
		print "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec"
		if (name == "syn-shares") {     # many small shares, few whole
			k = split("40:1:100 200 300 400 600 700 900:2-12:;30:1:1000:4-16:;10:2:1000:8-24:;20:0:0:2-16:", K, ";")
		} else if (name == "syn-cpuheavy") { # big CPU per GPU, 8-GPU jobs
			k = split("25:8:1000:64-120:;15:4:1000:32-64:;40:1:1000:16-32:;10:1:500:8-24:;10:0:0:32-64:", K, ";")
		} else {                         # restricted models
			k = split("25:1:1000:4-12:T4;15:1:500 250:2-8:P100;10:1:1000:8-16:V100M16|V100M32;30:1:1000:4-16:;10:1:300 600:2-8:;10:8:1000:32-96:", K, ";")
		}
		tot = 0
		for (i = 1; i <= k; i++) { split(K[i], f, ":"); W[i] = f[1]; tot += f[1] }
		for (j = 0; j < n; j++) {
			x = (x * 1103515245 + 12345) % 2147483648; r = x % tot
			for (i = 1; i <= k && r >= W[i]; i++) r -= W[i]
			split(K[i], f, ":")
			m = split(f[3], S, " ")
			x = (x * 1103515245 + 12345) % 2147483648
			milli = S[1 + x % m]
			split(f[4], C, "-")
			x = (x * 1103515245 + 12345) % 2147483648
			cores = C[1] + x % (C[2] - C[1] + 1)
			spec = f[5]
			printf "syn-%06d,%d,%d,%d,%d,%s\n", j, cores * 1000, cores * 4096, f[2], milli, spec
		}
	}' > "$TMP/$1.csv"
}

run() { # name, args...
	name=$1
	shift
	nice -n 10 "$BIN" simulate fill "$@" --policy fgd,fgdplus --seeds 42-51 \
		$TARG --json > "$TMP/$name.json" 2>"$TMP/$name.err" ||
		{ echo "# $name: $(cat "$TMP/$name.err")"; rm -f "$TMP/$name.json"; }
}

for t in default cpu050 cpu100 cpu200 cpu250 gpushare40 gpushare60 \
	gpushare80 gpushare100 gpuspec05 gpuspec10 gpuspec20 gpuspec25 \
	gpuspec33 multigpu20 multigpu30 multigpu40 multigpu50; do
	run "$t" --nodes "$A/openb_node_list_gpu_node.csv" \
		--pods "$A/openb_pod_list_$t.csv"
done
run demo
for s in syn-shares syn-cpuheavy syn-models; do
	synth "$s"
	run "$s" --nodes "$A/openb_node_list_gpu_node.csv" --pods "$TMP/$s.csv"
done
python3 - "$TMP" "$(($(date +%s) - START))" <<'PY'
import json, os, sys
d, wall = sys.argv[1], sys.argv[2]
order = ["default", "cpu050", "cpu100", "cpu200", "cpu250", "gpushare40",
         "gpushare60", "gpushare80", "gpushare100", "gpuspec05", "gpuspec10",
         "gpuspec20", "gpuspec25", "gpuspec33", "multigpu20", "multigpu30",
         "multigpu40", "multigpu50", "demo", "syn-shares", "syn-cpuheavy",
         "syn-models"]
pts = ["90", "95", "100", "110", "120", "130"]
print("# unallocated GPU %, mean over seeds 42-51: FGD / FGD+ / FGD+ - FGD "
      "('!' worse by > 0.05)")
print("| trace | " + " | ".join(p + " %" for p in pts) + " |")
print("|---" * (len(pts) + 1) + "|")
worst, nworse, red = -1e9, 0, float("nan")
for n in order:
    f = os.path.join(d, n + ".json")
    if not os.path.exists(f):
        continue
    p = json.load(open(f))["policies"]
    a = p["fgd"]["unallocated_pct"]["mean"]
    b = p["fgdplus"]["unallocated_pct"]["mean"]
    cells = []
    for k in pts:
        x = b[k] - a[k]
        worst = max(worst, x)
        nworse += x > 0.05
        cells.append("%.2f / %.2f / %+.2f%s" % (a[k], b[k], x,
                                                 " !" if x > 0.05 else ""))
    if n == "default":
        red = 100 * (a["100"] - b["100"]) / a["100"]
    print("| %s | %s |" % (n, " | ".join(cells)))
print("BENCH fill.sweep.worst_vs_fgd %+.2f pp" % worst)
print("BENCH fill.sweep.points_worse %d count" % nworse)
print("BENCH fill.sweep.default_100.reduction %.1f %%" % red)
print("BENCH fill.sweep.wall %s s" % wall)
PY
