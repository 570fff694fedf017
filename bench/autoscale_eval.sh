#!/bin/sh
# The autoscaling evaluation of docs/autoscaling.md ("Results on the real
# traces"): both Azure LLM inference traces (conversation, code), every
# window of 10 minutes and of 5 minutes each scored on its own, sized from
# the window before it (no hindsight), every policy; then the occupancy
# target swept.  Prints each table
# and one line per policy and trace:
#   BENCH autoscale.eval.TRACE.wWINDOW.POLICY.gpu_hours SUM gpu_h
#   BENCH autoscale.eval.TRACE.wWINDOW.POLICY.over_slo SUM requests
# Seconds, not minutes:
#   nice -n 10 sh bench/autoscale_eval.sh [BUILD_DIR]
set -eu
B=${1:-build}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
SHARED=${GPUFLEET_SHARED:-$ROOT/../shared}
T=$SHARED/traces/azure-llm-inference-2023
if [ ! -r "$T/AzureLLMInferenceTrace_conv.csv" ]; then
	echo "skip autoscale.eval (no $T)"
	exit 0
fi
for trace in conv code; do
	for w in 600 300; do
		echo "## $trace, windows of $w s"
		out=$("$ROOT/$B/gpufleet" simulate autoscale \
			--trace "$T/AzureLLMInferenceTrace_$trace.csv" \
			--windows "$w")
		echo "$out"
		echo "$out" | awk -v t="$trace" -v w="$w" '
			/^POLICY/ { s = 1; next }
			s && NF == 11 {
				printf "BENCH autoscale.eval.%s.w%s.%s.gpu_hours %s gpu_h\n", t, w, $1, $3
				printf "BENCH autoscale.eval.%s.w%s.%s.over_slo %s requests\n", t, w, $1, $7
			}'
	done
done
# The occupancy target, swept (10-minute windows; 75 is the default above)
for trace in conv code; do
	for o in 50 60 90; do
		echo "## $trace, windows of 600 s, occupancy target $o %"
		"$ROOT/$B/gpufleet" simulate autoscale \
			--trace "$T/AzureLLMInferenceTrace_$trace.csv" \
			--windows 600 --policy occupancy --occ-target "$o" |
			awk -v t="$trace" -v o="$o" '
			/^POLICY/ { s = 1; print; next }
			s && NF == 11 {
				print
				printf "BENCH autoscale.eval.%s.w600.occupancy-%s.gpu_hours %s gpu_h\n", t, o, $3
				printf "BENCH autoscale.eval.%s.w600.occupancy-%s.over_slo %s requests\n", t, o, $7
			}'
	done
done
