#!/usr/bin/env python3
"""Writes loadtest.rec: a load test of one route recorded by bedtop's admission
collector. The controller's concurrency limit is stepped 4, 8, ..., 64 (three
minutes a level). Each call takes 2 s, so below the route's limit a level of N in
flight completes 30 x N calls a minute; from 32 in flight the service accepts no
more (completions plateau at 960/min, the extra calls wait longer), and from 48 in
flight it throttles 2 x (N - 44) calls a minute. test_plan reads it: the knee is 32.
Run: python3 tests/data/loadtest.py > tests/data/loadtest.rec"""
import json

T0 = 1795946400  # 2026-11-29 10:00:00 UTC
SIG = ["invocations", "input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens",
       "throttles", "client_errors", "server_errors", "latency_avg_ms", "latency_p50_ms",
       "latency_p90_ms", "latency_p99_ms", "ttft_avg_ms", "estimated_tpm", "adm_in_flight",
       "adm_concurrency_limit", "adm_queue_depth", "adm_admitted_pm", "adm_rejected_pm",
       "adm_retries_pm", "adm_throttled_pm", "adm_completed_pm", "adm_reserved_tpm",
       "adm_settled_tpm", "adm_max_tokens", "adm_output_p50", "adm_output_p99"]
I = {s: i for i, s in enumerate(SIG)}
hdr = {"format": "bedtop-recording", "version": "1.1", "created": "2026-11-29T10:00:00Z",
       "created_by": "tests/data/loadtest.py", "mode": "live", "signals": SIG,
       "config": {"interval": 60, "cloudwatch_lag": 120, "history_minutes": 1440},
       "routes": [{"name": "load", "model": "amazon.nova-lite-v1:0", "region": "us-east-1",
                   "endpoint": "runtime", "inference": "on-demand", "priority": "online",
                   "max_tokens": 1000, "burndown": 1, "burndown_source": "default",
                   "admission": True, "quotas": {}}]}
print(json.dumps(hdr, separators=(",", ":")))
for k in range(48):
    level = 4 * (k // 3 + 1)
    m = T0 + 60 * k
    scrape = m + 30
    wiggle = (1, 0.99, 1.01)[k % 3]
    done = round(30 * min(level, 32) * wiggle)
    thr = 2 * (level - 44) if level >= 48 else 0
    vals = {"adm_in_flight": level, "adm_concurrency_limit": level, "adm_queue_depth": 0,
            "adm_admitted_pm": done + thr, "adm_rejected_pm": 0, "adm_retries_pm": thr,
            "adm_throttled_pm": thr, "adm_completed_pm": done,
            "adm_reserved_tpm": (done + thr) * 1500, "adm_settled_tpm": done * 800,
            "adm_max_tokens": 1000, "adm_output_p50": 250, "adm_output_p99": 300}
    flat = []
    for s, v in vals.items():
        flat += [I[s], v]
    line = {"t": scrape, "s": [[0, scrape, scrape, flat]],
            "e": [{"t": scrape, "type": "ok", "route": 0, "source": "admission", "text": "scrape"}]}
    print(json.dumps(line, separators=(",", ":")))
