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
python3 - "$TMP" "$TMP/page.html" >"$TMP/html.fail" <<'EOF'
import re, struct, sys, zlib
from html.parser import HTMLParser
tmp, page = sys.argv[1], sys.argv[2]
src = open(page).read()
# nothing fetched: no script, no external reference of any kind
for pat in (r"<script", r"\bsrc\s*=", r"\bhref\s*=", r"url\(", r"@import",
            r"<link", r"<img", r"@font-face"):
    if re.search(pat, src, re.I):
        print("the page holds %s: it must be self-contained" % pat)
# every message the page logs reaches stderr as INFO:CONSOLE; a page
# without script must log none (errors included)
for f in ("shot.err", "dom.err"):
    for line in open("%s/%s" % (tmp, f), errors="replace"):
        if ":CONSOLE" in line or "Uncaught" in line:
            print("console: " + line.strip())

class Svg(HTMLParser):
    def __init__(self):
        super().__init__()
        self.stack, self.rects, self.texts = [], {}, {}
    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "svg":
            self.stack.append(a.get("id", "?"))
        elif tag == "rect" and self.stack:
            w, h = float(a.get("width", 0)), float(a.get("height", 0))
            if w > 0 and h > 0:
                self.rects[self.stack[-1]] = self.rects.get(self.stack[-1], 0) + 1
        elif tag == "text" and self.stack:
            self.texts[self.stack[-1]] = self.texts.get(self.stack[-1], 0) + 1
    def handle_endtag(self, tag):
        if tag == "svg" and self.stack:
            self.stack.pop()

dom = open(tmp + "/dom.html").read()
if "<svg" not in dom:
    print("the rendered DOM has no SVG (chromium --dump-dom gave %d bytes)"
          % len(dom))
p = Svg()
p.feed(dom)
for chart, least in (("chart-teams", 4), ("chart-trend", 7)):
    n = p.rects.get(chart, 0)
    if n < least:
        print("%s: %d non-empty bars in the DOM, expected at least %d"
              % (chart, n, least))
    if p.texts.get(chart, 0) < 4:
        print("%s: no labels" % chart)

def png_pixels(path):
    data = open(path, "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG")
    pos, idat, w = 8, b"", 0
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            w, h, depth, ctype = struct.unpack(">IIBB", body[:10])
            if depth != 8 or ctype not in (2, 6):
                raise ValueError("PNG colour type %d depth %d" % (ctype, depth))
            bpp = 3 if ctype == 2 else 4
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    raw, rows, prev = zlib.decompress(idat), [], bytearray(w * bpp)
    stride = w * bpp
    for y in range(h):
        f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b, c = prev[i], prev[i - bpp] if i >= bpp else 0
            if f == 1: line[i] = (line[i] + a) & 255
            elif f == 2: line[i] = (line[i] + b) & 255
            elif f == 3: line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                pa, pb, pc = abs(b - c), abs(a - c), abs(a + b - 2 * c)
                pr = a if pa <= pb and pa <= pc else b if pb <= pc else c
                line[i] = (line[i] + pr) & 255
        rows.append(line)
        prev = line
    return w, h, bpp, rows

try:
    w, h, bpp, rows = png_pixels(tmp + "/page.png")
    # the bars are saturated colours: count pixels far from grey
    coloured = 0
    for line in rows:
        for x in range(0, w * bpp, bpp):
            r, g, b = line[x], line[x + 1], line[x + 2]
            if max(r, g, b) - min(r, g, b) > 60:
                coloured += 1
    if (w, h) != (1040, 1400):
        print("screenshot is %dx%d, asked 1040x1400" % (w, h))
    if coloured < 20000:
        print("screenshot: %d coloured pixels; the charts are not drawn"
              % coloured)
except Exception as e:
    print("screenshot unreadable: %s" % e)
EOF
if [ -s "$TMP/html.fail" ]; then
	echo "FAIL chargeback/html-chromium"
	sed 's/^/    /' "$TMP/html.fail"
else
	echo "ok chargeback/html-chromium"
fi
