#!/usr/bin/env python3
"""A fake admission-controller endpoint on 127.0.0.1 for bedtop's tests.

Counters grow at known rates from the server's start, so a client that scrapes
twice must find those rates per minute:
  reserved_tokens_total   25,000/s on route triage (1,500,000 per minute)
  admitted_total              10/s              (600 per minute)
  settled_tokens_total    12,000/s              (720,000 per minute)
Paths (ROUTE is the route name put in the route label):
  /text/ROUTE     Prometheus text 0.0.4, no timestamps; ?retries=R (per second,
                  default 1) and ?max_tokens=M (gauge, default 1024)
  /om/ROUTE       OpenMetrics, every counter carries the server's timestamp,
                  reserved grows 5,000/s (300,000 per minute exactly)
  /json/ROUTE     the JSON form, reserved grows 1,000/s (60,000 per minute)
  /fleet          text for routes triage and agents (model_id label) at once
  /restart/ROUTE  two workers of ROUTE (label worker): a grows as /text (admitted
                  10/s, reserved 25,000/s, in flight 38); b answers the first
                  request with its old process's totals (admitted 1,000,000,
                  reserved 3,000,000,000) and restarted right after it: from then
                  on admitted 1/s and reserved 2,500/s since that first request
  /teams/ROUTE    three workers of ROUTE labelled by team (issue 35's shares):
                  a team=search settled 4,000/s, held 16,000; b team=search answers
                  the first request with its old process's settled total
                  (90,000,000) and restarted right after: 1,000/s since, held 8,000;
                  c team=ads settled 2,000/s, held 8,000. Each admits 1/s and
                  reserves 1,600/s (R = 1,600), 10 in flight. ?teams=N instead:
                  N teams t0000.. (one worker each) settling N-i tokens/s each
  /nolabel        text without route labels (for a per-route URL)
  /slow           answers after 30 s (a client timeout)
  /broken         HTTP 500
  /garbage        200 with binary bytes as text/plain
  /api/v1/query   a Prometheus server: answers by the query's metric; every
                  query received is appended to --log
--samples FILE logs "PATH TIME" per answer, the server time its counters were computed
at: the text and JSON forms carry no timestamps, so a client measures the gap between
two scrapes on its own clock, and on a loaded machine either scrape may be answered
late; the log lets a test expect exactly what moved in the gap the client measured.
Prints the port on stdout once listening, then serves until killed.
"""
import argparse
import json
import sys
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

START = time.time()
LOCK = threading.Lock()
ARGS = None

HIST = [("128", 10), ("256", 40), ("+Inf", 50)]  # p50 192, p99 256


def text_for(route, label="route", with_ts=False, reserved_rate=25000.0, om=False,
             retries_rate=1.0, max_tokens=1024, now=None):
    now = time.time() if now is None else now
    e = now - START
    lab = f'{label}="{route}"' if route else ""
    br = "{" + lab + "}" if lab else ""
    ts = f" {now:.3f}" if with_ts else ""
    counters = [("admitted", 10.0 * e), ("reserved_tokens", reserved_rate * e),
                ("settled_tokens", 12000.0 * e), ("completed", 9.0 * e),
                ("retries", retries_rate * e), ("throttled", 0.5 * e), ("rejected", 0.0)]
    gauges = [("in_flight", 38), ("concurrency_limit", 25), ("queue_depth", 4),
              ("max_tokens", max_tokens)]
    out = []
    for name, v in counters:
        fam = f"bedrock_admission_{name}"
        out.append(f"# TYPE {fam if om else fam + '_total'} counter")
        out.append(f"{fam}_total{br} {v:.3f}{ts}")
    for name, v in gauges:
        out.append(f"# TYPE bedrock_admission_{name} gauge")
        out.append(f"bedrock_admission_{name}{br} {v}")
    out.append("# TYPE bedrock_admission_output_tokens histogram")
    sep = "," if lab else ""
    for le, c in HIST:
        out.append(f'bedrock_admission_output_tokens_bucket{{{lab}{sep}le="{le}"}} {c}')
    out.append(f"bedrock_admission_output_tokens_sum{br} 9000")
    out.append(f"bedrock_admission_output_tokens_count{br} 50")
    if om:
        out.append("# EOF")
    return "\n".join(out) + "\n"


RESTART = {}  # route -> when /restart/ROUTE was first asked (worker b restarted then)


def restart_for(route):
    now = time.time()
    e = now - START
    with LOCK:
        first = RESTART.setdefault(route, now)
    since = now - first
    if since == 0:
        b_adm, b_res = 1000000.0, 3000000000.0  # the old process, just before its restart
    else:
        b_adm, b_res = 1.0 * since, 2500.0 * since
    a = f'route="{route}",worker="a"'
    b = f'route="{route}",worker="b"'
    return "\n".join([
        "# TYPE bedrock_admission_admitted_total counter",
        f"bedrock_admission_admitted_total{{{a}}} {10.0 * e:.3f}",
        f"bedrock_admission_admitted_total{{{b}}} {b_adm:.3f}",
        "# TYPE bedrock_admission_reserved_tokens_total counter",
        f"bedrock_admission_reserved_tokens_total{{{a}}} {25000.0 * e:.3f}",
        f"bedrock_admission_reserved_tokens_total{{{b}}} {b_res:.3f}",
        "# TYPE bedrock_admission_in_flight gauge",
        f"bedrock_admission_in_flight{{{a}}} 38",
    ]) + "\n"


def teams_for(route, nteams=0, now=None):
    now = time.time() if now is None else now
    e = now - START
    with LOCK:
        first = RESTART.setdefault("teams/" + route, now)
    since = now - first
    if nteams:
        workers = [(f"t{i:04d}", "w", (nteams - i) * e, 0) for i in range(nteams)]
    else:
        b_settled = 90000000.0 if since == 0 else 1000.0 * since
        workers = [("search", "a", 4000.0 * e, 16000), ("search", "b", b_settled, 8000),
                   ("ads", "c", 2000.0 * e, 8000)]
    fams = {"settled_tokens_total": ("counter", lambda w: w[2]),
            "admitted_total": ("counter", lambda w: 1.0 * e),
            "reserved_tokens_total": ("counter", lambda w: 1600.0 * e),
            "in_flight": ("gauge", lambda w: 10),
            "reserved_tokens_held": ("gauge", lambda w: w[3])}
    out = []
    for fam, (kind, val) in fams.items():
        out.append(f"# TYPE bedrock_admission_{fam} {kind}")
        for w in workers:
            lab = f'route="{route}",team="{w[0]}",worker="{w[1]}"'
            out.append(f"bedrock_admission_{fam}{{{lab}}} {val(w):.3f}")
    return "\n".join(out) + "\n"


def json_for(route, now=None):
    e = (time.time() if now is None else now) - START
    return json.dumps({"routes": {route: {
        "bedrock_admission_in_flight": 12,
        "bedrock_admission_concurrency_limit": 16,
        "bedrock_admission_reserved_tokens_total": 1000.0 * e,
        "bedrock_admission_output_tokens": {
            "buckets": {k: v for k, v in HIST}, "sum": 9000, "count": 50}}}})


def api_answer(query):
    if ARGS.log:
        with LOCK, open(ARGS.log, "a") as f:
            f.write(query + "\n")
    values = {"reserved_tokens_total": "1500000", "in_flight": "38",
              "concurrency_limit": "25", "histogram_quantile(0.99": "256",
              "histogram_quantile(0.5": "192"}
    v = None
    for k, val in values.items():
        if k in query:
            v = val
            break
    result = []
    if v is not None:
        result.append({"metric": {"route": "triage"}, "value": [time.time(), v]})
        result.append({"metric": {"model_id": "anthropic.claude-opus-4-7"},
                       "value": [time.time(), v]})
    return json.dumps({"status": "success",
                       "data": {"resultType": "vector", "result": result}})


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):
        pass

    def send(self, code, ctype, body):
        data = body if isinstance(body, bytes) else body.encode()
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        if ARGS.access_log:
            with LOCK, open(ARGS.access_log, "a") as f:
                f.write(self.path + "\n")
        u = urllib.parse.urlsplit(self.path)
        parts = [p for p in u.path.split("/") if p]
        text = "text/plain; version=0.0.4; charset=utf-8"
        # the one time this answer's counters are computed at, logged so a test can know
        # how far the counters really moved between two scrapes, however late either ran
        now = time.time()
        if ARGS.samples:
            with LOCK, open(ARGS.samples, "a") as f:
                f.write(f"{u.path} {now:.6f}\n")
        if u.path == "/api/v1/query":
            q = urllib.parse.parse_qs(u.query).get("query", [""])[0]
            return self.send(200, "application/json", api_answer(q))
        if len(parts) == 2 and parts[0] == "text":
            # ?retries=R&max_tokens=M: a retry storm and an oversized allowance
            qs = urllib.parse.parse_qs(u.query)
            return self.send(200, text, text_for(
                parts[1], retries_rate=float(qs.get("retries", ["1"])[0]),
                max_tokens=int(qs.get("max_tokens", ["1024"])[0]), now=now))
        if len(parts) == 2 and parts[0] == "om":
            return self.send(200, "application/openmetrics-text; version=1.0.0; charset=utf-8",
                             text_for(parts[1], with_ts=True, reserved_rate=5000.0, om=True))
        if len(parts) == 2 and parts[0] == "json":
            return self.send(200, "application/json", json_for(parts[1], now=now))
        if len(parts) == 2 and parts[0] == "teams":
            qs = urllib.parse.parse_qs(u.query)
            return self.send(200, text, teams_for(parts[1], int(qs.get("teams", ["0"])[0]), now=now))
        if len(parts) == 2 and parts[0] == "restart":
            return self.send(200, text, restart_for(parts[1]))
        if u.path == "/fleet":
            body = text_for("triage", now=now) + text_for("anthropic.claude-opus-4-7",
                                                          label="model_id", now=now)
            # two families twice in one 0.0.4 text would repeat TYPE lines: drop them
            body = "\n".join(l for l in body.split("\n") if not l.startswith("#")) + "\n"
            return self.send(200, text, body)
        if u.path == "/nolabel":
            return self.send(200, text, text_for(None, now=now))
        if u.path == "/slow":
            time.sleep(30)
            return self.send(200, text, text_for("slow"))
        if u.path == "/broken":
            return self.send(500, "text/plain", "internal error\n")
        if u.path == "/garbage":
            return self.send(200, text, bytes(range(1, 256)) * 4)
        return self.send(404, "text/plain", "not found\n")


def main():
    global ARGS
    p = argparse.ArgumentParser()
    p.add_argument("--port", type=int, default=0)
    p.add_argument("--log", default="", help="append each /api/v1/query query here")
    p.add_argument("--access-log", default="", help="append each request path here")
    p.add_argument("--samples", default="",
                   help="append PATH TIME for each answer: the time its counters are computed at")
    ARGS = p.parse_args()
    srv = ThreadingHTTPServer(("127.0.0.1", ARGS.port), Handler)
    srv.daemon_threads = True
    sys.stdout.write(f"{srv.server_address[1]}\n")
    sys.stdout.flush()
    srv.serve_forever()


if __name__ == "__main__":
    sys.exit(main())
