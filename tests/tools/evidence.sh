#!/bin/sh
# The claims scripts/evidence.sh reruns and the rows of docs/evidence.md
# are the same set of ids, so neither can drift from the other (the
# page's figures themselves are checked by `make evidence`).
#   sh tests/tools/evidence.sh
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT" || exit 1
script=$(sed -n 's/.*report \([ET][0-9][0-9]*\) .*/\1/p' scripts/evidence.sh | sort -u)
page=$(sed -n 's/^| \([ET][0-9][0-9]*\) |.*/\1/p' docs/evidence.md | sort -u)
if [ -z "$script" ] || [ -z "$page" ]; then
	echo "FAIL lint/evidence (no claims read from scripts/evidence.sh or docs/evidence.md)"
	exit 1
fi
if [ "$script" = "$page" ]; then
	echo "ok lint/evidence ($(echo "$page" | wc -l | tr -d ' ') claims)"
else
	echo "FAIL lint/evidence (claims the script reruns and the page lists differ)"
	echo "    script: $(echo "$script" | tr "\n" " ")"
	echo "    page:   $(echo "$page" | tr "\n" " ")"
	exit 1
fi
