#!/usr/bin/env bash
# Quotas and routes as AWS names them today (issues 12 and 20), end to end: the real binary,
# `bedtop check --format json` against the fake AWS endpoint (SigV4 verified on every
# request, GetInferenceProfile included). Config tests/fake/quotas.conf, scenario
# tests/fake/scenario_quotas.json. Expected values by hand:
#
# cr:     us. Sonnet 4.5 -> "Cross-Region InvokeModel tokens per minute for Anthropic
#         Claude Sonnet 4.5 V1" (current name) = 2,000,000, L-CR45, service-quotas; not the
#         1M-context row beside it (500,000), not on-demand (200,000), not global (4,000,000).
#         settled = 300,000 + 50,000 x 5 = 550,000
# app:    application profile -> GetInferenceProfile: Sonnet 4.5 in us-east-1, us-east-2,
#         us-west-2 -> base model anthropic.claude-sonnet-4-5-20250929-v1:0, cross-region,
#         burndown 5 (table: anthropic.claude-sonnet-4*), the same quota L-CR45 as cr.
#         settled = 100,000 + 10,000 x 5 = 150,000 (burndown 1 would give 110,000)
# denied: GetInferenceProfile answers 403 AccessDeniedException: no quota, reason shown.
# pinned: base_model = anthropic.claude-3-haiku in the config: no GetInferenceProfile;
#         "On-demand model inference tokens per minute for Anthropic Claude 3 Haiku" (older
#         name) = 400,000; burndown 5 (every Anthropic model of 4.7 and below);
#         settled = 5,000 + 700 x 5 = 8,500
# agents: mantle -> "Bedrock Mantle input/output tokens per minute for Anthropic Claude
#         Opus 4.7" = 20,000,000 / 4,000,000 from Service Quotas (no config override);
#         project = default set, token totals still read by Model: output used 30,000
# long:   context = 1m on the cr model -> the 1M-context row beside the standard one:
#         L-CR45M = 500,000, its name shown
# long-haiku: context = 1m, no 1M-context quota listed for Claude 3 Haiku: unknown, said so
# legacy: only "On-demand InvokeModel requests per minute for Amazon Nova Lite" = 2,000:
#         TPM unknown (QUOTA_UNKNOWN); the RPM row is the route's rpm side (contract v3:
#         RPM binds where Service Quotas lists it), quota.rpm 2,000.
. "$BEDTOP_SRCDIR/tests/lib.sh"
SK='wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY'
CONF=$BEDTOP_SRCDIR/tests/fake/quotas.conf
SCEN=$BEDTOP_SRCDIR/tests/fake/scenario_quotas.json

run_check() { # run_check OUT [args...]: bedtop check --format json, AWS environment for the fake
    local out=$1; shift
    env -u AWS_PROFILE -u AWS_REGION -u AWS_DEFAULT_REGION -u AWS_SESSION_TOKEN \
        AWS_ACCESS_KEY_ID=AKIDEXAMPLE AWS_SECRET_ACCESS_KEY="$SK" \
        AWS_CONFIG_FILE=/nonexistent AWS_SHARED_CREDENTIALS_FILE=/nonexistent \
        AWS_EC2_METADATA_DISABLED=true BEDTOP_DATADIR="$BEDTOP_SRCDIR/data" \
        XDG_CACHE_HOME="$TMP/cache-$(basename "$out")" \
        "$@" "$BEDTOP" check --format json --config "$CONF" >"$out.json" 2>"$out.err"
    echo $? >"$out.rc"
}
j() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); r={x['name']:x for x in d['routes']}; print($2)" "$1"; }
# the Bedrock control plane's GETs (no body to check against a CloudWatch or Service Quotas model)
l() { python3 -c "import json,sys; BEDROCK=('GetInferenceProfile', 'ListInferenceProfiles', 'ListFoundationModels'); L=[json.loads(x) for x in open(sys.argv[1]) if x.strip()]; print($2)" "$1"; }

check "fake AWS starts" start_fake q --scenario "$SCEN"
run_check "$TMP/q" env AWS_ENDPOINT_URL=http://127.0.0.1:$PORT
J=$TMP/q.json
check "check printed JSON" python3 -c "import json,sys; json.load(open(sys.argv[1]))" "$J"
check "JSON validates against the schema" python3 "$BEDTOP_SRCDIR/tests/schema_check.py" \
    "$BEDTOP_SRCDIR/data/check.schema.json" "$J"

expect_eq "cr: the current cross-Region name, from the account" \
    "$(j "$J" "(r['cr']['quota']['tpm'], r['cr']['quota']['source'], r['cr']['quota']['code'], r['cr']['quota']['name'])")" \
    "(2000000, 'service-quotas', 'L-CR45', 'Cross-Region InvokeModel tokens per minute for Anthropic Claude Sonnet 4.5 V1')"
expect_eq "cr: settled 550,000 (burndown 5)" "$(j "$J" "(r['cr']['burndown'], r['cr']['tpm']['settled'])")" "(5, 550000)"

expect_eq "app: resolved through GetInferenceProfile (base model, cross-region)" \
    "$(j "$J" "(r['app']['base_model'], r['app']['inference'])")" \
    "('anthropic.claude-sonnet-4-5-20250929-v1:0', 'cross-region')"
expect_eq "app: burndown 5 from the resolved Claude model; settled 150,000" \
    "$(j "$J" "(r['app']['burndown'], r['app']['tpm']['settled'])")" "(5, 150000)"
expect_eq "app: the same quota as cr" \
    "$(j "$J" "(r['app']['quota']['tpm'], r['app']['quota']['source'], r['app']['quota']['code'])")" \
    "(2000000, 'service-quotas', 'L-CR45')"

expect_eq "denied: quota unknown, source unknown" \
    "$(j "$J" "(r['denied']['quota']['tpm'], r['denied']['quota']['source'], r['denied']['base_model'])")" \
    "(None, 'unknown', None)"
expect_eq "denied: the reason is shown (quota and QUOTA_UNKNOWN warning)" \
    "$(j "$J" "'GetInferenceProfile failed' in r['denied']['quota']['unknown_reason'] and 'AccessDenied' in r['denied']['quota']['unknown_reason'] and any(w['code']=='QUOTA_UNKNOWN' and 'GetInferenceProfile failed' in w['message'] for w in r['denied']['warnings'])")" \
    True

expect_eq "pinned: base_model from the config, older name family, burndown 5" \
    "$(j "$J" "(r['pinned']['base_model'], r['pinned']['quota']['tpm'], r['pinned']['quota']['code'], r['pinned']['burndown'], r['pinned']['tpm']['settled'])")" \
    "('anthropic.claude-3-haiku-20240307-v1:0', 400000, 'L-H3OD', 5, 8500)"

expect_eq "long: context = 1m takes the 1M-context quota, name shown" \
    "$(j "$J" "(r['long']['quota']['tpm'], r['long']['quota']['code'], r['long']['quota']['name'].endswith('1M Context Length'))")" \
    "(500000, 'L-CR45M', True)"
expect_eq "long-haiku: no 1M-context quota listed: unknown, and why" \
    "$(j "$J" "(r['long-haiku']['quota']['tpm'], 'no 1m-context tokens-per-minute quota' in r['long-haiku']['quota']['unknown_reason'])")" \
    "(None, True)"
expect_eq "agents: mantle quotas from Service Quotas" \
    "$(j "$J" "(r['agents']['quota']['input_tpm'], r['agents']['quota']['output_tpm'], r['agents']['quota']['source'], r['agents']['mantle']['input']['quota'], r['agents']['mantle']['output']['quota'])")" \
    "(20000000, 4000000, 'service-quotas', 20000000, 4000000)"
expect_eq "agents: project set, token data kept (by Model)" \
    "$(j "$J" "(r['agents']['project'], r['agents']['mantle']['output']['used'])")" "('default', 30000)"

expect_eq "legacy: only an RPM row: no TPM quota, the RPM quota 2,000 is its rpm side" \
    "$(j "$J" "(r['legacy']['quota']['tpm'], r['legacy']['quota']['source'], r['legacy']['quota']['rpm'], r['legacy']['rpm']['quota'], r['legacy']['headroom_tpm'])")" \
    "(None, 'unknown', 2000, 2000, None)"
expect_eq "legacy: QUOTA_UNKNOWN says only an RPM quota is listed" \
    "$(j "$J" "[w['code'] for w in r['legacy']['warnings'] if w['code']=='QUOTA_UNKNOWN' and 'requests-per-minute quota for this model (L-NLRPM = 2000), no tokens-per-minute quota' in w['message']]")" "['QUOTA_UNKNOWN']"
expect_eq "only legacy lists an RPM quota, so only it has an rpm side" "$(j "$J" "[x['name'] for x in d['routes'] if x['rpm'] is not None]")" "['legacy']"

L=$TMP/q.log
expect_eq "GetInferenceProfile: one per profile route without base_model, GET, SigV4 service bedrock" \
    "$(l "$L" "sorted((x['path'].rsplit('%2F',1)[1], x['sig_ok'], x['service']) for x in L if x['op']=='GetInferenceProfile')")" \
    "[('a1b2c3d4e5f6', True, 'bedrock'), ('deadbeef0000', True, 'bedrock')]"
expect_eq "GetInferenceProfile path: the URL-encoded ARN" \
    "$(l "$L" "[x['path'] for x in L if x['op']=='GetInferenceProfile' and 'a1b2' in x['path']][0]")" \
    "/inference-profiles/arn%3Aaws%3Abedrock%3Aus-east-1%3A123456789012%3Aapplication-inference-profile%2Fa1b2c3d4e5f6"
expect_eq "every request signed correctly and fits the service model" \
    "$(l "$L" "all(x['sig_ok'] for x in L) and all(x['model_ok'] for x in L if x['op'] not in BEDROCK)")" True
# agents' series exist per Model only here (ListMetrics AWS/BedrockMantle says so): asked
# exactly so, never Model+Project
expect_eq "mantle queries ask the dimension set ListMetrics lists (Model alone here)" \
    "$(l "$L" "sum(1 for x in L if x['op']=='GetMetricData' for q in x['body']['MetricDataQueries'] if q.get('MetricStat') and q['MetricStat']['Metric']['Namespace']=='AWS/BedrockMantle' and len(q['MetricStat']['Metric']['Dimensions'])>1)")" 0

# The AWS CLI's endpoint rules: AWS_ENDPOINT_URL_BEDROCK wins over AWS_ENDPOINT_URL for
# the control plane only.
others=$(l "$L" "sum(x['op'] not in BEDROCK for x in L)")
check "second fake starts" start_fake b --scenario "$SCEN"
PORT_B=$PORT
run_check "$TMP/ep" env AWS_ENDPOINT_URL=http://127.0.0.1:$PORT_B AWS_ENDPOINT_URL_BEDROCK=http://127.0.0.1:$(awk '/^PORT /{print $2}' "$TMP/q.out")
# first fake (AWS_ENDPOINT_URL_BEDROCK): 2 more GetInferenceProfile (and the catalogue's
# ListInferenceProfiles / ListFoundationModels) and nothing else; second fake
# (AWS_ENDPOINT_URL): every CloudWatch and Service Quotas call, no control-plane call
expect_eq "AWS_ENDPOINT_URL_BEDROCK: the control plane goes there, nothing else" \
    "$(l "$L" "(sum(x['op']=='GetInferenceProfile' for x in L), sum(x['op'] not in BEDROCK for x in L) == $others)") $(l "$TMP/b.log" "(sum(x['op'] in BEDROCK for x in L), sum(x['op'] in ('GetMetricData', 'ListServiceQuotas') for x in L) > 1)")" \
    "(4, True) (0, True)"
expect_eq "the profile resolved through the Bedrock endpoint" "$(j "$TMP/ep.json" "r['app']['base_model']")" \
    anthropic.claude-sonnet-4-5-20250929-v1:0
# The answer is kept for hours between runs: a second check asks only for the
# profile that failed.
cp -r "$TMP/cache-q" "$TMP/cache-again"
n0=$(l "$L" "len(L)")
PORT=$(awk '/^PORT /{print $2}' "$TMP/q.out")
run_check "$TMP/again" env AWS_ENDPOINT_URL=http://127.0.0.1:$PORT
expect_eq "cache: a second run asks GetInferenceProfile only for the failed profile" \
    "$(l "$L" "[x['path'].rsplit('%2F',1)[1] for x in L[$n0:] if x['op']=='GetInferenceProfile']")" "['deadbeef0000']"
expect_eq "cache: the profile still resolved, burndown 5" \
    "$(j "$TMP/again.json" "(r['app']['base_model'], r['app']['inference'], r['app']['burndown'])")" \
    "('anthropic.claude-sonnet-4-5-20250929-v1:0', 'cross-region', 5)"
expect_eq "cache file: 0600, the resolved profile only" \
    "$(stat -c %a "$TMP/cache-again/bedtop/inference-profiles.json") $(python3 -c "import json,sys; print(sorted(k.rsplit('/',1)[1] for k in json.load(open(sys.argv[1]))))" "$TMP/cache-again/bedtop/inference-profiles.json")" \
    "600 ['a1b2c3d4e5f6']"

# ---- Issue 20: AWS as accounts list it (tests/fake/accounts.conf, scenario_accounts.json).
# Worked by hand from the scenario's per-minute constants:
# opus48:  us. Claude Opus 4.8, burndown 15 (data/burndown.conf, AWS 2026-12-01):
#          settled = 180,000 + 24,000 x 15 = 540,000 (5x would read 300,000);
#          in flight = 60 / 60 x 3 s = 3, R = 180,000 / 60 + 1,000 = 4,000, held 12,000;
#          quota L-UMOP48 = 4,000,000 by its UsageMetric (ModelId us.anthropic.claude-opus-4-8)
#          although its name follows no rule, and not L-NMOP48 (3,000,000), which the name
#          rules would have picked: headroom 4,000,000 - 552,000 = 3,448,000
# sonnet5: Claude Sonnet 5, burndown 10: settled = 20,000 + 3,000 x 10 = 50,000;
#          "On-demand ... for Claude Sonnet 5" (vendor dropped) = 1,000,000, by name
# luna:    mantle GPT-5.6 Luna, listed only per Model+Project (alpha, beta): input
#          300,000 + 200,000 = 500,000, output 40,000 + 10,000 = 50,000 (by Model alone
#          CloudWatch would answer nothing: idle); "[bedrock-mantle endpoint]" quotas
#          30,000,000 / 6,000,000; no burndown (null: mantle has none; GPT-5.6's 10 is
#          runtime-only)
# ghost:   mantle Opus 4.7 with no series listed: unknown (STALE, says why), not idle
# fable:   mantle Fable 5.1, no quota listed: NO_PUBLISHED_QUOTA (info), not QUOTA_UNKNOWN
# reserved: a provisioned-model ARN: inference provisioned, PROVISIONED (info), no quota
#          group, no QUOTA_UNKNOWN; settled 5,000 + 1,000 = 6,000
# fast:    "+latency-optimized": its own quota L-LO35 = 500,000, not the standard 2,000,000;
#          settled 20,000 + 4,000 x 5 = 40,000 (Claude 3.5 Haiku: burndown 5)
SCEN=$BEDTOP_SRCDIR/tests/fake/scenario_accounts.json
check "fake AWS (accounts) starts" start_fake acc --scenario "$SCEN"
CONF=$BEDTOP_SRCDIR/tests/fake/accounts.conf
run_check "$TMP/acc" env AWS_ENDPOINT_URL=http://127.0.0.1:$PORT
A=$TMP/acc.json
check "accounts: JSON validates against the schema" python3 "$BEDTOP_SRCDIR/tests/schema_check.py" \
    "$BEDTOP_SRCDIR/data/check.schema.json" "$A"
expect_eq "opus48: 15x, settled 540,000, held 12,000" \
    "$(j "$A" "(r['opus48']['burndown'], r['opus48']['tpm']['settled'], r['opus48']['tpm']['held'])")" "(15, 540000, 12000)"
expect_eq "opus48: the quota its UsageMetric names, matched_by usage-metric, headroom 3,448,000" \
    "$(j "$A" "(r['opus48']['quota']['tpm'], r['opus48']['quota']['code'], r['opus48']['quota']['matched_by'], r['opus48']['headroom_tpm'])")" \
    "(4000000, 'L-UMOP48', 'usage-metric', 3448000)"
expect_eq "sonnet5: 10x, settled 50,000, the vendor-less name, matched_by name" \
    "$(j "$A" "(r['sonnet5']['burndown'], r['sonnet5']['tpm']['settled'], r['sonnet5']['quota']['tpm'], r['sonnet5']['quota']['matched_by'])")" \
    "(10, 50000, 1000000, 'name')"
expect_eq "luna: summed over both projects (input 500,000, output 50,000), bracket-named quotas" \
    "$(j "$A" "(r['luna']['tpm']['settled'], r['luna']['mantle']['output']['used'], r['luna']['quota']['input_tpm'], r['luna']['quota']['output_tpm'], r['luna']['quota']['matched_by'], r['luna']['burndown'])")" \
    "(500000, 50000, 30000000, 6000000, 'name', None)"
expect_eq "luna: asked as listed, Model+Project per project, summed by SUM()" \
    "$(l "$TMP/acc.log" "sorted(set(tuple(sorted(d['Value'] for d in q['MetricStat']['Metric']['Dimensions'])) for x in L if x['op']=='GetMetricData' for q in x['body']['MetricDataQueries'] if q.get('MetricStat') and q['MetricStat']['Metric']['Namespace']=='AWS/BedrockMantle' and any(d['Value']=='openai.gpt-5.6-luna' for d in q['MetricStat']['Metric']['Dimensions']))) + [any(q.get('Expression','').startswith('SUM([') for x in L if x['op']=='GetMetricData' for q in x['body']['MetricDataQueries'])]")" \
    "[('alpha', 'openai.gpt-5.6-luna'), ('beta', 'openai.gpt-5.6-luna'), True]"
expect_eq "ghost: no series listed: unknown, STALE says so, never idle" \
    "$(j "$A" "(r['ghost']['status'], r['ghost']['tpm']['settled'], any('ListMetrics lists no AWS/BedrockMantle series' in w['message'] for w in r['ghost']['warnings']))")" \
    "('unknown', None, True)"
expect_eq "fable: no published quota is information, not QUOTA_UNKNOWN" \
    "$(j "$A" "(r['fable']['status'], [w['code'] + ':' + w['severity'] for w in r['fable']['warnings']], 'AWS Support' in r['fable']['warnings'][0]['action'])")" \
    "('ok', ['NO_PUBLISHED_QUOTA:info'], True)"
expect_eq "reserved: provisioned, its own status, no quota group, no QUOTA_UNKNOWN" \
    "$(j "$A" "(r['reserved']['inference'], r['reserved']['status'], r['reserved']['quota']['tpm'], r['reserved']['quota']['shared_with'], [w['code'] for w in r['reserved']['warnings']], r['reserved']['tpm']['settled'])")" \
    "('provisioned', 'ok', None, [], ['PROVISIONED'], 6000)"
expect_eq "fast: latency-optimized, its own quota, settled 40,000" \
    "$(j "$A" "(r['fast']['inference'], r['fast']['quota']['tpm'], r['fast']['quota']['code'], r['fast']['tpm']['settled'])")" \
    "('latency-optimized', 500000, 'L-LO35', 40000)"

# No config: discovered from ListMetrics in both namespaces. Worked by hand:
# profile-ap0000000001: the profile's ARN (10,000 in, 1,000 out) and its bare ID (20,000,
#          2,000) are one route: settled 30,000 + 3,000 x 5 = 45,000 (Claude 3 Haiku, 5x via
#          GetInferenceProfile), quota L-H3OD 400,000; no route for the bare ID
# mx.nova-pro: "mx." is a prefix by pattern (ListInferenceProfiles confirms it):
#          cross-region; its LegacyModelInvocations series: LEGACY_MODEL
printf '[bedtop]\nregion = us-east-1\n' >"$TMP/empty.conf"
CONF=$TMP/empty.conf
run_check "$TMP/disc" env AWS_ENDPOINT_URL=http://127.0.0.1:$PORT
D=$TMP/disc.json
expect_eq "discovery: both namespaces, provisioned and latency-optimized, a profile once" \
    "$(j "$D" "sorted((x['name'], x['endpoint'], x['inference']) for x in d['routes'])")" \
    "[('claude-3-5-haiku-latency', 'runtime', 'latency-optimized'), ('claude-sonnet-5', 'runtime', 'on-demand'), ('mantle.claude-fable-5-1', 'mantle', 'on-demand'), ('mantle.gpt-5.6-luna', 'mantle', 'on-demand'), ('mx.nova-pro', 'runtime', 'cross-region'), ('profile-ap0000000001', 'runtime', 'on-demand'), ('provisioned-pt0123456789', 'runtime', 'provisioned'), ('us.claude-opus-4-8', 'runtime', 'cross-region')]"
expect_eq "discovery: the profile's ARN and bare ID summed (45,000), its base model's quota" \
    "$(j "$D" "(r['profile-ap0000000001']['tpm']['settled'], r['profile-ap0000000001']['quota']['tpm'])")" "(45000, 400000)"
expect_eq "discovery: the discovered mantle route summed over its projects (500,000)" \
    "$(j "$D" "r['mantle.gpt-5.6-luna']['tpm']['settled']")" 500000
expect_eq "discovery: LEGACY_MODEL from LegacyModelInvocations" \
    "$(j "$D" "[w['severity'] for w in r['mx.nova-pro']['warnings'] if w['code']=='LEGACY_MODEL']")" "['info']"
# discovery no longer asks ListInferenceProfiles (prefixes by pattern); the catalogue
# asks it once a run per Region: the accounts run and the discovery run
expect_eq "ListInferenceProfiles asked once a run (two runs), signed for bedrock" \
    "$(l "$TMP/acc.log" "[(x['sig_ok'], x['service']) for x in L if x['op']=='ListInferenceProfiles']")" "[(True, 'bedrock'), (True, 'bedrock')]"
# ListInferenceProfiles refused (AccessDenied): prefixes are recognised by pattern, so
# "mx." is still cross-region (version 3's fixed list made it on-demand at burndown 1,
# on the wrong quota); discovery goes on
python3 -c "import json,sys; d=json.load(open(sys.argv[1])); d['list_profiles_error']={'status':403,'code':'AccessDeniedException','message':'not allowed'}; json.dump(d,open(sys.argv[2],'w'))" \
    "$SCEN" "$TMP/denied.json"
check "fake AWS (ListInferenceProfiles refused) starts" start_fake den --scenario "$TMP/denied.json"
run_check "$TMP/den" env AWS_ENDPOINT_URL=http://127.0.0.1:$PORT
expect_eq "ListInferenceProfiles refused: mx. still a prefix by pattern" \
    "$(j "$TMP/den.json" "([x['inference'] for x in d['routes'] if x['model_id']=='mx.amazon.nova-pro-v1:0'], r['us.claude-opus-4-8']['inference'], len(d['routes']))")" \
    "(['cross-region'], 'cross-region', 8)"
hits=$(cat "$TMP"/*.json "$TMP"/*.err "$TMP"/*.log 2>/dev/null | grep -c -e "$SK" -e 'Signature=')
expect_eq "no secret key or signature in any output" "$hits" 0
finish
