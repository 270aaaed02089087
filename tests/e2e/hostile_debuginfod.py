# hostile_debuginfod.py PORT MODE [FILE]: a debuginfod server that answers
# every /buildid/ID/debuginfo with something a debug file is not, printing
# "ready" once it listens and "sent N" for each reply's bytes. Modes:
# endless (zeros for ever, no length), junk (4 KB that is not ELF), file
# (FILE: an ELF file with another build id). Used by tests/e2e/debuginfod.sh.
import http.server, socketserver, sys
mode = sys.argv[2]
class H(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.0"
    def do_GET(self):
        if "/debuginfo" not in self.path:
            self.send_response(404); self.end_headers(); return
        body = open(sys.argv[3], "rb").read() if mode == "file" else b"\x7fELF junk " * 400
        self.send_response(200)
        self.send_header("Content-Type", "application/octet-stream")
        if mode != "endless":
            self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        sent = 0
        try:
            if mode == "endless":
                chunk = b"\0" * 65536
                while True:
                    self.wfile.write(chunk); sent += len(chunk)
            self.wfile.write(body); sent += len(body)
        except (BrokenPipeError, ConnectionResetError):
            pass
        print("sent", sent, flush=True)
    def log_message(self, *a): pass
socketserver.ThreadingTCPServer.allow_reuse_address = True
with socketserver.ThreadingTCPServer(("127.0.0.1", int(sys.argv[1])), H) as s:
    print("ready", flush=True); s.serve_forever()
