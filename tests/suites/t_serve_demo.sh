#!/usr/bin/env bash
# bedtop serve --demo: the Prometheus path tried without AWS (issue 22). The demo's
# figures are served on /metrics, every series labelled mode="demo" so simulated
# figures never pass for real ones, and promtool accepts the exposition.
. "$BEDTOP_SRCDIR/tests/lib.sh"
if ! command -v promtool >/dev/null || ! command -v curl >/dev/null; then
    skip "promtool and curl are needed (BEDTOP_TEST_DEPS=1 scripts/deps)"
    finish; exit
fi
get() { curl -s --max-time 5 "$@"; }
SP=$(free_port)
"$BEDTOP" serve --demo --listen "127.0.0.1:$SP" >"$TMP/serve.out" 2>"$TMP/serve.err" &
SERVE_PID=$!
CLEANUP+=("kill $SERVE_PID")
up() { get "http://127.0.0.1:$SP/metrics" | grep -q '^bedtop_route_status{route="triage"'; }
ok_up=1
for i in $(seq 1 100); do up && { ok_up=0; break; }; sleep 0.1; done
check "serve --demo answers /metrics with the demo's routes" test "$ok_up" -eq 0
check "... and says it serves the simulated demo" grep -q "simulated demo routes" "$TMP/serve.err"
get "http://127.0.0.1:$SP/metrics" >"$TMP/m.prom"
check "promtool check metrics accepts /metrics" bash -c "promtool check metrics <'$TMP/m.prom'"
get -H 'Accept: application/openmetrics-text; version=1.0.0' "http://127.0.0.1:$SP/metrics" >"$TMP/m.om"
check "... and the OpenMetrics form ends with # EOF" bash -c "tail -1 '$TMP/m.om' | grep -q '^# EOF'"
samples=$(grep -vc '^#' "$TMP/m.prom")
labelled=$(grep -v '^#' "$TMP/m.prom" | grep -c 'mode="demo"')
check "/metrics has samples ($samples)" test "$samples" -gt 50
expect_eq "every sample is labelled mode=\"demo\"" "$labelled" "$samples"
# every demo route (collectors/demo.c: 13), each with a status, as many as check lists
nroutes=$("$BEDTOP" check --demo --format json | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["routes"]))')
expect_eq "the demo's $nroutes routes (check --demo) each have a status" \
    "$(grep -c '^bedtop_route_status{route=' "$TMP/m.prom")" "$nroutes"
check "/healthz answers 200 on the demo" get -f "http://127.0.0.1:$SP/healthz"
kill "$SERVE_PID"; wait "$SERVE_PID" 2>/dev/null
# check --demo -f prometheus labels its series the same way; live output does not
"$BEDTOP" check --demo-at 16 -f prometheus >"$TMP/c.prom" 2>/dev/null
expect_eq "check --demo -f prometheus: every sample labelled mode=\"demo\" too" \
    "$(grep -v '^#' "$TMP/c.prom" | grep -vc 'mode="demo"')" 0

# The fleet path on the demo (issue 34): serve --demo runs the story on the wall clock,
# so its data minutes are now's (CloudWatch's simulated 3 minute lag: within 10 minutes
# of the wall clock, not 2026-11-29), the real Prometheus stores what it scrapes, and
# check --source reads every route back fresh, each headroom as serve's /metrics has it.
if ! command -v prometheus >/dev/null; then
    skip "prometheus (Debian package) is needed for serve --demo -> Prometheus -> check --source"
    finish; exit
fi
SP=$(free_port)
"$BEDTOP" serve --demo --listen "127.0.0.1:$SP" >"$TMP/serve2.out" 2>"$TMP/serve2.err" &
SERVE_PID=$!
CLEANUP+=("kill $SERVE_PID")
for i in $(seq 1 100); do up && break; sleep 0.1; done
stamp=$(get "http://127.0.0.1:$SP/metrics" |
        awk '/^bedtop_data_timestamp_seconds\{route="triage".*source="cloudwatch"/ {print $2}')
wall=$(date +%s)
check "serve --demo: triage's data minute is the wall clock's ($stamp, now $wall)" \
    bash -c '[ -n "$1" ] && [ "$1" -le "$2" ] && [ $(($2 - $1)) -le 600 ]' _ "${stamp%.*}" "$wall"
PP=$(free_port)
mkdir -p "$TMP/prom" "$TMP/noconf"
printf 'global:\n  scrape_interval: 1s\nscrape_configs:\n  - job_name: bedtop\n    static_configs:\n      - targets: ["127.0.0.1:%s"]\n' \
    "$SP" >"$TMP/prom/prometheus.yml"
prometheus --config.file="$TMP/prom/prometheus.yml" --storage.tsdb.path="$TMP/prom/data" \
    --web.listen-address="127.0.0.1:$PP" >"$TMP/prom.log" 2>&1 &
CLEANUP+=("kill $!")
PROM=http://127.0.0.1:$PP
ready=1
for i in $(seq 1 300); do get -f "$PROM/-/ready" >/dev/null 2>&1 && { ready=0; break; }; sleep 0.2; done
check "Prometheus is ready" test "$ready" -eq 0
cat >"$TMP/fresh.py" <<'PY'
import json, re, sys
routes = json.load(open(sys.argv[1]))["routes"]
ratio = {}
for line in open(sys.argv[2]):
    m = re.match(r'bedtop_headroom_ratio\{route="([^"]+)".*\} (\S+)$', line)
    if m:
        ratio[m.group(1)] = float(m.group(2))
stale = [r["name"] for r in routes if r["stale"]]
differ = [(r["name"], r["headroom_pct"], ratio.get(r["name"])) for r in routes
          if r["headroom_pct"] is not None and
          abs(r["headroom_pct"] - 100 * ratio.get(r["name"], -1)) > 0.051]
print("# %d routes, stale %s, headroom differing %s" % (len(routes), stale, differ))
sys.exit(0 if len(routes) == int(sys.argv[3]) and not stale and not differ and ratio else 1)
PY
# serve evaluates once a poll: after a minute boundary the two agree again within a poll
fresh() {
    XDG_CONFIG_HOME=$TMP/noconf "$BEDTOP" check --format json --source "prometheus+$PROM" \
        >"$TMP/src.json" 2>"$TMP/src.err" || [ -s "$TMP/src.json" ] || return 1
    get "http://127.0.0.1:$SP/metrics" >"$TMP/now.prom"
    python3 "$TMP/fresh.py" "$TMP/src.json" "$TMP/now.prom" "$nroutes"
}
ok_fresh=1
for i in $(seq 1 60); do fresh >"$TMP/fresh.out" 2>&1 && { ok_fresh=0; break; }; sleep 1; done
cat "$TMP/fresh.out"
check "check --source reading Prometheus that scrapes serve --demo: $nroutes routes, none stale, serve's headroom" \
    test "$ok_fresh" -eq 0
finish
