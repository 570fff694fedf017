#!/bin/sh
# gpufleet report against Chromium:
#   report/html-chromium  a fill report (simulate fill --json on the
#                         built-in workload, 3 seeds) and the hand-made
#                         replay fixture as one page, rendered by
#                         Debian's chromium (headless): no console
#                         message, nothing fetched, one polyline per
#                         policy in each of the five charts, labels, and
#                         a screenshot whose charts are drawn
#   report/atomic         a bad input leaves an existing page as it was
#                         and no temporary behind
# Prints ok/FAIL/skip lines.  Usage: sh tests/integration/report_html.sh BUILD
# DOCS_PNG=FILE also keeps the screenshot there (docs/report.png);
# DOCS_REPLAY=FILE draws that replay JSON (simulate replay --json) in
# place of the hand-made fixture (docs/simulator.md names the command).
set -u
B=${1:-build}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BIN="$ROOT/$B/gpufleet"
FX="$ROOT/tests/fixtures/report"
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

# -- a bad input never touches the page ----------------------------------
mkdir "$TMP/out"
echo "kept" >"$TMP/out/page.html"
if "$BIN" report "$FX/replay-small.json" "$FX/bad-series.json" \
	--html "$TMP/out/page.html" 2>"$TMP/atomic.err"; then
	echo "FAIL report/atomic (a bad input was accepted)"
elif [ "$(cat "$TMP/out/page.html")" != kept ] ||
	[ "$(ls "$TMP/out")" != page.html ]; then
	echo "FAIL report/atomic (the page changed or a temporary was left: $(ls "$TMP/out"))"
elif ! grep -q "bad-series.json': key 'policies\[0\].series\[1\].alloc'" "$TMP/atomic.err"; then
	echo "FAIL report/atomic (message: $(cat "$TMP/atomic.err"))"
else
	echo "ok report/atomic"
fi

# -- the page in Chromium ----------------------------------------------------
CHROMIUM=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$CHROMIUM" ] || ! command -v python3 >/dev/null 2>&1; then
	echo "skip report/html-chromium (chromium or python3 not installed: apt-get install chromium)"
	exit 0
fi
SHARED=${GPUFLEET_SHARED:-$ROOT/../shared}
T="$SHARED/traces/alibaba-gpu-v2023"
if [ -n "${DOCS_PNG:-}" ] && [ -f "$T/openb_pod_list_default.csv" ]; then
	# the figure for the docs: the default trace, the published seeds
	FILL="--nodes $T/openb_node_list_gpu_node.csv --pods $T/openb_pod_list_default.csv"
else
	FILL="--seeds 42-44"
fi
REPLAY=${DOCS_REPLAY:-$FX/replay-small.json}
# the replay's charts have one line per policy it ran
NREP=$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["policies"]))' "$REPLAY")
# the page names its inputs as given: short names, in TMP
RNAME=$(basename "$REPLAY")
cp "$REPLAY" "$TMP/$RNAME"
# shellcheck disable=SC2086
if ! "$BIN" simulate fill $FILL --json >"$TMP/fill.json" 2>"$TMP/fill.err" ||
	! (cd "$TMP" && "$BIN" report fill.json "$RNAME" --html page.html \
		2>"$TMP/page.err"); then
	echo "FAIL report/html-chromium (gpufleet simulate fill or report failed)"
	sed 's/^/    /' "$TMP/fill.err" "$TMP/page.err"
	exit 0
fi
# Chromium wants a writable home and profile; never the user's.
export HOME="$TMP/home"
mkdir -p "$HOME"
run_chromium() {
	timeout 120 "$CHROMIUM" --headless --disable-gpu --no-sandbox \
		--no-first-run --user-data-dir="$TMP/profile" \
		--hide-scrollbars --enable-logging=stderr --v=0 "$@"
}
W=1040 H=3000
run_chromium --screenshot="$TMP/page.png" --window-size=$W,$H \
	"file://$TMP/page.html" >"$TMP/shot.out" 2>"$TMP/shot.err"
run_chromium --dump-dom "file://$TMP/page.html" >"$TMP/dom.html" \
	2>"$TMP/dom.err"
# 7 policies in the fill charts, NREP (the fixture: 3) in the replay's
python3 "$ROOT/tests/tools/page_check.py" "$TMP/page.html" "$TMP/dom.html" \
	"$TMP/page.png" $W $H 15000 "$TMP/shot.err" "$TMP/dom.err" \
	--lines chart-fill=7 chart-fill-zoom=7 chart-alloc="$NREP" \
	chart-frag="$NREP" chart-pending="$NREP" >"$TMP/html.fail"
if [ -s "$TMP/html.fail" ]; then
	echo "FAIL report/html-chromium"
	sed 's/^/    /' "$TMP/html.fail"
else
	echo "ok report/html-chromium"
fi
[ -n "${DOCS_PNG:-}" ] && cp "$TMP/page.png" "$DOCS_PNG"
exit 0
