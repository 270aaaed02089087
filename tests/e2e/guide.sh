# guide.sh: the docs run as written. Every command of README.md and
# docs/guide.md (the lines of their sh blocks, the "$ " lines of their
# transcripts, the indented perfscript lines) and every Lua block that
# loads runs here, on the built tree, from a directory that has what the
# docs name: ./app (the workload spinning), app.py, big, big.tar, f, a
# Makefile, and perfscript and sudo on the PATH. Each must exit 0 with no
# traceback; where the doc shows output, the output has its shape (the
# doc's lines with their numbers as any numbers). What is changed, and
# why: a PID is a process started for it (running only while a command
# attaches to it), -T over 1 s is 0.5 s (time), and
# a --listen port is 0 with -T 0.5 (a server runs until stopped).
source "$(dirname "$0")/lib.sh"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
D="$TMP/doc"
mkdir -p "$D/bin"
ln -s "$PERFSCRIPT" "$D/bin/perfscript"
ln -s "$PERFSCRIPT" "$D/perfscript"
printf '#!/bin/sh\nexec "$@"\n' >"$D/bin/sudo"
printf '#!/bin/sh\nexec %q spin 100\n' "$WORKLOAD" >"$D/app"
chmod +x "$D/bin/sudo" "$D/app"
ln -s "$ROOT/examples" "$D/examples"
ln -s "$ROOT/build" "$D/build"
cat >"$D/app.py" <<'EOF'
import sys, time, zlib
def render(i):
    return zlib.compress(str(i).encode() * 200)
def main(seconds):
    end = time.process_time() + seconds
    i = 0
    while time.process_time() < end:
        render(i)
        i += 1
main(float(sys.argv[1]) if len(sys.argv) > 1 else 0.5)
EOF
cat >"$D/app.js" <<'EOF'
function fib(n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }
const end = Date.now() + 300;
while (Date.now() < end) fib(20);
EOF
cat >"$D/App.java" <<'EOF'
public class App {
    static int fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }
    public static void main(String[] a) {
        long end = System.currentTimeMillis() + 300, s = 0;
        while (System.currentTimeMillis() < end) s += fib(20);
        System.out.println(s);
    }
}
EOF
command -v javac >/dev/null && javac -d "$D" "$D/App.java"
seq 1 300000 >"$D/big"
tar -C "$D" -cf "$D/big.tar" big
echo hello >"$D/f"
printf 'all:\n\t@true\n' >"$D/Makefile"

"$WORKLOAD" spin 600000 >/dev/null &
bg=$!
(cd "$D" && exec python3 app.py 600) &
bgpy=$!
trap 'kill -CONT $bg $bgpy 2>/dev/null; kill $bg $bgpy 2>/dev/null; rm -rf "$TMP"' EXIT
# They run only while a command attaches to them: two CPU burners all
# through the file would slow every suite beside it.
kill -STOP $bg $bgpy

# The commands, "FILE:LINE<TAB>command", and the transcripts' output.
commands() {
	awk '
	/^```/ { if (inb) { inb = 0 } else { inb = 1; kind = substr($0, 4) } next }
	inb && kind == "sh" && $0 !~ /^make / && $0 !~ /^ *$/ { print FILENAME ":" FNR "\t" $0; next }
	inb && kind != "lua" && /^\$ / { print FILENAME ":" FNR "\t" substr($0, 3); next }
	!inb && /^    (\.\/)?perfscript / { sub(/^    /, ""); print FILENAME ":" FNR "\t" $0 }
	' "$ROOT/README.md" "$ROOT/docs/guide.md"
}
# What the command becomes here (the header says why).
adapt() {
	local c=${1%%[[:space:]]#[[:space:]]*} pid=$bg # its comment goes
	[[ $c == *--python* ]] && pid=$bgpy
	c=$(sed -E "s/(^|[^A-Za-z])PID([^A-Za-z]|$)/\1$pid\2/g; s/-p 4242/-p $pid/; s/-T ([2-9]|[1-9][0-9]+)([^0-9.]|$)/-T 0.5\2/g" <<<"$c")
	if [[ $c == *--listen* ]]; then
		c=$(sed -E 's/--listen ([0-9.]*):[0-9]+/--listen \1:0/' <<<"$c")
		[[ $c == *" -T "* ]] || c="$c -T 0.5"
	fi
	printf '%s' "$c"
}
# A doc line as a pattern: its numbers any numbers, the rest as written.
shape() {
	sed -E 's/[][\\.*^$()+?{}|]/\\&/g; s/0x[0-9a-f]+/0x[0-9a-f]+/g; s/[0-9]+(\\\.[0-9]+)?/[0-9]+(\\.[0-9]+)?/g' <<<"$1"
}

n=0
while IFS=$'\t' read -r where cmd; do
	n=$((n + 1))
	run=$(adapt "$cmd")
	input=/dev/null
	# a transcript of the REPL: its lines are the input
	file=${where%%:*}; line=${where##*:}
	if [[ $cmd == *" -i "* ]]; then
		awk -v from="$line" 'NR > from && /^```/ { exit } NR > from && /^perfscript> / { sub(/^perfscript> /, ""); print }' \
			"$file" >"$TMP/input"
		input="$TMP/input"
	fi
	printf '%s\n' "$run" >"$TMP/cmd.sh" # a file: pgrep -f sees no command line of ours
	t0=$(date +%s%N)
	attach=false
	[[ $run == *" -p "* || $run == *pgrep* ]] && attach=true
	$attach && kill -CONT $bg $bgpy
	(cd "$D" && PATH="$D/bin:$PATH" timeout 60 bash "$TMP/cmd.sh" <"$input" >"$TMP/out" 2>"$TMP/err"); rc=$?
	$attach && kill -STOP $bg $bgpy
	diag "$(( ($(date +%s%N) - t0) / 1000000 )) ms: $run"
	ok $(( rc == 0 ? 0 : 1 )) "${where#"$ROOT"/}: $cmd (exit $rc$( ((rc)) && printf ': %s' "$(tail -2 "$TMP/err" | tr '\n' ' ')"))"
	! grep -q "stack traceback" "$TMP/err"; ok $? "${where#"$ROOT"/}: no traceback"
	# a transcript's output lines, in the doc right after the command, each
	# with its shape in what the command printed (the REPL's output is
	# every line not typed at the prompt; a report is on stderr)
	awk -v from="$line" 'NR > from && /^```/ { exit } NR > from && !/^perfscript> / && NF { print }' "$file" |
		head -2 >"$TMP/shown"
	[[ $(sed -n "${line}p" "$file") == '$ '* ]] || : >"$TMP/shown"
	while IFS= read -r shown; do
		grep -qE "^$(shape "$shown")\$" "$TMP/out" "$TMP/err"
		ok $? "${where#"$ROOT"/}: prints a line like '$shown'"
	done <"$TMP/shown"
done < <(commands)
ok $(( n >= 30 ? 0 : 1 )) "the docs' commands were found ($n)"

# Each Lua block: one that names its command line ("-- x.lua: perfscript
# x.lua -c './app'") runs by it; one that loads runs on ./app (with -a
# where it says so); a fragment (with "...") is shown, not run.
awk '
/^```lua/ { inb = 1; k++; f = sprintf("%s/block%02d.lua", dir, k); print FILENAME ":" FNR > (f ".where"); next }
/^```/ { inb = 0; next }
inb { print > f }
' dir="$TMP" "$ROOT/README.md" "$ROOT/docs/guide.md"
for b in "$TMP"/block*.lua; do
	where=$(cat "$b.where"); where=${where#"$ROOT"/}
	if ! "$PERFSCRIPT" -e 'assert(load(io.read("a")))' <"$b" >/dev/null 2>&1; then
		grep -q '\.\.\.' "$b"; ok $? "$where: a fragment that does not load shows its '...'"
		continue
	fi
	inv=$(sed -n '1s/^-- *\([a-z_]*\.lua\)\{0,1\}:\{0,1\} *perfscript \([a-z_]*\.lua\) \(.*\)$/\2 \3/p' "$b")
	if [[ -n $inv ]]; then
		cp "$b" "$D/${inv%% *}"
		run="perfscript $inv"
	else
		run="perfscript -e \"\$(cat $b)\" -c ./app"
		grep -q -- '-- with -a' "$b" && run="perfscript -a -e \"\$(cat $b)\" -c ./app"
	fi
	(cd "$D" && PATH="$D/bin:$PATH" timeout 60 bash -c "$run" </dev/null >"$TMP/out" 2>"$TMP/err"); rc=$?
	ok $(( rc == 0 ? 0 : 1 )) "$where: the Lua block runs ($run: exit $rc$( ((rc)) && printf ': %s' "$(tail -2 "$TMP/err" | tr '\n' ' ')"))"
done

done_testing
