# lib.sh: TAP helpers for perfscript's end-to-end CLI tests. Source it, call
# the checks, end with `done_testing`. Every check prints one TAP line;
# `skip` says why. $PERFSCRIPT and $WORKLOAD come from tests/run.
PERFSCRIPT=${PERFSCRIPT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/perfscript}
WORKLOAD=${WORKLOAD:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/build/tests/workload}
# pprof (the newest github.com/google/pprof), built once by make check
# (build/tests/pprof), or else go tool pprof: Go builds
# its tools on first use into GOCACHE, 25 s a time, in every suite.
PPROF_BIN=${PPROF_BIN:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/build/tests/pprof}
pprof_tool() {
	if [[ -x $PPROF_BIN ]]; then PPROF_TMPDIR=${PPROF_TMPDIR:-$TMP} "$PPROF_BIN" "$@"; else go tool pprof "$@"; fi
}
TAP_N=0
TAP_FAILED=0
TMP=$(mktemp -d /tmp/perfscript-e2e.XXXXXX)
trap 'rm -rf "$TMP"' EXIT

# tracefs for a process that may not mount it (a root without
# CAP_SYS_ADMIN): perfscript mounts it only for root, and a clean machine
# may not have it mounted. tracefs_restore unmounts what tracefs_mount did.
tracefs_mount() {
	grep -q "^[^ ]* /sys/kernel/tracing tracefs " /proc/self/mounts && return 0
	mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null && TRACEFS_MOUNTED=1
}
tracefs_restore() {
	[[ -n ${TRACEFS_MOUNTED-} ]] && umount /sys/kernel/tracing
	TRACEFS_MOUNTED=
}

ok() { # cond-exit-status description
	local rc=$1; shift
	TAP_N=$((TAP_N + 1))
	if [[ $rc -eq 0 ]]; then echo "ok $TAP_N - $*"; else
		echo "not ok $TAP_N - $*"; TAP_FAILED=$((TAP_FAILED + 1)); fi
}
# is GOT WANT description
is() {
	local got=$1 want=$2; shift 2
	[[ $got == "$want" ]]; ok $? "$*"
	[[ $got == "$want" ]] || printf '#   got:  %s\n#   want: %s\n' "${got//$'\n'/\\n}" "${want//$'\n'/\\n}"
}
# like TEXT REGEX description
like() {
	local got=$1 re=$2; shift 2
	[[ $got =~ $re ]]; ok $? "$*"
	# a newline in the pattern is shown as \n: the report keeps only
	# the lines that start with #
	[[ $got =~ $re ]] || { printf '#   want match: %s\n' "${re//$'\n'/\\n}"; printf '%s\n' "$got" | sed 's/^/#   got: /' | head -20; }
}
# unlike TEXT REGEX description: no line of TEXT matches (grep -E)
unlike() { ! grep -qE "$2" <<<"$1"; ok $? "$3"; }
skip() { # reason description
	local why=$1; shift
	TAP_N=$((TAP_N + 1)); echo "ok $TAP_N - $* # SKIP $why"
}
# skip_all REASON WHAT: the rest of the file cannot run here: a skip for
# each check it holds after this line (each call of ok, is, like, unlike or
# skip; a loop's counted once), so the summary's skips say how much went
# untested, then the plan, and the file ends.
skip_all() {
	local n i
	n=$(tail -n +$((BASH_LINENO[0] + 1)) "$0" | grep -oE '(^|[;&{]|then|do|else)[[:space:]]*(ok|is|like|unlike|skip) ' | wc -l)
	((n < 1)) && n=1
	for ((i = 1; i <= n; i++)); do skip "$1" "$2 ($i of $n)"; done
	done_testing
	exit
}
diag() { echo "# $*"; }
# wait_for FILE REGEX [SECONDS]: until a line of FILE matches (default 10 s); 1 on timeout.
wait_for() {
	local i
	for ((i = 0; i < ${3:-10} * 100; i++)); do
		grep -qE "$2" "$1" 2>/dev/null && return 0
		sleep 0.01
	done
	return 1
}
# wait_line FILE REGEX: the first line of FILE matching REGEX, printed,
# within 10 s; 1 if none came.
wait_line() {
	local i line
	for ((i = 0; i < 200; i++)); do
		line=$(grep -m1 -E "$2" "$1" 2>/dev/null) && { echo "$line"; return 0; }
		sleep 0.05
	done
	return 1
}
# tmux_wait SESSION REGEX [COUNT]: until COUNT (default 1) lines of the
# pane match REGEX (grep -E, line by line), within 10 s; 1 on timeout.
tmux_wait() {
	[[ -n ${TMUX_DEBUG-} ]] && echo "# wait $2 x${3:-1} at $(date +%s.%N | cut -c7-13)" >&2
	local i
	for ((i = 0; i < 500; i++)); do
		(($(tmux capture-pane -t "$1" -p 2>/dev/null | grep -cE "$2") >= ${3:-1})) && return 0
		sleep 0.02
	done
	return 1
}
# shares_compare A B: two shares.py outputs side by side: the largest
# difference of a row of 1% or more in either, then the rows as
# " kind:name=A/B" (one line: "2.1 self:alpha=63.7/63.7 ...").
shares_compare() {
	join -a1 -a2 -e 0 -o 0,1.2,2.2 <(awk '$1 != "samples" { print $1 ":" $2, $3 }' "$1" | sort) \
		<(awk '$1 != "samples" { print $1 ":" $2, $3 }' "$2" | sort) |
		awk '$2 >= 1 || $3 >= 1 { d = $2 - $3; if (d < 0) d = -d; if (d > w) w = d; r = r " " $1 "=" $2 "/" $3 }
			END { printf "%.1f%s\n", w, r }'
}
need_root() { [[ $(id -u) -eq 0 ]]; }
done_testing() { echo "1..$TAP_N"; [[ $TAP_FAILED -eq 0 ]]; }
