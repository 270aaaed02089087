#!/usr/bin/env bash
# sizes.sh: keeps runtime/ readable in pieces: no C file over 500 lines and
# no function over 80 lines of body (STYLE.md). A function is a top-level
# definition in kernel style, as clang-format leaves it: its body opens
# with "{" alone at column 0 and closes with "}" at column 0. Prints one
# line per violation, naming the file, the line and the function, and
# exits 1 if any.
#   tests/sizes.sh [MAX_FILE_LINES [MAX_FUNCTION_LINES]]   (make lint runs it)
cd "$(dirname "$0")/.." || exit 2
max_file=${1:-500} max_fn=${2:-80}
mapfile -t files < <(find runtime -name '*.[ch]' | sort)
bad=0
while read -r n f; do
	[[ $f == total ]] && continue
	((n > max_file)) && { echo "sizes: $f: $n lines (at most $max_file: split it by what its parts do)"; bad=$((bad + 1)); }
done < <(wc -l "${files[@]}")
long=$(awk -v max="$max_fn" '
	FNR == 1 { start = 0 }
	/^[A-Za-z_].*\(/ { sig = $0; at = FNR }
	/^\{/ { start = FNR; name = sig; sub(/\(.*/, "", name); n = split(name, w, /[ *]+/); name = w[n] }
	/^\}/ && start { len = FNR - start - 1; if (len > max) printf "sizes: %s:%d: %s() has %d lines of body (at most %d)\n", FILENAME, at, name, len, max; start = 0 }
' "${files[@]}")
if [[ -n $long ]]; then
	echo "$long"
	bad=$((bad + $(wc -l <<<"$long")))
fi
((bad == 0)) && echo "sizes: ok (${#files[@]} files: none over $max_file lines, no function over $max_fn)"
((bad == 0))
