#!/bin/sh
# make install and make uninstall into a DESTDIR (never the real system),
# from the build tree given, which is never rebuilt (make -o).
#   install-files          the binary (0755, the build's own), the two
#                          units and the two environment files (0644),
#                          and nothing else
#   install-substituted    no @NAME@ left; ExecStart and EnvironmentFile
#                          point at the installed paths
#   install-env-flags      every flag the environment files and the
#                          units' defaults pass is one the command takes
#   install-no-rebuild     nothing in the build tree written by install
#   install-keeps-edits    a second install keeps an edited environment
#                          file and restores an edited unit
#   install-dirs           the default PREFIX (/usr/local, its etc) and
#                          SYSTEMDUNITDIR and SYSCONFDIR overridden
#   install-uninstall      uninstall removes what install put, except an
#                          edited environment file
#   install-systemd-verify systemd-analyze verify on the installed units,
#                          ExecStart pointed at the DESTDIR copy; silent
# Prints "ok|FAIL|skip integration/NAME" lines.
set -u
B=${1:-build}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BIN="$ROOT/$B/gpufleet"
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
D="$TMP/root"
UNITS="gpufleet-agent.service gpufleet-serve.service"

check() { # name, condition-result (0 ok), detail
	if [ "$2" = 0 ]; then echo "ok integration/$1"; else
		echo "FAIL integration/$1"
		printf '%s\n' "$3" | sed '/./,$!d' | head -20 | sed 's/^/    /'
	fi
}

if [ ! -x "$BIN" ]; then
	check install 1 "$BIN absent: run make B=$B tests-build first"
	exit 0
fi

# run_make DESTDIR TARGET VAR=VALUE...: make in the repository, the
# build tree as it is (-o), nothing inherited from a calling make or
# from the environment's install variables.
run_make() {
	dest=$1 target=$2
	shift 2
	env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL -u PREFIX -u BINDIR \
		-u SYSCONFDIR -u SYSTEMDUNITDIR -u DESTDIR \
		make --no-print-directory -C "$ROOT" -o "$B/gpufleet" \
		B="$B" DESTDIR="$dest" "$@" "$target"
}

# mode and path of every file under a tree, sorted
listing() {
	(cd "$1" && find . ! -type d -printf '%m %p\n' | sort)
}

# 1. install into the DESTDIR
touch "$TMP/stamp"
sleep 1 # a file the install wrote would be strictly newer
run_make "$D" install PREFIX=/usr >"$TMP/install.out" 2>&1
rc=$?
cat >"$TMP/want" <<'EOF'
644 ./etc/default/gpufleet-agent
644 ./etc/default/gpufleet-serve
644 ./usr/lib/systemd/system/gpufleet-agent.service
644 ./usr/lib/systemd/system/gpufleet-serve.service
755 ./usr/bin/gpufleet
EOF
sort -o "$TMP/want" "$TMP/want"
listing "$D" >"$TMP/got" 2>&1
out=$(diff "$TMP/want" "$TMP/got")
[ $rc = 0 ] && [ -z "$out" ] && cmp -s "$BIN" "$D/usr/bin/gpufleet"
check install-files $? "make install: exit $rc
$(tail -5 "$TMP/install.out")
$out"
if [ $rc != 0 ]; then
	exit 0
fi

# 2. placeholders substituted, paths the installed ones
bad=$(cd "$D" && grep -n '@[A-Z][A-Z_]*@' \
	usr/lib/systemd/system/*.service etc/default/*)
for u in agent serve; do
	f="$D/usr/lib/systemd/system/gpufleet-$u.service"
	var="GPUFLEET_$(echo "$u" | tr '[:lower:]' '[:upper:]')_ARGS"
	grep -qxF "ExecStart=/usr/bin/gpufleet $u \$$var" "$f" ||
		bad="$bad
gpufleet-$u.service: ExecStart is '$(grep '^ExecStart=' "$f")'"
	grep -qxF "EnvironmentFile=-/etc/default/gpufleet-$u" "$f" ||
		bad="$bad
gpufleet-$u.service: EnvironmentFile is '$(grep '^EnvironmentFile=' "$f")'"
done
check install-substituted "$([ -z "$bad" ]; echo $?)" "$bad"

# 3. the flags passed are flags the command has: the environment file's
# active line (read as systemd and sh read it) and the unit's default
bad=""
for u in agent serve; do
	var="GPUFLEET_$(echo "$u" | tr '[:lower:]' '[:upper:]')_ARGS"
	"$BIN" "$u" -h >"$TMP/$u.help" 2>&1
	file_args=$(
		unset "$var"
		# shellcheck disable=SC1090
		. "$D/etc/default/gpufleet-$u" && eval "printf '%s' \"\${$var-UNSET}\""
	)
	unit_args=$(sed -n "s/^Environment=\"\{0,1\}$var=\([^\"]*\)\"\{0,1\}\$/\1/p" \
		"$D/usr/lib/systemd/system/gpufleet-$u.service")
	[ "$file_args" = UNSET ] && bad="$bad
gpufleet-$u: $var not set"
	for a in $file_args $unit_args; do
		case "$a" in
		--*) grep -q -e "$a " -e "$a\$" "$TMP/$u.help" ||
			bad="$bad
gpufleet-$u: '$a' is not a flag of gpufleet $u" ;;
		esac
	done
done
check install-env-flags "$([ -z "$bad" ]; echo $?)" "$bad"

# 4. install wrote nothing into the build tree (it did not rebuild)
new=$(find "$ROOT/$B" -newer "$TMP/stamp" -type f | head -5)
check install-no-rebuild "$([ -z "$new" ]; echo $?)" "written: $new"

# 5. a second install keeps the operator's environment file, restores a
# unit (units are not for editing: drop-ins are)
echo 'GPUFLEET_SERVE_ARGS="--listen 127.0.0.1:9999"' \
	>>"$D/etc/default/gpufleet-serve"
cp "$D/etc/default/gpufleet-serve" "$TMP/edited"
echo '# edited' >>"$D/usr/lib/systemd/system/gpufleet-agent.service"
run_make "$D" install PREFIX=/usr >"$TMP/install2.out" 2>&1
rc=$?
cmp -s "$TMP/edited" "$D/etc/default/gpufleet-serve" &&
	! grep -q '^# edited' "$D/usr/lib/systemd/system/gpufleet-agent.service" &&
	grep -q 'KEEP .*gpufleet-serve (exists)' "$TMP/install2.out" &&
	[ $rc = 0 ]
check install-keeps-edits $? "exit $rc
$(cat "$TMP/install2.out")
$(diff "$TMP/edited" "$D/etc/default/gpufleet-serve")"

# 6. where the defaults and overrides put things
D2="$TMP/root2" D3="$TMP/root3"
run_make "$D2" install >"$TMP/install3.out" 2>&1 &&
	run_make "$D3" install PREFIX=/opt/gf SYSCONFDIR=/etc/gf \
		SYSTEMDUNITDIR=/lib/systemd/system >>"$TMP/install3.out" 2>&1
rc=$?
cat >"$TMP/want2" <<'EOF'
root2:
644 ./usr/local/etc/default/gpufleet-agent
644 ./usr/local/etc/default/gpufleet-serve
644 ./usr/local/lib/systemd/system/gpufleet-agent.service
644 ./usr/local/lib/systemd/system/gpufleet-serve.service
755 ./usr/local/bin/gpufleet
EnvironmentFile=-/usr/local/etc/default/gpufleet-serve
ExecStart=/usr/local/bin/gpufleet serve $GPUFLEET_SERVE_ARGS
root3:
644 ./etc/gf/default/gpufleet-agent
644 ./etc/gf/default/gpufleet-serve
644 ./lib/systemd/system/gpufleet-agent.service
644 ./lib/systemd/system/gpufleet-serve.service
755 ./opt/gf/bin/gpufleet
EnvironmentFile=-/etc/gf/default/gpufleet-serve
ExecStart=/opt/gf/bin/gpufleet serve $GPUFLEET_SERVE_ARGS
EOF
for r in root2 root3; do
	echo "$r:"
	listing "$TMP/$r"
	grep -h '^ExecStart=\|^EnvironmentFile=' \
		"$(find "$TMP/$r" -name gpufleet-serve.service)"
done >"$TMP/got2" 2>&1
out=$(diff "$TMP/want2" "$TMP/got2")
[ $rc = 0 ] && [ -z "$out" ]
check install-dirs $? "exit $rc
$(tail -5 "$TMP/install3.out")
$out"

# 7. systemd's own check of the units, on copies whose ExecStart is the
# DESTDIR's binary (verify requires it to exist); any message fails
if ! command -v systemd-analyze >/dev/null 2>&1; then
	echo "skip integration/install-systemd-verify (systemd-analyze absent: apt-get install systemd)"
else
	mkdir "$TMP/verify"
	for u in $UNITS; do
		sed "s|/usr/bin/gpufleet|$D/usr/bin/gpufleet|g" \
			"$D/usr/lib/systemd/system/$u" >"$TMP/verify/$u"
	done
	# shellcheck disable=SC2086
	out=$(cd "$TMP/verify" && SYSTEMD_LOG_COLOR=0 \
		systemd-analyze verify $UNITS 2>&1)
	rc=$?
	[ $rc = 0 ] && [ -z "$out" ]
	check install-systemd-verify $? "systemd-analyze verify: exit $rc
$out"
fi

# 8. uninstall: everything install put, but the edited environment file
run_make "$D" uninstall PREFIX=/usr >"$TMP/uninstall.out" 2>&1
rc=$?
left=$(listing "$D")
[ $rc = 0 ] && [ "$left" = "644 ./etc/default/gpufleet-serve" ] &&
	grep -q 'KEEP .*gpufleet-serve (edited)' "$TMP/uninstall.out"
check install-uninstall $? "exit $rc
$(cat "$TMP/uninstall.out")
left: $left"
