# top.lua: perf top. As text (not a terminal): the hot function of a known
# program on top, its share of the last second and of all so far. On a
# terminal (tmux): the screen fills, the hot function is on top within
# 2 s, k hides the kernel's functions, f freezes, q quits with the
# terminal as it was (the main screen back, echo and line editing on) and
# the command gone.
source "$(dirname "$0")/lib.sh"
cd "$(dirname "$0")/../.." || exit 1
EX=examples

out=$("$PERFSCRIPT" $EX/top.lua -T 2.5 -c "$WORKLOAD spin 3000" 2>&1)
top=$(awk '/^--/ { n++ } n == 2 && / \[\.\] / { print; exit }' <<<"$out")
like "$top" "^ *(9[0-9]|100)\.[0-9]+% +(9[0-9]|100)\.[0-9]+%  \[\.\] hot_spin  \(workload\)$" \
	"as text: the spinning function tops the second refresh, its share of the last second and of all ($top)"
is "$(grep -c $'\033' <<<"$out")" 0 "... plain text, no terminal codes, when the output is not a terminal"
like "$out" "[0-9]+ samples in the last 1 s, [0-9]+ in all" "... each table says its samples"
# perfscript.tty off a terminal: each call says so
out=$("$PERFSCRIPT" -e 'local tty = require "perfscript.tty"
print(tty.isatty(0), tty.size())
print(tty.keys(function() end))' </dev/null 2>&1 | cat)
is "$out" $'false\tnil\tstandard output is not a terminal\nnil\tstandard input is not a terminal' \
	"perfscript.tty without a terminal: isatty false, size and keys nil and why"
out=$("$PERFSCRIPT" $EX/top.lua -T 1 -c true --delay 0 2>&1)
like "$out" "top.lua: --delay wants a number from 0.1 to 3600" "a delay out of range is refused"

if ! command -v tmux >/dev/null; then
	skip_all "tmux is not installed (make check installs it)" "top.lua on a terminal"
fi
s=ps-top-$$
tmux new-session -d -s "ps-top-keep-$$" "sleep 300" # the server outlives each test session
trap 'tmux kill-session -t "ps-top-keep-$$" 2>/dev/null; tmux kill-session -t $s 2>/dev/null; rm -rf "$TMP"' EXIT
t0=$(date +%s%N)
tmux new-session -d -s $s -x 120 -y 30 \
	"echo BEFORE; $PERFSCRIPT $EX/top.lua -c '$WORKLOAD spin 30000'; echo EXITED \$?; stty -a | tr ' ' '\n' | grep -xE -- '-?(icanon|echo)' | tr '\n' ' '; echo; sleep 30"
tmux_wait $s '\[\.\] hot_spin'
ok $? "on a terminal: the spinning function is shown"
t1=$(date +%s%N)
first=$(tmux capture-pane -t $s -p | grep -m1 -E '^ *[0-9.]+% ')
like "$first" "\[\.\] hot_spin" "... on top, within $(( (t1 - t0) / 1000000 )) ms of the start (2 s at most: $( (( t1 - t0 < 2000000000 )) && echo met || echo MISSED))"
ok $(( t1 - t0 < 2500000000 ? 0 : 1 )) "... within 2.5 s, a loaded machine's allowance"
unlike "$(tmux capture-pane -t $s -p)" "^BEFORE" "... on its own screen (the shell's lines are not under it)"
tmux send-keys -t $s k
tmux_wait $s 'kernel hidden'
ok $? "k hides the kernel's functions"
unlike "$(tmux capture-pane -t $s -p)" "\[k\] " "... no [k] row is shown"
tmux send-keys -t $s f
tmux_wait $s ', frozen'
ok $? "f freezes the view"
tmux send-keys -t $s q
tmux_wait $s '^-?icanon -?echo'  # after EXITED: stty's line
screen=$(tmux capture-pane -t $s -p)
like "$screen" $'^BEFORE\nEXITED 0' "q quits (exit 0), and the main screen is back as it was"
like "$screen" "(^|"$'\n'")icanon echo *($|"$'\n'")" "... with the terminal's line editing and echo on again"
is "$(pgrep -f "$WORKLOAD spin 30000" | wc -l)" 0 "... and the command is gone"
tmux kill-session -t $s
# Ctrl-C puts the terminal back too
tmux new-session -d -s $s -x 120 -y 30 \
	"echo BEFORE; $PERFSCRIPT $EX/top.lua -c '$WORKLOAD spin 30000'; echo EXITED; stty -a | tr ' ' '\n' | grep -xE -- '-?(icanon|echo)' | tr '\n' ' '; echo; sleep 30"
tmux_wait $s '\[\.\] hot_spin'
tmux send-keys -t $s C-c
tmux_wait $s '^-?icanon -?echo'  # after EXITED: stty's line
screen=$(tmux capture-pane -t $s -p)
like "$screen" $'^BEFORE\nEXITED\nicanon echo' "Ctrl-C: the main screen back, line editing and echo on"
done_testing
