#!/usr/bin/env bash
# bedtop check --state FILE: a check from cron asks only what it has not seen. One fake
# (tests/fake/scenario_integration.json, per-minute constants), integration.conf's three
# routes (triage, batch runtime; agents mantle); the fake's log is cut per run.
# Run 1 (no state yet): ListMetrics for AWS/Bedrock (then every 6 hours), every query
#   as check asks it, and the state written (0600).
# Run 2, right after: no AWS/Bedrock ListMetrics (listed < 6 h ago), no 5-minute tier
#   (asked < 5 minutes ago: p50/p99/errors/TTFT/estimate come from the file), only the
#   listed cache spelling (triage: CacheReadInputTokens/CacheWriteInputTokens, batch:
#   none), and its per-minute StartTime is the minute after run 1's newest settled one.
#   The report is the same (the figures are constants).
# Run 3: the file corrupt: one line saying so, every query asked, the file replaced.
# Run 4: another configuration's file: said, and asked in full.
. "$BEDTOP_SRCDIR/tests/lib.sh"
SK='wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY'
TOKEN='IQoJb3JpZ2luX2VjEXAMPLESESSIONTOKENVALUE'
STATE=$TMP/state/check.json
mkdir -p "$TMP/state"

run_check() { # run_check OUT CONFIG [args...]
    local out=$1 conf=$2; shift 2
    env -u AWS_PROFILE -u AWS_ENDPOINT_URL -u AWS_REGION -u AWS_DEFAULT_REGION \
        AWS_ACCESS_KEY_ID=AKIDEXAMPLE AWS_SECRET_ACCESS_KEY="$SK" AWS_SESSION_TOKEN="$TOKEN" \
        AWS_CONFIG_FILE=/nonexistent AWS_SHARED_CREDENTIALS_FILE=/nonexistent \
        AWS_EC2_METADATA_DISABLED=true BEDTOP_DATADIR="$BEDTOP_SRCDIR/data" \
        "$BEDTOP" check --format json --config "$conf" \
        --endpoint-url "http://127.0.0.1:$PORT" "$@" >"$out.json" 2>"$out.err"
    echo $? >"$out.rc"
    # this run's requests: the log lines since the last cut
    local n; n=$(wc -l <"$TMP/fake.log")
    tail -n +"$((CUT + 1))" "$TMP/fake.log" >"$out.log"
    CUT=$n
}
# q LOG EXPR: EXPR sees G (GetMetricData bodies), L (ListMetrics bodies), ids (every
# MetricDataQuery Id of G)
q() {
    python3 - "$1" "$2" <<'PY'
import json, sys
L, G = [], []
for line in open(sys.argv[1]):
    if not line.strip():
        continue
    e = json.loads(line)
    if e.get("op") == "ListMetrics" and e.get("status") == 200:
        L.append(e["body"])
    if e.get("op") == "GetMetricData" and e.get("status") == 200 and "NextToken" not in e["body"]:
        G.append(e["body"])
ids = [x["Id"] for b in G for x in b["MetricDataQueries"]]
metrics = [x["MetricStat"]["Metric"]["MetricName"] + "/" + x["MetricStat"]["Stat"]
           for b in G for x in b["MetricDataQueries"] if "MetricStat" in x]
print(eval(sys.argv[2]))
PY
}
j() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); r={x['name']:x for x in d['routes']}; print($2)" "$1"; }

CUT=0
check "fake AWS starts" start_fake fake --scenario "$BEDTOP_SRCDIR/tests/fake/scenario_integration.json" \
    --session-token "$TOKEN"
CONF=$BEDTOP_SRCDIR/tests/fake/integration.conf

run_check "$TMP/r1" "$CONF" --state "$STATE"
expect_eq "run 1: exit as without a state file (warn: BURNDOWN_MISMATCH)" "$(cat "$TMP/r1.rc")" 1
check "run 1: the state file is written" test -s "$STATE"
expect_eq "run 1: the state file is 0600" "$(stat -c %a "$STATE")" 600
expect_eq "run 1: nothing said on stderr about the state (a first run)" \
    "$(grep -c 'check --state' "$TMP/r1.err")" 0
expect_eq "run 1: ListMetrics AWS/Bedrock once (to learn the spellings for later runs)" \
    "$(q "$TMP/r1.log" "sum(1 for b in L if b['Namespace'] == 'AWS/Bedrock' and 'NextToken' not in b)")" 1
expect_eq "run 1: the 5-minute tier asked (p99 of triage and batch)" \
    "$(q "$TMP/r1.log" "metrics.count('InvocationLatency/p99')")" 2
expect_eq "state: the format, version 1, three routes, samples kept" \
    "$(python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(d['format'], d['version'], len(d['routes']), all(len(r['samples']) > 0 for r in d['routes']))" "$STATE")" \
    "bedtop-check-state 1 3 True"
settled=$(python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(min(r['settled'] for r in d['routes']))" "$STATE")

run_check "$TMP/r2" "$CONF" --state "$STATE"
expect_eq "run 2: the same exit" "$(cat "$TMP/r2.rc")" 1
expect_eq "run 2: no AWS/Bedrock ListMetrics (listed less than 6 hours ago)" \
    "$(q "$TMP/r2.log" "sum(1 for b in L if b['Namespace'] == 'AWS/Bedrock')")" 0
expect_eq "run 2: no 5-minute tier (p50, p99, errors, TTFT, estimate asked < 5 min ago)" \
    "$(q "$TMP/r2.log" "sum(1 for m in metrics if m.split('/')[1] in ('p50', 'p90', 'p99') or m.split('/')[0] in ('EstimatedTPMQuotaUsage', 'TimeToFirstToken', 'InvocationServerErrors'))")" 0
expect_eq "run 2: one cache spelling where listed (triage), none where not (batch)" \
    "$(q "$TMP/r2.log" "sorted(set(m for m in metrics if 'Cache' in m))")" \
    "['CacheReadInputTokens/Sum', 'CacheWriteInputTokens/Sum']"
# the per-minute request starts after run 1's newest settled minute (or later, if run 2
# began in a later minute: never earlier)
expect_eq "run 2: no minute run 1 settled is asked again" \
    "$(q "$TMP/r2.log" "all(b['StartTime'] >= $settled + 60 for b in G if b['MetricDataQueries'][0]['MetricStat']['Period'] == 60)")" True
m1=$(q "$TMP/r1.log" "len(metrics)") m2=$(q "$TMP/r2.log" "len(metrics)")
check "run 2: fewer metrics requested ($m2 against $m1)" test "$m2" -lt "$m1"
expect_eq "run 2: the same figures (triage headroom, the estimate from the file, batch p99)" \
    "$(j "$TMP/r2.json" "r['triage']['headroom_pct'], r['triage']['estimated_tpm'], r['batch']['latency_ms']")" \
    "$(j "$TMP/r1.json" "r['triage']['headroom_pct'], r['triage']['estimated_tpm'], r['batch']['latency_ms']")"

printf 'garbage{' >"$STATE"
run_check "$TMP/r3" "$CONF" --state "$STATE"
expect_eq "run 3 (corrupt file): one clear line" \
    "$(grep -c "check --state $STATE: not JSON (corrupt or truncated); asking CloudWatch for every minute this run" "$TMP/r3.err")" 1
expect_eq "run 3: the 5-minute tier asked again" "$(q "$TMP/r3.log" "metrics.count('InvocationLatency/p99')")" 2
expect_eq "run 3: the same exit" "$(cat "$TMP/r3.rc")" 1
expect_eq "run 3: the file replaced by a good one" \
    "$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['format'])" "$STATE" 2>&1)" bedtop-check-state

# another configuration: one route only
sed '/^\[route batch\]/,$d' "$CONF" >"$TMP/other.conf"
run_check "$TMP/r4" "$TMP/other.conf" --state "$STATE"
expect_eq "run 4 (another configuration's file): said" \
    "$(grep -c 'written for another configuration' "$TMP/r4.err")" 1
expect_eq "run 4: asked in full (the 5-minute tier; ListMetrics again, for the next run)" \
    "$(q "$TMP/r4.log" "metrics.count('InvocationLatency/p99'), len(L) > 0")" "(1, True)"
# hostile files: a sample that is not one (NaN, a signal that is not CloudWatch's), a
# save time in the future, a FIFO planted at the path: said, never used, never blocking
run_check "$TMP/r5" "$CONF" --state "$STATE"
python3 - "$STATE" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d["routes"][0]["samples"].append([d["routes"][0]["settled"], "adm_in_flight", 1e308])
json.dump(d, open(sys.argv[1], "w"))
PY
run_check "$TMP/r6" "$CONF" --state "$STATE"
expect_eq "a sample of another source in the file: refused, said" \
    "$(grep -c 'route triage: a sample that is not one; asking CloudWatch for every minute' "$TMP/r6.err")" 1
python3 - "$STATE" <<'PY'
import json, sys, time
d = json.load(open(sys.argv[1]))
d["saved"] = int(time.time()) + 3600
json.dump(d, open(sys.argv[1], "w"))
PY
run_check "$TMP/r7" "$CONF" --state "$STATE"
expect_eq "saved an hour in the future: refused, said" \
    "$(grep -c 'saved in the future' "$TMP/r7.err")" 1
rm -f "$STATE"; mkfifo "$STATE"
run_check "$TMP/r8" "$CONF" --state "$STATE"
expect_eq "a FIFO at the path: the run does not block, says so, reports (exit 1), then a file" \
    "$(grep -c "check --state $STATE: not a regular file" "$TMP/r8.err") $(cat "$TMP/r8.rc") $(stat -c %F "$STATE")" \
    "1 1 regular file"
rm -f "$STATE"
expect_eq "--state FILE writes only FILE" "$(ls "$TMP/state" | grep -vc '^check.json$')" 0

# On by default (issue 38): without --state the state is kept in
# $XDG_CACHE_HOME/bedtop/, one file per configuration and account, 0600, so a check
# from cron every minute pays what serve pays; --no-state opts out.
export XDG_CACHE_HOME=$TMP/xdg-cache
run_check "$TMP/d1" "$CONF"
expect_eq "default: run 1 exits as before" "$(cat "$TMP/d1.rc")" 1
dfile=$(ls "$XDG_CACHE_HOME"/bedtop/check-*.json 2>/dev/null)
expect_eq "default: one state file in \$XDG_CACHE_HOME/bedtop/" "$(echo "$dfile" | grep -c 'check-[0-9a-f]\{16\}\.json$')" 1
expect_eq "default: the file is 0600, its directory 0700" \
    "$(stat -c %a "$dfile") $(stat -c %a "$XDG_CACHE_HOME/bedtop")" "600 700"
run_check "$TMP/d2" "$CONF"
m1=$(q "$TMP/d1.log" "len(metrics)") m2=$(q "$TMP/d2.log" "len(metrics)")
check "default: a second run asks fewer metrics ($m2 against $m1), counted by the fake" \
    test "$m2" -lt "$m1"
# the minutes the first run asked stay covered in the second (the file keeps their
# coverage): the same trend points or more, never "too few minutes covered"
p1=$(j "$TMP/d1.json" "r['triage']['forecast']['points']") p2=$(j "$TMP/d2.json" "r['triage']['forecast']['points']")
check "default: the second run's trend has the first run's covered minutes ($p2 points against $p1)" \
    test "$p2" -ge "$p1" -a "$p1" -gt 1
expect_eq "default: the second run lists nothing in AWS/Bedrock (listed by the first)" \
    "$(q "$TMP/d2.log" "sum(1 for b in L if b['Namespace'] == 'AWS/Bedrock')")" 0
before=$(stat -c %Y.%s "$dfile"); sleep 1.1
run_check "$TMP/d3" "$CONF" --no-state
m3=$(q "$TMP/d3.log" "len(metrics)")
# without a state a check asks both cache spellings and every tier (20 metrics a
# route, 43 here): more than the first run with one, which listed in full (34)
check "--no-state: the file is not used, every tier asked ($m3 against $m2 with it)" \
    test "$m3" -gt "$m2"
expect_eq "--no-state: the default file is neither read nor rewritten" \
    "$(stat -c %Y.%s "$dfile")" "$before"
run_check "$TMP/d4" "$TMP/other.conf"
expect_eq "another configuration: its own file beside the first" \
    "$(ls "$XDG_CACHE_HOME"/bedtop/check-*.json | wc -l)" 2
run_check "$TMP/d5" "$CONF" --no-state --state "$STATE"
expect_eq "--state and --no-state together: refused (exit 3), said" \
    "$(cat "$TMP/d5.rc") $(grep -c 'give one' "$TMP/d5.err")" "3 1"
unset XDG_CACHE_HOME
finish
