#!/bin/sh
# CPU nodes and the operator's view on loopback (issue 21): `gpufleet
# serve --agents` with a prices: block in its config, one GPU agent (the
# l40s-a fixture of tests/tools/cluster_fixtures.py: this machine's CPUs,
# 8 L40S through the fake NVML, bound) and one `agent --no-nvml` (this
# machine as a CPU node).
#   cpu-node-says       the --no-nvml agent says it runs as a CPU node
#   cpu-node-joins      it is ready with 0 GPUs and this machine's CPUs
#   cpu-node-metrics    its /metrics has gpufleet's node families, no DCGM
#   cpu-job-on-cpu-node a gpus: 0 job lands on the CPU node while the GPU
#                       node is free, and runs bound to 1 of its CPUs
#   agent-one-connection the CPU node's agent (--one-connection) got that
#                       job over one connection to the controller; the GPU
#                       node's agent holds two
#   gpu-metrics-job     while a team's GPU job runs, the GPU agent's DCGM
#                       series of its GPU carry job="jN",team="TEAM"
#   chargeback-running  the running GPU job is in GET /v1/chargeback and
#                       in `chargeback --db --config serve.yaml` (assets
#                       from the store, the config's prices)
#   chargeback-team     a team's token gets its own team's rows alone
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
unset GPUFLEET_SERVER GPUFLEET_TOKEN_FILE GPUFLEET_CA GPUFLEET_NVML_LIBRARY

check() {
	if [ "$2" = 0 ]; then echo "ok integration/$1"; else
		echo "FAIL integration/$1"
		printf '%s\n' "$3" | head -20 | sed 's/^/    /'
	fi
}

for tool in python3 curl; do
	if ! command -v $tool >/dev/null 2>&1; then
		echo "skip integration/cpu-nodes ($tool absent: scripts/install-deps.sh installs it)"
		exit 0
	fi
done
python3 "$ROOT/tests/tools/cluster_fixtures.py" --out "$TMP/fx" >"$TMP/fx.log" 2>&1
rc=$?
if [ "$rc" = 77 ]; then
	echo "skip integration/cpu-nodes (lstopo-no-graphics absent)"
	exit 0
elif [ "$rc" != 0 ]; then
	check cpu-nodes-fixtures 1 "$(cat "$TMP/fx.log")"
	exit 0
fi

# wait_for SECONDS CMD...: poll CMD every 0.1 s until it succeeds
wait_for() {
	n=$(($1 * 10))
	shift
	while [ "$n" -gt 0 ]; do
		"$@" >/dev/null 2>&1 && return 0
		sleep 0.1
		n=$((n - 1))
	done
	return 1
}

cat >"$TMP/tokens" <<EOF
admin-token-0123456789abcdef admin
node-token-gpu1-0123456789ab node:gpu1
node-token-cpu1-0123456789ab node:cpu1
team-token-vision-0123456789 team:vision
team-token-nlp-0123456789abc team:nlp
EOF
chmod 600 "$TMP/tokens"
for who in admin vision nlp; do
	grep " $who\$\| team:$who\$" "$TMP/tokens" >"$TMP/$who.token"
	chmod 600 "$TMP/$who.token"
done
cat >"$TMP/serve.yaml" <<EOF
allow_root: true
agents:
  heartbeat_s: 1
  kill_grace_s: 1
prices:
  l40s: 1.5
  cpu_core: 0.03
  ram_gib: 0.004
EOF

"$BIN" serve --listen 127.0.0.1:0 --tick 50 --agents \
	--db "sqlite:$TMP/ctl.db" --config "$TMP/serve.yaml" \
	--token-file "$TMP/tokens" 2>"$TMP/serve.err" &
PIDS="$PIDS $!"
URL=""
for _ in $(seq 200); do
	URL=$(sed -n 's|^gpufleet serve: listening on \(http://[0-9.:]*\)/.*|\1|p' "$TMP/serve.err")
	[ -n "$URL" ] && break
	sleep 0.05
done
if [ -z "$URL" ]; then
	check cpu-nodes-serve 1 "serve did not start: $(cat "$TMP/serve.err")"
	exit 0
fi
ADM="--server $URL --token-file $TMP/admin.token"

GPUFLEET_NVML_LIBRARY="$ROOT/$B/fake-nvml/libnvidia-ml.so.1" \
	GPUFLEET_FAKE_NVML_FIXTURE="$TMP/fx/l40s-a.nvml" \
	"$BIN" agent --listen 127.0.0.1:0 --interval 200ms \
	--xml "$TMP/fx/l40s-a.xml" --this-system --nvml \
	--controller "$URL" --name gpu1 --token-file "$TMP/tokens" \
	--state-dir "$TMP/gpu1" --kill-grace 1s 2>"$TMP/gpu1.err" &
GPU_PID=$!
PIDS="$PIDS $GPU_PID"
# no NVML at all for the CPU node: its library is not even there; one
# connection to the controller (no long poll)
GPUFLEET_NVML_LIBRARY=/nonexistent/libnvidia-ml.so.1 \
	"$BIN" agent --listen 127.0.0.1:0 --interval 200ms --no-nvml \
	--controller "$URL" --name cpu1 --token-file "$TMP/tokens" \
	--label kind=cpu --state-dir "$TMP/cpu1" --kill-grace 1s \
	--one-connection 2>"$TMP/cpu1.err" &
CPU_PID=$!
PIDS="$PIDS $CPU_PID"

ready() { # ready NODE: the node is listed ready
	"$BIN" nodes $ADM --json >"$TMP/nodes.json" 2>&1 &&
		python3 - "$TMP/nodes.json" "$1" <<'EOF'
import json, sys
n = {x["name"]: x for x in json.load(open(sys.argv[1]))["nodes"]}
sys.exit(0 if sys.argv[2] in n and n[sys.argv[2]]["state"] == "ready" else 1)
EOF
}
wait_for 30 ready gpu1 && wait_for 30 ready cpu1
rc=$?

grep -q "running as a CPU node" "$TMP/cpu1.err"
check cpu-node-says $? "$(cat "$TMP/cpu1.err")"

python3 - "$TMP/nodes.json" >"$TMP/why" 2>&1 <<'EOF'
import json, os, sys
n = {x["name"]: x for x in json.load(open(sys.argv[1]))["nodes"]}
c = n["cpu1"]
ok = (len(c["gpus"]) == 0 and c["cpu_milli"] == 1000 * os.cpu_count()
      and c["memory_mib"] > 0 and "kind=cpu" in json.dumps(c)
      and len(n["gpu1"]["gpus"]) == 8)
print(json.dumps(c)[:600])
sys.exit(0 if ok else 1)
EOF
[ "$rc" = 0 ] && python3 - "$TMP/nodes.json" >/dev/null 2>&1 <<'EOF'
import json, sys
n = {x["name"]: x for x in json.load(open(sys.argv[1]))["nodes"]}
sys.exit(0 if len(n["cpu1"]["gpus"]) == 0 else 1)
EOF
rc2=$?
[ "$rc" = 0 ] && [ "$rc2" = 0 ] && grep -q '"cpu1"' "$TMP/why"
check cpu-node-joins $? "$(cat "$TMP/why")
$(tail -3 "$TMP/cpu1.err")"

CPU_AGENT=$(sed -n 's|^gpufleet agent: 0 GPUs, listening on \(http://[0-9.:]*\)/.*|\1|p' "$TMP/cpu1.err")
GPU_AGENT=$(sed -n 's|^gpufleet agent: 8 GPUs, listening on \(http://[0-9.:]*\)/.*|\1|p' "$TMP/gpu1.err")
curl -s "$CPU_AGENT/metrics" >"$TMP/cpu.metrics"
grep -q '^gpufleet_samples_total [0-9]' "$TMP/cpu.metrics" &&
	grep -q '^# TYPE gpufleet_gpu_up gauge' "$TMP/cpu.metrics" &&
	! grep -q 'DCGM_' "$TMP/cpu.metrics"
check cpu-node-metrics $? "$CPU_AGENT: $(head -20 "$TMP/cpu.metrics")"

# ---- a gpus: 0 job: the CPU node, bound to one of its CPUs --------------
id=$("$BIN" submit --server "$URL" --token-file "$TMP/nlp.token" --gpus 0 \
	--name cpujob \
	--cpu-milli 1000 --memory-mib 64 -- \
	"grep Cpus_allowed_list /proc/self/status >$TMP/cpujob.out; sleep 60" \
	>"$TMP/submit.out" 2>&1)
id=$(sed -n 's/^\(j[0-9]*\) .*/\1/p' "$TMP/submit.out")
placed() { # placed JOB NODE
	"$BIN" jobs "$1" $ADM --json >"$TMP/job.json" 2>&1 &&
		grep -q '"state": *"running"' "$TMP/job.json" &&
		grep -q "\"node\": *\"$2\"" "$TMP/job.json"
}
[ -n "$id" ] && wait_for 20 placed "$id" cpu1 &&
	wait_for 20 test -s "$TMP/cpujob.out"
rc=$?
ncpu=$(python3 -c 'import os; print(os.cpu_count())')
bound=$(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' "$TMP/cpujob.out")
# one CPU of several: one number; a machine of one CPU: that one
[ "$rc" = 0 ] && { [ "$ncpu" = 1 ] || printf '%s' "$bound" | grep -qx '[0-9][0-9]*'; }
check cpu-job-on-cpu-node $? "job '$id': $(cat "$TMP/submit.out") $(head -30 "$TMP/job.json")
bound to '$bound' of $ncpu CPUs"

# cpu1's agent (--one-connection) got that job holding one connection to
# the controller; gpu1's holds two (its heartbeats, its long poll)
conns() { # conns PID: its established TCP connections to the controller
	port=${URL##*:}
	ss -tnpH state established "( dport = :$port )" 2>/dev/null |
		grep -c "pid=$1,"
}
two=$(command -v ss >/dev/null 2>&1 && conns "$GPU_PID")
if [ -n "$two" ] && [ "$two" != 0 ]; then
	one=$(conns "$CPU_PID")
	[ "$one" = 1 ] && [ "$two" = 2 ]
	check agent-one-connection $? "cpu1 (--one-connection) holds $one, gpu1 $two: $(ss -tnpH state established 2>&1 | head -10)"
else
	echo "skip integration/agent-one-connection (ss absent, or it shows no process)"
fi

# ---- a team's GPU job: job and team labels on its GPU's series ----------
gid=$("$BIN" submit --server "$URL" --token-file "$TMP/vision.token" \
	--gpus 1 -- sleep 120 2>&1 | sed -n 's/^\(j[0-9]*\) .*/\1/p')
wait_for 20 placed "$gid" gpu1
labelled() {
	curl -s "$GPU_AGENT/metrics" >"$TMP/gpu.metrics" &&
		grep -q "^DCGM_FI_DEV_GPU_TEMP{.*,job=\"$gid\",team=\"vision\"}" "$TMP/gpu.metrics"
}
wait_for 20 labelled
rc=$?
# the other GPUs' series carry no job
others=$(grep -c '^DCGM_FI_DEV_GPU_TEMP{' "$TMP/gpu.metrics")
withjob=$(grep -c '^DCGM_FI_DEV_GPU_TEMP{.*,job=' "$TMP/gpu.metrics")
[ "$rc" = 0 ] && [ "$withjob" = 1 ] && [ "$others" = 8 ]
check gpu-metrics-job $? "job $gid on $GPU_AGENT: $withjob of $others labelled
$(grep '^DCGM_FI_DEV_GPU_TEMP' "$TMP/gpu.metrics" | head -9)"

# ---- chargeback: the running job, and a team's own view ----------------
# a window from an hour ago to an hour from now ("1h" ends at the minute
# begun, before a job started seconds ago)
NOW=$(date +%s)
WIN="$((NOW - 3600)),$((NOW + 3600))"
sleep_until_charged() {
	curl -s -H "Authorization: Bearer admin-token-0123456789abcdef" \
		"$URL/v1/chargeback?window=$WIN&aggregate=team" >"$TMP/cb.json" &&
		python3 - "$TMP/cb.json" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))["data"][0]
sys.exit(0 if d.get("vision", {}).get("gpuHours", 0) > 0 else 1)
EOF
}
wait_for 20 sleep_until_charged
rc=$?
"$BIN" chargeback --db "sqlite:$TMP/ctl.db" --config "$TMP/serve.yaml" \
	--window "$WIN" --aggregate team --json >"$TMP/cli.json" 2>"$TMP/cli.err"
rc2=$?
python3 - "$TMP/cli.json" >/dev/null 2>&1 <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))["data"][0]
sys.exit(0 if d.get("vision", {}).get("gpuHours", 0) > 0 and "nlp" in d else 1)
EOF
rc3=$?
"$BIN" chargeback --db "sqlite:$TMP/ctl.db" --config "$TMP/serve.yaml" \
	--window "$WIN" --aggregate team >"$TMP/cli.txt" 2>&1
head -2 "$TMP/cli.txt" | grep -q '^TEAM '
rc4=$?
[ "$rc" = 0 ] && [ "$rc2" = 0 ] && [ "$rc3" = 0 ] && [ "$rc4" = 0 ]
check chargeback-running $? "served: $(head -c 600 "$TMP/cb.json")
cli ($rc2): $(head -c 600 "$TMP/cli.json") $(cat "$TMP/cli.err")
$(head -3 "$TMP/cli.txt")"

code=$(curl -s -o "$TMP/team.json" -w '%{http_code}' \
	-H "Authorization: Bearer team-token-vision-0123456789" \
	"$URL/v1/chargeback?window=$WIN&aggregate=team")
python3 - "$TMP/team.json" >/dev/null 2>&1 <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))["data"][0]
teams = [k for k in d if not k.startswith("__")]
sys.exit(0 if teams == ["vision"] else 1)
EOF
rc=$?
[ "$code" = 200 ] && [ "$rc" = 0 ]
check chargeback-team $? "$code: $(head -c 600 "$TMP/team.json")"

"$BIN" cancel "$id" $ADM >/dev/null 2>&1
"$BIN" cancel "$gid" $ADM >/dev/null 2>&1
exit 0
