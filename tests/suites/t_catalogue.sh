#!/usr/bin/env bash
# The model catalogue as a prior (DESIGN.md "Coverage and the catalogue", version 4;
# DOMAIN.md "Burndown", prefixes, lifecycle), end to end: `bedtop check --format json`
# against the fake AWS (real HTTP, SigV4 verified), scenario
# tests/fake/scenario_catalogue.json, config tests/fake/catalogue.conf. Each minute
# (constants), worked by hand:
# terra: us.openai.gpt-5.6-terra on bedrock-runtime, 20,000 in, 3,000 out, no estimate:
#   the row openai.gpt-5.6-terra* = 10 (runtime) -> settled 20,000 + 3,000 x 10 = 50,000
#   (the table's dashed gpt-5-6-* rows never matched the real ID: 1x, 23,000)
# haiku3: Claude 3 Haiku, 10,000 in, 2,000 out: 5 ("every other Anthropic model of
#   version 4.7 and below") -> settled 10,000 + 2,000 x 5 = 20,000 (was 1x: 12,000);
#   ListFoundationModels lists it LEGACY (legacy 2026-03-01, public extended access
#   2026-06-01, end of life 2026-09-01): LEGACY_MODEL (warn) with those dates
# haiku55: anthropic.claude-haiku-5-5 (no published rate), 10,000 in, 2,000 out,
#   EstimatedTPMQuotaUsage 30,000 every minute: (30,000 - 10,000 - 0) / 2,000 = 10 in
#   each of the minutes check fetches (>= 5 with >= 1,000 output, spread 0): steady ->
#   10 measured, verified; settled 10,000 + 2,000 x 10 = 30,000 (was 1x: 12,000)
# haiku55-eu: eu.anthropic.claude-haiku-5-5, the same traffic, no estimate: no row, so
#   the Anthropic family floor 5, unverified -> settled 20,000 (was 1x: 12,000)
# sonnet5-in: in.anthropic.claude-sonnet-5 in ap-south-1, 100,000 in, 10,000 out: "in."
#   is a geographic prefix by pattern (ListInferenceProfiles lists the profile: confirmed)
#   -> cross-region, on "Cross-region model inference tokens per minute for Anthropic
#   Claude Sonnet 5" = 6,000,000 (L-S5CR), not the on-demand 3,000,000; burndown 10 ->
#   settled 100,000 + 10,000 x 10 = 200,000 (was on-demand, 3,000,000, 1x: 110,000)
# Then both catalogue calls refused (AccessDenied): a note on the routes, never a failure.
. "$BEDTOP_SRCDIR/tests/lib.sh"
SK='wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY'
CONF=$BEDTOP_SRCDIR/tests/fake/catalogue.conf
SCEN=$BEDTOP_SRCDIR/tests/fake/scenario_catalogue.json

run_check() { # run_check OUT: bedtop check --format json, AWS environment for the fake
    env -u AWS_PROFILE -u AWS_REGION -u AWS_DEFAULT_REGION -u AWS_SESSION_TOKEN \
        AWS_ACCESS_KEY_ID=AKIDEXAMPLE AWS_SECRET_ACCESS_KEY="$SK" \
        AWS_CONFIG_FILE=/nonexistent AWS_SHARED_CREDENTIALS_FILE=/nonexistent \
        AWS_EC2_METADATA_DISABLED=true BEDTOP_DATADIR="$BEDTOP_SRCDIR/data" \
        XDG_CACHE_HOME="$TMP/cache" AWS_ENDPOINT_URL="http://127.0.0.1:$PORT" \
        "$BEDTOP" check --format json --config "$CONF" >"$1.json" 2>"$1.err"
    echo $? >"$1.rc"
}
j() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); r={x['name']:x for x in d['routes']}; print($2)" "$1"; }
l() { python3 -c "import json,sys; L=[json.loads(x) for x in open(sys.argv[1]) if x.strip()]; print($2)" "$1"; }

check "fake AWS starts" start_fake cat --scenario "$SCEN"
run_check "$TMP/c"
J=$TMP/c.json
check "check printed JSON" python3 -c "import json,sys; json.load(open(sys.argv[1]))" "$J"
check "JSON validates against data/check.schema.json" \
    python3 "$BEDTOP_SRCDIR/tests/schema_check.py" "$BEDTOP_SRCDIR/data/check.schema.json" "$J"

expect_eq "terra: GPT-5.6 Terra on runtime settles input + output x 10 (table row, verified)" \
    "$(j "$J" "(r['terra']['burndown'], r['terra']['burndown_source'], r['terra']['burndown_verified'], r['terra']['tpm']['settled'], 'openai.gpt-5.6-terra* = 10 (runtime)' in r['terra']['burndown_row'])")" \
    "(10, 'table', True, 50000, True)"
expect_eq "haiku3: Claude 3 Haiku x 5 (table row, verified)" \
    "$(j "$J" "(r['haiku3']['burndown'], r['haiku3']['burndown_source'], r['haiku3']['burndown_verified'], r['haiku3']['tpm']['settled'])")" \
    "(5, 'table', True, 20000)"
expect_eq "haiku55: unlisted, AWS's estimate measures 10: 10 measured, verified, settled 30,000" \
    "$(j "$J" "(r['haiku55']['burndown'], r['haiku55']['burndown_source'], r['haiku55']['burndown_verified'], r['haiku55']['burndown_steady']['value'], r['haiku55']['burndown_steady']['minutes'] >= 5, r['haiku55']['tpm']['settled'])")" \
    "(10, 'measured', True, 10, True, 30000)"
expect_eq "haiku55: BURNDOWN_MISMATCH says the measurement won over the family floor 5" \
    "$(j "$J" "[('the measurement is used' in w['message'], 'anthropic.* = 5 (family floor, unverified)' in w['message']) for w in r['haiku55']['warnings'] if w['code']=='BURNDOWN_MISMATCH']")" \
    "[(True, True)]"
expect_eq "haiku55-eu: no estimate: the family floor 5, unverified, settled 20,000" \
    "$(j "$J" "(r['haiku55-eu']['burndown'], r['haiku55-eu']['burndown_source'], r['haiku55-eu']['burndown_verified'], r['haiku55-eu']['tpm']['settled'])")" \
    "(5, 'family', False, 20000)"
expect_eq "sonnet5-in: in. is cross-region, on the cross-Region 6,000,000 quota, burndown 10" \
    "$(j "$J" "(r['sonnet5-in']['inference'], r['sonnet5-in']['quota']['tpm'], r['sonnet5-in']['quota']['code'], r['sonnet5-in']['burndown'], r['sonnet5-in']['tpm']['settled'])")" \
    "('cross-region', 6000000, 'L-S5CR', 10, 200000)"
expect_eq "sonnet5-in: ListInferenceProfiles confirms the prefix; eu.haiku 5.5 is not listed" \
    "$(j "$J" "(r['sonnet5-in']['lifecycle']['profile'], r['haiku55-eu']['lifecycle']['profile'], r['haiku3']['lifecycle']['profile'])")" \
    "('confirmed', 'unlisted', None)"
expect_eq "haiku3: LEGACY from ListFoundationModels, with its dates" \
    "$(j "$J" "(r['haiku3']['lifecycle']['status'], r['haiku3']['lifecycle']['text'], r['terra']['lifecycle']['status'])")" \
    "('LEGACY', 'legacy since 2026-03-01, public extended access (higher prices) from 2026-06-01, end of life 2026-09-01', 'ACTIVE')"
expect_eq "haiku3: LEGACY_MODEL (warn) names the dates" \
    "$(j "$J" "[(w['severity'], 'ListFoundationModels lists' in w['message'], 'end of life 2026-09-01' in w['message']) for w in r['haiku3']['warnings'] if w['code']=='LEGACY_MODEL']")" \
    "[('warn', True, True)]"
expect_eq "ListInferenceProfiles and ListFoundationModels asked once per Region, signed for bedrock" \
    "$(l "$TMP/cat.log" "sorted((x['op'], x['region'], x['sig_ok'], x['service']) for x in L if x['op'] in ('ListInferenceProfiles', 'ListFoundationModels'))")" \
    "[('ListFoundationModels', 'ap-south-1', True, 'bedrock'), ('ListFoundationModels', 'eu-west-1', True, 'bedrock'), ('ListFoundationModels', 'us-east-1', True, 'bedrock'), ('ListInferenceProfiles', 'ap-south-1', True, 'bedrock'), ('ListInferenceProfiles', 'eu-west-1', True, 'bedrock'), ('ListInferenceProfiles', 'us-east-1', True, 'bedrock')]"

# Both refused: the figures stand, the routes say why, no collector failure.
python3 -c "import json,sys; d=json.load(open(sys.argv[1])); d['list_models_error']={'status':403,'code':'AccessDeniedException','message':'not allowed'}; d['list_profiles_error']={'status':403,'code':'AccessDeniedException','message':'not allowed'}; json.dump(d,open(sys.argv[2],'w'))" \
    "$SCEN" "$TMP/denied.json"
check "fake AWS (catalogue refused) starts" start_fake den --scenario "$TMP/denied.json"
run_check "$TMP/d"
D=$TMP/d.json
expect_eq "refused: the same exit code and figures" \
    "$(cat "$TMP/d.rc") $(j "$D" "[r[n]['tpm']['settled'] for n in ('terra', 'haiku3', 'haiku55', 'haiku55-eu', 'sonnet5-in')]")" \
    "$(cat "$TMP/c.rc") [50000, 20000, 30000, 20000, 200000]"
expect_eq "refused: lifecycle unknown, said why and which permission to allow" \
    "$(j "$D" "(r['haiku3']['lifecycle']['status'], 'AccessDeniedException' in r['haiku3']['lifecycle']['text'], 'allow bedrock:ListFoundationModels' in r['haiku3']['lifecycle']['text'])")" \
    "(None, True, True)"
expect_eq "refused: the prefix read by pattern, unconfirmed, still cross-region" \
    "$(j "$D" "(r['sonnet5-in']['lifecycle']['profile'], 'unconfirmed' in r['sonnet5-in']['lifecycle']['profile_text'], r['sonnet5-in']['inference'], r['sonnet5-in']['quota']['tpm'])")" \
    "('unknown', True, 'cross-region', 6000000)"
expect_eq "refused: no LEGACY_MODEL without a source for it" \
    "$(j "$D" "[w['code'] for w in r['haiku3']['warnings'] if w['code']=='LEGACY_MODEL']")" "[]"
# every AWS action check asked the fake is one `bedtop help policy` allows and check's
# --help lists (the collectors' own lists, issue 33)
expect_policy_covers check "bedrock cloudwatch servicequotas" "$TMP/cat.log" "$TMP/den.log"
hits=$(cat "$TMP"/*.json "$TMP"/*.err "$TMP"/*.log 2>/dev/null | grep -c -e "$SK" -e 'Signature=')
expect_eq "no secret key or signature in any output" "$hits" 0
finish
