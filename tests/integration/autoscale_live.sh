#!/bin/sh
# The live loop against real peers on loopback ports the kernel picks:
#   autoscale-live-controller  `gpufleet serve` with one 8-GPU node and
#                              five 8-GPU jobs (one runs, four wait): the
#                              loop reads gpufleet_queue_pending_jobs from
#                              its /metrics (4) and decides as the HPA
#                              would (AverageValue 1: 1 -> 4)
#   autoscale-live-down        a page served then stopped: while the source
#                              is down every sync is "down" and the count
#                              stays (no scale-down); when it comes back
#                              with 0, the count falls (behavior with a
#                              0 s scale-down window)
#   autoscale-live-service     the loop acting on the controller: an
#                              inference service's replica count set from
#                              the controller's queue, its jobs following
#                              (ready,unready columns: its running and
#                              pending jobs)
#                              (and, with the controller down, the loop
#                              going on, saying so, changing nothing)
#   autoscale-live-two-metrics an HPA of two metrics on one page (the
#                              second by its name and selector): the
#                              larger decides; the second unread holds a
#                              scale-down, not a scale-up
#   autoscale-live-prometheus  Debian's Prometheus scraping that page, the
#                              loop reading it through /api/v1/query (and
#                              the two-metric HPA: a query built from the
#                              second's name and selector, or a --query)
# Every process started here is stopped by its PID.  Prints "ok|FAIL|skip
# integration/NAME" lines.
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
export GPUFLEET_NVML_LIBRARY=/nonexistent/libnvidia-ml.so.1

check() {
	if [ "$2" = 0 ]; then echo "ok integration/$1"; else
		echo "FAIL integration/$1"
		printf '%s\n' "$3" | head -20 | sed 's/^/    /'
	fi
}

free_port() {
	python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

hpa() { # FILE TARGET [behavior yaml]
	cat >"$1" <<HPAEOF
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {name: llm}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: llm}
  minReplicas: 1
  maxReplicas: 20
  metrics:
  - type: External
    external:
      metric: {name: gpufleet_queue_pending_jobs}
      target: {type: AverageValue, averageValue: "$2"}
${3:-}
HPAEOF
}

if ! command -v python3 >/dev/null 2>&1 || ! command -v curl >/dev/null 2>&1; then
	echo "skip integration/autoscale-live (python3 or curl absent)"
	exit 0
fi

# 1. the controller's own /metrics
cat >"$TMP/serve.yaml" <<'CFG'
open_teams: true
pools:
  - {name: h, nodes: 1, model: h100-80gb, gpus: 8, cpu_milli: 96000, memory_mib: 1048576}
CFG
"$BIN" serve --listen 127.0.0.1:0 --config "$TMP/serve.yaml" \
	--db "sqlite:$TMP/state.db" 2>"$TMP/serve.err" &
PIDS="$PIDS $!"
url=""
i=0
while [ $i -lt 100 ] && [ -z "$url" ]; do
	url=$(sed -n 's|^gpufleet serve: listening on \(http://[0-9.:]*\)/.*|\1|p' "$TMP/serve.err" 2>/dev/null)
	i=$((i + 1))
	sleep 0.1
done
if [ -z "$url" ]; then
	check autoscale-live-controller 1 "serve did not start: $(cat "$TMP/serve.err")"
else
	for k in 1 2 3 4 5; do
		curl -s -m 5 -X POST "$url/v1/jobs" \
			-d '{"team": "speech", "gpus": 8, "command": "true"}' >/dev/null
	done
	sleep 0.5
	hpa "$TMP/hpa1.yaml" 1
	"$BIN" autoscale run --source "$url" --hpa "$TMP/hpa1.yaml" --dry-run \
		--count 2 --interval 1 >"$TMP/run1.out" 2>"$TMP/run1.err"
	got=$(sed -n 2p "$TMP/run1.out")
	[ "$got" = "0.000,4,4,computed" ]
	check autoscale-live-controller $? "first sync '$got' (want 0.000,4,4,computed)
$(cat "$TMP/run1.out" "$TMP/run1.err")
$(curl -s "$url/metrics" | grep pending_jobs)"
fi

# 2. a source that goes down, then comes back with 0
mkdir -p "$TMP/www"
printf '# TYPE gpufleet_queue_pending_jobs gauge\ngpufleet_queue_pending_jobs{class="inference",team="a"} 40\n' \
	>"$TMP/www/metrics"
port=$(free_port)
(cd "$TMP/www" && exec python3 -m http.server "$port" --bind 127.0.0.1) \
	>/dev/null 2>&1 &
web=$!
PIDS="$PIDS $web"
i=0
until curl -sf "http://127.0.0.1:$port/metrics" >/dev/null || [ $i -gt 50 ]; do
	i=$((i + 1))
	sleep 0.1
done
hpa "$TMP/hpa2.yaml" 5 "  behavior:
    scaleDown: {stabilizationWindowSeconds: 0}"
"$BIN" autoscale run --source "127.0.0.1:$port" --class inference \
	--hpa "$TMP/hpa2.yaml" --dry-run --count 120 --interval 1 \
	>"$TMP/run2.out" 2>"$TMP/run2.err" &
loop=$!
PIDS="$PIDS $loop"
# each step waits for what the loop printed (one line a sync), not for
# a time: the peak, then two syncs with the source down, then a fall
# once it is back with 0; 120 syncs at most
until_line() { # ERE: true once a line of run2.out matches it
	while kill -0 "$loop" 2>/dev/null; do
		grep -Eq "$1" "$TMP/run2.out" 2>/dev/null && return 0
		sleep 0.2
	done
	grep -Eq "$1" "$TMP/run2.out"
}
until_line ',40,5,'
kill "$web"
wait "$web" 2>/dev/null
until_line ',down,' && until [ "$(grep -c ',down,' "$TMP/run2.out")" -ge 2 ] ||
	! kill -0 "$loop" 2>/dev/null; do
	sleep 0.2
done
printf '# TYPE gpufleet_queue_pending_jobs gauge\n' >"$TMP/www/metrics"
(cd "$TMP/www" && exec python3 -m http.server "$port" --bind 127.0.0.1) \
	>/dev/null 2>&1 &
PIDS="$PIDS $!"
until_line ',0,[1-4],'
kill "$loop" 2>/dev/null
wait "$loop"
# up: 1 -> 5 (4 pods per 15 s); down: the count kept; back at 0: to 1
awk -F, 'NR > 1 {
	if ($2 == "down") { downs++; if ($3 != last) bad = "down changed " last " to " $3 }
	else if (downs && $2 == 0) { back = 1; if ($3 < last) fell = 1 }
	else if (!downs) peak = $3
	last = $3
}
END {
	if (peak != 5) bad = bad " peak " peak
	if (downs < 2) bad = bad " only " downs " down syncs"
	if (!back || !fell) bad = bad " no fall after the source came back"
	if (bad) { print bad; exit 1 }
}' "$TMP/run2.out" >"$TMP/run2.why"
check autoscale-live-down $? "$(cat "$TMP/run2.why" "$TMP/run2.out" "$TMP/run2.err")"

# 2b. acting on the controller: an inference service whose replica count
# the loop sets (PUT /v1/services/NAME/replicas) from the controller's
# queue (4 waiting 8-GPU jobs, AverageValue 1: 4 replicas); the
# controller then keeps 4 jobs of the service alive, and the count back
# to 1 cancels the surplus
svc_live() { # the service's jobs running or pending
	curl -s -m 5 "$url/v1/services/chat" |
		python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["replicas"], d["running"] + d["pending"])'
}
if [ -n "$url" ]; then
	st=$(curl -s -m 5 -o "$TMP/svc.json" -w '%{http_code}' -X PUT \
		"$url/v1/services/chat" -d '{"replicas": 1, "job": {"class": "inference", "cpu_milli": 100, "memory_mib": 64, "command": "serve"}}')
	bad=$(curl -s -m 5 -o /dev/null -w '%{http_code}' -X PUT \
		"$url/v1/services/chat" -d '{"replicas": -1, "job": {}}')
	none=$(curl -s -m 5 -o /dev/null -w '%{http_code}' -X PUT \
		"$url/v1/services/nope/replicas" -d '{"replicas": 2}')
	"$BIN" autoscale run --source "$url" --hpa "$TMP/hpa1.yaml" \
		--service chat --count 2 --interval 1 >"$TMP/run4.out" 2>"$TMP/run4.err"
	i=0
	until [ "$(svc_live)" = "4 4" ] || [ $i -gt 50 ]; do
		i=$((i + 1))
		sleep 0.1
	done
	got=$(svc_live)
	curl -s -m 5 -X PUT "$url/v1/services/chat/replicas" -d '{"replicas": 1}' >/dev/null
	i=0
	until [ "$(svc_live)" = "1 1" ] || [ $i -gt 50 ]; do
		i=$((i + 1))
		sleep 0.1
	done
	down=$(svc_live)
	# the loop acting on a controller that is down goes on, changing
	# nothing, and says why
	"$BIN" autoscale run --source "$url" --hpa "$TMP/hpa1.yaml" \
		--service chat --controller http://127.0.0.1:1 --count 2 \
		--interval 1 >"$TMP/run5.out" 2>"$TMP/run5.err"
	rc5=$?
	gone=$(grep -c ',controller-unavailable,' "$TMP/run5.out")
	after=$(svc_live)
	[ "$st" = 200 ] && [ $rc5 = 0 ] && [ "$gone" = 2 ] &&
		[ "$after" = "1 1" ] &&
		grep -q 'cannot act: cannot GET http://127.0.0.1:1/v1/services/chat' "$TMP/run5.err" &&
		[ "$bad" = 400 ] && [ "$none" = 404 ] &&
		[ "$got" = "4 4" ] && [ "$down" = "1 1" ] &&
		[ "$(sed -n 1p "$TMP/run4.out")" = "# t_s,metric,replicas,reason,ready,unready" ] &&
		grep -Eq '^0\.000,[0-9.]+,[0-9]+,[a-z-]+,[0-9]+,[0-9]+$' "$TMP/run4.out"
	check autoscale-live-service $? "PUT $st (bad $bad, unknown $none); after the loop '$got' (want 4 4), after scaling to 1 '$down';
controller down: rc $rc5, $gone syncs said so, after '$after'
$(cat "$TMP/run4.out" "$TMP/run4.err" "$TMP/run5.out" "$TMP/run5.err" "$TMP/svc.json")"
fi

# 2c. an HPA of two metrics, each read from the same page (--path /two):
# the queue by the command line, llm_kv_waiting by its metric.name and
# selector (model=a; model=b's 1000 is not its series).  10 / 5 -> 2 and
# 40 / 10 -> 4: the larger, 4.  With llm_kv_waiting off the page (unread)
# at 4 replicas the queue's 2 is a scale-down: held (no-metric), though
# the 0 s scale-down window would let it fall; at 1 replica the queue's 2
# is a scale-up: taken.  Both read again (kv 10 -> 1): down to 2.  One
# sync per run: nothing waits on time
cat >"$TMP/hpa3.yaml" <<'HPAEOF'
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {name: llm}
spec:
  minReplicas: 1
  maxReplicas: 20
  metrics:
  - type: External
    external:
      metric: {name: gpufleet_queue_pending_jobs}
      target: {type: AverageValue, averageValue: "5"}
  - type: External
    external:
      metric:
        name: llm_kv_waiting
        selector: {matchLabels: {model: a}}
      target: {type: AverageValue, averageValue: "10"}
  behavior:
    scaleDown: {stabilizationWindowSeconds: 0}
HPAEOF
two() { # KV-LINES START [--json]: the one sync's line
	printf '# TYPE gpufleet_queue_pending_jobs gauge\ngpufleet_queue_pending_jobs{class="inference"} 10\n%s' "$1" \
		>"$TMP/www/two"
	"$BIN" autoscale run --source "127.0.0.1:$port" --path /two \
		--hpa "$TMP/hpa3.yaml" --dry-run --count 1 --start-replicas "$2" \
		${3:-} 2>>"$TMP/two.err" | sed -n "${4:-2}p"
}
kv='# TYPE llm_kv_waiting gauge
llm_kv_waiting{model="a"} 40
llm_kv_waiting{model="b"} 1000
'
t1=$(two "$kv" 1)
t2=$(two "" 4)
t3=$(two "" 1)
t4=$(two "llm_kv_waiting{model=\"a\"} 10
" 4)
tj=$(two "" 4 --json 1)
hd=$(two "$kv" 1 "" 1)
[ "$hd" = "# t_s,metric,replicas,reason,metric2" ] &&
	[ "$t1" = "0.000,10,4,computed,40" ] &&
	[ "$t2" = "0.000,10,4,no-metric,-" ] &&
	[ "$t3" = "0.000,10,2,computed,-" ] &&
	[ "$t4" = "0.000,10,2,computed,10" ] &&
	[ "$tj" = '{"t_s": 0.000, "metric": 10, "replicas": 4, "reason": "no-metric", "metrics": [10, null]}' ] &&
	grep -q "metric unavailable: metrics\[1\]: metric 'llm_kv_waiting' is not on the page: the others may scale up, never down" "$TMP/two.err"
check autoscale-live-two-metrics $? "header '$hd'
both read '$t1' (want 0.000,10,4,computed,40)
kv unread at 4 '$t2' (want 0.000,10,4,no-metric,-)
kv unread at 1 '$t3' (want 0.000,10,2,computed,-)
kv 10 at 4 '$t4' (want 0.000,10,2,computed,10)
json '$tj'
$(cat "$TMP/two.err")"

# 3. Prometheus in between
if ! command -v prometheus >/dev/null 2>&1; then
	echo "skip integration/autoscale-live-prometheus (prometheus absent)"
	exit 0
fi
printf '# TYPE gpufleet_queue_pending_jobs gauge\ngpufleet_queue_pending_jobs{class="inference",team="a"} 12\ngpufleet_queue_pending_jobs{class="batch",team="a"} 30\n# TYPE llm_kv_waiting gauge\nllm_kv_waiting{model="a"} 40\nllm_kv_waiting{model="b"} 1000\n' \
	>"$TMP/www/metrics"
pport=$(free_port)
cat >"$TMP/prometheus.yml" <<PROM
global: {scrape_interval: 1s, evaluation_interval: 1s}
scrape_configs:
  - job_name: gpufleet
    static_configs: [{targets: ['127.0.0.1:$port']}]
PROM
prometheus --config.file="$TMP/prometheus.yml" --storage.tsdb.path="$TMP/prom" \
	--web.listen-address="127.0.0.1:$pport" >"$TMP/prom.log" 2>&1 &
PIDS="$PIDS $!"
q='sum(gpufleet_queue_pending_jobs{class="inference"})'
i=0
until curl -s "http://127.0.0.1:$pport/api/v1/query" --data-urlencode "query=$q" 2>/dev/null |
	grep -q '"12"' || [ $i -gt 300 ]; do
	i=$((i + 1))
	sleep 0.1
done
"$BIN" autoscale run --source "http://127.0.0.1:$pport" --query "$q" \
	--hpa "$TMP/hpa2.yaml" --dry-run --count 1 >"$TMP/run3.out" 2>"$TMP/run3.err"
got=$(sed -n 2p "$TMP/run3.out")
# the two-metric HPA through Prometheus: the second metric's query built
# from its name and selector (sum(llm_kv_waiting{model="a"}): 40 -> 4
# beats 12 -> 3), or given by a second --query (sum over both models:
# 1040 -> 104, the default scale-up policies allow 1 + 4 = 5)
kq='sum(llm_kv_waiting{model="a"})'
i=0
until curl -s "http://127.0.0.1:$pport/api/v1/query" --data-urlencode "query=$kq" 2>/dev/null |
	grep -q '"40"' || [ $i -gt 300 ]; do
	i=$((i + 1))
	sleep 0.1
done
"$BIN" autoscale run --source "http://127.0.0.1:$pport" --query "$q" \
	--hpa "$TMP/hpa3.yaml" --dry-run --count 1 >"$TMP/run6.out" 2>"$TMP/run6.err"
"$BIN" autoscale run --source "http://127.0.0.1:$pport" --query "$q" \
	--query 'sum(llm_kv_waiting)' --hpa "$TMP/hpa3.yaml" --dry-run \
	--count 1 >"$TMP/run7.out" 2>"$TMP/run7.err"
got6=$(sed -n 2p "$TMP/run6.out")
got7=$(sed -n 2p "$TMP/run7.out")
[ "$got" = "0.000,12,3,computed" ] && [ "$got6" = "0.000,12,4,computed,40" ] &&
	[ "$got7" = "0.000,12,5,computed,1040" ]
check autoscale-live-prometheus $? "got '$got' (want 0.000,12,3,computed)
two metrics: '$got6' (want 0.000,12,4,computed,40), '$got7' (want 0.000,12,5,computed,1040)
$(cat "$TMP/run3.out" "$TMP/run3.err" "$TMP/run6.out" "$TMP/run6.err" "$TMP/run7.out" "$TMP/run7.err")"
