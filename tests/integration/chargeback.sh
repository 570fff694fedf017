#!/bin/sh
# gpufleet chargeback against outside references:
#   chargeback/random-parity  random cases through the CLI contract
#                             (--records, --assets, --json), compared to
#                             1e-5 with tests/tools/charge_ref.py, a Python
#                             model of OpenCost's AggregateBy
#   chargeback/b3-vectors     V1-V6 of the reference's GPU vector through
#                             the CLI, to 1e-5
#   chargeback/html-chromium  the page of the demo fixture rendered by
#                             Debian's chromium (headless): no console
#                             message, nothing fetched, both charts in the
#                             DOM with non-empty bars, and a screenshot
#                             whose chart area is drawn
# Prints ok/FAIL/skip lines.  Usage: sh tests/integration/chargeback.sh BUILD
set -u
B=${1:-build}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BIN="$ROOT/$B/gpufleet"
FX="$ROOT/tests/fixtures/chargeback"
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

if ! command -v python3 >/dev/null 2>&1; then
	echo "skip chargeback/random-parity (python3 not installed)"
	echo "skip chargeback/b3-vectors (python3 not installed)"
	echo "skip chargeback/html-chromium (python3 not installed)"
	exit 0
fi

# -- random parity --------------------------------------------------------
python3 "$ROOT/tests/tools/charge_ref.py" --random "${CHARGE_CASES:-250}" \
	--seed "${CHARGE_SEED:-15}" --bin "$BIN" --keep "$TMP/kept" |
	sed 's|charge/random-parity|chargeback/random-parity|'

# -- B3 vectors through the contract --------------------------------------
W="--records $FX/b3-records.csv --assets $FX/b3-assets.csv --window 2024-05-01T00:00:00Z,2024-05-01T10:00:00Z --aggregate namespace --json"
for v in "V1|" "V2|--share-idle" "V3|--share-idle --idle-by-node" \
	"V4|--share-idle --share namespace=kube-system" \
	"V5|--share-idle --share namespace=kube-system --share-split even" \
	"V6|--shared-hourly ops=1"; do
	name=${v%%|*}
	# shellcheck disable=SC2086
	"$BIN" chargeback $W ${v#*|} >"$TMP/$name.json" 2>"$TMP/$name.err" ||
		echo "$name failed: $(cat "$TMP/$name.err")" >>"$TMP/b3.fail"
done
python3 - "$TMP" >>"$TMP/b3.fail" <<'EOF'
import json, os, sys
want = {
    "V1": {"teamA": 125.84, "teamB": 56.7, "kube-system": 0.55,
           "__idle__": 319.31},
    "V2": {"teamA": 345.117213, "teamB": 154.90175,
           "kube-system": 2.381037},
    "V3": {"teamA": 250.356897, "teamB": 249.157055,
           "kube-system": 2.886048},
    "V4": {"teamA": 346.75866, "teamB": 155.64134},
    "V5": {"teamA": 346.307732, "teamB": 156.092268},
    "V6": {"teamA": 132.713123, "teamB": 59.796838, "kube-system": 0.58004,
           "__idle__": 319.31},
}
for v, rows in want.items():
    path = os.path.join(sys.argv[1], v + ".json")
    try:
        got = json.load(open(path))["data"][0]
    except Exception as e:
        print("%s: no JSON (%s)" % (v, e))
        continue
    if set(got) != set(rows):
        print("%s: rows %s, expected %s" % (v, sorted(got), sorted(rows)))
    for k, x in rows.items():
        g = got.get(k, {}).get("totalCost")
        if g is None or abs(g - x) > 1e-5 + 1e-6:
            print("%s: %s totalCost %s, expected %.6f" % (v, k, g, x))
EOF
if [ -s "$TMP/b3.fail" ]; then
	echo "FAIL chargeback/b3-vectors"
	sed 's/^/    /' "$TMP/b3.fail"
else
	echo "ok chargeback/b3-vectors"
fi

# -- the page in Chromium ----------------------------------------------------
CHROMIUM=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$CHROMIUM" ]; then
	echo "skip chargeback/html-chromium (chromium not installed: apt-get install chromium)"
	exit 0
fi
D="$FX/demo"
if ! "$BIN" chargeback --records "$D-records.csv" --assets "$D-assets.csv" \
	--prices "$D-prices.yaml" --telemetry "$D-telemetry.csv" \
	--window 2024-05-01T00:00:00Z,2024-05-08T00:00:00Z \
	--aggregate label:team --share-idle --share label:team=platform \
	--html "$TMP/page.html" 2>"$TMP/page.err"; then
	echo "FAIL chargeback/html-chromium (gpufleet chargeback --html failed)"
	sed 's/^/    /' "$TMP/page.err"
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
run_chromium --screenshot="$TMP/page.png" --window-size=1040,1400 \
	"file://$TMP/page.html" >"$TMP/shot.out" 2>"$TMP/shot.err"
run_chromium --dump-dom "file://$TMP/page.html" >"$TMP/dom.html" \
	2>"$TMP/dom.err"
python3 "$ROOT/tests/tools/page_check.py" "$TMP/page.html" "$TMP/dom.html" \
	"$TMP/page.png" 1040 1400 20000 "$TMP/shot.err" "$TMP/dom.err" \
	--rects chart-teams=4 chart-trend=7 >"$TMP/html.fail"
if [ -s "$TMP/html.fail" ]; then
	echo "FAIL chargeback/html-chromium"
	sed 's/^/    /' "$TMP/html.fail"
else
	echo "ok chargeback/html-chromium"
fi
