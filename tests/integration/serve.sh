#!/bin/sh
# The controller for real: `gpufleet serve` processes on loopback ports the
# kernel picks, a real SQLite store and a real PostgreSQL 15 started here
# (tests/tools/pg.sh), clients that are curl and gpufleet's own commands.
#   serve-api-postgres   the API suite (test_serve_api) on PostgreSQL
#   serve-nodes-postgres the node agents' routes (test_serve_nodes) on it
#   serve-kill9          clients submitting at once, the server killed -9
#                        in the middle: after a restart every job that got a
#                        201 is there exactly once, no GPU given twice
#   serve-failover       two servers on one PostgreSQL: one leads; kill -9
#                        it and the other leads within 10 s, same jobs
#   serve-promtool       /metrics passes promtool check metrics
#   serve-cli            submit, jobs, cancel, nodes against it, with tokens
#   serve-bearer-nul-400 a token followed by NUL and junk: 400, not 200
#   serve-bad-row        a store with a bad row: the last line names it
#   serve-open-files     a low soft open-file limit raised to the hard one
#   serve-open-files-warn  a hard limit under --max-conns: warned
#   serve-loopback-only  a non-loopback --listen without tokens refused
# Prints "ok|FAIL|skip integration/NAME" lines.  Every process started is
# stopped by its PID.  A later (sanitizer) tree (GF_LATER_TREE=1, set by
# tests/run-all.sh) leaves out the two suites on PostgreSQL: they run on
# SQLite in its unit tests, and the PostgreSQL store under the sanitizers
# in test_store; the kill -9 and failover checks run in every tree.
set -u
B=${1:-build}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BIN="$ROOT/$B/gpufleet"
TMP=$(mktemp -d)
PIDS="" PGURL=""
cleanup() {
	for p in $PIDS; do kill -9 "$p" 2>/dev/null; done
	wait 2>/dev/null
	[ -n "$PGURL" ] && sh "$ROOT/tests/tools/pg.sh" stop "$PGURL" >/dev/null 2>&1
	rm -rf "$TMP"
}
trap cleanup EXIT
export GPUFLEET_NVML_LIBRARY=/nonexistent/libnvidia-ml.so.1

check() {
	if [ "$2" = 0 ]; then echo "ok integration/$1"; else
		echo "FAIL integration/$1"
		printf '%s\n' "$3" | head -20 | sed 's/^/    /'
	fi
}

if ! command -v curl >/dev/null 2>&1; then
	echo "skip integration/serve (curl absent)"
	exit 0
fi

cat >"$TMP/serve.yaml" <<'EOF'
teams:
  - {name: vision, quota: {gpus: {h100-80gb: 64}}}
  - {name: speech}
open_teams: true
pools:
  - {name: h, nodes: 8, model: h100-80gb, gpus: 8, cpu_milli: 96000, memory_mib: 1048576}
EOF
printf 'adminadminadmin0001 admin\nvisionvisionvis0002 team:vision\n' >"$TMP/tokens"
chmod 600 "$TMP/tokens"

# start_serve NAME ARGS...: a server in the background; its URL in
# $TMP/NAME.url (from its start line), its PID in $TMP/NAME.pid
start_serve() {
	name=$1
	shift
	"$BIN" serve --listen 127.0.0.1:0 --tick 20 "$@" 2>"$TMP/$name.err" &
	echo $! >"$TMP/$name.pid"
	PIDS="$PIDS $!"
	i=0
	while [ $i -lt 100 ]; do
		url=$(sed -n 's|^gpufleet serve: listening on \(http://[0-9.:]*\)/.*|\1|p' "$TMP/$name.err")
		[ -n "$url" ] && break
		i=$((i + 1))
		sleep 0.1
	done
	echo "$url" >"$TMP/$name.url"
}

# submitter N URL: N jobs one after another; every id answered 201 to
# $TMP/ok.N (the id is only written after the whole answer came)
submitter() {
	k=0
	while [ $k -lt 60 ]; do
		out=$(curl -s -m 5 -w '\n%{http_code}' -X POST "$2/v1/jobs" \
			-H 'Authorization: Bearer adminadminadmin0001' \
			-d "{\"team\": \"speech\", \"command\": \"true\", \"gpu_milli\": $((100 + (k % 9) * 100))}" 2>/dev/null)
		code=$(printf '%s' "$out" | tail -1)
		id=$(printf '%s' "$out" | sed -n 's/.*"id": "\(j[0-9]*\)".*/\1/p')
		[ "$code" = 201 ] && [ -n "$id" ] && echo "$id" >>"$TMP/ok.$1"
		k=$((k + 1))
	done
}

# the API suite on PostgreSQL
PGURL=$(PG_OPTS="-c fsync=off" sh "$ROOT/tests/tools/pg.sh" start 2>"$TMP/pg.err")
pgrc=$?
if [ $pgrc = 77 ]; then
	echo "skip integration/serve-api-postgres ($(cat "$TMP/pg.err"))"
	PGURL=""
elif [ -z "$PGURL" ]; then
	check serve-api-postgres 1 "$(cat "$TMP/pg.err")"
else
	# every test of the suite passed (cmocka exits with the failures'
	# count) and none was skipped
	suite_on_pg() {
		out=$(GF_TEST_DB="$PGURL" "$ROOT/$B/tests/$1" 2>&1)
		rc=$?
		out="$out
(exit status $rc)"
		[ $rc = 0 ] && printf '%s\n' "$out" | grep -q '\[  PASSED  \]' &&
			! printf '%s\n' "$out" | grep -qE 'FAILED|SKIPPED'
	}
	if [ "${GF_LATER_TREE:-0}" != 1 ]; then
		suite_on_pg test_serve_api
		check serve-api-postgres $? "$out"
		# the node agents' routes (a database of their own on that server)
		suite_on_pg test_serve_nodes
		check serve-nodes-postgres $? "$out"
	fi
fi

# kill -9 in the middle of submissions (SQLite)
start_serve a --db "sqlite:$TMP/state/jobs.db" --config "$TMP/serve.yaml"
URL=$(cat "$TMP/a.url")
for n in 1 2 3 4; do submitter $n "$URL" & done
# the kill lands once enough were acknowledged (a condition, not a time:
# a loaded machine acknowledges fewer in any given second), while the
# submitters are still going (240 in all)
i=0
while [ "$(cat "$TMP"/ok.* 2>/dev/null | wc -l)" -lt 21 ] && [ $i -lt 1200 ]; do
	i=$((i + 1))
	sleep 0.05
done
kill -9 "$(cat "$TMP/a.pid")"
wait $(jobs -p) 2>/dev/null
start_serve b --db "sqlite:$TMP/state/jobs.db" --config "$TMP/serve.yaml"
URL=$(cat "$TMP/b.url")
curl -s "$URL/v1/jobs?limit=10000" -H 'Authorization: Bearer adminadminadmin0001' >"$TMP/jobs.json"
cat "$TMP"/ok.* 2>/dev/null | sort >"$TMP/acked"
python3 - "$TMP/jobs.json" "$TMP/acked" >"$TMP/kill9.out" 2>&1 <<'EOF'
import json, sys, collections
jobs = json.load(open(sys.argv[1]))["jobs"]
acked = [l.strip() for l in open(sys.argv[2]) if l.strip()]
ids = collections.Counter(j["id"] for j in jobs)
bad = [i for i in acked if ids[i] != 1]
dups = [i for i, c in ids.items() if c > 1]
use = collections.Counter()
for j in jobs:
    if j["state"] != "running":
        continue
    for p in j["placement"]:
        for g in p["gpus"]:
            use[(p["node"], g)] += p["gpu_milli"] or 1000
over = [k for k, v in use.items() if v > 1000]
print(f"{len(acked)} acknowledged, {len(jobs)} stored, missing {bad[:5]}, "
      f"duplicates {dups[:5]}, GPUs over-given {over[:5]}")
sys.exit(0 if len(acked) > 20 and not bad and not dups and not over else 1)
EOF
check serve-kill9 $? "$(cat "$TMP/kill9.out") $(tail -3 "$TMP/b.err")"

# promtool on the page, with jobs pending and running
curl -s "$URL/metrics" >"$TMP/metrics.txt"
if command -v promtool >/dev/null 2>&1; then
	out=$(promtool check metrics <"$TMP/metrics.txt" 2>&1)
	rc=$?
	grep -q '^gpufleet_queue_pending_jobs{class="batch",team="speech"}\|^gpufleet_jobs{state="running"} [1-9]' "$TMP/metrics.txt" ||
		rc=1
	check serve-promtool $rc "$out $(head -20 "$TMP/metrics.txt")"
else
	echo "skip integration/serve-promtool (promtool absent)"
fi

# the CLI clients, with tokens
kill "$(cat "$TMP/b.pid")"
start_serve c --db "sqlite:$TMP/cli/jobs.db" --config "$TMP/serve.yaml" --token-file "$TMP/tokens"
URL=$(cat "$TMP/c.url")
export GPUFLEET_SERVER="$URL"
printf 'visionvisionvis0002 team:vision\n' >"$TMP/vision.token"
chmod 600 "$TMP/vision.token"
id=$("$BIN" submit --token-file "$TMP/vision.token" --gpus 4 --class training -- python train.py 2>&1 | awk '{print $1}')
sleep 0.3
jobs=$("$BIN" jobs --token-file "$TMP/vision.token" 2>&1)
one=$("$BIN" jobs --token-file "$TMP/vision.token" --json "$id" 2>&1)
nodes=$("$BIN" nodes --token-file "$TMP/tokens" 2>&1)
cancel=$("$BIN" cancel --token-file "$TMP/vision.token" "$id" 2>&1)
again=$("$BIN" cancel --token-file "$TMP/vision.token" "$id" 2>&1)
againrc=$?
noauth=$("$BIN" jobs 2>&1)
noauthrc=$?
printf '%s\n' "$jobs" | grep -q "^$id .*vision .*training .*running  *[0-9:-]*  *4x1 *h-000" &&
	printf '%s' "$one" | grep -q '"command": "python train.py"' &&
	printf '%s\n' "$nodes" | grep -q '^h-0007 .*ready' &&
	[ "$cancel" = "$id cancelled" ] &&
	[ "$againrc" = 1 ] && printf '%s' "$again" | grep -q '409 conflict' &&
	[ "$noauthrc" = 1 ] && printf '%s' "$noauth" | grep -q '401 unauthorized'
check serve-cli $? "id=$id
$jobs
$one
$nodes
$cancel / $again / $noauth"

# a job selecting a GFD product value that no catalog model has (a node
# labelled by hand with it matches): the server logs a warning naming the
# job and the value (issue 22, GFD); a catalog model's product does not
# warn (and a value no node carries is 422 never-placeable)
cat >"$TMP/gfd.yaml" <<'EOF'
pools:
  - {name: h, nodes: 1, model: h100-80gb, gpus: 8, cpu_milli: 96000, memory_mib: 1048576,
     labels: {nvidia.com/gpu.product: H100-80G}}
EOF
start_serve g --db "sqlite:$TMP/gfd/jobs.db" --config "$TMP/gfd.yaml" --token-file "$TMP/tokens"
sel=$(GPUFLEET_SERVER=$(cat "$TMP/g.url") "$BIN" submit --token-file "$TMP/vision.token" \
	--gpus 1 --selector nvidia.com/gpu.product=H100-80G -- true 2>&1 | awk '{print $1}')
GPUFLEET_SERVER=$(cat "$TMP/g.url") "$BIN" submit --token-file "$TMP/vision.token" \
	--gpus 1 --selector nvidia.com/gpu.product=NVIDIA-H100-80GB-HBM3 -- true >/dev/null 2>&1
want="job $sel: node_selector nvidia.com/gpu.product=H100-80G: no node has that GPU model"
i=0
while ! grep -qF "$want" "$TMP/g.err" && [ $i -lt 100 ]; do
	i=$((i + 1))
	sleep 0.1
done
grep -qF "$want" "$TMP/g.err" && [ "$(grep -c 'node_selector nvidia.com/gpu.product=' "$TMP/g.err")" = 1 ]
check serve-gfd-selector-warning $? "id=$sel
$(cat "$TMP/g.err")"
kill "$(cat "$TMP/g.pid")"
unset GPUFLEET_SERVER

# a valid token followed by a NUL and junk is no token: 400 before any
# route (F9, issue 20); the token alone still works
r=$(python3 - "$URL" <<'EOF'
import socket, sys
host, port = sys.argv[1].split("//")[1].split(":")
def status(tok):
    s = socket.create_connection((host, int(port)), timeout=5)
    s.sendall(b"GET /v1/jobs HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " +
              tok + b"\r\n\r\n")
    got = s.recv(4096)
    s.close()
    return got.split(b"\r\n")[0].decode()
print(status(b"adminadminadmin0001\0junk"), "/", status(b"adminadminadmin0001"))
EOF
)
printf '%s' "$r" | grep -q '^HTTP/1.1 400 .* / HTTP/1.1 200 '
check serve-bearer-nul-400 $? "$r"

# a store with a bad row: serve stops and its last line says which row
# and why, not that another server holds the state (F8, issue 20)
kill "$(cat "$TMP/c.pid")"
while kill -0 "$(cat "$TMP/c.pid")" 2>/dev/null; do sleep 0.1; done
python3 - "$TMP/cli/jobs.db" <<'EOF'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
db.execute("UPDATE jobs SET state = 'zombie'")
db.commit()
EOF
out=$(timeout 30 "$BIN" serve --listen 127.0.0.1:0 --db "sqlite:$TMP/cli/jobs.db" --config "$TMP/serve.yaml" 2>&1)
rc=$?
last=$(printf '%s\n' "$out" | tail -1)
[ "$rc" = 1 ] && printf '%s' "$last" | grep -q "cannot load the store" &&
	printf '%s' "$last" | grep -q "unknown state 'zombie'" &&
	! printf '%s' "$out" | grep -q "another gpufleet serve"
check serve-bad-row $? "rc=$rc
$out"

# started with a low soft open-file limit, serve raises it to the hard
# one and says so on its start line (F5, issue 20)
hard=$(ulimit -Hn)
if [ "$hard" = unlimited ]; then
	echo "skip integration/serve-open-files (no hard open-file limit)"
else
	out=$(timeout 3 sh -c 'ulimit -Sn 256 && exec "$0" serve --listen 127.0.0.1:0 --db "sqlite:$1/x.db"' \
		"$BIN" "$TMP/nofile" 2>&1)
	printf '%s\n' "$out" | grep -q "^gpufleet serve: listening on .* $hard open files, raised from 256)$"
	check serve-open-files $? "hard limit $hard: $out"
fi
# a hard limit below what --max-conns asks: a warning that says how
# many connections and agents fit, and the start line too (issue 24);
# (1024 - 68) * 16 / 17 = 899 connections
if [ "$hard" != unlimited ] && [ "$hard" -lt 1024 ]; then
	echo "skip integration/serve-open-files-warn (hard open-file limit under 1024)"
else
	out=$(timeout 3 sh -c 'ulimit -n 1024 && exec "$0" serve --listen 127.0.0.1:0 --max-conns 2000 --db "sqlite:$1/y.db"' \
		"$BIN" "$TMP/nofile" 2>&1)
	printf '%s\n' "$out" | grep -q "warning: 1024 open files allowed (the hard limit.*at most 899 connections, not 2000: 449 agents at two connections each" &&
		printf '%s\n' "$out" | grep -q "^gpufleet serve: listening on .*up to 899 connections: 449 agents at two each; 1024 open files)$"
	check serve-open-files-warn $? "$out"
fi

# a non-loopback address needs tokens
out=$("$BIN" serve --listen 0.0.0.0:0 --db "sqlite:$TMP/x/jobs.db" 2>&1)
rc=$?
[ "$rc" = 2 ] && printf '%s' "$out" | grep -q 'give --token-file'
check serve-loopback-only $? "rc=$rc $out"

# two servers on PostgreSQL
if [ -z "$PGURL" ]; then
	echo "skip integration/serve-failover (no PostgreSQL)"
	exit 0
fi
DB=$(printf '%s' "$PGURL" | sed 's|/postgres$|/failover|')
psql "$PGURL" -q -c 'CREATE DATABASE failover' >/dev/null 2>&1
start_serve p1 --db "$DB" --config "$TMP/serve.yaml"
sleep 0.5
start_serve p2 --db "$DB" --config "$TMP/serve.yaml"
U1=$(cat "$TMP/p1.url") U2=$(cat "$TMP/p2.url")
s1=$(curl -s -o /dev/null -w '%{http_code}' "$U1/healthz")
s2=$(curl -s -o /dev/null -w '%{http_code}' "$U2/healthz")
for k in 1 2 3 4 5; do
	curl -s -X POST "$U1/v1/jobs" -d '{"gpus": 2, "team": "speech", "command": "true"}' >/dev/null
done
sleep 0.3
before=$(curl -s "$U1/v1/jobs" | python3 -c 'import json,sys; print(sorted((j["id"], j["state"], tuple((p["node"], tuple(p["gpus"])) for p in j["placement"])) for j in json.load(sys.stdin)["jobs"]))')
kill -9 "$(cat "$TMP/p1.pid")"
t0=$(date +%s)
lead=""
while [ $(($(date +%s) - t0)) -lt 10 ]; do
	if [ "$(curl -s -o /dev/null -w '%{http_code}' "$U2/healthz")" = 200 ]; then
		lead=$(($(date +%s) - t0))
		break
	fi
	sleep 0.2
done
after=$(curl -s "$U2/v1/jobs" | python3 -c 'import json,sys; print(sorted((j["id"], j["state"], tuple((p["node"], tuple(p["gpus"])) for p in j["placement"])) for j in json.load(sys.stdin)["jobs"]))')
[ "$s1" = 200 ] && [ "$s2" = 503 ] && [ -n "$lead" ] &&
	[ "$before" = "$after" ] && printf '%s' "$after" | grep -q "j5"
check serve-failover $? "leader $s1, standby $s2, took over after ${lead:-never} s
before: $before
after:  $after
$(tail -3 "$TMP/p2.err")"
