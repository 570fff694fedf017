#!/bin/sh
# The lints of tests/tools can fail: each is run on a small tree made
# here with one breach (it must FAIL) and on the same tree mended (it
# must pass).  Prints "ok lint/selftest/NAME" or "FAIL lint/selftest/NAME".
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT" || exit 1
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
T=tests/tools

# check NAME: the command after it must fail on the breach ($1 = fail)
# and pass once mended ($1 = pass)
check() {
	name=$1 want=$2
	shift 2
	if out=$("$@" 2>&1); then got=pass; else got=fail; fi
	if [ "$got" = "$want" ]; then
		echo "ok lint/selftest/$name-$want"
	else
		echo "FAIL lint/selftest/$name-$want (it did $got)"
		printf '%s\n' "$out" | head -5 | sed 's/^/    /'
	fi
}

# snprintf.sh: a dropped result outside util, then the call checked
mkdir -p "$TMP/s/util" "$TMP/s/room"
printf 'void f(char *b)\n{\n\tsnprintf(b, 4, "x");\n}\n' >"$TMP/s/util/u.c"
printf 'int g(char *b)\n{\n\t(void)snprintf(b, 4, "x");\n\treturn 0;\n}\n' \
	>"$TMP/s/room/a.c"
check snprintf fail sh $T/snprintf.sh "$TMP/s"
printf 'int g(char *b)\n{\n\treturn snprintf(b, 4, "x") >= 4;\n}\n' \
	>"$TMP/s/room/a.c"
check snprintf pass sh $T/snprintf.sh "$TMP/s"

# basenames.sh: two rooms' read.c, then one renamed
mkdir -p "$TMP/b/x" "$TMP/b/y"
: >"$TMP/b/x/read.c"
: >"$TMP/b/y/read.c"
check basenames fail sh $T/basenames.sh "$TMP/b"
mv "$TMP/b/y/read.c" "$TMP/b/y/y_read.c"
check basenames pass sh $T/basenames.sh "$TMP/b"

# mustcheck.sh: two marks (one in a comment, not counted) against 2
mkdir -p "$TMP/m"
printf '/* GF_MUST_CHECK */\nint gf_a(void) GF_MUST_CHECK;\n' >"$TMP/m/a.h"
check must-check fail sh $T/mustcheck.sh 2 "$TMP/m"
printf 'int gf_b(void) GF_MUST_CHECK;\n' >"$TMP/m/b.h"
check must-check pass sh $T/mustcheck.sh 2 "$TMP/m"

# maps.sh: the layer table gains a room 'newroom' the maps lack
mkdir -p "$TMP/l/tests/tools"
sed -e 's/^\tcli) A="/\tnewroom) A="util" ;;\n\tcli) A="/' \
	$T/layers.sh >"$TMP/l/tests/tools/layers.sh"
check maps fail env LAYERS="$TMP/l/tests/tools/layers.sh" sh $T/maps.sh
check maps pass env LAYERS="$ROOT/$T/layers.sh" sh $T/maps.sh

# cycles.py: a.c and b.c call each other, then b.c calls no one
CC=${CC:-cc}
mkdir -p "$TMP/c/src/room"
printf 'int b(int);\nint a(int x) { return x ? b(x - 1) : 0; }\n' >"$TMP/a.c"
printf 'int a(int);\nint b(int x) { return a(x); }\n' >"$TMP/b.c"
printf 'int c(int);\nint c(int x) { return x; }\n' >"$TMP/c.c"
for f in a b c; do
	"$CC" -c "$TMP/$f.c" -o "$TMP/c/src/room/$f.o"
done
check cycles fail python3 $T/cycles.py "$TMP/c" room
printf 'int b(int);\nint b(int x) { return x; }\n' >"$TMP/b.c"
"$CC" -c "$TMP/b.c" -o "$TMP/c/src/room/b.o"
check cycles pass python3 $T/cycles.py "$TMP/c" room
