#!/bin/sh
# `make fuzz`: run each libFuzzer harness of build-fuzz/fuzz/ for SECONDS
# over its corpus.  New inputs go to build-fuzz/corpus/NAME/ (the seeds
# in tests/fuzz/corpus/NAME/ are read, never written); a crash, leak or
# timeout leaves build-fuzz/crashes/NAME-crash-*.  Ends with one line per
# target and "fuzz: N targets, S s CPU, N findings".
#   sh tests/fuzz/run.sh SECONDS NAME...
set -u
secs=${1:-10}
shift
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT" || exit 1
export HWLOC_HIDE_ERRORS=2
export LSAN_OPTIONS="suppressions=$ROOT/tests/lsan.supp:print_suppressions=0"
export ASAN_OPTIONS="fast_unwind_on_malloc=0"
mkdir -p build-fuzz/crashes build-fuzz/logs
found=0 cpu_total=0
for name in "$@"; do
	mkdir -p "build-fuzz/corpus/$name"
	log=build-fuzz/logs/$name.log
	start=$(awk '{print $14 + $15 + $16 + $17}' /proc/$$/stat)
	# -timeout: an input slower than 10 s is a finding (a hang);
	# -rss_limit_mb: one that grows past 2 GiB is one too
	"build-fuzz/fuzz/$name" -max_total_time="$secs" -timeout=10 \
		-rss_limit_mb=2048 -print_final_stats=1 \
		-artifact_prefix="build-fuzz/crashes/$name-" \
		"build-fuzz/corpus/$name" "tests/fuzz/corpus/$name" \
		>"$log" 2>&1
	rc=$?
	end=$(awk '{print $14 + $15 + $16 + $17}' /proc/$$/stat)
	ticks=$((end - start))
	cpu_total=$((cpu_total + ticks))
	runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
	cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1)
	if [ "$rc" = 0 ]; then
		line="ok fuzz/$name (${runs:-0} runs, ${cov:-cov: ?})"
	else
		found=$((found + 1))
		arts=""
		for a in build-fuzz/crashes/"$name"-*; do
			[ -e "$a" ] && arts="$arts $a"
		done
		line="FAIL fuzz/$name (see $log;$arts)"
	fi
	echo "$line"
done
hz=$(getconf CLK_TCK)
echo "fuzz: $# targets, $((cpu_total / hz)) s CPU, $found findings"
[ "$found" = 0 ]
