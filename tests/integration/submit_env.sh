#!/bin/sh
# Issue 21's "Environment and user" and "Time and shapes" end to end: a
# controller (`gpufleet serve --agents`) and two agents on the fake NVML
# on loopback, jobs submitted with `gpufleet submit`, and what the job's
# process really got read from files it writes.
#   submit-time          --time 1:00:00 gives max_runtime_s 3600
#   submit-env-workdir   --env and --chdir reach the process (PWD too);
#                        the GPU variables are the node's
#   submit-export-env    --export-env passes this shell's variables but
#                        the secret-looking ones
#   submit-user          a token's user:LOGIN runs the job as LOGIN (id
#                        -un, HOME, USER, LOGNAME), in its home by default
#   submit-default-user  a job without a user runs as the agent's
#                        --default-user
#   submit-root-refused  without allow_root: a job that would run as root
#                        waits with the reason, never run; a token whose
#                        user is root is refused at submit
#   submit-unknown-user  a user the node does not know: that start fails
#                        with the reason, never a failure of the job
#   submit-cancel-number `gpufleet cancel 13` cancels j13
# The user checks need root and useradd (a throwaway user, removed at the
# end): skipped without.  Prints "ok|FAIL|skip integration/NAME" lines;
# every process started is stopped by its PID.
set -u
B=${1:-build}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BIN="$ROOT/$B/gpufleet"
TMP=$(mktemp -d)
chmod 755 "$TMP" # the job's user reaches its directory under it
PIDS=""
U=""
cleanup() {
	for p in $PIDS; do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
	[ -n "$U" ] && userdel "$U" 2>/dev/null
	rm -rf "$TMP"
}
trap cleanup EXIT
export GPUFLEET_NVML_LIBRARY="$ROOT/$B/fake-nvml/libnvidia-ml.so.1"
export GPUFLEET_FAKE_NVML_FIXTURE="$ROOT/tests/fixtures/nvml/hgx-h100.nvml"
unset GPUFLEET_SERVER GPUFLEET_TOKEN_FILE GPUFLEET_CA

check() {
	if [ "$2" = 0 ]; then echo "ok integration/$1"; else
		echo "FAIL integration/$1"
		printf '%s\n' "$3" | head -20 | sed 's/^/    /'
	fi
}
skip() { echo "skip integration/$1 ($2)"; }

# a throwaway user whose home is $TMP/home (root and useradd only)
W="$TMP/home"
mkdir -p "$W"
if [ "$(id -u)" = 0 ] && command -v useradd >/dev/null 2>&1; then
	U="gfsub$$"
	if useradd -M -d "$W" -s /bin/sh "$U" 2>"$TMP/useradd.err"; then
		chown "$U" "$W"
	else
		U=""
	fi
fi
WHY_NO_USER="needs root and useradd"

tok() { printf '%s\n' "$1" >"$TMP/$2.token" && chmod 600 "$TMP/$2.token"; }
{
	echo "adminadminadmin0001 admin"
	echo "visionvisionvis0002 team:vision"
	[ -n "$U" ] && echo "useruseruseruse0003 team:vision user:$U"
	echo "nobodynobodynob0004 team:vision user:gf-no-such-user-21"
	echo "rootrootrootroo0005 team:vision user:root"
	echo "nodenodenodenod0006 node:n1"
	echo "nodenodenodenod0007 node:n2"
} >"$TMP/tokens"
chmod 600 "$TMP/tokens"
tok "adminadminadmin0001 admin" admin
tok "visionvisionvis0002 team:vision" vision
tok "useruseruseruse0003 team:vision" user
tok "nobodynobodynob0004 team:vision" nouser
tok "rootrootrootroo0005 team:vision" root
tok "nodenodenodenod0006 node:n1" n1
tok "nodenodenodenod0007 node:n2" n2
# no allow_root (the default), but where jobs can only run as root here
printf 'agents:\n  heartbeat_s: 1\n  kill_grace_s: 1\n' >"$TMP/serve.yaml"
[ "$(id -u)" = 0 ] && [ -z "$U" ] && echo "allow_root: true" >>"$TMP/serve.yaml"

"$BIN" serve --listen 127.0.0.1:0 --tick 20 --agents \
	--db "sqlite:$TMP/s/gf.db" --config "$TMP/serve.yaml" \
	--token-file "$TMP/tokens" 2>"$TMP/serve.err" &
PIDS="$PIDS $!"
URL=""
for _ in $(seq 200); do
	URL=$(sed -n 's|^gpufleet serve: listening on \(http://[0-9.:]*\)/.*|\1|p' "$TMP/serve.err")
	[ -n "$URL" ] && break
	sleep 0.05
done
if [ -z "$URL" ]; then
	check submit-serve 1 "serve did not start: $(cat "$TMP/serve.err")"
	exit 0
fi
# n1: no default user (the agent's own: root here, refused); n2 runs a
# job without a user as $U
agent() {
	name=$1
	shift
	"$BIN" agent --listen 127.0.0.1:0 --interval 200ms \
		--template hgx-h100 --controller "$URL" --name "$name" \
		--token-file "$TMP/$name.token" --state-dir "$TMP/$name" \
		--label "pool=$name" "$@" 2>"$TMP/$name.err" &
	PIDS="$PIDS $!"
}
agent n1
if [ -n "$U" ]; then agent n2 --default-user "$U"; else agent n2; fi
ready=""
for _ in $(seq 300); do
	ready=$("$BIN" nodes --server "$URL" --token-file "$TMP/admin.token" \
		--json 2>&1 | grep -c '"state": *"ready"')
	[ "$ready" = 2 ] && break
	sleep 0.1
done
if [ "$ready" != 2 ]; then
	check submit-agents 1 "agents not ready: $(tail -3 "$TMP/n1.err" "$TMP/n2.err")"
	exit 0
fi

# sub TOKEN ARGS...: the job's id (the submit's output in $TMP/sub.out)
sub() {
	t=$1
	shift
	"$BIN" submit --server "$URL" --token-file "$TMP/$t.token" "$@" \
		>"$TMP/sub.out" 2>&1
	awk '{print $1}' "$TMP/sub.out"
}
job() { "$BIN" jobs --server "$URL" --token-file "$TMP/admin.token" --json "$1" 2>&1; }
# wait_job ID REGEX: the job's JSON once it matches (else the last seen)
wait_job() {
	for _ in $(seq 150); do
		j=$(job "$1")
		printf '%s' "$j" | grep -Eq "$2" && break
		sleep 0.1
	done
	printf '%s' "$j"
}
# wait_file PATH: 0 once it has a line (the jobs write a temporary and
# rename it, so what is there is whole)
wait_file() {
	for _ in $(seq 300); do
		[ -s "$1" ] && return 0
		sleep 0.1
	done
	return 1
}

# ---- --time ------------------------------------------------------------
id=$(sub admin --gpus 1 --time 1:00:00 --selector pool=n2 -- sleep 0)
j=$(job "$id")
printf '%s' "$j" | grep -q '"max_runtime_s": 3600'
check submit-time $? "submit: $(cat "$TMP/sub.out")
job: $j"

# ---- env, workdir ------------------------------------------------------
# as $U on n2 (its default user) where there is one, else as this user
mkdir -p "$W/run"
[ -n "$U" ] && chown "$U" "$W/run"
id=$(sub vision --gpus 1 --selector pool=n2 --env "FOO=bar baz" \
	--env "QUOTE=it's \"x\"" --chdir "$W/run" -- 'env > env.tmp && mv env.tmp env.txt')
wait_file "$W/run/env.txt"
e=$(cat "$W/run/env.txt" 2>/dev/null)
printf '%s\n' "$e" | grep -qx 'FOO=bar baz' &&
	printf '%s\n' "$e" | grep -qx "QUOTE=it's \"x\"" &&
	printf '%s\n' "$e" | grep -qx "PWD=$W/run" &&
	printf '%s\n' "$e" | grep -q '^CUDA_VISIBLE_DEVICES=.' &&
	printf '%s\n' "$e" | grep -qx "GPUFLEET_JOB_ID=$id" &&
	job "$id" | grep -q "\"workdir\": \"$W/run\""
check submit-env-workdir $? "submit: $(cat "$TMP/sub.out")
env: $e
job: $(job "$id")"

# ---- --export-env --------------------------------------------------------
mkdir -p "$W/exp"
[ -n "$U" ] && chown "$U" "$W/exp"
id=$(GF_TEST_PLAIN="plain value" GF_TEST_TOKEN=hush MY_API_KEY=hush \
	CUDA_VISIBLE_DEVICES=7 sub vision --gpus 1 --selector pool=n2 \
	--export-env --chdir "$W/exp" -- 'env > env.tmp && mv env.tmp env.txt')
wait_file "$W/exp/env.txt"
e=$(cat "$W/exp/env.txt" 2>/dev/null)
printf '%s\n' "$e" | grep -qx 'GF_TEST_PLAIN=plain value' &&
	! printf '%s\n' "$e" | grep -q 'GF_TEST_TOKEN\|MY_API_KEY' &&
	! printf '%s\n' "$e" | grep -qx 'CUDA_VISIBLE_DEVICES=7'
check submit-export-env $? "submit: $(cat "$TMP/sub.out")
env: $e"

if [ -z "$U" ]; then
	for t in submit-user submit-default-user submit-root-refused \
		submit-unknown-user; do skip "$t" "$WHY_NO_USER"; done
else
	# ---- the token's user, in its home -----------------------------
	# shellcheck disable=SC2016 # expanded by the job's shell
	id=$(sub user --gpus 1 --selector pool=n1 -- \
		'{ id -un; echo "$HOME $USER $LOGNAME"; pwd; } > who.tmp; mv who.tmp who.txt')
	wait_file "$W/who.txt"
	got=$(cat "$W/who.txt" 2>/dev/null)
	want="$U
$W $U $U
$W"
	[ "$got" = "$want" ] && job "$id" | grep -q "\"user\": \"$U\""
	check submit-user $? "submit: $(cat "$TMP/sub.out")
got: $got
want: $want
job: $(job "$id")"

	# ---- the agent's default user -----------------------------------
	rm -f "$W/who.txt"
	id=$(sub vision --gpus 1 --selector pool=n2 -- 'id -un > who.tmp && mv who.tmp who.txt')
	wait_file "$W/who.txt"
	got=$(cat "$W/who.txt" 2>/dev/null)
	[ "$got" = "$U" ]
	check submit-default-user $? "got: $got (want $U)
job: $(job "$id")"

	# ---- root refused --------------------------------------------------
	# each start on n1 fails (said in its log, the job requeued, never
	# counted as its failure) until the job is cancelled
	id=$(sub vision --gpus 1 --selector pool=n1 -- "touch $TMP/ran-as-root")
	j=$(wait_job "$id" '"requeues": [1-9]')
	out=$("$BIN" submit --server "$URL" --token-file "$TMP/root.token" \
		--gpus 1 -- true 2>&1)
	rc=$?
	printf '%s' "$j" | grep -q '"failures": 0' &&
		grep -q "$id replica 0: cannot start: .*it would run as root, which the controller's config does not allow (allow_root: true)" "$TMP/n1.err" &&
		[ ! -e "$TMP/ran-as-root" ] && [ "$rc" = 1 ] &&
		printf '%s' "$out" | grep -q "allow_root: true"
	check submit-root-refused $? "job: $j
n1: $(grep "$id" "$TMP/n1.err" | tail -3)
root token rc=$rc: $out"
	ROOTJOB=$id

	# ---- a user the node does not know ---------------------------------
	id=$(sub nouser --gpus 1 --selector pool=n1 -- true)
	j=$(wait_job "$id" '"requeues": [1-9]')
	printf '%s' "$j" | grep -q '"failures": 0' &&
		printf '%s' "$j" | grep -Eq '"state": "(pending|running)"' &&
		grep -q "$id replica 0: cannot start: .*user 'gf-no-such-user-21' is unknown on this node" "$TMP/n1.err"
	check submit-unknown-user $? "job: $j
n1: $(grep "$id" "$TMP/n1.err" | tail -3)"
	"$BIN" cancel --server "$URL" --token-file "$TMP/admin.token" "$id" \
		>/dev/null 2>&1
fi

# ---- cancel by number ------------------------------------------------------
id=${ROOTJOB:-$(sub vision --gpus 1 -- sleep 60)}
n=${id#j}
out=$("$BIN" cancel --server "$URL" --token-file "$TMP/admin.token" "$n" 2>&1)
rc=$?
[ "$rc" = 0 ] && [ "$out" = "$id cancelled" ] &&
	job "$id" | grep -q '"state": "cancelled"'
check submit-cancel-number $? "cancel $n rc=$rc: $out
job: $(job "$id")"
