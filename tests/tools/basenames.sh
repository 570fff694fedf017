#!/bin/sh
# Every .c file under src/ has a name of its own (a backtrace, a log's
# file:line, an object in nm or a grep hit then names one file): a name
# two rooms share is prefixed with its room (docs/INTERNALS.md).
#   sh tests/tools/basenames.sh [DIR]    (default src)
# Prints "ok lint/basenames" or "FAIL lint/basenames" with each clash.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT" || exit 1
SRC=${1:-src}
[ -d "$SRC" ] || {
	echo "FAIL lint/basenames ($SRC: no such directory)"
	exit 1
}
out=$(find "$SRC" -name '*.c' | awk '
	{ n = $0; sub(/.*\//, "", n); seen[n] = seen[n] " " $0; c[n]++ }
	END { for (n in c) if (c[n] > 1) print n ":" seen[n] }' | sort)
if [ -z "$out" ]; then
	echo "ok lint/basenames"
else
	echo "FAIL lint/basenames ($(printf '%s\n' "$out" | wc -l | tr -d ' ') names used twice or more)"
	printf '%s\n' "$out" | sed 's/^/    /'
	exit 1
fi
