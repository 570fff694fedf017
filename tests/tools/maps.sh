#!/bin/sh
# The room maps of docs/INTERNALS.md and CONTRIBUTING.md against the
# layer table (tests/tools/layers.sh, read through its --rooms and
# --room, never copied here): every room of the table has a row in each
# map, and no map row names a folder that is in no room.  A map is the
# text between the lines "<!-- rooms map -->" and "<!-- /rooms map -->";
# its rows are the src/ folders it names.
#   sh tests/tools/maps.sh [DOC...]   (default docs/INTERNALS.md CONTRIBUTING.md)
# Prints "ok lint/maps" or "FAIL lint/maps" with each difference.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT" || exit 1
[ $# -eq 0 ] && set -- docs/INTERNALS.md CONTRIBUTING.md
LAYERS=${LAYERS:-$ROOT/tests/tools/layers.sh}
rooms=$(sh "$LAYERS" --rooms)
[ -n "$rooms" ] || {
	echo "FAIL lint/maps (no rooms read from $LAYERS)"
	exit 1
}
bad=""
for doc in "$@"; do
	if ! grep -q '^<!-- rooms map -->' "$doc" 2>/dev/null; then
		bad="$bad
$doc: no map (a block between <!-- rooms map --> and <!-- /rooms map -->)"
		continue
	fi
	folders=$(sed -n '/^<!-- rooms map -->/,/^<!-- \/rooms map -->/p' "$doc" |
		grep -o 'src/[a-z0-9_]*\(/[a-z0-9_]*\)*/' | sort -u)
	seen=" "
	for f in $folders; do
		r=$(sh "$LAYERS" --room "$f")
		case " $(echo $rooms) " in
		*" $r "*) seen="$seen$r " ;;
		*) bad="$bad
$doc: the map names $f, in no room of the layer table" ;;
		esac
	done
	for r in $rooms; do
		case "$seen" in
		*" $r "*) ;;
		*) bad="$bad
$doc: room '$r' of the layer table is not on the map" ;;
		esac
	done
done
if [ -z "$bad" ]; then
	echo "ok lint/maps"
else
	echo "FAIL lint/maps"
	printf '%s\n' "$bad" | sed '/^$/d' | sed 's/^/    /'
	exit 1
fi
