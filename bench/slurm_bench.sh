#!/bin/sh
# Beside Slurm (issue 24): a user's submission loop and a 2,000-task array,
# on gpufleet and, where slurmctld is installed, on Slurm 22.05, in the same
# run on this machine.  Figures, never pass/fail.
#
# gpufleet: `gpufleet serve --agents` (SQLite in a temp dir, synchronous
# FULL) and one `gpufleet agent` (the hgx-h100 template's 8 GPUs through
# the fake NVML; --no-nvml where it is not built), 32 slots: each job asks
# --gpu-milli 250.  Slurm: slurmctld and slurmd on their own ports and
# state directory under a temp dir (auth/none, loopback only), one node of
# 32 CPUs (config_overrides: this machine has fewer), each job 1 CPU:
# the same 32 slots.  Every job is `true`.  BENCH lines (P = gpufleet |
# slurm):
#   beside_slurm.gpufleet.submit_loop_per_s, beside_slurm.slurm.sbatch_loop_per_s
#                       `gpufleet submit -- true` / `sbatch --wrap true`
#                       in a loop, one process per
#                       submission, each once the previous exited
#                       (GPUFLEET_BENCH_LOOP submissions, 200)
#   beside_slurm.P.array.submit_s     the array's submit command, start
#                       to exit (GPUFLEET_BENCH_ARRAY tasks, 2000)
#   beside_slurm.P.array.all_started_s  the submission until no task is
#                       pending (squeue -r -t PD / GET /v1/queue): every
#                       task running or ended
#   beside_slurm.P.array.all_ended_s  until no task is pending or running
# The queue is polled every 0.2 s (the figures' resolution).  Slurm's
# MaxArraySize is raised to hold the array; gpufleet caps an array at
# 1,000 tasks (GF_ARRAY_TASKS_MAX): a larger one is submitted as arrays
# of 1,000 back to back, and a line says so.  Without slurmctld (or
# without root: slurmd runs as root) the Slurm lines are one skip line.
# Every daemon started here is stopped by its PID at the end (trap), on
# failure too.  Usage: sh bench/slurm_bench.sh [BUILD]
set -u
B=${1:-build}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BIN="$ROOT/$B/gpufleet"
NLOOP=${GPUFLEET_BENCH_LOOP:-200}
NARR=${GPUFLEET_BENCH_ARRAY:-2000}
SLOTS=32
TMP=$(mktemp -d)
PIDS=""

# Stop what we started, last first, each by its PID: SIGTERM, then SIGKILL
# after 10 s (slurmd can wait on a dead controller for minutes).
stop_all() {
	for p in $PIDS; do
		kill "$p" 2>/dev/null
		i=0
		while kill -0 "$p" 2>/dev/null && [ $i -lt 100 ]; do
			sleep 0.1
			i=$((i + 1))
		done
		kill -9 "$p" 2>/dev/null
	done
	PIDS=""
}
cleanup() {
	stop_all
	cd / && rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP
started() { PIDS="$1 $PIDS"; }

now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.2f", b - a }'; }
rate() { awk -v n="$1" -v s="$2" 'BEGIN { printf "%.1f", (s > 0) ? n / s : 0 }'; }
wait_for() { # tries command...: up to 0.2 s x tries
	n=$1
	shift
	while [ "$n" -gt 0 ]; do
		"$@" >/dev/null 2>&1 && return 0
		sleep 0.2
		n=$((n - 1))
	done
	return 1
}
# poll_until T0 COMMAND...: seconds from T0 until COMMAND succeeds (polled
# every 0.2 s, at most 30 min), or "timeout"
poll_until() {
	t0=$1
	shift
	i=0
	while ! "$@" >/dev/null 2>&1; do
		i=$((i + 1))
		[ $i -gt 9000 ] && echo timeout && return 1
		sleep 0.2
	done
	since "$t0"
}
echo "# beside Slurm: $SLOTS slots on each side, jobs 'true'; load average $(cut -d' ' -f1-3 /proc/loadavg)"

# -- gpufleet ------------------------------------------------------------
G="$TMP/gf"
mkdir -p "$G"
printf 'allow_root: true\nagents:\n  heartbeat_s: 1\n' >"$G/serve.yaml"
"$BIN" serve --agents --listen 127.0.0.1:0 --db "sqlite:$G/state.db" \
	--config "$G/serve.yaml" 2>"$G/serve.log" &
started $!
URL=""
for _ in $(seq 200); do
	URL=$(sed -n 's|^gpufleet serve: listening on \(http://[0-9.:]*\)/.*|\1|p' "$G/serve.log")
	[ -n "$URL" ] && break
	sleep 0.05
done
[ -n "$URL" ] || {
	echo "# gpufleet serve did not start: $(tail -3 "$G/serve.log")"
	exit 1
}
LIB="$ROOT/$B/fake-nvml/libnvidia-ml.so.1"
FX="$ROOT/tests/fixtures/nvml/hgx-h100.nvml"
if [ -r "$LIB" ] && [ -r "$FX" ]; then
	nvml="--nvml"
else
	nvml="--no-nvml"
	echo "# gpufleet: the fake NVML ($LIB) is not built: the agent runs --no-nvml"
fi
GPUFLEET_NVML_LIBRARY="$LIB" GPUFLEET_FAKE_NVML_FIXTURE="$FX" \
	"$BIN" agent --listen 127.0.0.1:0 --template hgx-h100 $nvml \
	--controller "$URL" --name n1 --state-dir "$G/agent" \
	--kill-grace 1s 2>"$G/agent.log" &
started $!
node_ready() { curl -sf "$URL/v1/nodes" | grep -q '"state": *"ready"'; }
wait_for 150 node_ready || {
	echo "# gpufleet agent did not become ready: $(tail -3 "$G/agent.log")"
	exit 1
}
gf_pending() { curl -sf "$URL/v1/queue" | grep -o '"pending": *[0-9]*' | grep -o '[0-9]*$'; }
gf_none_pending() { [ "$(gf_pending)" = 0 ]; }
gf_none_left() {
	gf_none_pending &&
		curl -sf "$URL/v1/jobs?state=running,pending&limit=10000" |
		python3 -c 'import json,sys; sys.exit(len(json.load(sys.stdin)["jobs"]) != 0)'
}

t0=$(now)
ok=0
i=0
while [ $i -lt "$NLOOP" ]; do
	"$BIN" submit --server "$URL" --gpu-milli 250 -- true >/dev/null 2>&1 && ok=$((ok + 1))
	i=$((i + 1))
done
s=$(since "$t0")
echo "BENCH beside_slurm.gpufleet.submit_loop_per_s $(rate $ok "$s") jobs/s"
echo "# gpufleet submit loop: $ok of $NLOOP exited 0 in $s s"
poll_until "$(now)" gf_none_left >/dev/null

# the array: one, or arrays of 1,000 (GF_ARRAY_TASKS_MAX) back to back
t0=$(now)
if "$BIN" submit --server "$URL" --gpu-milli 250 --array "0-$((NARR - 1))" -- true \
	>"$G/array.out" 2>&1; then
	how="one array"
else
	how="arrays of 1000 ($(head -1 "$G/array.out"))"
	lo=0
	while [ $lo -lt "$NARR" ]; do
		hi=$((lo + 999))
		[ $hi -ge "$NARR" ] && hi=$((NARR - 1))
		"$BIN" submit --server "$URL" --gpu-milli 250 --array "$lo-$hi" -- true \
			>>"$G/array.out" 2>&1 || echo "# gpufleet array $lo-$hi: $(tail -1 "$G/array.out")"
		lo=$((hi + 1))
	done
fi
echo "BENCH beside_slurm.gpufleet.array.submit_s $(since "$t0") s"
st=$(poll_until "$t0" gf_none_pending)
echo "BENCH beside_slurm.gpufleet.array.all_started_s $st s"
en=$(poll_until "$t0" gf_none_left)
echo "BENCH beside_slurm.gpufleet.array.all_ended_s $en s"
n=$(curl -sf "$URL/v1/jobs?state=succeeded&limit=10000" |
	python3 -c 'import json,sys; print(len(json.load(sys.stdin)["jobs"]))')
echo "# gpufleet array: $NARR tasks as $how; $n jobs succeeded in all (loop and array); load average $(cut -d' ' -f1-3 /proc/loadavg)"
stop_all

# -- Slurm ---------------------------------------------------------------
why=""
[ "$(id -u)" = 0 ] || why="needs root (slurmd runs as root)"
for c in slurmctld slurmd sbatch squeue scontrol sinfo; do
	[ -z "$why" ] && ! command -v $c >/dev/null 2>&1 &&
		why="$c absent (apt-get install slurmctld slurmd slurm-client)"
done
if [ -n "$why" ]; then
	echo "skip beside_slurm.slurm ($why)"
	exit 0
fi
W="$TMP/slurm"
mkdir -p "$W/state" "$W/spool" "$W/log"
chmod 755 "$TMP" "$W"
# shellcheck disable=SC2046
set -- $(python3 -c 'import socket
s = [socket.socket() for _ in range(2)]
for x in s: x.bind(("127.0.0.1", 0))
print(" ".join(str(x.getsockname()[1]) for x in s))')
H=$(hostname -s)
cat >"$W/slurm.conf" <<EOF
ClusterName=bench$1
SlurmctldHost=$H(127.0.0.1)
SlurmctldPort=$1
SlurmdPort=$2
SlurmUser=root
SlurmdUser=root
AuthType=auth/none
CredType=cred/none
CommunicationParameters=NoInAddrAny,NoCtldInAddrAny
StateSaveLocation=$W/state
SlurmdSpoolDir=$W/spool
SlurmctldPidFile=$W/slurmctld.pid
SlurmdPidFile=$W/slurmd.pid
SlurmctldLogFile=$W/log/slurmctld.log
SlurmdLogFile=$W/log/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
MpiDefault=none
ReturnToService=2
SchedulerType=sched/backfill
SchedulerParameters=batch_sched_delay=0
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MaxArraySize=$((NARR + 1))
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
JobAcctGatherType=jobacct_gather/none
MailProg=/bin/true
SlurmdParameters=config_overrides
NodeName=$H NodeAddr=127.0.0.1 CPUs=$SLOTS Boards=1 SocketsPerBoard=1 CoresPerSocket=$SLOTS ThreadsPerCore=1 RealMemory=1000 State=UNKNOWN
PartitionName=bench Nodes=$H Default=YES MaxTime=INFINITE State=UP
EOF
[ -d /sys/fs/cgroup/cpuset ] && echo "CgroupPlugin=cgroup/v1" >"$W/cgroup.conf"
: >"$W/plugstack.conf"
export SLURM_CONF="$W/slurm.conf"
cd "$W" || exit 1
ctld_ok() { scontrol ping | grep -q UP; }
node_idle() { sinfo -h -o %T | grep -q idle; }
setsid slurmctld -D -c >"$W/log/slurmctld.out" 2>&1 &
started $!
wait_for 100 ctld_ok || {
	echo "# slurmctld did not come up: $(tail -3 "$W/log/slurmctld.log" 2>&1)"
	exit 1
}
setsid slurmd -D >"$W/log/slurmd.out" 2>&1 &
started $!
wait_for 100 node_idle || {
	echo "# slurmd did not come up: $(tail -3 "$W/log/slurmd.log" 2>&1)"
	exit 1
}
sl_none_pending() { [ -z "$(squeue -h -r -t PD -o %i)" ]; }
sl_none_left() { [ -z "$(squeue -h -r -o %i)" ]; }

t0=$(now)
ok=0
i=0
while [ $i -lt "$NLOOP" ]; do
	sbatch -Q -o /dev/null --wrap true >/dev/null 2>&1 && ok=$((ok + 1))
	i=$((i + 1))
done
s=$(since "$t0")
echo "BENCH beside_slurm.slurm.sbatch_loop_per_s $(rate $ok "$s") jobs/s"
echo "# sbatch loop: $ok of $NLOOP exited 0 in $s s"
poll_until "$(now)" sl_none_left >/dev/null

t0=$(now)
sbatch -Q -o /dev/null --array "0-$((NARR - 1))" --wrap true >"$W/array.out" 2>&1 ||
	echo "# sbatch --array failed: $(cat "$W/array.out")"
echo "BENCH beside_slurm.slurm.array.submit_s $(since "$t0") s"
st=$(poll_until "$t0" sl_none_pending)
echo "BENCH beside_slurm.slurm.array.all_started_s $st s"
en=$(poll_until "$t0" sl_none_left)
echo "BENCH beside_slurm.slurm.array.all_ended_s $en s"
echo "# slurm array: $NARR tasks, one node of $SLOTS CPUs, Slurm $(sinfo -V | cut -d' ' -f2); load average $(cut -d' ' -f1-3 /proc/loadavg)"
