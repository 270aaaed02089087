# attack.py PORT MODE [N]: what a hostile client does to perfscript's HTTP
# listener, while a well-behaved one scrapes it. Prints one line per scrape,
# "scrape CODE SECONDS", and for "big" the status line each oversized
# request got. Used by tests/e2e/listener.sh.
#   idle N    N connections that connect and send nothing, held open
#   loris N   N connections that send a header line every 0.2 s, never ending
#   big       requests with a 100 kB path and a 100 kB header
#   timeout   one idle connection: prints "closed after S" when the server drops it
import socket
import subprocess
import sys
import time

port, mode = int(sys.argv[1]), sys.argv[2]
n = int(sys.argv[3]) if len(sys.argv) > 3 else 0
held = []


def scrape():
    t = time.time()
    r = subprocess.run(["curl", "-s", "-m", "1", "-o", "/dev/null", "-w", "%{http_code}",
                        f"http://127.0.0.1:{port}/metrics"], capture_output=True, text=True)
    print("scrape", r.stdout, f"{time.time() - t:.3f}", flush=True)


def connect():
    return socket.create_connection(("127.0.0.1", port), timeout=5)


def status(s):
    s.settimeout(3)
    try:
        line = s.recv(200).split(b"\r\n")[0].decode()
    except OSError as e:
        line = f"error {e}"
    return line or "closed"


if mode == "idle":
    for i in range(n):
        held.append(connect())
    print("held", len(held), flush=True)
    for _ in range(3):
        scrape()
elif mode == "loris":
    for i in range(n):
        s = connect()
        s.send(b"GET /metrics HTTP/1.1\r\n")
        held.append(s)
    for _ in range(3):
        for s in held:
            try:
                s.send(b"X-Slow: 1\r\n")
            except OSError:
                pass
        scrape()
        time.sleep(0.2)
elif mode == "big":
    s = connect()
    s.sendall(b"GET /" + b"a" * 100000 + b" HTTP/1.1\r\nHost: x\r\n\r\n")
    print("path", status(s), flush=True)
    s = connect()
    s.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\nX-Big: " + b"b" * 100000 + b"\r\n\r\n")
    print("header", status(s), flush=True)
    for i in range(100):
        s = connect()
        try:
            s.send(b"GET /" + b"a" * 60000)
        except OSError:
            pass
        held.append(s)
    scrape()
elif mode == "timeout":
    s = connect()
    s.settimeout(30)
    t = time.time()
    try:
        got = s.recv(10)
    except OSError:
        got = b"?"
    print("closed after", f"{time.time() - t:.1f}", "read", len(got), flush=True)
