#!/bin/sh
# The HTTP runtime (src/server/) for real: tests/tools/http_echo, a small
# service on it, on a loopback port the kernel picks (port 0, read back
# from its start line), driven by curl and by raw sockets (python3) where
# curl cannot misbehave enough: routes and JSON errors, the body cap
# (413 on a declared length before any body, a chunked body counted as it
# streams and cut past the drain limit), malformed JSON (400), the
# connection limit (a third client waits in the backlog until a slot
# frees), an idle connection closed by the timeout, SIGTERM while a
# request is in flight (it completes, exit 0, the port closes at once).
# Prints "ok|FAIL|skip integration/NAME" lines.
set -u
B=${1:-build}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
ECHO="$ROOT/$B/tests/http_echo"
TMP=$(mktemp -d)
PIDS=""
cleanup() {
	for p in $PIDS; do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
	rm -rf "$TMP"
}
trap cleanup EXIT

check() {
	if [ "$2" = 0 ]; then echo "ok integration/$1"; else
		echo "FAIL integration/$1"
		printf '%s\n' "$3" | head -20 | sed 's/^/    /'
	fi
}

if ! command -v curl >/dev/null 2>&1 || ! command -v python3 >/dev/null 2>&1; then
	echo "skip integration/server (curl or python3 absent)"
	exit 0
fi
if [ ! -x "$ECHO" ]; then
	echo "FAIL integration/server ($ECHO absent: make tests-build)"
	exit 0
fi

# Start http_echo with options "$@" logging to $TMP/$NAME.err; its port in
# PORT, its pid in PID ("" when it did not say its port within 10 s).
start() {
	name=$1
	shift
	: >"$TMP/$name.err" # before the child opens it: sed reads it at once
	"$ECHO" "$@" 2>"$TMP/$name.err" &
	PID=$!
	PIDS="$PIDS $PID"
	PORT=""
	i=0
	while [ $i -lt 100 ] && [ -z "$PORT" ]; do
		PORT=$(sed -n 's|.*listening on http://127\.0\.0\.1:\([0-9]*\)/$|\1|p' "$TMP/$name.err")
		kill -0 "$PID" 2>/dev/null || break
		i=$((i + 1))
		[ -z "$PORT" ] && sleep 0.1
	done
}

# Python on raw sockets: python3 - PORT ARGS << script
py() {
	python3 - "$@"
}

# 1. routes, methods and JSON errors; the body cap; malformed JSON
start main --body-max 1024
U="http://127.0.0.1:$PORT"
[ -n "$PORT" ] && [ "$PORT" != 0 ]
check server-listen-port-0 $? "$(cat "$TMP/main.err")"

out=$(curl -s -H 'Authorization: Bearer tok-9' "$U/v1/items/42?q=a%20b")
s=$(curl -s "$U/v1/items/stats")
h=$(curl -s -o /dev/null -w '%{http_code}' -X PATCH -D "$TMP/h405" "$U/v1/items/3")
n=$(curl -s -o "$TMP/b404" -w '%{http_code}' "$U/v1/nope")
printf '%s' "$out" | grep -q '"id": "42"' &&
	printf '%s' "$out" | grep -q '"q": "a b"' &&
	printf '%s' "$out" | grep -q '"token": "tok-9"' &&
	[ "$s" = '{"stats": true}' ] &&
	[ "$h" = 405 ] && grep -qi '^Allow: GET, HEAD, PUT, DELETE' "$TMP/h405" &&
	[ "$n" = 404 ] && grep -q '"error": "not-found"' "$TMP/b404"
check server-routes $? "$out / $s / 405? $h $(cat "$TMP/h405") / 404? $n"

c=$(curl -s -o "$TMP/b201" -w '%{http_code}' -X POST -D "$TMP/h201" \
	-H 'Content-Type: application/json' -d '{"name": "train"}' "$U/v1/items")
i=$(curl -s -o "$TMP/b422" -w '%{http_code}' -X POST -d '{"nom": 1}' "$U/v1/items")
m=$(curl -s -o "$TMP/b400" -w '%{http_code}' -X POST -d '{"name": ' "$U/v1/items")
[ "$c" = 201 ] && grep -qi '^Location: /v1/items/1' "$TMP/h201" &&
	[ "$i" = 422 ] && grep -q '"error": "invalid"' "$TMP/b422" &&
	[ "$m" = 400 ] && grep -q '"error": "malformed-json"' "$TMP/b400" &&
	grep -q '"detail": "line 1, column [0-9]*: ' "$TMP/b400"
check server-malformed-json-400 $? "201? $c 422? $i 400? $m: $(cat "$TMP/b400")"

head -c 2000 /dev/zero | tr '\0' a >"$TMP/2k"
l=$(curl -s -o "$TMP/b413" -w '%{http_code}' -X POST --data-binary @"$TMP/2k" "$U/v1/items")
k=$(curl -s -o "$TMP/b413c" -w '%{http_code}' -X POST -H 'Transfer-Encoding: chunked' \
	--data-binary @"$TMP/2k" "$U/v1/items")
[ "$l" = 413 ] && grep -q '"error": "body-too-large"' "$TMP/b413" &&
	grep -q 'a body of 2000 bytes; POST /v1/items takes at most 1024' "$TMP/b413" &&
	[ "$k" = 413 ] && grep -q 'more than 1024 bytes' "$TMP/b413c"
check server-body-cap-413 $? "declared: $l $(cat "$TMP/b413"); chunked: $k $(cat "$TMP/b413c")"

# the cap is checked as the body comes, not after: a declared 10 GB is
# refused at once with nothing sent; a chunked flood is cut, not stored
r=$(py "$PORT" <<'PY'
import socket, sys, time
port = int(sys.argv[1])
s = socket.create_connection(("127.0.0.1", port), timeout=5)
s.sendall(b"POST /v1/items HTTP/1.1\r\nHost: x\r\nContent-Length: 10000000000\r\n\r\n")
t = time.time()
ans = s.recv(4096).split(b"\r\n")[0].decode()
print("declared:", ans, "in %.1f s" % (time.time() - t))
s.close()
s = socket.create_connection(("127.0.0.1", port), timeout=5)
s.sendall(b"POST /v1/items HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n")
chunk = b"10000\r\n" + b"a" * 0x10000 + b"\r\n"
sent = 0
try:
    while sent < 8 << 20:
        s.sendall(chunk)
        sent += 0x10000
    print("chunked: not cut after", sent)
except OSError:
    print("chunked: cut after", sent)
PY
)
printf '%s\n' "$r" | grep -q '^declared: HTTP/1.1 413 .* in 0\.[0-9] s$' &&
	printf '%s\n' "$r" | grep -q '^chunked: cut after '
check server-body-cap-streaming $? "$r"

# 2-4 with a thread per connection, then with two event loops
for MODE in "" "--threads 2"; do
SUFFIX=""
[ -n "$MODE" ] && SUFFIX="-event-loops"
# 2. the connection limit: two idle clients hold both slots; a third
# waits in the kernel's backlog (no answer in 1 s) and is served once a
# slot frees
start limit --max-conns 2 --idle-timeout 30 $MODE
py "$PORT" >"$TMP/hold.out" <<'PY' &
import socket, sys, time
port = int(sys.argv[1])
a = [socket.create_connection(("127.0.0.1", port)) for _ in range(2)]
print("holding", flush=True)
time.sleep(3)
for s in a:
    s.close()
print("released", flush=True)
PY
HOLD=$!
i=0
while [ $i -lt 50 ] && ! grep -q holding "$TMP/hold.out"; do
	i=$((i + 1))
	sleep 0.1
done
sleep 0.3
w=$(curl -s -o /dev/null -w '%{http_code}' -m 1 "127.0.0.1:$PORT/v1/items/1")
wrc=$?
t0=$(date +%s)
g=$(curl -s -o /dev/null -w '%{http_code}' -m 10 "127.0.0.1:$PORT/v1/items/2")
t1=$(date +%s)
wait "$HOLD"
[ "$wrc" = 28 ] && [ "$g" = 200 ] && [ $((t1 - t0)) -ge 1 ]
check server-connection-limit$SUFFIX $? "third while full: rc=$wrc code=$w; later: $g after $((t1 - t0)) s; $(cat "$TMP/hold.out")"

# 3. an idle connection is closed by the timeout (1 s here)
start idle --idle-timeout 1 $MODE
r=$(py "$PORT" <<'PY'
import socket, sys, time
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=10)
t = time.time()
try:
    got = s.recv(100)
except OSError as e:
    got = str(e).encode()
print("closed after %.1f s: %r" % (time.time() - t, got))
PY
)
secs=$(printf '%s' "$r" | sed -n 's/^closed after \([0-9]*\)\.[0-9] s.*/\1/p')
[ -n "$secs" ] && [ "$secs" -ge 1 ] && [ "$secs" -le 4 ] &&
	printf '%s' "$r" | grep -q "b''$"
check server-idle-timeout$SUFFIX $? "$r"

# 4. SIGTERM while a request is in flight: it completes, the port closes
# at once, the process exits 0
start term $MODE
U="http://127.0.0.1:$PORT"
curl -s -m 10 -o "$TMP/slow.out" -w '%{http_code}' "$U/v1/slow?ms=1500" >"$TMP/slow.code" &
CURL=$!
sleep 0.5
kill -TERM "$PID"
sleep 0.2
late=$(curl -s -o /dev/null -w '%{http_code}' -m 2 "$U/v1/items/1")
laterc=$?
wait "$CURL"
wait "$PID"
rc=$?
[ "$rc" = 0 ] && [ "$(cat "$TMP/slow.code")" = 200 ] &&
	[ "$(cat "$TMP/slow.out")" = "slept 1500 ms" ] &&
	[ "$laterc" = 7 ] &&
	grep -q 'SIGTERM, stopping' "$TMP/term.err" && grep -q 'stopped' "$TMP/term.err"
check server-sigterm-in-flight$SUFFIX $? "exit $rc; in flight: $(cat "$TMP/slow.code") '$(cat "$TMP/slow.out")'; new request after SIGTERM: rc=$laterc code=$late; $(cat "$TMP/term.err")"
done
