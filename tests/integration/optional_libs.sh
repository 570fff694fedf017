#!/bin/sh
# The optional libraries load only where used (src/util/dynlib.h): a
# `gpufleet simulate fill --policy fgd` opens none of libpq, libcurl,
# GLPK, libxml2, libmicrohttpd or GnuTLS (nor what they bring: Kerberos,
# ICU, OpenSSL); FGD+ (its dual prices are an LP) opens GLPK, which also
# shows the check can see a load.
# glibc's LD_DEBUG=files lists every object a process loads.  Prints
# "ok|FAIL integration/NAME".
set -u
B=${1:-build}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BIN="$ROOT/$B/gpufleet"
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

OPTIONAL='libpq\|libcurl\|libglpk\|libxml2\|libmicrohttpd\|libgnutls\|libkrb5\|libicuuc\|libssl'
loads() { grep -o "file=[^ ]*\($OPTIONAL\)[^ ]*" "$1" | sort -u; }

if ! LD_DEBUG=files "$BIN" simulate fill --seeds 42 --policy fgd \
	>/dev/null 2>"$TMP/plain"; then
	echo "FAIL integration/optional-libs-unloaded"
	echo "    simulate fill failed"
	exit 0
fi
LD_DEBUG=files "$BIN" simulate fill --seeds 42 --policy fgdplus \
	>/dev/null 2>"$TMP/bound"
got=$(loads "$TMP/plain")
if [ -z "$got" ]; then
	echo "ok integration/optional-libs-unloaded"
else
	echo "FAIL integration/optional-libs-unloaded"
	printf '%s\n' "$got" | head -5 | sed 's/^/    loaded: /'
fi
if loads "$TMP/bound" | grep -q 'libglpk\.so'; then
	echo "ok integration/optional-libs-glpk-on-use"
else
	echo "FAIL integration/optional-libs-glpk-on-use"
	echo "    simulate fill --policy fgdplus did not open libglpk"
fi
