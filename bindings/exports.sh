#!/bin/sh
# exports.sh: the functions bindings/perfscript.h declares, one per line, or
# (with --map) those bindings/libperfscript.map exports, in any of its
# release nodes. The header is run through the preprocessor first, so
# comments that name a function do not count; a function-pointer typedef
# (name followed by ')') is not a declaration. tests/e2e/ffi.sh compares
# the two lists and nm -D of the library.
#   bindings/exports.sh [--map] [HEADER-or-MAP]      (CC from the environment)
if [ "$1" = --map ]; then
	map=${2:-$(dirname "$0")/libperfscript.map}
	sed -n 's/^[[:space:]]*\(ps_[A-Za-z0-9_]*\);$/\1/p' "$map" | LC_ALL=C sort -u
	exit
fi
header=${1:-$(dirname "$0")/perfscript.h}
names=$(${CC:-cc} -E -P -D_GNU_SOURCE "$header" | grep -oE '\bps_[A-Za-z0-9_]+ *\(' |
	sed 's/ *($//' | LC_ALL=C sort -u) || exit 1
[ -n "$names" ] || { echo "exports.sh: no function declared in $header" >&2; exit 1; }
printf '%s\n' "$names"
