# hostile_receiver.py MODE: an HTTP server on loopback that answers every
# POST badly, printing "port N" once it listens and "request PATH" for
# each request. Modes: loop (307 to itself, for ever), redirect (307 once
# to /ok, which answers 200), endless (200 and a body that never ends).
# Used by tests/e2e/agent_push.sh against http.post.
import http.server, socketserver, sys
mode = sys.argv[1]
class H(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def do_POST(self):
        n = int(self.headers.get("Content-Length", "0"))
        self.rfile.read(n)
        print("request", self.path, n, flush=True)
        if mode == "loop" or (mode == "redirect" and self.path != "/ok"):
            self.send_response(307)
            self.send_header("Location", "/ok" if mode == "redirect" else self.path)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        self.send_response(200)
        if mode == "endless":
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            chunk = b"%x\r\n%s\r\n" % (65536, b"x" * 65536)
            try:
                while True:
                    self.wfile.write(chunk)
            except (BrokenPipeError, ConnectionResetError):
                return
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"ok")
    def log_message(self, *a): pass
socketserver.ThreadingTCPServer.allow_reuse_address = True
socketserver.ThreadingTCPServer.daemon_threads = True
with socketserver.ThreadingTCPServer(("127.0.0.1", 0), H) as s:
    print("port", s.server_address[1], flush=True)
    s.serve_forever()
