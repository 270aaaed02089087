#!/usr/bin/env bash
# layers.sh: checks that runtime/ keeps its layers. Each folder is a layer,
# lowest first: base event symbols core sample, then the two sampling
# backends sample/perf and sample/bpf side by side (siblings: neither may
# use the other), then session (the sampler that picks a backend per
# counter, and the public session it makes), loop, lua, cli. A file may include only headers of its
# own layer or below, written "layer/file.h" or <layer/file.h> (a bare
# "file.h" must sit in the file's own folder; perfscript.h and the
# generated *.skel.h and *.pb-c.h are always allowed), and an object may
# call only functions defined in its own layer or below (nm over
# BUILD/obj). lua.h and the other Lua headers belong to lua/ and cli/ only,
# and libperfscript.so (everything below lua/) imports no lua_ or luaL_
# symbol. A layer's internal.h is included by that layer only. Prints one
# line per violation and exits 1 if any.
#   tests/layers.sh [BUILD [ROOT]]   (make lint runs it; needs a built tree)
# ROOT is the tree whose runtime/ is checked (default: this one);
# tests/e2e/lint.sh points it at seeded violations.
cd "$(dirname "$0")/.." || exit 2
build=${1:-build}
root=${2:-.}
layers=(base event symbols core sample sample/perf sample/bpf session loop lua cli)
ranks=(0 1 2 3 4 5 5 6 7 8 9)

# The layer of a path below runtime/ (or of an object below BUILD/obj):
# the longest layer name that prefixes it.
# layer_in sets LAYER (no subshell: it is asked for every include and object).
layer_in() {
	local p=${1#runtime/} x
	LAYER=""
	for x in "${layers[@]}"; do
		[[ $p == "$x"/* && ${#x} -gt ${#LAYER} ]] && LAYER=$x
	done
}
layer_of() { layer_in "$1"; echo "$LAYER"; }
# layer -> rank (a lookup, not a subshell: the call check asks it for
# every symbol of every object)
declare -A rank
for i in "${!layers[@]}"; do rank[${layers[$i]}]=${ranks[$i]}; done
rank_of() { echo "${rank[$1]:--1}"; }
bad=0
say() { echo "layers: $*"; bad=$((bad + 1)); }
# Whether layer a may use layer b: b at a lower rank, or b is a itself.
may_use() {
	[[ $1 == "$2" ]] && return 0
	((${rank[$2]:--1} < ${rank[$1]:--1}))
}

for f in $(cd "$root" && find runtime -name '*.[ch]' | sort); do
	layer_in "$f"; l=$LAYER
	[[ -z $l ]] && { say "$f: not in a layer folder (${layers[*]})"; continue; }
	while IFS= read -r line; do
		inc=${line#*[\"<]}; inc=${inc%%[\">]*}
		case $inc in
		perfscript.h | *.skel.h | *.pb-c.h) continue ;;
		lua.h | lauxlib.h | lualib.h | luaconf.h)
			[[ $l == lua || $l == cli ]] || say "$f: includes <$inc>: Lua belongs to lua/ and cli/ only"
			continue ;;
		esac
		if [[ $line == *\<* ]]; then # a system header, unless it names a project one
			[[ -f $root/runtime/$inc ]] || continue
		fi
		# a layer's internal.h is its own: others use its interface
		# headers (core/view.h, symbols/resolve.h, ...)
		layer_in "runtime/$inc"; il=$LAYER
		if [[ $inc == */internal.h && $il != "$l" ]]; then
			say "$f: includes \"$inc\", the private header of $il/: use its interface header"
		fi
		if [[ $inc == */* ]]; then
			if [[ -z $il ]]; then
				say "$f: includes \"$inc\", which is in no layer"
			elif ! may_use "$l" "$il"; then
				if [[ $(rank_of "$il") == $(rank_of "$l") ]]; then
					say "$f: includes \"$inc\" from a sibling layer ($il)"
				else
					say "$f: includes \"$inc\" from a higher layer ($il)"
				fi
			fi
		elif [[ ! -f $root/$(dirname "$f")/$inc ]]; then
			say "$f: includes \"$inc\": name its layer (\"layer/$inc\")"
		fi
	done < <(grep -E '^#include ["<]' "$root/$f")
done

# Calls: every undefined symbol of an object must be defined at its layer or below.
if [[ -d $build/obj ]]; then
	declare -A where
	# objects of sources that still exist (a moved file leaves a stale one)
	objs=$(find "$build/obj" -name '*.o' | sed "s|^$build/obj/||" | sort |
		while read -r o; do [[ -f $root/runtime/${o%.o}.c ]] && echo "$o"; done)
	[[ -n $objs ]] || say "$build/obj has no object of a source in $root/runtime: build first (make)"
	declare -A objlayer # each object's layer, found once
	for o in $objs; do layer_in "runtime/$o"; objlayer[$o]=$LAYER; done
	# one nm over all objects for each question (an nm a file took 25 ms
	# here): "OBJECT SYMBOL" lines, the object relative to $build/obj
	paths=()
	for o in $objs; do paths+=("$build/obj/$o"); done
	pairs() { # nm options: OBJECT SYMBOL per line
		nm -A "$@" "${paths[@]}" | sed -E "s|^$build/obj/([^:]*):[0-9a-f ]* *[A-Za-z] |\1 |"
	}
	while read -r o sym; do where[$sym]=$o; done < <(pairs --defined-only -g)
	n=${#paths[@]}
	while read -r o sym; do
		l=${objlayer[$o]}
		d=${where[$sym]:-}
		if [[ -z $d ]]; then
			[[ $sym == lua_* || $sym == luaL_* ]] && [[ $l != lua && $l != cli ]] &&
				say "runtime/${o%.o}.c calls $sym: Lua belongs to lua/ and cli/ only"
			continue
		fi
		dl=${objlayer[$d]}
		may_use "$l" "$dl" && continue
		if [[ ${rank[$dl]} == "${rank[$l]}" ]]; then
			say "runtime/${o%.o}.c calls $sym, defined in runtime/${d%.o}.c (a sibling layer, $dl)"
		else
			say "runtime/${o%.o}.c calls $sym, defined in runtime/${d%.o}.c (a higher layer, $dl)"
		fi
	done < <(pairs -u)
else
	say "$build/obj is missing: build first (make)"
fi

# The shared library: the layers below lua/ only.
lib=$build/libperfscript.so
if [[ -f $lib ]]; then
	for sym in $(nm -D --undefined-only "$lib" | awk '{print $2}' | grep -E '^luaL?_'); do
		say "$lib imports $sym: the library must know nothing of Lua"
	done
fi
((bad == 0)) && echo "layers: ok (${n:-0} objects)"
((bad == 0))
