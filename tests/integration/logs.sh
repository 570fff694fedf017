#!/bin/sh
# Logs and `gpufleet run` (issue 21) on loopback: a controller (tokens:
# an admin, teams alpha and beta, node n1) and one agent on the fake NVML
# (8 H100s, the hgx-h100 template).  A job that fails twice, then runs a
# third attempt, writes "run-N" in each: `gpufleet logs --attempt A`
# prints attempt A's file alone, between its start marker (attempt, node,
# time) and its end marker (why it stopped); `--follow` prints a running
# job's lines as they come and returns once it ended (its end marker
# last); beta's token does not read alpha's job; --output puts the output
# in a file of the node with %j %a replaced; `gpufleet run -- sh -c 'echo
# hi; exit 3'` prints hi and exits 3; a run interrupted (SIGINT) cancels
# its job and exits 125.  Conditions are polled (bounded), never timed.
# Prints "ok|FAIL|skip integration/NAME" lines.
set -u
B=${1:-build}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BIN="$ROOT/$B/gpufleet"
TMP=$(mktemp -d)
SPID=""
APID=""
cleanup() {
	[ -n "$APID" ] && kill "$APID" 2>/dev/null
	[ -n "$SPID" ] && kill "$SPID" 2>/dev/null
	wait 2>/dev/null
	rm -rf "$TMP"
}
trap cleanup EXIT
export GPUFLEET_NVML_LIBRARY="$ROOT/$B/fake-nvml/libnvidia-ml.so.1"
export GPUFLEET_FAKE_NVML_FIXTURE="$ROOT/tests/fixtures/nvml/hgx-h100.nvml"

check() {
	if [ "$2" = 0 ]; then echo "ok integration/$1"; else
		echo "FAIL integration/$1"
		printf '%s\n' "$3" | head -30 | sed 's/^/    /'
	fi
}

if [ ! -e "$GPUFLEET_NVML_LIBRARY" ]; then
	echo "skip integration/logs (no fake NVML in $B)"
	exit 0
fi

# Poll until the command $1 succeeds (true) or 20 s passed (false).
until_ok() {
	i=0
	while [ $i -lt 200 ]; do
		eval "$1" && return 0
		i=$((i + 1))
		sleep 0.1
	done
	return 1
}

# The URL a process writing its stderr to $1 listens on, once it says so.
url_of() {
	sed -n 's|.*listening on \(http://127\.0\.0\.1:[0-9]*\).*|\1|p' "$1" |
		head -1
}

cat >"$TMP/tokens" <<EOF
logs-admin-token-0123456789 admin
logs-alpha-token-0123456789 team:alpha
logs-beta-token-01234567890 team:beta
logs-node-n1-token-01234567 node:n1
EOF
for who in admin alpha beta; do
	grep "$who" "$TMP/tokens" | head -1 >"$TMP/$who.token"
done
grep "node:n1" "$TMP/tokens" >"$TMP/n1.token"
chmod 600 "$TMP"/tokens "$TMP"/*.token

# a silent node is NotReady after 3 s (its logs: "gone")
printf 'allow_root: true\nagents:\n  heartbeat_s: 1\n  notready_after_s: 3\n  requeue_after_s: 60\n' \
	>"$TMP/serve.yaml"
"$BIN" serve --agents --listen 127.0.0.1:0 --db "sqlite:$TMP/state.db" \
	--config "$TMP/serve.yaml" --token-file "$TMP/tokens" --tick 50 \
	2>"$TMP/serve.err" &
SPID=$!
until_ok '[ -n "$(url_of "$TMP/serve.err")" ]'
URL=$(url_of "$TMP/serve.err")
if [ -z "$URL" ]; then
	check logs-setup 1 "the controller did not start: $(cat "$TMP/serve.err")"
	exit 0
fi
GPUFLEET_LOG=info "$BIN" agent --listen 127.0.0.1:0 --interval 200ms \
	--template hgx-h100 \
	--controller "$URL" --name n1 --token-file "$TMP/n1.token" \
	--state-dir "$TMP/agent" --kill-grace 1s 2>"$TMP/agent.err" &
APID=$!
if ! until_ok 'grep -q "registered as" "$TMP/agent.err"'; then
	check logs-setup 1 "the agent did not join: $(cat "$TMP/agent.err")"
	exit 0
fi

C="--server $URL"
A="$C --token-file $TMP/alpha.token"

# the job's state, from its JSON
state() {
	curl -s -H "Authorization: Bearer logs-admin-token-0123456789" \
		"$URL/v1/jobs/$1" | sed -n 's/^  "state": "\(.*\)",$/\1/p'
}

# 1. Three attempts, each its own file between its markers.
COUNT="$TMP/count"
first_id=$("$BIN" submit $A --team alpha --gpus 1 -- sh -c \
	"n=\$(cat $COUNT 2>/dev/null || echo 0); n=\$((n + 1)); echo \$n >$COUNT; echo run-\$n; exit 3" |
	cut -d' ' -f1)
id=$first_id
until_ok '[ "$(state "$id")" = failed ]'
"$BIN" logs "$id" --attempt 2 $A >"$TMP/a2" 2>&1
rc=$?
first=$(sed -n 1p "$TMP/a2")
last=$(sed -n '$p' "$TMP/a2")
[ "$rc" = 0 ] && [ "$(wc -l <"$TMP/a2")" = 3 ] &&
	[ "$(sed -n 2p "$TMP/a2")" = run-2 ] &&
	case "$first" in "==> gpufleet: $id replica 0 attempt 2 on n1 started 20"*" <==") true ;; *) false ;; esac &&
	case "$last" in "==> gpufleet: $id replica 0 attempt 2 on n1 ended 20"*": exit code 3 <==") true ;; *) false ;; esac
check logs-attempt-markers $? "rc=$rc
$(cat "$TMP/a2")"

"$BIN" logs "$id" --attempt 1 $A >"$TMP/a1" 2>&1
"$BIN" logs "$id" $A >"$TMP/alast" 2>&1 # the last attempt: 3
[ "$(sed -n 2p "$TMP/a1")" = run-1 ] && ! grep -q run-2 "$TMP/a1" &&
	[ "$(sed -n 2p "$TMP/alast")" = run-3 ] &&
	grep -q "attempt 3 on n1 ended" "$TMP/alast"
check logs-attempt-select $? "attempt 1:
$(cat "$TMP/a1")
last:
$(cat "$TMP/alast")"

# 2. Clear refusals: another team's job, no such attempt, no such job.
"$BIN" logs "$id" $C --token-file "$TMP/beta.token" >"$TMP/beta" 2>&1
rb=$?
"$BIN" logs "$id" --attempt 9 $A >"$TMP/a9" 2>&1
r9=$?
"$BIN" logs j999 $A >"$TMP/none" 2>&1
rn=$?
[ "$rb" = 1 ] && grep -q "404: no job '$id'" "$TMP/beta" &&
	! grep -q run- "$TMP/beta" &&
	[ "$r9" = 1 ] && grep -q "ran 3 attempts: no attempt 9" "$TMP/a9" &&
	[ "$rn" = 1 ] && grep -q "no job 'j999'" "$TMP/none"
check logs-refused $? "beta rc=$rb: $(cat "$TMP/beta")
attempt 9 rc=$r9: $(cat "$TMP/a9")
j999 rc=$rn: $(cat "$TMP/none")"

# 3. --follow: lines as they come, the end marker last, then it returns
# (the job waits for a file before its last line: no timing).
GO="$TMP/go"
id=$("$BIN" submit $A --team alpha --gpus 1 -- sh -c \
	"echo first; while [ ! -e $GO ]; do sleep 0.1; done; echo second" |
	cut -d' ' -f1)
until_ok '[ "$(state "$id")" = running ]'
"$BIN" logs "$id" --follow $A >"$TMP/follow" 2>&1 &
FPID=$!
until_ok 'grep -q "^first$" "$TMP/follow"'
seen_first=$?
kill -0 "$FPID" 2>/dev/null
alive=$? # still following: the job runs on
touch "$GO"
until_ok '! kill -0 "$FPID" 2>/dev/null'
wait "$FPID"
rf=$?
[ "$seen_first" = 0 ] && [ "$alive" = 0 ] && [ "$rf" = 0 ] &&
	[ "$(sed -n 2p "$TMP/follow")" = first ] &&
	[ "$(sed -n 3p "$TMP/follow")" = second ] &&
	sed -n '$p' "$TMP/follow" | grep -q "attempt 1 on n1 ended .*: exit code 0 <==$"
check logs-follow $? "first seen: $seen_first, following then: $alive, rc=$rf
$(cat "$TMP/follow")"

# 4. --output with tokens: the output in that file of the node (its
# start marker on top), the node's log says where; a relative path is
# refused (it is the node's).
mkdir -p "$TMP/out"
id=$("$BIN" submit $A --team alpha --gpus 1 --output "$TMP/out/%j.%a.%n.log" \
	-- sh -c "echo to-file" | cut -d' ' -f1)
until_ok '[ "$(state "$id")" = succeeded ]'
f="$TMP/out/$id.1.n1.log"
"$BIN" logs "$id" $A >"$TMP/outlog" 2>&1
"$BIN" submit $A --output relative/x -- true >"$TMP/rel" 2>&1
rr=$?
[ -f "$f" ] && grep -q "^to-file$" "$f" &&
	sed -n 1p "$f" | grep -q "^==> gpufleet: $id replica 0 attempt 1 on n1 started" &&
	grep -q "output to $f, errors to the output" "$TMP/outlog" &&
	! grep -q "to-file" "$TMP/outlog" &&
	[ "$rr" = 1 ] && grep -q "'output': expected an absolute path" "$TMP/rel"
check logs-output-file $? "$(ls "$TMP/out" 2>&1): $(cat "$f" 2>&1)
logs: $(cat "$TMP/outlog")
relative: rc=$rr $(cat "$TMP/rel")"

# 5. gpufleet run: the output, the job's exit code.
"$BIN" run $A --team alpha --gpus 1 -- sh -c 'echo hi; exit 3' \
	>"$TMP/run.out" 2>"$TMP/run.err"
rr=$?
[ "$rr" = 3 ] && grep -q "^hi$" "$TMP/run.out" &&
	! grep -q "==> gpufleet" "$TMP/run.out" &&
	grep -q "==> gpufleet: .* ended .*: exit code 3 <==" "$TMP/run.err"
check logs-run-exit-code $? "rc=$rr
stdout: $(cat "$TMP/run.out")
stderr: $(cat "$TMP/run.err")"

# 6. Ctrl-C (SIGINT) cancels the job; run exits 125 (no exit code).
"$BIN" run $A --team alpha --gpus 1 -- sh -c 'echo waiting; sleep 60' \
	>"$TMP/int.out" 2>"$TMP/int.err" &
RPID=$!
until_ok 'grep -q "^waiting$" "$TMP/int.out"'
kill -INT "$RPID"
until_ok '! kill -0 "$RPID" 2>/dev/null'
wait "$RPID"
ri=$?
rid=$(sed -n 's/^gpufleet run: \(j[0-9]*\) submitted$/\1/p' "$TMP/int.err")
[ "$ri" = 125 ] && [ "$(state "$rid")" = cancelled ] &&
	grep -q "cancelled (stopped by the controller)" "$TMP/int.err"
check logs-run-interrupt $? "rc=$ri job $rid: $(state "$rid")
$(cat "$TMP/int.err")"

# 7. The node gone (its agent killed, the node NotReady): a clear 404.
kill -9 "$APID"
wait "$APID" 2>/dev/null
APID=""
gone() {
	"$BIN" logs "$first_id" $A >"$TMP/gone" 2>&1
	echo $? >"$TMP/gone.rc"
	grep -q "which is gone" "$TMP/gone"
}
until_ok gone
[ "$(cat "$TMP/gone.rc")" = 1 ] &&
	grep -q "404: $first_id replica 0 attempt 3 ran on node 'n1', which is gone" "$TMP/gone"
check logs-node-gone $? "rc=$(cat "$TMP/gone.rc") $(cat "$TMP/gone")"
