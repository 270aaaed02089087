"""shares.py REGEX FOLDED: each function's share of a folded profile's
samples ("frame;frame;... count" lines, leaf last), as the innermost frame
(self) and anywhere in the stack (total), of the samples that have a frame
REGEX names (its first group, searched in each frame). Prints "samples N",
then "self NAME PCT" and "total NAME PCT" lines. For comparing profiles
of one run with another profiler's (tests/e2e/pyspy.sh, asprof.sh)."""
import collections
import re
import sys

name = re.compile(sys.argv[1])
own, anywhere, total = collections.Counter(), collections.Counter(), 0
for line in open(sys.argv[2]):
    stack, _, n = line.rstrip("\n").rpartition(" ")
    names = [m.group(1) for m in map(name.search, stack.split(";")) if m]
    if not names:
        continue
    total += int(n)
    own[names[-1]] += int(n)
    for f in set(names):
        anywhere[f] += int(n)
print("samples", total)
for label, c in (("self", own), ("total", anywhere)):
    for f in sorted(c):
        print(label, f, "%.1f" % (100 * c[f] / total))
