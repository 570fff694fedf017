#!/bin/sh
# Install the Debian packages gpufleet needs to build, test and run.
# As root it installs what is missing; otherwise it prints the exact
# apt-get line to run and exits 1.  Quiet when everything is there.
set -eu

# build and run
PKGS="gcc make pkg-config libhwloc-dev libxml2-dev libglpk-dev libyaml-dev"
PKGS="$PKGS libmicrohttpd-dev libjansson-dev libcurl4-openssl-dev"
# HTTPS: libmicrohttpd's GnuTLS, whose headers read a client certificate's
# check (src/server/tls.c); openssl makes the certificates of
# tests/integration/tls.sh
PKGS="$PKGS libgnutls28-dev openssl"
# the controller's store: SQLite and PostgreSQL's client library
PKGS="$PKGS libsqlite3-dev libpq-dev"
# tests: cmocka for unit tests, lstopo (hwloc-nox) to record live XML,
# a real Prometheus scraping the agent, curl to talk to both
PKGS="$PKGS libcmocka-dev hwloc-nox prometheus curl"
# tests: hwloc's plugins and an OpenCL platform, as on hosts with Open MPI,
# to prove gpufleet does not load them (tests/integration/hwloc_plugins.sh)
PKGS="$PKGS libhwloc-plugins pocl-opencl-icd"
# tests: the cube-mesh generator in ../shared renumbers GPUs (python3)
PKGS="$PKGS python3"
# tests: a real PostgreSQL 15 server for the store (tests/tools/pg.sh)
PKGS="$PKGS postgresql"
# tests: the chargeback page rendered by a real browser, headless
# (tests/integration/chargeback.sh)
PKGS="$PKGS chromium"
# tests: deploy/kubernetes/ checked against the upstream schema by the
# Kubernetes Python client's models (tests/integration/k8s_manifests.sh)
PKGS="$PKGS python3-kubernetes python3-yaml"
# Slurm (docs/slurm.md): slurm/spank.h and slurm/slurm.h to build the SPANK
# plugin and `slurm advise`; the daemons for tests/integration/slurm.sh
# (about 10 MB; that test installs MariaDB and slurmdbd itself, 100 MB
# only it needs)
PKGS="$PKGS libslurm-dev slurmctld slurmd slurm-client"
# make fuzz (docs/fuzzing.md): clang and its libFuzzer runtime (clang
# also builds make check's third tree)
PKGS="$PKGS clang libclang-rt-14-dev"
# the linker of every tree (the Makefile falls back to gold without it)
PKGS="$PKGS lld"

missing=""
for p in $PKGS; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null |
		grep -q "install ok installed"; then
		missing="$missing $p"
	fi
done
[ -z "$missing" ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
	echo "gpufleet: missing Debian packages:$missing" >&2
	echo "run: sudo apt-get update && sudo apt-get install -y$missing" >&2
	exit 1
fi
echo "gpufleet: installing Debian packages:$missing" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >&2
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $missing >&2
