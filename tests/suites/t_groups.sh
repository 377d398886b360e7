#!/usr/bin/env bash
# One quota group, never capped (issue 31 case 5, issue 33), end to end on the fake AWS
# (real HTTP, SigV4 verified): ten routes g00..g09 on one model, so one quota,
# Claude 3 Haiku's L-HAIKUOD of 1,000,000 TPM from Service Quotas. Each route reads
# the model's series: per minute 60 calls, 6,000 input, 1,000 output (Claude 3 Haiku's
# burndown is 5, as every Anthropic model of 4.7 and below: 5,000 charged),
# InvocationLatency 500 ms, one InvocationThrottles; max_tokens 400. By hand
# (docs/headroom.md):
#   settled = 6,000 + 1,000 x 5 = 11,000 a route (charged)
#   R = 6,000 / 60 + 400 = 500; in flight = 60 / 60 x 0.5 s = 0.5; held = 250
#   used = 11,250 a route; the group 10 x 11,250 = 112,500: headroom 887,500 = 88.75 %
#   (88.8 in the JSON, one decimal)
# plan g00 --limits: the nine others use 9 x 11,250 = 101,250, the reserve is 20 % =
#   200,000: token budget 1,000,000 - 101,250 - 200,000 = 698,750 TPM (capped at 8
#   others it was 710,000)
# the observed ceiling: every minute throttles; the group's charged tokens a minute
#   10 x 11,000 = 110,000 TPM = 11 % of the quota (capped: 9 x 11,000 = 99,000)
# check --format json: each route's quota.shared_with lists the nine others.
. "$BEDTOP_SRCDIR/tests/lib.sh"

python3 - "$TMP/sc.json" "$TMP/g.conf" <<'PY'
import json, sys
mid = "anthropic.claude-3-haiku-20240307-v1:0"
def ser(metric, v, stat="Sum"):
    return {"namespace": "AWS/Bedrock", "metric": metric, "stat": stat,
            "dimensions": {"ModelId": mid}, "generator": {"constant": v}}
sc = {"series": [ser("Invocations", 60), ser("InputTokenCount", 6000), ser("OutputTokenCount", 1000),
                 ser("InvocationThrottles", 1), ser("InvocationLatency", 500, "Average")],
      "quotas": [{"QuotaCode": "L-HAIKUOD", "Value": 1000000,
                  "QuotaName": "On-demand model inference tokens per minute for Anthropic Claude 3 Haiku"}]}
json.dump(sc, open(sys.argv[1], "w"))
conf = ["[bedtop]", "region = us-east-1", "interval = 60", ""]
for i in range(10):
    conf += ["[route g%02d]" % i, "model = " + mid, "max_tokens = 400", ""]
open(sys.argv[2], "w").write("\n".join(conf))
PY
check "fake AWS starts" start_fake groups --scenario "$TMP/sc.json"
run_bt() { "${AWS_ENV[@]}" BEDTOP_DATADIR="$BEDTOP_SRCDIR/data" "$BEDTOP" "$@" --config "$TMP/g.conf" \
    --endpoint-url "http://127.0.0.1:$PORT"; }

run_bt check --format json >"$TMP/c.json" 2>"$TMP/c.err"
j() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); r={x['name']:x for x in d.get('routes', [])}; print($2)" "$1"; }
expect_eq "each route uses 11,250, the group 112,500, on L-HAIKUOD" \
    "$(j "$TMP/c.json" "(r['g00']['tpm']['used'], r['g09']['tpm']['group_used'], r['g05']['quota']['code'], r['g05']['quota']['tpm'])")" \
    "(11250, 112500, 'L-HAIKUOD', 1000000)"
expect_eq "headroom 887,500 = 88.75 %, 88.8 in the JSON (one decimal), for every member" \
    "$(j "$TMP/c.json" "sorted(set((x['headroom_tpm'], x['headroom_pct']) for x in d['routes']))")" "[(887500, 88.8)]"
expect_eq "g00's shared_with lists all nine others, g09 included" \
    "$(j "$TMP/c.json" "r['g00']['quota']['shared_with']")" \
    "['g01', 'g02', 'g03', 'g04', 'g05', 'g06', 'g07', 'g08', 'g09']"
expect_eq "g09's lists g00..g08" "$(j "$TMP/c.json" "(len(r['g09']['quota']['shared_with']), r['g09']['quota']['shared_with'][-1])")" "(9, 'g08')"
check "check's JSON validates" \
    python3 "$BEDTOP_SRCDIR/tests/schema_check.py" "$BEDTOP_SRCDIR/data/check.schema.json" "$TMP/c.json"

run_bt plan g00 --limits -f json >"$TMP/p.json" 2>"$TMP/p.err"
expect_eq "plan --limits: token budget 698,750 (not 710,000), reserve 200,000" \
    "$(j "$TMP/p.json" "(d['limits']['admission_policy']['tokens_per_minute'], d['limits']['reserve_tpm'])")" \
    "(698750, 200000)"
expect_eq "the observed ceiling: 110,000 TPM, 11 % of the quota (not 99,000)" \
    "$(j "$TMP/p.json" "(d['ceiling']['tokens_per_minute'], d['ceiling']['pct_of_quota'])")" "(110000, 11)"
run_bt plan g00 --limits >"$TMP/p.txt" 2>/dev/null
check "the text's budget names the nine others' 101k" grep -q 'token budget.*quota 1.00M - others 101k' "$TMP/p.txt"
finish
