# hostile_code.py: 70000 functions whose code objects share one 64 KiB line
# table, run in turn, printing "ready" first: a process that makes a
# profiler reading its code objects hold 64 KiB for each one it meets.
# Used by tests/e2e/python.sh.
import sys, types
def f(x):
    y = x
    for _ in range(50):
        y = y * 3 % 1000003
    return y
big = bytes(65535)
code = f.__code__.replace(co_linetable=big)
fns = [types.FunctionType(code.replace(co_name="f%d" % i), {}) for i in range(70000)]
print("ready", flush=True)
x = 1
while True:
    for g in fns:
        x = g(x)
