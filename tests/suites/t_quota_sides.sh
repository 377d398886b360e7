#!/usr/bin/env bash
# Quota sides as AWS has them since 2026-09 (issue 32, the quota half), end to end: the
# real binary, `bedtop check --format json` and `bedtop report quota-request --since`
# against the fake AWS endpoint (SigV4 verified), every series constant per minute.
# Expected values by hand:
#
# split:  Amazon Nova Premier on-demand; the account lists "On-demand model inference input
#         tokens per minute for Amazon Nova Premier" = 1,000,000 and "... output ..." =
#         200,000, each with a UsageMetric (ModelId): two sides, never the combined TPM
#         quota (read as one before, the two were "two quotas name this model").
#         Per minute: 100 calls, input 300,000, output 150,000, latency 1,000 ms,
#         max_tokens 1,000: R = 3,000 + 1,000 = 4,000; in flight 100 / 60 x 1 = 1.667;
#         held 6,667; input used 306,667 (69.3 % left); output used 150,000 of 200,000:
#         25 % left, output binds.
# rpm:    Amazon Nova Lite on-demand, 2,000,000 TPM and 1,000 RPM; per minute Invocations
#         100, InvocationClientErrors 10, InvocationThrottles 50: rpm used = accepted =
#         100 (Invocations counts the failed calls already), offered 150 beside it.
# daily:  the account lists "Cross-Model Max Tokens Per Day" (L-E3F10727, 700,000,000,
#         Adjustable false): pricing-weighted, so every route's daily-account side is an
#         estimate (used and headroom), never known.
# sonnet: Claude Sonnet 5 on-demand, 3,000,000 TPM, Adjustable false: its quota request
#         goes through AWS Support (request_through aws-support), and so does the
#         cross-model daily quota's.
. "$BEDTOP_SRCDIR/tests/lib.sh"
SK='wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY'
NOW=$(date +%s)
START=$(( (NOW / 60) * 60 - 40 * 60 ))
python3 - "$TMP/scen.json" "$START" <<'PY'
import json, sys
start = int(sys.argv[2]); n = 40
def ser(mid, metric, v, stat="Sum"):
    return {"namespace": "AWS/Bedrock", "metric": metric, "stat": stat,
            "dimensions": {"ModelId": mid}, "start": start, "values": [v] * n}
def um(mid, metric):
    return {"MetricNamespace": "AWS/Bedrock", "MetricName": metric,
            "MetricDimensions": {"ModelId": mid}, "MetricStatisticRecommendation": "Sum"}
P, L, S = "amazon.nova-premier-v1:0", "amazon.nova-lite-v1:0", "anthropic.claude-sonnet-5"
series = [ser(P, "Invocations", 100), ser(P, "InputTokenCount", 300000),
          ser(P, "OutputTokenCount", 150000), ser(P, "InvocationLatency", 1000, "Average"),
          ser(L, "Invocations", 100), ser(L, "InputTokenCount", 50000),
          ser(L, "OutputTokenCount", 10000), ser(L, "InvocationLatency", 500, "Average"),
          ser(L, "InvocationClientErrors", 10), ser(L, "InvocationThrottles", 50),
          ser(S, "Invocations", 50), ser(S, "InputTokenCount", 100000),
          ser(S, "OutputTokenCount", 20000), ser(S, "InvocationLatency", 2000, "Average")]
quotas = [
    {"QuotaCode": "L-SPLITIN", "Value": 1000000, "UsageMetric": um(P, "InputTokenCount"),
     "QuotaName": "On-demand model inference input tokens per minute for Amazon Nova Premier"},
    {"QuotaCode": "L-SPLITOUT", "Value": 200000, "UsageMetric": um(P, "OutputTokenCount"),
     "QuotaName": "On-demand model inference output tokens per minute for Amazon Nova Premier"},
    {"QuotaCode": "L-LITE", "Value": 2000000,
     "QuotaName": "On-demand model inference tokens per minute for Amazon Nova Lite"},
    {"QuotaCode": "L-LITERPM", "Value": 1000,
     "QuotaName": "On-demand model inference requests per minute for Amazon Nova Lite"},
    {"QuotaCode": "L-SON5", "Value": 3000000, "Adjustable": False, "UsageMetric": um(S, "InputTokenCount"),
     "QuotaName": "On-demand model inference tokens per minute for Anthropic Claude Sonnet 5"},
    {"QuotaCode": "L-E3F10727", "Value": 700000000, "Adjustable": False,
     "QuotaName": "Cross-Model Max Tokens Per Day"}]
json.dump({"series": series, "quotas": quotas}, open(sys.argv[1], "w"))
PY
cat >"$TMP/b.conf" <<'EOF'
[bedtop]
region = us-east-1
[route split]
model = amazon.nova-premier-v1:0
max_tokens = 1000
[route rpm]
model = amazon.nova-lite-v1:0
max_tokens = 200
[route sonnet]
model = anthropic.claude-sonnet-5
max_tokens = 1000
EOF
check "fake AWS starts" start_fake fake --scenario "$TMP/scen.json"
"${AWS_ENV[@]}" BEDTOP_DATADIR="$BEDTOP_SRCDIR/data" XDG_CACHE_HOME="$TMP/cache" \
    "$BEDTOP" check --format json --config "$TMP/b.conf" --endpoint-url "http://127.0.0.1:$PORT" \
    >"$TMP/c.json" 2>"$TMP/c.err"
check "check printed JSON" python3 -c "import json,sys; json.load(open(sys.argv[1]))" "$TMP/c.json"
check "JSON validates against the schema" python3 "$BEDTOP_SRCDIR/tests/schema_check.py" \
    "$BEDTOP_SRCDIR/data/check.schema.json" "$TMP/c.json"
j() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); r={x['name']:x for x in d['routes']}; print($2)" "$1"; }
J=$TMP/c.json

expect_eq "split: two sides from the split quotas, no combined TPM side" \
    "$(j "$J" "(r['split']['sides']['input']['quota'], r['split']['sides']['output']['quota'], 'tpm' in r['split']['sides'])")" \
    "(1000000, 200000, False)"
expect_eq "split: input used 306,667 (input + held), output 150,000" \
    "$(j "$J" "(round(r['split']['sides']['input']['used']), r['split']['sides']['output']['used'])")" \
    "(306667, 150000)"
expect_eq "split: output binds at 25 %" \
    "$(j "$J" "(r['split']['binding_side'], r['split']['headroom_pct'])")" "('output', 25)"

expect_eq "rpm: used 100 accepted, offered 150 (accepted + throttled), errors not added" \
    "$(j "$J" "(r['rpm']['rpm']['used'], r['rpm']['rpm']['offered'], r['rpm']['requests_per_min'], r['rpm']['requests_offered_per_min'])")" \
    "(100, 150, 100, 150)"

expect_eq "daily: the cross-model side is an estimate, never known" \
    "$(j "$J" "sorted({(x['sides']['daily-account']['used_quality'], x['sides']['daily-account']['headroom_quality']) for x in d['routes']})")" \
    "[('estimate', 'estimate')]"
expect_eq "daily: it does not bind these routes (output, rpm, tpm have less left: 90 % on rpm)" \
    "$(j "$J" "sorted({x['binding_side'] for x in d['routes']})")" "['output', 'rpm', 'tpm']"

"${AWS_ENV[@]}" BEDTOP_DATADIR="$BEDTOP_SRCDIR/data" XDG_CACHE_HOME="$TMP/cache" \
    "$BEDTOP" check --config "$TMP/b.conf" --endpoint-url "http://127.0.0.1:$PORT" \
    >"$TMP/c.txt" 2>"$TMP/c-text.err"
check "text: rpm's accepted use with the offered load beside it" \
    grep -q "^rpm rpm: 100 accepted of 1.0k/min, 150 offered (+ throttled)$" "$TMP/c.txt"

"${AWS_ENV[@]}" BEDTOP_DATADIR="$BEDTOP_SRCDIR/data" XDG_CACHE_HOME="$TMP/cache" \
    "$BEDTOP" report quota-request --since 20m --format json --config "$TMP/b.conf" \
    --endpoint-url "http://127.0.0.1:$PORT" >"$TMP/q.json" 2>"$TMP/q.err"
expect_eq "quota-request --since exits 0" "$?" 0
check "quota-request json validates against its schema" \
    python3 "$BEDTOP_SRCDIR/tests/schema_check.py" "$BEDTOP_SRCDIR/data/quota-request.schema.json" "$TMP/q.json"
g() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); G={x['routes'][0]:x for x in d['quota_groups']}; print($2)" "$1"; }
expect_eq "sonnet: not adjustable, so the request goes through AWS Support" \
    "$(g "$TMP/q.json" "(G['sonnet']['request_through'], G['sonnet']['quotas'][0]['adjustable'], G['sonnet']['quotas'][0]['request_through'])")" \
    "('aws-support', False, 'aws-support')"
expect_eq "rpm: the Nova Lite quotas are adjustable: Service Quotas" \
    "$(g "$TMP/q.json" "(G['rpm']['request_through'], G['rpm']['quotas'][0]['adjustable'], G['rpm']['rpm']['request_through'])")" \
    "('service-quotas', True, 'service-quotas')"
# --since 20m reads 20 minutes of the day, not a day sum: the day's tokens are at best a
# lower bound of its use (coverage), never known and never more than an estimate
expect_eq "the cross-model daily quota beside each runtime group: Support only, a lower bound" \
    "$(g "$TMP/q.json" "(G['sonnet']['daily-account']['code'], G['sonnet']['daily-account']['request_through'], G['sonnet']['daily-account']['used_quality'])")" \
    "('L-E3F10727', 'aws-support', 'lower-bound')"
"${AWS_ENV[@]}" BEDTOP_DATADIR="$BEDTOP_SRCDIR/data" XDG_CACHE_HOME="$TMP/cache" \
    "$BEDTOP" report quota-request --since 20m --config "$TMP/b.conf" \
    --endpoint-url "http://127.0.0.1:$PORT" >"$TMP/q.txt" 2>>"$TMP/q.err"
check "text: Sonnet 5's request says AWS Support only, and that it may not be raised at all" \
    grep -q "^Request it  *through AWS Support only: Service Quotas marks this quota not adjustable" "$TMP/q.txt"
hits=$(cat "$TMP"/*.json "$TMP"/*.err "$TMP"/*.log 2>/dev/null | grep -c -e "$SK" -e 'Signature=')
expect_eq "no secret key or signature in any output" "$hits" 0
finish
