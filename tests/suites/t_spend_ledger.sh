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

# two accounts in one Region (issue 33: the ledger's group is the account's daily side's):
# one ledger each, against its own cross-model quota, named in the text. The fake's
# series carry their account (cross-account observability): account 111111111111's
# route 100,000 input and 20,000 output tokens a minute (200,000 settled at burndown
# 5), 222222222222's 50,000 and 20,000 (150,000): each day is its own route's, so the
# two days stand 4 : 3 (one us-east-1 ledger summed both, against the first quota).
python3 - "$TMP/scen.json" "$TMP/a2.json" <<'PY'
import copy, json, sys
sc = json.load(open(sys.argv[1]))
out = []
for s in sc["series"]:
    if s["metric"] == "InvocationThrottles":
        continue
    for acct, scale in (("111111111111", 1), ("222222222222", 0.5)):
        c = copy.deepcopy(s)
        c["account"] = acct
        if c["metric"] == "InputTokenCount":
            c["generator"]["constant"] *= scale
        out.append(c)
sc["series"] = out
json.dump(sc, open(sys.argv[2], "w"))
PY
cat >"$TMP/a2.conf" <<'CONF'
[bedtop]
region = us-east-1

[route batch]
model = anthropic.claude-3-haiku-20240307-v1:0
max_tokens = 500
account = 111111111111
quota_tpd_account = 900000000

[route batch-b]
model = anthropic.claude-3-haiku-20240307-v1:0
max_tokens = 500
account = 222222222222
quota_tpd_account = 300000000
CONF
PORT1=$PORT
start_fake fake2 --scenario "$TMP/a2.json"
PORT2=$PORT
run2() { "${AWS_ENV[@]}" "$BEDTOP" "$@" --config "$TMP/a2.conf" --endpoint-url "http://127.0.0.1:$PORT"; }
run2 check --format json >"$TMP/a2.json.out" 2>"$TMP/a2.err"
expect_eq "two accounts in us-east-1: two ledgers, each its own account and quota" \
    "$(python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print([(l['region'], l['account'], l['quota'], len(l['models'])) for l in d['spend']['ledger']])" "$TMP/a2.json.out")" \
    "[('us-east-1', '111111111111', 900000000, 1), ('us-east-1', '222222222222', 300000000, 1)]"
expect_eq "each ledger's day is its own account's route: 200,000 to 150,000 a minute, 4 : 3" \
    "$(python3 -c "import json,sys; d=json.load(open(sys.argv[1])); l=d['spend']['ledger']; print(l[1]['tokens_today'] > 0 and abs(l[0]['tokens_today'] / l[1]['tokens_today'] - 4 / 3) < 1e-9)" "$TMP/a2.json.out")" "True"
check "check JSON with two accounts' ledgers validates" \
    python3 "$BEDTOP_SRCDIR/tests/schema_check.py" "$BEDTOP_SRCDIR/data/check.schema.json" "$TMP/a2.json.out"
run2 check >"$TMP/a2.txt" 2>/dev/null
check "check text names whose day each is" \
    sh -c 'grep -q "^  us-east-1, account 111111111111:\$" "$1" && grep -q "^  us-east-1, account 222222222222:\$" "$1"' _ "$TMP/a2.txt"
expect_eq "check text with two accounts fits 80 columns" "$(awk 'length($0) > 80' "$TMP/a2.txt" | wc -l)" 0
PORT=$PORT1

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
# the two accounts' days in the \$ view, each named, each against its own quota (a day
# is "at least" until the view's Metrics Insights query has answered: either reads)
TUI_CMD="${AWS_ENV[*]} $BEDTOP --config $TMP/a2.conf --endpoint-url http://127.0.0.1:$PORT2"
start led2 120 40 C.UTF-8
check "two accounts: dashboard up" wait_for led2 "batch-b" 200
keys led2 '$'
check "\$: the days named by account" wait_for led2 "cross-model day of account 222222222222: " 200
expect_eq "\$: each day against its own quota" \
    "$(T capture-pane -p -t led2 | grep -oE 'day of account [0-9]+: (at least )?[0-9.]+[kMG]? of [0-9.]+[kMG]' |
        sed -E 's/^day of (account [0-9]+): .* (of [0-9.]+[kMG])$/\1 \2/')" \
    "$(printf 'account 111111111111 of 900.00M\naccount 222222222222 of 300.00M')"
finish
