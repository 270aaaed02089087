# slowhttp.py PORT SECONDS: an HTTP server that answers every request 404
# after SECONDS, printing "ready" once it listens: a debuginfod server too
# slow to wait for. Used by tests/e2e/debuginfod.sh.
import http.server, socketserver, sys, time
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        time.sleep(float(sys.argv[2])); self.send_response(404); self.end_headers()
    def log_message(self, *a): pass
socketserver.ThreadingTCPServer.allow_reuse_address = True
with socketserver.ThreadingTCPServer(("127.0.0.1", int(sys.argv[1])), H) as s:
    print("ready", flush=True); s.serve_forever()
