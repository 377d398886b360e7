#!/usr/bin/env python3
"""gen.py: synthetic inputs for bedtop's benchmarks (make bench) and their smoke test.

  gen.py recording OUT --routes N --hours H [--seed S] [--start EPOCH] [--admission-share F]
                   [--flap]
      A recording (man 5 bedtop-recording) as a live session of N routes over H hours
      writes it: a versioned header, then one poll line per minute. The first poll
      carries the 3-hour backfill a live session fetches; every later poll carries the
      newest settled CloudWatch minute of every route (14 signals) and, for a share of
      the routes, one admission scrape (13 signals), plus one "ok" event per source.
      Values follow a daily cycle with noise, deterministic for a seed; --flap puts every
      route near its quota one minute and well under it the next (an event log that
      changes every minute).
  gen.py config OUT --routes N [--no-quota | --quota-routes K]
      A bedtop config with N runtime routes in us-east-1 (distinct model IDs);
      --no-quota: no quota_tpm, so each route's quota comes from Service Quotas;
      --quota-routes K: quota_tpm on the first K routes only (the fleet bench's shape
      against the stub, whose Service Quotas list the first half).
  gen.py scenario OUT --routes N [--now EPOCH] [--minutes M]
      A fake_aws.py scenario serving the 14 CloudWatch metrics of every route of
      `config` for the M minutes before now, plus applied quotas for some routes.

Written for speed (a 24-hour 200-route recording is ~50 MB): one string per line.
"""
import argparse
import json
import math
import os
import random
import sys

# The recording's signal list, in the order core/model.h declares them.
SIGNALS = ["invocations", "input_tokens", "output_tokens", "cache_read_tokens",
           "cache_write_tokens", "throttles", "client_errors", "server_errors",
           "latency_avg_ms", "latency_p50_ms", "latency_p90_ms", "latency_p99_ms",
           "ttft_avg_ms", "estimated_tpm", "adm_in_flight", "adm_concurrency_limit",
           "adm_queue_depth", "adm_admitted_pm", "adm_rejected_pm", "adm_retries_pm",
           "adm_throttled_pm", "adm_completed_pm", "adm_reserved_tpm", "adm_settled_tpm",
           "adm_max_tokens", "adm_output_p50", "adm_output_p99"]
# CloudWatch metric and statistic of signals 0..13 (AWS/Bedrock, ModelId dimension).
CW_METRICS = [("Invocations", "Sum"), ("InputTokenCount", "Sum"), ("OutputTokenCount", "Sum"),
              ("CacheReadInputTokenCount", "Sum"), ("CacheWriteInputTokenCount", "Sum"),
              ("InvocationThrottles", "Sum"), ("InvocationClientErrors", "Sum"),
              ("InvocationServerErrors", "Sum"), ("InvocationLatency", "Average"),
              ("InvocationLatency", "p50"), ("InvocationLatency", "p90"),
              ("InvocationLatency", "p99"), ("TimeToFirstToken", "Average"),
              ("EstimatedTPMQuotaUsage", "Sum")]
FAMILIES = [("us.anthropic.claude-sonnet-4-5-20250929-v1:0", 5, "cross-region"),
            ("anthropic.claude-3-haiku-20240307-v1:0", 1, "on-demand"),
            ("us.anthropic.claude-haiku-4-5-20251001-v1:0", 5, "cross-region"),
            ("meta.llama3-3-70b-instruct-v1:0", 1, "on-demand"),
            ("amazon.nova-lite-v1:0", 1, "on-demand"),
            ("global.anthropic.claude-opus-4-5-20251101-v1:0", 5, "global")]
LAG = 120        # CloudWatch publishing lag the recording header declares
BACKFILL = 180   # minutes a live session fetches on its first poll


def route_model(i):
    """Distinct model IDs (a suffix keeps the family recognisable)."""
    model, burndown, inference = FAMILIES[i % len(FAMILIES)]
    if i >= len(FAMILIES):
        model = "%s-bench%d" % (model, i)
    return model, burndown, inference


class Route:
    def __init__(self, i, rng, admission, flap=False):
        self.i = i
        self.flap = flap
        self.model, self.burndown, self.inference = route_model(i)
        self.quota = rng.choice([400000, 1000000, 2000000, 4000000])
        self.max_tokens = rng.choice([512, 1024, 2048, 4096])
        self.in_per_call = rng.uniform(800, 6000)
        self.out_per_call = rng.uniform(100, 900)
        # peak use between 25% and 95% of the quota
        peak = self.quota * rng.uniform(0.25, 0.95)
        if flap:
            peak = self.quota * 0.97
        self.peak_calls = peak / (self.in_per_call * 1.05 + self.out_per_call * self.burndown)
        self.phase = rng.uniform(0, 2 * math.pi)
        self.latency = rng.uniform(400, 3000)
        self.admission = admission

    def cw_values(self, minute, rng):
        day = 0.55 + 0.45 * math.sin(2 * math.pi * (minute % 86400) / 86400 + self.phase)
        if self.flap:  # near the quota one minute, at a quarter of it the next
            day = 1.0 if (minute // 60) % 2 else 0.25
        calls = max(0, round(self.peak_calls * day * rng.uniform(0.85, 1.15)))
        inp = round(calls * self.in_per_call * rng.uniform(0.9, 1.1))
        out = round(calls * self.out_per_call * rng.uniform(0.9, 1.1))
        cread = round(inp * 0.3)
        cwrite = round(inp * 0.05)
        used = inp + cwrite + out * self.burndown
        thr = round(calls * 0.05) if used > 0.9 * self.quota else 0
        lat = self.latency * rng.uniform(0.9, 1.2)
        est = round(used * rng.uniform(0.95, 1.05))
        return [calls, inp, out, cread, cwrite, thr, round(calls * 0.002), 0,
                round(lat, 1), round(lat * 0.85, 1), round(lat * 2.1, 1), round(lat * 3.4, 1),
                round(lat * 0.12, 1), est]

    def adm_values(self, minute, rng):
        cw = self.cw_values(minute, rng)
        calls = cw[0]
        limit = 32
        in_flight = min(limit + 8, round(calls * self.latency / 60000 + rng.uniform(0, 3)))
        retries = round(calls * 0.02)
        return [in_flight, limit, max(0, in_flight - limit), calls, 0, retries, cw[5], calls,
                round(calls * (self.in_per_call + self.max_tokens)),
                cw[1] + cw[4] + cw[2] * self.burndown, self.max_tokens,
                round(self.out_per_call * 0.9), round(self.out_per_call * 2.5)]


def pairs(first_sig, values):
    return ",".join("%d,%s" % (first_sig + k, v) for k, v in enumerate(values))


def iso(t):
    import time
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t))


def make_routes(n, seed, share, flap=False):
    rng = random.Random(seed)
    nadm = round(n * share)
    return [Route(i, rng, i < nadm, flap) for i in range(n)], rng


def header(routes, start):
    rj = []
    for r in routes:
        rj.append({"name": "r%03d" % r.i, "model": r.model, "region": "us-east-1",
                   "endpoint": "runtime", "inference": r.inference, "priority": "online",
                   "max_tokens": r.max_tokens, "burndown": r.burndown, "burndown_source": "table",
                   "admission": r.admission,
                   "quotas": {"tpm": {"value": r.quota, "source": "service-quotas",
                                      "code": "L-BENCH%03d" % r.i,
                                      "name": "Tokens per minute for %s" % r.model}}})
    return {"format": "bedtop-recording", "version": "1.0", "created": iso(start),
            "created_by": "bedtop bench generator", "mode": "live", "signals": SIGNALS,
            "config": {"interval": 60, "cloudwatch_lag": LAG, "warn_headroom": "20%",
                       "crit_headroom": "5%", "daily_warn": 80, "daily_crit": 95,
                       "oversize_factor": 4, "oversize_margin": 0.25, "retry_share": 0.2,
                       "cache_read_reserved": False, "history_minutes": 1440},
            "routes": rj}


def recording(a):
    routes, rng = make_routes(a.routes, a.seed, a.admission_share, a.flap)
    start = a.start - a.start % 60
    polls = max(1, int(a.hours * 60))
    fd = os.open(a.out, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write(json.dumps(header(routes, start), separators=(",", ":")) + "\n")
        for p in range(polls):
            t = start + p * 60 + 10
            settled = (t - LAG) // 60 * 60 - 60  # the newest minute a poll at t settled (minute + 60 s + lag)
            first = settled - (BACKFILL - 1) * 60 if p == 0 else settled
            groups = []
            for m in range(first, settled + 60, 60):
                for r in routes:
                    groups.append("[%d,%d,%d,[%s]]" % (r.i, m, t, pairs(0, r.cw_values(m, rng))))
            for r in routes:
                if r.admission:
                    groups.append("[%d,%d,%d,[%s]]" % (r.i, t // 60 * 60, t,
                                                       pairs(14, r.adm_values(t, rng))))
            ev = ['{"t":%d,"type":"ok","route":-1,"source":"cloudwatch"}' % t]
            if any(r.admission for r in routes):
                ev.append('{"t":%d,"type":"ok","route":-1,"source":"admission"}' % t)
            f.write('{"t":%d,"s":[%s],"e":[%s]}\n' % (t, ",".join(groups), ",".join(ev)))
    return 0


def config(a):
    lines = ["# bench: %d runtime routes (tests/bench/gen.py config)" % a.routes,
             "[bedtop]", "region = us-east-1", "interval = 60", ""]
    for i in range(a.routes):
        model = route_model(0 if a.one_model else i)[0]
        lines += ["[route r%03d]" % i, "model = %s" % model, "max_tokens = 1024"]
        if not a.no_quota and (a.quota_routes is None or i < a.quota_routes):
            lines.append("quota_tpm = %d" % [400000, 1000000, 2000000, 4000000][i % 4])
        lines.append("")
    with open(a.out, "w") as f:
        f.write("\n".join(lines))
    return 0


def scenario(a):
    import time
    now = a.now or int(time.time())
    end = now // 60 * 60 - 60
    start = end - (a.minutes - 1) * 60
    rng = random.Random(a.seed)
    series, quotas = [], []
    for i in range(a.routes):
        model, _, _ = route_model(i)
        r = Route(i, rng, False)
        for k, (metric, stat) in enumerate(CW_METRICS):
            vals = [r.cw_values(m, rng)[k] for m in range(start, end + 60, 60)]
            series.append({"namespace": "AWS/Bedrock", "metric": metric,
                           "dimensions": {"ModelId": model}, "stat": stat,
                           "values": vals, "end": end})
        if i % 2 == 0:
            quotas.append({"QuotaCode": "L-BENCH%03d" % i, "Value": r.quota,
                           "QuotaName": "On-demand model inference tokens per minute for %s" % model})
    with open(a.out, "w") as f:
        json.dump({"series": series, "quotas": quotas}, f)
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("recording")
    p.add_argument("out")
    p.add_argument("--routes", type=int, default=200)
    p.add_argument("--hours", type=float, default=24)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--start", type=int, default=1795910400)  # 2026-11-29T00:00:00Z
    p.add_argument("--admission-share", type=float, default=0.25)
    p.add_argument("--flap", action="store_true",
                   help="every route near its quota one minute and well under it the next "
                        "(status changes every minute: a busy event log)")
    p = sub.add_parser("config")
    p.add_argument("out")
    p.add_argument("--routes", type=int, default=50)
    p.add_argument("--no-quota", action="store_true")
    p.add_argument("--quota-routes", type=int, default=None)
    p.add_argument("--one-model", action="store_true", help="every route on one model (one quota group)")
    p = sub.add_parser("scenario")
    p.add_argument("out")
    p.add_argument("--routes", type=int, default=50)
    p.add_argument("--now", type=int, default=0)
    p.add_argument("--minutes", type=int, default=60)
    p.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    if getattr(a, "routes", 1) < 1:
        ap.error("--routes must be at least 1")
    return {"recording": recording, "config": config, "scenario": scenario}[a.cmd](a)


if __name__ == "__main__":
    sys.exit(main())
