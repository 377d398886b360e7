#!/usr/bin/env bash
# The fleet shape end to end with real parts: the fake AWS endpoint, `bedtop serve`,
# and the real Prometheus server (Debian package prometheus) started here on
# 127.0.0.1 with a temporary data directory, a 1 s scrape interval and the alert
# rules of examples/prometheus (a test copy with for: 0s). Then `bedtop check
# --source prometheus+http://...` must equal `bedtop check` against the fake.
#
# Scenario tests/fake/scenario_fleet.json, config tests/fake/fleet.conf; by hand:
# triage: us.anthropic.claude-sonnet-4-5 (cross-region), burndown 5, max_tokens 1024, quota 2,000,000
#   settled  = 300,000 + 20,000 + 50,000 x 5                    = 570,000
#   R        = (300,000 + 80,000 + 20,000) / 100 + 1,024        = 5,024 per call
#   in flight (Little's law) = 100 / 60 x 0.9 s                  = 1.5; held = 1.5 x 5,024 = 7,536
#   EstimatedTPMQuotaUsage 570,000: measures (570,000 - 300,000 - 20,000) / 50,000 = 5
#   used     = max(570,000, 570,000) + 7,536                    = 577,536
#   headroom = 2,000,000 - 577,536                              = 1,422,464 (71.1 %), ok
# hot: anthropic.claude-3-haiku on-demand, burndown 5 (every Anthropic model of 4.7 and
#   below), max_tokens 500, applied quota 1,000,000
#   settled  = 920,000 + 10,000 x 5         = 970,000 (the estimate 970,000 agrees)
#   no latency, so calls in flight are unknown: the per-minute bound
#   reserved = 100 x (920,000 / 100 + 500)  = 970,000
#   used     = max(970,000, 970,000, 970,000) = 970,000 (upper bound)
#   headroom = 30,000 -> 3.0 % < crit 5 %   -> LOW_HEADROOM crit, status crit
#   throttles 5/min while the estimate 970,000 < 1,000,000 -> THROTTLED_BELOW_ESTIMATE
# agents: mantle, quotas 20M in / 4M out (config); output 30,000 of 4,000,000 -> 3,970,000 left
#   (99.25 %), the input side has more left: output binds
. "$BEDTOP_SRCDIR/tests/lib.sh"
CONF=$BEDTOP_SRCDIR/tests/fake/fleet.conf
ALERTS=$BEDTOP_SRCDIR/examples/prometheus/bedtop-alerts.yml

# an array, not a function: `"${AWS_ENV[@]}" bedtop ... &` makes $! bedtop itself
# (env execs it), so kill and kill -HUP reach it rather than a subshell
AWS_ENV+=(BEDTOP_DATADIR="$BEDTOP_SRCDIR/data") # tests/lib.sh: the example keys, nothing else of AWS
# http GET with a bound; prints the body
get() { curl -sS -m 10 "$@"; }
# wait_for SECONDS CMD...: retries CMD every 0.2 s
wait_for() {
    local n=$(($1 * 5)); shift
    for _ in $(seq 1 "$n"); do "$@" >/dev/null 2>&1 && return 0; sleep 0.2; done
    return 1
}

# ---- the rules and the scrape config, with the real promtool ----
if ! command -v promtool >/dev/null || ! command -v prometheus >/dev/null; then
    echo "# prometheus/promtool not installed (BEDTOP_TEST_DEPS=1 scripts/deps)"
    notok "prometheus and promtool are installed (skipped: not passed)"
    finish; exit
fi
check "promtool check rules examples/prometheus/bedtop-alerts.yml" promtool check rules "$ALERTS"
check "promtool test rules (tests/prometheus/bedtop-alerts.test.yml)" \
    promtool test rules "$BEDTOP_SRCDIR/tests/prometheus/bedtop-alerts.test.yml"
check "promtool check config examples/prometheus/prometheus.yml" \
    promtool check config "$BEDTOP_SRCDIR/examples/prometheus/prometheus.yml"
# the Alertmanager route (Debian's prometheus-alertmanager ships amtool)
AM=$BEDTOP_SRCDIR/examples/prometheus/alertmanager.yml
if command -v amtool >/dev/null; then
    check "amtool check-config examples/prometheus/alertmanager.yml" amtool check-config "$AM"
    am_route() { amtool config routes test --config.file="$AM" "$@" 2>/dev/null; }
    expect_eq "a critical headroom alert pages (receiver capacity-oncall)" \
        "$(am_route alertname=BedtopHeadroomCritical severity=critical route=hot region=us-east-1)" capacity-oncall
    expect_eq "a warning goes to the chat (capacity-chat)" \
        "$(am_route alertname=BedtopThrottledBelowEstimate severity=warning route=hot)" capacity-chat
    expect_eq "a poller down pages, whatever its severity says" \
        "$(am_route alertname=BedtopPollerDown severity=warning instance=p:9464)" capacity-oncall
else
    notok "amtool (Debian prometheus-alertmanager, BEDTOP_TEST_DEPS=1 scripts/deps) checks alertmanager.yml (skipped: not passed)"
fi

# ---- bedtop serve against the fake ----
start_fake fake --scenario "$BEDTOP_SRCDIR/tests/fake/scenario_fleet.json" || notok "fake AWS started"
FAKE=$PORT
SP=$(free_port)
# every route every poll: the adaptive cadence would poll a calm route (triage) every 5
# minutes, and check --source compares serve's minute with a direct check's
sed 's/^\[bedtop\]$/[bedtop]\nadaptive_cadence = no/' "$CONF" >"$TMP/serve.conf"
"${AWS_ENV[@]}" "$BEDTOP" serve --listen "127.0.0.1:$SP" --config "$TMP/serve.conf" \
    --endpoint-url "http://127.0.0.1:$FAKE" --interval 5 --record "$TMP/serve.rec" \
    >"$TMP/serve.out" 2>"$TMP/serve.err" &
SERVE_PID=$!
CLEANUP+=("kill $SERVE_PID")
has_route_data() { get "http://127.0.0.1:$SP/metrics" | grep -q '^bedtop_headroom_ratio{route="hot"'; }
check "serve answers /healthz" wait_for 20 get -f "http://127.0.0.1:$SP/healthz"
check "serve has evaluated the routes" wait_for 30 has_route_data
get "http://127.0.0.1:$SP/metrics" >"$TMP/m.prom"
check "/metrics passes promtool check metrics" bash -c "promtool check metrics <'$TMP/m.prom'"
check "no NaN sample" bash -c "! grep -qi ' nan$' '$TMP/m.prom'"
for name in bedtop_headroom_tokens_per_minute bedtop_headroom_ratio bedtop_used_tokens_per_minute \
            bedtop_quota_tokens_per_minute bedtop_fits_more_calls bedtop_route_status bedtop_warning \
            bedtop_data_age_seconds bedtop_signal bedtop_cloudwatch_metrics_requested_total \
            bedtop_api_requests_total; do
    check "/metrics has $name samples" grep -q "^$name{\\|^$name " "$TMP/m.prom"
done
check "/metrics: HELP and TYPE of bedtop_held_tokens" grep -q '^# TYPE bedtop_held_tokens gauge' "$TMP/m.prom"
expect_eq "hot: headroom 30,000 TPM, ratio 0.03, status 2 (crit)" \
    "$(grep -E '^bedtop_(headroom_tokens_per_minute|headroom_ratio|route_status)\{route="hot"' "$TMP/m.prom" | awk '{print $2}' | tr '\n' ' ')" \
    "30000 0.03 2 "
check "route labels: route, model_id, region, endpoint, inference, quota_group; then the figure's side" \
    grep -q '^bedtop_used_tokens_per_minute{route="hot",model_id="anthropic.claude-3-haiku-20240307-v1:0",region="us-east-1",endpoint="runtime",inference="on-demand",quota_group="us-east-1|runtime|code=L-HAIKUOD",side="tpm"} 970000$' "$TMP/m.prom"
check "quota with its source, code and how it was matched" \
    grep -q '^bedtop_quota_tokens_per_minute{route="hot",.*kind="tpm",source="service-quotas",code="L-HAIKUOD",name="On-demand model inference tokens per minute for Anthropic Claude 3 Haiku",matched_by="name"} 1000000$' "$TMP/m.prom"
check "warning with code and severity" \
    grep -q '^bedtop_warning{route="hot",.*code="THROTTLED_BELOW_ESTIMATE",severity="warn"} 1$' "$TMP/m.prom"
check "raw signal input_tokens of hot" grep -q '^bedtop_signal{route="hot",.*signal="input_tokens"} 920000$' "$TMP/m.prom"
check "GetMetricData counted as successful requests" \
    grep -qE '^bedtop_api_requests_total\{api="GetMetricData",outcome="success"\} [1-9]' "$TMP/m.prom"
# metrics requested = the MetricDataQueries of every GetMetricData the fake received:
# its log before and after the scrape brackets what bedtop counted
fake_metrics() {
    python3 -c '
import json, sys
n = 0
for line in open(sys.argv[1]):
    r = json.loads(line)
    if r.get("op") == "GetMetricData" and isinstance(r.get("body"), dict):
        # billed: every MetricStat (an expression is no metric), and for a Metrics
        # Insights query (unseen callers) the series it read
        n += r.get("insights_series", 0) + sum("MetricStat" in q for q in r["body"].get("MetricDataQueries") or [])
print(n)' "$TMP/fake.log"
}
lo=$(fake_metrics)
got=$(get "http://127.0.0.1:$SP/metrics" | awk '/^bedtop_cloudwatch_metrics_requested_total /{print $2}')
hi=$(fake_metrics)
echo "# metrics requested: the fake saw $lo..$hi, bedtop counted $got"
check "bedtop_cloudwatch_metrics_requested_total equals the queries the fake received" \
    bash -c "[ '${got:-0}' -gt 0 ] && [ '$lo' -le '${got:-0}' ] && [ '${got:-0}' -le '$hi' ]"
check "metrics requested per minute, per day and their price exported" \
    bash -c "grep -q '^bedtop_cloudwatch_metrics_requested_per_minute ' '$TMP/m.prom' && grep -q '^bedtop_cloudwatch_metrics_requested_per_day ' '$TMP/m.prom' && grep -q '^bedtop_cloudwatch_cost_usd_per_day ' '$TMP/m.prom'"

# content negotiation, gzip, errors, bounds
get -D "$TMP/om.h" -H 'Accept: application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5' \
    "http://127.0.0.1:$SP/metrics" >"$TMP/m.om"
check "OpenMetrics by Accept: content type" grep -qi '^Content-Type: application/openmetrics-text; version=1.0.0' "$TMP/om.h"
expect_eq "OpenMetrics ends with # EOF" "$(tail -n 1 "$TMP/m.om")" "# EOF"
check "OpenMetrics counter family without _total, sample with it" \
    bash -c "grep -q '^# TYPE bedtop_api_requests counter' '$TMP/m.om' && grep -q '^bedtop_api_requests_total{' '$TMP/m.om'"
get -D "$TMP/gz.h" -H 'Accept-Encoding: gzip' "http://127.0.0.1:$SP/metrics" >"$TMP/m.gz"
check "gzip when asked: Content-Encoding" grep -qi '^Content-Encoding: gzip' "$TMP/gz.h"
check "gzip body inflates to the exposition" bash -c "gzip -dc '$TMP/m.gz' | grep -q '^bedtop_route_status{route=\"hot\"'"
expect_eq "404 for an unknown path" "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$SP/nope")" 404
expect_eq "405 for POST" "$(curl -s -o /dev/null -w '%{http_code}' -X POST -d x "http://127.0.0.1:$SP/metrics")" 405
expect_eq "431 for a request head over 8 KiB" \
    "$(curl -s -o /dev/null -w '%{http_code}' -H "X-Big: $(head -c 9000 /dev/zero | tr '\0' a)" "http://127.0.0.1:$SP/metrics")" 431
expect_rc "a second serve on the same port fails with exit 3" 3 \
    "${AWS_ENV[@]}" "$BEDTOP" serve --listen "127.0.0.1:$SP" --config "$CONF" --endpoint-url "http://127.0.0.1:$FAKE"
check "... saying why" grep -q 'bedtop: serve: --listen .*ddress already in use' "$TMP/last.err"
expect_rc "--listen with a bad port fails with exit 3" 3 \
    "${AWS_ENV[@]}" "$BEDTOP" serve --listen "127.0.0.1:http" --config "$CONF" --endpoint-url "http://127.0.0.1:$FAKE"

# ---- the real Prometheus: scrape serve every second, evaluate the rules every second ----
PP=$(free_port)
mkdir -p "$TMP/prom"
sed 's/^\( *\)for: .*/\1for: 0s/' "$ALERTS" >"$TMP/prom/alerts.yml"
cat >"$TMP/prom/prometheus.yml" <<EOF
global:
  scrape_interval: 1s
  evaluation_interval: 1s
rule_files: [alerts.yml]
scrape_configs:
  - job_name: bedtop
    static_configs:
      - targets: ["127.0.0.1:$SP"]
EOF
prometheus --config.file="$TMP/prom/prometheus.yml" --storage.tsdb.path="$TMP/prom/data" \
    --web.listen-address="127.0.0.1:$PP" >"$TMP/prom.log" 2>&1 &
CLEANUP+=("kill $!")
PROM=http://127.0.0.1:$PP
check "Prometheus is ready" wait_for 60 get -f "$PROM/-/ready"
scraped() { # at least 3 scrapes of serve stored
    get "$PROM/api/v1/query" --data-urlencode 'query=count_over_time(bedtop_status[1m])' |
        python3 -c 'import json,sys; r=json.load(sys.stdin)["data"]["result"]; sys.exit(0 if r and float(r[0]["value"][1]) >= 3 else 1)'
}
check "Prometheus scraped bedtop serve a few times" wait_for 60 scraped
# Prometheus asks for OpenMetrics first: its own parser accepted what serve sent
expect_eq "Prometheus's scrape of serve is healthy (up 1, no sample rejected)" \
    "$(get "$PROM/api/v1/query" --data-urlencode 'query=up{job="bedtop"} + scrape_samples_post_metric_relabeling*0' |
       python3 -c 'import json,sys; print(json.load(sys.stdin)["data"]["result"][0]["value"][1])')" 1

# every PromQL expression of the Grafana dashboard returns series from this Prometheus
# ($region and $route as "All" selects them, $__rate_interval as 1m: 60 scrapes here)
python3 - "$BEDTOP_SRCDIR/examples/grafana/bedtop.json" "$PROM" >"$TMP/grafana.txt" 2>&1 <<'PY'
import json, sys, urllib.parse, urllib.request
dash = json.load(open(sys.argv[1]))
prom = sys.argv[2]
def query(expr):
    url = prom + "/api/v1/query?" + urllib.parse.urlencode({"query": expr})
    with urllib.request.urlopen(url, timeout=10) as r:
        return json.load(r)["data"]["result"]
problems, n, ids = [], 0, set()
def walk(panels):
    for p in panels:
        yield p
        yield from walk(p.get("panels", []))
for p in walk(dash["panels"]):
    if p["id"] in ids:
        problems.append("panel id %d twice" % p["id"])
    ids.add(p["id"])
    g = p["gridPos"]
    if g["x"] < 0 or g["x"] + g["w"] > 24:
        problems.append("%s: outside the 24 columns" % p["title"])
    if p["type"] == "row":
        continue
    if p.get("datasource", {}).get("uid") != "${datasource}":
        problems.append("%s: not on the $datasource variable" % p["title"])
    refs = [t["refId"] for t in p["targets"]]
    if not refs or len(set(refs)) != len(refs):
        problems.append("%s: targets without distinct refIds" % p["title"])
    for t in p["targets"]:
        expr = (t["expr"].replace("$region", ".*").replace("$route", ".*")
                .replace("$__rate_interval", "1m"))
        n += 1
        if "$" in expr:
            problems.append("%s: unknown variable in %s" % (p["title"], expr))
            continue
        try:
            got = query(expr)
        except Exception as e:
            problems.append("%s: %s: %s" % (p["title"], expr, e))
            continue
        if not got:
            problems.append("%s: no series for %s" % (p["title"], expr))
for v in dash["templating"]["list"]:
    if v["type"] == "query":
        q = v["query"]["query"].replace('=~"$region"', '=~".*"')
        metric = q[len("label_values("):-1].rsplit(",", 1)
        url = prom + "/api/v1/label/%s/values?" % metric[1].strip() + urllib.parse.urlencode({"match[]": metric[0]})
        with urllib.request.urlopen(url, timeout=10) as r:
            if not json.load(r)["data"]:
                problems.append("variable %s: no values" % v["name"])
print(n, len(ids))
for x in problems:
    print("#", x)
PY
read -r NEXPR NPANELS _ <"$TMP/grafana.txt"
sed -n '2,$p' "$TMP/grafana.txt"
check "examples/grafana/bedtop.json: the $NEXPR expressions of its $NPANELS panels all return series from the real Prometheus" \
    bash -c "[ '${NEXPR:-0}' -ge 15 ] && [ \$(wc -l <'$TMP/grafana.txt') -eq 1 ]"
covers() {
    local m
    for m in bedtop_side_headroom_ratio bedtop_held_tokens 'signal=\"throttles' bedtop_warning \
             bedtop_data_age_seconds bedtop_cloudwatch_cost_usd_per_day bedtop_api_requests_total; do
        grep -qF -- "$m" "$BEDTOP_SRCDIR/examples/grafana/bedtop.json" || { echo "# no panel on $m"; return 1; }
    done
}
check "... covering headroom per side, held, throttles, warnings, data age and API cost" covers

# check from Prometheus equals check against the fake: same minute, same numbers
same() {
    "${AWS_ENV[@]}" "$BEDTOP" check --format json --config "$CONF" --endpoint-url "http://127.0.0.1:$FAKE" \
        >"$TMP/direct.json" 2>"$TMP/direct.err"
    "$BEDTOP" check --format json --config "$CONF" --source "prometheus+$PROM" \
        >"$TMP/fromprom.json" 2>"$TMP/fromprom.err"
    echo $? >"$TMP/fromprom.rc"
    python3 - "$TMP/direct.json" "$TMP/fromprom.json" <<'PY'
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
# generated_at: each run's own clock; cost: what the direct poll asked of CloudWatch
# (reading from Prometheus asks nothing)
for d in (a, b):
    d.pop("generated_at", None); d.pop("cost", None)
    # forecast and observed ceiling read the history each source holds (CloudWatch:
    # the hour check fetches; Prometheus: what serve evaluated since it started)
    # the same for the steady burndown's window (the burndown used and its source are
    # the poller's, compared); the catalogue (ListFoundationModels' lifecycle,
    # ListInferenceProfiles' word on the prefix) is read from AWS only, never exported
    for r in d["routes"]:
        r.pop("forecast", None); r.pop("observed_ceiling", None)
        r.pop("burndown_steady", None); r.pop("lifecycle", None)
if a != b:
    for ra, rb in zip(a["routes"], b["routes"]):
        for k in ra:
            if ra[k] != rb.get(k): print("# %s.%s: direct %r, from prometheus %r" % (ra["name"], k, ra[k], rb.get(k)))
    sys.exit(1)
PY
}
# serve evaluates every 5 s: just after a minute boundary its last evaluation may still
# be the previous minute, so the two agree again within one or two polls
if wait_for 30 same; then ok "check --source prometheus equals check against the fake (JSON, same minute)"
else same; notok "check --source prometheus equals check against the fake (JSON, same minute)"; fi
expect_eq "check --source exit code is the status (hot is crit: 2)" "$(cat "$TMP/fromprom.rc")" 2
expect_eq "the minute compared has data" \
    "$(python3 -c 'import json,sys; print(all(r["data_minute"] for r in json.load(open(sys.argv[1]))["routes"]))' "$TMP/fromprom.json")" True

# --match: only the series of matching routes (routes discovered with no config)
mkdir -p "$TMP/noconf"
XDG_CONFIG_HOME=$TMP/noconf "$BEDTOP" check --format json --source "prometheus+$PROM" \
    --match 'route="hot"' >"$TMP/match.json" 2>"$TMP/match.err"
expect_eq "--match route=\"hot\" with no config: one route, hot, same headroom" \
    "$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print([(r["name"], r["headroom_tpm"]) for r in d["routes"]])' "$TMP/match.json" 2>&1)" \
    "[('hot', 30000)]"
expect_rc "--match without --source is an error" 3 "$BEDTOP" check --match 'route="x"' --config "$CONF"

# issue 19: a live recording of --source replays as check --source shows it. With no
# config, max_tokens (500 for hot, 1,024 for triage) and the burndown with its source
# come from the poller's series; they are typed events in the recording, where they
# were config writes the recording never saw (its replay showed max_tokens null).
XDG_CONFIG_HOME=$TMP/noconf "$BEDTOP" record "$TMP/src.rec" --source "prometheus+$PROM" \
    --duration 3s 2>"$TMP/src.err"
check "record --source: the settings are typed events" grep -q '"type":"setting","route":[0-9]*,"source":"quotas","setting":"max_tokens"' "$TMP/src.rec"
XDG_CONFIG_HOME=$TMP/noconf "$BEDTOP" check --format json --source "prometheus+$PROM" >"$TMP/srccheck.json" 2>/dev/null
"$BEDTOP" replay "$TMP/src.rec" --at -0s --format json >"$TMP/srcrep.json" 2>"$TMP/srcrep.err"
settings() {
    python3 -c 'import json,sys; print(sorted((r["name"], r["max_tokens"], r["burndown"], r["burndown_source"]) for r in json.load(open(sys.argv[1]))["routes"]))' "$1" 2>&1
}
expect_eq "replay of record --source: max_tokens and burndown as check --source shows them" \
    "$(settings "$TMP/srcrep.json")" "$(settings "$TMP/srccheck.json")"
expect_eq "... which are the poller's: hot 500 and triage 1,024, both with burndown 5 from the table" \
    "$(settings "$TMP/srcrep.json" | grep -o "('hot', 500, 5, 'table')\|('triage', 1024, 5, 'table')" | wc -l)" 2

# record --since and export read the same series back over a window
"$BEDTOP" record "$TMP/back.rec" --since 5m --config "$CONF" --source "prometheus+$PROM" 2>"$TMP/back.err"
check "record --since --source writes a recording" grep -q 'backfilled [1-9][0-9]* minutes' "$TMP/back.err"
# minutes the short-lived Prometheus holds scrapes for carry data; the rest are empty
hot_rows() {
    python3 -c '
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
print(sorted({(r["headroom_tpm"], r["input_tokens"]) for r in rows if r["input_tokens"]}))' "$1" 2>&1
}
"$BEDTOP" export "$TMP/back.rec" --format csv --route hot >"$TMP/back.csv" 2>/dev/null
expect_eq "the recording holds hot's numbers as polled (headroom 30000, input 920000)" \
    "$(hot_rows "$TMP/back.csv")" "[('30000', '920000')]"
"$BEDTOP" export --source "prometheus+$PROM" --since 5m --config "$CONF" --format csv \
    --route hot >"$TMP/exp.csv" 2>"$TMP/exp.err"
expect_eq "export --source: the same rows straight from Prometheus" "$(hot_rows "$TMP/exp.csv")" \
    "[('30000', '920000')]"
expect_rc "export --source with a FILE is an error" 3 "$BEDTOP" export "$TMP/back.rec" --source "prometheus+$PROM" --since 5m

# the dashboard reads the same from Prometheus (a private tmux server, as t_tui.sh does)
if command -v tmux >/dev/null; then
    SOCK=bedtop-fleet-$$
    CLEANUP+=("tmux -L $SOCK kill-server")
    tmux -L "$SOCK" -f /dev/null new-session -d -s dash -x 160 -y 30 \
        "env TERM=xterm-256color LANG=C.UTF-8 LC_ALL= BEDTOP_DATADIR=$BEDTOP_SRCDIR/data $BEDTOP --config $CONF --source prometheus+$PROM; sleep 30"
    # hot's use is an upper bound (no latency: the per-minute bound), so its headroom is
    # at least 3.0 %: the overview marks it as check does (>3.0)
    dash_hot() { tmux -L "$SOCK" capture-pane -p -t dash | grep -qE '^hot +anthropic.claude-3-haik.* CRIT +>3\.0 '; }
    check "dashboard --source: hot is CRIT at >3.0 % headroom (check's mark)" wait_for 20 dash_hot
    expect_eq "... check --source gives hot's headroom the same quality (lower-bound)" \
        "$(python3 -c 'import json,sys; print({r["name"]: r for r in json.load(open(sys.argv[1]))["routes"]}["hot"]["headroom_quality"])' "$TMP/fromprom.json")" lower-bound
    tmux -L "$SOCK" kill-server
else
    notok "tmux for the dashboard --source check (skipped: not passed)"
fi

# serve --record wrote what it polled
"$BEDTOP" replay "$TMP/serve.rec" --at -0m --format json >"$TMP/serve-rec.json" 2>"$TMP/serve-rec.err"
expect_eq "serve --record: the recording replays to the polled headroom" \
    "$(python3 -c 'import json,sys; print([(r["name"], r["headroom_tpm"]) for r in json.load(open(sys.argv[1]))["routes"]])' "$TMP/serve-rec.json" 2>/dev/null || echo "replay said: $(head -c 300 "$TMP/serve-rec.err"); $(wc -l <"$TMP/serve.rec") lines recorded")" \
    "[('triage', 1422464), ('hot', 30000), ('agents', 3970000)]"

# the critical-headroom alert fires for hot, and only for hot
firing() {
    promtool query instant "$PROM" 'ALERTS{alertname="BedtopHeadroomCritical",alertstate="firing"}' >"$TMP/alerts.txt" 2>&1
    grep -q 'route="hot"' "$TMP/alerts.txt"
}
check "promtool query instant: BedtopHeadroomCritical firing for hot" wait_for 30 firing
check "... and not for triage" bash -c "! grep -q 'route=\"triage\"' '$TMP/alerts.txt'"
tbe() {
    promtool query instant "$PROM" 'ALERTS{alertname="BedtopThrottledBelowEstimate",alertstate="firing"}' 2>&1 |
        grep -q 'route="hot"'
}
check "promtool query instant: BedtopThrottledBelowEstimate firing for hot" wait_for 30 tbe

# SIGHUP reloads the config: a fourth route appears, the process and port stay
sed 's/^\[route agents\]/[route extra]\nmodel = anthropic.claude-3-haiku-20240307-v1:0\n\n[route agents]/' \
    "$CONF" >"$TMP/fleet2.conf"
cp "$CONF" "$TMP/live.conf"
"${AWS_ENV[@]}" "$BEDTOP" serve --listen "127.0.0.1:0" --config "$TMP/live.conf" \
    --endpoint-url "http://127.0.0.1:$FAKE" --interval 5 >/dev/null 2>"$TMP/serve2.err" &
S2=$!
CLEANUP+=("kill $S2")
S2P=
s2port() { S2P=$(sed -n 's#.*listening on http://127.0.0.1:\([0-9]*\)/metrics.*#\1#p' "$TMP/serve2.err"); [ -n "$S2P" ]; }
wait_for 20 s2port
cp "$TMP/fleet2.conf" "$TMP/live.conf"
kill -HUP "$S2"
has_extra() { get "http://127.0.0.1:$S2P/metrics" | grep -q '^bedtop_route_status{route="extra"'; }
check "SIGHUP reloads the config (a new route is served)" wait_for 20 has_extra
check "... by the same process" kill -0 "$S2"
check "... which says so" grep -q 'config reloaded (4 routes)' "$TMP/serve2.err"
# a config that does not load: reported, the previous one kept
printf '[bedtop]\ninterval = soon\n' >"$TMP/live.conf"
kill -HUP "$S2"
bad_reported() { grep -q 'config reload failed' "$TMP/serve2.err"; }
check "SIGHUP with a broken config: the failure is reported" wait_for 20 bad_reported
check "... and the previous config is still served" has_extra
sed "s/^/#   /" "$TMP/serve2.err"

# bounded: 64 connections at once; the next takes the longest-idle one's slot (issue 26 break 5)
expect_eq "65 idle connections: the 65th takes the oldest idle one's place and is answered, then a scrape works again" \
    "$(python3 - "$S2P" <<'PY'
import socket, sys
port = int(sys.argv[1])
idle = [socket.create_connection(("127.0.0.1", port), timeout=5) for _ in range(64)]
import time; time.sleep(0.5)
extra = socket.create_connection(("127.0.0.1", port), timeout=5)
extra.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
first = extra.recv(64).split(b"\r\n")[0].decode()
for s in idle: s.close()
time.sleep(0.5)
again = socket.create_connection(("127.0.0.1", port), timeout=5)
again.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
print(first, "/", again.recv(64).split(b"\r\n")[0].decode())
PY
)" "HTTP/1.1 200 OK / HTTP/1.1 200 OK"
kill "$S2" 2>/dev/null

# ---- a scrape never waits on AWS: every GetMetricData hangs ----
cat >"$TMP/hang.json" <<'EOF'
{"faults": [{"op": "GetMetricData", "nth": 1, "count": 0, "action": "hang", "secs": 60}]}
EOF
python3 -c '
import json, sys
s = json.load(open(sys.argv[1])); s.update(json.load(open(sys.argv[2])))
json.dump(s, open(sys.argv[3], "w"))' "$BEDTOP_SRCDIR/tests/fake/scenario_fleet.json" "$TMP/hang.json" "$TMP/slow.json"
start_fake slow --scenario "$TMP/slow.json"
SLOW=$PORT
S3P=$(free_port)
"${AWS_ENV[@]}" "$BEDTOP" serve --listen "127.0.0.1:$S3P" --config "$CONF" \
    --endpoint-url "http://127.0.0.1:$SLOW" --interval 5 >/dev/null 2>"$TMP/serve3.err" &
CLEANUP+=("kill $!")
check "serve is up while CloudWatch hangs" wait_for 20 get -f "http://127.0.0.1:$S3P/healthz"
hanging() { grep -q '"op": *"GetMetricData"' "$TMP/slow.log"; }
check "a GetMetricData request is hanging at the fake" wait_for 20 hanging
# generous bound (the fake hangs 60 s): the answer comes from the last evaluation
code=$(curl -s -m 5 -o "$TMP/slow.prom" -w '%{http_code}' "http://127.0.0.1:$S3P/metrics")
expect_eq "scrape during a hanging AWS call answers 200 within 5 s" "$code" 200
check "... with the routes, status unknown (3) until data arrives" \
    grep -q '^bedtop_route_status{route="triage".*} 3$' "$TMP/slow.prom"
finish
