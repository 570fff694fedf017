#!/bin/sh
# pg.sh - a throwaway PostgreSQL server on loopback, from Debian's
# postgresql-15 package, for the tests and benchmarks that need a real one
# (the store's suite, the controller's API suite and its kill -9 tests).
#
#   sh tests/tools/pg.sh start       prints the server's URL on stdout:
#                                    postgres://gpufleet@127.0.0.1:PORT/postgres
#   sh tests/tools/pg.sh stop URL    stops that server by its PID, removes
#                                    its directory
#
# start exits 0; 77 with one line on stderr when the PostgreSQL binaries
# (or, as root, the postgres user) are absent, so a caller can skip; 1
# with the server's log on stderr when it cannot start one.
#
# The server: initdb (superuser gpufleet, trust auth, UTF8, locale C) in
# /tmp/gpufleet-pg.PORT/data, then `postgres -D data -k DIR -c
# listen_addresses=127.0.0.1 -p PORT` on a free port (a taken one is
# retried with another), detached from the caller (its own session, its
# output in DIR/log), so a caller reading start's output through a pipe
# is not held open.  As root, initdb refuses to run: the directory then
# belongs to the postgres user and both run as it (setpriv).  Settings:
#   PG_OPTS="-c fsync=off"   extra server options (tests may; benchmarks of
#                            durability must not)
#   GPUFLEET_PG_BIN=DIR      where initdb and postgres are (default: the
#                            newest /usr/lib/postgresql/*/bin, 15 first)
set -u

pg_bin() {
	if [ -n "${GPUFLEET_PG_BIN:-}" ]; then
		echo "$GPUFLEET_PG_BIN"
		return
	fi
	for d in /usr/lib/postgresql/15/bin $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -r); do
		if [ -x "$d/initdb" ] && [ -x "$d/postgres" ]; then
			echo "$d"
			return
		fi
	done
}

# the prefix that runs a command as the server's owner (a plain word
# list, so that `$AS cmd &` is one simple command: the background child
# execs it directly and holds none of this shell's saved descriptors)
AS=""
[ "$(id -u)" -eq 0 ] &&
	AS="setpriv --reuid=postgres --regid=postgres --init-groups --"

port_of() { # URL -> PORT
	echo "$1" | sed -n 's|^postgres[a-z]*://[^@]*@127\.0\.0\.1:\([0-9][0-9]*\)/.*|\1|p'
}

start() {
	bin=$(pg_bin)
	if [ -z "$bin" ]; then
		echo "pg.sh: PostgreSQL server binaries absent (apt-get install postgresql-15)" >&2
		exit 77
	fi
	if [ "$(id -u)" -eq 0 ] && ! id postgres >/dev/null 2>&1; then
		echo "pg.sh: running as root and there is no postgres user to run the server as" >&2
		exit 77
	fi
	tries=0
	while [ $tries -lt 10 ]; do
		tries=$((tries + 1))
		port=$(( $(od -An -N2 -tu2 /dev/urandom | tr -d ' ') % 30000 + 20000 ))
		if ss -Hltn "sport = :$port" 2>/dev/null | grep -q .; then
			continue
		fi
		dir=/tmp/gpufleet-pg.$port
		if [ -e "$dir" ]; then
			# taken, or left by a run that was killed: a directory
			# without a live server, untouched for 10 minutes, goes
			pid=$(head -1 "$dir/data/postmaster.pid" 2>/dev/null)
			if ! { [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; } &&
				[ -n "$(find "$dir" -maxdepth 0 -mmin +10)" ]; then
				rm -rf "$dir"
			fi
			continue
		fi
		mkdir -m 0700 "$dir" 2>/dev/null || continue # lost a race
		[ "$(id -u)" -eq 0 ] && chown postgres:postgres "$dir"
		# shellcheck disable=SC2086
		if ! $AS "$bin/initdb" -D "$dir/data" -U gpufleet \
			--auth=trust -E UTF8 --locale=C >"$dir/log" 2>&1; then
			echo "pg.sh: initdb failed in $dir/data:" >&2
			cat "$dir/log" >&2
			rm -rf "$dir"
			exit 1
		fi
		# shellcheck disable=SC2086
		$AS setsid "$bin/postgres" -D "$dir/data" -k "$dir" \
			-c listen_addresses=127.0.0.1 -p "$port" ${PG_OPTS:-} \
			</dev/null >>"$dir/log" 2>&1 &
		spawned=$!
		i=0
		while [ $i -lt 300 ]; do
			if "$bin/pg_isready" -q -h 127.0.0.1 -p "$port" \
				-U gpufleet -d postgres -t 1; then
				echo "postgres://gpufleet@127.0.0.1:$port/postgres"
				exit 0
			fi
			kill -0 "$spawned" 2>/dev/null || break
			sleep 0.1
			i=$((i + 1))
		done
		if grep -q "could not bind\|could not create listen socket" "$dir/log"; then
			kill "$spawned" 2>/dev/null
			wait "$spawned" 2>/dev/null
			rm -rf "$dir"
			continue # port taken meanwhile: another one
		fi
		echo "pg.sh: postgres did not start on port $port:" >&2
		cat "$dir/log" >&2
		kill "$spawned" 2>/dev/null
		rm -rf "$dir"
		exit 1
	done
	echo "pg.sh: no free port found after $tries tries" >&2
	exit 1
}

stop() {
	port=$(port_of "${1:-}")
	if [ -z "$port" ]; then
		echo "pg.sh: stop: not a URL that start printed: '${1:-}'" >&2
		exit 2
	fi
	dir=/tmp/gpufleet-pg.$port
	pid=$(head -1 "$dir/data/postmaster.pid" 2>/dev/null)
	if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
		kill -INT "$pid" # fast shutdown: roll back, disconnect, exit
		i=0
		while kill -0 "$pid" 2>/dev/null && [ $i -lt 300 ]; do
			sleep 0.1
			i=$((i + 1))
		done
		kill -0 "$pid" 2>/dev/null && kill -KILL "$pid"
	fi
	rm -rf "$dir"
}

case "${1:-}" in
start) start ;;
stop) stop "${2:-}" ;;
*)
	echo "usage: sh tests/tools/pg.sh start | stop URL" >&2
	exit 2
	;;
esac
