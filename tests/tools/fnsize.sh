#!/bin/sh
# No function over 150 lines (STYLE.md; clang-tidy's
# readability-function-size with the same threshold): in the project's C
# code, the lines from a function's opening brace at column 0 to its
# closing one.  Prints "ok lint/function-size" or "FAIL ..." with each.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT" || exit 1
MAX=150
out=$(find src bench tests/fake_nvml tests/tools -name '*.c' | sort |
	xargs awk -v max="$MAX" '
	FNR == 1 { name = ""; start = 0 }
	/^[A-Za-z_].*\(/ && !/;[ \t]*$/ { name = $0 }
	/^\{/ { start = FNR }
	/^\}/ && start {
		n = FNR - start - 1
		if (n > max) {
			sub(/\(.*/, "", name)
			k = split(name, w, /[ *]+/)
			printf "%s:%d: %s: %d lines\n", FILENAME, start, w[k], n
		}
		start = 0
	}')
# functions known to be over and being split (file:function), one a line;
# an entry that is no longer over the limit fails too, so the list only
# shrinks
ALLOW="tests/tools/fnsize.allow"
if [ -f "$ALLOW" ]; then
	for a in $(grep -v '^#' "$ALLOW"); do
		f=${a%%:*} fn=${a#*:}
		if printf '%s\n' "$out" | grep -q "^$f:[0-9]*: $fn:"; then
			out=$(printf '%s\n' "$out" | grep -v "^$f:[0-9]*: $fn:")
		else
			out="$out
$f: $fn: listed in $ALLOW but no longer over $MAX lines (remove it)"
		fi
	done
	out=$(printf '%s\n' "$out" | sed '/^$/d')
fi
if [ -z "$out" ]; then
	echo "ok lint/function-size"
else
	echo "FAIL lint/function-size (over $MAX lines)"
	printf '%s\n' "$out" | sed 's/^/    /'
	exit 1
fi
