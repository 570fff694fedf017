#!/bin/sh
# The cluster end to end on loopback (tests/integration/cluster_e2e.py
# says what it checks).  Prints "ok|FAIL|skip integration/cluster-NAME".
B=${1:-build}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
if ! command -v python3 >/dev/null 2>&1; then
	echo "skip integration/cluster (python3 absent: make deps installs it)"
	exit 0
fi
exec python3 "$ROOT/tests/integration/cluster_e2e.py" "$B"
