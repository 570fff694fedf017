#!/bin/sh
# `gpufleet autoscale recommend` against an independent reference model
# written in Python from the reference's rules (tests/tools/hpa_ref.py,
# sharing no code with core/scale):
#   autoscale-ref-vectors   the model itself gives the published traces
#                           A, B and C (so it is a model worth trusting)
#   autoscale/ref-random    hundreds of random HPAs (legacy, defaulted and
#                           random behaviors: windows, selectPolicy,
#                           policies, tolerances; Value and AverageValue;
#                           min 0) and KEDA ScaledObjects over random
#                           traces, start counts and sync spacings, the
#                           two compared sample by sample
# A failing case is kept on disk and named.  Needs python3 with PyYAML.
# Prints "ok|FAIL|skip ..." lines.
set -u
B=${1:-build}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BIN="$ROOT/$B/gpufleet"
REF="$ROOT/tests/tools/hpa_ref.py"
FX="$ROOT/tests/fixtures/autoscale"
if ! python3 -c 'import yaml' 2>/dev/null; then
	echo "skip integration/autoscale-ref (python3 with PyYAML absent)"
	exit 0
fi
want_a='{"replicas": [1, 1, 4, 8, 16, 20, 20, 20, 20, 20, 20, 20, 20, 20, 20, 20, 20, 20, 20, 20, 20, 20, 20, 20, 20, 6, 3]}'
want_b='{"replicas": [1, 1, 5, 10, 20, 20, 20, 20, 20, 20, 20, 20, 20, 20, 20, 20, 20, 20, 20, 20, 20, 20, 20, 20, 6, 3, 2]}'
want_c='{"replicas": [1, 1, 5, 10, 20, 20, 20, 20, 19, 19, 18, 18, 17, 17, 16, 16, 15, 15, 14, 14, 13, 13, 12, 12, 11, 11, 10]}'
bad=""
for v in a:legacy b:default c:pods; do
	k=${v%%:*} f=${v#*:}
	eval "want=\$want_$k"
	got=$(python3 "$REF" recommend --hpa "$FX/hpa-$f.yaml" --samples "$FX/ref-trace.csv" --json)
	[ "$got" = "$want" ] || bad="$bad
trace $k: $got"
done
if [ -z "$bad" ]; then echo "ok integration/autoscale-ref-vectors"; else
	echo "FAIL integration/autoscale-ref-vectors"
	printf '%s\n' "$bad" | sed '/^$/d;s/^/    /'
fi
# two seeds: a fixed one, and one per day (a new set every day, named);
# the first tree of tests/run-all.sh compares 400 + 200 cases, a later
# (sanitizer) tree the first eighth of each set (GF_LATER_TREE=1: a case
# costs 0.24 s of CPU there against 0.07, and the sanitizers look for
# memory errors, which the first cases' paths find as well as the rest)
n1=400 n2=200
[ "${GF_LATER_TREE:-0}" = 1 ] && n1=50 n2=25
python3 "$REF" compare --gpufleet "$BIN" --cases $n1 --seed 14 | sed 's/^\(ok\|FAIL\) autoscale/\1 integration\/autoscale/'
day=$(date -u +%Y%m%d)
python3 "$REF" compare --gpufleet "$BIN" --cases $n2 --seed "$day" --keda 0.3 | sed 's/^\(ok\|FAIL\) autoscale/\1 integration\/autoscale/'
