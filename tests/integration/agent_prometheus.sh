#!/bin/sh
# The node agent for real: started on loopback with the fake NVML, scraped
# by Debian's real Prometheus, read back through Prometheus's HTTP API;
# SIGTERM stops it with exit 0; a malformed counters file stops it at
# start with file:line.  Prints "ok|FAIL|skip integration/NAME" lines.
set -u
B=${1:-build}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BIN="$ROOT/$B/gpufleet"
TMP=$(mktemp -d)
APID="" PPID_=""
cleanup() {
	[ -n "$APID" ] && kill "$APID" 2>/dev/null
	[ -n "$PPID_" ] && kill "$PPID_" 2>/dev/null
	wait 2>/dev/null
	rm -rf "$TMP"
}
trap cleanup EXIT
export GPUFLEET_NVML_LIBRARY="$ROOT/$B/fake-nvml/libnvidia-ml.so.1"
export GPUFLEET_FAKE_NVML_FIXTURE="$ROOT/tests/fixtures/nvml/agent.nvml"

check() {
	if [ "$2" = 0 ]; then echo "ok integration/$1"; else
		echo "FAIL integration/$1"
		printf '%s\n' "$3" | head -20 | sed 's/^/    /'
	fi
}

free_port() { # a port nobody listens on, in a private range
	p=$(( $(od -An -N2 -tu2 /dev/urandom) % 20000 + 30000 ))
	while curl -s -o /dev/null "127.0.0.1:$p" 2>/dev/null; do
		p=$((p + 1))
	done
	echo "$p"
}

if ! command -v curl >/dev/null 2>&1; then
	echo "skip integration/agent (curl absent)"
	exit 0
fi

# 1. a malformed counters file: one line, exit 1, nothing served
printf 'DCGM_FI_DEV_GPU_UTIL, gauge, ok\nDCGM_FI_DEV_POWER_USAGE; gauge\n' \
	>"$TMP/bad.csv"
"$BIN" agent --listen "127.0.0.1:$(free_port)" --counters "$TMP/bad.csv" \
	>/dev/null 2>"$TMP/bad.err"
rc=$?
[ "$rc" = 1 ] && grep -q "bad.csv:2: expected 'NAME, TYPE, HELP'" "$TMP/bad.err"
check agent-bad-counters $? "rc=$rc $(cat "$TMP/bad.err")"

# 2. the agent on loopback
AP=$(free_port)
"$BIN" agent --listen "127.0.0.1:$AP" --interval 200ms --diag-window 1s \
	2>"$TMP/agent.err" &
APID=$!
i=0
until curl -sf "127.0.0.1:$AP/healthz" >/dev/null 2>&1; do
	i=$((i + 1))
	[ $i -gt 50 ] && break
	sleep 0.1
done
curl -sf "127.0.0.1:$AP/metrics" >"$TMP/metrics"
grep -q '^DCGM_FI_DEV_POWER_USAGE{gpu="0",.*} 312.456$' "$TMP/metrics" &&
	grep -q 'GPU_I_PROFILE="3g.40gb"' "$TMP/metrics" &&
	curl -sI "127.0.0.1:$AP/metrics" | grep -qi 'content-type: text/plain; version=0.0.4'
check agent-metrics $? "$(head -5 "$TMP/metrics") $(cat "$TMP/agent.err")"
code=$(curl -s -o /dev/null -w '%{http_code}' "127.0.0.1:$AP/nope")
js=$(curl -sf "127.0.0.1:$AP/v1/gpus")
[ "$code" = 404 ] && printf '%s' "$js" | grep -q '"DCGM_FI_DEV_POWER_USAGE": 312.456'
check agent-endpoints $? "404? $code; $js"

# 2b. diagnoses: GPU 1 holds memory and does nothing
sleep 1.5
d=$("$BIN" diagnose --url "127.0.0.1:$AP" 2>&1)
m=$(curl -sf "127.0.0.1:$AP/metrics")
printf '%s\n' "$d" | grep -q 'GPU1 \[allocated-idle\]' &&
	printf '%s\n' "$m" | grep -q 'gpufleet_diagnosis{gpu="1",.*reason="allocated-idle"} 1' &&
	printf '%s\n' "$m" | grep -q 'gpufleet_diagnosis{gpu="0",.*reason="allocated-idle"} 0'
check agent-diagnose $? "$d"

# 3. Prometheus scrapes it; the fixture's power comes back through its API
if command -v prometheus >/dev/null 2>&1; then
	PP=$(free_port)
	cat >"$TMP/prometheus.yml" <<YML
global:
  scrape_interval: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: gpufleet
    static_configs:
      - targets: ['127.0.0.1:$AP']
YML
	prometheus --config.file="$TMP/prometheus.yml" \
		--storage.tsdb.path="$TMP/data" \
		--web.listen-address="127.0.0.1:$PP" >"$TMP/prom.log" 2>&1 &
	PPID_=$!
	got=""
	i=0
	while [ $i -lt 60 ]; do
		got=$(curl -s "127.0.0.1:$PP/api/v1/query" \
			--data-urlencode 'query=DCGM_FI_DEV_POWER_USAGE{gpu="0"}' |
			sed -n 's/.*"value":\[[0-9.]*,"\([^"]*\)"\].*/\1/p')
		[ -n "$got" ] && break
		i=$((i + 1))
		sleep 0.5
	done
	[ "$got" = 312.456 ]
	check agent-prometheus-scrape $? "got '$got'; $(tail -5 "$TMP/prom.log")"
	# a GPM ratio of one MIG instance, labels and all (12.5 % -> 0.125)
	q='DCGM_FI_PROF_PIPE_TENSOR_ACTIVE{GPU_I_PROFILE="3g.40gb",GPU_I_ID="1"}'
	mig=$(curl -s "127.0.0.1:$PP/api/v1/query" --data-urlencode "query=$q" |
		sed -n 's/.*"value":\[[0-9.]*,"\([^"]*\)"\].*/\1/p')
	[ "$mig" = 0.125 ]
	check agent-prometheus-gpm-mig $? "got '$mig'"
	kill "$PPID_" 2>/dev/null
	wait "$PPID_" 2>/dev/null
	PPID_=""
else
	echo "skip integration/agent-prometheus-scrape (prometheus absent)"
fi

# 4. SIGTERM: a clean stop, exit 0
kill -TERM "$APID"
wait "$APID"
rc=$?
APID=""
[ "$rc" = 0 ] && grep -q 'SIGTERM, stopping' "$TMP/agent.err"
check agent-sigterm $? "rc=$rc $(cat "$TMP/agent.err")"
