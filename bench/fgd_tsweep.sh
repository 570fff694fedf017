#!/bin/sh
# fgd_tsweep.sh - how FGD+'s temperature T was chosen (docs/placement.md,
# "T"): FGD+ at T = 750, 1000, 1250, 1500, 2000 (--fgdplus-t) on every
# Alibaba trace variant and the demo workload, tune 1.3, seeds 42-51;
# the figure is the mean unallocated GPU % over the load points 90, 95,
# 100, 110, 120, 130.  T is chosen on the six training traces (TRAIN
# below, fixed before the run) and checked on the others, held out.
#   sh bench/fgd_tsweep.sh [BUILD_DIR]
# Prints a table and BENCH fill.tsweep.T<T>.{train,held_out} lines.
set -u
B=${1:-build}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
SHARED=${GPUFLEET_SHARED:-$ROOT/../shared}
BIN="$ROOT/$B/gpufleet"
A="$SHARED/traces/alibaba-gpu-v2023"
if [ ! -f "$A/openb_node_list_gpu_node.csv" ]; then
	echo "# skipped fgd_tsweep: $A absent (set GPUFLEET_SHARED)"
	exit 0
fi
TRAIN="cpu050 gpushare40 gpuspec10 gpuspec25 multigpu20 multigpu40"
HELD="default cpu100 cpu200 cpu250 gpushare60 gpushare80 gpushare100
gpuspec05 gpuspec20 gpuspec33 multigpu30 multigpu50 demo"
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
for T in 750 1000 1250 1500 2000; do
	for t in $TRAIN $HELD; do
		if [ "$t" = demo ]; then
			set --
		else
			set -- --nodes "$A/openb_node_list_gpu_node.csv" \
				--pods "$A/openb_pod_list_$t.csv"
		fi
		nice -n 10 "$BIN" simulate fill "$@" --policy fgdplus \
			--seeds 42-51 --fgdplus-t "$T" --json \
			>"$TMP/$T-$t.json" 2>/dev/null || rm -f "$TMP/$T-$t.json"
	done
done
python3 - "$TMP" "$TRAIN" "$HELD" <<'PY'
import json, os, sys
d, train, held = sys.argv[1], sys.argv[2].split(), sys.argv[3].split()
pts = ["90", "95", "100", "110", "120", "130"]
def fig(T, t):
    f = os.path.join(d, "%s-%s.json" % (T, t))
    if not os.path.exists(f):
        return None
    m = json.load(open(f))["policies"]["fgdplus"]["unallocated_pct"]["mean"]
    return sum(m[k] for k in pts) / len(pts)
print("# FGD+ mean unallocated GPU % over 90..130 % load, seeds 42-51")
print("| T | train (%d) | held out (%d) | default at 100 %% |"
      % (len(train), len(held)))
print("|---|---|---|---|")
for T in (750, 1000, 1250, 1500, 2000):
    tr = [fig(T, t) for t in train]
    he = [fig(T, t) for t in held]
    f = os.path.join(d, "%s-default.json" % T)
    d100 = json.load(open(f))["policies"]["fgdplus"]["unallocated_pct"][
        "mean"]["100"] if os.path.exists(f) else float("nan")
    tr = [x for x in tr if x is not None]
    he = [x for x in he if x is not None]
    a, b = sum(tr) / len(tr), sum(he) / len(he)
    print("| %d | %.3f | %.3f | %.2f |" % (T, a, b, d100))
    print("BENCH fill.tsweep.T%d.train %.3f %%" % (T, a))
    print("BENCH fill.tsweep.T%d.held_out %.3f %%" % (T, b))
PY
