#!/bin/sh
# Golden tests: run each case in cases/*.txt and compare stdout, stderr and
# the exit status with tests/golden/expected/NAME.out.
#
# A case is one line NAME | NEEDS | ARGS, run from the shared dir (so paths
# in output are the relative ones written there).  NEEDS: "shared"
# (skipped when ../shared is absent) or "-", and ",first" after it: run
# in the first tree only (GF_LATER_TREE=1: a sanitizer tree skips it).
# In ARGS, @TMP@ is a scratch dir, @ROOT@ the repository, and
# FAKE_NVML=FIXTURE runs with the fake
# NVML and that fixture (path from the repo root, or @SHARED@/PATH in the
# shared dir, read there).  One file per command.
#   sh tests/golden/run.sh BUILD_DIR          compare
#   UPDATE=1 sh tests/golden/run.sh build     rewrite the expected files
#   ONLY=REGEX sh tests/golden/run.sh build   only the cases whose name matches
#   SHARD=I/N sh tests/golden/run.sh build    only every Nth case from the
#                                             Ith (tests/run-all.sh runs
#                                             N slices at once)
# Prints "ok golden/NAME", "FAIL golden/NAME" (with a diff) or
# "skip golden/NAME (why)" per case.
set -u
B=${1:-build}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BIN="$ROOT/$B/gpufleet"
FAKE="$ROOT/$B/fake-nvml/libnvidia-ml.so.1"
SHARED=${GPUFLEET_SHARED:-$ROOT/../shared}
EXP="$ROOT/tests/golden/expected"
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
# A small cut of the real trace, made here (never copied into the repo):
# the first 40 GPU nodes and the first 400 requests of the default list.
T="$SHARED/traces/alibaba-gpu-v2023"
if [ -f "$T/openb_pod_list_default.csv" ]; then
	head -n 41 "$T/openb_node_list_gpu_node.csv" >"$TMP/cut-nodes.csv"
	head -n 401 "$T/openb_pod_list_default.csv" >"$TMP/cut-pods.csv"
fi

cat "$ROOT"/tests/golden/cases/*.txt | grep -v '^#' | grep -v '^ *$' |
while IFS='|' read -r name needs args; do
	k=$((${k:-0} + 1))
	if [ -n "${SHARD:-}" ] &&
		[ $(((k - 1) % ${SHARD#*/} + 1)) != "${SHARD%/*}" ]; then
		continue
	fi
	name=$(echo "$name" | tr -d ' ')
	needs=$(echo "$needs" | tr -d ' ')
	if [ -n "${ONLY:-}" ] && ! echo "$name" | grep -Eq "$ONLY"; then
		continue
	fi
	case ",$needs," in
	*,first,*) # heavy under a sanitizer tree's checkers (test_replay
		# replays the same code under them on smaller cuts)
		if [ "${GF_LATER_TREE:-0}" = 1 ]; then
			echo "skip golden/$name (first tree only)"
			continue
		fi
		;;
	esac
	case ",$needs," in
	*,shared,*)
		if [ ! -d "$SHARED/topologies" ]; then
			echo "skip golden/$name (shared data absent: $SHARED)"
			continue
		fi
		;;
	esac
	args=$(echo "$args" | sed -e "s|@TMP@|$TMP|g" -e "s|@ROOT@|$ROOT|g")
	fixture=""
	case "$args" in
	*FAKE_NVML=*)
		fixture=$(echo "$args" | sed 's/.*FAKE_NVML=\([^ ]*\).*/\1/')
		args=$(echo "$args" | sed 's/ *FAKE_NVML=[^ ]* *//')
		;;
	esac
	out="$TMP/$name.out"
	(
		cd "$SHARED" 2>/dev/null || cd "$ROOT"
		if [ -n "$fixture" ]; then
			export GPUFLEET_NVML_LIBRARY="$FAKE"
			case "$fixture" in
			@SHARED@/*) fixture="$PWD/${fixture#@SHARED@/}" ;;
			*) fixture="$ROOT/$fixture" ;;
			esac
			export GPUFLEET_FAKE_NVML_FIXTURE="$fixture"
		else
			export GPUFLEET_NVML_LIBRARY=/nonexistent/libnvidia-ml.so.1
		fi
		# shellcheck disable=SC2086
		"$BIN" $args >"$out.stdout" 2>"$out.stderr"
		echo $? >"$out.rc"
	)
	# run times differ from run to run: mask them in simulation output,
	# with the padding before them (a run past 10 s is one column wider)
	case "$name" in
	mig-plan*)
		sed -E 's/[0-9]+\.[0-9] ms\)/T ms)/' "$out.stdout" >"$out.masked"
		mv "$out.masked" "$out.stdout"
		;;
	sim-replay*)
		sed -E -e 's/("wall_s": )[0-9.e+-]+/\1T/' \
			-e 's/^([a-z]+ .*[^ ]) +[0-9]+\.[0-9]{2}$/\1 T/' \
			"$out.stdout" >"$out.masked"
		mv "$out.masked" "$out.stdout"
		;;
	sim-*)
		sed -E -e 's/("wall_s": )[0-9.e+-]+/\1T/' \
			-e 's/^([A-Z][A-Za-z+]+ .*[^ ]) +[0-9]+\.[0-9]{3}$/\1 T/' \
			"$out.stdout" >"$out.masked"
		mv "$out.masked" "$out.stdout"
		;;
	esac
	# a progress line shows once a run passes a second (the sanitizer
	# tree): not part of what a case checks
	case "$name" in
	sim-*)
		grep -Ev '^gpufleet simulate [a-z]+: .*, [0-9]+\.[0-9] s$' \
			"$out.stderr" >"$out.masked"
		mv "$out.masked" "$out.stderr"
		;;
	esac
	{
		cat "$out.stdout"
		echo "--- stderr ---"
		cat "$out.stderr"
		echo "--- exit $(cat "$out.rc") ---"
	} | sed "s|$ROOT|@ROOT@|g" >"$out"
	if [ "${UPDATE:-0}" = 1 ]; then
		cp "$out" "$EXP/$name.out"
		echo "ok golden/$name (updated)"
	elif [ ! -f "$EXP/$name.out" ]; then
		echo "FAIL golden/$name (no expected file; UPDATE=1 writes it)"
	elif diff -u "$EXP/$name.out" "$out" >"$TMP/diff"; then
		echo "ok golden/$name"
	else
		echo "FAIL golden/$name"
		head -40 "$TMP/diff" | sed 's/^/    /'
	fi
done
