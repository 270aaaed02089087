# bench/lib.sh: what the whole-host benches share. Source it after setting
# pids=() (the background jobs the caller's cleanup stops).

# CPU ticks (utime + stime) of a process, 0 once it is gone.
ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat" 2>/dev/null || echo 0; }

# Resident memory of a process in MB, one decimal.
rss_mb() { awk '/^VmRSS/ { printf "%.1f", $2 / 1024 }' "/proc/$1/status" 2>/dev/null; }

# "met" when value <= target, else "MISSED".
verdict() { awk -v v="$1" -v t="$2" 'BEGIN { print (v <= t) ? "met" : "MISSED" }'; }

# The farthest a list of values (one per line, in file $2) strays from $1.
stray() { awk -v a="$1" 'NR == 1 { lo = hi = $1 } { lo = $1 < lo ? $1 : lo; hi = $1 > hi ? $1 : hi }
	END { d = hi - a; e = a - lo; print (d > e ? d : e) }' "$2"; }

# The host the fleet benches profile, for $1 seconds: about 100 short
# processes a second, a program with deep DWARF stacks spinning, and a
# long-lived one busy a fifth of the time in a large library (libLLVM:
# build/tests/llvmloop; said on stderr when the library is missing).
host_workload() {
	build/tests/llvmloop "$1" 20 >/dev/null &
	pids+=($!)
	(end=$((SECONDS + $1)); while ((SECONDS < end)); do /bin/true; sleep 0.01; done) 2>/dev/null &
	pids+=($!)
	(end=$((SECONDS + $1)); while ((SECONDS < end)); do build/tests/chain 5000 >/dev/null; done) 2>/dev/null &
	pids+=($!)
}
