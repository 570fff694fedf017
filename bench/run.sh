#!/bin/sh
# Run every benchmark; each figure is a line "BENCH name value unit".
# Figures, never pass/fail: compare them with the targets in the issues.
set -u
B=${1:-build}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
SHARED=${GPUFLEET_SHARED:-$ROOT/../shared}
echo "# gpufleet benchmarks on $(uname -m), $(getconf _NPROCESSORS_ONLN) CPUs"
"$ROOT/$B/bench/topo_bench" "$SHARED" "$ROOT/$B/gpufleet"
"$ROOT/$B/bench/sim_bench" "$SHARED"
"$ROOT/$B/bench/fgd_compare" "$SHARED"
sh "$ROOT/bench/fgd_sweep.sh" "$B"
"$ROOT/$B/bench/mig_bench"
"$ROOT/$B/bench/ctl_bench"
"$ROOT/$B/bench/agent_bench" "$ROOT/$B/gpufleet" "$ROOT/$B/fake-nvml/libnvidia-ml.so.1"
"$ROOT/$B/bench/store_bench" "$ROOT"
"$ROOT/$B/bench/serve_bench"
sh "$ROOT/bench/slurm_bench.sh" "$B"
"$ROOT/$B/bench/k8s_bench"
"$ROOT/$B/bench/charge_bench"
"$ROOT/$B/bench/autoscale_bench" "$SHARED"
sh "$ROOT/bench/autoscale_eval.sh" "$B"
"$ROOT/$B/bench/replay_bench" "$SHARED"
GPUFLEET_SHARED="$SHARED" sh "$ROOT/bench/replay_tables.sh" "$B"
"$ROOT/$B/bench/cluster_bench" "$ROOT/$B/gpufleet" \
	"$ROOT/$B/fake-nvml/libnvidia-ml.so.1" "$ROOT"
