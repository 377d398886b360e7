#!/usr/bin/env bash
# The fake AWS endpoint itself: its SigV4 verifier agrees with the AWS signing
# suite, it accepts a request signed by curl's own signer and rejects bad ones,
# and it serves the scenario's numbers (expected values computed by hand below).
. "$BEDTOP_SRCDIR/tests/lib.sh"
FAKE=$BEDTOP_SRCDIR/tests/fake/fake_aws.py
AK=AKIDEXAMPLE
SK='wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY'
CW_T=GraniteServiceVersion20100801

expect_rc "verifier passes the AWS SigV4 suite" 0 python3 "$FAKE" --selftest "$SHARED/testdata/sigv4/v4"

# cw USER TARGET BODY [extra curl args]: prints "<status> <body>"
cw() {
    local user=$1 target=$2 body=$3; shift 3
    curl -s -o "$TMP/body" -w '%{http_code}' --aws-sigv4 "aws:amz:us-east-1:monitoring" \
        --user "$user" -H 'Content-Type: application/x-amz-json-1.0' \
        -H "X-Amz-Target: $CW_T.$target" "$@" -d "$body" "http://127.0.0.1:$PORT/"
    printf ' '; cat "$TMP/body"
}
jget() { python3 -c 'import json,sys; d=json.loads(sys.stdin.read().split(" ",1)[1]); print(eval(sys.argv[1]))' "$1"; }

check "fake starts and prints PORT" start_fake basic --scenario "$BEDTOP_SRCDIR/tests/fake/scenario_basic.json"

out=$(cw "$AK:$SK" ListMetrics '{"Namespace":"AWS/Bedrock","MetricName":"Invocations"}')
expect_eq "good signature accepted" "${out%% *}" 200
expect_eq "ListMetrics filters by name" "$(echo "$out" | jget 'len(d["Metrics"])')" 1
out=$(cw "$AK:wrongsecret" ListMetrics '{}')
expect_eq "bad signature rejected with 403" "${out%% *}" 403
expect_eq "bad signature error code" "$(echo "$out" | jget 'd["__type"]')" InvalidSignatureException
out=$(cw "AKIDUNKNOWN:$SK" ListMetrics '{}')
expect_eq "unknown access key" "$(echo "$out" | jget 'd["__type"]')" UnrecognizedClientException
code=$(curl -s -o /dev/null -w '%{http_code}' -H 'Content-Type: application/x-amz-json-1.0' \
    -H "X-Amz-Target: $CW_T.ListMetrics" -d '{}' "http://127.0.0.1:$PORT/")
expect_eq "unsigned request rejected" "$code" 403
out=$(curl -s -o "$TMP/body" -w '%{http_code}' --aws-sigv4 "aws:amz:us-east-1:servicequotas" \
    --user "$AK:$SK" -H 'Content-Type: application/x-amz-json-1.0' \
    -H "X-Amz-Target: $CW_T.ListMetrics" -d '{}' "http://127.0.0.1:$PORT/")
expect_eq "credential scoped to the wrong service rejected" "$out" 403

# InputTokenCount is linear: start 300000, step 1000 per minute from
# start = end - 86400 + 60, end = last complete minute = now - 60 = 1795946340;
# so minute 1795946340 is index 1439 -> 1739000, one minute earlier 1738000 ...
# OutputTokenCount values [50000, 52000, null, 55000] end at 1795946340.
M1='{"Namespace":"AWS/Bedrock","MetricName":"InputTokenCount","Dimensions":[{"Name":"ModelId","Value":"us.anthropic.claude-sonnet-4-5-20250929-v1:0"}]}'
M2='{"Namespace":"AWS/Bedrock","MetricName":"OutputTokenCount","Dimensions":[{"Name":"ModelId","Value":"us.anthropic.claude-sonnet-4-5-20250929-v1:0"}]}'
Q="{\"MetricDataQueries\":[{\"Id\":\"a\",\"MetricStat\":{\"Metric\":$M1,\"Period\":60,\"Stat\":\"Sum\"}},{\"Id\":\"b\",\"MetricStat\":{\"Metric\":$M2,\"Period\":60,\"Stat\":\"Sum\"}}],\"StartTime\":1795946160,\"EndTime\":1795946400}"
out=$(cw "$AK:$SK" GetMetricData "$Q")
expect_eq "GetMetricData values newest first" \
    "$(echo "$out" | jget '[int(v) for v in d["MetricDataResults"][0]["Values"]]')" \
    "[1739000, 1738000, 1737000, 1736000]"
expect_eq "GetMetricData timestamps in range" \
    "$(echo "$out" | jget '[int(v) for v in d["MetricDataResults"][0]["Timestamps"]]')" \
    "[1795946340, 1795946280, 1795946220, 1795946160]"
expect_eq "GetMetricData skips a missing minute" \
    "$(echo "$out" | jget '[int(v) for v in d["MetricDataResults"][1]["Values"]]')" "[55000, 52000, 50000]"
# Period 120 sums pairs of minutes on 120 s boundaries: 1795946280 holds minutes
# ..280 and ..340 (1738000 + 1739000); 1795946160 holds ..160 and ..220.
Q120=${Q//\"Period\":60/\"Period\":120}
out=$(cw "$AK:$SK" GetMetricData "$Q120")
expect_eq "Period 120 aggregates Sum" \
    "$(echo "$out" | jget '[int(v) for v in d["MetricDataResults"][0]["Values"]]')" "[3477000, 3473000]"
big=$(python3 -c 'import json; print(json.dumps({"StartTime":0,"EndTime":60,"MetricDataQueries":[{"Id":"q%d"%i,"MetricStat":{"Metric":{"Namespace":"N","MetricName":"M"},"Period":60,"Stat":"Sum"}} for i in range(501)]}))')
out=$(cw "$AK:$SK" GetMetricData "$big")
expect_eq "501 queries refused" "${out%% *} $(echo "$out" | jget 'd["__type"].split("#")[-1]')" "400 ValidationError"
expect_eq "every request logged" "$(wc -l <"$TMP/basic.log")" 8
expect_eq "log records signature verdicts" \
    "$(python3 -c 'import json,sys; print(sum(json.loads(l)["sig_ok"] for l in open(sys.argv[1])))' "$TMP/basic.log")" 5
check "log never holds the signature or key" \
    bash -c "! grep -qE 'Signature=|$SK|Authorization' '$TMP/basic.log'"

# Server clock 900 s ahead: a correct signature made with our clock is too old.
check "fake with clock_offset starts" start_fake skew --scenario <(echo '{"clock_offset": 900}')
out=$(cw "$AK:$SK" ListMetrics '{}' -D "$TMP/hdr")
expect_eq "skewed request refused" "$(echo "$out" | jget 'd["message"][:17]')" "Signature expired"
srv=$(sed -n 's/^Date: //Ip' "$TMP/hdr" | tr -d '\r')
delta=$(( $(date -d "$srv" +%s) - $(date +%s) ))
check "Date header carries the server clock" test "$delta" -gt 800 -a "$delta" -lt 1000

# Paging scenario: 5 applied quotas, page sizes [3, 0, 1] (the last repeats),
# so the pages hold 3, 0, 1, 1 quotas and only the last has no NextToken.
check "fake with paging starts" start_fake paging --scenario "$BEDTOP_SRCDIR/tests/fake/scenario_paging.json"
sq() {
    curl -s --aws-sigv4 "aws:amz:us-east-1:servicequotas" --user "$AK:$SK" \
        -H 'Content-Type: application/x-amz-json-1.1' -H "X-Amz-Target: ServiceQuotasV20190624.$1" \
        -d "$2" "http://127.0.0.1:$PORT/"
}
pages=() tok=
for i in 1 2 3 4 5; do
    body='{"ServiceCode":"bedrock"'${tok:+,\"NextToken\":\"$tok\"}'}'
    out=$(sq ListServiceQuotas "$body")
    pages+=("$(echo "x $out" | jget 'len(d["Quotas"])')")
    tok=$(echo "x $out" | jget 'd.get("NextToken", "")')
    [ -z "$tok" ] && break
done
expect_eq "ListServiceQuotas short and empty pages" "${pages[*]}" "3 0 1 1"
out=$(sq ListServiceQuotas '{"ServiceCode":"bedrock","MaxResults":2}')
expect_eq "MaxResults caps a page" "$(echo "x $out" | jget 'len(d["Quotas"])')" 2
out=$(sq ListServiceQuotas '{"ServiceCode":"bedrock","NextToken":"bm9wZQ=="}')
expect_eq "bad NextToken refused" "$(echo "x $out" | jget 'd["__type"]')" InvalidPaginationTokenException
out=$(sq GetServiceQuota '{"ServiceCode":"bedrock","QuotaCode":"L-00000003"}')
expect_eq "GetServiceQuota" "$(echo "x $out" | jget 'int(d["Quota"]["Value"])')" 4000000
# 12 minutes of Invocations with 5 datapoints per page part: parts of 5, 5, 2;
# 2 results per page: page 1 holds two PartialData parts, page 2 the Complete rest.
M='{"Namespace":"AWS/Bedrock","MetricName":"Invocations","Dimensions":[{"Name":"ModelId","Value":"anthropic.claude-3-haiku-20240307-v1:0"}]}'
Q="{\"MetricDataQueries\":[{\"Id\":\"a\",\"MetricStat\":{\"Metric\":$M,\"Period\":60,\"Stat\":\"Sum\"}}],\"StartTime\":1795945680,\"EndTime\":1795946400}"
out=$(cw "$AK:$SK" GetMetricData "$Q")
expect_eq "GetMetricData page 1 splits a long series" \
    "$(echo "$out" | jget '[(r["Id"], len(r["Values"]), r["StatusCode"]) for r in d["MetricDataResults"]]')" \
    "[('a', 5, 'PartialData'), ('a', 5, 'PartialData')]"
tok=$(echo "$out" | jget 'd["NextToken"]')
out=$(cw "$AK:$SK" GetMetricData "${Q%\}},\"NextToken\":\"$tok\"}")
expect_eq "GetMetricData page 2 completes it" \
    "$(echo "$out" | jget '[(len(r["Values"]), r["StatusCode"]) for r in d["MetricDataResults"]], "NextToken" in d')" \
    "([(2, 'Complete')], False)"

# The Bedrock control plane's catalogue answers, read by the AWS CLI itself (botocore
# parses them against its own bedrock service model): ListFoundationModels with each
# model's modelLifecycle (ACTIVE / LEGACY and the 2026-09-07 policy's times), and
# ListInferenceProfiles with the models each system profile routes to.
cat >"$TMP/catalogue.json" <<'JSON'
{"foundation_models": [
   {"modelId": "anthropic.claude-sonnet-5"},
   {"modelId": "anthropic.claude-3-haiku-20240307-v1:0", "status": "LEGACY",
    "legacyTime": "2026-03-01T00:00:00Z", "publicExtendedAccessTime": "2026-06-01T00:00:00Z",
    "endOfLifeTime": "2026-09-01T00:00:00Z"}],
 "system_profiles": [{"id": "in.anthropic.claude-sonnet-5", "regions": ["ap-south-1", "ap-south-2"]},
                     "us.openai.gpt-5.6-terra"]}
JSON
check "fake (catalogue) starts" start_fake cat --scenario "$TMP/catalogue.json"
if command -v aws >/dev/null 2>&1; then
    awsc() {
        env -u AWS_PROFILE AWS_ACCESS_KEY_ID="$AK" AWS_SECRET_ACCESS_KEY="$SK" AWS_CONFIG_FILE=/nonexistent \
            AWS_SHARED_CREDENTIALS_FILE=/nonexistent AWS_EC2_METADATA_DISABLED=true \
            aws --region ap-south-1 --endpoint-url "http://127.0.0.1:$PORT" --output json "$@"
    }
    awsc bedrock list-foundation-models >"$TMP/fm.json" 2>"$TMP/fm.err"
    expect_eq "aws bedrock list-foundation-models accepts the answer: lifecycle and its times" \
        "$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print([(m["modelId"], m["modelLifecycle"]["status"], m["modelLifecycle"].get("endOfLifeTime", "")[:10]) for m in d["modelSummaries"]])' "$TMP/fm.json" 2>&1; cat "$TMP/fm.err")" \
        "[('anthropic.claude-sonnet-5', 'ACTIVE', ''), ('anthropic.claude-3-haiku-20240307-v1:0', 'LEGACY', '2026-09-01')]"
    awsc bedrock list-inference-profiles --type-equals SYSTEM_DEFINED >"$TMP/ip.json" 2>"$TMP/ip.err"
    expect_eq "aws bedrock list-inference-profiles accepts the answer: each profile's models" \
        "$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print([(p["inferenceProfileId"], [m["modelArn"].split(":")[3] for m in p["models"]]) for p in d["inferenceProfileSummaries"]])' "$TMP/ip.json" 2>&1; cat "$TMP/ip.err")" \
        "[('in.anthropic.claude-sonnet-5', ['ap-south-1', 'ap-south-2']), ('us.openai.gpt-5.6-terra', ['us-east-1', 'us-west-2'])]"
    expect_eq "the CLI's requests were signed for bedrock and verified" \
        "$(python3 -c 'import json,sys; L=[json.loads(x) for x in open(sys.argv[1]) if x.strip()]; print(sorted((x["op"], x["sig_ok"], x.get("service")) for x in L))' "$TMP/cat.log")" \
        "[('ListFoundationModels', True, 'bedrock'), ('ListInferenceProfiles', True, 'bedrock')]"
else
    skip "aws bedrock list-foundation-models accepts the answer" "the AWS CLI (aws) is not installed"
    skip "aws bedrock list-inference-profiles accepts the answer" "the AWS CLI (aws) is not installed"
fi

check "fake with a session token starts" start_fake tok --session-token GOODTOKEN
out=$(cw "$AK:$SK" ListMetrics '{}')
expect_eq "missing session token refused" "${out%% *}" 403
out=$(cw "$AK:$SK" ListMetrics '{}' -H 'X-Amz-Security-Token: GOODTOKEN')
expect_eq "session token accepted" "${out%% *}" 200
finish
