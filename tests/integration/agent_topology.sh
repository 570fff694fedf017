#!/bin/sh
# The agent's /v1/topology is `gpufleet topo --json` for the same source,
# NVML joined: a recorded XML (../shared's HGX H100) with the fake NVML
# answering for its eight GPUs, and this machine (where the live node
# may have no GPU: then both give the same error document).  Byte for
# byte.  Prints "ok|FAIL|skip integration/NAME" lines.
set -u
B=${1:-build}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BIN="$ROOT/$B/gpufleet"
SHARED=${GPUFLEET_SHARED:-$ROOT/../shared}
XML="$SHARED/topologies/synthetic/hgx-h100-like-synthetic.xml"
TMP=$(mktemp -d)
APID=""
cleanup() {
	[ -n "$APID" ] && kill "$APID" 2>/dev/null
	wait 2>/dev/null
	rm -rf "$TMP"
}
trap cleanup EXIT
export GPUFLEET_NVML_LIBRARY="$ROOT/$B/fake-nvml/libnvidia-ml.so.1"

check() {
	if [ "$2" = 0 ]; then echo "ok integration/$1"; else
		echo "FAIL integration/$1"
		printf '%s\n' "$3" | head -20 | sed 's/^/    /'
	fi
}

# Start an agent with "$@"; its port in AP ("" if it did not say).
start_agent() {
	: >"$TMP/agent.err" # before the child opens it: sed reads it at once
	"$BIN" agent --listen 127.0.0.1:0 "$@" 2>"$TMP/agent.err" &
	APID=$!
	AP=""
	i=0
	while [ $i -lt 100 ] && [ -z "$AP" ]; do
		AP=$(sed -n 's|.*listening on http://127\.0\.0\.1:\([0-9]*\)/.*|\1|p' "$TMP/agent.err")
		kill -0 "$APID" 2>/dev/null || break
		i=$((i + 1))
		[ -z "$AP" ] && sleep 0.1
	done
}

stop_agent() {
	kill "$APID" 2>/dev/null
	wait "$APID" 2>/dev/null
	APID=""
}

if ! command -v curl >/dev/null 2>&1; then
	echo "skip integration/agent-topology (curl absent)"
	exit 0
fi

# 1. a recorded XML, NVML joined from the fake's answers for its GPUs
if [ -f "$XML" ]; then
	export GPUFLEET_FAKE_NVML_FIXTURE="$ROOT/tests/fixtures/nvml/hgx-h100.nvml"
	"$BIN" topo --xml "$XML" --nvml --json >"$TMP/topo.json" 2>"$TMP/topo.err"
	start_agent --xml "$XML" --nvml
	code=$(curl -s -o "$TMP/agent.json" -w '%{http_code}' "127.0.0.1:$AP/v1/topology")
	stop_agent
	[ "$code" = 200 ] && cmp -s "$TMP/topo.json" "$TMP/agent.json" &&
		grep -q '"nvml": true' "$TMP/agent.json" &&
		grep -q '"uuid": "GPU-5e1f0c2a-7d3b-4c8e-9a60-000000000000"' "$TMP/agent.json"
	check agent-topology-xml-nvml $? "status $code; $(diff "$TMP/topo.json" "$TMP/agent.json" | head -12) $(cat "$TMP/agent.err")"
else
	echo "skip integration/agent-topology-xml-nvml (shared data absent: $XML)"
fi

# 2. this machine, as topo sees it with the same NVML
export GPUFLEET_FAKE_NVML_FIXTURE="$ROOT/tests/fixtures/nvml/agent.nvml"
"$BIN" topo --json >"$TMP/topo.json" 2>"$TMP/topo.err"
trc=$?
start_agent
code=$(curl -s -o "$TMP/agent.json" -w '%{http_code}' "127.0.0.1:$AP/v1/topology")
stop_agent
want=200
[ "$trc" != 0 ] && want=503
[ "$code" = "$want" ] && cmp -s "$TMP/topo.json" "$TMP/agent.json"
check agent-topology-live $? "topo exit $trc, agent status $code; $(diff "$TMP/topo.json" "$TMP/agent.json" | head -12)"
