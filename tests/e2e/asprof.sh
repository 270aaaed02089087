# asprof.sh: profile.lua's Java frames against async-profiler (Maven
# Central's tools.profiler:async-profiler, pinned in the Makefile), both on
# the same JVM over its whole run: async-profiler as the JVM's agent
# (event=itimer at 1 ms, which the kernel's tick makes 250 Hz here),
# perfscript on the java command with HotSpot's perf map and frame
# pointers. A Java program
# spends known shares in alpha, beta and gamma (which calls both; none
# inlined, so that both tools see the same frames): each method's share of
# the samples with a Work frame, innermost (self) and anywhere (total),
# agrees within 5 points. async-profiler takes about 2,000 samples in 8 s:
# the standard error of a difference of two shares is about 1.2 points.
# (Work.main stays interpreted, a frame the perf map cannot name: it is
# left out of the comparison.)
source "$(dirname "$0")/lib.sh"
cd "$(dirname "$0")/../.." || exit 1
LIB=$PWD/build/tests/libasyncProfiler.so

if ! command -v javac >/dev/null || ! command -v java >/dev/null; then
	skip_all "no JDK here (javac, java)" "profile.lua against async-profiler"
fi
if [[ ! -r $LIB ]]; then
	skip_all "no build/tests/libasyncProfiler.so (make check downloads it from Maven Central)" \
		"profile.lua against async-profiler"
fi

cat >"$TMP/Work.java" <<'EOF'
public class Work {
    static long alpha(int n) { long s = 0; for (int i = 0; i < n; i++) s += (long) i * i % 7; return s; }
    static long beta(int n) { long s = 0; for (int i = 0; i < n; i++) s += (i ^ 3) % 5; return s; }
    static long gamma(int n) { return alpha(n / 2) + beta(n / 2); }
    public static void main(String[] a) {
        long end = System.currentTimeMillis() + Long.parseLong(a[0]), s = 0;
        while (System.currentTimeMillis() < end) { s += alpha(200000); s += beta(100000); s += gamma(60000); }
        System.out.println(s);
    }
}
EOF
javac -d "$TMP" "$TMP/Work.java"

java=(java -XX:+PreserveFramePointer -XX:+UnlockDiagnosticVMOptions -XX:+DumpPerfMapAtExit
	-XX:CompileCommand=quiet "-XX:CompileCommand=dontinline,Work::*"
	"-agentpath:$LIB=start,event=itimer,interval=1ms,collapsed,file=$TMP/ap.txt" -cp "$TMP" Work 8000)
"$PERFSCRIPT" examples/profile.lua --folded "$TMP/ours.folded" -c "${java[*]}" >"$TMP/ours.out" 2>&1
is "$?" 0 "profile.lua -c java with async-profiler as its agent ran to its end ($(grep -m1 "samples of" "$TMP/ours.out"))"
# perfscript's "long Work.alpha(int)", async-profiler's "Work.alpha"
WORK='(?:^|\s)(Work\.(?!main\b)\w+)(?:\(|$)'
python3 tests/e2e/shares.py "$WORK" "$TMP/ours.folded" >"$TMP/ours.shares"
python3 tests/e2e/shares.py "$WORK" "$TMP/ap.txt" >"$TMP/ap.shares"
n1=$(awk '$1 == "samples" { print $2 }' "$TMP/ours.shares")
n2=$(awk '$1 == "samples" { print $2 }' "$TMP/ap.shares")
ok $(( ${n1:-0} >= 500 && ${n2:-0} >= 500 ? 0 : 1 )) "both took samples in Work's methods (perfscript $n1, async-profiler $n2)"
read -r worst rows < <(shares_compare "$TMP/ours.shares" "$TMP/ap.shares")
ok "$(awk -v w="${worst:-99}" 'BEGIN { exit !(w <= 5) }'; echo $?)" \
	"each method's share agrees with async-profiler's within 5 points (at most ${worst:-?}; perfscript/async-profiler:$rows)"
like "$rows" "self:Work.alpha=.*self:Work.beta=.*total:Work.gamma=" "alpha and beta as leaves, gamma above them, in both"
done_testing
