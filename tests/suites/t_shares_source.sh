#!/usr/bin/env bash
# Issue 35, who holds the quota, read back from Prometheus: `bedtop serve` exports the
# team (and tag) shares as bedtop_share_used_tokens_per_minute{group,by,name}, the real
# Prometheus (Debian package prometheus) scrapes it every second, and `bedtop check
# --source prometheus+http://...` must show the same team shares (core derives them
# from the series read back: collectors/prom_collect.c, core/shares.c), not
# "unattributed" for the whole group (what it showed before: no per-series reading
# comes through bedtop_signal).
#
# By hand (the numbers of t_shares.sh, serve's scrapes 2 s apart): chat uses 600,000
# (CloudWatch) + 32,000 held = 632,000 a minute; search about 324,000 (51 %), ads about
# 128,000 (20 %), unattributed the rest (about 180,000). The values compared are serve's
# own, rounded to a token as it exports them: check --source gives each team serve's
# value (within 1 token), the rest of the route's use unattributed (within 2), and the
# team shares sum to the use.
. "$BEDTOP_SRCDIR/tests/lib.sh"
AWS_ENV+=(BEDTOP_DATADIR="$BEDTOP_SRCDIR/data")
get() { curl -s -m 5 "$@"; }
wait_for() { # wait_for SECONDS CMD...
    local n=$(($1 * 5)) i; shift
    for i in $(seq 1 "$n"); do "$@" && return 0; sleep 0.2; done
    return 1
}
if ! command -v prometheus >/dev/null; then
    skip "prometheus is not installed (BEDTOP_TEST_DEPS=1 scripts/deps)"
    finish
    exit
fi

python3 "$BEDTOP_SRCDIR/tests/fake/admission_server.py" >"$TMP/adm.port" 2>"$TMP/adm.err" &
CLEANUP+=("kill $!")
for _ in $(seq 50); do [ -s "$TMP/adm.port" ] && break; sleep 0.1; done
APORT=$(head -n 1 "$TMP/adm.port")
[ -n "$APORT" ] || { notok "fake admission server did not start"; finish; exit; }
haiku_scenario "$TMP/scenario.json" $(($(date +%s) - 7200)) 100 600000 0
start_fake fake --scenario "$TMP/scenario.json" || notok "fake AWS started"
FAKE=$PORT

cat >"$TMP/shares.conf" <<EOF
[bedtop]
region = us-east-1
adaptive_cadence = no

[route chat]
model = anthropic.claude-3-haiku-20240307-v1:0
max_tokens = 1000
admission = http://127.0.0.1:$APORT/teams/chat
EOF
SP=$(free_port)
"${AWS_ENV[@]}" "$BEDTOP" serve --listen "127.0.0.1:$SP" --config "$TMP/shares.conf" \
    --endpoint-url "http://127.0.0.1:$FAKE" --interval 2 >/dev/null 2>"$TMP/serve.err" &
CLEANUP+=("kill $!")
serve_teams() { get "http://127.0.0.1:$SP/metrics" | grep -q '^bedtop_share_used_tokens_per_minute{.*by="team",name="search"}'; }
check "serve exports chat's team shares" wait_for 30 serve_teams

# by tag (t_tags.sh's fixture, by hand there): two application profiles on Claude 3
# Haiku tagged team=search and team=ads, one quota group of 126,400 a minute: search
# 101,100 (79.98 %), ads 25,300 (20.02 %); no admission, so the shares go back to the
# group's CloudWatch minute. The reader makes no AWS call: no tag is read but serve's.
HAIKU=anthropic.claude-3-haiku-20240307-v1:0
S=arn:aws:bedrock:us-east-1:123456789012:application-inference-profile/search01
A=arn:aws:bedrock:us-east-1:123456789012:application-inference-profile/ads01
python3 - "$TMP/tags.json" "$S" "$A" "$(date +%s)" <<'PY'
import json, sys
out, s, a, now = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
def ser(model, metric, v, stat="Sum"):
    return {"namespace": "AWS/Bedrock", "metric": metric, "stat": stat, "start": now - 7200,
            "dimensions": {"ModelId": model}, "generator": {"constant": v}}
series = [ser(s, "Invocations", 10), ser(s, "InputTokenCount", 100000),
          ser(s, "InvocationLatency", 600, "Average"),
          ser(a, "Invocations", 5), ser(a, "InputTokenCount", 25000),
          ser(a, "InvocationLatency", 600, "Average")]
json.dump({"series": series, "quotas": [{"QuotaCode": "L-HAIKUOD", "Value": 1000000,
           "QuotaName": "On-demand model inference tokens per minute for Anthropic Claude 3 Haiku"}],
           "tags": {s: {"team": "search", "env": "prod"}, a: {"team": "ads"}}}, open(out, "w"))
PY
start_fake tagfake --scenario "$TMP/tags.json" || notok "fake AWS (tags) started"
TFAKE=$PORT
cat >"$TMP/tags.conf" <<EOF
[bedtop]
region = us-east-1
attribute_by = tag:team
adaptive_cadence = no

[route search]
model = $S
base_model = $HAIKU
max_tokens = 1000

[route ads]
model = $A
base_model = $HAIKU
max_tokens = 1000
EOF
TP=$(free_port)
"${AWS_ENV[@]}" XDG_CACHE_HOME="$TMP/tagcache" "$BEDTOP" serve --listen "127.0.0.1:$TP" \
    --config "$TMP/tags.conf" --endpoint-url "http://127.0.0.1:$TFAKE" --interval 2 \
    >/dev/null 2>"$TMP/tserve.err" &
CLEANUP+=("kill $!")
serve_tags() { get "http://127.0.0.1:$TP/metrics" | grep -q '^bedtop_share_used_tokens_per_minute{.*by="tag",name="search"}'; }
check "serve exports the profiles' tag shares" wait_for 30 serve_tags

PP=$(free_port)
mkdir -p "$TMP/prom"
cat >"$TMP/prom/prometheus.yml" <<EOF
global:
  scrape_interval: 1s
scrape_configs:
  - job_name: bedtop
    static_configs:
      - targets: ["127.0.0.1:$SP", "127.0.0.1:$TP"]
EOF
prometheus --config.file="$TMP/prom/prometheus.yml" --storage.tsdb.path="$TMP/prom/data" \
    --web.listen-address="127.0.0.1:$PP" >"$TMP/prom.log" 2>&1 &
CLEANUP+=("kill $!")
PROM=http://127.0.0.1:$PP
check "Prometheus is ready" wait_for 60 get -f "$PROM/-/ready"
scraped() {
    get "$PROM/api/v1/query" --data-urlencode 'query=count_over_time(bedtop_share_used_tokens_per_minute{by="team",name="search"}[1m])' |
        python3 -c 'import json,sys; r=json.load(sys.stdin)["data"]["result"]; sys.exit(0 if r and float(r[0]["value"][1]) >= 3 else 1)'
}
check "Prometheus holds serve's team shares" wait_for 60 scraped

# check --source's shares by team against what Prometheus holds now (serve's latest)
same() {
    get "$PROM/api/v1/query" --data-urlencode 'query=bedtop_share_used_tokens_per_minute{by="team"}' \
        >"$TMP/prom.json"
    "$BEDTOP" check --format json --config "$TMP/shares.conf" --source "prometheus+$PROM" \
        >"$TMP/src.json" 2>"$TMP/src.err"
    python3 - "$TMP/prom.json" "$TMP/src.json" >"$TMP/same.txt" <<'PY'
import json, sys
prom = {s["metric"]["name"]: float(s["value"][1])
        for s in json.load(open(sys.argv[1]))["data"]["result"]}
route = json.load(open(sys.argv[2]))["routes"][0]
got = {s["name"]: s for s in route["shares"] if s["by"] == "team"}
used = route["tpm"]["used"]
print("# prometheus", prom)
print("# check --source", {k: (s["used"], s["source"]) for k, s in got.items()}, "used", used)
named = {k: v for k, v in prom.items() if k != "unattributed"}
bad = []
if set(named) != set(got) - {"unattributed"}:
    bad.append("names differ")
for k, v in named.items():
    if k in got and (got[k]["used"] is None or abs(got[k]["used"] - v) > 1 or got[k]["source"] != "prometheus"):
        bad.append(k)
if "unattributed" in prom and abs(got.get("unattributed", {}).get("used", -1e9) - prom["unattributed"]) > 2:
    bad.append("unattributed")
if abs(sum(s["used"] for s in got.values()) - used) > 1.5:
    bad.append("sum")
print("# differences:", bad)
sys.exit(1 if bad or not named else 0)
PY
}
if wait_for 20 same; then ok "check --source: the team shares serve exported (search, ads, unattributed)"
else notok "check --source: the team shares serve exported (search, ads, unattributed)"; fi
sed 's/^/#   /' "$TMP/same.txt"
expect_eq "... search and ads named, largest first, then unattributed" \
    "$(python3 -c 'import json,sys; print([s["name"] for s in json.load(open(sys.argv[1]))["routes"][0]["shares"] if s["by"] == "team"])' "$TMP/src.json")" \
    "['search', 'ads', 'unattributed']"
"$BEDTOP" check --by team --config "$TMP/shares.conf" --source "prometheus+$PROM" >"$TMP/by.txt" 2>&1
sed 's/^/#   /' "$TMP/by.txt"
check "check --by team --source: search first, from prometheus" \
    bash -c "sed -n 2p '$TMP/by.txt' | grep -Eq '^chat +L-TEST1 +team +search +3[0-9.]+k +5[0-9]\\.[0-9]% +known +prometheus'"

# by tag: serve's tag shares, read back (the reader asks AWS for no tag)
tag_same() {
    "$BEDTOP" check --format json --config "$TMP/tags.conf" --source "prometheus+$PROM" \
        >"$TMP/tsrc.json" 2>"$TMP/tsrc.err"
    python3 -c '
import json, sys
r = {x["name"]: x for x in json.load(open(sys.argv[1]))["routes"]}["search"]
t = [(s["name"], s["used"], s["source"]) for s in r["shares"] if s["by"] == "tag"]
print("# by tag from prometheus", t, "used", r["tpm"]["used"])
sys.exit(0 if t == [("search", 101100, "prometheus"), ("ads", 25300, "prometheus")] else 1)' "$TMP/tsrc.json"
}
if wait_for 20 tag_same; then ok "check --source: by tag, search 101,100 and ads 25,300 as serve exported"
else tag_same; notok "check --source: by tag, search 101,100 and ads 25,300 as serve exported"; fi
"$BEDTOP" check --by tag:team --config "$TMP/tags.conf" --source "prometheus+$PROM" >"$TMP/tby.txt" 2>&1
sed 's/^/#   /' "$TMP/tby.txt"
check "check --by tag:team --source: search first, 80.0 %, from prometheus" \
    bash -c "sed -n 2p '$TMP/tby.txt' | grep -Eq '^search +L-HAIKUOD +tag +search +101k +80\\.0% +[a-z-]+ +prometheus'"

# a recording of --source keeps the readings: its replay derives the same team shares
"$BEDTOP" record "$TMP/src.rec" --config "$TMP/shares.conf" --source "prometheus+$PROM" \
    --duration 5s >/dev/null 2>"$TMP/rec.err"
check "record --source writes the team readings" grep -q '__share=' "$TMP/src.rec"
"$BEDTOP" replay "$TMP/src.rec" --at -0m --format json >"$TMP/rep.json" 2>"$TMP/rep.err"
sed 's/^/#   /' "$TMP/rep.err" | head -3
expect_eq "replay of record --source: search and ads from prometheus, then unattributed" \
    "$(python3 -c 'import json,sys; print([(s["name"], s["source"]) for s in json.load(open(sys.argv[1]))["routes"][0]["shares"] if s["by"] == "team"])' "$TMP/rep.json" 2>&1)" \
    "[('search', 'prometheus'), ('ads', 'prometheus'), ('unattributed', 'unattributed')]"
finish
