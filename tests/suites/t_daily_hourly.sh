# Issue 25, the day's sums once an hour: a live poller whose history reaches past the
# hour (serve keeps 3 hours) asks the day's token sums from 00:00 UTC to the hour, in
# hourly datapoints, once an hour, and adds the minutes after the hour that it keeps
# anyway; asked with every poll they cost a metric per route and signal each minute
# (240 a route-hour) for the same figure. Tokens today stay the day's.
. "$BEDTOP_SRCDIR/tests/lib.sh"
NOW=$(date +%s)
MIDNIGHT=$(( NOW - NOW % 86400 ))
S=$(( (NOW - MIDNIGHT) / 60 ))   # whole minutes since midnight
# Every minute since midnight: input 1,000 and output 100 tokens (Claude 3 Haiku,
# burndown 1): a minute settles 1,100 tokens; through minute k after midnight the
# day holds 1,100 x k. The daily quota is 1,100 x 1,440 = 1,584,000.
python3 - "$TMP/scen.json" "$MIDNIGHT" <<'PY'
import json, sys
mid = "anthropic.claude-3-haiku-20240307-v1:0"
start = int(sys.argv[2])
def ser(metric, v):
    return {"namespace": "AWS/Bedrock", "metric": metric, "stat": "Sum",
            "dimensions": {"ModelId": mid}, "start": start, "generator": {"constant": v}}
json.dump({"series": [ser("Invocations", 1), ser("InputTokenCount", 1000),
                      ser("OutputTokenCount", 100)],
           "quotas": [{"QuotaCode": "L-TEST1", "Value": 1000000,
                       "QuotaName": "On-demand model inference tokens per minute for Anthropic Claude 3 Haiku"}]},
          open(sys.argv[1], "w"))
PY
# history 3h (serve's default), a poll every 2 s so a few polls fit in a few seconds
printf '[bedtop]\nregion = us-east-1\nhistory = 3h\ninterval = 2\nadaptive_cadence = no\n[route haiku]\nmodel = anthropic.claude-3-haiku-20240307-v1:0\nmax_tokens = 500\nquota_tpd = 1584000\n' >"$TMP/d.conf"
start_fake fake --scenario "$TMP/scen.json"
"${AWS_ENV[@]}" "$BEDTOP" record "$TMP/live.rec" --duration 120s --config "$TMP/d.conf" \
    --endpoint-url "http://127.0.0.1:$PORT" 2>"$TMP/rec.err" &
RPID=$!
# Three polls are in when the fake has answered three rounds of throttle queries (a
# throttle query goes with every poll); then stopped as a user would (SIGTERM).
polls() {
    python3 - "$TMP/fake.log" <<'PY'
import json, sys
n = 0
try:
    for l in open(sys.argv[1]):
        e = json.loads(l)
        if e.get("op") == "GetMetricData" and any(
                q.get("MetricStat", {}).get("Metric", {}).get("MetricName") == "InvocationThrottles"
                for q in e["body"]["MetricDataQueries"]):
            n += 1
except (OSError, ValueError, KeyError):
    pass
print(n)
PY
}
for _ in $(seq 1 600); do
    [ "$(polls)" -ge 3 ] && break
    kill -0 "$RPID" 2>/dev/null || break
    sleep 0.1
done
kill -TERM "$RPID" 2>/dev/null
wait "$RPID"
expect_eq "live record with history 3h exits 0" "$?" 0
AFTER=$(date +%s)
check "three polls or more were made ($(polls))" test "$(polls)" -ge 3
# The day-sum requests: StartTime midnight, Period 3600, EndTime on the hour. One per
# hour the record spanned (two if it crossed an hour); none in the day's first hour,
# where the minutes kept reach back to midnight.
python3 - "$TMP/fake.log" "$MIDNIGHT" "$NOW" "$AFTER" >"$TMP/day.out" <<'PY'
import json, sys
mid, t0, t1 = (int(x) for x in sys.argv[2:5])
asked = []
for l in open(sys.argv[1]):
    e = json.loads(l)
    if e.get("op") != "GetMetricData":
        continue
    b = e["body"]
    if any(q.get("MetricStat", {}).get("Period") == 3600 for q in b["MetricDataQueries"]):
        asked.append((int(b["StartTime"]), int(b["EndTime"])))
# the hours the record's polls ended in, past the day's first
want = sorted({t - t % 3600 for t in (t0, t1) if t - t % 3600 > mid})
print(" ".join("%d..%d" % x for x in asked) or "none", "want", want)
sys.exit(0 if all(s == mid for s, _ in asked) and sorted(e for _, e in asked) == want else 1)
PY
DAYRC=$?
check "day sums asked once an hour, midnight to the hour ($(cat "$TMP/day.out"))" test "$DAYRC" -eq 0
# Tokens today: 1,100 per minute since midnight through the evaluated minute, the hours
# from the day sums and the minutes after the hour from the per-minute signals.
AFTERM=$(( (AFTER - MIDNIGHT) / 60 ))
ATJ=$("$BEDTOP" replay "$TMP/live.rec" --at -0s --format json 2>"$TMP/rp.err")
got=$(printf '%s' "$ATJ" | python3 -c 'import json,sys; print(int(json.load(sys.stdin)["routes"][0]["tokens_today"] or 0))' 2>/dev/null)
lo=$(( 1100 * (S - 4) )); hi=$(( 1100 * (AFTERM + 1) ))
check "tokens today = 1,100 x minutes since midnight ($lo..$hi), got ${got:-none}" \
    test "${got:-0}" -ge "$lo" -a "${got:-0}" -le "$hi"
finish
