# zombie.py: a -c command that leaves a zombie in its process group whose
# parent has left the group and never reaps it (as a container's PID 1 may
# not), then exits. Used by tests/e2e/children.sh.
import os, time
r, w = os.pipe()
if os.fork() == 0:
    g = os.fork()
    if g == 0:
        os._exit(0)  # G: a zombie of the command's group, its parent elsewhere
    while open(f"/proc/{g}/stat").read().rsplit(")", 1)[1].split()[0] != "Z":
        time.sleep(0.001)
    os.setpgid(0, 0)  # C leaves the group and never reaps G
    os.write(w, b"x")
    time.sleep(3)
    os._exit(0)
os.read(r, 1)
os._exit(0)
