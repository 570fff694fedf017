#!/usr/bin/env python3
"""Checks for tests/integration/slurm.sh: what a task printed against what
the recording says (never against gpufleet's own planner).

Each task of the test's jobs prints one line (the probe in slurm.sh):

  R job=J task=T gpus=LIST cpus=LIST mem=POLICY hca=X ucx=Y t0=S t1=S

and cluster.json (tests/tools/cluster_fixtures.py) says, for node hgx-a,
the CPUs each GPU is local to and its nearest NIC, and the machine's NUMA
nodes.  Subcommands print nothing and exit 0 when the check holds, else
one line per problem and exit 1:

  slurm_check.py local OUT MANIFEST [--cpus-only]
      every task's CPUs are exactly the CPUs of its GPUs' half, its
      memory policy binds the GPUs' NUMA nodes, NCCL_IB_HCA is '=' and
      the GPUs' nearest NICs (--cpus-only: the CPUs alone; slurm.sh runs
      it on the same job without the plugin, where it must fail: else
      Slurm alone gives the same CPUs and the check cannot see ours)
  slurm_check.py split OUT MANIFEST
      the tasks of one step that share its GPUs: each on its own CPUs
      (pairwise disjoint, none empty), the first task on CPUs local to
      the GPUs (nearest first), every CPU local to the GPUs that the
      tasks hold together held, memory and NCCL_IB_HCA as for local
  slurm_check.py same OUT_A OUT_B [--cpus]
      the two runs bound the same CPUs and memory and set the same
      NCCL/UCX variables (a run with --gpufleet-bind=none against one
      without the plugin); --cpus: the CPUs alone
  slurm_check.py apart OUT_A OUT_B MANIFEST
      two jobs ran at once, on GPUs of different halves, each on its
      own half's CPUs
  slurm_check.py usage USAGE_JSON SACCT_P EXPECTED
      gpufleet slurm usage --json against sacct's own AllocTRES x
      ElapsedRaw (equal) and against the test's jobs (EXPECTED: lines
      "JOB ACCOUNT GPUS SECONDS": the same account and GPUs, GPU-seconds
      within one second per GPU of GPUS x SECONDS)
"""
import json
import sys


def ids(s):
    out = set()
    for part in s.split(","):
        if not part:
            continue
        if "-" in part:
            a, b = part.split("-")
            out.update(range(int(a), int(b) + 1))
        else:
            out.add(int(part))
    return out


def fmt(ids_):
    return ",".join(str(i) for i in sorted(ids_))


def tasks(path):
    out = []
    with open(path) as f:
        for line in f:
            if not line.startswith("R "):
                continue
            kv = dict(w.split("=", 1) for w in line.split()[1:] if "=" in w)
            out.append(kv)
    return out


def manifest(path):
    with open(path) as f:
        m = json.load(f)
    node = [n for n in m["nodes"] if n["name"] == "hgx-a"][0]
    return m, {g["index"]: g for g in node["gpus"]}


def expect(gpus, g):
    cpus, nics = set(), []
    for i in gpus:
        cpus |= ids(g[i]["cpus"])
        if g[i]["nearest_nic"] not in nics:
            nics.append(g[i]["nearest_nic"])
    return cpus, nics


def mem_nodes(policy):
    """'bind:0-1', 'prefer:0' -> the node set; None for default."""
    if ":" not in policy:
        return None
    kind, nodes = policy.split(":", 1)
    if kind not in ("bind", "prefer", "preferred"):
        return None
    return ids(nodes)


def check_mem_hca(t, gpus, nics, numa, bad):
    if mem_nodes(t.get("mem", "")) != numa:
        bad.append("job %s task %s: memory policy '%s', want the GPUs' "
                   "NUMA nodes %s" % (t["job"], t["task"], t.get("mem"),
                                     fmt(numa)))
    if t.get("hca") != "=" + ",".join(nics):
        bad.append("job %s task %s on GPUs %s: NCCL_IB_HCA '%s', the "
                   "recording's nearest NIC is %s"
                   % (t["job"], t["task"], fmt(gpus), t.get("hca"),
                      ",".join(nics)))


def check_local(out, man, cpus_only):
    m, g = manifest(man)
    ts = tasks(out)
    bad = []
    if not ts:
        return ["no task printed its binding (%s)" % out]
    numa = ids(m["numa"])
    for t in ts:
        gpus = sorted(ids(t.get("gpus", "")))
        want, nics = expect(gpus, g)
        got = ids(t.get("cpus", ""))
        if got != want:
            bad.append("job %s task %s on GPUs %s: CPUs %s, the recording "
                       "says %s" % (t["job"], t["task"], fmt(gpus), fmt(got),
                                    fmt(want)))
        if not cpus_only:
            check_mem_hca(t, gpus, nics, numa, bad)
    return bad


def check_split(out, man):
    m, g = manifest(man)
    ts = sorted(tasks(out), key=lambda t: int(t["task"]))
    if len(ts) < 2:
        return ["%d tasks printed their binding, want 2 or more" % len(ts)]
    numa = ids(m["numa"])
    bad = []
    gpus = sorted(ids(ts[0].get("gpus", "")))
    want, nics = expect(gpus, g)
    union = set()
    for t in ts:
        got = ids(t.get("cpus", ""))
        if not got:
            bad.append("task %s has no CPU" % t["task"])
        if union & got:
            bad.append("task %s CPUs %s overlap another task's %s"
                       % (t["task"], fmt(got), fmt(union)))
        union |= got
        check_mem_hca(t, gpus, nics, numa, bad)
    first = ids(ts[0].get("cpus", ""))
    if want and not first <= want:
        bad.append("task 0 on CPUs %s, not those local to GPUs %s (%s): "
                   "nearest first" % (fmt(first), fmt(gpus), fmt(want)))
    return bad


def check_same(a, b, cpus_only):
    ta = sorted(tasks(a), key=lambda t: int(t["task"]))
    tb = sorted(tasks(b), key=lambda t: int(t["task"]))
    if len(ta) != len(tb) or not ta:
        return ["%d tasks against %d" % (len(ta), len(tb))]
    bad = []
    for x, y in zip(ta, tb):
        for k in ("cpus",) if cpus_only else ("cpus", "mem", "hca", "ucx"):
            if x.get(k) != y.get(k):
                bad.append("task %s: %s '%s' in %s, '%s' in %s (without "
                           "the plugin)" % (x["task"], k, x.get(k), a,
                                            y.get(k), b))
    return bad


def check_apart(a, b, man):
    _, g = manifest(man)
    ta, tb = tasks(a), tasks(b)
    if len(ta) != 1 or len(tb) != 1:
        return ["expected one task per job, got %d and %d"
                % (len(ta), len(tb))]
    x, y = ta[0], tb[0]
    bad = []
    if not (float(x["t0"]) < float(y["t1"]) and float(y["t0"]) < float(x["t1"])):
        bad.append("the jobs did not run at the same time: %s-%s and %s-%s"
                   % (x["t0"], x["t1"], y["t0"], y["t1"]))
    cx, _ = expect(ids(x["gpus"]), g)
    cy, _ = expect(ids(y["gpus"]), g)
    if cx == cy:
        bad.append("both jobs' GPUs (%s, %s) are local to the same CPUs %s"
                   % (x["gpus"], y["gpus"], fmt(cx)))
    for t, want in ((x, cx), (y, cy)):
        if ids(t["cpus"]) != want:
            bad.append("job %s on GPUs %s: CPUs %s, its half is %s"
                       % (t["job"], t["gpus"], t["cpus"], fmt(want)))
    return bad


def check_usage(usage, sacct, expected):
    with open(usage) as f:
        ours = {j["job"]: j for j in json.load(f)["jobs"]}
    slurm = {}
    with open(sacct) as f:
        head = f.readline().strip().split("|")
        for line in f:
            row = dict(zip(head, line.rstrip("\n").split("|")))
            tres = dict(kv.split("=", 1) for kv in row["AllocTRES"].split(",")
                        if "=" in kv)
            slurm[row["JobID"]] = int(tres.get("gres/gpu", "0")) * int(
                row["ElapsedRaw"])
    bad = []
    with open(expected) as f:
        for line in f:
            job, account, gpus, secs, slept = line.split()
            j = ours.get(job)
            if j is None:
                bad.append("job %s: no usage record" % job)
                continue
            if j["account"] != account or j["gpus"] != int(gpus):
                bad.append("job %s: account %s, %s GPUs; it ran as %s with "
                           "%s" % (job, j["account"], j["gpus"], account,
                                   gpus))
            if abs(j["gpu_seconds"] - slurm.get(job, -1)) > 1e-9:
                bad.append("job %s: %s GPU-seconds, sacct's AllocTRES x "
                           "ElapsedRaw is %s" % (job, j["gpu_seconds"],
                                                 slurm.get(job)))
            # it ran at least its sleep and at most srun's wall time
            # (which includes waiting for the allocation on a loaded
            # machine); Slurm counts whole seconds: one more either way
            lo = int(gpus) * (float(slept) - 1.0)
            hi = int(gpus) * (float(secs) + 1.0)
            if not lo <= j["gpu_seconds"] <= hi:
                bad.append("job %s: %s GPU-seconds, it ran %s GPUs for "
                           "%s to %.2f s (%.1f to %.1f)"
                           % (job, j["gpu_seconds"], gpus, slept,
                              float(secs), lo, hi))
    return bad


def main(argv):
    cmd = argv[1] if len(argv) > 1 else ""
    if cmd == "local" and len(argv) in (4, 5):
        bad = check_local(argv[2], argv[3], argv[4:] == ["--cpus-only"])
    elif cmd == "split" and len(argv) == 4:
        bad = check_split(argv[2], argv[3])
    elif cmd == "same" and len(argv) in (4, 5):
        bad = check_same(argv[2], argv[3], argv[4:] == ["--cpus"])
    elif cmd == "apart" and len(argv) == 5:
        bad = check_apart(argv[2], argv[3], argv[4])
    elif cmd == "usage" and len(argv) == 5:
        bad = check_usage(argv[2], argv[3], argv[4])
    else:
        print(__doc__, file=sys.stderr)
        return 2
    for b in bad:
        print(b)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
