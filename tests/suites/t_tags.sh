#!/usr/bin/env bash
# Issue 35, shares by tag: with attribute_by = tag:team, ListTagsForResource (Bedrock
# control plane, SigV4 service "bedrock", POST /listTagsForResource {"resourceARN"}: the
# shape of botocore's bedrock model, and the AWS CLI on this machine gets the same
# answers from the fake) on each application inference profile, cached between runs; a
# refused call makes the shares "unattributed" with the reason, never an error.
#
# By hand. Two application profiles on Claude 3 Haiku (one quota group, L-HAIKUOD
# 1,000,000 TPM), CloudWatch every minute:
#   search01 (team=search): 10 calls, 100,000 input, 600 ms: in flight 10 / 60 x 0.6 =
#     0.1, R = 10,000 + 1,000 = 11,000, held 1,100: used 101,100
#   ads01    (team=ads):     5 calls,  25,000 input, 600 ms: in flight 0.05, R = 5,000 +
#     1,000 = 6,000, held 300: used 25,300
# group 126,400: search 101,100 (79.98 %), ads 25,300 (20.02 %).
. "$BEDTOP_SRCDIR/tests/lib.sh"
AWS_ENV+=(BEDTOP_DATADIR="$BEDTOP_SRCDIR/data")
HAIKU=anthropic.claude-3-haiku-20240307-v1:0
S=arn:aws:bedrock:us-east-1:123456789012:application-inference-profile/search01
A=arn:aws:bedrock:us-east-1:123456789012:application-inference-profile/ads01
scenario() { # FILE [tags_error]
    python3 - "$@" "$S" "$A" "$(date +%s)" <<'PY'
import json, sys
out, denied = sys.argv[1], sys.argv[2] == "denied"
s, a, now = sys.argv[3], sys.argv[4], int(sys.argv[5])
def ser(model, metric, v, stat="Sum"):
    return {"namespace": "AWS/Bedrock", "metric": metric, "stat": stat, "start": now - 7200,
            "dimensions": {"ModelId": model}, "generator": {"constant": v}}
series = [ser(s, "Invocations", 10), ser(s, "InputTokenCount", 100000),
          ser(s, "InvocationLatency", 600, "Average"),
          ser(a, "Invocations", 5), ser(a, "InputTokenCount", 25000),
          ser(a, "InvocationLatency", 600, "Average")]
sc = {"series": series, "quotas": [{"QuotaCode": "L-HAIKUOD", "Value": 1000000,
      "QuotaName": "On-demand model inference tokens per minute for Anthropic Claude 3 Haiku"}],
      "tags": {s: {"team": "search", "env": "prod"}, a: {"team": "ads"}}}
if denied:
    sc["tags_error"] = {"status": 403, "code": "AccessDeniedException",
                        "message": "User: arn:aws:iam::123456789012:user/t is not authorized to perform: bedrock:ListTagsForResource"}
json.dump(sc, open(out, "w"))
PY
}
scenario "$TMP/ok.json" ok
scenario "$TMP/denied.json" denied
start_fake fake --scenario "$TMP/ok.json" || notok "fake AWS started"
FAKE=$PORT
cat >"$TMP/tags.conf" <<EOF
[bedtop]
region = us-east-1
attribute_by = tag:team

[route search]
model = $S
base_model = $HAIKU
max_tokens = 1000

[route ads]
model = $A
base_model = $HAIKU
max_tokens = 1000
EOF

# ---- the AWS CLI against the fake: the request shape is the real one ----
if command -v aws >/dev/null 2>&1; then
    "${AWS_ENV[@]}" aws bedrock list-tags-for-resource --region us-east-1 \
        --endpoint-url "http://127.0.0.1:$FAKE" --resource-arn "$S" --output json >"$TMP/cli.json" 2>"$TMP/cli.err"
    expect_eq "aws bedrock list-tags-for-resource: the fake answers the CLI's signed request" \
        "$(python3 -c 'import json,sys; print({t["key"]: t["value"] for t in json.load(open(sys.argv[1]))["tags"]})' "$TMP/cli.json")" \
        "{'team': 'search', 'env': 'prod'}"
    expect_eq "... as POST /listTagsForResource, signature valid" \
        "$(python3 -c '
import json, sys
r = [json.loads(l) for l in open(sys.argv[1]) if "ListTagsForResource" in l][-1]
print(r["op"], r["path"], r["sig_ok"], r["status"])' "$TMP/fake.log")" "ListTagsForResource /listTagsForResource True 200"
else
    skip "the AWS CLI is not installed: the fake's ListTagsForResource not checked against it"
fi

tagged() { grep -c '"op": "ListTagsForResource"' "$TMP/fake.log"; }
n0=$(tagged)
run() { # CACHE_DIR OUT [args]
    local cache=$1 out=$2; shift 2
    "${AWS_ENV[@]}" XDG_CACHE_HOME="$cache" "$BEDTOP" check --config "$TMP/tags.conf" \
        --endpoint-url "http://127.0.0.1:$FAKE" "$@" >"$out" 2>"$out.err"
}
run "$TMP/cache" "$TMP/check.json" --format json
sed 's/^/#   /' "$TMP/check.json.err" | head -3
j() { python3 -c "
import json, sys
d = json.load(open(sys.argv[1]))
r = {x['name']: x for x in d['routes']}
sh = {(s['by'], s['name']): s for s in r['search']['shares']}
print($2)" "$1"; }
j "$TMP/check.json" "'#', [(k, s['used'], s['pct'], s['quality']) for k, s in sh.items()]"
expect_eq "one ListTagsForResource per profile" "$(( $(tagged) - n0 ))" 2
expect_eq "by tag: search 101,100 and ads 25,300 of 126,400" \
    "$(j "$TMP/check.json" "(sh[('tag','search')]['used'], sh[('tag','ads')]['used'], sh[('tag','search')]['source'], round(sh[('tag','search')]['pct'], 1))")" \
    "(101100, 25300, 'tags', 80.0)"
check "the JSON validates against the schema" \
    python3 "$BEDTOP_SRCDIR/tests/schema_check.py" "$BEDTOP_SRCDIR/data/check.schema.json" "$TMP/check.json"
run "$TMP/cache" "$TMP/by.txt" --by tag:team
sed 's/^/#   /' "$TMP/by.txt"
check "check --by tag:team: search first" bash -c "sed -n 2p '$TMP/by.txt' | grep -Eq '^search +L-HAIKUOD +tag +search +101k +80\\.0%'"
expect_eq "the second run reads the cache: no ListTagsForResource" "$(( $(tagged) - n0 ))" 2
expect_rc "--by tag:env: refused, naming the tag attribute_by reads" 3 \
    "${AWS_ENV[@]}" "$BEDTOP" check --config "$TMP/tags.conf" --by tag:env --endpoint-url "http://127.0.0.1:$FAKE"
check "... with the reason" grep -q "bedtop reads the tag attribute_by names (tag:team)" "$TMP/last.err"

# ---- refused: unattributed with the reason, not an error ----
kill "${CLEANUP[-1]#kill }" 2>/dev/null
start_fake denied --scenario "$TMP/denied.json" || notok "fake AWS (denied) started"
FAKE=$PORT
run "$TMP/cache2" "$TMP/denied.out" --format json
rc=$?
j "$TMP/denied.out" "'#', [(k, s['used'], s.get('reason')) for k, s in sh.items()]"
expect_eq "refused tags: check still answers (exit 0, ok)" "$rc $(j "$TMP/denied.out" "d['status']")" "0 ok"
expect_eq "... the group's use is unattributed by tag, with the reason" \
    "$(j "$TMP/denied.out" "(sh[('tag','unattributed')]['used'], 'refused' in sh[('tag','unattributed')]['reason'], 'allow bedrock:ListTagsForResource' in sh[('tag','unattributed')]['reason'])")" \
    "(126400, True, True)"
check "... and no route error names it" bash -c "! grep -q ListTagsForResource '$TMP/denied.out.err'"
# the actions check asked, tags' among them, are the policy's and check --help's
expect_policy_covers check "bedrock cloudwatch servicequotas" "$TMP/fake.log" "$TMP/denied.log"
finish
