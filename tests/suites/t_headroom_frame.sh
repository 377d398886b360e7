#!/usr/bin/env bash
# Headroom contract version 3 end to end: `bedtop check --format json` against the fake
# AWS endpoint (real HTTP, SigV4 verified). Scenario tests/fake/scenario_headroom_v3.json,
# config tests/fake/headroom_v3.conf. The check polls at T; with the 120 s lag its
# evaluated minute is floor(T - 120) - 60, i.e. three minutes before the minute of T.
# Numbers by hand (docs/headroom.md):
#
# chat: Nova Lite (burndown 1), 2,000,000 TPM and 10,000 RPM, every minute:
#   9,000 invocations (accepted: the RPM side's use) and 300 throttles: 9,300 offered
#   tokens: settled 270,000 + 22,000 = 292,000 (= the estimate); in flight
#           9,000 / 60 x 0.2 s = 30; R = 270,000 / 9,000 + 100 = 130; held 3,900;
#           used 295,900; headroom 1,704,100 = 85.2 %
#   rpm:    headroom 10,000 - 9,000 = 1,000 = 10 %: the rpm side binds; fits 1,000 more
#           requests a minute; LOW_HEADROOM (warn: 10 < 20) names rpm and the throttles
#           are blamed on the RPM quota, accepted use within 10 % of it (version 2:
#           85.2 %, RPM "not enforced"; before issue 32: 9,300 "submitted", throttles
#           counted as use)
# back: Nova Pro, 500,000 TPM: 100 calls eight minutes before the last complete
#   minute, nothing since, and 2 calls in the last complete minute (not settled):
#   idle at the evaluated minute: used 0, headroom 500,000 = 100 %, ok
#   (version 2 evaluated it at its busy minute and showed 100 calls as current)
# team-a / team-b: one quota, L-LLAMA (1,000,000); team-b's queries answer Forbidden:
#   team-a: 60 calls, 240,000 in, 60,000 out, 1,000 ms, max_tokens 1,000, burndown 1:
#     settled 300,000; R 5,000; in flight 1; held 5,000; used 305,000
#   group used >= 305,000 (lower bound): headroom <= 695,000 = 69.5 % (upper bound);
#   PARTIAL_GROUP names team-b; SHARED_QUOTA never says team-b uses 0
#   team-b: unknown (STALE, CloudWatch failing), used null
# burst: Nova Micro, quota_tpm 100,000, max_tokens 4,000; CloudWatch answers with no
#   datapoint (the burst is not published yet) while the admission gauge
#   (tests/fake/admission_server.py /json/burst) says 12 calls in flight and no
#   admitted counter gives R: R falls back to max_tokens, so
#   held >= 12 x 4,000 = 48,000 (lower bound); used >= 48,000;
#   headroom <= 52,000 = 52 % (upper bound). Version 2: held unknown, used 0, 100 %.
# tiered: Claude 3 Haiku (burndown 5, as every Anthropic model of 4.7 and below), quota_tpm 1,000,000, max_tokens 500; every minute
#   300 calls, 900,000 in, 60,000 out, latency 3,000 ms (every tier); ListMetrics lists
#   ModelId + ResolvedServiceTier=reserved, which served 100 calls, 300,000 in, 20,000
#   out; the reservation is 1,000,000 input / 100,000 output TPM (config):
#   on-demand: 200 calls, 600,000 in, 40,000 out; settled 600,000 + 40,000 x 5 = 800,000;
#     R = 600,000 / 200 + 500 = 3,500; in flight 200 / 60 x 3 s = 10; held 35,000;
#     used 835,000; headroom 165,000 = 16.5 % (below warn 20 %): the tpm side binds,
#     fits floor(165,000 / 3,500) = 47
#   every tier (version 2, and check before it listed the tier): settled 1,200,000,
#     held 15 x 3,500 = 52,500, used 1,252,500: over quota, crit
#   reserved input: 300,000 + its third of what every tier holds (35,000 / (2/3) / 3
#     = 17,500) = 317,500: 68.25 % free; reserved output 20,000: 80 % free
#   in flight on every tier 300 / 60 x 3 = 15
#   concurrent: Service Quotas lists 100 concurrent requests for Claude 3 Haiku; the 15
#   in flight are a minute's mean (Little's law), which the peak is at least: at most
#   85 more = 85 % (upper bound); tpm still binds
# restart: Mistral Large, quota_tpm 2,000,000, no CloudWatch datapoint (idle); two
#   workers (tests/fake/admission_server.py /restart): a admits 10/s (600/min) and
#   reserves 25,000/s (1,500,000/min), 38 in flight; b answers check's first scrape
#   with its old process's totals (1,000,000 admitted, 3,000,000,000 reserved) and has
#   restarted by the second: 1/s and 2,500/s since. Per series b was reset, its
#   increase is its new value (60 admitted, 150,000 reserved a minute), so the route
#   admits 660 and reserves 1,650,000 a minute: R = 2,500, held 38 x 2,500 = 95,000,
#   used 95,000 (nothing settled at the idle minute), headroom 1,905,000 = 95.25 %,
#   fits floor(1,905,000 / 2,500) = 762. Summed before the rate, the route's total
#   fell and ~3.0e9 reserved tokens counted as one minute's.
. "$BEDTOP_SRCDIR/tests/lib.sh"
SK='wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY'

check "fake AWS starts" start_fake v3 --scenario "$BEDTOP_SRCDIR/tests/fake/scenario_headroom_v3.json"
python3 "$BEDTOP_SRCDIR/tests/fake/admission_server.py" >"$TMP/aport" &
CLEANUP+=("kill $!")
for _ in $(seq 50); do [ -s "$TMP/aport" ] && break; sleep 0.1; done
APORT=$(head -n 1 "$TMP/aport")
check "fake admission server starts" test -n "$APORT"
sed -e "s|@ADMISSION@|http://127.0.0.1:$APORT/json/burst|" -e "s|@ADMISSION_BASE@|http://127.0.0.1:$APORT|" \
    "$BEDTOP_SRCDIR/tests/fake/headroom_v3.conf" >"$TMP/v3.conf"
t0=$(date +%s) # the poll happens between t0 and t1: on a loaded machine it may cross a minute
env -u AWS_PROFILE -u AWS_ENDPOINT_URL -u AWS_REGION -u AWS_DEFAULT_REGION -u AWS_SESSION_TOKEN \
    AWS_ACCESS_KEY_ID=AKIDEXAMPLE AWS_SECRET_ACCESS_KEY="$SK" \
    AWS_CONFIG_FILE=/nonexistent AWS_SHARED_CREDENTIALS_FILE=/nonexistent \
    AWS_EC2_METADATA_DISABLED=true BEDTOP_DATADIR="$BEDTOP_SRCDIR/data" \
    "$BEDTOP" check --format json --config "$TMP/v3.conf" \
    --endpoint-url "http://127.0.0.1:$PORT" >"$TMP/out.json" 2>"$TMP/out.err"
rc=$?
t1=$(date +%s)
j() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); r={x['name']:x for x in d['routes']}; print($1)" "$TMP/out.json"; }

expect_eq "exit 1: warn (rpm, the partial group); unknown counts as warn" "$rc" 1
check "JSON validates against data/check.schema.json" \
    python3 "$BEDTOP_SRCDIR/tests/schema_check.py" "$BEDTOP_SRCDIR/data/check.schema.json" "$TMP/out.json"
check "no NaN or Infinity anywhere in the JSON" bash -c "! grep -qiE 'nan|infinity' '$TMP/out.json'"

expect_eq "chat: quota 2,000,000 TPM and 10,000 RPM from Service Quotas" \
    "$(j "(r['chat']['quota']['tpm'], r['chat']['quota']['rpm'], r['chat']['rpm']['source'])")" \
    "(2000000, 10000, 'service-quotas')"
expect_eq "chat: tokens used 295,900, 85.2 % free on the tpm side" \
    "$(j "(r['chat']['tpm']['used'], r['chat']['sides']['tpm']['headroom_pct'])")" "(295900, 85.2)"
expect_eq "chat: 9,000 requests accepted (9,300 offered), rpm headroom 1,000 = 10 %: rpm binds, fits 1,000" \
    "$(j "(r['chat']['rpm']['used'], r['chat']['rpm']['offered'], r['chat']['rpm']['headroom'], r['chat']['binding_side'], r['chat']['headroom_pct'], r['chat']['fits_more'])")" \
    "(9000, 9300, 1000, 'rpm', 10, 1000)"
expect_eq "chat: LOW_HEADROOM warn names rpm; throttles blamed on the RPM quota" \
    "$(j "[(w['code'], w['severity'], 'rpm' in w['message'] or 'requests-per-minute' in w['message']) for w in r['chat']['warnings'] if w['code'] in ('LOW_HEADROOM', 'THROTTLED_BELOW_ESTIMATE')]")" \
    "[('THROTTLED_BELOW_ESTIMATE', 'warn', True), ('LOW_HEADROOM', 'warn', True)]"
# one minute for every route, three minutes before the minute the poll ran in (t0..t1)
expect_eq "every route: one evaluated_minute, three minutes before the poll's minute" \
    "$(j "len({x['evaluated_minute'] for x in d['routes'] if x['evaluated_minute']}) == 1 and $t0 // 60 * 60 - 180 <= __import__('datetime').datetime.fromisoformat(r['chat']['evaluated_minute'].replace('Z','+00:00')).timestamp() <= $t1 // 60 * 60 - 180")" \
    True

expect_eq "back: idle now, used 0, headroom 100 %, ok (not its busy minute)" \
    "$(j "(r['back']['frame_state'], r['back']['tpm']['used'], r['back']['tpm']['used_quality'], r['back']['headroom_pct'], r['back']['status'])")" \
    "('idle', 0, 'idle', 100, 'ok')"

expect_eq "team-a: used 305,000; group at least 305,000; at most 69.5 % free" \
    "$(j "(r['team-a']['tpm']['used'], r['team-a']['tpm']['group_used'], r['team-a']['tpm']['group_used_quality'], r['team-a']['headroom_pct'], r['team-a']['headroom_quality'])")" \
    "(305000, 305000, 'lower-bound', 69.5, 'upper-bound')"
expect_eq "team-a: PARTIAL_GROUP names team-b; SHARED_QUOTA does not say it uses 0" \
    "$(j "[(w['code'], w['code'] != 'PARTIAL_GROUP' or 'team-b on the same quota' in w['message'], 'use 0' not in w['message']) for w in r['team-a']['warnings']]")" \
    "[('SHARED_QUOTA', True, True), ('PARTIAL_GROUP', True, True)]"
expect_eq "team-b: unknown, CloudWatch failing (Forbidden), use null" \
    "$(j "(r['team-b']['frame_state'], r['team-b']['tpm']['used'], r['team-b']['status'], 'Forbidden' in (r['team-b']['warnings'][0]['message']))")" \
    "('unknown', None, 'unknown', True)"

expect_eq "burst: CloudWatch idle, 12 in flight (admission), R from max_tokens" \
    "$(j "(r['burst']['frame_state'], r['burst']['in_flight'], r['burst']['in_flight_source'], r['burst']['reservation_per_call'], r['burst']['reservation_source'])")" \
    "('idle', 12, 'admission', 4000, 'max-tokens')"
expect_eq "burst: held at least 48,000; used at least 48,000; at most 52 % free" \
    "$(j "(r['burst']['tpm']['held'], r['burst']['tpm']['held_quality'], r['burst']['tpm']['used'], r['burst']['tpm']['used_quality'], r['burst']['headroom_pct'], r['burst']['headroom_quality'])")" \
    "(48000, 'lower-bound', 48000, 'lower-bound', 52, 'upper-bound')"
expect_eq "tiered: check lists the reserved tier: a third of the calls, 100 of 300" \
    "$(j "(r['tiered']['tiers']['reserved_invocations'], r['tiered']['tiers']['reserved_share'], r['tiered']['tiers']['reserved_input_tokens'], r['tiered']['tiers']['reserved_output_tokens'])")" \
    "(100, 0.33, 300000, 20000)"
expect_eq "tiered: on-demand settled 800,000, R 3,500, held 35,000, used 835,000" \
    "$(j "(r['tiered']['tpm']['settled'], r['tiered']['reservation_per_call'], r['tiered']['tpm']['held'], r['tiered']['tpm']['used'], r['tiered']['in_flight'])")" \
    "(800000, 3500, 35000, 835000, 15)"
expect_eq "tiered: 16.5 % free on the on-demand quota (not over it), tpm binds, fits 47, warn" \
    "$(j "(r['tiered']['headroom_tpm'], r['tiered']['headroom_pct'], r['tiered']['binding_side'], r['tiered']['fits_more'], r['tiered']['status'])")" \
    "(165000, 16.5, 'tpm', 47, 'warn')"
expect_eq "tiered: reserved input 317,500 (68.25 % free, shown 68.3), output 20,000 (80 % free)" \
    "$(j "tuple((r['tiered']['sides'][k]['used'], r['tiered']['sides'][k]['headroom_pct']) for k in ('reserved-input', 'reserved-output'))")" \
    "((317500, 68.3), (20000, 80))"
expect_eq "tiered: concurrent 100 (Service Quotas): 15 in flight at least, at most 85 more (85 %)" \
    "$(j "(r['tiered']['quota']['concurrent'], tuple(r['tiered']['sides']['concurrent'][k] for k in ('used', 'used_quality', 'used_source', 'headroom', 'headroom_pct', 'headroom_quality', 'fits_more')))")" \
    "(100, (15, 'lower-bound', 'littles-law', 85, 85, 'upper-bound', 85))"
expect_eq "tiered: the reserved tier asked under its own dimension set" \
    "$(python3 -c 'import json,sys; L=[json.loads(x) for x in open(sys.argv[1]) if x.strip()]; print(any(q["MetricStat"]["Metric"]["Dimensions"] == [{"Name": "ModelId", "Value": "anthropic.claude-3-haiku-20240307-v1:0"}, {"Name": "ResolvedServiceTier", "Value": "reserved"}] for x in L if x["op"] == "GetMetricData" for q in x["body"]["MetricDataQueries"] if "MetricStat" in q))' "$TMP/v3.log")" True
# rates over a 2 s gap timed by arrival: within 3 % (a loaded machine's latency)
expect_eq "restart: 1,650,000 reserved a minute (not ~3.0e9), R 2,500 from the counters" \
    "$(j "(abs(r['restart']['tpm']['reserved_per_min'] - 1650000) <= 50000, abs(r['restart']['reservation_per_call'] - 2500) <= 5, r['restart']['reservation_source'])")" \
    "(True, True, 'admission')"
expect_eq "restart: CloudWatch idle, held 38 x 2,500 = 95,000 = used, 95.25 % free, fits ~762" \
    "$(j "(r['restart']['frame_state'], r['restart']['in_flight'], abs(r['restart']['tpm']['held'] - 95000) <= 200, r['restart']['tpm']['used_quality'], abs(r['restart']['headroom_pct'] - 95.25) <= 0.1, abs(r['restart']['fits_more'] - 762) <= 2)")" \
    "('idle', 38, True, 'known', True, True)"
expect_eq "burst: admission_at is set, evaluated_minute the group's" \
    "$(j "(r['burst']['admission_at'] is not None, r['burst']['evaluated_minute'] == r['chat']['evaluated_minute'])")" "(True, True)"
finish
