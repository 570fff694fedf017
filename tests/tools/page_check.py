#!/usr/bin/env python3
"""Checks of a self-contained HTML page rendered by headless Chromium,
shared by tests/integration/chargeback.sh and report_html.sh.

  page_check.py PAGE DOM PNG W H MIN_COLOURED LOG... [--lines ID=N ...]
                [--rects ID=N ...]

PAGE: the HTML file; DOM: chromium --dump-dom of it; PNG: its
screenshot, asked W x H; LOG: chromium's stderr files.  Prints one line
per problem (nothing when all is well):
  - the page holds a script or refers to anything outside it;
  - a console message (a page without script logs none);
  - the DOM has no SVG, or the chart ID has fewer than N polylines with
    points (--lines) or non-empty rects (--rects), or no labels;
  - the screenshot is not W x H, or has fewer than MIN_COLOURED
    saturated pixels (the charts are not drawn).
"""
import re
import struct
import sys
import zlib
from html.parser import HTMLParser


def self_contained(src):
    for pat in (r"<script", r"\bsrc\s*=", r"\bhref\s*=", r"url\(",
                r"@import", r"<link", r"<img", r"@font-face"):
        if re.search(pat, src, re.I):
            print("the page holds %s: it must be self-contained" % pat)


def console(logs):
    for f in logs:
        for line in open(f, errors="replace"):
            if ":CONSOLE" in line or "Uncaught" in line:
                print("console: " + line.strip())


class Svg(HTMLParser):
    def __init__(self):
        super().__init__()
        self.stack, self.rects, self.texts, self.lines = [], {}, {}, {}

    def count(self, d):
        d[self.stack[-1]] = d.get(self.stack[-1], 0) + 1

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "svg":
            self.stack.append(a.get("id", "?"))
        elif not self.stack:
            return
        elif tag == "rect":
            w, h = float(a.get("width", 0)), float(a.get("height", 0))
            if w > 0 and h > 0:
                self.count(self.rects)
        elif tag == "text":
            self.count(self.texts)
        elif tag == "polyline" and len(a.get("points", "").split()) >= 2:
            self.count(self.lines)

    def handle_endtag(self, tag):
        if tag == "svg" and self.stack:
            self.stack.pop()


def png_pixels(path):
    data = open(path, "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG")
    pos, idat, w, h, bpp = 8, b"", 0, 0, 3
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            w, h, depth, ctype = struct.unpack(">IIBB", body[:10])
            if depth != 8 or ctype not in (2, 6):
                raise ValueError("PNG colour type %d depth %d"
                                 % (ctype, depth))
            bpp = 3 if ctype == 2 else 4
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    raw, rows, prev = zlib.decompress(idat), [], bytearray(w * bpp)
    stride = w * bpp
    for y in range(h):
        f = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b, c = prev[i], prev[i - bpp] if i >= bpp else 0
            if f == 1:
                line[i] = (line[i] + a) & 255
            elif f == 2:
                line[i] = (line[i] + b) & 255
            elif f == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                pa, pb, pc = abs(b - c), abs(a - c), abs(a + b - 2 * c)
                pr = a if pa <= pb and pa <= pc else b if pb <= pc else c
                line[i] = (line[i] + pr) & 255
        rows.append(line)
        prev = line
    return w, h, bpp, rows


def screenshot(path, want_w, want_h, least):
    try:
        w, h, bpp, rows = png_pixels(path)
        coloured = 0
        for line in rows:
            for x in range(0, w * bpp, bpp):
                r, g, b = line[x], line[x + 1], line[x + 2]
                if max(r, g, b) - min(r, g, b) > 60:
                    coloured += 1
        if (w, h) != (want_w, want_h):
            print("screenshot is %dx%d, asked %dx%d" % (w, h, want_w, want_h))
        if coloured < least:
            print("screenshot: %d coloured pixels; the charts are not drawn"
                  % coloured)
    except Exception as e:
        print("screenshot unreadable: %s" % e)


def main(argv):
    want = {"--lines": [], "--rects": []}
    pos, mode = [], None
    for a in argv[1:]:
        if a in want:
            mode = a
        elif mode:
            ident, n = a.rsplit("=", 1)
            want[mode].append((ident, int(n)))
        else:
            pos.append(a)
    page, dom, png, w, h, least = pos[:6]
    self_contained(open(page).read())
    console(pos[6:])
    text = open(dom).read()
    if "<svg" not in text:
        print("the rendered DOM has no SVG (chromium --dump-dom gave %d "
              "bytes)" % len(text))
    p = Svg()
    p.feed(text)
    for kind, got, what in (("--lines", p.lines, "polylines"),
                            ("--rects", p.rects, "non-empty bars")):
        for ident, n in want[kind]:
            if got.get(ident, 0) < n:
                print("%s: %d %s in the DOM, expected at least %d"
                      % (ident, got.get(ident, 0), what, n))
            if p.texts.get(ident, 0) < 4:
                print("%s: no labels" % ident)
    screenshot(png, int(w), int(h), int(least))


if __name__ == "__main__":
    main(sys.argv)
