#!/bin/sh
# A job's history and the jobs list end to end on loopback (issue 21):
# `gpufleet serve --agents` and one agent on the fake NVML (the node
# hgx-a of tests/tools/cluster_fixtures.py: 8 GPUs with UUIDs), a job run
# to completion, another left running.
#   history-runs        the finished job's "runs": node, GPUs, their
#                       UUIDs (the fixture's), started/ended, exit code,
#                       reason; "attempts" the count
#   history-placement   a finished job keeps its last run's placement
#   history-running     a running job's run: ended and exit_code null
#   history-cli         `gpufleet history ID` and `jobs ID --runs`: one
#                       line per run, sacct-like; --json the job
#   history-list        `gpufleet jobs`: newest first, ELAPSED, --state
#                       in any case, --node, --name, --limit + --before
#   history-restart     after a restart the runs come from the store
# Prints "ok|FAIL|skip integration/NAME" lines.  Every process started is
# stopped by its PID.
set -u
B=${1:-build}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BIN="$ROOT/$B/gpufleet"
TMP=$(mktemp -d)
PIDS=""
cleanup() {
	for p in $PIDS; do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
	rm -rf "$TMP"
}
trap cleanup EXIT
unset GPUFLEET_SERVER GPUFLEET_TOKEN_FILE GPUFLEET_CA

check() {
	if [ "$2" = 0 ]; then echo "ok integration/$1"; else
		echo "FAIL integration/$1"
		printf '%s\n' "$3" | head -30 | sed 's/^/    /'
	fi
}

if ! command -v python3 >/dev/null 2>&1; then
	echo "skip integration/history (python3 absent: make deps installs it)"
	exit 0
fi
if ! python3 "$ROOT/tests/tools/cluster_fixtures.py" --out "$TMP/fx" \
	>"$TMP/fx.log" 2>&1; then
	echo "skip integration/history (no fixtures: $(tail -1 "$TMP/fx.log"))"
	exit 0
fi

printf 'adminadminadmin0001 admin\nnodehistnodehist0002 node:h1\n' >"$TMP/tokens"
printf 'adminadminadmin0001 admin\n' >"$TMP/admin.token"
printf 'nodehistnodehist0002 node:h1\n' >"$TMP/node.token"
chmod 600 "$TMP/tokens" "$TMP/admin.token" "$TMP/node.token"

# jobs run as the agent's user, root here (issue 21: allowed only so)
printf 'allow_root: true\n' >"$TMP/serve.yaml"

# serve LOG: the controller on the store of $TMP/s; URL set
serve() {
	"$BIN" serve --listen 127.0.0.1:0 --tick 20 --agents \
		--config "$TMP/serve.yaml" \
		--db "sqlite:$TMP/s/gf.db" --token-file "$TMP/tokens" 2>"$TMP/$1" &
	SPID=$!
	PIDS="$PIDS $SPID"
	URL=""
	for _ in $(seq 200); do
		URL=$(sed -n 's|^gpufleet serve: listening on \(http://[0-9.:]*\)/.*|\1|p' "$TMP/$1")
		[ -n "$URL" ] && break
		kill -0 "$SPID" 2>/dev/null || break
		sleep 0.05
	done
}
serve serve.err
if [ -z "$URL" ]; then
	check history-serve 1 "serve did not start: $(cat "$TMP/serve.err")"
	exit 0
fi
G="--server $URL --token-file $TMP/admin.token"

GPUFLEET_NVML_LIBRARY="$ROOT/$B/fake-nvml/libnvidia-ml.so.1" \
	GPUFLEET_FAKE_NVML_FIXTURE="$TMP/fx/hgx-a.nvml" \
	"$BIN" agent --listen 127.0.0.1:0 --interval 200ms \
	--xml "$TMP/fx/hgx-a.xml" --this-system --nvml --controller "$URL" \
	--name h1 --token-file "$TMP/node.token" --state-dir "$TMP/agent" \
	--kill-grace 1s 2>"$TMP/agent.err" &
PIDS="$PIDS $!"
ready=""
# (polls every 0.2 s: each one starts gpufleet, under ASan 0.1 s of CPU)
for _ in $(seq 75); do
	# shellcheck disable=SC2086
	"$BIN" nodes $G 2>/dev/null | grep -q '^h1  *ready' && ready=1 && break
	sleep 0.2
done
if [ -z "$ready" ]; then
	check history-agent 1 "the agent did not join: $(cat "$TMP/agent.err")"
	exit 0
fi

# jobs: j1 runs to completion (exit 0), j2 keeps running
# shellcheck disable=SC2086
"$BIN" submit $G --name train-done --gpus 2 --cpu-milli 100 \
	--memory-mib 64 -- true >/dev/null &&
	"$BIN" submit $G --name serve-on --gpus 1 --cpu-milli 100 \
		--memory-mib 64 -- sleep 300 >/dev/null
# job ID: its JSON into $TMP/ID.json
job() {
	# shellcheck disable=SC2086
	"$BIN" jobs $G "$1" --json >"$TMP/$1.json" 2>"$TMP/$1.err"
}
# field ID EXPR: a Python expression on the job j
field() {
	python3 -c 'import json, sys
j = json.load(open(sys.argv[1]))
print(eval(sys.argv[2]))' "$TMP/$1.json" "$2" 2>/dev/null
}
for _ in $(seq 100); do
	job j1
	job j2
	[ "$(field j1 'j["state"]')" = succeeded ] &&
		[ "$(field j2 'j["runs"][0]["node"] if j["runs"] else ""')" = h1 ] &&
		break
	sleep 0.2
done

uuids=$(python3 -c 'import json, sys
c = json.load(open(sys.argv[1]))
print(" ".join(g["uuid"] for n in c["nodes"] if n["name"] == "hgx-a"
               for g in n["gpus"]))' "$TMP/fx/cluster.json" 2>/dev/null)
r=$(field j1 '(len(j["runs"]), j["attempts"], j["runs"][0]["attempt"],
 j["runs"][0]["replica"], j["runs"][0]["node"], len(j["runs"][0]["gpus"]),
 j["runs"][0]["exit_code"], j["runs"][0]["reason"],
 j["runs"][0]["started"] is not None, j["runs"][0]["ended"] is not None,
 j["runs"][0]["mig_uuid"])')
ok=1
[ "$r" = "(1, 1, 1, 0, 'h1', 2, 0, 'exited', True, True, None)" ] && ok=0
# each UUID is the fixture's GPU of that index
for k in 0 1; do
	u=$(field j1 "j['runs'][0]['gpu_uuids'][$k]")
	i=$(field j1 "j['runs'][0]['gpus'][$k]")
	want=$(echo "$uuids" | tr ' ' '\n' | sed -n "$((i + 1))p")
	[ -n "$u" ] && [ "$u" = "$want" ] || ok=1
done
check history-runs $ok "runs: $r
uuids of hgx-a: $uuids
$(cat "$TMP/j1.json" "$TMP/j1.err")"

r=$(field j1 '(len(j["placement"]), j["placement"][0]["node"],
 j["placement"][0]["gpus"] == j["runs"][0]["gpus"])')
[ "$r" = "(1, 'h1', True)" ]
check history-placement $? "placement: $r
$(cat "$TMP/j1.json")"

r=$(field j2 '(j["state"], len(j["runs"]), j["runs"][0]["ended"],
 j["runs"][0]["exit_code"], j["runs"][0]["started"] is not None,
 len(j["runs"][0]["gpu_uuids"]))')
[ "$r" = "('running', 1, None, None, True, 1)" ]
check history-running $? "j2: $r
$(cat "$TMP/j2.json")"

# shellcheck disable=SC2086
h=$("$BIN" history $G j1 2>&1)
hrc=$?
# shellcheck disable=SC2086
h2=$("$BIN" jobs $G 2 --runs 2>&1)
# shellcheck disable=SC2086
hj=$("$BIN" history $G j1 --json 2>&1)
echo "$h" | head -1 | grep -q '^JOBID  *ATTEMPT  *REPLICA  *NODE  *GPUS  *START  *ELAPSED  *EXITCODE  *STATE/REASON$' &&
	[ "$hrc" = 0 ] && [ "$(echo "$h" | wc -l)" = 2 ] &&
	echo "$h" | tail -1 | grep -Eq '^j1  *1  *0  *h1  *[0-9]+,[0-9]+  *20[0-9-]+T[0-9:]+Z  *[0-9]+:[0-9][0-9]  *0  *exited$' &&
	echo "$h2" | tail -1 | grep -Eq '^j2  *1  *0  *h1  *[0-9]+  .*  -  *running$' &&
	echo "$hj" | grep -q '"runs"'
check history-cli $? "history j1 (rc $hrc):
$h
jobs 2 --runs:
$h2"

# the list: newest first, ELAPSED, filters, pages
# shellcheck disable=SC2086
l=$("$BIN" jobs $G 2>&1)
# shellcheck disable=SC2086
ls=$("$BIN" jobs $G --state SUCCEEDED,Cancelled 2>&1)
# shellcheck disable=SC2086
ln=$("$BIN" jobs $G --node h1 --name 'train*' 2>&1)
# shellcheck disable=SC2086
lp=$("$BIN" jobs $G --limit 1 2>&1)
# shellcheck disable=SC2086
lb=$("$BIN" jobs $G --limit 1 --before j2 2>&1)
# shellcheck disable=SC2086
lo=$("$BIN" jobs $G --node h9 --all 2>&1)
ids() { echo "$1" | sed 1d | awk '/^j/ {printf "%s ", $1}'; }
echo "$l" | head -1 | grep -q ' STATE  *ELAPSED  *GPUS ' &&
	[ "$(ids "$l")" = "j2 j1 " ] && [ "$(ids "$ls")" = "j1 " ] &&
	[ "$(ids "$ln")" = "j1 " ] && [ "$(ids "$lp")" = "j2 " ] &&
	echo "$lp" | grep -q '^(more: --before j2)$' &&
	[ "$(ids "$lb")" = "j1 " ] && [ "$(ids "$lo")" = "" ]
check history-list $? "jobs:
$l
--state: $ls
--node --name: $ln
--limit 1: $lp
--before j2: $lb
--node h9: $lo"

# a restart: the finished job's runs come back from the store
kill "$SPID"
wait "$SPID" 2>/dev/null
serve serve2.err
G="--server $URL --token-file $TMP/admin.token"
cp "$TMP/j1.json" "$TMP/j1.before"
job j1
r=$(field j1 '(len(j["runs"]), j["runs"][0]["node"], len(j["runs"][0]["gpu_uuids"]), j["placement"][0]["node"])')
[ -n "$URL" ] && [ "$r" = "(1, 'h1', 2, 'h1')" ]
check history-restart $? "after a restart: $r
$(cat "$TMP/serve2.err" "$TMP/j1.json" "$TMP/j1.err")"
