#!/usr/bin/env python3
"""Arrays, dependencies and holds on a cluster on loopback (issue 21).

One controller (gpufleet serve --agents, SQLite, tokens) and one agent on
the fake NVML (hgx-a of tests/tools/cluster_fixtures.py: 8 H100s).  Every
job's command writes its environment to OUT/JOB.env, appends its id to
OUT/order, then waits until OUT/go.JOB exists (bounded), so the test
decides when each job ends and reads what each process really got.
Checks, each waiting on conditions (never on elapsed time):

  array-submit     `gpufleet submit --array 0-3%2` answers 4 tasks
  array-throttle   polling the tasks' states, never more than 2 run at once,
                   2 do run together, and all 4 succeed as the test lets
                   the running ones end
  array-env        each task's process got GPUFLEET_ARRAY_JOB_ID/_TASK_ID
                   and SLURM_ARRAY_JOB_ID/_TASK_ID
  array-one-line   `gpufleet jobs` shows the array as one line jN_[0-3]
                   (`--expand`: its 4 tasks)
  afterok-chain    A, B afterok:A, C afterok:B run in that order, B waiting
                   "dependency jA" while A runs
  afterok-failed   a parent that exits 3 cancels its afterok child ("...
                   can never be met: jP failed"); its afternotok child runs
  hold-release     a job submitted with --hold waits "held" while a later
                   job starts; `gpufleet release` lets it run;
                   `gpufleet hold` of a running job is refused (exit 1)
  requeue          `gpufleet requeue` of a running job: pending, then
                   running again (requeues 1), its process started twice
  cancel-array     `gpufleet cancel ARRAY` cancels its running and pending
                   tasks

  python3 tests/integration/jobflow_e2e.py BUILD_DIR
"""
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
B = sys.argv[1] if len(sys.argv) > 1 else "build"
BIN = os.path.join(ROOT, B, "gpufleet")
FAKE = os.path.join(ROOT, B, "fake-nvml", "libnvidia-ml.so.1")
ADMIN = "admin-token-0123456789abcdef"
NODE = "node-token-hgx-a-0123456789"
BOUND_S = 60  # the most any condition is waited for


def say(status, name, detail=""):
    print(f"{status} integration/jobflow-{name}", flush=True)
    if status == "FAIL" and detail:
        for line in str(detail).splitlines()[:40]:
            print("    " + line, flush=True)


def check(name, cond, detail=""):
    say("ok" if cond else "FAIL", name, detail)
    return cond


class Cluster:
    def __init__(self, tmp):
        self.tmp = tmp
        self.fx = os.path.join(tmp, "fx")
        self.out = os.path.join(tmp, "out")
        os.makedirs(self.out)
        self.procs = {}
        self.url = None

    def write_files(self):
        for name, text in (("tokens", f"{ADMIN} admin\n{NODE} node:hgx-a\n"),
                           ("admin.token", f"{ADMIN} admin\n"),
                           ("node.token", f"{NODE} node:hgx-a\n")):
            p = os.path.join(self.tmp, name)
            with open(p, "w") as f:
                f.write(text)
            os.chmod(p, 0o600)
        with open(os.path.join(self.tmp, "serve.yaml"), "w") as f:
            # jobs run as the agent's user, root here (issue 21)
            f.write("allow_root: true\nagents:\n  heartbeat_s: 1\n"
                    "  kill_grace_s: 1\n")

    def start(self):
        logpath = os.path.join(self.tmp, "serve.log")
        log = open(logpath, "a")
        p = subprocess.Popen(
            [BIN, "serve", "--agents", "--listen", "127.0.0.1:0", "--db",
             f"sqlite:{self.tmp}/ctl/state.db", "--config",
             os.path.join(self.tmp, "serve.yaml"), "--token-file",
             os.path.join(self.tmp, "tokens"), "--tick", "50"],
            stdout=log, stderr=log,
            env=dict(os.environ, GPUFLEET_LOG="info"))
        self.procs["serve"] = p
        deadline = time.time() + 20
        while time.time() < deadline and not self.url:
            m = re.findall(r"listening on (http://127\.0\.0\.1:\d+)/",
                           open(logpath).read())
            if m:
                self.url = m[-1]
            elif p.poll() is not None:
                break
            time.sleep(0.05)
        if not self.url:
            raise RuntimeError("the controller did not start:\n" +
                               open(logpath).read()[-2000:])
        alog = open(os.path.join(self.tmp, "agent.log"), "a")
        self.procs["agent"] = subprocess.Popen(
            [BIN, "agent", "--listen", "127.0.0.1:0", "--interval", "200ms",
             "--xml", os.path.join(self.fx, "hgx-a.xml"), "--this-system",
             "--nvml", "--controller", self.url, "--name", "hgx-a",
             "--token-file", os.path.join(self.tmp, "node.token"),
             "--state-dir", os.path.join(self.tmp, "state"),
             "--kill-grace", "1s"],
            stdout=alog, stderr=alog,
            env=dict(os.environ, GPUFLEET_LOG="info",
                     GPUFLEET_NVML_LIBRARY=FAKE,
                     GPUFLEET_FAKE_NVML_FIXTURE=os.path.join(self.fx,
                                                             "hgx-a.nvml")))

    def stop(self):
        for p in self.procs.values():
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
        for p in self.procs.values():
            try:
                p.wait(timeout=20)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()

    def api(self, method, path, body=None):
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(self.url + path, data=data,
                                     method=method)
        req.add_header("Authorization", f"Bearer {ADMIN}")
        if data is not None:
            req.add_header("Content-Type", "application/json")
        try:
            with urllib.request.urlopen(req, timeout=20) as r:
                return r.status, json.loads(r.read() or b"null")
        except urllib.error.HTTPError as e:
            return e.code, json.loads(e.read() or b"null")

    def job(self, jid):
        return self.api("GET", f"/v1/jobs/{jid}")[1]

    def states(self, ids):
        """Each job's state from one answer: a list is one snapshot of the
        core (a request per job can see one end and the next start in
        between, and count both as running)."""
        st, v = self.api("GET", "/v1/jobs?limit=10000")
        by = {j["id"]: j["state"] for j in (v or {}).get("jobs", [])}
        return {i: by.get(i, "?") for i in ids}

    def cli(self, *args):
        r = subprocess.run([BIN, args[0], "--server", self.url,
                            "--token-file",
                            os.path.join(self.tmp, "admin.token")] +
                           list(args[1:]), capture_output=True, text=True,
                           timeout=60)
        return r.returncode, r.stdout, r.stderr

    def command(self, code=0):
        """The command every job runs: its env, its id in order, then it
        waits for its go file (at most BOUND_S) and exits with code."""
        o = self.out
        return (f"env > {o}/$GPUFLEET_JOB_ID.env.tmp && "
                f"mv {o}/$GPUFLEET_JOB_ID.env.tmp {o}/$GPUFLEET_JOB_ID.env; "
                f"echo $GPUFLEET_JOB_ID >> {o}/order; n=0; "
                f"while [ ! -e {o}/go.$GPUFLEET_JOB_ID ] && "
                f"[ $n -lt {BOUND_S * 10} ]; do sleep 0.1; n=$((n+1)); done; "
                f"exit {code}")

    def go(self, jid):
        open(os.path.join(self.out, f"go.{jid}"), "w").close()

    def submit(self, **spec):
        spec.setdefault("gpus", 1)
        spec.setdefault("command", self.command(spec.pop("code", 0)))
        st, v = self.api("POST", "/v1/jobs", spec)
        if st != 201:
            raise RuntimeError(f"submit {spec}: {st} {v}")
        return v["id"]

    def wait(self, cond, what):
        deadline = time.time() + BOUND_S
        while time.time() < deadline:
            v = cond()
            if v:
                return v
            time.sleep(0.05)
        raise RuntimeError(f"waited {BOUND_S} s for {what}")

    def wait_state(self, jid, state):
        return self.wait(lambda: self.job(jid)["state"] == state,
                         f"{jid} {state}: {self.job(jid)}")

    def env(self, jid):
        p = os.path.join(self.out, f"{jid}.env")
        if not os.path.exists(p):
            return None
        return dict(line.split("=", 1) for line in
                    open(p).read().splitlines() if "=" in line)

    def order(self):
        p = os.path.join(self.out, "order")
        return open(p).read().split() if os.path.exists(p) else []


def phase_array(c):
    rc, out, err = c.cli("submit", "--array", "0-3%2", "--gpus", "1",
                         "--name", "arr", "--json", "--", c.command())
    v = json.loads(out) if rc == 0 else {}
    tasks = v.get("tasks", [])
    if not check("array-submit", rc == 0 and len(tasks) == 4 and
                 v["id"] == tasks[0], f"rc {rc}: {out} {err}"):
        return
    aid = v["id"]
    most, together, seen = 0, False, []
    deadline = time.time() + BOUND_S
    while time.time() < deadline:
        states = c.states(tasks)
        running = [t for t in tasks if states[t] == "running"]
        most = max(most, len(running))
        together = together or len(running) == 2
        if all(s == "succeeded" for s in states.values()):
            break
        for t in running:  # let a running task end once it has started
            if c.env(t) is not None and t not in seen:
                seen.append(t)
                if len(seen) % 2 == 0 or len(seen) == len(tasks):
                    for u in seen[-2:]:
                        c.go(u)
        time.sleep(0.05)
    check("array-throttle", most == 2 and together and
          all(c.job(t)["state"] == "succeeded" for t in tasks),
          f"at most {most} running, states "
          f"{[c.job(t)['state'] for t in tasks]}")
    envs = [c.env(t) or {} for t in tasks]
    check("array-env", all(
        e.get("GPUFLEET_ARRAY_JOB_ID") == aid and
        e.get("GPUFLEET_ARRAY_TASK_ID") == str(i) and
        e.get("SLURM_ARRAY_JOB_ID") == aid[1:] and
        e.get("SLURM_ARRAY_TASK_ID") == str(i) for i, e in enumerate(envs)),
        "\n".join(f"{t}: " + str({k: e.get(k) for k in (
            "GPUFLEET_ARRAY_JOB_ID", "GPUFLEET_ARRAY_TASK_ID",
            "SLURM_ARRAY_JOB_ID", "SLURM_ARRAY_TASK_ID")})
            for t, e in zip(tasks, envs)))
    rc, out, err = c.cli("jobs")
    rc2, out2, _ = c.cli("jobs", "--expand")
    lines = [ln for ln in out.splitlines() if ln.startswith(aid)]
    check("array-one-line", rc == 0 and len(lines) == 1 and
          lines[0].startswith(f"{aid}_[0-3%2]") and "succeeded 4" in lines[0]
          and sum(ln.split()[0] in tasks for ln in out2.splitlines()) == 4,
          out + err + out2)


def phase_chain(c):
    a = c.submit(name="a")
    b = c.submit(name="b", dependency=f"afterok:{a}")
    cc = c.submit(name="c", dependency=f"afterok:{b}")
    c.wait_state(a, "running")
    c.wait(lambda: c.job(b)["reason"] == f"dependency {a}", "b's reason")
    c.wait(lambda: c.env(a), "a's env")
    c.go(a)
    c.wait_state(b, "running")
    c.wait(lambda: c.env(b), "b's env")
    waiting = c.job(cc)["state"] == "pending"
    c.go(b)
    c.wait_state(cc, "running")
    c.wait(lambda: c.env(cc), "c's env")
    c.go(cc)
    c.wait_state(cc, "succeeded")
    got = [j for j in c.order() if j in (a, b, cc)]
    check("afterok-chain", got == [a, b, cc] and waiting,
          f"order {got}, c pending while b ran: {waiting}")


def phase_failed(c):
    p = c.submit(name="p", code=3)
    ok = c.submit(name="ok", dependency=f"afterok:{p}")
    notok = c.submit(name="notok", dependency=f"afternotok:{p}",
                     command="true")
    c.wait(lambda: c.env(p), "p's env")
    c.go(p)
    c.wait_state(p, "failed")
    c.wait_state(ok, "cancelled")
    c.wait_state(notok, "succeeded")
    reason = c.job(ok)["reason"]
    check("afterok-failed", reason ==
          f"dependency afterok:{p} can never be met: {p} failed",
          f"reason '{reason}'")


def phase_hold(c):
    rc, out, err = c.cli("submit", "--hold", "--gpus", "1", "--name", "h", "--",
                         c.command())
    h = out.split()[0] if rc == 0 else None
    later = c.submit(name="later")
    c.wait_state(later, "running")  # a pass ran after h was submitted
    held = c.job(h) if h else {}
    ok = held.get("state") == "pending" and held.get("reason") == "held" \
        and held.get("hold") is True
    rc1, out1, err1 = c.cli("release", h)
    c.wait_state(h, "running")
    rc2, _, err2 = c.cli("hold", h)  # running: refused
    c.wait(lambda: c.env(h), "h's env")
    c.go(h)
    c.go(later)
    check("hold-release", ok and rc1 == 0 and out1.strip() == f"{h} released"
          and rc2 == 1 and "requeue it to hold it" in err2,
          f"held {held}; release {rc1} {out1} {err1}; hold {rc2} {err2}")


def phase_requeue(c):
    r = c.submit(name="r")
    c.wait(lambda: c.env(r), "r's env")
    os.rename(os.path.join(c.out, f"{r}.env"),
              os.path.join(c.out, f"{r}.env.1"))
    rc, out, err = c.cli("requeue", r)
    c.wait(lambda: c.env(r), "r's second start")
    j = c.job(r)
    c.go(r)
    c.wait_state(r, "succeeded")
    check("requeue", rc == 0 and out.strip() == f"{r} requeued" and
          j["requeues"] == 1 and j["attempts"] == 2 and
          c.order().count(r) == 2,
          f"rc {rc} {out} {err}; job {j}; order {c.order()}")


def phase_cancel_array(c):
    st, v = c.api("POST", "/v1/jobs", {"gpus": 1, "array": "0-2%1",
                                       "command": c.command()})
    tasks = v["tasks"]
    c.wait(lambda: c.env(tasks[0]), "the first task's env")
    rc, out, err = c.cli("cancel", v["id"])
    c.wait(lambda: all(c.job(t)["state"] == "cancelled" for t in tasks),
           "the tasks cancelled")
    check("cancel-array", st == 201 and rc == 0, f"{st} {v}; {rc} {out} {err}")


def main():
    if not os.access(BIN, os.X_OK) or not os.path.exists(FAKE):
        say("skip", "all", f"({BIN} or the fake NVML not built)")
        return 0
    tmp = tempfile.mkdtemp(prefix="gf-jobflow-")
    c = Cluster(tmp)
    gen = subprocess.run([sys.executable, os.path.join(
        ROOT, "tests", "tools", "cluster_fixtures.py"), "--out", c.fx],
        capture_output=True, text=True)
    if gen.returncode == 77:
        say("skip", "all", "(lstopo-no-graphics absent)")
        return 0
    if gen.returncode != 0:
        say("FAIL", "fixtures", gen.stderr)
        return 0
    c.write_files()
    try:
        c.start()
        c.wait(lambda: any(n["name"] == "hgx-a" and n["state"] == "ready"
                           for n in c.api("GET", "/v1/nodes")[1]["nodes"]),
               "hgx-a ready")
        for phase in (phase_array, phase_chain, phase_failed, phase_hold,
                      phase_requeue, phase_cancel_array):
            try:
                phase(c)
            except Exception:
                import traceback
                say("FAIL", phase.__name__.replace("phase_", ""),
                    traceback.format_exc() + "\nserve log:\n" +
                    open(os.path.join(tmp, "serve.log")).read()[-1500:])
    finally:
        c.stop()
        if os.environ.get("KEEP"):
            print(f"    (kept {tmp})")
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
