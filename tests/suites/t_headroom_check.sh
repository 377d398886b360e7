#!/usr/bin/env bash
# Headroom contract version 2 end to end: `bedtop check --format json` against the fake
# AWS endpoint (real HTTP, SigV4 verified) with two routes on one quota, an idle route
# and a quota of 0. Scenario tests/fake/scenario_quota_groups.json, config
# tests/fake/quota_groups.conf. Numbers by hand (docs/headroom.md):
#
# team-a: anthropic.claude-3-haiku (burndown 5: every Anthropic model of 4.7 and below),
#   max_tokens 1,000
#   Invocations 120, Input 240,000, CacheRead 60,000, Output 36,000, latency avg 2,500 ms
#   settled  = 240,000 + 36,000 x 5                  = 420,000 (estimate 420,000 agrees:
#              burndown measured (420,000 - 240,000) / 36,000 = 5)
#   R        = (240,000 + 60,000) / 120 + 1,000      = 3,500
#   in flight = 120 / 60 x 2.5 s                     = 5 (Little's law)
#   held     = 5 x 3,500                             = 17,500
#   used     = 420,000 + 17,500                      = 437,500
#   reserved_per_min = 120 x 3,500                   = 420,000 (secondary)
# team-b: an application inference profile with quota_code L-HAIKUOD: the same quota
#   Invocations 30, Input 90,000, Output 15,000, latency avg 3,000 ms, max_tokens 2,000
#   settled 105,000; R = 3,000 + 2,000 = 5,000; in flight 30 / 60 x 3 = 1.5;
#   held 7,500; used 112,500; reserved_per_min 150,000
# the quota L-HAIKUOD, 1,000,000 applied: used by the group 437,500 + 112,500 = 550,000
#   headroom = 450,000 = 45 % for both routes
#   fits: team-a floor(450,000 / 3,500) = 128; team-b floor(450,000 / 5,000) = 90
# idle: amazon.nova-lite, quota 500,000, no datapoints although the poll succeeded:
#   used 0, headroom 500,000 = 100 %, status ok, not stale
# zero: anthropic.claude-opus-4-5, applied quota 0, 30 throttles a minute:
#   NO_QUOTA crit, headroom_pct null (no divisor), fits 0; the whole check is crit (exit 2)
. "$BEDTOP_SRCDIR/tests/lib.sh"
SK='wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY'

check "fake AWS starts" start_fake groups --scenario "$BEDTOP_SRCDIR/tests/fake/scenario_quota_groups.json"
env -u AWS_PROFILE -u AWS_ENDPOINT_URL -u AWS_REGION -u AWS_DEFAULT_REGION -u AWS_SESSION_TOKEN \
    AWS_ACCESS_KEY_ID=AKIDEXAMPLE AWS_SECRET_ACCESS_KEY="$SK" \
    AWS_CONFIG_FILE=/nonexistent AWS_SHARED_CREDENTIALS_FILE=/nonexistent \
    AWS_EC2_METADATA_DISABLED=true BEDTOP_DATADIR="$BEDTOP_SRCDIR/data" \
    "$BEDTOP" check --format json --config "$BEDTOP_SRCDIR/tests/fake/quota_groups.conf" \
    --endpoint-url "http://127.0.0.1:$PORT" >"$TMP/out.json" 2>"$TMP/out.err"
rc=$?
j() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); r={x['name']:x for x in d['routes']}; print($1)" "$TMP/out.json"; }

expect_eq "exit 2: crit (the zero quota)" "$rc" 2
check "JSON validates against data/check.schema.json" \
    python3 "$BEDTOP_SRCDIR/tests/schema_check.py" "$BEDTOP_SRCDIR/data/check.schema.json" "$TMP/out.json"
check "no NaN or Infinity anywhere in the JSON" bash -c "! grep -qiE 'nan|infinity' '$TMP/out.json'"
expect_eq "every request's signature verified by the fake" \
    "$(python3 -c 'import json,sys; L=[json.loads(x) for x in open(sys.argv[1]) if x.strip()]; print(len(L) > 0 and all(x["sig_ok"] for x in L))' "$TMP/groups.log")" True

expect_eq "team-a: settled, estimated, held, used, reserved per minute" \
    "$(j "tuple(r['team-a']['tpm'][k] for k in ('settled', 'estimated', 'held', 'used', 'reserved_per_min'))")" \
    "(420000, 420000, 17500, 437500, 420000)"
expect_eq "team-a: R 3,500 (cache reads in), 5 in flight by Little's law" \
    "$(j "(r['team-a']['reservation_per_call'], r['team-a']['in_flight'], r['team-a']['in_flight_source'])")" \
    "(3500, 5, 'littles-law')"
expect_eq "team-a: burndown 5 (table, verified), measured 5" \
    "$(j "(r['team-a']['burndown'], r['team-a']['burndown_source'], r['team-a']['burndown_verified'], r['team-a']['burndown_measured'])")" "(5, 'table', True, 5)"
expect_eq "team-b: settled, held, used, reserved per minute" \
    "$(j "tuple(r['team-b']['tpm'][k] for k in ('settled', 'held', 'used', 'reserved_per_min'))")" \
    "(105000, 7500, 112500, 150000)"
expect_eq "team-b: R 5,000, 1.5 in flight" \
    "$(j "(r['team-b']['reservation_per_call'], r['team-b']['in_flight'])")" "(5000, 1.5)"
expect_eq "both on quota L-HAIKUOD (1,000,000 applied), each naming the other" \
    "$(j "[(n, r[n]['quota']['tpm'], r[n]['quota']['code'], r[n]['quota']['source'], r[n]['quota']['shared_with']) for n in ('team-a', 'team-b')]")" \
    "[('team-a', 1000000, 'L-HAIKUOD', 'service-quotas', ['team-b']), ('team-b', 1000000, 'L-HAIKUOD', 'service-quotas', ['team-a'])]"
expect_eq "group used 550,000: headroom 450,000 = 45 % for both" \
    "$(j "[(r[n]['tpm']['group_used'], r[n]['headroom_tpm'], r[n]['headroom_pct']) for n in ('team-a', 'team-b')]")" \
    "[(550000, 450000, 45), (550000, 450000, 45)]"
expect_eq "fits more in flight: team-a 128, team-b 90" \
    "$(j "(r['team-a']['fits_more'], r['team-b']['fits_more'])")" "(128, 90)"
expect_eq "SHARED_QUOTA (info) on both, nothing else; status ok" \
    "$(j "[(n, r[n]['status'], [(w['code'], w['severity']) for w in r[n]['warnings']]) for n in ('team-a', 'team-b')]")" \
    "[('team-a', 'ok', [('SHARED_QUOTA', 'info')]), ('team-b', 'ok', [('SHARED_QUOTA', 'info')])]"
check "SHARED_QUOTA says callers outside the config are invisible" grep -q "outside the config on it are invisible" "$TMP/out.json"

expect_eq "idle: used 0, headroom the whole 500,000 (100 %), ok, not stale" \
    "$(j "(r['idle']['idle'], r['idle']['tpm']['used'], r['idle']['headroom_tpm'], r['idle']['headroom_pct'], r['idle']['status'], r['idle']['stale'], r['idle']['warnings'])")" \
    "(True, 0, 500000, 100, 'ok', False, [])"

expect_eq "zero: NO_QUOTA crit, quota 0, headroom_pct null, fits 0" \
    "$(j "(r['zero']['quota']['tpm'], r['zero']['headroom_pct'], r['zero']['fits_more'], r['zero']['status'], [w['code'] for w in r['zero']['warnings']])")" \
    "(0, None, 0, 'crit', ['NO_QUOTA'])"
expect_eq "overall status crit" "$(j "d['status']")" crit
finish
