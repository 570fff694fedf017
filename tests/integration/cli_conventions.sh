#!/bin/sh
# Conventions every command keeps: -h prints usage on stdout, exits 0 and
# ends with the exit-status line; every error line a golden case records
# on stderr starts with "gpufleet <command>"; an unknown GPUFLEET_LOG
# level is reported, not silently ignored.
# Prints "ok|FAIL integration/NAME" lines.
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
		printf '%s\n' "$3" | head -20 | sed 's/^/    /'
	fi
}

# 1. -h everywhere
bad=""
for c in "" topo bind simulate "simulate fill" "simulate mig" mig \
	"mig plan" "mig validate" "mig apply" agent diagnose demo autoscale \
	"autoscale recommend" "autoscale run" "autoscale manifests" \
	"simulate autoscale" slurm "slurm gres" "slurm advise" "slurm usage"; do
	# shellcheck disable=SC2086
	"$BIN" $c -h >"$TMP/h.out" 2>"$TMP/h.err"
	rc=$?
	last=$(grep -v '^ *$' "$TMP/h.out" | tail -1)
	case "$rc:$last" in
	"0:exit status: "*) [ -s "$TMP/h.err" ] && bad="$bad
'gpufleet $c -h' wrote on stderr: $(head -1 "$TMP/h.err")" ;;
	*) bad="$bad
'gpufleet $c -h': exit $rc, last line '$last'" ;;
	esac
done
check cli-help-exit-status "$([ -z "$bad" ]; echo $?)" "$bad"

# 2. error lines name their command: each stderr line a case records (not
# blank, not indented) starts with "gpufleet CMD" and a blank or a colon
# (one awk over the cases: a process per line made this test minutes long)
awk -v dir="$ROOT/tests/golden/expected" '
/^#/ || /^ *$/ { next }
{
	split($0, f, "|")
	name = f[1]; gsub(/ /, "", name)
	args = f[3]; gsub(/FAKE_NVML=[^ ]*/, "", args)
	split(args, w, " "); cmd = w[1]
	file = dir "/" name ".out"
	if ((getline line < file) <= 0) next
	in_err = 0
	p = "gpufleet " cmd
	do {
		if (line == "--- stderr ---") { in_err = 1; continue }
		if (line ~ /^--- exit/) break
		if (!in_err || line ~ /^ *$/ || line ~ /^  /) continue
		c = substr(line, length(p) + 1, 1)
		if (index(line, p) == 1 && (c == " " || c == ":")) continue
		print name ": " line
	} while ((getline line < file) > 0)
	close(file)
}' "$ROOT"/tests/golden/cases/*.txt >"$TMP/bad-lines"
check cli-error-prefix "$([ ! -s "$TMP/bad-lines" ]; echo $?)" \
	"$(cat "$TMP/bad-lines")"

# 3. GPUFLEET_LOG: a bad level is said; debug says what was read
GPUFLEET_LOG=loud "$BIN" topo --template hgx-h100 >/dev/null 2>"$TMP/log.err"
GPUFLEET_LOG=debug "$BIN" topo --template hgx-h100 >/dev/null 2>"$TMP/dbg.err"
grep -q "GPUFLEET_LOG='loud' is not a level" "$TMP/log.err" &&
	grep -q 'debug: topo: template hgx-h100: 8 GPUs' "$TMP/dbg.err"
check cli-log-level $? "$(cat "$TMP/log.err" "$TMP/dbg.err")"
