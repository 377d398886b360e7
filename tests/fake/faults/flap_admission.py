#!/usr/bin/env python3
"""An admission-controller endpoint on 127.0.0.1 that flaps, for tests/suites/t_faults.sh.

Requests are numbered from 1 and answered in phases: UP good answers, then
DOWN HTTP 500s, repeating
(--up 3 --down 3: 1-3 ok, 4-6 fail, 7-9 ok, ...). --down-first starts failing.
A good answer is Prometheus text for route "triage" whose counters grow with
the request number. Each request is logged to --log as "n status". Prints
"PORT <n>" once listening.
"""
import argparse
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

LOCK = threading.Lock()
N = [0]


class Handler(BaseHTTPRequestHandler):
    def log_message(self, fmt, *args):
        pass

    def do_GET(self):
        with LOCK:
            N[0] += 1
            n = N[0]
        a = ARGS
        phase = (n - 1) % (a.up + a.down)
        down = phase >= a.up if not a.down_first else phase < a.down
        status = 500 if down else 200
        body = b"down\n" if down else (
            "# TYPE bedrock_admission_reserved_tokens_total counter\n"
            "bedrock_admission_reserved_tokens_total{route=\"triage\"} %d\n"
            "# TYPE bedrock_admission_in_flight gauge\n"
            "bedrock_admission_in_flight{route=\"triage\"} 3\n" % (1000 * n)).encode()
        self.send_response(status)
        self.send_header("Content-Type", "text/plain; version=0.0.4")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
        if a.log:
            with LOCK, open(a.log, "a") as f:
                f.write("%d %d\n" % (n, status))


def main():
    global ARGS
    p = argparse.ArgumentParser()
    p.add_argument("--up", type=int, default=3)
    p.add_argument("--down", type=int, default=3)
    p.add_argument("--down-first", action="store_true")
    p.add_argument("--log", default="")
    ARGS = p.parse_args()
    srv = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    print("PORT %d" % srv.server_address[1], flush=True)
    srv.serve_forever()


if __name__ == "__main__":
    sys.exit(main())
