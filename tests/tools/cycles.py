#!/usr/bin/env python3
"""No call cycle among the files of a room (issue 25): the file-level call
graph of each folder is read from the build's object files (nm: what a
file defines, what it leaves undefined), and its strongly connected
components of more than one file are cycles: files that call each other
round a loop, so none can be read, changed or tested alone.

    python3 tests/tools/cycles.py BUILD [FOLDER...]
        (default folders: controller core/jobs, each checked on its own)

Prints "ok lint/cycles" or "FAIL lint/cycles" with each cycle and the
calls that close it.  A folder without objects in BUILD fails (build it
first)."""
import glob
import os
import subprocess
import sys


ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))


def graph(build, folder):
    """file -> sorted files of the same folder it calls"""
    defs, uses = {}, {}
    objs = []
    for obj in sorted(glob.glob(os.path.join(build, "src", folder, "*.o"))):
        name = os.path.basename(obj)[:-2] + ".c"
        srcdir = os.path.join(ROOT, "src", folder)
        if os.path.isdir(srcdir) and \
                not os.path.exists(os.path.join(srcdir, name)):
            continue  # left by a source since renamed or removed
        objs.append(obj)
        uses[name] = set()
    if not objs:
        return {}
    # one nm for the folder (-A: each line starts "OBJECT:"), not one a file
    out = subprocess.run(["nm", "-A"] + objs, capture_output=True,
                         text=True, check=True).stdout
    for line in out.splitlines():
        obj, _, rest = line.partition(":")
        name = os.path.basename(obj)[:-2] + ".c"
        f = rest.split()
        if len(f) == 3 and f[1] in "TDBRVW":
            defs[f[2]] = name
        elif len(f) == 2 and f[0] == "U":
            uses[name].add(f[1])
    return {n: sorted({defs[s] for s in u if s in defs and defs[s] != n})
            for n, u in uses.items()}


def components(g):
    """Tarjan's strongly connected components, iterative; those of more
    than one node"""
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = 0
    for root in g:
        if root in index:
            continue
        work = [(root, 0)]
        while work:
            v, i = work.pop()
            if i == 0:
                index[v] = low[v] = counter
                counter += 1
                stack.append(v)
                on.add(v)
            for j in range(i, len(g[v])):
                w = g[v][j]
                if w not in index:
                    work.append((v, j + 1))
                    work.append((w, 0))
                    break
                if w in on:
                    low[v] = min(low[v], index[w])
            else:
                if low[v] == index[v]:
                    comp = []
                    while True:
                        w = stack.pop()
                        on.discard(w)
                        comp.append(w)
                        if w == v:
                            break
                    if len(comp) > 1:
                        out.append(sorted(comp))
                if work:
                    u = work[-1][0]
                    low[u] = min(low[u], low[v])
    return out


def main(argv):
    if len(argv) < 2:
        print("usage: cycles.py BUILD [FOLDER...]", file=sys.stderr)
        return 2
    build, folders = argv[1], argv[2:] or ["controller", "core/jobs"]
    bad = []
    for folder in folders:
        g = graph(build, folder)
        if not g:
            bad.append(f"src/{folder}: no objects in {build}/src/{folder} "
                       "(build the tree first)")
            continue
        for comp in components(g):
            bad.append(f"src/{folder}: {len(comp)} files call each other "
                       "in a loop: " + " ".join(comp))
            inside = set(comp)
            for f in comp:
                bad.append(f"    {f} -> " +
                           " ".join(x for x in g[f] if x in inside))
    if not bad:
        print("ok lint/cycles")
        return 0
    print("FAIL lint/cycles")
    for line in bad:
        print("    " + line)
    return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
