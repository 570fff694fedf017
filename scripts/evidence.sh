#!/bin/sh
# evidence.sh - rerun every claim of docs/evidence.md and set each figure
# beside the one the page states (`make evidence`).
#   sh scripts/evidence.sh [BUILD_DIR]
# For each claim one line
#   EVIDENCE <id> <measured> <unit> doc <stated> same|DIFFERS|measured
# "same"/"DIFFERS" for the deterministic claims (simulations: the same
# inputs give the same figure on any machine), "measured" for timings
# (the page states a quiet machine's figure; yours is yours).  Ends with
# "N claims: N same, N differ, N timings, N skipped"; exits 1 when a
# deterministic claim differs.
#   EVIDENCE_ONLY=E1,E5   only those claims
#   EVIDENCE_LONG=1       also the long ones (the T sweep, 10,000 agents,
#                         Slurm beside us: tens of minutes; marked "long"
#                         on the page)
# Inputs come from ../shared (GPUFLEET_SHARED); a claim whose input is
# absent is skipped, named.
set -u
B=${1:-build}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT" || exit 1
SHARED=${GPUFLEET_SHARED:-$ROOT/../shared}
export GPUFLEET_SHARED="$SHARED"
DOC=docs/evidence.md
BIN=$B/gpufleet
A=$SHARED/traces/alibaba-gpu-v2023
AZ=$SHARED/traces/azure-llm-inference-2023
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
same=0 differ=0 timing=0 skipped=0

# the page's row of a claim: | id | claim | command | figure | kind | limits |
field() { # ID N -> the Nth column, trimmed
	awk -F'|' -v id="$1" -v n="$2" '$2 ~ "^ *" id " *$" {
		v = $(n + 1); gsub(/^ +| +$/, "", v); print v; exit }' "$DOC"
}
wanted() {
	[ -z "${EVIDENCE_ONLY:-}" ] && return 0
	case ",$EVIDENCE_ONLY," in *",$1,"*) return 0 ;; esac
	return 1
}
# report ID VALUE UNIT: compare with the page's figure (its first number)
report() {
	stated=$(field "$1" 4 | sed 's/^[^-+0-9]*\([-+]\{0,1\}[0-9][0-9.,/]*\).*/\1/')
	kind=$(field "$1" 5)
	if [ -z "$stated" ]; then
		echo "EVIDENCE $1 $2 $3 doc (no row in $DOC) DIFFERS"
		differ=$((differ + 1))
	elif [ "$kind" = timing ] || [ "$kind" = "timing, long" ]; then
		echo "EVIDENCE $1 $2 $3 doc $stated measured"
		timing=$((timing + 1))
	elif [ "$(echo "$2" | tr -d ',+')" = "$(echo "$stated" | tr -d ',+')" ]; then
		echo "EVIDENCE $1 $2 $3 doc $stated same"
		same=$((same + 1))
	else
		echo "EVIDENCE $1 $2 $3 doc $stated DIFFERS"
		differ=$((differ + 1))
	fi
}
skip() { # ID WHY
	echo "EVIDENCE $1 skipped ($2)"
	skipped=$((skipped + 1))
}
long() { # ID: a long claim runs only with EVIDENCE_LONG=1
	[ "${EVIDENCE_LONG:-0}" = 1 ] && return 0
	skip "$1" "long: EVIDENCE_LONG=1 runs it"
	return 1
}
bench() { # FILE NAME -> the value of "BENCH NAME value unit"
	awk -v n="$2" '$1 == "BENCH" && $2 == n { print $3; exit }' "$1"
}
step() { echo "# $*" >&2; }
json() { # FILE EXPR -> a Python expression over the document d
	python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
print(eval(sys.argv[2]))' "$1" "$2"
}

for f in "$BIN" "$B/bench/fgd_compare" "$B/bench/k8s_bench" \
	"$B/bench/serve_bench"; do
	if [ ! -x "$f" ]; then
		echo "evidence.sh: $f not built (make evidence builds it)" >&2
		exit 2
	fi
done

# ---- placement: the FGD experiment ------------------------------------
if wanted E1 || wanted E2; then
	if [ -r "$A/openb_node_list_gpu_node.csv" ]; then
		step "E1, E2: bench/fgd_compare over the 17 traces (2-4 minutes)"
		"$B/bench/fgd_compare" "$SHARED" >"$TMP/compare" 2>&1
		wanted E1 && report E1 "$(bench "$TMP/compare" fgd.compare.default.fgd.delta)" pp
		wanted E2 && report E2 "$(bench "$TMP/compare" fill.fgdplus.default_100)" %
	else
		wanted E1 && skip E1 "$A absent"
		wanted E2 && skip E2 "$A absent"
	fi
fi
if wanted E3; then
	if [ -r "$A/openb_node_list_gpu_node.csv" ]; then
		step "E3: bench/fgd_sweep.sh, every trace at every load (about 3 minutes)"
		sh bench/fgd_sweep.sh "$B" >"$TMP/sweep" 2>&1
		report E3 "$(bench "$TMP/sweep" fill.sweep.worst_vs_fgd)" pp
	else
		skip E3 "$A absent"
	fi
fi
if wanted E4 && long E4; then
	step "E4: bench/fgd_tsweep.sh, T chosen on 6 traces, checked on 13"
	sh bench/fgd_tsweep.sh "$B" >"$TMP/tsweep" 2>&1
	report E4 "$(bench "$TMP/tsweep" fill.tsweep.T1250.held_out)" %
fi
if wanted E5 || wanted E6; then
	if [ -r "$A/openb_pod_list_default.csv" ]; then
		step "E5, E6: simulate fill --bound on the default trace (about 30 s)"
		"$BIN" simulate fill --nodes "$A/openb_node_list_gpu_node.csv" \
			--pods "$A/openb_pod_list_default.csv" --seeds 42-51 \
			--policy fgd,fgdplus --bound --json >"$TMP/bound.json" 2>"$TMP/bound.err"
		wanted E5 && report E5 "$(json "$TMP/bound.json" '"%.2f" % d["bound"]["unallocated_pct"]["100"]')" %
		wanted E6 && report E6 "$(json "$TMP/bound.json" \
			'"%.2f" % (d["policies"]["fgdplus"]["unallocated_pct"]["mean"]["100"] - d["bound"]["unallocated_pct"]["100"])')" pp
	else
		wanted E5 && skip E5 "$A absent"
		wanted E6 && skip E6 "$A absent"
	fi
fi

# ---- autoscaling -------------------------------------------------------
if wanted E7 || wanted E8; then
	if [ -r "$AZ/AzureLLMInferenceTrace_conv.csv" ]; then
		step "E7, E8: bench/autoscale_eval.sh, both Azure traces by window (seconds)"
		sh bench/autoscale_eval.sh "$B" >"$TMP/as" 2>&1
		wanted E7 && report E7 "$(bench "$TMP/as" autoscale.eval.conv.w600.queue.gpu_hours)/$(bench "$TMP/as" autoscale.eval.conv.w600.static.gpu_hours)" gpu_h
		wanted E8 && report E8 "$(bench "$TMP/as" autoscale.eval.code.w600.queue.over_slo)/$(bench "$TMP/as" autoscale.eval.code.w600.static.over_slo)" requests
	else
		wanted E7 && skip E7 "$AZ absent"
		wanted E8 && skip E8 "$AZ absent"
	fi
fi

# ---- MIG ---------------------------------------------------------------
if wanted E9; then
	step "E9: simulate mig, H100, 400 requests"
	"$BIN" simulate mig --gpu h100-80gb --mix 1g.10gb=60,2g.20gb=25,3g.40gb=15 \
		--requests 400 --json >"$TMP/mig.json"
	report E9 "$(json "$TMP/mig.json" '"%d/%d" % (d["points"][-1]["gpus_planned"], d["points"][-1]["gpus_all_balanced"])')" gpus
fi

# ---- replay --------------------------------------------------------------
if wanted E10; then
	step "E10: simulate replay philly --load 6, FGD (about 30 s of CPU)"
	"$BIN" simulate replay philly --load 6 --policy fgd --json >"$TMP/replay.json" 2>"$TMP/replay.err"
	report E10 "$(json "$TMP/replay.json" '"%.1f" % (100 * d["policies"][0]["mean_alloc"])')" %
fi

# ---- speed (timings) ---------------------------------------------------
if wanted T1; then
	step "T1: bench/k8s_bench, filter+prioritize+bind over 5,000 nodes (1-4 minutes)"
	"$B/bench/k8s_bench" >"$TMP/k8s" 2>&1
	report T1 "$(bench "$TMP/k8s" k8s.sequence.pods_per_s)" pods/s
	echo "# beside it: kube-scheduler's CI threshold $(bench "$TMP/k8s" peer.kube_scheduler.ci_max) pods/s"
fi
if wanted T2; then
	step "T2: bench/serve_bench, one keep-alive client (1-3 minutes)"
	"$B/bench/serve_bench" >"$TMP/serve" 2>&1
	report T2 "$(bench "$TMP/serve" serve.submit.sequential_per_s)" jobs/s
fi
if wanted T3 && long T3; then
	step "T3: bench/cluster_bench, 10,000 agents (5-10 minutes)"
	GPUFLEET_BENCH_AGENTS=10000 GPUFLEET_BENCH_WINDOW_S=8 GPUFLEET_BENCH_JOBS=0 \
		GPUFLEET_BENCH_REAL_JOBS=0 "$B/bench/cluster_bench" "$BIN" \
		"$B/fake-nvml/libnvidia-ml.so.1" "$ROOT" >"$TMP/cluster" 2>&1
	report T3 "$(bench "$TMP/cluster" cluster.agents.10000.controller_rss_kib_per_agent)" KiB
fi
if wanted T4 && long T4; then
	step "T4: bench/slurm_bench.sh, sbatch loop and arrays beside ours (10-20 minutes)"
	sh bench/slurm_bench.sh "$B" >"$TMP/slurm" 2>&1
	report T4 "$(bench "$TMP/slurm" beside_slurm.gpufleet.array.all_started_s)" s
fi

total=$((same + differ + timing + skipped))
echo "$total claims: $same same, $differ differ, $timing timings, $skipped skipped"
[ "$differ" = 0 ]
