#!/usr/bin/env bash
# The cross-model ledger's observed ceiling and its quality (issue 36), through the
# real binary against the fake AWS: the first "Too many tokens per day" minute (every
# runtime route of the Region that was called throttled, each far below its
# per-minute quota) in check's JSON and text, and in report incident; the ledger a
# lower bound, saying why, when Metrics Insights did not answer (check never asks).
. "$BEDTOP_SRCDIR/tests/lib.sh"
NOW=$(date +%s)
START=$(( (NOW / 60) * 60 - 40 * 60 ))
ONSET=$(( START + 32 * 60 ))
# Claude 3 Haiku (burndown 5): 100 calls, 100,000 input and 20,000 output tokens a
# minute from START: 100,000 + 20,000 x 5 = 200,000 settled tokens a minute, a fifth
# of its 1,000,000 TPM quota; from ONSET on also 7 throttles a minute: the only route
# of the Region, called and throttled at 20 % of its per-minute quota, reads as the
# day's quota running out. The observed ceiling is the day's settled tokens before
# ONSET: 32 minutes x 200,000 = 6,400,000 (START and ONSET on one UTC day; else the
# day holds fewer of them and only the onset is checked).
haiku_scenario "$TMP/scen.json" "$START" 100 100000 20000
python3 - "$TMP/scen.json" "$ONSET" <<'PY'
import json, sys
p, onset = sys.argv[1], int(sys.argv[2])
sc = json.load(open(p))
sc["series"].append({"namespace": "AWS/Bedrock", "metric": "InvocationThrottles", "stat": "Sum",
                     "dimensions": {"ModelId": "anthropic.claude-3-haiku-20240307-v1:0"},
                     "start": onset, "generator": {"constant": 7}})
json.dump(sc, open(p, "w"))
PY
cat >"$TMP/l.conf" <<'CONF'
[bedtop]
region = us-east-1

[route batch]
model = anthropic.claude-3-haiku-20240307-v1:0
max_tokens = 500
CONF
start_fake fake --scenario "$TMP/scen.json"
run() { "${AWS_ENV[@]}" "$BEDTOP" "$@" --config "$TMP/l.conf" --endpoint-url "http://127.0.0.1:$PORT"; }
run check --format json >"$TMP/c.json" 2>"$TMP/c.err"
L() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); l=d['spend']['ledger'][0]; print($2)" "$1"; }
ONSET_ISO=$(date -u -d "@$ONSET" +%Y-%m-%dT%H:%M:%SZ)
expect_eq "check JSON: the observed ceiling's onset is the first throttled minute" \
    "$(L "$TMP/c.json" "l['observed_ceiling']['onset'], l['observed_ceiling']['routes_throttled'], l['observed_ceiling']['throttles'], l['observed_ceiling']['quality']")" \
    "$ONSET_ISO 1 7 estimate"
if [ "$(( START / 86400 ))" -eq "$(( ONSET / 86400 ))" ]; then
    expect_eq "check JSON: the ceiling is the day's 6,400,000 settled tokens before it" \
        "$(L "$TMP/c.json" "l['observed_ceiling']['tokens']")" "6400000"
fi
check "check JSON with an observed ceiling validates against data/check.schema.json" \
    python3 "$BEDTOP_SRCDIR/tests/schema_check.py" "$BEDTOP_SRCDIR/data/check.schema.json" "$TMP/c.json"
expect_eq "check JSON: no Metrics Insights answer, so a lower bound saying why" \
    "$(L "$TMP/c.json" "l['used_quality'], 'not looked for' in l['used_quality_reason']")" "lower-bound True"
run check >"$TMP/c.txt" 2>/dev/null
check "check text: the observed ceiling" grep -q "observed ceiling .* tokens: throttled from $(date -u -d "@$ONSET" +%H:%M) UTC" "$TMP/c.txt"
check "check text: the lower bound's reason" grep -q "a lower bound: callers outside the config not looked" "$TMP/c.txt"
expect_eq "check text fits 80 columns" "$(awk 'length($0) > 80' "$TMP/c.txt" | wc -l)" 0

# the incident report over a backfill of the same minutes says it too
run record "$TMP/l.rec" --since 20m 2>"$TMP/rec.err"
"$BEDTOP" report incident "$TMP/l.rec" -o "$TMP/inc" >/dev/null 2>"$TMP/inc.err"
check "report incident: the cross-model day's observed ceiling" \
    grep -q "observed ceiling .* tokens: from $(date -u -d "@$ONSET" +%H:%M) UTC every called route throttled" "$TMP/inc/report.md"

# the dashboard's $ view, live against the same fake: the observed ceiling; its
# Metrics Insights query answered (the fake finds no one outside the config), so the
# day is an estimate, not "not looked for"
TUI_CMD="${AWS_ENV[*]} $BEDTOP --config $TMP/l.conf --endpoint-url http://127.0.0.1:$PORT"
EXTRA=""
. "$BEDTOP_SRCDIR/tests/termlib.sh"
start led 120 40 C.UTF-8
check "dashboard up" wait_for led "batch" 200
keys led '$'
check "\$: the observed ceiling" wait_for led "observed ceiling:" 200
check "\$: its onset minute" wait_for led "throttled from $(date -u -d "@$ONSET" +%H:%M) UTC" 100
check "\$: Metrics Insights answered, so no 'not looked for'" wait_gone led "not looked for" 200
finish
