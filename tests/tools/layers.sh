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
	util/* | */util/*) echo util ;;
	core/node/* | */core/node/*) echo node ;;
	core/place/* | */core/place/*) echo place ;;
	core/mig/* | */core/mig/*) echo migcore ;;
	core/jobs/* | */core/jobs/*) echo jobs ;;
	core/scale/* | */core/scale/*) echo scale ;;
	core/charge/* | */core/charge/*) echo charge ;;
	gpufleet/charge.h) echo charge ;;
	gpufleet/err.h | gpufleet/bitmap.h | gpufleet/rng.h) echo util ;;
	gpufleet/node.h | gpufleet/link.h | gpufleet/catalog.h | \
		gpufleet/template.h | gpufleet/findings.h | gpufleet/bind.h | \
		gpufleet/gpu_topo.h)
		echo node ;;
	gpufleet/cluster.h | gpufleet/req.h | gpufleet/sched.h | \
		gpufleet/frag.h | gpufleet/workload.h)
		echo place ;;
	gpufleet/mig.h | gpufleet/mig_plan.h | gpufleet/mig_propose.h) echo migcore ;;
	gpufleet/sim.h) echo sim ;;
	gpufleet/scale.h) echo scale ;;
	gpufleet/*) echo jobs ;;
	topo/* | */topo/*) echo topo ;;
	mig/* | */mig/*) echo mig ;;
	telemetry/* | */telemetry/*) echo telemetry ;;
	trace/* | */trace/*) echo trace ;;
	sim/* | */sim/*) echo sim ;;
	server/* | */server/*) echo server ;;
	autoscale/* | */autoscale/*) echo autoscale ;;
	store/* | */store/*) echo store ;;
	nodeproto/* | */nodeproto/*) echo nodeproto ;;
	controller/* | */controller/*) echo controller ;;
	agent/* | */agent/*) echo agent ;;
	chargeback/* | */chargeback/*) echo chargeback ;;
	slurm/* | */slurm/*) echo slurm ;;
	k8s/* | */k8s/*) echo k8s ;;
	cli/* | */cli/*) echo cli ;;
	*) echo unknown ;;
	esac
}

# rooms a room may include (its own is always allowed)
allowed() {
	case "$1" in
	util) echo "" ;;
	node) echo "util" ;;
	place) echo "util node" ;;
	migcore) echo "util" ;;
	jobs) echo "util node place migcore" ;;
	scale) echo "util" ;;
	charge) echo "util node migcore" ;;
	topo) echo "util node" ;;
	mig) echo "util migcore topo" ;;
	telemetry) echo "util node migcore topo server" ;;
	trace) echo "util node place migcore jobs" ;;
	sim) echo "util node place migcore jobs scale trace" ;;
	server) echo "util" ;;
	autoscale) echo "util scale server" ;;
	store) echo "util node place migcore jobs" ;;
	nodeproto) echo "util node place migcore jobs" ;;
	# the node agent: its service, worker and link
	agent) echo "util node place migcore jobs topo mig telemetry server nodeproto" ;;
	chargeback) echo "util node migcore charge jobs store" ;;
	slurm) echo "util node place topo charge chargeback" ;;
	k8s) echo "util node place migcore jobs scale server" ;;
	controller) echo "util node place migcore jobs scale topo mig telemetry trace server store nodeproto autoscale charge chargeback k8s" ;;
	cli) echo "util node place migcore jobs scale topo mig telemetry trace sim server store controller agent nodeproto autoscale charge chargeback slurm k8s" ;;
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
	exit 0
	;;
esac

bad=""
for f in $(find src include -name '*.[ch]' | sort); do
	rel=${f#src/}
	rel=${rel#include/}
	from=$(room "$rel")
	if [ "$from" = unknown ]; then
		bad="$bad
$f: in no room (add it to tests/tools/layers.sh)"
		continue
	fi
	ok=" $from $(allowed "$from") "
	for inc in $(sed -n 's/^#include ["<]\(gpufleet\/[^">]*\|[a-z]*\/[^">]*\)[">].*/\1/p' "$f"); do
		to=$(room "$inc")
		[ "$to" = unknown ] && continue # system headers (sys/, libxml/)
		case "$ok" in
		*" $to "*) ;;
		*) bad="$bad
$f ($from) includes $inc ($to)" ;;
		esac
	done
	# the core does no I/O and reads no clock or environment
	case "$from" in
	util | unknown) ;;
	node | place | migcore | jobs | scale | charge)
		hits=$(grep -n 'fopen\|[^n]printf(\|fputs\|socket(\|getenv\|clock_gettime\|[^_]time(\|pthread_\|rand()' "$f" | grep -v '^[0-9]*: *\*\|snprintf\|vsnprintf')
		[ -n "$hits" ] && bad="$bad
$f: I/O in the core: $hits"
		;;
	esac
done
if [ -z "$bad" ]; then
	echo "ok lint/layers"
else
	echo "FAIL lint/layers"
	printf '%s\n' "$bad" | sed '/^$/d' | sed 's/^/    /'
	exit 1
fi
