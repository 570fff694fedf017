#!/bin/sh
# hwloc's plugins stay unloaded: with Debian's libhwloc-plugins and an
# OpenCL platform (pocl) installed, a live `gpufleet topo` must not dlopen
# hwloc's OpenCL/GL/PCI plugins (the OpenCL one drags in LLVM: 60 MiB and
# a quarter second per run).  glibc's LD_DEBUG=files lists every object a
# process loads; the control run with GPUFLEET_HWLOC_PLUGINS=1 shows the
# check can see a plugin load.  Prints "ok|FAIL|skip integration/NAME".
set -u
B=${1:-build}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BIN="$ROOT/$B/gpufleet"
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
export GPUFLEET_NVML_LIBRARY=/nonexistent/libnvidia-ml.so.1

plugin=$(ls /usr/lib/*/hwloc/hwloc_opencl.so 2>/dev/null | head -1)
if [ -z "$plugin" ]; then
	echo "skip integration/hwloc-no-plugins (libhwloc-plugins not installed)"
	exit 0
fi
LD_DEBUG=files "$BIN" topo >/dev/null 2>"$TMP/ours"
GPUFLEET_HWLOC_PLUGINS=1 LD_DEBUG=files "$BIN" topo >/dev/null 2>"$TMP/theirs"
loaded=$(grep -c 'file=.*hwloc_\(opencl\|gl\|pci\|xml_libxml\)\.so' "$TMP/ours")
control=$(grep -c 'file=.*hwloc_opencl\.so' "$TMP/theirs")
if [ "$loaded" = 0 ] && [ "$control" -gt 0 ]; then
	echo "ok integration/hwloc-no-plugins"
else
	echo "FAIL integration/hwloc-no-plugins"
	echo "    plugin loads by gpufleet: $loaded (want 0); with GPUFLEET_HWLOC_PLUGINS=1: $control (want > 0)"
	grep 'file=.*hwloc_' "$TMP/ours" | head -5 | sed 's/^/    /'
fi
