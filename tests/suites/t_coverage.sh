#!/usr/bin/env bash
# Coverage (issue 31, DESIGN.md "Coverage and the catalogue (version 4)") end to end:
# `bedtop check` against the fake AWS (real HTTP, SigV4 verified).
#
# Case 1, a flat workload. One route, amazon.nova-pro (burndown 1), quota_tpm
# 1,000,000, max_tokens 1,000; every minute, forever: 100 invocations, 300,000 input,
# 55,000 output, latency 1,000 ms (docs/headroom.md "Coverage", by hand):
#   settled 355,000; R = 300,000 / 100 + 1,000 = 4,000; in flight 100 / 60 x 1 s =
#   1.6667; held 6,666.67; used 361,666.67; headroom 638,333 = 63.8 %.
# check asks [EndTime - 600, EndTime) with EndTime the minute it runs in; with the
# 120 s lag the minutes settled when it asked are EndTime - 600 .. EndTime - 180:
# 8. The trend fits those 8 (361,666.67 each): slope 0, flat, no run-out. On main it
# fitted 15 frames, the 7 never fetched as idle 0: slope 36,166.67 a minute, "tpm
# reaches its quota in about 15 min"; with an admission URL the gauge (38 in flight,
# read only now) made the newest point a step: "about 155 min" or less. Checked for
# history 10m, 1h, 1d and 15d, with and without the admission URL.
#
# Case 2, a mantle route whose totals are listed only per Model+Project, in 10
# projects, while the per-inference OutputTokens is listed per Model alone. Output
# quota 4,000,000; TotalOutputTokens 388,000 a minute in each project: 3,880,000 =
# 97 % used, headroom 120,000 = 3.0 % (crit). On main the per-Model OutputTokens made
# every signal asked per Model, where the totals do not exist: 0 / idle / 100 % / ok;
# and only 8 of the projects were summed (3,104,000). A route naming project "ghost",
# which is not listed, is unknown (main: it read every other project, and the group
# counted them twice).
. "$BEDTOP_SRCDIR/tests/lib.sh"

python3 - "$TMP/flat.json" "$TMP/mantle.json" <<'PY'
import json, sys
mid = "amazon.nova-pro-v1:0"
def rt(metric, v, stat="Sum"):
    return {"namespace": "AWS/Bedrock", "metric": metric, "stat": stat,
            "dimensions": {"ModelId": mid}, "generator": {"constant": v}}
json.dump({"series": [rt("Invocations", 100), rt("InputTokenCount", 300000),
                      rt("OutputTokenCount", 55000), rt("InvocationLatency", 1000, "Average")]},
          open(sys.argv[1], "w"))
om = "anthropic.claude-opus-4-7"
series = []
for p in range(10):
    for metric, v in (("Inferences", 10), ("TotalInputTokens", 900000), ("TotalOutputTokens", 388000)):
        series.append({"namespace": "AWS/BedrockMantle", "metric": metric, "stat": "Sum",
                       "dimensions": {"Model": om, "Project": "team-%d" % p},
                       "generator": {"constant": v}})
series.append({"namespace": "AWS/BedrockMantle", "metric": "OutputTokens", "stat": "Average",
               "dimensions": {"Model": om}, "generator": {"constant": 3880}})
json.dump({"series": series}, open(sys.argv[2], "w"))
PY

python3 "$BEDTOP_SRCDIR/tests/fake/admission_server.py" --access-log "$TMP/access.log" \
    >"$TMP/aport" 2>"$TMP/adm.err" &
CLEANUP+=("kill $!")
for _ in $(seq 50); do [ -s "$TMP/aport" ] && break; sleep 0.1; done
APORT=$(head -n 1 "$TMP/aport")

check "fake AWS starts" start_fake flat --scenario "$TMP/flat.json"
FLAT_PORT=$PORT
# each check here is a first run: the minutes a state file keeps would add the last
# run's to the trend (t_check_state shows they stay covered)
run() { # CONF [check args...]
    local conf=$1; shift
    "${AWS_ENV[@]}" BEDTOP_DATADIR="$BEDTOP_SRCDIR/data" "$BEDTOP" check --no-state --config "$conf" \
        --endpoint-url "http://127.0.0.1:$PORT" "$@"
}
for hist in 10m 1h 1d 15d; do
    for adm in none url; do
        {
            printf '[bedtop]\nregion = us-east-1\ninterval = 60\nhistory = %s\n\n' "$hist"
            printf '[route flat]\nmodel = amazon.nova-pro-v1:0\nquota_tpm = 1000000\nmax_tokens = 1000\n'
            [ "$adm" = url ] && printf 'admission = http://127.0.0.1:%s/text/flat\n' "$APORT"
        } >"$TMP/flat-$hist-$adm.conf"
        run "$TMP/flat-$hist-$adm.conf" >"$TMP/flat-$hist-$adm.txt" 2>"$TMP/flat-$hist-$adm.err"
        check "flat, history $hist, admission $adm: no FORECAST run-out in the text" \
            bash -c "! grep -qE 'FORECAST|reaches its quota' '$TMP/flat-$hist-$adm.txt'"
        run "$TMP/flat-$hist-$adm.conf" --format json >"$TMP/flat-$hist-$adm.json" 2>/dev/null
        f=$(python3 -c 'import json,sys; f=json.load(open(sys.argv[1]))["routes"][0]["forecast"]; print(f["none"], f["points"], f["slope_per_minute"], f["minutes_to_quota"])' "$TMP/flat-$hist-$adm.json")
        if [ "$adm" = none ]; then
            expect_eq "flat, history $hist: the trend is flat over the 8 covered minutes" "$f" "flat 8 0 None"
        else
            # the gauge is read only now: the newest point has it, the 7 before do not,
            # so they are no points: 1 point, not enough data (or, when the scrape
            # landed after the newest frame's instant, 8 points without it: flat)
            case $f in
            "flat 8 0 None" | "not enough data"*" 1 None None") ok "flat, history $hist, admission url: no trend from a gauge read only now ($f)" ;;
            *) notok "flat, history $hist, admission url: no trend from a gauge read only now: got '$f'" ;;
            esac
        fi
    done
done
expect_eq "flat: used 355,000 + 6,666.67 held = 361,667, headroom 63.8 %" \
    "$(python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))["routes"][0]; print(round(r["tpm"]["used"]), r["headroom_pct"], r["tpm"]["used_quality"])' "$TMP/flat-1d-none.json")" \
    "361667 63.8 known"
check "flat: the assumption says how many minutes the fit had" \
    grep -q 'fit over 8 minutes' "$TMP/flat-1d-none.json"

# The observed ceiling and plan's peak minute say how many minutes they had: plan on
# the flat route (no throttles) covered the same 8 minutes of its 60-minute window, so
# "no throttled minute in the 8 covered min of the last 60 (the others unknown)" and
# "peak minute HH:MM UTC of the 8 covered min of the last 60" (1d9533e: "no throttled
# minute in the last 60 min" and "of the last 60 min", 52 of them never asked); the
# JSON's ceiling has covered_minutes 8.
PORT=$FLAT_PORT
"${AWS_ENV[@]}" BEDTOP_DATADIR="$BEDTOP_SRCDIR/data" "$BEDTOP" plan flat --config "$TMP/flat-1h-none.conf" \
    --endpoint-url "http://127.0.0.1:$PORT" >"$TMP/plan.txt" 2>/dev/null
check "plan: no throttled minute in the 8 covered minutes, not 'in the last 60 min'" \
    bash -c "tr '\n' ' ' <'$TMP/plan.txt' | tr -s ' ' | grep -q 'no throttled minute in the 8 covered min of the last 60 (the others unknown)'"
check "plan: the peak minute is of the 8 covered minutes" \
    bash -c "tr '\n' ' ' <'$TMP/plan.txt' | tr -s ' ' | grep -qE 'peak minute [0-9:]+ UTC of the 8 covered min of the last 60'"
"${AWS_ENV[@]}" BEDTOP_DATADIR="$BEDTOP_SRCDIR/data" "$BEDTOP" plan flat --config "$TMP/flat-1h-none.conf" \
    --endpoint-url "http://127.0.0.1:$PORT" --format json >"$TMP/plan.json" 2>/dev/null
expect_eq "plan --format json: the ceiling covered 8 minutes, throttled none" \
    "$(python3 -c 'import json,sys; c=json.load(open(sys.argv[1]))["ceiling"]; print(c["covered_minutes"], c["throttled_minutes"], c["tokens_per_minute"])' "$TMP/plan.json")" \
    "8 0 None"

# ... and a rising trend says it was fitted over the covered minutes: input rising
# 20,000 a minute (no latency: in flight unknown, so used is the per-minute bound,
# rising as fast), quota 2,000,000: plan's forecast line says "over 8 covered min
# of the last 15" (1d9533e: "over the last 8 min", as if the 8 were the window).
python3 - "$TMP/rise.json" <<'PY'
import json, sys, time
mid = "amazon.nova-pro-v1:0"
start = int(time.time()) // 60 * 60 - 3600
def rt(metric, gen):
    return {"namespace": "AWS/Bedrock", "metric": metric, "stat": "Sum", "start": start,
            "dimensions": {"ModelId": mid}, "generator": gen}
json.dump({"series": [rt("Invocations", {"constant": 100}),
                      rt("InputTokenCount", {"linear": {"start": 100000, "step": 20000}}),
                      rt("OutputTokenCount", {"constant": 55000})]}, open(sys.argv[1], "w"))
PY
check "fake AWS (rising) starts" start_fake rise --scenario "$TMP/rise.json"
printf '[bedtop]\nregion = us-east-1\n\n[route rise]\nmodel = amazon.nova-pro-v1:0\nquota_tpm = 2000000\nmax_tokens = 1000\n' >"$TMP/rise.conf"
"${AWS_ENV[@]}" BEDTOP_DATADIR="$BEDTOP_SRCDIR/data" "$BEDTOP" plan rise --config "$TMP/rise.conf" \
    --endpoint-url "http://127.0.0.1:$PORT" >"$TMP/rise.txt" 2>/dev/null
check "plan: a rising trend is fitted over 8 covered min of the last 15" \
    bash -c "tr '\n' ' ' <'$TMP/rise.txt' | tr -s ' ' | grep -qE 'forecast: .*a minute over 8 covered min of the last 15; a trend'"
PORT=$FLAT_PORT

# Case 8, one scrape per URL a round: two routes naming the same admission URL
# (/fleet: triage by its route label, agents by model_id) are scraped together. check
# scrapes twice (a rate needs two readings): 2 requests for /fleet, not 2 x 2 (main),
# and each route reads its own series: 38 in flight each.
cat >"$TMP/shared.conf" <<EOF
[bedtop]
region = us-east-1
admission_gap = 1

[route triage]
model = amazon.nova-pro-v1:0
quota_tpm = 1000000
max_tokens = 1000
admission = http://127.0.0.1:$APORT/fleet

[route agents]
model = anthropic.claude-opus-4-7
quota_tpm = 1000000
max_tokens = 1000
admission = http://127.0.0.1:$APORT/fleet
EOF
: >"$TMP/access.log"
run "$TMP/shared.conf" --format json >"$TMP/shared.json" 2>/dev/null
expect_eq "a URL two routes name is scraped once a round (2 rounds: 2 requests)" \
    "$(grep -c '^/fleet' "$TMP/access.log")" 2
expect_eq "... and each route reads its own series from it" \
    "$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(sorted((r["name"], r["in_flight"], r["in_flight_source"]) for r in d["routes"]))' "$TMP/shared.json")" \
    "[('agents', 38, 'admission'), ('triage', 38, 'admission')]"

# ... and when the global --admission is the URL a route names: agents names none and
# takes the global one, triage names it itself; still one scrape a round (2 requests,
# not 2 x 2 as on 1d9533e, where the global URL was a second source beside triage's),
# and each route reads its own series from it (38 in flight each)
sed '/^\[route agents\]/,$ {/^admission/d}' "$TMP/shared.conf" >"$TMP/shared-global.conf"
: >"$TMP/access.log"
run "$TMP/shared-global.conf" --admission "http://127.0.0.1:$APORT/fleet" --format json \
    >"$TMP/shared-global.json" 2>/dev/null
expect_eq "the global --admission URL a route also names is scraped once a round (2 requests)" \
    "$(grep -c '^/fleet' "$TMP/access.log")" 2
expect_eq "... and each route reads its own series from it" \
    "$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(sorted((r["name"], r["in_flight"], r["in_flight_source"]) for r in d["routes"]))' "$TMP/shared-global.json")" \
    "[('agents', 38, 'admission'), ('triage', 38, 'admission')]"

# ... and that one scrape keeps the naming route's series with neither label its own,
# as its own URL did (/nolabel: no route or model_id label): triage names /nolabel, the
# global --admission is /nolabel too; triage reads 38 in flight from it, agents (no
# series of its own there) none; still 2 requests, not 4
sed "s#/fleet#/nolabel#" "$TMP/shared-global.conf" >"$TMP/nolabel.conf"
: >"$TMP/access.log"
run "$TMP/nolabel.conf" --admission "http://127.0.0.1:$APORT/nolabel" --format json \
    >"$TMP/nolabel.json" 2>/dev/null
expect_eq "an unlabelled URL named by a route and given as --admission: scraped once a round" \
    "$(grep -c '^/nolabel' "$TMP/access.log")" 2
expect_eq "... its series stay the naming route's (triage 38 from admission; agents not)" \
    "$(python3 -c 'import json,sys; d={r["name"]: r for r in json.load(open(sys.argv[1]))["routes"]}; print(d["triage"]["in_flight"], d["triage"]["in_flight_source"], d["agents"]["in_flight_source"] == "admission")' "$TMP/nolabel.json")" \
    "38 admission False"

# Case 8, one rounding: headroom 99.25 % exactly is 99.3 in the JSON, the text and the
# CSV export (main's CSV said 99.2: printf rounds the binary half to even). One route,
# amazon.nova-pro (burndown 1), quota 1,000,000, max_tokens 1,000; each minute 1 call,
# 5,000 input, 1,000 output, latency 15,000 ms: settled 6,000; R = 5,000 + 1,000 =
# 6,000; in flight 1 / 60 x 15 s = 0.25; held 1,500; used 7,500; headroom 992,500 =
# 99.25 %.
python3 - "$TMP/round.json" <<'PY'
import json, sys
mid = "amazon.nova-pro-v1:0"
def rt(metric, v, stat="Sum"):
    return {"namespace": "AWS/Bedrock", "metric": metric, "stat": stat,
            "dimensions": {"ModelId": mid}, "generator": {"constant": v}}
json.dump({"series": [rt("Invocations", 1), rt("InputTokenCount", 5000), rt("OutputTokenCount", 1000),
                      rt("InvocationLatency", 15000, "Average"), rt("InvocationThrottles", 2)]},
          open(sys.argv[1], "w"))
PY
check "fake AWS (rounding) starts" start_fake round --scenario "$TMP/round.json"
printf '[bedtop]\nregion = us-east-1\n\n[route r]\nmodel = amazon.nova-pro-v1:0\nquota_tpm = 1000000\nmax_tokens = 1000\n' >"$TMP/round.conf"
run "$TMP/round.conf" --format json >"$TMP/round.out" 2>/dev/null
run "$TMP/round.conf" >"$TMP/round.txt" 2>/dev/null
"${AWS_ENV[@]}" BEDTOP_DATADIR="$BEDTOP_SRCDIR/data" "$BEDTOP" record "$TMP/round.rec" --since 5m \
    --config "$TMP/round.conf" --endpoint-url "http://127.0.0.1:$PORT" 2>/dev/null
"$BEDTOP" export "$TMP/round.rec" --format csv >"$TMP/round.csv"
expect_eq "99.25 % is 99.3 in JSON, text and every CSV row" \
    "$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["routes"][0]["headroom_pct"])' "$TMP/round.out") $(awk '$1 == "r" {print $7}' "$TMP/round.txt") $(python3 -c 'import csv,sys; print(sorted(set(r["headroom_pct"] for r in csv.DictReader(open(sys.argv[1])))))' "$TMP/round.csv")" \
    "99.3 99.3 ['99.3']"
# Case 8, the observed ceiling says how many minutes it had: the same route throttles
# 2 calls every minute; check covered 8 minutes of the ceiling's 60-minute window, all
# 8 throttled: "8 of 8 covered min throttled" (main: "8 min throttled" of "the last 60")
check "the observed ceiling counts the covered minutes only" \
    grep -qE "^  r: at least .* \(8 of 8 covered min throttled\)" "$TMP/round.txt"
expect_eq "... and the JSON says 8 covered, 8 throttled" \
    "$(python3 -c 'import json,sys; c=json.load(open(sys.argv[1]))["routes"][0]["observed_ceiling"]; print(c["covered_minutes"], c["throttled_minutes"])' "$TMP/round.out")" "8 8"

# Case 6, a failed day sum: the flat route with a daily quota of 550,000,000, and every
# GetMetricData request for the day's sums (the hourly datapoints, Period 3600) refused.
# Then the minutes stay good (status ok, headroom 63.8 %) and tokens today is what the
# polls covered: the 8 settled minutes x 355,000 = 2,840,000, a lower bound (main:
# the route went stale; with the sums missing it read the 10 minutes as "known").
python3 - "$TMP/flat.json" "$TMP/dayfail.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d["faults"] = [{"op": "GetMetricData", "body_has": '"Period":3600', "count": 0, "action": "error",
                "status": 400, "code": "ValidationError", "message": "refused"}]
json.dump(d, open(sys.argv[2], "w"))
PY
printf '[bedtop]\nregion = us-east-1\n\n[route flat]\nmodel = amazon.nova-pro-v1:0\nquota_tpm = 1000000\nquota_tpd = 550000000\nmax_tokens = 1000\n' >"$TMP/tpd.conf"
check "fake AWS (day sums refused) starts" start_fake day --scenario "$TMP/dayfail.json"
run "$TMP/tpd.conf" --format json >"$TMP/day.json" 2>/dev/null
expect_eq "the day's sums were asked and refused (a GetMetricData of Period 3600 with the fault)" \
    "$(python3 -c 'import json,sys; L=[json.loads(l) for l in open(sys.argv[1])]; print(any(x["op"]=="GetMetricData" and x["fault"] and x["body"]["MetricDataQueries"][0]["MetricStat"]["Period"] == 3600 for x in L))' "$TMP/day.log")" True
expect_eq "a failed day sum: the route stays ok; tokens today 2,840,000, a lower bound" \
    "$(python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))["routes"][0]; print(r["status"], r["headroom_pct"], r["tokens_today"], r["tokens_today_quality"])' "$TMP/day.json")" \
    "ok 63.8 2840000 lower-bound"

check "fake AWS (mantle) starts" start_fake mantle --scenario "$TMP/mantle.json"
cat >"$TMP/mantle.conf" <<'EOF'
[bedtop]
region = us-east-1
interval = 60

[route agents]
model = anthropic.claude-opus-4-7
endpoint = mantle
max_tokens = 2000
quota_input_tpm = 20000000
quota_output_tpm = 4000000

[route ghost]
model = anthropic.claude-opus-4-7
endpoint = mantle
project = ghost
max_tokens = 2000
quota_input_tpm = 20000000
quota_output_tpm = 4000000
EOF
run "$TMP/mantle.conf" --format json >"$TMP/mantle.out" 2>"$TMP/mantle.err"
mj() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); r={x['name']:x for x in d['routes']}; print($1)" "$TMP/mantle.out"; }
expect_eq "mantle: output 10 x 388,000 = 3,880,000 of 4,000,000 binds at 3.0 %" \
    "$(mj "(r['agents']['binding_side'], r['agents']['mantle']['output']['used'], r['agents']['headroom_pct'], r['agents']['status'])")" \
    "('output', 3880000, 3, 'crit')"
# Case 8: mantle publishes no latency and there are no admission counters, so the
# calls in flight, and what they hold, are unknown: the output side binding does not
# make held an exact 0 (main: 0, known)
expect_eq "mantle: held is unknown (null), not an exact 0, when output binds" \
    "$(mj "(r['agents']['tpm']['held'], r['agents']['tpm']['held_quality'])")" "(None, 'unknown')"
expect_eq "mantle: input 10 x 900,000 = 9,000,000 summed over every listed project" \
    "$(mj "r['agents']['mantle']['input']['used'] >= 9000000")" True
expect_eq "mantle: TotalOutputTokens asked per Model+Project (10 series summed), never per Model" \
    "$(python3 -c '
import json, sys
q = [m for l in open(sys.argv[1]) if l.strip() for x in [json.loads(l)] if x["op"] == "GetMetricData"
     for m in x["body"]["MetricDataQueries"] if "MetricStat" in m and m["MetricStat"]["Metric"]["MetricName"] == "TotalOutputTokens"]
dims = [tuple(sorted(d["Name"] for d in m["MetricStat"]["Metric"]["Dimensions"])) for m in q]
print(len(dims) >= 10, all(d == ("Model", "Project") for d in dims))' "$TMP/mantle.log")" "True True"
# Case 8, the cost line counts what AWS bills: agents' three listed signals
# (Inferences, TotalInputTokens, TotalOutputTokens; InferenceClientErrors is not
# listed) are each a sum of 10 series: 30 metrics a poll, x 1,440 polls a day =
# 43,200 (main counted each sum once: 4, its per-Model queries)
run "$TMP/mantle.conf" >"$TMP/mantle.txt" 2>/dev/null
check "mantle: the cost line counts each series a sum reads (30 a poll, 43,200 a day)" \
    grep -q '^cost: 30 metrics requested per poll, 43,200 per day' "$TMP/mantle.txt"
# ghost's own use is unknown (stale, with ListMetrics' reason); the quota it shares
# with agents is at most 3.0 % free, so agents' headroom is an upper bound
expect_eq "mantle: a route naming an unlisted project is unknown, not every other project's" \
    "$(mj "(r['ghost']['mantle']['output']['used'], r['ghost']['stale'], any(w['code'] == 'STALE' and 'Project ghost' in w['message'] for w in r['ghost']['warnings']), r['agents']['headroom_quality'])")" \
    "(None, True, True, 'upper-bound')"

finish
