#!/usr/bin/env python3
"""bench.py: bedtop's benchmarks (make bench). Not a test: it asserts nothing.

Each figure is measured several times (median) on this machine next to a reference
measured the same way, and printed as one line:
    figure: value (reference: value, ratio Nx, target ...: met|NOT met)
Then BENCHMARKS.md's table (between its "bench:table" markers) is rewritten with
the figures, the machine and the date, so a regression shows in git diff.

Only 127.0.0.1: the fake AWS endpoint (tests/fake/fake_aws.py) serves every request.
Inputs come from tests/bench/gen.py. Drivers that need the library in process are in
tests/bench/bench_drv.c (built by make bench).
"""
import argparse
import datetime
import fcntl
import json
import shlex
import math
import os
import platform
import pty
import re
import shutil
import signal
import statistics
import struct
import subprocess
import sys
import tempfile
import termios
import threading
import time

SRC = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
GEN = os.path.join(SRC, "tests", "bench", "gen.py")
FAKE = os.path.join(SRC, "tests", "fake", "fake_aws.py")
STUB = os.path.join(SRC, "tests", "bench", "stub_aws.py")
AK = "AKIDEXAMPLE"
SK = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"
CW_TARGET = "GraniteServiceVersion20100801.GetMetricData"

FIGURES = []


def env_aws():
    e = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    e.update(AWS_ACCESS_KEY_ID=AK, AWS_SECRET_ACCESS_KEY=SK, AWS_CONFIG_FILE="/nonexistent",
             AWS_SHARED_CREDENTIALS_FILE="/nonexistent", AWS_EC2_METADATA_DISABLED="true",
             AWS_DEFAULT_REGION="us-east-1", BEDTOP_DATADIR=os.path.join(SRC, "data"),
             AWS_CLI_AUTO_PROMPT="off", AWS_PAGER="")
    return e


def run(cmd, env=None, stdout=subprocess.DEVNULL, stdin=subprocess.DEVNULL):
    """Runs cmd; returns (wall s, cpu s, peak RSS kB, exit code). The peak comes
    from /usr/bin/time when present: wait4's ru_maxrss of a direct child includes
    this (large) Python process's own peak, carried over by exec."""
    timef = None
    if os.path.exists("/usr/bin/time"):
        fd, timef = tempfile.mkstemp(prefix="bench-time.")
        os.close(fd)
        cmd = ["/usr/bin/time", "-q", "-f", "%M", "-o", timef] + cmd
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, env=env, stdout=stdout, stderr=subprocess.DEVNULL, stdin=stdin)
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t0
    rc = os.waitstatus_to_exitcode(status)
    rss = ru.ru_maxrss
    if timef:
        try:
            with open(timef) as f:
                rss = int(f.read().split()[-1])
        except (OSError, ValueError, IndexError):
            pass
        os.unlink(timef)
    return wall, ru.ru_utime + ru.ru_stime, rss, rc


def med(cmd, n, env=None, before=None):
    """cmd run n times (before() ahead of each, when given): the median wall and CPU,
    the peak RSS and the last exit code."""
    rs = []
    for _ in range(n):
        if before:
            before()
        rs.append(run(cmd, env))
    return (statistics.median(r[0] for r in rs), statistics.median(r[1] for r in rs),
            max(r[2] for r in rs), rs[-1][3])


def figure(name, value, unit, ref_name, ref_value, ratio, target, met, note=""):
    FIGURES.append(dict(name=name, value=value, unit=unit, ref_name=ref_name,
                        ref_value=ref_value, ratio=ratio, target=target, met=met, note=note))
    v = fmt(value, unit)
    r = "" if ref_value is None else "%s %s" % (ref_name, fmt(ref_value, unit))
    rt = "" if ratio is None else ", ratio %.2fx" % ratio
    m = "met" if met else ("NOT met" if met is False else "no target")
    print("%s: %s (reference: %s%s, target %s: %s)%s" % (name, v, r or ref_name, rt, target, m,
                                                       ("  # " + note) if note else ""), flush=True)


def fmt(v, unit):
    if v is None:
        return "n/a"
    if unit == "s":
        return "%.1f ms" % (v * 1000) if v < 1 else "%.2f s" % v
    if unit == "kB":
        return "%.1f MB" % (v / 1024)
    if unit == "%":
        return "%.3f %%" % v
    if unit in ("x", "B"):
        return "%.0f%s" % (v, unit if unit == "x" else " B")
    if isinstance(v, float) and not v.is_integer():
        return "%.3g %s" % (v, unit)
    return "%d %s" % (v, unit)


def gen(*args):
    subprocess.run([sys.executable, GEN] + [str(a) for a in args], check=True)


class Fake:
    def __init__(self, tmp, name, scenario):
        self.log = os.path.join(tmp, name + ".log")
        out = open(os.path.join(tmp, name + ".out"), "w+")
        self.p = subprocess.Popen([sys.executable, FAKE, "--scenario", scenario, "--log", self.log],
                                  stdout=out, stderr=subprocess.DEVNULL,
                                  env=dict(os.environ, PYTHONUNBUFFERED="1"))
        self.wait_port(out, 200, "the fake AWS endpoint")

    def wait_port(self, out, tries, what):
        """Waits (tries x 50 ms) for the "PORT n" line the server prints."""
        self.port = None
        for _ in range(tries):
            out.seek(0)
            m = re.search(r"^PORT (\d+)", out.read(), re.M)
            if m:
                self.port = int(m.group(1))
                break
            time.sleep(0.05)
        if not self.port:
            raise SystemExit("bench: %s did not start" % what)
        self.url = "http://127.0.0.1:%d" % self.port

    def entries(self):
        with open(self.log) as f:
            return [json.loads(x) for x in f if x.strip()]

    def stop(self):
        self.p.terminate()
        self.p.wait()


class Stub(Fake):
    """tests/bench/stub_aws.py: the fast, non-verifying endpoint, so at fleet scale
    bedtop is what is timed, not the fake's SigV4 and model checks."""

    def __init__(self, tmp, name, routes, quotas, log=False):
        self.log = os.path.join(tmp, name + ".log")
        out = open(os.path.join(tmp, name + ".out"), "w+")
        cmd = [sys.executable, STUB, "--routes", str(routes), "--quotas", str(quotas)]
        if log:
            cmd += ["--log", self.log]
        self.p = subprocess.Popen(cmd, stdout=out, stderr=subprocess.DEVNULL,
                                  env=dict(os.environ, PYTHONUNBUFFERED="1"))
        self.wait_port(out, 1200, "the stub AWS endpoint")

    def cpu(self):
        with open("/proc/%d/stat" % self.p.pid) as f:
            x = f.read().rsplit(")", 1)[1].split()
        return (int(x[11]) + int(x[12])) / os.sysconf("SC_CLK_TCK")


def curl_gmd(url, body_path):
    return ["curl", "-s", "-o", "/dev/null", "-X", "POST", url + "/", "--aws-sigv4",
            "aws:amz:us-east-1:monitoring", "--user", AK + ":" + SK,
            "-H", "Content-Type: application/x-amz-json-1.0", "-H", "X-Amz-Target: " + CW_TARGET,
            "--data-binary", "@" + body_path]


# ---------------------------------------------------------------- quick check over SSH

def bench_check(a, tmp):
    """`bedtop check` at 50 and 500 routes against the stub, by CPU time (the machine may
    be loaded: CPU is what bedtop spends, wall is what the load adds), next to curl
    posting the largest GetMetricData body bedtop sent (one signed round trip), and at
    50 routes the AWS CLI sending every body bedtop sent."""
    env = env_aws()
    for n, target in ((20, 1.5), (60, 3.0)) if a.smoke else ((50, 1.5), (500, 3.0)):
        conf = os.path.join(tmp, "c%d.conf" % n)
        gen("config", conf, "--routes", n)
        stub = Stub(tmp, "check%d" % n, n, n // 2, log=True)
        try:
            cmd = [a.bedtop, "check", "--format", "json", "--config", conf, "--endpoint-url", stub.url]
            _, _, _, rc = run(cmd, env)
            if rc > 2:
                print("bench: bedtop check exited %d against the stub" % rc)
            bodies = [e["body"] for e in stub.entries() if e["op"] == "GetMetricData"]
            paths = []
            for i, body in enumerate(bodies):
                p = os.path.join(tmp, "gmd%d_%d.json" % (n, i))
                with open(p, "w") as f:
                    json.dump(body, f, separators=(",", ":"))
                paths.append(p)
            bt = med(cmd, a.runs, env)
            big = max(paths, key=os.path.getsize)
            ct = med(curl_gmd(stub.url, big), a.runs)
            nq = sum(len(body["MetricDataQueries"]) for body in bodies)
            if n == 50 and shutil.which("aws") and not a.smoke:
                aws_cmds = [["aws", "cloudwatch", "get-metric-data", "--cli-input-json",
                             "file://" + p, "--endpoint-url", stub.url, "--region", "us-east-1",
                             "--output", "json"] for p in paths]
                aws_c = [sum(run(c, env)[1] for c in aws_cmds) for _ in range(max(1, a.runs // 2))]
                am = statistics.median(aws_c)
                figure("check, %d routes vs AWS CLI (CPU)" % n, bt[1], "s",
                       "aws cloudwatch get-metric-data x%d (same %d queries)" % (len(paths), nq), am,
                       am / bt[1], ">= 10x less CPU", am / bt[1] >= 10)
            figure("check, %d routes vs one curl --aws-sigv4 GetMetricData (CPU)" % n, bt[1], "s",
                   "curl, one request of %d queries" % len(json.load(open(big))["MetricDataQueries"]),
                   ct[1], bt[1] / ct[1], "<= %.1fx the curl floor" % target, bt[1] / ct[1] <= target,
                   "wall %.0f ms (curl %.0f ms); peak RSS %.1f MB (%.0f kB a route); %d GetMetricData "
                   "(%d queries) and the Service Quotas pages, answered by the stub"
                   % (bt[0] * 1000, ct[0] * 1000, bt[2] / 1024, bt[2] / n, len(paths), nq))
            # the same requests from curl: what a client that only signs, sends and
            # discards the answers spends on them (bedtop also lists, parses, evaluates)
            every = [sum(run(curl_gmd(stub.url, p))[1] for p in paths) for _ in range(a.runs)]
            ce = statistics.median(every)
            figure("check, %d routes vs curl sending each of its %d GetMetricData bodies (CPU)"
                   % (n, len(paths)), bt[1], "s", "curl x%d" % len(paths), ce, bt[1] / ce,
                   "no target (the fair floor: the same requests)", None)
        finally:
            stub.stop()


# ---------------------------------------------------------------- fleet scale

def bench_scale(a, tmp):
    """A fleet: 5,000 routes, 2,500 of them with a quota in Service Quotas, polled live
    (bench_drv scale: CloudWatch, Service Quotas, every route evaluated, as serve does)
    three polls a simulated minute apart; then a 20,000-route `bedtop check`."""
    env = env_aws()
    n, nq = (40, 20) if a.smoke else (5000, 2500)
    conf = os.path.join(tmp, "f%d.conf" % n)
    gen("config", conf, "--routes", n, "--no-quota")
    stub = Stub(tmp, "scale%d" % n, n, nq)
    try:
        s0 = stub.cpu()
        out = subprocess.run([a.drv, "scale", conf, stub.url, "3"], env=env, capture_output=True,
                             text=True, check=True).stdout
        stub_cpu = stub.cpu() - s0
    finally:
        stub.stop()
    r = json.loads(out)
    first, steady = r["polls"][0], r["polls"][1:]
    sc = statistics.median(p["cpu_s"] for p in steady)
    sw = statistics.median(p["wall_s"] for p in steady)
    figure("fleet, %d routes / %d quotas: first poll CPU (serve: 3 h backfill, day sums hourly)" % (n, nq),
           first["cpu_s"], "s", "half a core of the 60 s interval", 30, first["cpu_s"] / 30,
           "< 30 s", first["cpu_s"] < 30,
           "%d requests; %d samples in the store; %d of %d routes with a quota and usage; "
           "the stub's own CPU over the run %.1f s"
           % (first["requests"], r["samples"], r["routes_with_quota_and_usage"], n, stub_cpu))
    figure("fleet, %d routes: first poll wall, start-up included" % n,
           first["wall_s"] + r["start_wall_s"], "s", "the interval", 60,
           (first["wall_s"] + r["start_wall_s"]) / 60, "< 60 s (inside one interval)",
           first["wall_s"] + r["start_wall_s"] < 60,
           "start-up (config, store, query sets) %.0f ms CPU; the stub shares the 2 cores"
           % (r["start_cpu_s"] * 1000))
    figure("fleet, %d routes: steady poll CPU (median of %d)" % (n, len(steady)), sc, "s",
           "half a core of the 60 s interval", 30, sc / 30, "< 30 s", sc < 30,
           "%.1f us a route; wall %.2f s; %d requests a poll" % (sc / n * 1e6, sw, steady[0]["requests"]))
    kb = (r["rss_kb"] - r["rss_start_kb"]) / n
    figure("fleet, %d routes: memory per route (serve, after the first polls)" % n, kb, "kB/route",
           "budget", 40, kb / 40, "< 40 kB a route", kb < 40,
           "RSS %.0f MB; the store's series %.1f kB a route (%d series); the OpenMetrics "
           "gzip kept %.1f kB a route (rendered into it piece by piece: %.1f kB a route plain, "
           "never held)" % (r["rss_kb"] / 1024, r["store_bytes"] / 1024 / n, r["series"],
                            r["body_bytes"] / 1024 / n, r.get("plain_bytes", 0) / 1024 / n))
    # the peak, not only what stays: a new generation's report and render on top of the
    # store (issue 38: 64-76 kB a route while the whole plain body was built before its gzip)
    pk = (r["peak_kb"] - r["rss_start_kb"]) / n
    phases = ", ".join("poll %d %.0f / render %.0f MB" % (k + 1, p.get("poll_peak_kb", 0) / 1024,
                                                           p.get("render_peak_kb", 0) / 1024)
                       for k, p in enumerate(r["polls"]))
    figure("fleet, %d routes: peak memory per route (serve: polls, evaluation, render)" % n, pk,
           "kB/route", "budget", 40, pk / 40, "< 40 kB a route (issue 38)", pk < 40,
           "peak RSS %.0f MB; peaks by phase: %s" % (r["peak_kb"] / 1024, phases))
    # 20,000 routes, one `check` (cold: --no-state, as a first run or cron's first
    # minute), then 5,000 for the growth ratio (issue 38: < 3 s CPU, < 300 MiB)
    n2 = 200 if a.smoke else 20000
    got = {}
    for nn in (n2 // 4, n2):
        conf2 = os.path.join(tmp, "f%d.conf" % nn)
        gen("config", conf2, "--routes", nn, "--no-quota")
        stub = Stub(tmp, "check%d" % nn, nn, nn // 8)
        try:
            s0 = stub.cpu()
            got[nn] = run([a.bedtop, "check", "--format", "json", "--no-state", "--config", conf2,
                           "--endpoint-url", stub.url], env) + (stub.cpu() - s0,)
        finally:
            stub.stop()
    w, c, rss, rc, stub_cpu = got[n2]
    figure("check, %d routes" % n2, w, "s", "budget", 10, w / 10, "< 10 s", w < 10 and rc <= 2,
           "bedtop's CPU %.2f s (%.0f us a route), the stub's %.2f s, on 2 shared cores; peak "
           "RSS %.0f MB (%.0f kB a route); exit %d"
           % (c, c / n2 * 1e6, stub_cpu, rss / 1024, rss / n2, rc))
    figure("check, %d routes: CPU" % n2, c, "s", "budget", 3, c / 3, "< 3 s (issue 38)", c < 3,
           "user + system of bedtop alone; the stub's CPU is not counted")
    figure("check, %d routes: peak RSS" % n2, rss, "kB", "budget", 300 * 1024,
           rss / (300 * 1024), "< 300 MiB (issue 38)", rss < 300 * 1024,
           "%.1f kB a route (/usr/bin/time's maximum resident set)" % (rss / n2))
    c4 = got[n2 // 4][1]
    figure("check, %d routes against 4 x %d: CPU" % (n2, n2 // 4), c, "s",
           "4 x %d routes:" % (n2 // 4), 4 * c4, c / (4 * c4), "ratio <= 1.25 (linear)",
           c / (4 * c4) <= 1.25, "one %d-route check: %.2f s" % (n2 // 4, c4))


def bench_discover(a, tmp):
    """ListMetrics discovery (bench_drv discover: the CloudWatch collector in live mode
    lists every AWS/Bedrock metric and matches each to its routes) of 5,000 and 20,000
    routes against the stub: 20,000 should cost four times 5,000. It was quadratic
    (every listed metric compared with every route by strcmp)."""
    env = env_aws()
    sizes = (200, 800) if a.smoke else (5000, 20000)
    got = {}
    for n in sizes:
        conf = os.path.join(tmp, "d%d.conf" % n)
        gen("config", conf, "--routes", n, "--no-quota")
        stub = Stub(tmp, "disc%d" % n, n, 0)
        try:
            runs = []
            for _ in range(a.runs):
                out = subprocess.run([a.drv, "discover", conf, stub.url], env=env,
                                     capture_output=True, text=True, check=True).stdout
                runs.append(json.loads(out))
        finally:
            stub.stop()
        got[n] = (statistics.median(r["cpu_s"] for r in runs), runs[0])
    small, big = sizes
    k = big / small
    ratio = got[big][0] / (k * got[small][0]) if got[small][0] > 0 else None
    figure("discovery: ListMetrics of %d routes against %d (CPU)" % (big, small), got[big][0], "s",
           "%g x %d routes" % (k, small), k * got[small][0], ratio, "ratio <= 1.5 (linear)",
           ratio is not None and ratio <= 1.5,
           "%d routes: %.3f s, %d requests; %d routes: %d requests, %d routes matched"
           % (small, got[small][0], got[small][1]["requests"], big, got[big][1]["requests"],
              got[big][1]["routes_matched"]))


# ---------------------------------------------------------------- serve

def bench_serve(a, tmp):
    """`bedtop serve` of 500 routes: CPU per /metrics scrape, plain and gzip (what
    Prometheus asks for), from /proc over 20 scrapes each; reference: the plain scrape.
    Then, 500 and 5,000 routes, gzip scrapes spaced 1.1 s apart as Prometheus spaces
    them (the poller's clock moves, its data do not) against back-to-back ones (issue 38:
    one evaluation and render per data generation); CPU per scrape from the process's
    threads' /proc schedstat (nanoseconds), the median of the scrapes."""
    for n in ((20,) if a.smoke else (500, 5000)):
        serve_one(a, tmp, n, plain_too=n <= 500)


def serve_one(a, tmp, n, plain_too):
    import urllib.request
    import socket
    conf = os.path.join(tmp, "v%d.conf" % n)
    gen("config", conf, "--routes", n)
    stub = Stub(tmp, "serve%d" % n, n, 0)
    with socket.socket() as so:  # a free port (serve prints none)
        so.bind(("127.0.0.1", 0))
        port = so.getsockname()[1]
    p = subprocess.Popen([a.bedtop, "serve", "--config", conf, "--endpoint-url", stub.url,
                          "--listen", "127.0.0.1:%d" % port], env=env_aws(),
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def cpu():
        with open("/proc/%d/stat" % p.pid) as f:
            x = f.read().rsplit(")", 1)[1].split()
        return (int(x[11]) + int(x[12])) / os.sysconf("SC_CLK_TCK")

    def cpu_ns():
        t = 0
        for task in os.listdir("/proc/%d/task" % p.pid):
            try:
                with open("/proc/%d/task/%s/schedstat" % (p.pid, task)) as f:
                    t += int(f.read().split()[0])
            except OSError:
                pass
        return t / 1e9

    def scrape(gz):
        req = urllib.request.Request("http://127.0.0.1:%d/metrics" % port,
                                     headers={"Accept-Encoding": "gzip"} if gz else {})
        with urllib.request.urlopen(req, timeout=60) as resp:
            return len(resp.read())

    def counters():
        import gzip
        req = urllib.request.Request("http://127.0.0.1:%d/metrics" % port,
                                     headers={"Accept-Encoding": "gzip"})
        with urllib.request.urlopen(req, timeout=60) as resp:
            text = gzip.decompress(resp.read()).decode()
        return [x for x in text.splitlines() if x.startswith(("bedtop_api_requests_total",
                                                              "bedtop_cloudwatch_metrics_requested_total"))]

    def settle():
        """Until no AWS request is counted for 3 s: no new data between the scrapes."""
        last = None
        for _ in range(60):
            now = counters()
            if now == last:
                return
            last = now
            time.sleep(3)

    def timed(gz):
        c0 = cpu_ns()
        size = scrape(gz)
        return cpu_ns() - c0, size
    try:
        body = 0
        for _ in range(1200):  # until the first poll is in the body
            try:
                body = scrape(False)
                if body > 100 * n:
                    break
            except OSError:
                pass
            time.sleep(0.1)
        settle()  # the first poll's later phases (quotas, day sums) are in
        res = {}
        for gz in ((False, True) if plain_too else (True,)):
            c0 = cpu()
            for _ in range(20):
                size = scrape(gz)
            res[gz] = ((cpu() - c0) / 20, size)
        back = [timed(True)[0] for _ in range(10)]
        spaced = []
        for _ in range(3 if a.smoke else 8):
            time.sleep(1.1)
            spaced.append(timed(True)[0])
    finally:
        p.terminate()
        p.wait()
        stub.stop()
    if plain_too:
        plain, gzip_ = res[False], res[True]
        figure("serve, %d routes: CPU per gzip scrape" % n, gzip_[0], "s", "a plain scrape", plain[0],
               gzip_[0] / plain[0] if plain[0] else None, "no target (b25c: gzip once per evaluation)",
               None, "body %d B plain, %d B gzip; /proc CPU ticks are 10 ms over 20 scrapes"
               % (plain[1], gzip_[1]))
    b, sp = statistics.median(back), statistics.median(spaced)
    figure("serve, %d routes: CPU per gzip scrape spaced 1.1 s (no new data)" % n, sp, "s",
           "back to back", b, sp / b if b else None, "< 50 ms (issue 38: one render a generation)",
           sp < 0.05, "median of %d spaced and %d back-to-back scrapes (schedstat); worst spaced %.1f ms; "
           "gzip body %d B" % (len(spaced), len(back), max(spaced) * 1000, res[True][1]))


# ---------------------------------------------------------------- spend (issue 36)

def spend_reps(a):
    """The alternated repetitions of bench_spend and bench_shares: at least 11, even under
    --quick. Their figures are ratios of two medians a few percent apart (each repetition
    0.1-0.6 s), and medians of 3 moved by 1.01x-1.14x between runs of the same binary."""
    return max(3, a.runs) if a.smoke else max(11, a.runs)


def drv_on_stub(a, tmp, mode, n, nq, conf, *args):
    """bench_drv MODE CONF URL ARGS... against a stub of n routes and nq quotas started for
    it (and stopped after); its JSON line, parsed."""
    stub = Stub(tmp, "%s%d" % (mode, n), n, nq)
    try:
        out = subprocess.run([a.drv, mode, conf, stub.url] + [str(x) for x in args],
                             env=env_aws(), capture_output=True, text=True, check=True).stdout
    finally:
        stub.stop()
    return json.loads(out)


def bench_spend(a, tmp):
    """What prices cost a 5,000-route poll (issue 36): the fleet polled live against the
    stub (bench_drv spend: CloudWatch and Service Quotas, 3 polls a simulated minute
    apart), then the evaluation each poll makes (every route with its spend, SPEND_SPIKE
    and the Region, group and team sums) and serve's exposition of it, with the price
    table and without it, alternated in one process, medians: the poll as the fleet
    figures time it (collection + evaluation + exposition, rendered and gzipped). Targets: the poll with
    prices within 5 % of the poll without them, the spend figures alone within 5 % of
    the poll. Instruction counts (callgrind, load-free) are in BENCHMARKS.md."""
    n, nq = (40, 20) if a.smoke else (5000, 2500)
    reps = spend_reps(a)
    conf = os.path.join(tmp, "s%d.conf" % n)
    gen("config", conf, "--routes", n, "--no-quota")
    r = drv_on_stub(a, tmp, "spend", n, nq, conf, "3", reps)
    # a poll as the fleet figures time it (bench_drv scale): the collection, the
    # evaluation and the exposition serve renders and gzips from it
    w, wo, poll = r["eval_with_prices_s"], r["eval_without_prices_s"], r["poll_cpu_s"]
    xw, xwo = r["expo_with_prices_s"], r["expo_without_prices_s"]
    total_w, total_wo = poll + w + xw, poll + wo + xwo
    figure("spend: a %d-route poll with prices vs without (CPU)" % n, total_w, "s",
           "the same poll, no price table", total_wo, total_w / total_wo, "<= 1.05x",
           total_w / total_wo <= 1.05,
           "collection %.2f s (steady, median); evaluation %.0f ms with prices, %.0f ms without; "
           "exposition (rendered and gzipped) %.0f ms with the spend series, %.0f ms without (medians of %d, "
           "alternated in one process); %d of %d routes priced by %d rows"
           % (poll, w * 1000, wo * 1000, xw * 1000, xwo * 1000, r["reps"], r["priced"],
              r["routes"], r["price_rows"]))
    sp = r["spend_alone_s"]
    figure("spend: %d routes' spend figures alone vs the poll (CPU)" % n, sp, "s",
           "the poll (collection + evaluation + exposition)", total_w, sp / total_w,
           "<= 0.05x (within 5 % of the poll)", sp / total_w <= 0.05,
           "each route's rate, day and spike windows, the Region, group and team sums and the "
           "groups' spike windows, timed alone over an evaluated report (median of %d); the "
           "evaluation alone: %.0f ms with prices, %.0f ms without" % (r["reps"], w * 1000, wo * 1000))


# ---------------------------------------------------------------- shares (issue 38)

def bench_shares(a, tmp):
    """What shares by team cost a poll (issue 38): 1,000 routes polled live against the
    stub (bench_drv shares: CloudWatch and Service Quotas, 3 polls a simulated minute
    apart), each poll with every route's admission counters read per series (3 series a
    route, each of one of 1,000 teams, each team on 3 routes), then the evaluation and
    serve's exposition (rendered and gzipped) with the config's share_label naming the
    series' team label and with it naming a label no series carries (the same store,
    no team told apart: every share unattributed), alternated in one process, medians.
    Target: the poll with shares by team within 5 % of the poll without them."""
    n, teams, per = (40, 20, 3) if a.smoke else (1000, 1000, 3)
    reps = spend_reps(a)
    conf = os.path.join(tmp, "t%d.conf" % n)
    gen("config", conf, "--routes", n, "--no-quota")
    r = drv_on_stub(a, tmp, "shares", n, n // 2, conf, "3", reps, teams, per)
    w, wo, poll = r["eval_with_teams_s"], r["eval_without_teams_s"], r["poll_cpu_s"]
    xw, xwo = r["expo_with_teams_s"], r["expo_without_teams_s"]
    total_w, total_wo = poll + w + xw, poll + wo + xwo
    figure("shares: a %d-route poll with shares by %d teams vs without (CPU)" % (n, teams), total_w,
           "s", "the same poll, no team label named", total_wo, total_w / total_wo, "<= 1.05x",
           total_w / total_wo <= 1.05,
           "collection and admission readings %.3f s (steady, median); evaluation %.1f ms with "
           "teams, %.1f ms without; exposition (rendered and gzipped) %.1f ms with the team "
           "series, %.1f ms without (medians of %d, alternated in one process); %d team shares "
           "told apart" % (poll, w * 1000, wo * 1000, xw * 1000, xwo * 1000, r["reps"],
                           r["team_shares"]))


# ---------------------------------------------------------------- API cost

def bench_cost(a, tmp):
    lag = 120
    for n in (20, 200):
        conf, scen = os.path.join(tmp, "k%d.conf" % n), os.path.join(tmp, "k%d.json" % n)
        gen("config", conf, "--routes", n)
        gen("scenario", scen, "--routes", n, "--minutes", 240)
        fake = Fake(tmp, "cost%d" % n, scen)
        try:
            out = subprocess.run([a.drv, "cost", conf, fake.url, "4"], env=env_aws(),
                                 capture_output=True, text=True, check=True).stdout
            r = json.loads(out)
            log = [e for e in fake.entries() if e["op"] in ("GetMetricData", "ListMetrics")]
        finally:
            fake.stop()
        q = r["metrics_per_poll"]
        want = math.ceil(q / 500)
        # assign log lines to polls by the requests each poll sent, in order
        polls, i = [], 0
        for p in r["polls"]:
            polls.append((p["now"], log[i:i + p["requests"]]))
            i += p["requests"]
        gmd = [[e for e in L if e["op"] == "GetMetricData"] for _, L in polls]
        steady = [len(x) for x in gmd[1:]]
        # each poll against the fewest requests its own queries need (a poll with the
        # 5-minute signals sends more queries than one without)
        fewest = [math.ceil(sum(len(e["body"]["MetricDataQueries"]) for e in x) / 500) for x in gmd[1:]]
        twice = 0
        settled = {}   # (query id, minute) -> poll index where it was fetched settled
        points = []
        for k, (now, _) in enumerate(polls):
            pts = 0
            for e in gmd[k]:
                b = e["body"]
                for mq in b["MetricDataQueries"]:
                    for m in range(int(b["StartTime"]), int(b["EndTime"]), 60):
                        pts += 1
                        key = (mq["Id"], m)
                        if key in settled:
                            twice += 1
                        if now >= m + 60 + lag + 60:
                            settled.setdefault(key, k)
            points.append(pts)
        figure("API cost, %d routes: metrics per poll" % n, q, "metrics",
               "14 CloudWatch signals x %d routes" % n, 14 * n, q / (14 * n), "= 14 per route",
               q == 14 * n, "%d metrics per day at a 60 s poll (GetMetricData bills per metric)"
               % r["metrics_per_day"])
        figure("API cost, %d routes: GetMetricData requests per steady poll (most)" % n, max(steady),
               "requests", "ceil(that poll's queries / 500)", max(fewest), max(steady) / max(fewest),
               "= ceil(queries / 500) every poll", steady == fewest,
               "per poll: %s sent, %s fewest" % (steady, fewest))
        figure("API cost, %d routes: minutes fetched again once settled" % n, twice, "minutes",
               "none", 0, None, "0", twice == 0)
        # what a poller really asks for over a simulated hour (61 polls a minute apart:
        # slower cadences such as the detail queries' show): every MetricDataQuery the
        # fake received after the first poll, per route, against the naive 14 signals
        # every minute (840 per route per hour); issue 25's target is 300 for a steady fleet
        fake = Fake(tmp, "hour%d" % n, scen)
        try:
            hr = json.loads(subprocess.run([a.drv, "cost", conf, fake.url, "61"], env=env_aws(),
                                           capture_output=True, text=True, check=True).stdout)
            hour = [e for e in fake.entries() if e["op"] in ("GetMetricData", "ListMetrics")]
        finally:
            fake.stop()
        # the first poll's requests (its ListMetrics pages and backfill: not steady state)
        # counted in the same log they are skipped from; counting the first poll's
        # ListMetrics + GetMetricData but skipping GetMetricData only dropped one steady
        # request (544 for 552)
        first = hr["polls"][0]["requests"]
        per_hour = sum(len(e["body"]["MetricDataQueries"]) for e in hour[first:]
                       if e["op"] == "GetMetricData") / n
        figure("API cost, %d routes: metrics requested per route per hour" % n, per_hour, "metrics",
               "naive: 14 signals every minute", 840, 840 / per_hour, "<= 300 (issue 25)",
               per_hour <= 300, "USD %.2f per route per month at USD 0.01 per 1,000 metrics"
               % (per_hour * 24 * 30 * 0.01 / 1000))
        naive = 180 * q
        st = statistics.median(points[1:])
        figure("API cost, %d routes: datapoints requested per steady poll" % n, st, "points",
               "re-fetching the 3 h window each poll", naive, naive / st,
               "less than re-fetching", st < naive)


def bench_cadence(a, tmp):
    """Metrics per route-hour with the adaptive cadence (core/cadence.c): a steady fleet
    of 20 routes far from their quotas (each about 3 % used, half with cache metrics),
    then the same fleet with route 0 at 60 % of its quota. An hour of polls a simulated
    minute apart (bench_drv cost, 61 polls) against the fake; every MetricDataQuery after
    the first poll (its backfill is not steady state), per route."""
    n, t0 = 20, int(time.time()) // 60 * 60
    for near in (False, True):
        tag = "near" if near else "steady"
        conf, scen = os.path.join(tmp, "cad-%s.conf" % tag), os.path.join(tmp, "cad-%s.json" % tag)
        lines, series = ["[bedtop]", "region = us-east-1", "interval = 60", ""], []
        for i in range(n):
            model = "anthropic.claude-3-haiku-20240307-v1:0-cad%d" % i
            lines += ["[route r%02d]" % i, "model = %s" % model, "max_tokens = 1024",
                      "quota_tpm = 2000000", ""]
            calls = 300 if near and i == 0 else 10
            vals = [("Invocations", "Sum", calls), ("InputTokenCount", "Sum", calls * 4000),
                    ("OutputTokenCount", "Sum", calls * 300), ("InvocationThrottles", "Sum", 0),
                    ("InvocationLatency", "Average", 1500), ("InvocationLatency", "p99", 4000),
                    ("EstimatedTPMQuotaUsage", "Sum", calls * 4300)]
            if i % 2 == 0:
                vals += [("CacheReadInputTokenCount", "Sum", calls * 1000),
                         ("CacheWriteInputTokenCount", "Sum", calls * 100)]
            for metric, stat, v in vals:
                series.append({"namespace": "AWS/Bedrock", "metric": metric, "stat": stat,
                               "dimensions": {"ModelId": model}, "generator": {"constant": v},
                               "start": t0 - 86400, "end": t0 + 7200})
        with open(conf, "w") as f:
            f.write("\n".join(lines))
        with open(scen, "w") as f:
            json.dump({"series": series}, f)
        fake = Fake(tmp, "cad-%s" % tag, scen)
        try:
            out = subprocess.run([a.drv, "cost", conf, fake.url, "61"], env=env_aws(),
                                 capture_output=True, text=True, check=True).stdout
            r = json.loads(out)
            gmd = [e["body"] for e in fake.entries() if e["op"] == "GetMetricData"]
        finally:
            fake.stop()
        first_end = r["polls"][0]["now"] // 60 * 60
        per = [0] * n
        for b in gmd:
            if b["EndTime"] == first_end:
                continue
            for q in b["MetricDataQueries"]:
                per[int(q["Id"][1:].split("_")[0])] += 1
        mean = sum(per) / n
        if not near:
            figure("API cost, adaptive cadence: metrics per route-hour, steady fleet of %d" % n,
                   mean, "metrics", "naive: 14 signals every minute", 840, 840 / mean, "<= 300",
                   mean <= 300, "calm routes: throttles every minute, the rest every 5 minutes "
                   "(192 without cache metrics, 216 with); USD %.2f a route-month"
                   % (mean * 24 * 30 * 0.01 / 1000))
        else:
            figure("API cost, adaptive cadence: metrics per route-hour, fleet of %d with one "
                   "route at 60 %% of its quota" % n, mean, "metrics", "the steady fleet's",
                   None, None, "<= 300", mean <= 300, "the near route alone asks %d an hour "
                   "(every minute: 7 per-minute signals x 60 + the 5-minute tier 7 x 12 = 504)"
                   % per[0])


def bench_busy(a, tmp):
    """Metrics per route-hour on a busy fleet: the fleet bench's shape (the stub's answers,
    the same for every route: ~300,000-450,000 tokens a minute, half the routes with a
    quota of 400,000 / 1,000,000 / 2,000,000 / 4,000,000 by turn, the other half with none
    known), so a quarter of the quota'd routes run over their quota (near: every minute)
    and the routes with no limit known are most of the fleet (issue 38: 399 a route-hour
    there, against the 300 target). An hour of polls a simulated minute apart (bench_drv
    cost, 61 polls) against the stub; every MetricDataQuery after the first poll, per
    route, by what the route is."""
    n = 40 if a.smoke else 200
    conf = os.path.join(tmp, "busy%d.conf" % n)
    gen("config", conf, "--routes", n, "--quota-routes", n // 2)
    stub = Stub(tmp, "busy%d" % n, n, 0, log=True)
    try:
        r = json.loads(subprocess.run([a.drv, "cost", conf, stub.url, "61"], env=env_aws(),
                                      capture_output=True, text=True, check=True).stdout)
        log = [e for e in stub.entries() if e["op"] in ("GetMetricData", "ListMetrics")]
    finally:
        stub.stop()
    first = r["polls"][0]["requests"]
    per = [0] * n
    for e in log[first:]:
        if e["op"] != "GetMetricData":
            continue
        for q in e["body"]["MetricDataQueries"]:
            per[int(q["Id"][1:].split("_")[0])] += 1
    mean = sum(per) / n
    # no settled minute lost or fetched twice: each (query, minute) requested after a poll
    # at which it had settled (minute + 60 s + lag 120 s + 60 s) is fetched again; each
    # per-minute query's minutes from the first poll's window to the last settled one,
    # never asked, are lost (the slower tiers backfill theirs)
    polls, i = [], 0
    for p in r["polls"]:
        polls.append((p["now"], log[i:i + p["requests"]]))
        i += p["requests"]
    settled, asked, twice = {}, {}, 0
    for k, (now, batch) in enumerate(polls):
        for e in batch:
            if e["op"] != "GetMetricData":
                continue
            b = e["body"]
            for mq in b["MetricDataQueries"]:
                for m in range(int(b["StartTime"]), int(b["EndTime"]), 60):
                    key = (mq["Id"], m)
                    twice += key in settled
                    asked[key] = True
                    if now >= m + 60 + 120 + 60:
                        settled.setdefault(key, k)
    ids = {q for q, _ in asked}
    lo = min(m for _, m in asked)
    hi = polls[-1][0] // 60 * 60 - 60 - 120 - 60 - 300  # settled and past the slowest tier
    lost = sum(1 for q in ids for m in range(lo, hi, 60) if (q, m) not in asked and
               (q, m - 60) in asked)  # a hole after a minute that was asked
    figure("API cost, busy fleet of %d: minutes fetched again once settled" % n, twice, "minutes",
           "none", 0, None, "0", twice == 0, "%d per-minute minutes lost (a hole after an asked "
           "minute) over the hour" % lost)
    # by kind: quota 400,000 (over it: near), the other quota'd routes, no quota
    near = [per[i] for i in range(n // 2) if i % 4 == 0]
    far = [per[i] for i in range(n // 2) if i % 4 != 0]
    none = per[n // 2:]
    avg = lambda v: sum(v) / len(v) if v else float("nan")  # noqa: E731
    figure("API cost, busy fleet of %d (the fleet bench's shape): metrics per route-hour" % n,
           mean, "metrics", "naive: 14 signals every minute", 840, 840 / mean, "<= 300 (issue 38)",
           mean <= 300, "near their quota (%d routes) %.0f a route-hour, far (%d) %.0f, no limit "
           "known (%d) %.0f; USD %.2f a route-month" % (len(near), avg(near), len(far), avg(far),
                                                       len(none), avg(none),
                                                       mean * 24 * 30 * 0.01 / 1000))


# ---------------------------------------------------------------- terminal helpers

class Pty:
    """Runs cmd on a pseudo-terminal of the given size; counts bytes it writes."""

    def __init__(self, cmd, cols=200, rows=50, env=None):
        self.master, slave = pty.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
        e = dict(env or os.environ, TERM="xterm-256color", LANG="C.UTF-8", LC_ALL="C.UTF-8")
        self.p = subprocess.Popen(cmd, stdin=slave, stdout=slave, stderr=subprocess.DEVNULL,
                                  env=e, start_new_session=True)
        os.close(slave)
        self.nbytes = 0
        self.t = threading.Thread(target=self._drain, daemon=True)
        self.t.start()

    def _drain(self):
        while True:
            try:
                d = os.read(self.master, 65536)
            except OSError:
                return
            if not d:
                return
            self.nbytes += len(d)

    def wait(self, timeout=600):
        rc = self.p.wait(timeout)
        self.t.join(2)
        os.close(self.master)
        return rc


def dashboard_wired(bedtop):
    """True when `bedtop --demo` opens the dashboard (it stays up on a terminal)."""
    t = Pty([bedtop, "--demo"])
    time.sleep(1.5)
    alive = t.p.poll() is None
    if alive:
        t.p.send_signal(signal.SIGTERM)
    t.wait()
    return alive


# ---------------------------------------------------------------- render

def callgrind_ir(cmd, tmp, tag):
    out = os.path.join(tmp, "cg.%s" % tag)
    t = Pty(["valgrind", "--tool=callgrind", "--callgrind-out-file=" + out,
             "--toggle-collect=bt_tui_update"] + cmd)
    t.wait()
    with open(out) as f:
        for line in f:
            if line.startswith("summary:") or line.startswith("totals:"):
                return int(line.split()[1])
    return None


def render_ir(a, tmp, rec, how):
    """Instructions of one frame of bench_drv render HOW: (11 frames - 1 frame) / 10,
    callgrind on bt_tui_update (the first frame, the terminal's set-up, cancels)."""
    res = os.path.join(tmp, "render.json")
    i1 = callgrind_ir([a.drv, "render", rec, "1", res, how], tmp, how + "1")
    i11 = callgrind_ir([a.drv, "render", rec, "11", res, how], tmp, how + "11")
    return (i11 - i1) / 10 if i1 and i11 else None


def bench_render(a, tmp):
    """The overview of 500 routes at 200x50: a frame after the store changed (every route
    evaluated by core, then drawn), a frame drawn again from the evaluation on screen
    (what a key redraws: every cell, the terminal sent what differs), and the clock's
    tick inside a minute (the live dashboard's idle redraw: no evaluation, the clock's
    cells). Instructions by callgrind do not depend on the machine's load."""
    rec = os.path.join(tmp, "r500.rec")
    gen("recording", rec, "--routes", 500, "--hours", 1)
    res = os.path.join(tmp, "render.json")
    frames = []
    for _ in range(a.runs):
        t = Pty([a.drv, "render", rec, "50", res])
        t.wait()
        frames.append(json.load(open(res))["frame_median_s"])
    fm = statistics.median(frames)
    have = shutil.which("valgrind")
    ir = {how: render_ir(a, tmp, rec, how) if have else None
          for how in ("eval", "full", "repaint", "tick")}
    note = "200x50 pty, all 500 routes evaluated per frame"
    if ir["eval"]:
        note += "; %.2fM instructions per frame (callgrind, bt_tui_update)" % (ir["eval"] / 1e6)
    figure("render: one overview frame, 500 routes", fm, "s", "budget", 0.002, fm / 0.002,
           "< 2 ms", fm < 0.002, note)
    if not have:
        return
    for how, name, target, note in (
            ("full", "render: a full overview frame from its evaluation, 500 routes (instructions)",
             10e6, "bench_drv render full: every cell drawn again, the terminal sent what "
             "differs; sent whole (a resize, ^L) %.2fM" % ((ir["repaint"] or 0) / 1e6)),
            ("tick", "render: the clock tick inside a minute, 500 routes (instructions)", 1e6,
             "bench_drv render tick: the clock one second on, no evaluation")):
        v = ir[how]
        if v is None:
            continue
        figure(name, v / 1e6, "M", "target", target / 1e6, v / target,
               "< %dM instructions" % (target / 1e6), v < target, note)


# ---------------------------------------------------------------- config

def bench_config(a, tmp):
    """Start-up reads the config once: 20,000 routes must cost about ten times 2,000
    (it was quadratic: 10,000 routes 6.2 s, 20,000 21.8 s)."""
    t = {}
    for n in (2000, 20000):
        conf = os.path.join(tmp, "c%d.conf" % n)
        gen("config", conf, "--routes", n)
        out = subprocess.run([a.drv, "config", conf, str(a.runs)], check=True,
                             capture_output=True, text=True, env=env_aws()).stdout
        t[n] = json.loads(out)["load_median_s"]
    ratio = t[20000] / (10 * t[2000])
    figure("config: load 20,000 routes", t[20000], "s", "10 x 2,000 routes", 10 * t[2000], ratio,
           "ratio <= 2 (linear)", ratio <= 2, "bench_drv config, median of %d loads" % a.runs)


# ---------------------------------------------------------------- quota groups

def bench_groups(a, tmp):
    """Routes that share one quota are evaluated in one pass per group: N routes on
    one quota cost about what N routes on N quotas do (it was quadratic: 8,000 routes
    on one quota 19 s against 1.25 s on separate quotas, 20,000 routes 274 s). Then the
    start-up of `check` with 20,000 routes on one model against 20,000 on as many
    models (it was 64 s: every route re-derived its group's quotas and members)."""
    sizes = (500, 2000) if a.smoke else (8000, 20000)
    for n in sizes:
        t = {}
        for one in (1, 0):
            out = subprocess.run([a.drv, "groups", str(n), str(one), str(a.runs)], check=True,
                                 capture_output=True, text=True, env=env_aws()).stdout
            t[one] = json.loads(out)["eval_median_s"]
        ratio = t[1] / t[0]
        figure("groups: evaluate %d routes on one quota" % n, t[1], "s",
               "%d routes on %d quotas" % (n, n), t[0], ratio, "ratio <= 2 (linear)", ratio <= 2,
               "bench_drv groups, bt_eval_all, median of %d" % a.runs)
    n = sizes[-1]
    cpu = {}
    for one in (True, False):
        conf = os.path.join(tmp, "g%d%s.conf" % (n, "one" if one else "many"))
        gen("config", conf, "--routes", n, *(["--one-model"] if one else []))
        # no endpoint answers (port 9): the start-up and one evaluation of every route,
        # the text report included; CPU, since the wall waits on the refused retries
        cmd = [a.bedtop, "check", "--config", conf, "--endpoint-url", "http://127.0.0.1:9"]
        cpu[one] = med(cmd, a.runs, env=env_aws())[1]
    ratio = cpu[True] / cpu[False]
    figure("groups: check start-up, %d routes on one model (CPU)" % n, cpu[True], "s",
           "%d routes on %d models" % (n, n), cpu[False], ratio, "ratio <= 2 (linear)", ratio <= 2,
           "bedtop check with no endpoint answering, median of %d" % a.runs)


# ---------------------------------------------------------------- replay

def bench_replay(a, tmp):
    rec = os.path.join(tmp, "d200.rec")
    gen("recording", rec, "--routes", 200, "--hours", 24)
    size = os.path.getsize(rec)
    rs = []
    for s in range(a.runs):
        out = subprocess.run([a.drv, "replay", rec, "10", str(s + 1)], capture_output=True,
                             text=True, check=True).stdout
        rs.append(json.loads(out))
    ref = med([sys.executable, "-c",
               "import json,sys\nfor l in open(sys.argv[1]): json.loads(l)", rec], a.runs)
    op = statistics.median(r["open_s"] for r in rs)
    figure("replay: open a 24 h, 200-route recording (%.0f MB)" % (size / 2**20), op, "s",
           "python3 json.loads of every line", ref[0], op / ref[0], "no target (startup)", None)
    sk = max(r["seek_report_max_s"] for r in rs)
    figure("replay: seek to a random minute + the screen's report (worst of %d)" % (10 * len(rs)),
           sk, "s", "budget", 0.1, sk / 0.1, "< 100 ms each", sk < 0.1,
           "seek alone: median %.2f ms" % (statistics.median(r["seek_median_s"] for r in rs) * 1000))
    pk = max(r["peak_kb"] for r in rs)
    figure("replay: peak resident memory", pk, "kB", "python3 json.loads (one line at a time)",
           ref[2], pk / ref[2], "< 64 MB", pk < 64 * 1024)
    at = med([a.bedtop, "replay", rec, "--at", "12:00", "--format", "json"], a.runs)
    figure("startup: bedtop replay --at (24 h, 200 routes), to the printed report", at[0], "s",
           "python3 json.loads of every line", ref[0], at[0] / ref[0], "no target", None,
           "peak RSS %.1f MB" % (at[2] / 1024))
    step = statistics.median(r["seek_report_median_s"] for r in rs)
    speed = 60 / step
    figure("replay: fastest speed without lag (a minute's seek + report per step)", speed,
           "x", "1000x", 1000, speed / 1000, ">= 1000x", speed >= 1000,
           "derived: 60 s / %.2f ms; the frame's drawing adds the render figure" % (step * 1000))


# ---------------------------------------------------------------- export

def bench_export(a, tmp):
    """bedtop export of a 3-hour and a 24-hour recording of 200 routes: CPU and peak
    RSS, CSV and JSON, and the growth (24 h against eight times 3 h: 1.00x is linear).
    It was quadratic (3 -> 6 -> 12 h: 15 -> 36 -> 75 G instructions; 24 h 31 s CSV,
    25 s JSON, 70-90 MiB): every seek replayed the whole event log, every row scanned
    the whole log, every minute was evaluated twice, and a log capped at 20,000
    entries dropped the first ~17 hours' events."""
    routes, short, long_ = (20, 0.5, 4) if a.smoke else (200, 3, 24)
    recs = {}
    for h in (short, long_):
        recs[h] = os.path.join(tmp, "x%d_%s.rec" % (routes, h))
        if not os.path.exists(recs[h]):
            gen("recording", recs[h], "--routes", routes, "--hours", h)
    got = {}
    floor = {}
    nul = {}
    for fmt_ in ("csv", "json"):
        for h in (short, long_):
            out = os.path.join(tmp, "x.%s" % fmt_)
            # each run writes a new file, as the first does: a run over the previous
            # run's output also frees that file's page cache when its rename replaces
            # it (0.9 GB at 24 h, system time charged to the exporter), which the first
            # run never pays, so the runs of one median measured two things
            def fresh():
                if os.path.exists(out):
                    os.unlink(out)
            got[fmt_, h] = med([a.bedtop, "export", recs[h], "--format", fmt_, "-o", out], a.runs,
                               before=fresh)
            # The kernel's part: the CPU that dd spends writing the same bytes to a file on
            # the same file system (a 24 h JSON export is ~0.9 GB; its page-cache writes
            # are charged to the exporter as system time and grow faster than linearly
            # once writeback throttles). Printed beside the figure, never subtracted.
            size = os.path.getsize(out)
            copy = out + ".dd"
            floor[fmt_, h] = (size, med(["dd", "if=" + out, "of=" + copy, "bs=1M",
                                         "status=none"], a.runs)[1])
            os.unlink(copy)
            os.unlink(out)
            # bedtop's own work, to /dev/null: the growth figure's measure. The page
            # cache of a new 0.9 GB file costs more than linearly on this VM (its first
            # touch of guest memory: dd's own copies show it, 0.04 s for 0.12 GB and
            # 0.4-2 s for 0.9 GB), which is the kernel's, not the export's
            nul[fmt_, h] = med([a.bedtop, "export", recs[h], "--format", fmt_], a.runs)
        cpu_s, cpu_l = got[fmt_, short][1], got[fmt_, long_][1]
        nul_s, nul_l = nul[fmt_, short][1], nul[fmt_, long_][1]
        k = long_ / short
        figure("export: %g h x %d routes, %s (CPU)" % (long_, routes, fmt_.upper()), cpu_l, "s",
               "budget", 5.0, cpu_l / 5.0, "< 5 s", cpu_l < 5.0 if not a.smoke else None,
               "median of %d; peak RSS %.1f MB; output %.0f MB, which dd writes to the same "
               "file system in %.2f s CPU" % (a.runs, got[fmt_, long_][2] / 1024,
                                              floor[fmt_, long_][0] / 1e6, floor[fmt_, long_][1]))
        ratio = nul_l / (k * nul_s) if nul_s > 0 else None
        figure("export growth: %g h against %g h, %s to /dev/null (CPU)" % (long_, short,
                                                                           fmt_.upper()),
               nul_l, "s", "%g x the %g h export" % (k, short), k * nul_s, ratio,
               "ratio <= 1.25 (linear)", ratio is not None and ratio <= 1.25,
               "the %g h export: %.2f s; written to files: %.2f s against %.2f s (%.2fx), dd "
               "writing the two outputs: %.2f s against %.2f s"
               % (short, nul_s, cpu_l, cpu_s, cpu_l / (k * cpu_s) if cpu_s > 0 else 0,
                  floor[fmt_, long_][1], floor[fmt_, short][1]))
    pk = max(got[f, long_][2] for f in ("csv", "json"))
    figure("export: peak resident memory (%g h x %d routes)" % (long_, routes), pk, "kB",
           "budget", 64 * 1024, pk / (64 * 1024), "< 64 MB", pk < 64 * 1024 if not a.smoke else None,
           "the recording opened alone (replay --at) is most of it: see the replay figures")


# ---------------------------------------------------------------- idle and startup (dashboard)

def bench_dashboard(a, tmp):
    if not dashboard_wired(a.bedtop):
        for f in ("idle: CPU of the live dashboard", "idle: bytes to the terminal per minute",
                  "startup: bedtop --demo to the first complete frame"):
            figure(f, None, "", "not measured: `bedtop --demo` does not open the dashboard yet "
                   "(main.c)", None, None, "-", None)
        return
    if not shutil.which("tmux"):
        return
    sock = os.path.join(tmp, "tmux.sock")
    tm = ["tmux", "-S", sock]
    secs = 20 if a.quick else 60
    pipe = os.path.join(tmp, "pane.out")
    subprocess.run(tm + ["-f", "/dev/null", "new-session", "-d", "-x", "200", "-y", "50",
                         "env TERM=tmux-256color %s --demo --interval 60 --demo-speed 1" % a.bedtop],
                   check=True)
    try:
        pid = int(subprocess.run(tm + ["display", "-p", "#{pane_pid}"], capture_output=True,
                                 text=True).stdout.strip())
        time.sleep(3)
        subprocess.run(tm + ["pipe-pane", "-o", "cat >> %s" % pipe], check=True)
        time.sleep(1)
        def cpu():
            with open("/proc/%d/stat" % pid) as f:
                x = f.read().rsplit(")", 1)[1].split()
            return (int(x[11]) + int(x[12])) / os.sysconf("SC_CLK_TCK")
        c0, s0 = cpu(), os.path.getsize(pipe) if os.path.exists(pipe) else 0
        t0 = time.monotonic()
        time.sleep(secs)
        c1 = cpu()
        s1 = os.path.getsize(pipe) if os.path.exists(pipe) else 0
        el = time.monotonic() - t0
    finally:
        subprocess.run(tm + ["kill-server"], stderr=subprocess.DEVNULL)
    pct = 100 * (c1 - c0) / el
    figure("idle: CPU of the live dashboard (demo, 60 s poll, 1 s clock, %d s under tmux)" % secs,
           pct, "%", "budget", 0.1, pct / 0.1, "< 0.1 % of a core", pct < 0.1,
           "CPU ticks are 10 ms: the resolution is %.3f %%" % (100 * 0.01 / el))
    bpm = (s1 - s0) * 60 / el
    figure("idle: bytes to the terminal per minute (demo: its data change every 15 s)", bpm, "B",
           "a full 200x50 screen", 200 * 50, bpm / (200 * 50), "no target (not idle)", None)
    # A quiet account: the live dashboard on the fake endpoint whose data never change, so
    # only the clock and the ages move (the demo above changes its numbers every 15 s).
    conf, scen = os.path.join(tmp, "quiet.conf"), os.path.join(tmp, "quiet.json")
    models = ["amazon.nova-lite-v1:0", "amazon.nova-pro-v1:0", "anthropic.claude-3-haiku-20240307-v1:0",
              "meta.llama3-3-70b-instruct-v1:0", "mistral.mistral-large-2407-v1:0"]
    with open(conf, "w") as f:
        f.write("[bedtop]\nregion = us-east-1\ninterval = 60\n")
        for i, m in enumerate(models):
            f.write("[route r%d]\nmodel = %s\nmax_tokens = 1000\nquota_tpm = 2000000\n" % (i, m))
    series = []
    for m in models:
        for metric, v in (("Invocations", 100), ("InputTokenCount", 50000),
                          ("OutputTokenCount", 20000), ("EstimatedTPMQuotaUsage", 70000)):
            series.append({"namespace": "AWS/Bedrock", "metric": metric, "stat": "Sum",
                           "dimensions": {"ModelId": m}, "generator": {"constant": v}})
    with open(scen, "w") as f:
        json.dump({"series": series}, f)
    fake = Fake(tmp, "quiet", scen)
    pipe2 = os.path.join(tmp, "quiet.pane")
    envs = " ".join("%s=%s" % (k, shlex.quote(v)) for k, v in env_aws().items() if k.startswith(("AWS_", "BEDTOP_")))
    try:
        subprocess.run(tm + ["-f", "/dev/null", "new-session", "-d", "-x", "200", "-y", "50",
                             "env TERM=tmux-256color %s %s --config %s --endpoint-url %s"
                             % (envs, a.bedtop, conf, fake.url)], check=True)
        time.sleep(4)
        subprocess.run(tm + ["pipe-pane", "-o", "cat >> %s" % pipe2], check=True)
        time.sleep(1)
        q0 = os.path.getsize(pipe2) if os.path.exists(pipe2) else 0
        t0 = time.monotonic()
        time.sleep(secs)
        q1 = os.path.getsize(pipe2) if os.path.exists(pipe2) else 0
        el2 = time.monotonic() - t0
    finally:
        subprocess.run(tm + ["kill-server"], stderr=subprocess.DEVNULL)
        fake.stop()
    qpm = (q1 - q0) * 60 / el2
    # "near zero": nothing but the 1 s clock, one cell a second with its cursor and colour
    # escapes (about 35 bytes), and the ages moving every ten seconds; 64 B/s allows that.
    figure("idle: bytes to the terminal per minute, quiet account (data unchanged, 60 s poll)",
           qpm, "B", "the clock alone: 64 B/s", 64 * 60, qpm / (64 * 60),
           "near zero (the clock only)", qpm <= 64 * 60,
           "5 routes on the fake endpoint with constant data; %d s under tmux" % secs)
    # startup: time until the header shows, polled; reference: the same poll of `echo`
    def first_frame(cmd, needle):
        subprocess.run(tm + ["kill-server"], stderr=subprocess.DEVNULL)
        t0 = time.perf_counter()
        subprocess.run(tm + ["-f", "/dev/null", "new-session", "-d", "-x", "200", "-y", "50",
                             cmd], check=True)
        while time.perf_counter() - t0 < 10:
            o = subprocess.run(tm + ["capture-pane", "-p"], capture_output=True, text=True).stdout
            if needle in o:
                break
        dt = time.perf_counter() - t0
        subprocess.run(tm + ["kill-server"], stderr=subprocess.DEVNULL)
        return dt
    bt = statistics.median(first_frame("env TERM=tmux-256color %s --demo" % a.bedtop, "triage")
                           for _ in range(a.runs))
    ec = statistics.median(first_frame("echo triage; sleep 10", "triage") for _ in range(a.runs))
    figure("startup: bedtop --demo to the first complete frame (tmux)", bt, "s",
           "the same tmux poll of `echo`", ec, bt / ec, "no target", None)


# ---------------------------------------------------------------- BENCHMARKS.md

def write_md(path, a):
    rows = ["| figure | value | reference | ratio | target | met |", "|---|---|---|---|---|---|"]
    for f in FIGURES:
        ref = f["ref_name"] + ("" if f["ref_value"] is None else ": " + fmt(f["ref_value"], f["unit"]))
        rows.append("| %s | %s | %s | %s | %s | %s |" % (
            f["name"], fmt(f["value"], f["unit"]), ref,
            "" if f["ratio"] is None else "%.2fx" % f["ratio"], f["target"],
            "yes" if f["met"] else ("**NO**" if f["met"] is False else "-")))
        if f["note"]:
            rows[-1] = rows[-1][:-1] + "| " if False else rows[-1]
    notes = [" - %s: %s" % (f["name"], f["note"]) for f in FIGURES if f["note"]]
    cpu = "?"
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    rev = subprocess.run(["git", "-C", SRC, "rev-parse", "--short", "HEAD"], capture_output=True,
                         text=True).stdout.strip()
    block = ["<!-- bench:table (written by make bench) -->",
             "Measured %s at %s on %s, %d cores, %s; median of %d runs%s." % (
                 datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
                 rev or "?", cpu, os.cpu_count() or 0, platform.platform(), a.runs,
                 " (--quick)" if a.quick else ""),
             ""] + rows + ["", "Notes:"] + notes + ["<!-- /bench:table -->"]
    text = open(path).read() if os.path.exists(path) else ""
    m = re.search(r"<!-- bench:table.*?<!-- /bench:table -->", text, re.S)
    if m:
        text = text[:m.start()] + "\n".join(block) + text[m.end():]
    else:
        text += "\n" + "\n".join(block) + "\n"
    with open(path, "w") as f:
        f.write(text)
    print("bench: wrote the table to %s" % path)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bedtop", default=os.path.join(SRC, "build", "bedtop"))
    ap.add_argument("--drv", default=os.path.join(SRC, "build", "bench", "bench_drv"))
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--quick", action="store_true", help="3 runs, 20 s idle")
    ap.add_argument("--only", default="",
                    help="comma list: check,scale,serve,cost,cadence,busy,render,replay,dashboard,config,groups,"
                         "export,discover,spend,shares")
    ap.add_argument("--smoke", action="store_true",
                    help="small fleet sizes (500 and 2,000 routes): t_bench_smoke keeps it runnable")
    ap.add_argument("--md", default=os.path.join(SRC, "BENCHMARKS.md"))
    ap.add_argument("--no-md", action="store_true")
    a = ap.parse_args()
    if a.quick:
        a.runs = 3
    parts = {"check": bench_check, "scale": bench_scale, "serve": bench_serve,
             "cost": bench_cost, "cadence": bench_cadence, "busy": bench_busy,
             "render": bench_render,
             "replay": bench_replay, "dashboard": bench_dashboard, "config": bench_config,
             "groups": bench_groups, "export": bench_export,
             "discover": bench_discover, "spend": bench_spend, "shares": bench_shares}
    only = [x for x in a.only.split(",") if x] or list(parts)
    with tempfile.TemporaryDirectory(prefix="bedtop-bench.") as tmp:
        for name in only:
            parts[name](a, tmp)
    if not a.no_md and not a.only and not a.smoke:
        write_md(a.md, a)


if __name__ == "__main__":
    main()
