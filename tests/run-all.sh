#!/bin/sh
# Run every test of each build tree given (default: build), JOBS at a
# time, and end with one line "N passed, N failed, N skipped".
#   sh tests/run-all.sh [-j N] [TREE...]
# JOBS (or -j N) is how many tests run at once: twice the CPUs online by
# default.  Each test is one job:
#   unit tests      TREE/tests/test_*   (cmocka; each case counts)
#   golden tests    tests/golden/run.sh (in GOLDEN_SHARDS slices; each
#                   case counts)
#   integration     tests/integration/*.sh
#   fuzz            TREE/tests/xml_mutate (where built)
#   fuzz corpora    TREE/tests/fuzz/replay_* (where built): each corpus
#                   counts
# What runs where (CONTRIBUTING.md, "Tests"): the first tree runs
# everything; a later tree (a sanitizer tree) runs the same but for the
# integration tests in ONCE below, whose evidence a second tree does not
# add; a tree whose name ends in -tsan runs only the unit tests that
# start threads (TSAN_TESTS).
# Jobs start longest first (TREE/tests/times, written by the last run);
# their output is printed tree by tree in a fixed order once all are
# done, then the failures by name, then the count.
# RUN_ONLY=REGEX runs only the jobs whose KIND/NAME matches (unit/test_util,
# golden/1/8, int/serve.sh, xml/xml_mutate, fuzz/NAME, lint/cppcheck,
# lint/layers, ...: LINTS below).
# Run from anywhere; paths are relative to the repository root.
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT" || exit 1
export HWLOC_HIDE_ERRORS=2
# third-party leaks the sanitizer build must not fail on (see the file)
export LSAN_OPTIONS="suppressions=$ROOT/tests/lsan.supp:print_suppressions=0"
# ASan's default, fast (frame-pointer) stacks: the slow unwinder made
# every malloc walk DWARF (test_report_html: 30 s of CPU instead of 3);
# no leak report here needs a stack through hwloc's plugins any more
export ASAN_OPTIONS="${ASAN_OPTIONS:-}"
# a race makes the test binary exit non-zero (counted as a failure, the
# report in its log); second_deadlock_stack for lock-order reports
export TSAN_OPTIONS="second_deadlock_stack=1 history_size=4"
SHARED=${GPUFLEET_SHARED:-$ROOT/../shared}
export GPUFLEET_SHARED="$SHARED"

# Integration tests run in the first tree only, and why a sanitizer tree
# would add nothing:
#   slurm.sh       drives real slurmctld/slurmd; the code it loads into
#                  them (the SPANK plugin) is never sanitized, in any tree
#   install.sh     copies the built binary and units: no code of ours runs
#                  beyond `-h`
#   hwloc_plugins.sh, bind_live.sh   ask the OS (ld.so, sched_getaffinity)
#                  what happened; the same calls run in the unit tests
#   chargeback.sh, report_html.sh    a headless browser renders our pages;
#                  the renderers run under the sanitizers in the goldens
#                  and unit tests (test_report_html, test_charge)
#   autoscale_live.sh   waits on real Prometheus scrape intervals; the
#                  loop's code is in test_autoscale and the goldens
ONCE="slurm.sh install.sh hwloc_plugins.sh bind_live.sh chargeback.sh
report_html.sh autoscale_live.sh"
GOLDEN_SHARDS=${GOLDEN_SHARDS:-8}

# ---- the lint: jobs beside the tests -----------------------------------
# one configuration, the debug build's (GF_DEBUG=1: its checkers are
# code too): cppcheck's default tries every #if combination of each file,
# 59 s of CPU against 12, for a handful of #if lines the compilers of
# the three trees see both ways
lint_cppcheck() {
	if ! command -v cppcheck >/dev/null 2>&1; then
		echo "skip lint/cppcheck (not installed)"
	elif out=$(cppcheck -q --error-exitcode=1 \
		--enable=warning,performance,portability --inline-suppr \
		-DGF_DEBUG=1 -Iinclude -Isrc src 2>&1); then
		echo "ok lint/cppcheck"
	else
		echo "FAIL lint/cppcheck"
		printf '%s\n' "$out" | head -20 | sed 's/^/    /'
	fi
}
lint_format() {
	files=$(find src include tests bench -name '*.[ch]' | sort)
	# shellcheck disable=SC2086
	if ! command -v clang-format >/dev/null 2>&1; then
		echo "skip lint/clang-format (not installed)"
	elif out=$(clang-format --dry-run -Werror $files 2>&1); then
		echo "ok lint/clang-format"
	else
		echo "FAIL lint/clang-format (make format fixes it)"
		printf '%s\n' "$out" | head -20 | sed 's/^/    /'
	fi
}
# the tree's own checks (tests/tools), each its own job
lint_layers() { sh tests/tools/layers.sh; }
lint_fnsize() { sh tests/tools/fnsize.sh; }
lint_snprintf() { sh tests/tools/snprintf.sh; }
lint_mustcheck() { sh tests/tools/mustcheck.sh; }
lint_basenames() { sh tests/tools/basenames.sh; }
lint_maps() { sh tests/tools/maps.sh; }
lint_cycles() { python3 tests/tools/cycles.py "$1"; } # $1: the first tree
lint_selftest() { sh tests/tools/lint_selftest.sh; }
lint_evidence() { sh tests/tools/evidence.sh; }
LINTS="cppcheck format layers fnsize snprintf mustcheck basenames maps cycles
selftest evidence"

# ---- one job (the runner calls itself through xargs) -----------------
# --job ID TREE KIND NAME: runs it with stdout in WORK/ID.out, stderr in
# WORK/ID.err, then the exit status and seconds in WORK/ID.rc
if [ "${1:-}" = --job ]; then
	id=$2 B=$3 kind=$4 name=$5
	o="$WORK/$id"
	# a later tree's integration test may run a smaller sample of what
	# the first tree runs in full (autoscale_ref.sh)
	GF_LATER_TREE=0
	[ "$B" != "$FIRST" ] && GF_LATER_TREE=1
	export GF_LATER_TREE
	t0=$(date +%s)
	case "$kind" in
	unit) "$B/tests/$name" >"$o.out" 2>"$o.err" ;;
	golden) SHARD=$name sh tests/golden/run.sh "$B" >"$o.out" 2>"$o.err" ;;
	int) sh "tests/integration/$name" "$B" >"$o.out" 2>"$o.err" ;;
	xml) "$B/tests/xml_mutate" "$SHARED" 50 >"$o.out" 2>"$o.err" ;;
	fuzz) sh tests/fuzz/replay.sh "$B" "$name" >"$o.out" 2>"$o.err" ;;
	lint) lint_"$name" "$B" >"$o.out" 2>"$o.err" ;;
	esac
	rc=$?
	# the CPU seconds the job's processes used (user + system), beside
	# its wall seconds: what a slot is really worth to it
	# (times in this shell, not in a $(...) subshell, which has no
	# children of its own)
	times >"$o.times"
	cpu=$(awk 'NR == 2 { for (i = 1; i <= 2; i++) {
		split($i, t, "m"); s += t[1] * 60 + t[2] } } END { printf "%d", s + 0.5 }' "$o.times")
	echo "$rc $(($(date +%s) - t0)) $cpu" >"$o.rc"
	exit 0
fi

JOBS=${JOBS:-}
if [ "${1:-}" = -j ]; then
	JOBS=$2
	shift 2
fi
# twice the CPUs by default: most jobs wait (on sockets, the disk's
# fsync, a daemon starting) far more than they compute; the report's
# "s of CPU" beside "s of jobs" shows by how much.  Three times was
# tried on 2 CPUs: 393 s for the tests once, 458 s (801 s of CPU
# against 697) on a fresh clone, where twice took 426 s: not kept
[ -n "$JOBS" ] || JOBS=$((2 * $(getconf _NPROCESSORS_ONLN 2>/dev/null || echo 2)))
[ $# -eq 0 ] && set -- build
[ -d "$SHARED/topologies" ] ||
	echo "note: shared data absent at $SHARED (set GPUFLEET_SHARED); tests that need it are skipped"
WORK=$(mktemp -d)
export WORK SHARED
trap 'rm -rf "$WORK"' EXIT
# A version manager's shim (pyenv, asdf) first in PATH is a shell script
# that runs a dozen more before Python starts: on the CI image each
# `python3` cost 0.8 s of CPU against 0.08 for the interpreter itself,
# and the tests call it hundreds of times. Ask it once which
# interpreter it means and put that one's directory first.
shim=$(command -v python3 2>/dev/null) || shim=
py=
if [ -n "$shim" ] && [ "$(head -c 2 "$shim")" = "#!" ]; then
	py=$(python3 -c 'import sys; print(sys.executable)' 2>/dev/null) || py=
fi
if [ -n "$py" ] && [ -x "$py" ] && [ -x "${py%/*}/python3" ]; then
	PATH="${py%/*}:$PATH"
	export PATH
fi
: >"$WORK/tally"
: >"$WORK/times"

# ---- the jobs: "ID TREE KIND NAME", in the order they are reported ----
n=0
add() {
	if [ -n "${RUN_ONLY:-}" ] && ! echo "$2/$3" | grep -Eq "$RUN_ONLY"; then
		return 0
	fi
	n=$((n + 1))
	echo "$(printf '%04d' $n) $1 $2 $3" >>"$WORK/jobs"
}
first=$1
FIRST=$1
export FIRST
TREES="$*"
for B in "$@"; do
	case "$B" in
	*-tsan) # the Makefile builds only the tests that start threads there
		for t in "$B"/tests/test_*; do
			[ -x "$t" ] && add "$B" unit "${t##*/}"
		done
		continue
		;;
	esac
	for t in "$B"/tests/test_*; do
		[ -x "$t" ] && add "$B" unit "${t##*/}"
	done
	i=1
	while [ $i -le "$GOLDEN_SHARDS" ]; do
		add "$B" golden "$i/$GOLDEN_SHARDS"
		i=$((i + 1))
	done
	for t in tests/integration/*.sh; do
		t=${t##*/}
		if [ "$B" != "$first" ]; then
			case " $(echo $ONCE) " in *" $t "*) continue ;; esac
		fi
		add "$B" int "$t"
	done
	[ -x "$B/tests/xml_mutate" ] && add "$B" xml xml_mutate
	for t in "$B"/tests/fuzz/replay_*; do
		[ -x "$t" ] && add "$B" fuzz "${t##*/replay_}"
	done
done
for t in $LINTS; do
	add "$first" lint "$t"
done
[ -f "$WORK/jobs" ] || : >"$WORK/jobs"

# longest first: last run's seconds (TREE/tests/times), else a guess
while read -r id B kind name; do
	s=$(awk -v k="$kind/$name" '$1 == k { s = $2 } END { print s }' \
		"$B/tests/times" 2>/dev/null)
	if [ -z "$s" ]; then # no times yet: seconds seen on a loaded 2-CPU box
		case "$kind/$name" in
		lint/cppcheck) s=90 ;;
		int/cluster.sh | int/autoscale_ref.sh) s=300 ;;
		int/slurm.sh | int/chargeback.sh | int/serve.sh) s=200 ;;
		unit/test_store | unit/test_serve_* | unit/test_replay | \
			unit/test_report_html | unit/test_sim | unit/test_agent | \
			unit/test_nodeproto | unit/test_tls) s=30 ;;
		unit/*) s=5 ;; golden/*) s=40 ;; lint/*) s=10 ;; *) s=30 ;;
		esac
	fi
	echo "$s $id $B $kind $name"
done <"$WORK/jobs" | sort -k1,1nr | cut -d' ' -f2- >"$WORK/order"
# Jobs that wait by design start at once beside the JOBS slots and take
# none: cluster_e2e.py's controller outage (two minutes in the first
# tree, issue 19) held a slot for 187 s on 9 s of CPU
BESIDE="int/cluster.sh"
t0=$(date +%s)
echo "== $(wc -l <"$WORK/jobs" | tr -d ' ') jobs, $JOBS at a time (and $BESIDE beside): $*"
: >"$WORK/pool"
while read -r id B kind name; do
	case " $BESIDE " in
	*" $kind/$name "*) sh "$ROOT/tests/run-all.sh" --job "$id" "$B" "$kind" "$name" & ;;
	*) echo "$id $B $kind $name" >>"$WORK/pool" ;;
	esac
done <"$WORK/order"
xargs -L 1 -P "$JOBS" sh "$ROOT/tests/run-all.sh" --job <"$WORK/pool"
wait
wall=$(($(date +%s) - t0))

# ---- the report ------------------------------------------------------
tally() { # $1 = P, F or S, $2 = how many
	i=0
	while [ $i -lt "$2" ]; do
		echo "$1" >>"$WORK/tally"
		i=$((i + 1))
	done
}
failed() { # a failing test's name, for the list at the end
	echo "$1" >>"$WORK/failed"
}
log_tail() { # a failed job's stderr, indented
	[ -s "$1.err" ] || return 0
	echo "    log ($(wc -l <"$1.err" | tr -d ' ') lines of stderr, the last 30):"
	tail -30 "$1.err" | sed 's/^/      /'
}
prev=""
while read -r id B kind name; do
	o="$WORK/$id"
	rc=255 sec=0 cpu=0 # no status: the job never finished
	[ -f "$o.rc" ] && read -r rc sec cpu <"$o.rc"
	echo "$B $kind/$name $sec $cpu" >>"$WORK/times"
	case "$kind" in
	unit) head="unit tests" ;; golden) head="golden tests" ;;
	int) head="integration tests" ;; xml) head="mutated XML" ;;
	fuzz) head="fuzz corpora" ;;
	lint) head="lint" ;;
	esac
	if [ "$kind" = lint ]; then
		[ "$head" != "$prev" ] && echo "== $head"
		prev=$head
	else
		[ "$B: $head" != "$prev" ] && echo "== $B: $head"
		prev="$B: $head"
	fi
	if [ "$kind" = unit ]; then
		out=$(cat "$o.out" "$o.err")
		p=$(printf '%s\n' "$out" | sed -n 's/.*\[  PASSED  \] \([0-9]*\) test.*/\1/p' | tail -1)
		f=$(printf '%s\n' "$out" | sed -n 's/.*\[  FAILED  \] \([0-9]*\) test.*/\1/p' | tail -1)
		s=$(printf '%s\n' "$out" | sed -n 's/.*\[  SKIPPED \] \([0-9]*\) test.*/\1/p' | tail -1)
		p=${p:-0} f=${f:-0} s=${s:-0}
		if [ "$rc" != 0 ] && [ "$f" = 0 ]; then
			f=1 # crashed, raced or died before cmocka's summary
		fi
		tally P "$p"
		tally F "$f"
		tally S "$s"
		echo "$name: $p passed, $f failed, $s skipped (${sec} s)"
		if [ "$f" != 0 ]; then
			printf '%s\n' "$out" | grep -v '^\[ RUN\|^\[       OK' | sed 's/^/    /'
			failed "$B/$name"
		fi
		continue
	fi
	nf=0
	while IFS= read -r line; do
		echo "$line"
		case "$line" in
		"ok "*) tally P 1 ;;
		"skip "*) tally S 1 ;;
		"FAIL "*)
			tally F 1
			nf=$((nf + 1))
			x=${line#FAIL }
			failed "$B/${x%% *}"
			;;
		esac
	done <"$o.out"
	if [ "$rc" != 0 ] && [ "$nf" = 0 ]; then
		echo "FAIL $kind/$name (exited $rc without a FAIL line)"
		tally F 1
		failed "$B/$kind/$name"
		nf=1
	fi
	[ "$nf" != 0 ] && log_tail "$o"
done <"$WORK/jobs"
for B in $TREES; do # for the next run's order
	[ -d "$B/tests" ] &&
		awk -v b="$B" '$1 == b { print $2, $3, $4 }' "$WORK/times" \
			>"$B/tests/times" 2>/dev/null
done

jobsum=$(awk '{ s += $3 } END { print s + 0 }' "$WORK/times")
cpusum=$(awk '{ s += $4 } END { print s + 0 }' "$WORK/times")
echo "== time: ${wall} s for the tests ($jobsum s of jobs, $cpusum s of CPU, $JOBS at a time); slowest:"
sort -k3,3nr "$WORK/times" | head -5 | awk '{ print "    " $1 "/" $2 " " $3 " s" }'
if [ -s "$WORK/failed" ]; then
	echo "== failed ($(wc -l <"$WORK/failed" | tr -d ' ')):"
	sed 's/^/    /' "$WORK/failed"
fi
pass=$(grep -c P "$WORK/tally")
fail=$(grep -c F "$WORK/tally")
skip=$(grep -c S "$WORK/tally")
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" = 0 ]
