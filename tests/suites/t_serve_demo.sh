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
finish
