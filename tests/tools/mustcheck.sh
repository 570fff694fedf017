#!/bin/sh
# Results that say whether a call worked are marked GF_MUST_CHECK
# (include/gpufleet/err.h: warn_unused_result, so a dropped one is a
# warning, and an error under CI=true); a deliberate ignore says (void).
# This counts the marks in the headers under src/ and include/ (comments
# and the macro's own definition aside) and fails below MIN.
#   sh tests/tools/mustcheck.sh [MIN] [DIR...]   (default 50, src include)
# Prints "ok lint/must-check (N marks)" or "FAIL lint/must-check ...".
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT" || exit 1
MIN=${1:-50}
[ $# -gt 0 ] && shift
[ $# -eq 0 ] && set -- src include
n=$(find "$@" -name '*.h' -print | sort | xargs cat /dev/null |
	grep -v '^[[:space:]]*\(#\|/\*\|\*\|//\)' |
	grep -o '\<GF_MUST_CHECK\>' | wc -l | tr -d ' ')
if [ "$n" -ge "$MIN" ]; then
	echo "ok lint/must-check ($n marks)"
else
	echo "FAIL lint/must-check ($n GF_MUST_CHECK marks in headers, want at least $MIN)"
	exit 1
fi
