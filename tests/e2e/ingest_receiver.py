#!/usr/bin/env python3
"""ingest_receiver.py: a loopback stand-in for Grafana Pyroscope's ingest API,
for tests/e2e/agent_push.sh (no Pyroscope server is packaged in Debian).

    ingest_receiver.py DIR [FAIL]

Listens on 127.0.0.1 at a free port and prints "port N". For each
POST /ingest it checks what Pyroscope's API wants: name=APP{labels},
from and until (unix seconds, from <= until), format=pprof, and a
multipart/form-data body with a "profile" field. The first FAIL requests
are answered 503 (a receiver that is down, then recovers); after that a
good request is saved as DIR/N.pb.gz and answered 200, a bad one 400.
Each request prints one line: "ok N NAME FROM UNTIL", "failing", or
"bad REASON".
"""
import email.parser
import email.policy
import http.server
import os
import re
import sys
import urllib.parse

DIR = sys.argv[1]
FAIL = int(sys.argv[2]) if len(sys.argv) > 2 else 0
state = {"seen": 0, "saved": 0}


def profile_of(ctype, body):
    """The "profile" field of a multipart/form-data body, or None."""
    msg = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(
        b"Content-Type: " + ctype.encode() + b"\r\n\r\n" + body)
    if not msg.is_multipart():
        return None
    for part in msg.iter_parts():
        if part.get_param("name", header="content-disposition") == "profile":
            return part.get_payload(decode=True)
    return None


class Handler(http.server.BaseHTTPRequestHandler):
    def reply(self, code, line):
        print(line, flush=True)
        self.send_response(code)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        state["seen"] += 1
        if state["seen"] <= FAIL:
            return self.reply(503, "failing")
        url = urllib.parse.urlsplit(self.path)
        q = dict(urllib.parse.parse_qsl(url.query))
        why = None
        if url.path != "/ingest":
            why = "path " + url.path
        elif not re.fullmatch(r"[\w.\-]+\{[\w]+=[^,{}]+(,[\w]+=[^,{}]+)*\}", q.get("name", "")):
            why = "name " + q.get("name", "")
        elif q.get("format") != "pprof":
            why = "format " + q.get("format", "")
        elif not (q.get("from", "").isdigit() and q.get("until", "").isdigit()
                  and int(q["from"]) <= int(q["until"])):
            why = "from/until %s %s" % (q.get("from"), q.get("until"))
        else:
            prof = profile_of(self.headers.get("Content-Type", ""), body)
            if not prof:
                why = "no profile field"
        if why:
            return self.reply(400, "bad " + why)
        state["saved"] += 1
        with open(os.path.join(DIR, "%d.pb.gz" % state["saved"]), "wb") as f:
            f.write(prof)
        self.reply(200, "ok %d %s %s %s" % (state["saved"], q["name"], q["from"], q["until"]))

    def log_message(self, *args):
        pass


server = http.server.HTTPServer(("127.0.0.1", 0), Handler)
print("port", server.server_address[1], flush=True)
server.serve_forever()
