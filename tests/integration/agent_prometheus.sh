#!/bin/sh
# The node agent for real: started on loopback with the fake NVML, scraped
# by Debian's real Prometheus, read back through Prometheus's HTTP API;
# SIGTERM stops it with exit 0; a malformed counters file stops it at
# start with file:line.  Prints "ok|FAIL|skip integration/NAME" lines.
#
# No port is guessed: the agent listens on 127.0.0.1:0 and says the port
# the kernel gave it; so does Prometheus (its "Listening on" log line).
# A Prometheus that does not say it gets random ports, retried while it
# fails with "address already in use".
set -u
B=${1:-build}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BIN="$ROOT/$B/gpufleet"
TMP=$(mktemp -d)
APID="" PPID_="" A2PID=""
cleanup() {
	[ -n "$APID" ] && kill "$APID" 2>/dev/null
	[ -n "$A2PID" ] && kill "$A2PID" 2>/dev/null
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

# The port an agent writing its stderr to $1 listens on, once it says
# so (empty after 10 s, or when it exits first: pid $2).
agent_port() {
	i=0
	while [ $i -lt 100 ]; do
		# (the file may not exist yet: the agent's shell opens it)
		p=$(sed -n 's|.*listening on http://127\.0\.0\.1:\([0-9]*\)/.*|\1|p' "$1" 2>/dev/null)
		[ -n "$p" ] && { echo "$p"; return; }
		kill -0 "$2" 2>/dev/null || return
		i=$((i + 1))
		sleep 0.1
	done
}

if ! command -v curl >/dev/null 2>&1; then
	echo "skip integration/agent (curl absent)"
	exit 0
fi

# 1. a malformed counters file: one line, exit 1, nothing served
printf 'DCGM_FI_DEV_GPU_UTIL, gauge, ok\nDCGM_FI_DEV_POWER_USAGE; gauge\n' \
	>"$TMP/bad.csv"
"$BIN" agent --listen 127.0.0.1:0 --counters "$TMP/bad.csv" \
	>/dev/null 2>"$TMP/bad.err"
rc=$?
[ "$rc" = 1 ] && grep -q "bad.csv:2: expected 'NAME, TYPE, HELP'" "$TMP/bad.err"
check agent-bad-counters $? "rc=$rc $(cat "$TMP/bad.err")"

# 2. the agent on loopback, on a port the kernel picks, logging debug
GPUFLEET_LOG=debug "$BIN" agent --listen 127.0.0.1:0 --interval 200ms \
	--diag-window 1s 2>"$TMP/agent.err" &
APID=$!
AP=$(agent_port "$TMP/agent.err" "$APID")
[ -n "$AP" ] && [ "$AP" != 0 ] && curl -sf "127.0.0.1:$AP/healthz" >/dev/null
check agent-listen-port-0 $? "port '$AP'; $(head -5 "$TMP/agent.err")"
curl -sf "127.0.0.1:$AP/metrics" >"$TMP/metrics"
grep -q '^DCGM_FI_DEV_POWER_USAGE{gpu="0",.*} 312.456$' "$TMP/metrics" &&
	grep -q 'GPU_I_PROFILE="3g.40gb"' "$TMP/metrics" &&
	curl -sI "127.0.0.1:$AP/metrics" | grep -qi 'content-type: text/plain; version=0.0.4'
check agent-metrics $? "$(head -5 "$TMP/metrics") $(head -5 "$TMP/agent.err")"
code=$(curl -s -o /dev/null -w '%{http_code}' "127.0.0.1:$AP/nope")
js=$(curl -sf "127.0.0.1:$AP/v1/gpus")
post=$(curl -s -o /dev/null -D "$TMP/h405" -w '%{http_code}' -X POST "127.0.0.1:$AP/metrics")
[ "$code" = 404 ] && printf '%s' "$js" | grep -q '"DCGM_FI_DEV_POWER_USAGE": 312.456' &&
	printf '%s' "$js" | grep -q '"gpu_instance_profile": "3g.40gb"' &&
	[ "$post" = 405 ] && grep -qi '^Allow: GET, HEAD' "$TMP/h405"
check agent-endpoints $? "404? $code; 405? $post $(cat "$TMP/h405"); $js"

# 2a. every route -h lists is served: none answers "no route" (a route
# with parts, /v1/logs/{job}/..., asked for j1 replica 0 attempt 1, may
# say 404 of that log, not of the route)
bad=""
for r in $("$BIN" agent -h | sed -n 's|^  \(/[^ ]*\) .*|\1|p'); do
	u=$(printf '%s' "$r" | sed -e 's/{job}/j1/' -e 's/{replica}/0/' -e 's/{attempt}/1/')
	c=$(curl -s -o "$TMP/route" -w '%{http_code}' "127.0.0.1:$AP$u")
	if [ "$c" = 000 ] || grep -q '"no route for' "$TMP/route" ||
		{ [ "$c" = 404 ] && [ "$u" = "$r" ]; }; then
		bad="$bad $r:$c"
	fi
done
n=$("$BIN" agent -h | grep -c '^  /')
[ -z "$bad" ] && [ "$n" = 7 ]
check agent-help-routes $? "$n routes in -h; not served:$bad"

# 2b. diagnoses: GPU 1 holds memory and does nothing (by its utilisation:
# no GPM); asked as users type the address, http://HOST:PORT/
sleep 1.5
d=$("$BIN" diagnose --url "http://127.0.0.1:$AP/" 2>&1)
m=$(curl -sf "127.0.0.1:$AP/metrics")
printf '%s\n' "$d" | grep -q 'GPU1 \[allocated-idle\]: .* (by DCGM_FI_DEV_GPU_UTIL)$' &&
	printf '%s\n' "$m" | grep -q 'gpufleet_diagnosis{gpu="1",.*reason="allocated-idle"} 1' &&
	printf '%s\n' "$m" | grep -q 'gpufleet_diagnosis{gpu="0",.*reason="allocated-idle"} 0'
check agent-diagnose $? "$d"

# 2c. GPUFLEET_LOG=debug: each sample's time, requests served, metrics read
grep -q 'debug: agent: sample [0-9]*: 3 GPUs in [0-9.]* ms' "$TMP/agent.err" &&
	grep -q 'debug: agent: GET /metrics from 127\.0\.0\.1:[0-9]*: 200, [0-9]* bytes' "$TMP/agent.err" &&
	grep -q 'debug: agent: exporting DCGM_FI_DEV_GPU_UTIL (gauge)' "$TMP/agent.err" &&
	grep -q 'debug: collect: GPU0: [0-9]* metrics read' "$TMP/agent.err"
check agent-debug-log $? "$(grep debug "$TMP/agent.err" | head -8)"

# 2d. a window longer than the history: "not judged yet", not "no waste"
"$BIN" agent --listen 127.0.0.1:0 --diag-window 10m 2>"$TMP/agent2.err" &
A2PID=$!
A2=$(agent_port "$TMP/agent2.err" "$A2PID")
d=$("$BIN" diagnose --url "127.0.0.1:$A2" 2>&1)
j=$("$BIN" diagnose --json --url "127.0.0.1:$A2" 2>&1)
printf '%s\n' "$d" | grep -q '^  GPU1: [0-9]* s of 600 s observed; not judged yet$' &&
	! printf '%s\n' "$d" | grep -q 'no waste' &&
	printf '%s\n' "$j" | grep -q '"not_judged": \[' &&
	! curl -sf "127.0.0.1:$A2/metrics" | grep -q '^gpufleet_diagnosis{'
check agent-not-judged-yet $? "$d"
kill "$A2PID" 2>/dev/null
wait "$A2PID" 2>/dev/null
A2PID=""

# 2e. one client trickling 64 connections (a header byte each every 2 s)
# from 127.0.0.2 gets at most its share (--max-conns-per-client, default
# 16 of 64): /metrics from 127.0.0.1 is answered all along, 4 of 4
# scrapes (issue 20, F5: all 4 timed out before)
rm -f "$TMP/trickle.out" "$TMP/stop"
python3 - "$AP" "$TMP/stop" >"$TMP/trickle.out" 2>&1 <<'PY' &
import os, socket, sys, time
port, stop = int(sys.argv[1]), sys.argv[2]
conns = []
for _ in range(64):
    s = socket.socket()
    s.bind(("127.0.0.2", 0))
    s.connect(("127.0.0.1", port))
    conns.append(s)
req = b"GET /metrics HTTP/1.1\r\nHost: x\r\nX-Pad: " + b"a" * 200
at, t = 0, 0
print("trickling", flush=True)
while not os.path.exists(stop) and t < 60:
    for s in conns:
        try:
            s.send(req[at:at + 1])
        except OSError:
            pass
    at += 1
    for _ in range(20):
        if os.path.exists(stop):
            break
        time.sleep(0.1)
    t += 2
PY
TRICKLE=$!
i=0
while [ $i -lt 50 ] && ! grep -q trickling "$TMP/trickle.out" 2>/dev/null; do
	i=$((i + 1))
	sleep 0.1
done
sleep 1 # its connections are in (accepted, or refused)
ok=0
codes=""
for k in 1 2 3 4; do
	c=$(curl -s -o /dev/null -w '%{http_code}' -m 5 "127.0.0.1:$AP/metrics")
	codes="$codes $c"
	[ "$c" = 200 ] && ok=$((ok + 1))
	sleep 1
done
touch "$TMP/stop"
wait "$TRICKLE"
[ "$ok" = 4 ]
check agent-metrics-while-trickled $? "scrapes:$codes; $(cat "$TMP/trickle.out")"

# Start Prometheus on config $1: its port in PP, or return 1.
start_prometheus() {
	port=0
	tries=0
	while [ $tries -lt 5 ]; do
		rm -rf "$TMP/data"
		prometheus --config.file="$1" --storage.tsdb.path="$TMP/data" \
			--web.listen-address="127.0.0.1:$port" \
			>"$TMP/prom.log" 2>&1 &
		PPID_=$!
		i=0
		while [ $i -lt 300 ] && kill -0 "$PPID_" 2>/dev/null; do
			if grep -q 'Server is ready to receive web requests' \
				"$TMP/prom.log" 2>/dev/null; then
				PP=$(sed -n 's/.*msg="Listening on" address=127\.0\.0\.1:\([0-9]*\).*/\1/p' \
					"$TMP/prom.log" | head -1)
				[ "$port" != 0 ] && PP=$port
				[ -n "$PP" ] && return 0
				break # ready, but it did not say where
			fi
			i=$((i + 1))
			sleep 0.1
		done
		kill "$PPID_" 2>/dev/null
		wait "$PPID_" 2>/dev/null
		PPID_=""
		if [ "$port" != 0 ] &&
			! grep -q 'address already in use' "$TMP/prom.log"; then
			return 1
		fi
		port=$(($(od -An -N2 -tu2 /dev/urandom) % 20000 + 30000))
		tries=$((tries + 1))
	done
	return 1
}

# 3. Prometheus scrapes it; the fixture's power comes back through its API
if command -v prometheus >/dev/null 2>&1; then
	cat >"$TMP/prometheus.yml" <<YML
global:
  scrape_interval: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: gpufleet
    static_configs:
      - targets: ['127.0.0.1:$AP']
YML
	PP=""
	start_prometheus "$TMP/prometheus.yml"
	check agent-prometheus-start $? "$(tail -5 "$TMP/prom.log")"
	got=""
	i=0
	while [ -n "$PP" ] && [ $i -lt 60 ]; do
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
	[ -n "$PPID_" ] && kill "$PPID_" 2>/dev/null
	[ -n "$PPID_" ] && wait "$PPID_" 2>/dev/null
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
check agent-sigterm $? "rc=$rc $(grep -v debug "$TMP/agent.err")"
