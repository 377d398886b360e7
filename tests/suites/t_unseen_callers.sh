#!/usr/bin/env bash
# Issue 25, unseen callers: one CloudWatch Metrics Insights query per Region and metric
# every 5 minutes finds ModelIds the config does not name; UNSEEN_CALLERS names those on a
# configured route's quota, with their usage, and the queries are counted like every
# other GetMetricData. Real parts: the fake AWS (it verifies SigV4 and the request
# against CloudWatch's service model, and answers the Expression as CloudWatch does:
# one result per ModelId, Label = the ModelId), `bedtop record` and `bedtop serve`.
#
# Config: route batch = an application inference profile whose base model is
# anthropic.claude-3-haiku-20240307-v1:0 (base_model), route sonnet = the cross-region
# Sonnet 4.5 profile. The account's CloudWatch (every minute, constant):
#   the profile's ARN           InputTokenCount 40,000   (named by batch: not unseen)
#   anthropic.claude-3-haiku... InputTokenCount 60,000, InvocationThrottles 2
#                               (called directly by someone else: batch's quota)
#   amazon.nova-lite-v1:0       InputTokenCount 1,000    (unseen, but on no route's quota)
#   the Sonnet profile          InputTokenCount 300,000  (named by sonnet)
# By hand, over the window of 5 minutes: haiku 5 x 60,000 = 300,000 input tokens, / 5 =
# 60,000 a minute; 5 x 2 = 10 throttles, / 5 = 2.0 a minute. So batch warns
# UNSEEN_CALLERS naming haiku (and not nova-lite, nor its own ARN); sonnet does not.
. "$BEDTOP_SRCDIR/tests/lib.sh"
AWS_ENV+=(BEDTOP_DATADIR="$BEDTOP_SRCDIR/data" XDG_CACHE_HOME="$TMP/cache") # tests/lib.sh's, and these
ARN=arn:aws:bedrock:us-east-1:123456789012:application-inference-profile/b4tch0nightly
HAIKU=anthropic.claude-3-haiku-20240307-v1:0
SONNET=us.anthropic.claude-sonnet-4-5-20250929-v1:0
cat >"$TMP/unseen.conf" <<EOF
[bedtop]
region = us-east-1

[route batch]
model = $ARN
base_model = $HAIKU
max_tokens = 500

[route sonnet]
model = $SONNET
max_tokens = 1024
EOF
python3 - "$TMP/scenario.json" "$ARN" "$HAIKU" "$SONNET" <<'PY'
import json, sys
out, arn, haiku, sonnet = sys.argv[1:5]
def s(model, metric, v):
    return {"namespace": "AWS/Bedrock", "metric": metric, "stat": "Sum",
            "dimensions": {"ModelId": model}, "generator": {"constant": v}}
series = [s(arn, "InputTokenCount", 40000), s(arn, "Invocations", 40),
          s(haiku, "InputTokenCount", 60000), s(haiku, "InvocationThrottles", 2),
          s("amazon.nova-lite-v1:0", "InputTokenCount", 1000),
          s(sonnet, "InputTokenCount", 300000), s(sonnet, "Invocations", 100)]
json.dump({"series": series, "quotas": [
    {"QuotaCode": "L-HAIKUOD", "QuotaName": "On-demand model inference tokens per minute for Anthropic Claude 3 Haiku", "Value": 1000000},
    {"QuotaCode": "L-SON45CR", "QuotaName": "Cross-region model inference tokens per minute for Anthropic Claude Sonnet 4.5 V1", "Value": 2000000}]},
    open(out, "w"))
PY
start_fake fake --scenario "$TMP/scenario.json" || notok "fake AWS started"
FAKE=$PORT
insights_log() { # the Metrics Insights requests the fake received: expression, queries, series
    python3 - "$TMP/fake.log" <<'PY'
import json, sys
for line in open(sys.argv[1]):
    r = json.loads(line)
    b = r.get("body") if r.get("op") == "GetMetricData" else None
    qs = (b or {}).get("MetricDataQueries") or []
    if any("Expression" in q and q["Expression"].startswith("SELECT") for q in qs):
        print("%d|%s|%s|%s|%s" % (len(qs), qs[0]["Expression"], qs[0].get("Period"),
                                  r.get("insights_series"), r.get("status")))
PY
}

# ---- check runs once (from cron every minute): no Metrics Insights query ----
"${AWS_ENV[@]}" "$BEDTOP" check --format json --config "$TMP/unseen.conf" \
    --endpoint-url "http://127.0.0.1:$FAKE" >"$TMP/check.json" 2>"$TMP/check.err"
expect_eq "bedtop check sends no Metrics Insights query" "$(insights_log | wc -l)" 0

# ---- record: the queries, the event, the warning in replay ----
"${AWS_ENV[@]}" "$BEDTOP" record "$TMP/u.rec" --config "$TMP/unseen.conf" \
    --endpoint-url "http://127.0.0.1:$FAKE" --interval 5 --duration 8s 2>"$TMP/record.err"
insights_log >"$TMP/ins.txt"
sed 's/^/#   /' "$TMP/ins.txt"
expect_eq "two Metrics Insights requests, one a metric, each holding its one query" \
    "$(cut -d'|' -f1,2 "$TMP/ins.txt" | sort -u)" \
    "1|SELECT SUM(InputTokenCount) FROM SCHEMA(\"AWS/Bedrock\", ModelId) GROUP BY ModelId
1|SELECT SUM(InvocationThrottles) FROM SCHEMA(\"AWS/Bedrock\", ModelId) GROUP BY ModelId"
expect_eq "... with Period 60, answered 200 (signed, and valid for CloudWatch's model)" \
    "$(cut -d'|' -f3,5 "$TMP/ins.txt" | sort -u)" "60|200"
expect_eq "... once in 8 s (every 5 minutes, not every 5 s poll)" "$(wc -l <"$TMP/ins.txt")" 2
check "the recording holds batch's UNSEEN_CALLERS event naming haiku" \
    grep -q "\"code\":\"UNSEEN_CALLERS\".*$HAIKU: 60000 input tokens/min, 2.0 throttles/min" "$TMP/u.rec"
"$BEDTOP" replay "$TMP/u.rec" --at -0s --format json >"$TMP/rep.json" 2>"$TMP/rep.err"
warn() { python3 -c '
import json, sys
for r in json.load(open(sys.argv[1]))["routes"]:
    if r["name"] == sys.argv[2]:
        print("\n".join("%s %s %s" % (w["code"], w["severity"], w["message"]) for w in r["warnings"] if w["code"] == "UNSEEN_CALLERS"))' "$@"; }
W=$(warn "$TMP/rep.json" batch)
echo "# batch: $W"
check "replay: batch warns UNSEEN_CALLERS (warn) with haiku's 60,000 input tokens and 2.0 throttles a minute" \
    grep -q "^UNSEEN_CALLERS warn .*$HAIKU: 60000 input tokens/min, 2.0 throttles/min" <<<"$W"
check "... not naming nova-lite (another quota) nor batch's own profile" \
    bash -c "! grep -q 'nova-lite\|b4tch0nightly' <<<'$W'"
expect_eq "sonnet: no UNSEEN_CALLERS (nothing unseen on its quota)" "$(warn "$TMP/rep.json" sonnet)" ""
# issue 35: the callers outside the config are one share of batch's group, saying what
# they are, beside the shares that sum to the group's use (not in them)
expect_eq "shares: batch's group has the outside callers as one share, named by Metrics Insights" \
    "$(python3 -c '
import json, sys
r = {x["name"]: x for x in json.load(open(sys.argv[1]))["routes"]}["batch"]
o = [s for s in r["shares"] if s["by"] == "outside"]
rt = [s for s in r["shares"] if s["by"] == "route"]
print(len(o), o[0]["name"], o[0]["source"], o[0]["used"], sys.argv[2] + ": 60000 input tokens/min" in o[0].get("reason", ""),
      sum(s["used"] for s in rt) == r["tpm"]["used"])' "$TMP/rep.json" "$HAIKU" 2>&1)" \
    "1 outside the config metrics-insights None True True"

# ---- serve: the warning on /metrics, the queries counted as metrics requested ----
N0=$(wc -l <"$TMP/fake.log")   # what came before is record's and check's
SP=$(free_port)
"${AWS_ENV[@]}" "$BEDTOP" serve --listen "127.0.0.1:$SP" --config "$TMP/unseen.conf" \
    --endpoint-url "http://127.0.0.1:$FAKE" --interval 5 >/dev/null 2>"$TMP/serve.err" &
CLEANUP+=("kill $!")
unseen() { curl -s -m 5 "http://127.0.0.1:$SP/metrics" | grep -q '^bedtop_warning{route="batch",.*code="UNSEEN_CALLERS",severity="warn"} 1$'; }
ok_unseen=1
for _ in $(seq 1 150); do unseen && { ok_unseen=0; break; }; sleep 0.2; done
check "serve: bedtop_warning{route=\"batch\",code=\"UNSEEN_CALLERS\"} is 1" test "$ok_unseen" -eq 0
check "... and none for sonnet" \
    bash -c "! curl -s -m 5 'http://127.0.0.1:$SP/metrics' | grep -q '^bedtop_warning{route=\"sonnet\",.*UNSEEN_CALLERS'"
# metrics requested by serve: every MetricStat (an expression such as SUM([...]) is no
# metric), and for a Metrics Insights query the series it read (input: the ARN, haiku, nova-lite, sonnet = 4; throttles: haiku = 1);
# the fake's log before and after the scrape brackets what serve counted
fake_metrics() { # prints: all metrics, of which Metrics Insights series
    python3 -c '
import json, sys
n = ins = 0
for line in open(sys.argv[1]).readlines()[int(sys.argv[2]):]:
    r = json.loads(line)
    if r.get("op") == "GetMetricData" and isinstance(r.get("body"), dict):
        n += r.get("insights_series", 0) + sum("MetricStat" in q for q in r["body"].get("MetricDataQueries") or [])
        ins += r.get("insights_series", 0)
print(n, ins)' "$TMP/fake.log" "$N0"
}
read -r lo ins <<<"$(fake_metrics)"
got=$(curl -s -m 5 "http://127.0.0.1:$SP/metrics" | awk '/^bedtop_cloudwatch_metrics_requested_total /{print $2}')
read -r hi _ <<<"$(fake_metrics)"
echo "# metrics requested: the fake saw $lo..$hi ($ins Metrics Insights series), serve counted $got"
expect_eq "the Metrics Insights queries read 5 series (4 ModelIds with input tokens, 1 with throttles)" "$ins" 5
check "serve counts them with every other metric requested (fake's count before <= serve's <= after)" \
    bash -c "[ '${got:-0}' -ge '$lo' ] && [ '${got:-0}' -le '$hi' ] && [ '$lo' -gt 0 ]"
finish
