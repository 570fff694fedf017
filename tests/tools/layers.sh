#!/bin/sh
# The layering rule (docs/INTERNALS.md): a room includes only from its
# own floor and those below; the core does no I/O.  Reads every #include
# under src/ and include/, maps each file to its room, and checks the
# table below.  Prints "ok lint/layers" or "FAIL lint/layers" with each
# breach.  Run from anywhere.
#   sh tests/tools/layers.sh --rooms       the rooms of the table, one a
#                                          line (tests/tools/maps.sh)
#   sh tests/tools/layers.sh --room PATH   the room of PATH (under src/)
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT" || exit 1

# room of a path under src/ or of a public header
room() {
	case "$1" in
	util/* | */util/*) R="util" ;;
	core/node/* | */core/node/*) R="node" ;;
	core/place/* | */core/place/*) R="place" ;;
	core/mig/* | */core/mig/*) R="migcore" ;;
	core/jobs/* | */core/jobs/*) R="jobs" ;;
	core/scale/* | */core/scale/*) R="scale" ;;
	core/charge/* | */core/charge/*) R="charge" ;;
	gpufleet/charge.h) R="charge" ;;
	gpufleet/err.h | gpufleet/bitmap.h | gpufleet/rng.h) R="util" ;;
	gpufleet/node.h | gpufleet/link.h | gpufleet/catalog.h | \
		gpufleet/template.h | gpufleet/findings.h | gpufleet/bind.h | \
		gpufleet/gpu_topo.h)
		R=node ;;
	gpufleet/cluster.h | gpufleet/req.h | gpufleet/sched.h | \
		gpufleet/frag.h | gpufleet/workload.h)
		R=place ;;
	gpufleet/mig.h | gpufleet/mig_plan.h | gpufleet/mig_propose.h) R="migcore" ;;
	gpufleet/sim.h) R="sim" ;;
	gpufleet/scale.h) R="scale" ;;
	gpufleet/*) R="jobs" ;;
	topo/* | */topo/*) R="topo" ;;
	mig/* | */mig/*) R="mig" ;;
	telemetry/* | */telemetry/*) R="telemetry" ;;
	trace/* | */trace/*) R="trace" ;;
	sim/* | */sim/*) R="sim" ;;
	server/* | */server/*) R="server" ;;
	autoscale/* | */autoscale/*) R="autoscale" ;;
	store/* | */store/*) R="store" ;;
	nodeproto/* | */nodeproto/*) R="nodeproto" ;;
	controller/* | */controller/*) R="controller" ;;
	agent/* | */agent/*) R="agent" ;;
	chargeback/* | */chargeback/*) R="chargeback" ;;
	slurm/* | */slurm/*) R="slurm" ;;
	k8s/* | */k8s/*) R=k8s ;;
	cli/* | */cli/*) R="cli" ;;
	*) R="unknown" ;;
	esac
}

# rooms a room may include (its own is always allowed)
allowed() {
	case "$1" in
	util) A="" ;;
	node) A="util" ;;
	place) A="util node" ;;
	migcore) A="util" ;;
	jobs) A="util node place migcore" ;;
	scale) A="util" ;;
	charge) A="util node migcore" ;;
	topo) A="util node" ;;
	mig) A="util migcore topo" ;;
	telemetry) A="util node migcore topo server" ;;
	trace) A="util node place migcore jobs" ;;
	sim) A="util node place migcore jobs scale trace" ;;
	server) A="util" ;;
	autoscale) A="util scale server" ;;
	store) A="util node place migcore jobs" ;;
	nodeproto) A="util node place migcore jobs" ;;
	# the node agent: its service, worker and link
	agent) A="util node place migcore jobs topo mig telemetry server nodeproto" ;;
	chargeback) A="util node migcore charge jobs store" ;;
	slurm) A="util node place topo charge chargeback" ;;
	k8s) A="util node place migcore jobs scale server" ;;
	controller) A="util node place migcore jobs scale topo mig telemetry trace server store nodeproto autoscale charge chargeback k8s" ;;
	cli) A="util node place migcore jobs scale topo mig telemetry trace sim server store controller agent nodeproto autoscale charge chargeback slurm k8s" ;;
	esac
}

case "${1:-}" in
--rooms) # the table's rows, read from this file's allowed() below
	sed -n '/^allowed() {/,/^}/s/^[[:space:]]*\([a-z][a-z0-9_]*\))[[:space:]].*/\1/p' \
		"$ROOT/tests/tools/layers.sh"
	exit 0
	;;
--room)
	p=${2:-}
	p=${p#./}
	p=${p#src/}
	p=${p#include/}
	room "$p"
	echo "$R"
	exit 0
	;;
esac

# one pass over every file: "F FILE" as it starts, then "I FILE HEADER"
# for each include of ours (a fork per file or include cost 17 s of CPU)
files=$(find src include -name '*.[ch]' | sort)
# shellcheck disable=SC2086
pairs=$(awk 'FNR == 1 { print "F", FILENAME }
	/^#include ["<](gpufleet\/|[a-z]*\/)/ {
		h = $2; gsub(/[<>"]/, "", h); print "I", FILENAME, h }' $files)
bad=""
from=unknown
ok=""
core=""
while read -r kind f inc; do
	rel=${f#src/}
	rel=${rel#include/}
	if [ "$kind" = F ]; then
		room "$rel"
		from=$R
		if [ "$from" = unknown ]; then
			bad="$bad
$f: in no room (add it to tests/tools/layers.sh)"
		fi
		allowed "$from"
		ok=" $from $A "
		case "$from" in
		node | place | migcore | jobs | scale | charge) core="$core $f" ;;
		esac
		continue
	fi
	[ "$from" = unknown ] && continue
	room "$inc"
	to=$R
	[ "$to" = unknown ] && continue # system headers (sys/, libxml/)
	case "$ok" in
	*" $to "*) ;;
	*) bad="$bad
$f ($from) includes $inc ($to)" ;;
	esac
done <<EOF2
$pairs
EOF2
# the core does no I/O and reads no clock or environment
# shellcheck disable=SC2086
hits=$(grep -n 'fopen\|[^n]printf(\|fputs\|socket(\|getenv\|clock_gettime\|[^_]time(\|pthread_\|rand()' $core |
	grep -v '^[^:]*:[0-9]*: *\*\|snprintf\|vsnprintf' | sed 's/^\([^:]*\):/\1: I\/O in the core: /')
[ -n "$hits" ] && bad="$bad
$hits"
if [ -z "$bad" ]; then
	echo "ok lint/layers"
else
	echo "FAIL lint/layers"
	printf '%s\n' "$bad" | sed '/^$/d' | sed 's/^/    /'
	exit 1
fi
