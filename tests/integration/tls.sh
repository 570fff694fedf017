#!/bin/sh
# HTTPS end to end on loopback, with certificates openssl makes here: a
# CA, a server certificate for 127.0.0.1 and localhost, a client
# certificate as kube-scheduler's extender tlsConfig sends, and a client
# certificate of another CA.  `gpufleet serve --tls-cert --tls-key
# --client-ca --token-file --agents --k8s-extender` on a port the kernel
# picks; clients are gpufleet's own commands and curl.
#   tls-bad-files        a key that is not the certificate's, a CA file
#                        with no certificate: refused at start, named
#   tls-cli-ca           `gpufleet nodes/submit/jobs --ca` over https
#   tls-cli-no-ca        without --ca: refused with a certificate error
#   tls-plain-http       http:// to the https port gets no answer
#   tls-k8s-client-cert  /k8s/filter with the client certificate: 200
#   tls-k8s-refused      /k8s/filter and /k8s/bind without a certificate,
#                        or with one of another CA: 403, no job made (F11)
#   tls-agent-joins      an agent joins over https with --ca and its
#                        node token, and is ready
#   tls-token-in-clear   a token to a non-loopback http:// URL is refused
#                        by the CLI, the agent and `autoscale run` before
#                        any traffic, naming --insecure-http; an agent's
#                        unreadable --ca said at start
#   tls-serve-refusals   serve: tokens on a non-loopback address without
#                        TLS, --k8s-extender with tokens but no
#                        --client-ca, half a TLS pair: usage errors
# Prints "ok|FAIL|skip integration/NAME" lines.  Every process started
# is stopped by its PID.
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
export GPUFLEET_NVML_LIBRARY="$ROOT/$B/fake-nvml/libnvidia-ml.so.1"
export GPUFLEET_FAKE_NVML_FIXTURE="$ROOT/tests/fixtures/nvml/agent.nvml"
unset GPUFLEET_SERVER GPUFLEET_TOKEN_FILE GPUFLEET_CA

check() {
	if [ "$2" = 0 ]; then echo "ok integration/$1"; else
		echo "FAIL integration/$1"
		printf '%s\n' "$3" | head -20 | sed 's/^/    /'
	fi
}

for tool in openssl curl; do
	if ! command -v $tool >/dev/null 2>&1; then
		echo "skip integration/tls ($tool absent: scripts/install-deps.sh installs it)"
		exit 0
	fi
done

# ---- certificates ------------------------------------------------------
C=$TMP/certs
mkdir -p "$C"
# ca NAME: a self-signed CA
ca() {
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 \
		-nodes -keyout "$C/$1.key" -out "$C/$1.crt" -days 2 \
		-subj "/CN=gpufleet test $1" 2>>"$C/log"
}
# leaf NAME CA EXTENSIONS: a key and a certificate CA signs
leaf() {
	printf '%s\n' "$3" >"$C/$1.ext"
	openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
		-keyout "$C/$1.key" -out "$C/$1.csr" -subj "/CN=$1" \
		2>>"$C/log" &&
		openssl x509 -req -in "$C/$1.csr" -CA "$C/$2.crt" \
			-CAkey "$C/$2.key" -CAcreateserial -out "$C/$1.crt" \
			-days 2 -extfile "$C/$1.ext" 2>>"$C/log"
}
if ! { ca ca && ca rogue-ca &&
	leaf server ca "subjectAltName=IP:127.0.0.1,DNS:localhost
extendedKeyUsage=serverAuth" &&
	leaf kube-scheduler ca "extendedKeyUsage=clientAuth" &&
	leaf intruder rogue-ca "extendedKeyUsage=clientAuth"; }; then
	check tls-certificates 1 "$(cat "$C/log")"
	exit 0
fi

printf 'adminadminadmin0001 admin\nnodetlsnodetls0002 node:tls-a\n' >"$TMP/tokens"
printf 'adminadminadmin0001 admin\n' >"$TMP/admin.token"
printf 'nodetlsnodetls0002 node:tls-a\n' >"$TMP/node.token"
chmod 600 "$TMP/tokens" "$TMP/admin.token" "$TMP/node.token"

# ---- bad files ---------------------------------------------------------
out1=$("$BIN" serve --listen 127.0.0.1:0 --db "sqlite:$TMP/x/gf.db" \
	--tls-cert "$C/server.crt" --tls-key "$C/kube-scheduler.key" 2>&1)
rc1=$?
printf 'not a certificate\n' >"$TMP/empty-ca.pem"
out2=$("$BIN" serve --listen 127.0.0.1:0 --db "sqlite:$TMP/x/gf.db" \
	--tls-cert "$C/server.crt" --tls-key "$C/server.key" \
	--client-ca "$TMP/empty-ca.pem" 2>&1)
rc2=$?
[ "$rc1" = 1 ] && printf '%s' "$out1" | grep -q "is not the key of the certificate" &&
	[ "$rc2" = 1 ] && printf '%s' "$out2" | grep -q "\-\-client-ca '.*empty-ca.pem': no PEM certificate"
check tls-bad-files $? "rc=$rc1: $out1
rc=$rc2: $out2"

# ---- the server --------------------------------------------------------
"$BIN" serve --listen 127.0.0.1:0 --tick 20 --agents --k8s-extender \
	--k8s-api http://127.0.0.1:9 --db "sqlite:$TMP/s/gf.db" \
	--token-file "$TMP/tokens" --tls-cert "$C/server.crt" \
	--tls-key "$C/server.key" --client-ca "$C/ca.crt" 2>"$TMP/serve.err" &
SPID=$!
PIDS="$PIDS $SPID"
URL=""
for _ in $(seq 200); do
	URL=$(sed -n 's|^gpufleet serve: listening on \(https://[0-9.:]*\)/.*|\1|p' "$TMP/serve.err")
	[ -n "$URL" ] && break
	kill -0 "$SPID" 2>/dev/null || break
	sleep 0.05
done
if [ -z "$URL" ]; then
	check tls-serve 1 "serve did not start: $(cat "$TMP/serve.err")"
	exit 0
fi
PORT=${URL##*:}

# ---- an agent over https ------------------------------------------------
GPUFLEET_LOG=info "$BIN" agent --listen 127.0.0.1:0 --interval 200ms \
	--template pcie-l40s --no-nvml \
	--controller "$URL" --ca "$C/ca.crt" --name tls-a \
	--token-file "$TMP/node.token" --state-dir "$TMP/agent-state" \
	2>"$TMP/agent.err" &
APID=$!
PIDS="$PIDS $APID"
state=""
for _ in $(seq 300); do
	state=$("$BIN" nodes --server "$URL" --token-file "$TMP/admin.token" \
		--ca "$C/ca.crt" --json 2>&1)
	printf '%s' "$state" | grep -q '"name": *"tls-a"' &&
		printf '%s' "$state" | grep -q '"state": *"ready"' && break
	kill -0 "$APID" 2>/dev/null || break
	sleep 0.1
done
printf '%s' "$state" | grep -q '"name": *"tls-a"' &&
	printf '%s' "$state" | grep -q '"state": *"ready"'
check tls-agent-joins $? "nodes: $state
agent: $(tail -5 "$TMP/agent.err")"

# ---- the CLI -----------------------------------------------------------
out=$("$BIN" nodes --server "$URL" --token-file "$TMP/admin.token" \
	--ca "$C/ca.crt" --json 2>&1)
rc=$?
id=$("$BIN" submit --server "$URL" --token-file "$TMP/admin.token" \
	--ca "$C/ca.crt" --gpus 1 -- true 2>&1 | awk '{print $1}')
got=$("$BIN" jobs --server "$URL" --token-file "$TMP/admin.token" \
	--ca "$C/ca.crt" --json "$id" 2>&1)
[ "$rc" = 0 ] && printf '%s' "$out" | grep -q '"nodes"' &&
	printf '%s' "$got" | grep -q "\"id\": *\"$id\""
check tls-cli-ca $? "nodes rc=$rc: $out
submit: $id
jobs: $got"

# localhost is in the certificate too, and GPUFLEET_CA stands for --ca
out=$(GPUFLEET_CA="$C/ca.crt" "$BIN" nodes --server "https://localhost:$PORT" \
	--token-file "$TMP/admin.token" --json 2>&1)
rc=$?
out2=$("$BIN" nodes --server "$URL" --token-file "$TMP/admin.token" 2>&1)
rc2=$?
[ "$rc" = 0 ] && [ "$rc2" = 1 ] &&
	printf '%s' "$out2" | grep -q "the server's certificate is not trusted" &&
	printf '%s' "$out2" | grep -q -- "--ca FILE"
check tls-cli-no-ca $? "with GPUFLEET_CA rc=$rc: $out
without --ca rc=$rc2: $out2"

out=$("$BIN" nodes --server "http://127.0.0.1:$PORT" \
	--token-file "$TMP/admin.token" 2>&1)
rc=$?
code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 5 \
	"http://127.0.0.1:$PORT/healthz")
[ "$rc" = 1 ] && [ "$code" = 000 ]
check tls-plain-http $? "gpufleet rc=$rc: $out; curl http:// status $code"

# ---- /k8s: kube-scheduler's client certificate (F11) --------------------
POD='{"metadata":{"name":"p","namespace":"ml","uid":"u-1"},"spec":{"containers":[{"name":"c","resources":{"limits":{"nvidia.com/gpu":"1"}}}]},"status":{"phase":"Pending"}}'
k8s() { # k8s VERB BODY [CURL ARGS...]: the status, body in $TMP/k8s.out
	verb=$1 body=$2
	shift 2
	curl -s -o "$TMP/k8s.out" -w '%{http_code}' --max-time 10 \
		--cacert "$C/ca.crt" "$@" -H 'Content-Type: application/json' \
		-d "$body" "$URL/k8s/$verb"
}
ARGS="{\"Pod\":$POD,\"Nodes\":null,\"NodeNames\":[\"none\"]}"
s1=$(k8s filter "$ARGS" --cert "$C/kube-scheduler.crt" --key "$C/kube-scheduler.key")
b1=$(cat "$TMP/k8s.out")
check tls-k8s-client-cert "$([ "$s1" = 200 ] && printf '%s' "$b1" | grep -q '"FailedAndUnresolvableNodes"'; echo $?)" \
	"filter with the client certificate: $s1 $b1"

BIND='{"PodName":"p","PodNamespace":"ml","PodUID":"u-1","Node":"tls-a"}'
s2=$(k8s filter "$ARGS")
b2=$(cat "$TMP/k8s.out")
s3=$(k8s bind "$BIND")
s4=$(k8s bind "$BIND" --cert "$C/intruder.crt" --key "$C/intruder.key")
b4=$(cat "$TMP/k8s.out")
s5=$(k8s bind "$BIND" -H 'Authorization: Bearer adminadminadmin0001')
jobs=$("$BIN" jobs --server "$URL" --token-file "$TMP/admin.token" \
	--ca "$C/ca.crt" --json 2>&1)
n=$(printf '%s' "$jobs" | grep -o '"id"' | wc -l)
[ "$s2" = 403 ] && printf '%s' "$b2" | grep -q "no client certificate" &&
	[ "$s3" = 403 ] && [ "$s4" = 403 ] && [ "$s5" = 403 ] &&
	printf '%s' "$b4" | grep -q "does not verify" && [ "$n" = 1 ]
check tls-k8s-refused $? "filter without certificate: $s2 $b2
bind without: $s3; with another CA's: $s4 $b4; with a bearer token: $s5
jobs ($n, want 1, the CLI's): $jobs"

# ---- tokens in clear ----------------------------------------------------
# a host that is not loopback: refused before any traffic (the name is
# never resolved), naming the flag that would allow it
FAR=http://gpu-controller.invalid:9500
o1=$("$BIN" nodes --server "$FAR" --token-file "$TMP/admin.token" 2>&1)
r1=$?
o2=$("$BIN" agent --listen 127.0.0.1:0 --controller "$FAR" --name tls-b \
	--token-file "$TMP/node.token" --state-dir "$TMP/agent-b" 2>&1)
r2=$?
printf 'apiVersion: autoscaling/v2\nkind: HorizontalPodAutoscaler\nmetadata: {name: x}\nspec:\n  minReplicas: 1\n  maxReplicas: 4\n  scaleTargetRef: {kind: Deployment, name: x}\n  metrics:\n  - type: External\n    external:\n      metric: {name: q}\n      target: {type: AverageValue, averageValue: "4"}\n' >"$TMP/hpa.yaml"
o3=$("$BIN" autoscale run --source "$FAR" --hpa "$TMP/hpa.yaml" \
	--dry-run --count 1 --token-file "$TMP/admin.token" 2>&1)
r3=$?
# an agent whose --ca cannot be read: said at start
o6=$("$BIN" agent --listen 127.0.0.1:0 --controller "$URL" --name tls-c \
	--ca "$TMP/absent.crt" --token-file "$TMP/node.token" \
	--state-dir "$TMP/agent-c" 2>&1)
r6=$?
# with --insecure-http the CLI goes on (and fails to resolve the name)
o4=$("$BIN" nodes --server "$FAR" --token-file "$TMP/admin.token" \
	--insecure-http 2>&1)
r4=$?
# loopback http with a token stays allowed
o5=$("$BIN" nodes --server "http://127.0.0.1:9" --token-file "$TMP/admin.token" 2>&1)
[ "$r1" = 2 ] && [ "$r2" = 2 ] && [ "$r3" = 2 ] && [ "$r4" = 1 ] &&
	printf '%s' "$o1" | grep -q "insecure-http" &&
	printf '%s' "$o2" | grep -q "insecure-http" &&
	printf '%s' "$o3" | grep -q "insecure-http" &&
	printf '%s' "$o4" | grep -q "cannot resolve" &&
	[ "$r6" = 2 ] && printf '%s' "$o6" | grep -q "cannot read --ca '.*absent.crt'" &&
	! printf '%s' "$o5" | grep -q "insecure-http"
check tls-token-in-clear $? "nodes rc=$r1: $o1
agent rc=$r2: $o2
autoscale rc=$r3: $o3
nodes --insecure-http rc=$r4: $o4
agent with an unreadable --ca rc=$r6: $o6
loopback: $o5"

# ---- serve's refusals ---------------------------------------------------
o1=$("$BIN" serve --listen 0.0.0.0:0 --db "sqlite:$TMP/y/gf.db" \
	--token-file "$TMP/tokens" 2>&1)
r1=$?
o2=$("$BIN" serve --listen 127.0.0.1:0 --db "sqlite:$TMP/y/gf.db" \
	--token-file "$TMP/tokens" --k8s-extender 2>&1)
r2=$?
o3=$("$BIN" serve --listen 127.0.0.1:0 --db "sqlite:$TMP/y/gf.db" \
	--tls-cert "$C/server.crt" 2>&1)
r3=$?
o4=$("$BIN" serve --listen 127.0.0.1:0 --db "sqlite:$TMP/y/gf.db" \
	--client-ca "$C/ca.crt" 2>&1)
r4=$?
[ "$r1" = 2 ] && printf '%s' "$o1" | grep -q "insecure-http" &&
	[ "$r2" = 2 ] && printf '%s' "$o2" | grep -q "\-\-client-ca" &&
	[ "$r3" = 2 ] && printf '%s' "$o3" | grep -q "go together" &&
	[ "$r4" = 2 ] && printf '%s' "$o4" | grep -q "needs --tls-cert"
check tls-serve-refusals $? "0.0.0.0 with tokens rc=$r1: $o1
k8s with tokens, no client CA rc=$r2: $o2
cert without key rc=$r3: $o3
client CA alone rc=$r4: $o4"
