#!/usr/bin/env bash
# Spend (issue 36) through the real binary: the demo's runaway nightly-eval raises
# SPEND_SPIKE in its second minute and not before, a model the table lacks is null
# with its reason, the [prices] section wins and a bad row names file and line,
# serve's series, check's paragraphs at 80 columns, and the dashboard's $ overlay.
. "$BEDTOP_SRCDIR/tests/lib.sh"
J() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); r={x['name']: x for x in d['routes']}; print($2)" "$1"; }

# nightly-eval runs away from data minute 10:14; check --demo-at N evaluates data minute 10:N
"$BEDTOP" check --demo --demo-at 14 --format json >"$TMP/14.json"
"$BEDTOP" check --demo --demo-at 15 --format json >"$TMP/15.json"
"$BEDTOP" check --demo --demo-at 24 --format json >"$TMP/24.json"
expect_eq "the jump's first minute (10:14): no SPEND_SPIKE yet" \
    "$(J "$TMP/14.json" "'SPEND_SPIKE' in [w['code'] for w in r['nightly-eval']['warnings']]")" False
expect_eq "its second minute (10:15): SPEND_SPIKE" \
    "$(J "$TMP/15.json" "[w['code'] for w in r['nightly-eval']['warnings'] if w['code'] == 'SPEND_SPIKE']")" "['SPEND_SPIKE']"
check "the message names who spends and the ratio" \
    grep -q 'nightly-eval (anthropic.claude-haiku-4-5-20251001-v1:0, standard tier) has spent' "$TMP/15.json"
expect_eq "after the runaway (10:24): no SPEND_SPIKE" \
    "$(J "$TMP/24.json" "'SPEND_SPIKE' in [w['code'] for w in r['nightly-eval']['warnings']]")" False
expect_eq "a steady high spender (agents, thousands a day) never spikes" \
    "$(J "$TMP/15.json" "'SPEND_SPIKE' in [w['code'] for w in r['agents']['warnings']] or r['agents']['cost']['usd_per_hour'] < 100")" False
expect_eq "opus48 (no price row): cost null with the reason, never 0" \
    "$(J "$TMP/15.json" "(r['opus48']['cost']['usd_per_hour'], r['opus48']['cost']['quality'], 'no standard price' in r['opus48']['cost']['reason'])")" \
    "(None, 'unknown', True)"
expect_eq "triage is priced from its dated row" \
    "$(J "$TMP/15.json" "(r['triage']['cost']['quality'], r['triage']['cost']['price_date'], r['triage']['cost']['source'])")" \
    "('estimate', '2026-12-02', 'aws.amazon.com/bedrock/pricing')"

"$BEDTOP" check --demo --demo-at 15 >"$TMP/15.txt"
check "check text: the spend paragraph" grep -q '^spend (list prices, no discounts or credits: an estimate):' "$TMP/15.txt"
check "check text: the cross-model day" grep -q '^cross-model day (settled tokens' "$TMP/15.txt"
expect_eq "check text fits 80 columns" "$(awk 'length($0) > 80' "$TMP/15.txt" | wc -l)" 0

# a config: [prices] rows win; a bad row is refused naming file and line
cat >"$TMP/p.conf" <<'CONF'
[route a]
model = example.new-model-v1
region = us-east-1
max_tokens = 100
quota_tpm = 1000000
tier = flex

[prices]
example.new-model* = in=2 out=8 source=ours date=2026-12-01
example.new-model* = in=1 out=4 tier=flex source=ours date=2026-12-01
CONF
AWS_EC2_METADATA_DISABLED=true AWS_ACCESS_KEY_ID=AKIDEXAMPLE AWS_SECRET_ACCESS_KEY=x \
    "$BEDTOP" check --config "$TMP/p.conf" --endpoint-url http://127.0.0.1:9 --format json >"$TMP/p.json" 2>/dev/null
expect_eq "the flex route takes the config's flex row" \
    "$(J "$TMP/p.json" "(r['a']['cost']['tier'], r['a']['cost']['price_row'])")" \
    "('flex', 'config [prices] example.new-model* (flex, ours, 2026-12-01)')"
printf '[prices]\nx* = in=1 out=-2\n' >"$TMP/bad.conf"
"$BEDTOP" check --config "$TMP/bad.conf" >/dev/null 2>"$TMP/bad.err"
check "a bad price row is an error naming the file and line" grep -q 'bad.conf:2: bad price row' "$TMP/bad.err"

# serve's series (check --format prometheus renders the same)
"$BEDTOP" check --demo --demo-at 15 --format prometheus >"$TMP/15.prom"
check "bedtop_spend_usd_per_hour for nightly-eval" grep -q '^bedtop_spend_usd_per_hour{route="nightly-eval".*tier="standard"' "$TMP/15.prom"
check "bedtop_spend_usd_today with its quality" grep -q '^bedtop_spend_usd_today{route="triage".*quality="' "$TMP/15.prom"
check "no spend series for an unpriced route" bash -c "! grep -q '^bedtop_spend_usd_per_hour{route=\"opus48\"' '$TMP/15.prom'"

# spend per team (the demo's triage: workers of team search and ads): each route's
# spend split by the team's share of its use, so the teams (unattributed included)
# sum to the routes' spend; the teams priced from a share are estimates
check "check JSON: spend per team sums to the routes' spend (search, ads, unattributed)" python3 - "$TMP/15.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
t = {x["team"]: x for x in d["spend"]["teams"]}
assert set(t) == {"search", "ads", "unattributed"}, t.keys()
routes = sum(r["cost"]["usd_per_hour"] or 0 for r in d["routes"])
assert abs(sum(x["usd_per_hour"] for x in t.values()) - routes) < 0.01, (t, routes)
assert t["search"]["top_route"] == "triage" and t["search"]["quality"] == "estimate", t["search"]
assert t["search"]["usd_per_hour"] > t["ads"]["usd_per_hour"] > 0, t
assert t["unattributed"]["quality"] == "lower-bound"  # opus48 and others unpriced
PY
check "check text: spend by team" grep -q '^spend by team' "$TMP/15.txt"
check "bedtop_team_spend_usd_per_hour{team=\"search\"}" grep -q '^bedtop_team_spend_usd_per_hour{team="search",quality="estimate"' "$TMP/15.prom"
check "bedtop_team_spend_usd_today{team=\"ads\"}" grep -q '^bedtop_team_spend_usd_today{team="ads",quality="estimate"' "$TMP/15.prom"
if command -v promtool >/dev/null; then
    check "the exposition with the team series passes promtool check metrics" \
        bash -c "promtool check metrics <'$TMP/15.prom'"
else
    skip "promtool check metrics (no promtool)"
fi

# the cross-model ledger says why it is a lower bound
expect_eq "check JSON: the ledger's lower bound says why" \
    "$(python3 -c "import json,sys; l={x['region']: x for x in json.load(open(sys.argv[1]))['spend']['ledger']}['us-west-2']; print(l['used_quality'], 'Metrics Insights' in l['used_quality_reason'], l['observed_ceiling'])" "$TMP/15.json")" \
    "lower-bound True None"

# export: the CSV's usd_per_hour column is the JSON rows' cost.usd_per_hour, row for row
# (the figure table's one reading), and the runaway shows in it: nightly-eval's spend at
# 10:15 is its JSON row's, unknown (empty) where the JSON's is null (opus48: no price)
"$BEDTOP" record "$TMP/sp.rec" --demo --demo-speed max --duration 20m 2>/dev/null
"$BEDTOP" export "$TMP/sp.rec" --format csv -o "$TMP/sp.csv" 2>/dev/null
"$BEDTOP" export "$TMP/sp.rec" --format json -o "$TMP/sp.json" 2>/dev/null
check "export: the CSV's usd_per_hour equals the JSON's cost.usd_per_hour, every row" python3 - "$TMP/sp.csv" "$TMP/sp.json" <<'PY'
import csv, json, sys
rows = list(csv.DictReader(open(sys.argv[1])))
js = json.load(open(sys.argv[2]))["rows"]
assert len(rows) == len(js) > 14 * 10, (len(rows), len(js))
priced = nulls = 0
for c, j in zip(rows, js):
    assert (c["time"], c["route"]) == (j["time"], j["name"]), (c["time"], c["route"], j["time"], j["name"])
    u = j["cost"]["usd_per_hour"]
    if u is None:
        assert c["usd_per_hour"] == "", (c["route"], c["usd_per_hour"])
        nulls += 1
    else:
        assert abs(float(c["usd_per_hour"]) - u) < 1e-9, (c["route"], c["time"], c["usd_per_hour"], u)
        priced += 1
assert priced and nulls, (priced, nulls)
PY

# the dashboard: $ opens the overlay, Esc closes it
TUI_CMD="$BEDTOP --demo --demo-at 15"
EXTRA=""
. "$BEDTOP_SRCDIR/tests/termlib.sh"
start sp 120 40 C.UTF-8
check "dashboard up" wait_for sp "nightly-eval"
keys sp '$'
check "\$ opens the spend overlay" wait_for sp "spend and the cross-model day, per Region"
check "it names the runaway with SPEND_SPIKE" wait_for sp "SPEND_SPIKE"
check "and the cross-model day" wait_for sp "cross-model day:"
check "and the spend by team" wait_for sp "by team (each route's spend split by the team's share)"
check "search among the teams" wait_for sp "  search "
keys sp Escape
check "Esc closes it" wait_gone sp "spend and the cross-model day, per Region"
finish
