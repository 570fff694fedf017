#!/bin/sh
# Binding on the live machine.  This machine has no GPU, so the test records
# its real topology with lstopo, adds one NVIDIA PCI function to the first
# host bridge, and runs `gpufleet bind --this-system` on that recording:
# the CPU and memory binding go through hwloc to the real kernel, and the
# command reads its own /proc/self/status to prove they took effect.
# The recording is checked against this machine (src/topo/this_system.h):
# the added GPU is this machine's through the fake NVML (a fixture naming
# its bus id); without NVML, and for another machine's recording
# ($GPUFLEET_SHARED), --this-system is refused naming what differs.
# Prints "ok|FAIL|skip integration/NAME" lines.
set -u
B=${1:-build}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BIN="$ROOT/$B/gpufleet"
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
export GPUFLEET_NVML_LIBRARY=/nonexistent/libnvidia-ml.so.1

check() { # name, condition-result (0 ok), detail
	if [ "$2" = 0 ]; then echo "ok integration/$1"; else
		echo "FAIL integration/$1"
		printf '%s\n' "$3" | sed 's/^/    /'
	fi
}

# 1. The live machine without a GPU: one clear line, exit 1; --json still
# prints a document saying so; the demo says it in one line on stdout
# (its stderr holds nothing but the simulation's progress line, which a
# slow tree such as the sanitizer build shows after a second).
"$BIN" topo >"$TMP/live.out" 2>"$TMP/live.err"
rc=$?
"$BIN" topo --json >"$TMP/live.json" 2>/dev/null
jrc=$?
"$BIN" demo >"$TMP/demo.out" 2>"$TMP/demo.err"
drc=$?
if [ "$rc" = 1 ] && grep -q "this machine has no GPU" "$TMP/live.err"; then
	[ "$jrc" = 1 ] && grep -q '"error": "no-gpu"' "$TMP/live.json" &&
		grep -q '"gpus": \[\]' "$TMP/live.json" &&
		[ "$drc" = 0 ] &&
		! grep -v '^gpufleet simulate fill: ' "$TMP/demo.err" | grep -q . &&
		sed -n 3p "$TMP/demo.out" | grep -q '^this machine has no GPU'
	check live-no-gpu $? "topo --json rc=$jrc: $(cat "$TMP/live.json")
demo rc=$drc stderr: $(head -3 "$TMP/demo.err") stdout line 3: $(sed -n 3p "$TMP/demo.out")"
elif [ "$rc" = 0 ] && grep -q '^GPU0' "$TMP/live.out"; then
	check live-no-gpu 0 "" # a machine with a GPU: the matrix is there
else
	check live-no-gpu 1 "rc=$rc $(cat "$TMP/live.err")"
fi

if ! command -v lstopo-no-graphics >/dev/null 2>&1; then
	echo "skip integration/bind-live (lstopo-no-graphics absent)"
	exit 0
fi
lstopo-no-graphics --of xml >"$TMP/host.xml" 2>/dev/null
# One H100 behind the first host bridge (or first PCI device's parent).
awk 'inserted == 0 && /bridge_type="0-1"/ {
	print; print "<object type=\"PCIDev\" gp_index=\"99999\" pci_busid=\"0000:00:1f.7\" pci_type=\"0302 [10de:2330] [10de:16c1] a1\" pci_link_speed=\"0.000000\"/>";
	inserted = 1; next } { print }' "$TMP/host.xml" >"$TMP/gpu.xml"
if ! grep -q 99999 "$TMP/gpu.xml"; then
	echo "skip integration/bind-live (this machine shows no PCI host bridge to hwloc)"
	exit 0
fi

# the added GPU, as NVML would list it on this machine
printf 'gpu 00000000:00:1f.7\nname NVIDIA H100 80GB HBM3\n' >"$TMP/gpu.nvml"
gbind() {
	GPUFLEET_NVML_LIBRARY="$ROOT/$B/fake-nvml/libnvidia-ml.so.1" \
		GPUFLEET_FAKE_NVML_FIXTURE="$TMP/gpu.nvml" "$BIN" bind --nvml "$@"
}

# 1b. Recordings that are not this machine's: refused, the difference named.
"$BIN" bind --xml "$TMP/gpu.xml" --this-system --gpus 0 -- true \
	>/dev/null 2>"$TMP/err"
rc=$?
[ "$rc" = 1 ] && grep -q "is not a recording of this machine: GPU 0000:00:1f.7 recorded, not here (1 of 1 recorded GPUs not in sysfs)" "$TMP/err"
check bind-live-gpu-not-here $? "rc=$rc $(cat "$TMP/err")"
SH=${GPUFLEET_SHARED:-$ROOT/../shared}
FOREIGN="$SH/topologies/hwloc-xml/open-mpi_hwloc/32em64t-2n8c2t-pci-wholeio.xml"
if [ -f "$FOREIGN" ]; then
	"$BIN" bind --xml "$FOREIGN" --this-system --gpus 0 -- true \
		>/dev/null 2>"$TMP/err"
	rc=$?
	[ "$rc" = 1 ] && grep -q "is not a recording of this machine: .*CPUs 0-31 recorded" "$TMP/err" &&
		grep -q "host name 'conan' recorded" "$TMP/err"
	check bind-live-foreign $? "rc=$rc $(cat "$TMP/err")"
else
	echo "skip integration/bind-live-foreign ($FOREIGN absent: set GPUFLEET_SHARED)"
fi

ncpu=$(getconf _NPROCESSORS_ONLN)
all=$(grep Cpus_allowed_list /proc/self/status | awk '{print $2}')

# 2. --cpus 1: the child runs on exactly the one CPU the plan names.
plan=$(gbind --dry-run --json --xml "$TMP/gpu.xml" --this-system \
	--gpus 0 --cpus 1 2>&1)
want=$(printf '%s\n' "$plan" | sed -n 's/.*"cpus": "\(.*\)".*/\1/p')
got=$(gbind --xml "$TMP/gpu.xml" --this-system --gpus 0 --cpus 1 -- \
	sh -c 'grep Cpus_allowed_list /proc/self/status' 2>&1 | awk '{print $2}')
[ -n "$want" ] && [ "$got" = "$want" ]
check bind-live-one-cpu $? "plan=$want got=$got"

# 3. All local CPUs, and the environment reaches the command.
out=$(gbind --xml "$TMP/gpu.xml" --this-system --gpus 0 -- \
	sh -c 'grep Cpus_allowed_list /proc/self/status; env' 2>&1)
got=$(printf '%s\n' "$out" | awk '/Cpus_allowed_list/ {print $2}')
printf '%s\n' "$out" | grep -q '^CUDA_VISIBLE_DEVICES=0$' &&
	printf '%s\n' "$out" | grep -q '^CUDA_DEVICE_ORDER=PCI_BUS_ID$' &&
	[ "$got" = "$all" ]
check bind-live-env $? "cpus=$got (expected $all of $ncpu) $out"

# 4. A command that does not exist: exit 1, named.
gbind --xml "$TMP/gpu.xml" --this-system --gpus 0 -- \
	/nonexistent/cmd >/dev/null 2>"$TMP/err"
rc=$?
[ "$rc" = 1 ] && grep -q "cannot run '/nonexistent/cmd'" "$TMP/err"
check bind-live-bad-command $? "rc=$rc $(cat "$TMP/err")"
