#!/usr/bin/env bash
# The day's spend prices the day's cache reads from their own day sum (issue 36): check
# keeps 10 minutes and asks the day's sums from 00:00 UTC in hourly datapoints; before
# the cache reads had one (day_cache_read_tokens) it priced only the cache reads of its
# 10 minutes and said lower-bound, while input and output came from the whole day.
. "$BEDTOP_SRCDIR/tests/lib.sh"
NOW=$(date +%s)
MIDNIGHT=$(( NOW - NOW % 86400 ))
if [ $(( NOW - MIDNIGHT )) -lt 1800 ]; then
    skip "within 30 minutes of 00:00 UTC the 10 minutes check keeps are most of the day"
    finish; exit
fi
# Claude 3 Haiku, every minute since midnight: 1,000 input tokens, no output, 10,000
# cache reads. Priced in=1 cache_read=1 (USD per million): the day's spend x 1e6 is the
# day's input plus its cache reads, 11 x its input (tokens today: input only, as cache
# reads count in no quota). Before the fix: 1,000 x k + 10,000 x 10 for k minutes.
python3 - "$TMP/scen.json" "$MIDNIGHT" <<'PY'
import json, sys
out, start = sys.argv[1], int(sys.argv[2])
mid = "anthropic.claude-3-haiku-20240307-v1:0"
def ser(metric, v):
    return {"namespace": "AWS/Bedrock", "metric": metric, "stat": "Sum",
            "dimensions": {"ModelId": mid}, "start": start, "generator": {"constant": v}}
sc = {"series": [ser("Invocations", 1), ser("InputTokenCount", 1000), ser("OutputTokenCount", 0),
                 ser("CacheReadInputTokenCount", 10000)],
      "quotas": [{"QuotaCode": "L-TEST1", "Value": 1000000,
                  "QuotaName": "On-demand model inference tokens per minute for Anthropic Claude 3 Haiku"}]}
json.dump(sc, open(out, "w"))
PY
printf '[bedtop]\nregion = us-east-1\n[route haiku]\nmodel = anthropic.claude-3-haiku-20240307-v1:0\nmax_tokens = 500\nquota_tpd = 100000000\n[prices]\nanthropic.claude-3-haiku* = in=1 out=1 cache_read=1 cache_write=1 source=test date=2026-12-01\n' >"$TMP/c.conf"
start_fake day --scenario "$TMP/scen.json"
"${AWS_ENV[@]}" "$BEDTOP" check --config "$TMP/c.conf" --endpoint-url "http://127.0.0.1:$PORT" \
    --format json >"$TMP/c.json" 2>"$TMP/c.err"
check "check answers JSON" python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$TMP/c.json"
check "the cache reads' day sum is asked: CacheReadInputTokenCount, Period 3600, from 00:00 UTC" \
    python3 - "$TMP/day.log" "$MIDNIGHT" <<'PY'
import json, sys
mid = int(sys.argv[2])
ok = False
for l in open(sys.argv[1]):
    e = json.loads(l)
    if e.get("op") != "GetMetricData":
        continue
    for q in e["body"]["MetricDataQueries"]:
        ms = q.get("MetricStat", {})
        if ms.get("Metric", {}).get("MetricName") == "CacheReadInputTokenCount" and \
                ms.get("Period") == 3600 and int(e["body"]["StartTime"]) == mid:
            ok = True
sys.exit(0 if ok else 1)
PY
expect_eq "usd_today x 1e6 = input + cache reads of the day = 11 x tokens today, an estimate" \
    "$(python3 - "$TMP/c.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))["routes"][0]
c = r["cost"]
t = r["tokens_today"]
print(t is not None and t > 10 * 1000 and abs(c["usd_today"] * 1e6 - 11 * t) < 1, c["usd_today_quality"])
PY
)" "True estimate"
finish
