#!/bin/sh
# Replay every corpus of tests/fuzz/corpus/ through its harness built
# with replay.c in tree B (the sanitizer tree: `make check` builds
# B/tests/fuzz/replay_NAME there), once, in a fixed order.  Prints
# "ok fuzz/NAME (N inputs)" or "FAIL fuzz/NAME" with the report's tail.
#   sh tests/fuzz/replay.sh B [NAME...]
set -u
B=${1:-build-san}
shift
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT" || exit 1
export HWLOC_HIDE_ERRORS=2
if [ $# -eq 0 ]; then
	for f in tests/fuzz/fuzz_*.c; do
		f=${f#tests/fuzz/fuzz_}
		set -- "$@" "${f%.c}"
	done
fi
for name in "$@"; do
	bin=$B/tests/fuzz/replay_$name
	if [ ! -x "$bin" ]; then
		echo "skip fuzz/$name (no $bin)"
		continue
	fi
	if out=$(timeout 120 "$bin" "tests/fuzz/corpus/$name" 2>&1); then
		echo "ok fuzz/$name ($(printf '%s\n' "$out" | tail -1))"
	else
		echo "FAIL fuzz/$name (replay of tests/fuzz/corpus/$name)"
		printf '%s\n' "$out" | grep -E '^replay: ' | tail -1 |
			sed 's/^/    /'
		printf '%s\n' "$out" | grep -E 'ERROR|SUMMARY|runtime error| #[0-9] |^[a-z_]*: ' |
			grep -v '^replay: ' | head -12 | sed 's/^/    /'
	fi
done
