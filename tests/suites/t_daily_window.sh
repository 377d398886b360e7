# Issue 19, the daily-sum window: tokens today are summed since 00:00 UTC whatever
# `history` keeps. With history = 30m a live poll fetched (and kept) only the last
# 30 minutes, so "tokens today" counted the history window (18 % shown where 36 %
# was true); now a live poll with a history shorter than a day also asks the day's
# sums in hourly datapoints from midnight, as check does (with every poll: 30
# minutes do not reach back to the hour; see the part with history 3h below).
. "$BEDTOP_SRCDIR/tests/lib.sh"
NOW=$(date +%s)
MIDNIGHT=$(( NOW - NOW % 86400 ))
S=$(( (NOW - MIDNIGHT) / 60 ))   # whole minutes since midnight
# Every minute since midnight: input 1,000 and output 100 tokens (Claude 3 Haiku,
# burndown 5), so a minute settles 1,000 + 100 x 5 = 1,500 tokens; through minute
# k after midnight the day holds 1,500 x k. The daily quota is 1,500 x 1,440 =
# 2,160,000, so at minute k the day is k / 1,440 used (at 12:00, 720 minutes: 50 %).
haiku_scenario "$TMP/scen.json" "$MIDNIGHT" 1 1000 100
# Issue 25, the day's sums once an hour: a live poller whose history reaches past the
# hour (serve keeps 3 hours) asks them from 00:00 UTC to the hour, once an hour, and
# adds the minutes after the hour that it keeps anyway; asked with every poll they
# cost a metric per route and signal each minute (240 a route-hour) for the same
# figure. Tokens today stay the day's.
# ---- history 3h (serve's default): the day sums once an hour ----
# a poll every 2 s, so a few polls fit in a few seconds
printf '[bedtop]\nregion = us-east-1\nhistory = 3h\ninterval = 2\nadaptive_cadence = no\n[route haiku]\nmodel = anthropic.claude-3-haiku-20240307-v1:0\nmax_tokens = 500\nquota_tpd = 2160000\n' >"$TMP/h.conf"
start_fake hourly --scenario "$TMP/scen.json"
"${AWS_ENV[@]}" "$BEDTOP" record "$TMP/hourly.rec" --duration 120s --config "$TMP/h.conf" \
    --endpoint-url "http://127.0.0.1:$PORT" 2>"$TMP/hrec.err" &
HPID=$!
# Three polls are in when the fake has answered three rounds of throttle queries (a
# throttle query goes with every poll); then stopped as a user would (SIGTERM).
polls() {
    python3 - "$TMP/hourly.log" <<'PY'
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
three_polls() { [ "$(polls)" -ge 3 ]; }
stop_when "$HPID" three_polls
expect_eq "live record with history 3h exits 0" "$?" 0
HAFTER=$(date +%s)
check "three polls or more were made ($(polls))" test "$(polls)" -ge 3
# The day-sum requests: StartTime midnight, Period 3600, EndTime on the hour. One per
# hour the record spanned (two if it crossed an hour); none in the day's first hour,
# where the minutes kept reach back to midnight.
python3 - "$TMP/hourly.log" "$MIDNIGHT" "$NOW" "$HAFTER" >"$TMP/day.out" <<'PY'
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
# Tokens today: 1,500 per minute since midnight through the evaluated minute, the hours
# from the day sums and the minutes after the hour from the per-minute signals.
AFTERM=$(( (HAFTER - MIDNIGHT) / 60 ))
HATJ=$("$BEDTOP" replay "$TMP/hourly.rec" --at -0s --format json 2>"$TMP/hrp.err")
hgot=$(printf '%s' "$HATJ" | python3 -c 'import json,sys; print(int(json.load(sys.stdin)["routes"][0]["tokens_today"] or 0))' 2>/dev/null)
lo=$(( 1500 * (S - 4) )); hi=$(( 1500 * (AFTERM + 1) ))
check "tokens today = 1,500 x minutes since midnight ($lo..$hi), got ${hgot:-none}" \
    test "${hgot:-0}" -ge "$lo" -a "${hgot:-0}" -le "$hi"

# ---- history 30m: the day sums with every poll ----
NOW=$(date +%s) # again: the part above took some seconds (a day may have begun)
MIDNIGHT=$(( NOW - NOW % 86400 ))
S=$(( (NOW - MIDNIGHT) / 60 ))
printf '[bedtop]\nregion = us-east-1\nhistory = 30m\n[route haiku]\nmodel = anthropic.claude-3-haiku-20240307-v1:0\nmax_tokens = 500\nquota_tpd = 2160000\n' >"$TMP/d.conf"
start_fake fake --scenario "$TMP/scen.json"
# In the day's first minutes there is no whole minute to sum yet: wait for the third
# (at most two minutes, once a day), so the checks below run at every hour. Within the
# first hour the history nearly reaches midnight and the old fetch would pass too; the
# checks still hold.
if [ "$S" -lt 2 ]; then
    sleep $(( MIDNIGHT + 120 - $(date +%s) ))
    S=2
fi
# Recorded until the day's sums are in the file, then stopped as a user would (SIGTERM
# exits 0 with the file complete). A fixed --duration 5s lost them on a loaded machine:
# they come in a request of their own, which could still be in flight at the 5th second
# (one make check in three under a parallel build). --duration only bounds a hang here.
"${AWS_ENV[@]}" "$BEDTOP" record "$TMP/live.rec" --duration 120s --config "$TMP/d.conf" \
    --endpoint-url "http://127.0.0.1:$PORT" 2>"$TMP/rec.err" &
RPID=$!
# the day's sums are in when a sample line holds both day signals (the header's signal
# list names them too, so a grep would not do)
day_in() {
    python3 - "$TMP/live.rec" <<'PY'
import json, sys
try:
    lines = open(sys.argv[1]).read().split("\n")
    sig = json.loads(lines[0])["signals"]
    # and the minutes' own input and output: they come in a request of their own, and a
    # replay ended before them has no evaluated minute (tokens today null)
    want = {sig.index("day_input_tokens"), sig.index("day_output_tokens"),
            sig.index("input_tokens"), sig.index("output_tokens")}
except (OSError, ValueError, KeyError):
    sys.exit(1)
have = set()
for l in lines[1:]:
    try:
        rec = json.loads(l)
    except ValueError:
        continue  # the line being written
    for smp in rec.get("s", []) if isinstance(rec, dict) else []:
        vals = smp[3]
        have.update(v for v in vals[0::2] if v in want)
sys.exit(0 if want <= have else 1)
PY
}
stop_when "$RPID" day_in
expect_eq "live record with history 30m exits 0" "$?" 0
# the record may cross into the next minute (a loaded machine, a poll at :59): the
# day it asked for can end one or two minutes after S
AFTER=$(date +%s)
S2=$(( (AFTER - MIDNIGHT) / 60 ))
# The poll asked the day's sums from midnight, in hourly datapoints (summed).
check "a live poll asks InputTokenCount since 00:00 UTC with Period 3600" python3 - "$TMP/fake.log" "$MIDNIGHT" <<'PY'
import json, sys
mid = int(sys.argv[2])
for l in open(sys.argv[1]):
    e = json.loads(l)
    if e.get("op") != "GetMetricData":
        continue
    b = e["body"]
    b = json.loads(b) if isinstance(b, str) else b
    st = b["StartTime"]
    for q in b["MetricDataQueries"]:
        ms = q.get("MetricStat", {})
        if ms.get("Period") == 3600 and ms["Metric"]["MetricName"] == "InputTokenCount" and int(st) == mid:
            sys.exit(0)
sys.exit(1)
PY
# The replay at the end of the recording (the day sums may arrive a second after
# the minutes, in a request of their own): tokens today are the day's, 1,500 per
# minute since midnight through the last whole minute (k = S - 1, a minute or two
# less when the poll ran late), not the 30 minutes history kept (<= 45,000).
ATJ=$("$BEDTOP" replay "$TMP/live.rec" --at -0s --format json 2>"$TMP/rp.err")
got=$(printf '%s' "$ATJ" | python3 -c 'import json,sys; print(int(json.load(sys.stdin)["routes"][0]["tokens_today"] or 0))' 2>/dev/null)
lo=$(( 1500 * (S - 4) )); hi=$(( 1500 * (S2 + 1) ))
check "tokens today = 1,500 x minutes since midnight ($lo..$hi), got ${got:-none} (not the 30-minute window's <= 45,000)" \
    test "${got:-0}" -ge "$lo" -a "${got:-0}" -le "$hi"
finish
