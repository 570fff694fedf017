#!/bin/sh
# Run every test for each build directory given (default: build) and end
# with one line "N passed, N failed, N skipped".
#   unit tests      build*/tests/test_*   (cmocka; each case counts)
#   golden tests    tests/golden/run.sh   (each case counts)
#   integration     tests/integration/*.sh
#   fuzz            build*/tests/xml_mutate (sanitizer build only)
#   fuzz corpora    build*/tests/fuzz/replay_* (the sanitizer tree):
#                   tests/fuzz/replay.sh, each corpus counts
# Run from anywhere; paths are relative to the repository root.
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT" || exit 1
[ $# -eq 0 ] && set -- build
export HWLOC_HIDE_ERRORS=2
# third-party leaks the sanitizer build must not fail on (see the file)
export LSAN_OPTIONS="suppressions=$ROOT/tests/lsan.supp:print_suppressions=0"
# full stacks for leaks, so that suppression can see through hwloc's
# plugins (built without frame pointers)
export ASAN_OPTIONS="fast_unwind_on_malloc=0"
SHARED=${GPUFLEET_SHARED:-$ROOT/../shared}
export GPUFLEET_SHARED="$SHARED"
[ -d "$SHARED/topologies" ] ||
	echo "note: shared data absent at $SHARED (set GPUFLEET_SHARED); tests that need it are skipped"
LOG=$(mktemp)
trap 'rm -f "$LOG"' EXIT
pass=0 fail=0 skip=0

count_lines() { # read ok/FAIL/skip lines on stdin, echo them, tally
	while IFS= read -r line; do
		echo "$line"
		case "$line" in
		"ok "*) echo P >>"$LOG" ;;
		"FAIL "*) echo F >>"$LOG" ;;
		"skip "*) echo S >>"$LOG" ;;
		esac
	done
}

for B in "$@"; do
	echo "== $B: unit tests"
	if ! ls "$B"/tests/test_* >/dev/null 2>&1; then
		echo "FAIL unit ($B has no test binaries: run make tests-build)" |
			count_lines
	fi
	for t in "$B"/tests/test_*; do
		[ -x "$t" ] || continue
		out=$("$t" 2>&1)
		rc=$?
		p=$(printf '%s\n' "$out" | sed -n 's/.*\[  PASSED  \] \([0-9]*\) test.*/\1/p' | tail -1)
		f=$(printf '%s\n' "$out" | sed -n 's/.*\[  FAILED  \] \([0-9]*\) test.*/\1/p' | tail -1)
		s=$(printf '%s\n' "$out" | sed -n 's/.*\[  SKIPPED \] \([0-9]*\) test.*/\1/p' | tail -1)
		p=${p:-0} f=${f:-0} s=${s:-0}
		if [ "$rc" != 0 ] && [ "$f" = 0 ]; then
			f=1 # crashed or died before cmocka's summary
		fi
		i=0; while [ $i -lt "$p" ]; do echo P >>"$LOG"; i=$((i + 1)); done
		i=0; while [ $i -lt "$f" ]; do echo F >>"$LOG"; i=$((i + 1)); done
		i=0; while [ $i -lt "$s" ]; do echo S >>"$LOG"; i=$((i + 1)); done
		echo "$(basename "$t"): $p passed, $f failed, $s skipped"
		[ "$f" != 0 ] && printf '%s\n' "$out" | grep -v '^\[ RUN\|^\[       OK' | sed 's/^/    /'
	done
	echo "== $B: golden tests"
	sh tests/golden/run.sh "$B" | count_lines
	echo "== $B: integration tests"
	for t in tests/integration/*.sh; do
		sh "$t" "$B" | count_lines
	done
	if [ -x "$B/tests/xml_mutate" ]; then
		echo "== $B: mutated XML"
		"$B/tests/xml_mutate" "$SHARED" 50 | count_lines
	fi
	if ls "$B"/tests/fuzz/replay_* >/dev/null 2>&1; then
		echo "== $B: fuzz corpora"
		sh tests/fuzz/replay.sh "$B" | count_lines
	fi
done
echo "== lint"
files=$(find src include tests bench -name '*.[ch]' | sort)
if command -v clang-format >/dev/null 2>&1; then
	# shellcheck disable=SC2086
	if out=$(clang-format --dry-run -Werror $files 2>&1); then
		echo "ok lint/clang-format"
	else
		echo "FAIL lint/clang-format (make format fixes it)"
		printf '%s\n' "$out" | head -20 | sed 's/^/    /'
	fi
else
	echo "skip lint/clang-format (not installed)"
fi | count_lines
if command -v cppcheck >/dev/null 2>&1; then
	if out=$(cppcheck -q --error-exitcode=1 \
		--enable=warning,performance,portability --inline-suppr \
		-Iinclude -Isrc src 2>&1); then
		echo "ok lint/cppcheck"
	else
		echo "FAIL lint/cppcheck"
		printf '%s\n' "$out" | head -20 | sed 's/^/    /'
	fi
else
	echo "skip lint/cppcheck (not installed)"
fi | count_lines
sh tests/tools/layers.sh | count_lines
sh tests/tools/fnsize.sh | count_lines
pass=$(grep -c P "$LOG")
fail=$(grep -c F "$LOG")
skip=$(grep -c S "$LOG")
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" = 0 ]
