#!/usr/bin/env bash
# bedtop plan on the demo and on a recorded load test: the what-if, the limits to set,
# the forecast, SLOWDOWN; text within 80 columns, JSON against data/plan.schema.json,
# usage errors. The figures themselves are worked by hand in tests/unit/test_plan.c.
. "$BEDTOP_SRCDIR/tests/lib.sh"
SCHEMA=$BEDTOP_SRCDIR/data/plan.schema.json
j() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print($2)" "$1"; }
width() { awk '{ if (length($0) > m) m = length($0) } END { print m + 0 }' "$1"; }

# The demo's summarize (max_tokens 64,000 for ~300-token answers, bursts throttled):
# max_tokens 768 reserves 2,000 + 768 a call instead of 66,000, so about 137 calls fit
# at once instead of 5, and the peak minute would not throttle.
"$BEDTOP" plan summarize --max-tokens 768 --demo-at 12 >"$TMP/s.txt"
expect_rc "plan summarize --max-tokens 768: exit 0" 0 "$BEDTOP" plan summarize --max-tokens 768 --demo-at 12
check "the answer names the change" grep -q '^what if:  max_tokens 768$' "$TMP/s.txt"
check "... and the peak minute's verdict" grep -q '^would still throttle at the peak minute: no$' "$TMP/s.txt"
check "... and what it assumed (max_tokens, output distribution)" \
    bash -c "grep -q 'max_tokens 64k -> 768' '$TMP/s.txt' && grep -q 'truncation risk unknown' '$TMP/s.txt'"
"$BEDTOP" plan summarize --max-tokens 768 --demo-at 12 -f json >"$TMP/s.json"
check "plan --format json validates against data/plan.schema.json" \
    python3 "$BEDTOP_SRCDIR/tests/schema_check.py" "$SCHEMA" "$TMP/s.json"
expect_eq "fits more at once: 5 now, over 100 after" \
    "$(j "$TMP/s.json" "(d['now']['fits_more'], d['after']['fits_more'] > 100, d['after']['reservation_per_call'] < 3000)")" \
    "(5, True, True)"

# The triage retry storm: the limits to set, text and the admission policy as JSON.
"$BEDTOP" plan triage --limits --demo-at 16 >"$TMP/l.txt"
check "limits: a concurrency cap from the operating point" grep -q '^  concurrency cap  *[0-9][0-9]* in flight' "$TMP/l.txt"
check "limits: a token budget, a max_tokens, a retry budget" \
    bash -c "grep -q '^  token budget  *1\.[0-9]*M TPM (quota 2\.00M' '$TMP/l.txt' && grep -q '^  max_tokens  *896 ' '$TMP/l.txt' && grep -q '^  retries  *at most [0-9]* retries a minute' '$TMP/l.txt'"
"$BEDTOP" plan triage --limits --demo-at 16 -f json >"$TMP/l.json"
check "limits JSON validates" python3 "$BEDTOP_SRCDIR/tests/schema_check.py" "$SCHEMA" "$TMP/l.json"
expect_eq "admission policy: the budget leaves triage-app's use and a 20 % reserve" \
    "$(j "$TMP/l.json" "(d['limits']['admission_policy']['max_tokens'], d['limits']['reserve_tpm'], d['limits']['admission_policy']['tokens_per_minute'] < 1600000, d['limits']['admission_policy']['retry']['jitter'])")" \
    "(896, 400000, True, 'full')"
expect_eq "the policy printed in the text is the JSON's" \
    "$(sed -n '/^admission policy (JSON):$/,$p' "$TMP/l.txt" | tail -n +2 | python3 -c 'import json,sys; print(json.load(sys.stdin) == json.load(open(sys.argv[1]))["limits"]["admission_policy"])' "$TMP/l.json")" True

# A recorded load test (tests/data/loadtest.rec): accepted completions plateau at 32.
"$BEDTOP" plan load --limits --replay "$BEDTOP_SRCDIR/tests/data/loadtest.rec" --at -1m >"$TMP/k.txt" 2>"$TMP/k.err"
expect_eq "the load test's knee: a cap of 32 in flight" \
    "$(grep -A1 '^  concurrency cap' "$TMP/k.txt" | tr -s ' \n' ' ')" \
    " concurrency cap 32 in flight (completions stopped growing past it; throttled from 48) "

# Forecast: workers' calls ramp from minute 17; none while agents' use is flat.
"$BEDTOP" plan workers --demo-at 26 -f json >"$TMP/f.json"
expect_eq "a forecast on the ramp: tpm reaches its quota within the hour" \
    "$(j "$TMP/f.json" "(d['forecast']['side'], 0 < d['forecast']['minutes_to_quota'] < 60)")" "('tpm', True)"
"$BEDTOP" plan workers --demo-at 26 >"$TMP/f.txt"
check "... said as a trend" grep -q '^forecast: tpm reaches its quota in .* min at this trend' "$TMP/f.txt"
"$BEDTOP" plan agents --demo-at 16 -f json >"$TMP/f16.json"
expect_eq "no forecast while the use is flat" "$(j "$TMP/f16.json" "(d['forecast']['minutes_to_quota'], d['forecast']['none'])")" "(None, 'flat')"

# SLOWDOWN: legacy's output tokens per second halve from minute 20 at the same traffic.
"$BEDTOP" check --demo-at 28 -f json >"$TMP/c.json"
expect_eq "check: SLOWDOWN on legacy at minute 28, nowhere at minute 16" \
    "$(j "$TMP/c.json" "[r['name'] for r in d['routes'] for w in r['warnings'] if w['code']=='SLOWDOWN']") $("$BEDTOP" check --demo-at 16 -f json | grep -c SLOWDOWN)" "['legacy'] 0"
"$BEDTOP" plan legacy --demo-at 28 -f json >"$TMP/o.json"
expect_eq "plan: OTPS at most 60 % of the trailing hour, slowdown" \
    "$(j "$TMP/o.json" "(d['speed']['otps'] < 0.6 * d['speed']['otps_hour'], d['speed']['slowdown'])")" "(True, True)"

# Moving a route frees its group; a tier changes price, not quota.
"$BEDTOP" plan triage --region us-west-2 --demo-at 16 -f json >"$TMP/r.json"
expect_eq "triage moved to us-west-2: triage-app leaves its group, with more headroom" \
    "$(j "$TMP/r.json" "(d['group'][0]['route'], d['group'][0]['left_group'], d['group'][0]['headroom_pct_after'] > d['group'][0]['headroom_pct_now'], d['after']['headroom_quality'])")" \
    "('triage-app', True, True, 'unknown')"
"$BEDTOP" plan legacy --tier flex --demo-at 12 -f json >"$TMP/t.json"
expect_eq "flex on Nova Lite: the same quota, use at least as observed (tpm headroom an upper bound)" \
    "$(j "$TMP/t.json" "(d['after']['sides']['tpm']['quota'], d['after']['sides']['tpm']['group_used_quality'], d['after']['sides']['tpm']['headroom_quality'])")" \
    "$(j "$TMP/c.json" "([r['quota']['tpm'] for r in d['routes'] if r['name']=='legacy'][0], 'lower-bound', 'upper-bound')")"
# AWS offers Priority and Flex for gpt-oss, Qwen, DeepSeek, Nova, ... but not for Claude
# models: a what-if for Claude 3.5 Haiku (summarize) says so instead of answering
expect_rc "flex on Claude 3.5 Haiku: refused, exit 3" 3 "$BEDTOP" plan summarize --tier flex --demo-at 12
"$BEDTOP" plan summarize --tier flex --demo-at 12 >/dev/null 2>"$TMP/t.err"
check "the refusal names the tier, the model and the routes that offer it (legacy, Nova Lite)" \
    grep -q "flex tier is not offered for anthropic.claude-3-5-haiku-20241022-v1:0.*Nova.*routes of this config that offer it: legacy" "$TMP/t.err"

# Every text answer fits 80 columns.
wide=0
for args in "summarize --max-tokens 768" "triage --limits" "triage --retries-off --concurrency 20" \
            "agents --traffic x2" "workers --limits --max-tokens 512" "preview" "legacy --tier priority"; do
    # shellcheck disable=SC2086
    "$BEDTOP" plan $args --demo-at 22 >"$TMP/w.txt" 2>/dev/null
    [ "$(width "$TMP/w.txt")" -le 80 ] || { wide=1; echo "# plan $args: $(width "$TMP/w.txt") columns"; }
done
expect_eq "plan's text fits 80 columns" "$wide" 0

# Live, against the fake AWS endpoint (real HTTP, SigV4 verified), the scenario of
# t_headroom_frame: chat has 9,000 invocations a minute (accepted: the RPM side's use;
# its 300 throttles are offered load, not use) against 10,000 RPM (10 % left, rpm
# binds). At traffic x0.9: 8,100 requests, 1,900 left = 19 %. team-a shares L-LLAMA with team-b, whose CloudWatch answers
# Forbidden: its headroom stays an upper bound after any change.
SK='wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY'
live() {
    env -u AWS_PROFILE -u AWS_ENDPOINT_URL -u AWS_REGION -u AWS_DEFAULT_REGION -u AWS_SESSION_TOKEN \
        AWS_ACCESS_KEY_ID=AKIDEXAMPLE AWS_SECRET_ACCESS_KEY="$SK" \
        AWS_CONFIG_FILE=/nonexistent AWS_SHARED_CREDENTIALS_FILE=/nonexistent \
        AWS_EC2_METADATA_DISABLED=true BEDTOP_DATADIR="$BEDTOP_SRCDIR/data" \
        "$BEDTOP" plan "$@" --config "$BEDTOP_SRCDIR/tests/fake/headroom_v3.conf" \
        --endpoint-url "http://127.0.0.1:$PORT"
}
if start_fake plan --scenario "$BEDTOP_SRCDIR/tests/fake/scenario_headroom_v3.json"; then
    live chat --traffic x0.9 -f json >"$TMP/live.json" 2>"$TMP/live.err"
    expect_eq "live: chat's rpm side at traffic x0.9: 10 % -> 19 % left" \
        "$(j "$TMP/live.json" "(d['mode'], d['now']['binding_side'], d['now']['sides']['rpm']['headroom_pct'], d['after']['sides']['rpm']['group_used'], d['after']['sides']['rpm']['headroom_pct'])")" \
        "('live', 'rpm', 10, 8100, 19)"
    check "live: the JSON validates" python3 "$BEDTOP_SRCDIR/tests/schema_check.py" "$SCHEMA" "$TMP/live.json"
    live team-a --max-tokens 500 -f json >"$TMP/team.json" 2>/dev/null
    expect_eq "live: team-a's group has an unreadable member: headroom at most, before and after" \
        "$(j "$TMP/team.json" "(d['now']['headroom_quality'], d['after']['headroom_quality'], d['group'][0]['route'])")" \
        "('upper-bound', 'upper-bound', 'team-b')"
else
    notok "fake AWS starts"
fi

# Usage errors: one line, exit 3.
expect_rc "an unknown route: exit 3" 3 "$BEDTOP" plan nosuch --demo-at 12
check "... naming the routes" grep -q "plan: 'nosuch' is not a route; routes are triage, summarize" "$TMP/last.err"
expect_rc "no route: exit 3" 3 "$BEDTOP" plan --demo-at 12
expect_rc "--tier bogus: exit 3" 3 "$BEDTOP" plan triage --tier bogus --demo-at 12
expect_rc "--max-tokens 0: exit 3" 3 "$BEDTOP" plan triage --max-tokens 0 --demo-at 12
expect_rc "--at without --replay: exit 3" 3 "$BEDTOP" plan triage --at 10:00 --demo-at 12
expect_rc "--format prometheus: exit 3" 3 "$BEDTOP" plan triage -f prometheus --demo-at 12
expect_rc "--limits does not apply to check" 3 "$BEDTOP" check --limits --demo-at 12
finish
