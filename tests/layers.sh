#!/usr/bin/env bash
# layers.sh: checks that runtime/ keeps its layers. Each folder is a layer,
# lowest first: base event symbols core sample loop lua cli (sample/perf and
# sample/bpf belong to sample). A file may include only headers of its own
# layer or below, written "layer/file.h" (a bare "file.h" must sit in the
# file's own folder; perfscript.h and the generated *.skel.h and *.pb-c.h
# are always allowed), and an object may call only functions defined in its
# own layer or below (nm over BUILD/obj). Prints one line per violation and
# exits 1 if any.
#   tests/layers.sh [BUILD]      (make lint runs it; needs a built tree)
cd "$(dirname "$0")/.." || exit 2
build=${1:-build}
layers=(base event symbols core sample loop lua cli)
rank() { # path-or-layer -> its rank, or -1
	local l=${1#runtime/}
	l=${l%%/*}
	for i in "${!layers[@]}"; do [[ ${layers[$i]} == "$l" ]] && { echo "$i"; return; }; done
	echo -1
}
bad=0
say() { echo "layers: $*"; bad=$((bad + 1)); }

for f in $(find runtime -name '*.[ch]' | sort); do
	r=$(rank "$f")
	((r < 0)) && { say "$f: not in a layer folder (${layers[*]})"; continue; }
	while IFS= read -r inc; do
		case $inc in
		perfscript.h | *.skel.h | *.pb-c.h) continue ;;
		*/*) ir=$(rank "$inc")
			((ir < 0)) && say "$f: includes \"$inc\", which is in no layer"
			((ir > r)) && say "$f: includes \"$inc\" from a higher layer" ;;
		*) [[ -f $(dirname "$f")/$inc ]] || say "$f: includes \"$inc\": name its layer (\"layer/$inc\")" ;;
		esac
	done < <(sed -n 's/^#include "\([^"]*\)".*/\1/p' "$f")
done

# Calls: every undefined symbol of an object must be defined at its layer or below.
if [[ -d $build/obj ]]; then
	declare -A where
	# objects of sources that still exist (a moved file leaves a stale one)
	objs=$(cd "$build/obj" && find . -name '*.o' | sed 's|^\./||' | sort |
		while read -r o; do [[ -f runtime/${o%.o}.c ]] && echo "$o"; done)
	for o in $objs; do
		while read -r sym; do where[$sym]=$o; done < <(nm --defined-only -g "$build/obj/$o" | awk '{print $3}')
	done
	for o in $objs; do
		r=$(rank "$o")
		while read -r sym; do
			d=${where[$sym]:-}
			[[ -z $d ]] && continue
			dr=$(rank "$d")
			((dr > r)) && say "runtime/${o%.o}.c calls $sym, defined in runtime/${d%.o}.c (a higher layer)"
		done < <(nm -u "$build/obj/$o" | awk '{print $2}')
	done
else
	say "$build/obj is missing: build first (make)"
fi
((bad == 0)) && echo "layers: ok"
((bad == 0))
