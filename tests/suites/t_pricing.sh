#!/usr/bin/env bash
# Issue 36, the Price List API: bedtop reads Amazon Bedrock's list prices with
# AWSPriceListService.GetProducts (SigV4 service "pricing", Region us-east-1) at start
# and daily, page by page, and caches them as $XDG_CACHE_HOME/bedtop/prices.conf in
# data/prices.conf's syntax; a refused GetProducts leaves the table in use with a note.
# Real parts: the fake AWS (it verifies SigV4 and the body against botocore's pricing
# model), `bedtop record`, the AWS CLI pointed at the fake.
#
# The fake's default products (tests/fake/fake_aws.py DEFAULT_PRODUCTS), in USD per
# 1,000 tokens, us-east-1: Claude Sonnet 4.5 input 0.0033, output 0.0165, cache read
# 0.00033, cache write 0.004125; global 0.003 / 0.015; batch 0.00165 / 0.00825; Claude 3
# Haiku 0.00025 / 0.00125; a Provisioned Throughput hour (not a token price). By hand,
# per million (x 1,000): Sonnet 4.5 3.3 / 16.5 / 0.33 / 4.125 (data/prices.conf's
# in-Region row), global 3 / 15, batch 1.65 / 8.25, Haiku 0.25 / 1.25. 11 products in
# us-east-1 and 1 in us-west-2: at 3 a page, the 11 are 4 pages.
. "$BEDTOP_SRCDIR/tests/lib.sh"
AWS_ENV+=(BEDTOP_DATADIR="$BEDTOP_SRCDIR/data" XDG_CACHE_HOME="$TMP/cache")
SONNET=us.anthropic.claude-sonnet-4-5-20250929-v1:0
printf '[bedtop]\nregion = us-east-1\n\n[route sonnet]\nmodel = %s\n' "$SONNET" >"$TMP/p.conf"
echo '{"products": "default", "page_size": {"GetProducts": 3}}' >"$TMP/scenario.json"
start_fake fake --scenario "$TMP/scenario.json" || notok "fake AWS started"
FAKE=$PORT
products_log() { # GetProducts requests: status|service|region|model_ok|first or token|Filters
    python3 -c '
import json, sys
for line in open(sys.argv[1]):
    r = json.loads(line)
    if r.get("op") == "GetProducts":
        b = r.get("body") or {}
        print("%s|%s|%s|%s|%s|%s" % (r.get("status"), r.get("service"), r.get("region"),
              r.get("model_ok"), "token" if b.get("NextToken") else "first",
              json.dumps(b.get("Filters"))))' "$1"
}

# ---- the AWS CLI reads the fake's answer as AWS's: every page, every product ----
if command -v aws >/dev/null 2>&1; then
    n=$("${AWS_ENV[@]}" aws --region us-east-1 --endpoint-url "http://127.0.0.1:$FAKE" --output json \
        pricing get-products --service-code AmazonBedrock --format-version aws_v1 \
        --filters Type=TERM_MATCH,Field=regionCode,Value=us-east-1 --query 'length(PriceList)' 2>"$TMP/cli.err")
    expect_eq "aws pricing get-products follows the fake's pages: the 11 us-east-1 products" "$n" 11
    expect_eq "... each page signed for pricing in us-east-1 and valid for botocore's model" \
        "$(products_log "$TMP/fake.log" | cut -d'|' -f1-4 | sort -u)" "200|pricing|us-east-1|True"
    : >"$TMP/fake.log"
else
    skip "aws pricing get-products follows the fake's pages" "the AWS CLI (aws) is not installed"
    skip "... each page signed for pricing in us-east-1" "the AWS CLI (aws) is not installed"
fi

# ---- record: the pages, the cache ----
"${AWS_ENV[@]}" "$BEDTOP" record "$TMP/p.rec" --config "$TMP/p.conf" \
    --endpoint-url "http://127.0.0.1:$FAKE" --interval 5 --duration 4s 2>"$TMP/record.err"
products_log "$TMP/fake.log" >"$TMP/gp.txt"
# record asked GetProducts (a live poll's): the policy's action, listed by record --help
expect_policy_covers record "bedrock cloudwatch pricing servicequotas" "$TMP/fake.log"
sed 's/^/#   /' "$TMP/gp.txt"
expect_eq "GetProducts: 4 pages (the first, then 3 with the NextToken of the one before), once" \
    "$(cut -d'|' -f5 "$TMP/gp.txt" | tr '\n' ' ')" "first token token token "
expect_eq "... each 200, signed for pricing in us-east-1, valid for botocore's pricing model" \
    "$(cut -d'|' -f1-4 "$TMP/gp.txt" | sort -u)" "200|pricing|us-east-1|True"
expect_eq "... asking AmazonBedrock's products of the route's Region" \
    "$(cut -d'|' -f6 "$TMP/gp.txt" | sort -u)" '[{"Field": "regionCode", "Type": "TERM_MATCH", "Value": "us-east-1"}]'
CACHE=$TMP/cache/bedtop/prices.conf
check "the cache is written: \$XDG_CACHE_HOME/bedtop/prices.conf" test -f "$CACHE"
expect_eq "... readable by its owner only (0600)" "$(stat -c %a "$CACHE" 2>/dev/null)" 600
TODAY=$(date -u +%F)
expect_eq "... its rows in data/prices.conf's syntax, per million tokens, dated" \
    "$(grep -v '^#' "$CACHE" | sed "s/$TODAY/DATE/")" \
"anthropic.claude-sonnet-4-5* = in=3.3 out=16.5 cache_read=0.33 cache_write=4.125 region=us-east-1 source=price-list-api date=DATE
anthropic.claude-sonnet-4-5* = in=3 out=15 region=us-east-1 inference=global source=price-list-api date=DATE
anthropic.claude-sonnet-4-5* = in=1.65 out=8.25 region=us-east-1 tier=batch source=price-list-api date=DATE
anthropic.claude-3-haiku* = in=0.25 out=1.25 region=us-east-1 source=price-list-api date=DATE"
check "the recording notes the rows cached (an info event, not an error)" \
    grep -q '"code":"PRICE_LIST".*4 price rows cached' "$TMP/p.rec"

# ---- a fresh cache stands: the next start does not ask again ----
: >"$TMP/fake.log"
"${AWS_ENV[@]}" "$BEDTOP" record "$TMP/p2.rec" --config "$TMP/p.conf" \
    --endpoint-url "http://127.0.0.1:$FAKE" --interval 5 --duration 2s 2>"$TMP/record2.err"
expect_eq "a cache of today: no GetProducts at the next start (daily)" "$(products_log "$TMP/fake.log" | wc -l)" 0

# ---- refused: the table stays, with a note ----
rm -f "$CACHE"
echo '{"products": "default", "faults": [{"op": "GetProducts", "nth": 1, "count": 0, "action": "error",
  "status": 400, "code": "AccessDeniedException",
  "message": "User: arn:aws:iam::123456789012:user/x is not authorized to perform: pricing:GetProducts"}]}' >"$TMP/denied.json"
start_fake denied --scenario "$TMP/denied.json" || notok "fake AWS (denied) started"
"${AWS_ENV[@]}" "$BEDTOP" record "$TMP/d.rec" --config "$TMP/p.conf" \
    --endpoint-url "http://127.0.0.1:$PORT" --interval 5 --duration 3s 2>"$TMP/denied.err"
grep PRICE_LIST "$TMP/d.rec" | sed 's/^/#   /'
check "a refused GetProducts writes no cache" test ! -e "$CACHE"
check "... and is noted: refused, prices from the table, the permission named" \
    grep -q '"code":"PRICE_LIST".*GetProducts refused: prices from the table; allow pricing:GetProducts, or set price_list = off (AccessDeniedException' "$TMP/d.rec"
check "... never an error event" bash -c "! grep '\"type\":\"error\"' '$TMP/d.rec' | grep -q GetProducts"

# ---- price_list = off: never asked ----
printf '[bedtop]\nregion = us-east-1\nprice_list = off\n\n[route sonnet]\nmodel = %s\n' "$SONNET" >"$TMP/off.conf"
: >"$TMP/fake.log"
"${AWS_ENV[@]}" "$BEDTOP" record "$TMP/o.rec" --config "$TMP/off.conf" \
    --endpoint-url "http://127.0.0.1:$FAKE" --interval 5 --duration 2s 2>"$TMP/off.err"
expect_eq "price_list = off: no GetProducts" "$(products_log "$TMP/fake.log" | wc -l)" 0
check "... while CloudWatch is polled as before" grep -q '"op": "GetMetricData"' "$TMP/fake.log"
finish
