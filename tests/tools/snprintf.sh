#!/bin/sh
# No dropped snprintf result outside src/util (STYLE.md "Strings"): a
# line that starts with `snprintf(` (after blanks), or with
# `(void)snprintf(`, is a call whose result nobody reads, so a cut string
# goes on as if whole.  Build it with gf_fmt (util/fmt.h: 0 or
# GF_ETOOBIG), gf_note (human text, a cut marked "...") or gf_buf
# (util/buf.h) instead.  src/util holds those helpers and may call it.
#   sh tests/tools/snprintf.sh          the tree's src/
#   sh tests/tools/snprintf.sh DIR      DIR instead of src/ (DIR/util exempt)
# Prints "ok lint/snprintf" or "FAIL lint/snprintf" with each call.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT" || exit 1
SRC=${1:-src}
SRC=${SRC%/}
[ -d "$SRC" ] || {
	echo "FAIL lint/snprintf ($SRC: no such directory)"
	exit 1
}
out=$(find "$SRC" -path "$SRC/util" -prune -o -name '*.[ch]' -print |
	sort | xargs grep -nE '^[[:space:]]*(\([[:space:]]*void[[:space:]]*\)[[:space:]]*)?snprintf[[:space:]]*\(' /dev/null)
if [ -z "$out" ]; then
	echo "ok lint/snprintf"
	exit 0
fi
n=$(printf '%s\n' "$out" | wc -l | tr -d ' ')
echo "FAIL lint/snprintf ($n calls drop the result: gf_fmt, gf_note or gf_buf)"
printf '%s\n' "$out" | head -40 | sed 's/^/    /'
[ "$n" -gt 40 ] && echo "    ... and $((n - 40)) more"
exit 1
