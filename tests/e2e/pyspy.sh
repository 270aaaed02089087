# pyspy.sh: profile.lua --python against py-spy (PyPI's wheel, pinned in
# the Makefile), both on the same CPython process over the same seconds,
# on every CPython 3.10-3.13 of the machine (Debian's and pyenv's). A
# pure-Python program spends known shares in alpha, beta and gamma (which
# calls both); each Python function's share of the samples, as the
# innermost Python frame (self) and anywhere in the stack (total), agrees
# within 5 points. At 999 Hz for 5 s each tool takes about 5,000 samples
# (fewer on a busy machine): the standard error of a difference of two
# shares is about 1 point.
# py-spy stops the process for each sample (its default): with
# --nonblocking its stacks tear, gamma 2-3.5 points short of its share.
source "$(dirname "$0")/lib.sh"
cd "$(dirname "$0")/../.." || exit 1
PYSPY=$PWD/build/tests/py-spy

if ! need_root || [[ ! -r /sys/kernel/btf/vmlinux ]]; then
	skip_all "Python frames are read by a BPF program: needs root and BTF" "profile.lua --python against py-spy"
fi
if [[ ! -x $PYSPY ]]; then
	skip_all "no build/tests/py-spy (make check downloads it from PyPI)" "profile.lua --python against py-spy"
fi

cat >"$TMP/work.py" <<'EOF'
import sys, time
def alpha(n):
    s = 0
    for i in range(n): s += i * i
    return s
def beta(n):
    s = 0
    for i in range(n): s += i ^ 3
    return s
def gamma(n):
    return alpha(n // 2) + beta(n // 2)
print("ready", flush=True)
end = time.time() + float(sys.argv[1])
while time.time() < end:
    alpha(20000); beta(10000); gamma(6000)
EOF

pythons=()
for py in /usr/bin/python3.1[0-3] "$HOME"/.pyenv/versions/3.1[0-3]*/bin/python3.1[0-3]; do
	[[ -x $py ]] && pythons+=("$py")
done
[[ ${#pythons[@]} -gt 0 ]] || skip_all "no CPython 3.10-3.13 here" "profile.lua --python against py-spy"

for py in "${pythons[@]}"; do
	v=$("$py" -c 'import sys; print("%d.%d.%d" % sys.version_info[:3])')
	d=$TMP/$v
	mkdir -p "$d"
	"$py" "$TMP/work.py" 15 >"$d/work.out" 2>&1 &
	pid=$!
	wait_line "$d/work.out" '^ready' >/dev/null
	"$PERFSCRIPT" -v -p "$pid" -T 5 examples/profile.lua --python --folded "$d/ours.folded" >"$d/ours.out" 2>"$d/ours.err" &
	ours=$!
	wait_for "$d/ours.err" "session started" 10
	"$PYSPY" record -p "$pid" -d 5 -r 999 -f raw -o "$d/spy.txt" >"$d/spy.log" 2>&1
	wait "$ours"
	kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null
	# perfscript's frames "py::NAME:FILE", py-spy's "NAME (FILE:LINE)"
	/usr/bin/python3 tests/e2e/shares.py '^py::([^:;]+):' "$d/ours.folded" >"$d/ours.shares" 2>&1
	/usr/bin/python3 tests/e2e/shares.py '^(.+?) \(' "$d/spy.txt" >"$d/spy.shares" 2>&1
	read -r worst rows < <(shares_compare "$d/ours.shares" "$d/spy.shares")
	n1=$(awk '$1 == "samples" { print $2 }' "$d/ours.shares")
	n2=$(awk '$1 == "samples" { print $2 }' "$d/spy.shares")
	ok $(( ${n1:-0} >= 300 && ${n2:-0} >= 300 ? 0 : 1 )) "$py ($v): both took samples of the Python frames (perfscript $n1, py-spy $n2)"
	ok "$(awk -v w="${worst:-99}" 'BEGIN { exit !(w <= 5) }'; echo $?)" \
		"$py ($v): each function's share agrees with py-spy's within 5 points (at most ${worst:-?}; perfscript/py-spy:$rows)"
	like "$rows" "self:alpha=.*self:beta=.*total:gamma=" "$py ($v): alpha and beta as leaves, gamma above them, in both"
done
done_testing
