#!/bin/sh
# gpufleet inside a real Slurm 22.05 on loopback (docs/slurm.md): slurmctld,
# slurmd and (where MariaDB and slurmdbd can be installed) slurmdbd with
# accounting, started and stopped by PID by this test, on ports chosen per
# run, all on 127.0.0.1 (auth/none: loopback only).  The node is this
# machine recorded as a 2-socket H100 node (tests/tools/cluster_fixtures.py
# --sockets: GPUs 0-3 and mlx5_0 local to the first half of the CPUs, 4-7
# and mlx5_1 to the second), its 8 GPUs fake device files (mknod c 195 N),
# its gres.conf and node line written by `gpufleet slurm gres`, the SPANK
# plugin in plugstack.conf.  Checks:
#   slurm/node-line-slurmd-C   the node line of this machine's own
#                              recording (plus one GPU) is what slurmd -C
#                              says (CPUs, boards, sockets, cores, threads;
#                              RealMemory no more)
#   slurm/slurmd-gres          slurmd takes the generated gres.conf and node
#                              line: no gres error in its log, scontrol
#                              lists gpu:h100:8 on sockets 0-1, node idle
#   slurm/listen-loopback      every daemon listens on 127.0.0.1 only (ss)
#   slurm/bind-closest         srun -c2 --gres=gpu:1 --gpufleet-bind=closest:
#                              CPUs, memory policy and NCCL_IB_HCA of the
#                              GPUs' half, as the recording says; the same
#                              job without the plugin must fail the CPU
#                              check (Slurm alone binds both CPUs)
#   slurm/bind-narrows         a step of 2 GPUs and 2 CPUs in an allocation
#                              over both sockets: the GPUs' half only (and
#                              not so without the plugin)
#   slurm/bind-none-unchanged  --gpufleet-bind=none binds as Slurm does
#                              with no plugin at all
#   slurm/bind-split           two tasks sharing 4 GPUs of one socket in a
#                              2-core step: one core each, the GPUs' first
#                              (never both on the GPUs' one core); Slurm
#                              alone gives the same CPUs here, so they are
#                              compared with its, and the plugin is seen
#                              in the memory policy and NCCL_IB_HCA
#   slurm/bind-two-jobs        two jobs at once on different sockets each
#                              get their own socket's CPUs (Slurm's own
#                              choice from gres.conf's Cores=; the plugin's
#                              part is each job's own NIC)
#   slurm/topology-unreadable  a node whose topology cannot be read: one
#                              log line, the job runs; with strict, it fails
#   slurm/topology-foreign     topology= another machine's recording
#                              ($GPUFLEET_SHARED, 32 CPUs): one log line
#                              naming what differs, the job runs unbound;
#                              with strict, it fails
#   slurm/topology-other-host  topology= this machine's recording under
#                              another host name (the same shape): refused
#                              the same way, the host name named
#   slurm/bad-option           --gpufleet-bind=garbage: srun and sbatch
#                              fail at once naming it; the node stays idle
#   slurm/optional-bad-default plugstack `optional ... default=bogus
#                              topology=...`: every bad argument named, the
#                              plugin disabled (tasks as Slurm binds them,
#                              no half-configured live read)
#   slurm/advise-live          gpufleet slurm advise through libslurm sees
#                              what scontrol shows, and places a pending job
#   slurm/job-submit-lua       dist/slurm/job_submit.lua in slurmctld reads
#                              the advice file and notes and steers a job
#   slurm/usage-accounting     gpufleet slurm usage against sacct's AllocTRES
#                              x ElapsedRaw and the jobs' own timings
#   slurm/stopped              every daemon stopped by its PID, no listener
# Needs root (mknod; slurmd runs as root) and Slurm (installed with
# apt-get where root and apt work): without them every check is a skip
# line and the script exits 77, never 0; GPUFLEET_REQUIRE_SLURM=1 makes
# them FAIL lines instead (a machine that must run it).  A fault of what
# is tested (fixtures, gres.conf, daemons that do not come up) is a FAIL,
# never a skip.  Installs MariaDB and slurmdbd itself (apt-get) where root
# and apt work, unless GPUFLEET_NO_APT is set; without them the accounting
# check is skipped.  The node's GPUs are the fake NVML's (nvml=1 in
# plugstack.conf), which the recording is checked against.
# Prints ok/FAIL/skip lines; exits 1 when one failed, 77 when skipped.
# Usage: sh tests/integration/slurm.sh BUILD
set -u
B=${1:-build}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BIN="$ROOT/$B/gpufleet"
SO="$ROOT/$B/spank_gpufleet.so"
CHK="$ROOT/tests/tools/slurm_check.py"
TMP=$(mktemp -d)
W="$TMP/run"
PIDS=""
cleanup() {
	stop_all
	rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

FAILED=0
check() { # name, condition-result (0 ok), detail
	if [ "$2" = 0 ]; then echo "ok slurm/$1"; else
		echo "FAIL slurm/$1"
		FAILED=1
		printf '%s\n' "$3" | head -25 | sed 's/^/    /'
	fi
}
ALL="node-line-slurmd-C slurmd-gres listen-loopback bind-closest
	bind-narrows bind-none-unchanged bind-split bind-two-jobs
	topology-unreadable topology-foreign topology-other-host bad-option
	optional-bad-default advise-live job-submit-lua usage-accounting
	stopped"
# This machine cannot run Slurm: a skip line per check, exit 77 (not 0:
# nothing passed); FAIL lines where GPUFLEET_REQUIRE_SLURM=1 says it must.
skip_all() {
	if [ -n "${GPUFLEET_REQUIRE_SLURM:-}" ]; then
		fail_all "GPUFLEET_REQUIRE_SLURM is set: $1"
	fi
	for n in $ALL; do
		echo "skip slurm/$n ($1)"
	done
	exit 77
}
# What is tested failed before the checks could run: each check fails.
fail_all() {
	for n in $ALL; do
		echo "FAIL slurm/$n ($1)"
	done
	exit 1
}

# Stop what we started, last first, each by its PID: SIGTERM, then
# SIGKILL after 10 s (slurmd can wait on a dead controller for minutes).
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
started() { PIDS="$1 $PIDS"; }

# -- what we need ----------------------------------------------------------
[ "$(id -u)" = 0 ] || skip_all "needs root: mknod, and slurmd runs as root"
command -v python3 >/dev/null 2>&1 || skip_all "python3 absent"
command -v lstopo-no-graphics >/dev/null 2>&1 ||
	skip_all "lstopo-no-graphics absent (hwloc-nox)"
need="slurmctld slurmd slurm-client"
missing=""
for p in $need slurmdbd mariadb-server; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null |
		grep -q "install ok installed" || missing="$missing $p"
done
if [ -n "$missing" ] && command -v apt-get >/dev/null 2>&1 &&
	[ -z "${GPUFLEET_NO_APT:-}" ]; then
	# scripts/install-deps.sh brings the Slurm daemons; the accounting
	# database (MariaDB, slurmdbd: about 100 MB) only this test needs.
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
		--no-install-recommends $missing >"$TMP/apt.log" 2>&1 ||
		(apt-get update -qq && DEBIAN_FRONTEND=noninteractive \
			apt-get install -y -qq --no-install-recommends \
			$missing) >>"$TMP/apt.log" 2>&1
fi
for c in slurmctld slurmd srun sbatch scontrol; do
	command -v "$c" >/dev/null 2>&1 ||
		skip_all "Slurm cannot be installed here ($c absent; apt-get install slurmctld slurmd slurm-client)"
done
[ -f "$SO" ] || skip_all "$SO not built (libslurm-dev absent at build time)"
ACCT=1
command -v slurmdbd >/dev/null 2>&1 && command -v mariadbd >/dev/null 2>&1 &&
	command -v sacct >/dev/null 2>&1 || ACCT=0

H=$(hostname -s)
mkdir -p "$W/state" "$W/spool" "$W/log" "$W/dev" "$W/db"
chmod 755 "$TMP" "$W"
# shellcheck disable=SC2046
set -- $(python3 -c 'import socket
s = [socket.socket() for _ in range(4)]
for x in s: x.bind(("127.0.0.1", 0))
print(" ".join(str(x.getsockname()[1]) for x in s))')
CTLD_PORT=$1 SLURMD_PORT=$2 DBD_PORT=$3 DB_PORT=$4
export GPUFLEET_NVML_LIBRARY="$ROOT/$B/fake-nvml/libnvidia-ml.so.1"

# -- the node: fixtures, gres.conf, node line --------------------------------
python3 "$ROOT/tests/tools/cluster_fixtures.py" --out "$W/fx" --sockets \
	2>"$TMP/fx.err" || fail_all "fixtures: $(cat "$TMP/fx.err")"
FX="$W/fx/hgx-a.xml"
MAN="$W/fx/cluster.json"
npu=$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["nodes"][0]["halves"]))' "$MAN")
[ "$npu" = 2 ] || skip_all "this machine has one PU: nothing to tell apart"
i=0
while [ $i -lt 8 ]; do
	mknod "$W/dev/nvidia$i" c 195 $i || fail_all "mknod failed"
	i=$((i + 1))
done
# device minor numbers unlike the indexes (as NVML may answer): File=
# follows them, while Slurm's GPU ids stay the line order
awk '/^gpu / { print; print "minor " (7 - n++); next } { print }' \
	"$W/fx/hgx-a.nvml" >"$W/fx/hgx-a-minors.nvml"
# the fake NVML is this node's NVML, for gpufleet here and for the plugin
# in slurmstepd (which inherits slurmd's environment): the recording's
# GPUs are checked against it
export GPUFLEET_FAKE_NVML_FIXTURE="$W/fx/hgx-a-minors.nvml"
"$BIN" slurm gres --xml "$FX" \
	--this-system --nvml --nodename "$H" --dev-dir "$W/dev" \
	>"$W/gres.conf" 2>"$TMP/gres.err"
grc=$?
NODELINE=$("$BIN" slurm gres --xml "$FX" --this-system --nvml --nodename "$H" \
	--node-line 2>>"$TMP/gres.err")
[ $grc = 0 ] && [ -n "$NODELINE" ] ||
	fail_all "gpufleet slurm gres failed: $(cat "$TMP/gres.err")"

# slurmd -C against the node line of this machine's own recording, with
# one GPU added so that it loads (as tests/integration/bind_live.sh does)
lstopo-no-graphics --of xml >"$TMP/host.xml" 2>/dev/null
awk 'inserted == 0 && /bridge_type="0-1"/ {
	print; print "<object type=\"PCIDev\" gp_index=\"99999\" pci_busid=\"0000:00:1f.7\" pci_type=\"0302 [10de:2330] [10de:16c1] a1\" pci_link_speed=\"0.000000\"/>";
	inserted = 1; next } { print }' "$TMP/host.xml" >"$TMP/gpu.xml"
printf 'gpu 00000000:00:1f.7\nname NVIDIA H100 80GB HBM3\n' >"$TMP/gpu.nvml"
ours=$(GPUFLEET_FAKE_NVML_FIXTURE="$TMP/gpu.nvml" "$BIN" slurm gres \
	--xml "$TMP/gpu.xml" --this-system --nvml --nodename "$H" \
	--node-line 2>&1)
theirs=$(slurmd -C 2>&1 | head -1)
field() { printf '%s\n' "$1" | tr ' ' '\n' | sed -n "s/^$2=//p"; }
bad=""
for f in CPUs Boards SocketsPerBoard CoresPerSocket ThreadsPerCore; do
	[ "$(field "$ours" $f)" = "$(field "$theirs" $f)" ] ||
		bad="$bad $f"
done
m1=$(field "$ours" RealMemory)
m2=$(field "$theirs" RealMemory)
[ -n "$m1" ] && [ -n "$m2" ] && [ "$m1" -le "$m2" ] || bad="$bad RealMemory"
[ -z "$bad" ]
check node-line-slurmd-C $? "differ:$bad
ours:      $ours
slurmd -C: $theirs"

# -- the cluster -----------------------------------------------------------
acct_conf="AccountingStorageType=accounting_storage/none"
if [ $ACCT = 1 ]; then
	acct_conf="AccountingStorageType=accounting_storage/slurmdbd
AccountingStorageHost=127.0.0.1
AccountingStoragePort=$DBD_PORT
AccountingStorageTRES=gres/gpu,gres/gpu:h100"
fi
# SlurmdParameters=config_overrides: the recording has 2 sockets of 1
# core where this machine has 1 socket of 2 (slurm.conf(5): for tests).
cat >"$W/slurm.conf" <<EOF
ClusterName=gf$CTLD_PORT
SlurmctldHost=$H(127.0.0.1)
SlurmctldPort=$CTLD_PORT
SlurmdPort=$SLURMD_PORT
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
SlurmdDebug=debug
PlugStackConfig=$W/plugstack.conf
ProctrackType=proctrack/linuxproc
TaskPlugin=task/affinity
MpiDefault=none
ReturnToService=2
SchedulerType=sched/backfill
SchedulerParameters=batch_sched_delay=0
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
GresTypes=gpu
$acct_conf
JobCompType=jobcomp/none
JobAcctGatherType=jobacct_gather/none
MailProg=/bin/true
JobSubmitPlugins=lua
SlurmdParameters=config_overrides
$NODELINE NodeAddr=127.0.0.1 State=UNKNOWN
PartitionName=gpu Nodes=$H Default=YES MaxTime=INFINITE State=UP
EOF
[ -d /sys/fs/cgroup/cpuset ] && echo "CgroupPlugin=cgroup/v1" >"$W/cgroup.conf"
cp "$ROOT/dist/slurm/job_submit.lua" "$W/job_submit.lua"
# required: only a required plugin's error fails a task (spank(8)), which
# --gpufleet-bind=strict needs; the plugin itself never fails otherwise
plugstack() { echo "required $SO default=closest topology=$1 nvml=1" >"$W/plugstack.conf"; }
plugstack "$FX"
export SLURM_CONF="$W/slurm.conf"
cd "$W" || exit 1 # jobs run here, and write nothing into the checkout

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
db_ok() { mariadb --no-defaults -S "$W/mysql.sock" -u root -e 'select 1'; }
dbd_ok() { sacctmgr -n show cluster; }
ctld_ok() { scontrol ping | grep -q UP; }
node_idle() { sinfo -h -o %T | grep -q idle; }

if [ $ACCT = 1 ]; then
	mariadb-install-db --no-defaults --datadir="$W/db" --user=root \
		--auth-root-authentication-method=normal --skip-test-db \
		>"$W/log/db-install.log" 2>&1 || ACCT=0
fi
if [ $ACCT = 1 ]; then
	setsid mariadbd --no-defaults --user=root --datadir="$W/db" \
		--socket="$W/mysql.sock" --port="$DB_PORT" \
		--bind-address=127.0.0.1 --pid-file="$W/mariadb.pid" \
		--log-error="$W/log/mariadb.err" >/dev/null 2>&1 &
	started $!
	wait_for 150 db_ok && mariadb --no-defaults -S "$W/mysql.sock" -u root \
		-e "CREATE USER 'slurm'@'127.0.0.1' IDENTIFIED BY 'gf'; GRANT ALL ON slurm_acct_db.* TO 'slurm'@'127.0.0.1';" ||
		ACCT=0
	cat >"$W/slurmdbd.conf" <<EOF
AuthType=auth/none
DbdHost=localhost
DbdAddr=127.0.0.1
DbdPort=$DBD_PORT
SlurmUser=root
LogFile=$W/log/slurmdbd.log
PidFile=$W/slurmdbd.pid
StorageType=accounting_storage/mysql
StorageHost=127.0.0.1
StoragePort=$DB_PORT
StorageLoc=slurm_acct_db
StorageUser=slurm
StoragePass=gf
CommunicationParameters=NoInAddrAny
EOF
	chmod 600 "$W/slurmdbd.conf"
	setsid slurmdbd -D >"$W/log/slurmdbd.out" 2>&1 &
	started $!
	wait_for 100 dbd_ok &&
		sacctmgr -i add cluster "gf$CTLD_PORT" >/dev/null 2>&1 &&
		sacctmgr -i add account teama,teamb >/dev/null 2>&1 &&
		sacctmgr -i add user root account=teama,teamb >/dev/null 2>&1 ||
		ACCT=0
fi
[ $ACCT = 1 ] || sed -i 's/^AccountingStorage.*//' "$W/slurm.conf"
[ $ACCT = 1 ] || echo "AccountingStorageType=accounting_storage/none" >>"$W/slurm.conf"
# slurmctld first: a slurmd started before it backs off for minutes
GPUFLEET_ADVICE="$W/advice.txt" GPUFLEET_STEER=1 \
	setsid slurmctld -D -c >"$W/log/slurmctld.out" 2>&1 &
CTLD=$!
started $CTLD
wait_for 100 ctld_ok || fail_all "slurmctld did not come up: $(tail -3 "$W/log/slurmctld.log" 2>&1)"
setsid slurmd -D >"$W/log/slurmd.out" 2>&1 &
SLURMD=$!
started $SLURMD
wait_for 100 node_idle || fail_all "slurmd did not come up: $(tail -3 "$W/log/slurmd.log" 2>&1)"

# -- slurmd takes the generated lines ---------------------------------------
node=$(scontrol -o show node "$H")
errs=$(grep -iE 'error.*gres|gres.*(error|invalid|mismatch)|Invalid GRES' \
	"$W/log/slurmd.log" "$W/log/slurmctld.log")
[ -z "$errs" ] && printf '%s\n' "$node" | grep -q 'Gres=gpu:h100:8(S:0-1)' &&
	grep -q "Name=gpu Type=h100 File=$W/dev/nvidia7 Cores=0 " "$W/gres.conf" &&
	printf '%s\n' "$node" | grep -q 'State=IDLE '
check slurmd-gres $? "log: $errs
scontrol: $node
gres.conf: $(grep -v '^#' "$W/gres.conf")"

# -- listeners ---------------------------------------------------------------
ss -ltnp >"$TMP/ss.txt" 2>&1
bad=""
for p in $PIDS; do
	bad="$bad$(grep "pid=$p," "$TMP/ss.txt" | awk '{print $4}' |
		grep -v '^127\.0\.0\.1:' | sed "s/^/ pid $p: /")"
done
n=0
for p in $PIDS; do grep -q "pid=$p," "$TMP/ss.txt" && n=$((n + 1)); done
[ -z "$bad" ] && [ $n -ge 2 ]
check listen-loopback $? "not loopback:$bad; $n of our daemons listening
$(cat "$TMP/ss.txt")"

# -- binding -----------------------------------------------------------------
cat >"$W/probe.sh" <<'EOF'
#!/bin/sh
t0=$(date +%s.%N)
[ -n "${PROBE_SLEEP:-}" ] && sleep "$PROBE_SLEEP"
echo "R job=$SLURM_JOB_ID task=$SLURM_LOCALID gpus=${SLURM_STEP_GPUS:-${SLURM_JOB_GPUS:-}} cpus=$(awk '/^Cpus_allowed_list/ {print $2}' /proc/self/status) mem=$(awk 'NR == 1 {print $2}' /proc/self/numa_maps 2>/dev/null) hca=${NCCL_IB_HCA:-} ucx=${UCX_NET_DEVICES:-} t0=$t0 t1=$(date +%s.%N)"
EOF
chmod 755 "$W/probe.sh"
run() { # out-file, srun/salloc arguments...
	out=$1
	shift
	timeout 120 "$@" >"$out" 2>"$out.err"
}
# Each job is also run without the plugin (an empty plugstack.conf, read
# again at each launch): where Slurm alone gives the CPUs the check wants,
# the check cannot see the plugin, which these cases must not be.
noplugin() { # out-file, srun/salloc arguments...
	: >"$W/plugstack.conf"
	run "$@"
	plugstack "$FX"
}
# the check must fail without the plugin: else it cannot see ours
teeth() { # out-file-without-plugin
	if python3 "$CHK" local "$1" "$MAN" --cpus-only >/dev/null 2>&1; then
		echo "without the plugin Slurm gives the same CPUs: the check cannot see the plugin"
		return 1
	fi
	grep -q '^R ' "$1" || { echo "the job without the plugin did not run"; return 1; }
}
# one GPU and both cores: Slurm alone binds both (with two GPUs it takes
# one per socket, whose CPUs are then both cores too)
CLOSEST="srun -c2 --gres=gpu:1"
# shellcheck disable=SC2086
run "$TMP/closest" $CLOSEST --gpufleet-bind=closest "$W/probe.sh"
# shellcheck disable=SC2086
noplugin "$TMP/closest0" $CLOSEST "$W/probe.sh"
python3 "$CHK" local "$TMP/closest" "$MAN" >"$TMP/why" 2>&1 &&
	teeth "$TMP/closest0" >>"$TMP/why"
check bind-closest $? "$(cat "$TMP/why" "$TMP/closest" "$TMP/closest.err" "$TMP/closest0")"

NARROW="salloc -Q --gres=gpu:4 -c2 srun --gres=gpu:2 -c2"
# shellcheck disable=SC2086
run "$TMP/narrow" $NARROW --gpufleet-bind=closest "$W/probe.sh"
# shellcheck disable=SC2086
noplugin "$TMP/noplugin" $NARROW "$W/probe.sh"
python3 "$CHK" local "$TMP/narrow" "$MAN" >"$TMP/why" 2>&1 &&
	teeth "$TMP/noplugin" >>"$TMP/why"
check bind-narrows $? "$(cat "$TMP/why" "$TMP/narrow" "$TMP/narrow.err" "$TMP/noplugin")"

# shellcheck disable=SC2086
run "$TMP/none" $NARROW --gpufleet-bind=none "$W/probe.sh"
python3 "$CHK" same "$TMP/none" "$TMP/noplugin" >"$TMP/why" 2>&1 &&
	grep -q 'hca= ' "$TMP/none" && ! grep -q 'cpus= ' "$TMP/none"
check bind-none-unchanged $? "$(cat "$TMP/why" "$TMP/none" "$TMP/noplugin")"

SPLIT="srun -n2 --gres=gpu:4"
# shellcheck disable=SC2086
run "$TMP/split" $SPLIT --gpufleet-bind=verbose,closest "$W/probe.sh"
# shellcheck disable=SC2086
noplugin "$TMP/split0" $SPLIT "$W/probe.sh"
python3 "$CHK" split "$TMP/split" "$MAN" >"$TMP/why" 2>&1 &&
	python3 "$CHK" same "$TMP/split" "$TMP/split0" --cpus >>"$TMP/why" 2>&1 &&
	[ "$(grep -c '^R ' "$TMP/split")" = 2 ]
check bind-split $? "$(cat "$TMP/why" "$TMP/split" "$TMP/split.err" "$TMP/split0")"

PROBE_SLEEP=4 run "$TMP/jobA" srun --gres=gpu:2 --gpufleet-bind=closest \
	"$W/probe.sh" &
JA=$!
sleep 1
PROBE_SLEEP=1 run "$TMP/jobB" srun --gres=gpu:2 --gpufleet-bind=closest \
	"$W/probe.sh"
wait $JA
python3 "$CHK" apart "$TMP/jobA" "$TMP/jobB" "$MAN" >"$TMP/why" 2>&1 &&
	python3 "$CHK" local "$TMP/jobA" "$MAN" >>"$TMP/why" 2>&1 &&
	python3 "$CHK" local "$TMP/jobB" "$MAN" >>"$TMP/why" 2>&1
check bind-two-jobs $? "$(cat "$TMP/why" "$TMP/jobA" "$TMP/jobB" "$TMP/jobA.err" "$TMP/jobB.err")"

# -- a node whose topology cannot be read ------------------------------------
head -c 300 "$FX" >"$W/broken.xml"
plugstack "$W/broken.xml"
run "$TMP/broken" srun --gres=gpu:1 "$W/probe.sh"
brc=$?
bjob=$(sed -n 's/^R job=\([0-9]*\) .*/\1/p' "$TMP/broken")
sleep 0.5
lines=$(grep -c "gpufleet: job $bjob step [0-9]*: cannot read this node's topology" \
	"$W/log/slurmd.log")
run "$TMP/strict" srun --gres=gpu:1 --gpufleet-bind=strict,closest \
	"$W/probe.sh"
src=$?
plugstack "$FX"
[ $brc = 0 ] && [ -n "$bjob" ] && [ "$lines" = 1 ] && [ $src != 0 ] &&
	! grep -q '^R ' "$TMP/strict"
check topology-unreadable $? "job rc=$brc id=$bjob log lines=$lines strict rc=$src
$(cat "$TMP/broken" "$TMP/broken.err" "$TMP/strict" "$TMP/strict.err")
$(grep gpufleet "$W/log/slurmd.log" | tail -5)"

# -- recordings of another machine: refused, the difference named ------------
SH=${GPUFLEET_SHARED:-$ROOT/../shared}
FOREIGN="$SH/topologies/hwloc-xml/open-mpi_hwloc/32em64t-2n8c2t-pci-wholeio.xml"
foreign() { # name, topology, what the log line must name
	plugstack "$2"
	run "$TMP/$1" srun --gres=gpu:1 --gpufleet-bind=closest "$W/probe.sh"
	frc=$?
	fjob=$(sed -n 's/^R job=\([0-9]*\) .*/\1/p' "$TMP/$1")
	sleep 0.5
	flines=$(grep "gpufleet: job $fjob step [0-9]*: topology '$2' is not a recording of this machine: " \
		"$W/log/slurmd.log")
	run "$TMP/$1.strict" srun --gres=gpu:1 --gpufleet-bind=strict,closest \
		"$W/probe.sh"
	fsrc=$?
	plugstack "$FX"
	[ $frc = 0 ] && [ -n "$fjob" ] && grep -q 'hca= ' "$TMP/$1" &&
		[ "$(printf '%s\n' "$flines" | grep -c .)" = 1 ] &&
		printf '%s\n' "$flines" | grep -q "$3" &&
		[ $fsrc != 0 ] && ! grep -q '^R ' "$TMP/$1.strict"
	check "$1" $? "job rc=$frc id=$fjob strict rc=$fsrc; want one line naming: $3
lines: $flines
$(cat "$TMP/$1" "$TMP/$1.err" "$TMP/$1.strict" "$TMP/$1.strict.err")
$(grep gpufleet "$W/log/slurmd.log" | tail -3)"
}
if [ -f "$FOREIGN" ]; then
	foreign topology-foreign "$FOREIGN" "32 CPUs 0-31 recorded, .*host name 'conan' recorded"
else
	echo "skip slurm/topology-foreign ($FOREIGN absent: set GPUFLEET_SHARED)"
fi
# this machine's own recording (the same shape) with another host name
sed 's/name="HostName" value="[^"]*"/name="HostName" value="gf-other-node"/' \
	"$FX" >"$W/other.xml"
foreign topology-other-host "$W/other.xml" ": host name 'gf-other-node' recorded, '$H' here"

# -- bad option values: fail fast, never hang, never drain ---------------------
run "$TMP/garbage" srun --gres=gpu:1 --gpufleet-bind=garbage "$W/probe.sh"
grc=$?
gsb=$(timeout 60 sbatch --parsable --gres=gpu:1 --gpufleet-bind=closest,garbage \
	--wrap true 2>&1)
gsrc=$?
[ $grc != 0 ] && [ $grc != 124 ] && ! grep -q '^R ' "$TMP/garbage" &&
	grep -q "'garbage' in 'garbage' is not closest" "$TMP/garbage.err" &&
	[ $gsrc != 0 ] && [ $gsrc != 124 ] &&
	printf '%s\n' "$gsb" | grep -q "'garbage' in 'closest,garbage'" &&
	wait_for 50 node_idle
check bad-option $? "srun rc=$grc, sbatch rc=$gsrc: $gsb
$(cat "$TMP/garbage" "$TMP/garbage.err")
$(sinfo -h -o '%T %E')"

# -- optional with a bad argument: disabled, every bad argument named ----------
echo "optional $SO default=bogus topology=$FX nvml=2" >"$W/plugstack.conf"
run "$TMP/optional" srun --gres=gpu:1 --gpufleet-bind=closest "$W/probe.sh"
orc=$?
ojob=$(sed -n 's/^R job=\([0-9]*\) .*/\1/p' "$TMP/optional")
sleep 0.5
olive=$(grep -c "gpufleet: job $ojob step" "$W/log/slurmd.log")
plugstack "$FX"
[ $orc = 0 ] && [ -n "$ojob" ] && grep -q 'hca= ' "$TMP/optional" &&
	grep -q "'default=bogus'" "$TMP/optional.err" &&
	grep -q "'nvml=2'" "$TMP/optional.err" &&
	grep -q "2 bad arguments: the plugin is disabled" "$TMP/optional.err" &&
	[ "$olive" = 0 ]
check optional-bad-default $? "rc=$orc job=$ojob plugin lines for the job: $olive
$(cat "$TMP/optional" "$TMP/optional.err")
$(grep gpufleet "$W/log/slurmd.log" | tail -3)"

# -- advice through libslurm --------------------------------------------------
hold=$(sbatch --parsable -o "$W/log/batch-%j.out" --gres=gpu:6 \
	--wrap 'sleep 30' 2>&1)
wait_for 50 sh -c "squeue -h -j $hold -o %T | grep -q RUNNING"
pend=$(sbatch --parsable -o "$W/log/batch-%j.out" --gres=gpu:4 \
	--wrap true 2>&1)
scontrol -d -o show node >"$TMP/nodes.txt"
scontrol -d -o show job >"$TMP/jobs.txt"
"$BIN" slurm advise --json >"$TMP/adv.json" 2>"$TMP/adv.err"
arc=$?
"$BIN" slurm advise --json --nodes-file "$TMP/nodes.txt" \
	--jobs-file "$TMP/jobs.txt" >"$TMP/adv2.json" 2>&1
python3 - "$TMP/adv.json" "$TMP/adv2.json" "$pend" >"$TMP/why" 2>&1 <<'EOF'
import json, sys
a = json.load(open(sys.argv[1]))
b = json.load(open(sys.argv[2]))
bad = []
if a["nodes"][0]["free"] != 2 or a["free"] != 2:
    bad.append("libslurm: %d free GPUs, 8 minus the held 6 is 2" % a["free"])
for k in ("gpus", "free", "frag"):
    if a[k] != b[k]:
        bad.append("%s: %s through libslurm, %s from scontrol" % (k, a[k], b[k]))
p = [x for x in a["proposals"] if x["job"] == int(sys.argv[3])]
if len(p) != 1 or p[0]["placed"]:
    bad.append("pending job %s (4 GPUs, 2 free): %s" % (sys.argv[3], p))
print("\n".join(bad))
sys.exit(1 if bad else 0)
EOF
[ $? = 0 ] && [ $arc = 0 ]
check advise-live $? "$(cat "$TMP/why" "$TMP/adv.err" "$TMP/adv.json")"
# the job_submit script: the advice for 2 GPUs noted and steered
"$BIN" slurm advise --gpus 1,2,4 --lines >"$W/advice.txt" 2>"$TMP/adv.err"
want=$(sed -n 's/^job=shape gpus=2 .* node=\([^ ]*\) gpu_idx=\([^ ]*\) .*/gpufleet: node=\1 gpus=\2/p' \
	"$W/advice.txt")
held=$(sbatch --parsable -H -o "$W/log/batch-%j.out" --gres=gpu:2 \
	--wrap true 2>&1)
job=$(scontrol -o show job "$held" 2>&1)
printf '%s\n' "$job" | grep -q "Comment=$want " &&
	printf '%s\n' "$job" | grep -q "ReqNodeList=$H " && [ -n "$want" ]
check job-submit-lua $? "want '$want' and ReqNodeList=$H
advice: $(cat "$W/advice.txt" "$TMP/adv.err")
job: $job
$(grep -i 'lua\|gpufleet' "$W/log/slurmctld.log" | tail -5)"
scancel "$hold" "$pend" "$held" 2>/dev/null
wait_for 50 sh -c '[ -z "$(squeue -h)" ]'

# -- accounting ----------------------------------------------------------------
if [ $ACCT = 1 ]; then
	since=$(date +%s)
	: >"$TMP/expected"
	for j in "teama 2 2" "teamb 3 3" "teama 1 1"; do
		# shellcheck disable=SC2086
		set -- $j
		s=$(date +%s.%N)
		id=$(srun -A "$1" --gres=gpu:"$2" sh -c "echo \$SLURM_JOB_ID; sleep $3" 2>/dev/null)
		e=$(date +%s.%N)
		# srun's wall time (scheduling included) and the job's own sleep:
		# what it ran lies between the two
		echo "$id $1 $2 $(python3 -c "print($e - $s)") $3" >>"$TMP/expected"
	done
	got() { # every one of our jobs completed in slurmdbd
		TZ=UTC sacct -a -X -P -S "$(date -u -d "@$((since - 2))" +%Y-%m-%dT%H:%M:%S)" \
			-o JobID,AllocTRES,ElapsedRaw,State >"$TMP/sacct.txt" 2>&1 || return 1
		for id in $(awk '{print $1}' "$TMP/expected"); do
			grep -q "^$id|.*|COMPLETED$" "$TMP/sacct.txt" || return 1
		done
	}
	wait_for 100 got
	"$BIN" slurm usage --since "$((since - 2))" --json >"$TMP/usage.json" 2>"$TMP/usage.err"
	"$BIN" slurm usage --since "$((since - 2))" >"$TMP/usage.csv" 2>>"$TMP/usage.err"
	python3 "$CHK" usage "$TMP/usage.json" "$TMP/sacct.txt" "$TMP/expected" >"$TMP/why" 2>&1
	ok=$?
	# the chargeback reads the records as they are
	printf 'cluster,node,start,end,gpus,cpu_cores,ram_gib,gpu_price_hr,cpu_core_price_hr,ram_gib_price_hr\n' >"$TMP/assets.csv"
	printf 'gf%s,%s,%s,%s,8,2,8,2.0,0.03,0.004\n' "$CTLD_PORT" "$H" \
		"$((since - 60))" "$((since + 3600))" >>"$TMP/assets.csv"
	"$BIN" chargeback --window "$((since - 60)),$((since + 3600))" \
		--assets "$TMP/assets.csv" --records "$TMP/usage.csv" \
		--aggregate namespace --csv >"$TMP/cb.csv" 2>>"$TMP/why"
	[ $ok = 0 ] && grep -q 'Z,teama,' "$TMP/cb.csv" && grep -q 'Z,teamb,' "$TMP/cb.csv"
	check usage-accounting $? "$(cat "$TMP/why" "$TMP/expected" "$TMP/sacct.txt" "$TMP/usage.err" "$TMP/usage.json" "$TMP/cb.csv")"
else
	echo "skip slurm/usage-accounting (MariaDB or slurmdbd cannot be installed here: $(tail -1 "$TMP/apt.log" 2>/dev/null))"
fi

# -- stop ---------------------------------------------------------------------
all="$PIDS"
stop_all
ss -ltnp >"$TMP/ss.txt" 2>&1
bad=""
for p in $all; do
	kill -0 "$p" 2>/dev/null && bad="$bad alive:$p"
	grep -q "pid=$p," "$TMP/ss.txt" && bad="$bad listening:$p"
done
for f in "$W/slurmctld.pid" "$W/slurmd.pid"; do
	[ -f "$f" ] && kill -0 "$(cat "$f")" 2>/dev/null && bad="$bad $f"
done
[ -z "$bad" ]
check stopped $? "$bad"
exit $FAILED
