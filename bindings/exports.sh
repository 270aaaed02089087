#!/bin/sh
# exports.sh: the functions bindings/perfscript.h declares, one per line, or
# (with --map) the linker version script that makes libperfscript.so export
# exactly those. The header is run through the preprocessor first, so
# comments that name a function do not count; a function-pointer typedef
# (name followed by ')') is not a declaration.
#   bindings/exports.sh [--map] [HEADER]      (CC from the environment)
map=false
[ "$1" = --map ] && { map=true; shift; }
header=${1:-$(dirname "$0")/perfscript.h}
names=$(${CC:-cc} -E -P -D_GNU_SOURCE "$header" | grep -oE '\bps_[A-Za-z0-9_]+ *\(' |
	sed 's/ *($//' | LC_ALL=C sort -u) || exit 1
[ -n "$names" ] || { echo "exports.sh: no function declared in $header" >&2; exit 1; }
if ! $map; then
	printf '%s\n' "$names"
	exit 0
fi
printf '/* Generated from %s by bindings/exports.sh: do not edit. */\n' "$header"
printf 'PERFSCRIPT_0 {\n\tglobal:\n'
printf '%s\n' "$names" | sed 's/.*/\t\t&;/'
printf '\tlocal:\n\t\t*;\n};\n'
