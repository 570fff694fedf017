#!/bin/sh
# The cluster fixtures (tests/tools/cluster_fixtures.py): three nodes whose
# CPUs and memory are this machine's, recorded with lstopo and rearranged so
# that GPUs 0-3 are local to the first half of the PUs and GPUs 4-7 to the
# second.  Generated into a temporary directory, then each node is read
# back as gpufleet sees it (topo --json, the fake NVML joined by bus id):
# 8 GPUs with the fixture's UUIDs, NVLink between every HGX pair and none
# on the L40S node, each half's CPUs and nearest NIC; `gpufleet bind
# --this-system` runs a command on GPUs 0,1 and 4,5 of each node and the
# kernel's Cpus_allowed_list, CUDA_VISIBLE_DEVICES and NCCL_IB_HCA are
# checked; hgx-b's MIG device UUIDs in cluster.json are the fake's, and an
# agent started on hgx-b (--this-system) shows its MIG instances.  With one
# PU the halves are one (nothing to tell apart); the rest still holds.
# Prints "ok|FAIL|skip integration/NAME" lines.
set -u
B=${1:-build}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BIN="$ROOT/$B/gpufleet"
GEN="$ROOT/tests/tools/cluster_fixtures.py"
TMP=$(mktemp -d)
F="$TMP/fx"
APID=""
cleanup() {
	[ -n "$APID" ] && kill "$APID" 2>/dev/null
	wait 2>/dev/null
	rm -rf "$TMP"
}
trap cleanup EXIT
export GPUFLEET_NVML_LIBRARY="$ROOT/$B/fake-nvml/libnvidia-ml.so.1"
NODES="hgx-a hgx-b l40s-a"

check() { # name, condition-result (0 ok), detail
	if [ "$2" = 0 ]; then echo "ok integration/$1"; else
		echo "FAIL integration/$1"
		printf '%s\n' "$3" | head -20 | sed 's/^/    /'
	fi
}

# the interpreter itself, not a wrapper (pyenv's shims need PATH)
PY=$(python3 -c 'import sys; print(sys.executable)' 2>/dev/null)
if [ -z "$PY" ]; then
	echo "skip integration/cluster-fixtures (python3 absent)"
	exit 0
fi

# 1. The generator's failures: no lstopo is a skip (77), a missing
# recording is named.
env PATH=/nonexistent "$PY" "$GEN" --out "$TMP/none" 2>"$TMP/err"
rc=$?
env PATH=/nonexistent "$PY" "$GEN" --out "$TMP/none" \
	--lstopo "$TMP/absent.xml" 2>"$TMP/err2"
rc2=$?
[ "$rc" = 77 ] && grep -q "lstopo-no-graphics absent" "$TMP/err" &&
	[ "$rc2" = 1 ] && grep -q "cannot read '$TMP/absent.xml'" "$TMP/err2"
check cluster-fixtures-errors $? "no lstopo: rc=$rc $(cat "$TMP/err")
missing file: rc=$rc2 $(cat "$TMP/err2")"

"$PY" "$GEN" --out "$F" 2>"$TMP/err"
rc=$?
if [ "$rc" = 77 ]; then
	echo "skip integration/cluster-fixtures ($(sed 's/.*skip: //' "$TMP/err"))"
	exit 0
fi
ok=0
for n in $NODES; do
	[ -s "$F/$n.xml" ] && [ -s "$F/$n.nvml" ] || ok=1
done
[ "$rc" = 0 ] && [ "$ok" = 0 ]
check cluster-fixtures-gen $? "rc=$rc $(cat "$TMP/err") $(ls "$F" 2>&1)"
[ "$rc" = 0 ] || exit 0

# the PUs of the recording (hwloc's: those this machine's cgroup allows,
# whatever this process's own affinity is)
all=$("$PY" -c 'import json, sys; print(json.load(open(sys.argv[1]))["pus"])' \
	"$F/cluster.json")

# 2. Each node as topo --json reads it.  The checks are in Python (the
# JSON); each problem is one line, none is ok.
for n in $NODES; do
	GPUFLEET_FAKE_NVML_FIXTURE="$F/$n.nvml" "$BIN" topo --xml "$F/$n.xml" \
		--nvml --json >"$F/$n.json" 2>"$TMP/err"
	rc=$?
	out=$("$PY" - "$F" "$n" "$rc" <<'EOF'
import json, sys
d, n, rc = sys.argv[1], sys.argv[2], sys.argv[3]
bad = []
if rc != "0":
    bad.append("topo exit %s" % rc)
t = json.load(open("%s/%s.json" % (d, n)))
fx = [l.split() for l in open("%s/%s.nvml" % (d, n))]
uuids = [l[1] for l in fx if l and l[0] == "uuid"]
buses = [l[1].lower()[4:] for l in fx if l and l[0] == "gpu"]
gpus = t["gpus"]
if len(gpus) != 8:
    bad.append("%d GPUs, not 8" % len(gpus))
if [g["uuid"] for g in gpus] != uuids:
    bad.append("UUIDs %s, fixture %s" % ([g["uuid"] for g in gpus], uuids))
if [g["bus_id"] for g in gpus] != buses:
    bad.append("bus ids %s, fixture %s" % ([g["bus_id"] for g in gpus], buses))
if not t.get("nvml"):
    bad.append("NVML not joined")
rows = t["matrix"]["rows"]
ng = len(gpus)
for i in range(ng):
    for j in range(ng):
        if i == j:
            continue
        c = rows[i][j]
        if n.startswith("hgx") and c != "NV18":
            bad.append("GPU%d-GPU%d: %s, not NV18" % (i, j, c))
        if n.startswith("l40s") and c.startswith("NV"):
            bad.append("GPU%d-GPU%d: %s on L40S" % (i, j, c))
if gpus and gpus[0]["nearest_nics"] != ["mlx5_0"]:
    bad.append("GPU0 nearest NICs %s" % gpus[0]["nearest_nics"])
if len(gpus) == 8 and gpus[7]["nearest_nics"] != ["mlx5_1"]:
    bad.append("GPU7 nearest NICs %s" % gpus[7]["nearest_nics"])
m = json.load(open("%s/cluster.json" % d))
node = [x for x in m["nodes"] if x["name"] == n][0]
for g in gpus:
    want = node["gpus"][g["index"]]
    if g["cpu_affinity"] != want["cpus"]:
        bad.append("GPU%d CPUs %s, fixture %s" % (g["index"], g["cpu_affinity"], want["cpus"]))
    if g["uuid"] != want["uuid"]:
        bad.append("GPU%d UUID differs from cluster.json" % g["index"])
for g in gpus:  # memory: every NUMA node of the machine (binding skipped)
    if g["numa_affinity"] != m["numa"] or g["gpu_numa_id"] is not None:
        bad.append("GPU%d NUMA %s (GPU NUMA id %s), machine %s" % (
            g["index"], g["numa_affinity"], g["gpu_numa_id"], m["numa"]))
mig = [g["index"] for g in gpus if g.get("mig_enabled")]
if mig != ([6, 7] if n == "hgx-b" else []):
    bad.append("MIG on GPUs %s" % mig)
print("\n".join(bad))
EOF
)
	[ -z "$out" ]
	check "cluster-fixtures-topo-$n" $? "$out $(cat "$TMP/err")"
done

# Every UUID of the cluster once.
dup=$(grep -h '^uuid ' "$F"/*.nvml | sort | uniq -d)
total=$(grep -h '^uuid ' "$F"/*.nvml | sort -u | wc -l)
[ -z "$dup" ] && [ "$total" = 24 ]
check cluster-fixtures-uuids $? "$total distinct; repeated: $dup"

# 3. Binding for real: the child reads what the kernel gave it.
# bind NODE GPUS: the child's Cpus_allowed_list, CUDA_VISIBLE_DEVICES and
# NCCL_IB_HCA, one per line.
bind() {
	GPUFLEET_FAKE_NVML_FIXTURE="$F/$1.nvml" "$BIN" bind --xml "$F/$1.xml" \
		--this-system --nvml --gpus "$2" -- \
		sh -c 'grep Cpus_allowed_list /proc/self/status; env' 2>&1 |
		awk -F'\t' '/^Cpus_allowed_list/ {c = $2}
			/^CUDA_VISIBLE_DEVICES=/ {v = $0}
			/^NCCL_IB_HCA=/ {h = $0}
			END {print c; print v; print h}'
}
uuids() { # NODE I J: the fixture's UUIDs of GPUs I and J, comma-separated
	awk -v a="$2" -v b="$3" '$1 == "uuid" {u[k++] = $2}
		END {print u[a] "," u[b]}' "$F/$1.nvml"
}
half() { # NODE H: the CPU list cluster.json gives half H
	"$PY" -c 'import json, sys
m = json.load(open(sys.argv[1]))
n = [x for x in m["nodes"] if x["name"] == sys.argv[2]][0]
print(n["halves"][min(int(sys.argv[3]), len(n["halves"]) - 1)])' \
		"$F/cluster.json" "$1" "$2"
}
# the CPU ids of a list "0-3,8", one per line
expand() { printf '%s\n' "$1" | tr ',' '\n' | awk -F- '{
	hi = NF > 1 ? $2 : $1; for (i = $1; i <= hi; i++) print i }'; }

ncpu=$(expand "$all" | wc -l)
for n in $NODES; do
	lo=$(bind "$n" 0,1)
	hi=$(bind "$n" 4,5)
	lo_cpus=$(printf '%s\n' "$lo" | sed -n 1p)
	hi_cpus=$(printf '%s\n' "$hi" | sed -n 1p)
	both=$(
		expand "$lo_cpus"
		expand "$hi_cpus"
	)
	union=$(printf '%s\n' "$both" | sort -n | uniq | tr '\n' ' ')
	shared=$(printf '%s\n' "$both" | sort -n | uniq -d | tr '\n' ' ')
	want_union=$(expand "$all" | sort -n | tr '\n' ' ')
	r=0
	[ "$lo_cpus" = "$(half "$n" 0)" ] && [ "$hi_cpus" = "$(half "$n" 1)" ] &&
		[ -n "$lo_cpus" ] && [ -n "$hi_cpus" ] &&
		[ "$union" = "$want_union" ] || r=1
	if [ "$ncpu" -ge 2 ]; then
		[ -z "$shared" ] || r=1 # the halves tell the GPUs apart
	else
		[ "$lo_cpus" = "$all" ] || r=1
	fi
	[ "$(printf '%s\n' "$lo" | sed -n 2p)" = "CUDA_VISIBLE_DEVICES=$(uuids "$n" 0 1)" ] &&
		[ "$(printf '%s\n' "$hi" | sed -n 2p)" = "CUDA_VISIBLE_DEVICES=$(uuids "$n" 4 5)" ] &&
		[ "$(printf '%s\n' "$lo" | sed -n 3p)" = "NCCL_IB_HCA==mlx5_0" ] &&
		[ "$(printf '%s\n' "$hi" | sed -n 3p)" = "NCCL_IB_HCA==mlx5_1" ] || r=1
	check "cluster-fixtures-bind-$n" $r "PUs recorded: $all ($ncpu)
GPUs 0,1: $lo
GPUs 4,5: $hi
halves: $(half "$n" 0) | $(half "$n" 1)"
done

# 4. The MIG device UUIDs cluster.json lists are the fake's (asked through
# the fake library itself: nvmlDeviceGetMigDeviceHandleByIndex, GetUUID).
out=$(GPUFLEET_FAKE_NVML_FIXTURE="$F/hgx-b.nvml" "$PY" - "$F" \
	"$GPUFLEET_NVML_LIBRARY" <<'EOF2'
import ctypes, json, sys
lib = ctypes.CDLL(sys.argv[2])
if lib.nvmlInit_v2() != 0:
    sys.exit(print("nvmlInit_v2 failed"))
m = json.load(open(sys.argv[1] + "/cluster.json"))
node = [x for x in m["nodes"] if x["name"] == "hgx-b"][0]
for g in node["gpus"]:
    d = ctypes.c_void_p()
    lib.nvmlDeviceGetHandleByIndex_v2(g["index"], ctypes.byref(d))
    got = []
    for k in range(8):
        md = ctypes.c_void_p()
        if lib.nvmlDeviceGetMigDeviceHandleByIndex(d, k, ctypes.byref(md)):
            break
        buf = ctypes.create_string_buffer(96)
        lib.nvmlDeviceGetUUID(md, buf, 96)
        got.append(buf.value.decode())
    want = [x["uuid"] for x in g.get("mig", [])]
    if sorted(got) != sorted(want):
        print("GPU%d: %s, cluster.json %s" % (g["index"], got, want))
EOF2
)
[ -z "$out" ]
check cluster-fixtures-mig-uuids $? "$out"

# 5. hgx-b's MIG instances, as an agent (loading its node as this system)
# reads them through the fake NVML.
if ! command -v curl >/dev/null 2>&1; then
	echo "skip integration/cluster-fixtures-mig (curl absent)"
	exit 0
fi
: >"$TMP/agent.err"
GPUFLEET_FAKE_NVML_FIXTURE="$F/hgx-b.nvml" "$BIN" agent --listen 127.0.0.1:0 \
	--interval 100ms --xml "$F/hgx-b.xml" --this-system --nvml \
	2>"$TMP/agent.err" &
APID=$!
AP="" i=0
while [ $i -lt 100 ] && [ -z "$AP" ]; do
	AP=$(sed -n 's|.*listening on http://127\.0\.0\.1:\([0-9]*\)/.*|\1|p' "$TMP/agent.err")
	kill -0 "$APID" 2>/dev/null || break
	i=$((i + 1))
	[ -z "$AP" ] && sleep 0.1
done
out="no port"
i=0
while [ -n "$AP" ] && [ $i -lt 100 ]; do
	curl -sf "127.0.0.1:$AP/v1/gpus" >"$TMP/gpus.json" 2>/dev/null
	out=$("$PY" - "$TMP/gpus.json" <<'EOF'
import json, sys
try:
    gpus = json.load(open(sys.argv[1]))["gpus"]
except (ValueError, KeyError, OSError) as e:
    print("no page yet: %s" % e)
    sys.exit()
want = {6: ["1g.10gb"] * 7, 7: ["2g.20gb", "2g.20gb", "3g.40gb"]}
for i, g in enumerate(gpus):
    got = sorted(x["gpu_instance_profile"] for x in g.get("mig_instances") or [])
    if got != want.get(i, []):
        print("GPU%d: %s, want %s" % (i, got, want.get(i, [])))
if len(gpus) != 8:
    print("%d GPUs" % len(gpus))
EOF
)
	[ -z "$out" ] && break
	i=$((i + 1))
	sleep 0.1
done
kill "$APID" 2>/dev/null
wait "$APID" 2>/dev/null
APID=""
[ -z "$out" ]
check cluster-fixtures-mig $? "$out $(cat "$TMP/agent.err")"
