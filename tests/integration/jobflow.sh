#!/bin/sh
# Arrays, dependencies and holds end to end on loopback (issue 21;
# tests/integration/jobflow_e2e.py says what it checks).  Prints
# "ok|FAIL|skip integration/jobflow-NAME".
B=${1:-build}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
if ! command -v python3 >/dev/null 2>&1; then
	echo "skip integration/jobflow (python3 absent: make deps installs it)"
	exit 0
fi
exec python3 "$ROOT/tests/integration/jobflow_e2e.py" "$B"
