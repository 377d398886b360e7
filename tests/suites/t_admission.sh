# bedtop check end to end with admission counters from tests/fake/admission_server.py
# on 127.0.0.1: reserved tokens growing 25,000/s must read as 1,500,000 TPM, and with a
# the reservation per call 1,500,000 / 600 admitted = 2,500, so 38 calls in flight hold
# 95,000 of a 2,000,000 TPM quota (headroom contract version 2, docs/headroom.md);
# 38 calls in flight against a limit of 25 is
# HIDDEN_PARALLELISM. CloudWatch is pointed at a closed loopback port (no AWS).
. "$BEDTOP_SRCDIR/tests/lib.sh"

python3 "$BEDTOP_SRCDIR/tests/fake/admission_server.py" --access-log "$TMP/access.log" \
    --log "$TMP/queries.log" >"$TMP/port" &
pid=$!
CLEANUP+=("kill $pid")
for _ in $(seq 50); do [ -s "$TMP/port" ] && break; sleep 0.1; done
port=$(head -n 1 "$TMP/port")
closed=$(free_port)
[ -n "$port" ] || { notok "fake admission server did not start"; finish; exit; }

run_check() {
    env -i PATH="$PATH" HOME="$TMP" AWS_ACCESS_KEY_ID=AKIDEXAMPLE \
        AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY \
        AWS_CONFIG_FILE=/dev/null AWS_SHARED_CREDENTIALS_FILE=/dev/null \
        AWS_EC2_METADATA_DISABLED=true \
        "$BEDTOP" check --endpoint-url "http://127.0.0.1:$closed" "$@"
}

cat >"$TMP/bedtop.conf" <<EOF
[bedtop]
region = us-east-1
admission_gap = 2

[route triage]
model = us.anthropic.claude-sonnet-4-5-20250929-v1:0
quota_tpm = 2000000
admission = http://127.0.0.1:$port/text/triage

[route broken]
model = anthropic.claude-opus-4-7
quota_tpm = 2000000
admission = http://127.0.0.1:$port/broken
EOF

run_check --config "$TMP/bedtop.conf" --format json >"$TMP/out.json" 2>"$TMP/err.txt"
rc=$?
check "bedtop check scraped the admission endpoint" grep -q '^/text/triage' "$TMP/access.log"
expect_eq "two scrapes of the triage endpoint" "$(grep -c '^/text/triage' "$TMP/access.log")" 2

j() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); r={x['name']:x for x in d['routes']}; print($1)" "$TMP/out.json"; }
# 25,000 tokens/s * 60 = 1,500,000 per minute; allow 3% for the client-measured gap
expect_eq "reserved per minute from admission counters" \
    "$(j "abs(r['triage']['tpm']['reserved_per_min'] - 1500000) <= 45000")" True
# R = 1,500,000 / 600 = 2,500 per call; held = 38 x 2,500 = 95,000 (CloudWatch is
# unreachable, so nothing settled is known); headroom (2,000,000 - 95,000) / 2,000,000
# = 95.25% (both rates come from the same two scrapes, so the gap cancels in R)
expect_eq "reservation per call from the counters' rates" \
    "$(j "(abs(r['triage']['reservation_per_call'] - 2500) <= 5, r['triage']['reservation_source'])")" "(True, 'admission')"
expect_eq "held = in flight (admission gauge) x R" \
    "$(j "(abs(r['triage']['tpm']['held'] - 95000) <= 200, r['triage']['in_flight_source'])")" "(True, 'admission')"
expect_eq "headroom 95.25% of the quota" "$(j "abs(r['triage']['headroom_pct'] - 95.25) <= 0.1")" True
expect_eq "in flight vs concurrency limit" \
    "$(j "(r['triage']['in_flight'], r['triage']['concurrency_limit'])")" "(38, 25)"
expect_eq "HIDDEN_PARALLELISM raised" \
    "$(j "'HIDDEN_PARALLELISM' in [w['code'] for w in r['triage']['warnings']]")" True
expect_eq "the broken endpoint does not make triage's admission data stale" \
    "$(j "r['triage']['tpm']['reserved_per_min'] is not None and r['broken']['tpm']['reserved_per_min'] is None")" True
check "exit code is a monitoring-plugin code" test "$rc" -ge 0 -a "$rc" -le 3

# Issue 19: a worker restarts between the two scrapes (tests/fake/admission_server.py
# /restart): worker a admits 10/s (600/min) reserving 25,000 tokens/s (1,500,000/min);
# worker b went from its old process's 1,000,000 admitted / 3,000,000,000 reserved to a
# fresh process admitting 1/s reserving 2,500/s. Per series, b was reset and its
# increase is its new value: 60 admitted and 150,000 reserved a minute. The route:
# 660 admitted and 1,650,000 reserved a minute, R = 1,650,000 / 660 = 2,500 per call,
# held = 38 x 2,500 = 95,000, headroom (2,000,000 - 95,000) / 2,000,000 = 95.25 %.
# Summed before the rate (bedtop before issue 19) the route's total fell, so the whole
# cumulative total (~3.0e9 reserved) counted as one scrape's increase.
cat >"$TMP/restart.conf" <<EOF
[bedtop]
region = us-east-1
admission_gap = 2
[route restart]
model = us.anthropic.claude-sonnet-4-5-20250929-v1:0
quota_tpm = 2000000
admission = http://127.0.0.1:$port/restart/restart
EOF
run_check --config "$TMP/restart.conf" --format json >"$TMP/out.json" 2>"$TMP/err.txt"
expect_eq "worker restart: reserved 1,650,000 a minute (1,500,000 + 150,000), not ~3.0e9" \
    "$(j "abs(r['restart']['tpm']['reserved_per_min'] - 1650000) <= 50000")" True
expect_eq "worker restart: R = 1,650,000 / 660 = 2,500 per call, from the counters" \
    "$(j "(abs(r['restart']['reservation_per_call'] - 2500) <= 5, r['restart']['reservation_source'])")" "(True, 'admission')"
expect_eq "worker restart: held 38 x 2,500 = 95,000, headroom 95.25 %" \
    "$(j "(abs(r['restart']['tpm']['held'] - 95000) <= 200, abs(r['restart']['headroom_pct'] - 95.25) <= 0.1)")" "(True, True)"

# The three counter-driven warnings and ESTIMATE_ONLY, with CloudWatch from the fake AWS
# endpoint: route storm has counters, route plain has only CloudWatch.
#   storm: admitted 10/s = 600/min, retries 5/s = 300/min, rejected 0:
#     retries share = 300 / (600 + 300) = 33% > 20%          -> RETRY_LOAD (warn, < 50%)
#     max_tokens gauge 4,096; output histogram 128:10 256:40 +Inf:50 -> p99 = 256 (the
#     last finite bucket, as histogram_quantile); 4,096 > 4 x 256 -> OVERSIZED_MAX_TOKENS,
#     recommended = ceil(256 x 1.25 / 64) x 64 = 320
#     in flight 38 > limit 25                               -> HIDDEN_PARALLELISM
#     reserved 25,000/s = 1,500,000/min from the counters   -> no ESTIMATE_ONLY
#   plain: CloudWatch only (EstimatedTPMQuotaUsage 400,000), no max_tokens -> ESTIMATE_ONLY
SK='wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY'
cat >"$TMP/scen.json" <<EOF
{"series": [
 {"namespace": "AWS/Bedrock", "metric": "EstimatedTPMQuotaUsage", "stat": "Sum",
  "dimensions": {"ModelId": "anthropic.claude-3-haiku-20240307-v1:0"}, "generator": {"constant": 400000}},
 {"namespace": "AWS/Bedrock", "metric": "EstimatedTPMQuotaUsage", "stat": "Sum",
  "dimensions": {"ModelId": "us.anthropic.claude-sonnet-4-5-20250929-v1:0"}, "generator": {"constant": 400000}},
 {"namespace": "AWS/Bedrock", "metric": "Invocations", "stat": "Sum",
  "dimensions": {"ModelId": "us.anthropic.claude-sonnet-4-5-20250929-v1:0"}, "generator": {"constant": 600}}]}
EOF
start_fake aws --scenario "$TMP/scen.json"
awsport=$PORT
cat >"$TMP/storm.conf" <<EOF
[bedtop]
region = us-east-1
admission_gap = 2
[route storm]
model = us.anthropic.claude-sonnet-4-5-20250929-v1:0
quota_tpm = 2000000
admission = http://127.0.0.1:$port/text/storm?retries=5&max_tokens=4096
[route plain]
model = anthropic.claude-3-haiku-20240307-v1:0
quota_tpm = 1000000
EOF
env -i PATH="$PATH" HOME="$TMP" AWS_ACCESS_KEY_ID=AKIDEXAMPLE AWS_SECRET_ACCESS_KEY="$SK" \
    AWS_CONFIG_FILE=/dev/null AWS_SHARED_CREDENTIALS_FILE=/dev/null AWS_EC2_METADATA_DISABLED=true \
    "$BEDTOP" check --config "$TMP/storm.conf" --format json --endpoint-url "http://127.0.0.1:$awsport" \
    >"$TMP/out.json" 2>"$TMP/err.txt"
expect_eq "storm: RETRY_LOAD, OVERSIZED_MAX_TOKENS, HIDDEN_PARALLELISM, no ESTIMATE_ONLY" \
    "$(j "[c in [w['code'] for w in r['storm']['warnings']] for c in ('RETRY_LOAD','OVERSIZED_MAX_TOKENS','HIDDEN_PARALLELISM','ESTIMATE_ONLY')]")" \
    "[True, True, True, False]"
expect_eq "RETRY_LOAD names the 33% retry share" \
    "$(j "[w['message'][:31] for w in r['storm']['warnings'] if w['code']=='RETRY_LOAD'][0]")" \
    "retries are 33% of offered load"
expect_eq "OVERSIZED_MAX_TOKENS: 16x the p99 256, recommends 320" \
    "$(j "[('16x the observed p99' in w['message'], 'recommended max_tokens 320' in w['message']) for w in r['storm']['warnings'] if w['code']=='OVERSIZED_MAX_TOKENS'][0]")" \
    "(True, True)"
expect_eq "plain (CloudWatch estimate only): ESTIMATE_ONLY" \
    "$(j "'ESTIMATE_ONLY' in [w['code'] for w in r['plain']['warnings']]")" True

# --admission: one endpoint for every route, mapped by route / model_id labels
cat >"$TMP/fleet.conf" <<EOF
[bedtop]
admission_gap = 2
[route triage]
model = us.anthropic.claude-sonnet-4-5-20250929-v1:0
quota_tpm = 2000000
[route agents]
model = anthropic.claude-opus-4-7
quota_tpm = 3000000
EOF
run_check --config "$TMP/fleet.conf" --format json \
    --admission "http://user:hunter2@127.0.0.1:$port/fleet" >"$TMP/out.json" 2>"$TMP/err.txt"
expect_eq "--admission fleet endpoint: agents found by model_id" \
    "$(j "abs(r['agents']['tpm']['reserved'] - 1500000) <= 45000")" True
check "no password in any output" bash -c "! grep -q hunter2 '$TMP/out.json' '$TMP/err.txt'"

# a Prometheus server: one query round, queries printed with --verbose
run_check --config "$TMP/fleet.conf" --format json --verbose \
    --admission "prometheus+http://127.0.0.1:$port" >"$TMP/out.json" 2>"$TMP/err.txt"
expect_eq "Prometheus server rate used as is" "$(j "r['triage']['tpm']['reserved']")" 1500000
expect_eq "--verbose prints the 14 queries (one per admission signal)" "$(grep -c 'admission query' "$TMP/err.txt")" 14
check "no secret key in verbose output" bash -c "! grep -q EXAMPLEKEY '$TMP/err.txt'"
finish
