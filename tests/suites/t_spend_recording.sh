#!/usr/bin/env bash
# Spend in recordings (issue 36, format 2.2): "record what you observed, derive the
# rest". A recording's header carries the routes' tier, model_units and
# budget_usd_per_day, the spend_spike_* keys and the price rows in effect, so
# replay and export price the recorded tokens as the live check did, not with the
# replaying machine's table at the standard tier. An older file (no "prices")
# still replays, priced with the installed table, and says so once.
. "$BEDTOP_SRCDIR/tests/lib.sh"
NOW=$(date +%s)
START=$(( (NOW / 60) * 60 - 40 * 60 ))
# Claude 3 Haiku at a constant 100 calls, 100,000 input and 20,000 output tokens a
# minute (from 40 minutes before now's minute; tests/lib.sh haiku_scenario).
haiku_scenario "$TMP/scen.json" "$START" 100 100000 20000
# Route flex is billed at the flex tier, priced by the config's [prices] row, which
# data/prices.conf lacks (it has Claude 3 Haiku at standard, in=0.25 out=1.25, and
# batch only). Worked by hand, USD per hour at any minute:
#   flex: 60 x (100,000 x 0.20 + 20,000 x 0.50) / 1e6 = 60 x (0.02 + 0.01) = 1.80
#   (the installed table at standard would say 60 x (0.025 + 0.025) = 3.00)
# Route pt is Provisioned Throughput: 2 model units x 40 USD per unit-hour = 80.00
#   (without model_units the cost is unknown).
cat >"$TMP/s.conf" <<'CONF'
[bedtop]
region = us-east-1
budget_usd_per_day = 5000
spend_spike_factor = 7
spend_spike_floor = 11
spend_spike_minutes = 4

[route flex]
model = anthropic.claude-3-haiku-20240307-v1:0
max_tokens = 500
tier = flex
budget_usd_per_day = 123

[route pt]
model = arn:aws:bedrock:us-east-1:123456789012:provisioned-model/abcd1234
base_model = anthropic.claude-3-haiku-20240307-v1:0
model_units = 2

[prices]
anthropic.claude-3-haiku* = in=0.20 out=0.50 tier=flex source=our-contract date=2026-11-30
anthropic.claude-3-haiku* = unit_hour=40 inference=provisioned source=our-contract date=2026-11-30
CONF
start_fake fake --scenario "$TMP/scen.json"
run() { "${AWS_ENV[@]}" "$BEDTOP" "$@" --config "$TMP/s.conf" --endpoint-url "http://127.0.0.1:$PORT"; }
run check --format json >"$TMP/live.json" 2>"$TMP/live.err"
run record "$TMP/s.rec" --since 20m 2>"$TMP/rec.err"
expect_eq "backfill exits 0" "$?" 0
C() { python3 -c "
import json, sys
d = json.load(open(sys.argv[1]))
rows = d['routes'] if 'routes' in d else d
r = {x['name']: x for x in rows if 'cost' in x}
c = r[sys.argv[2]]['cost']
print(c['usd_per_hour'], c['tier'], c['price_row'], c['quality'])" "$@"; }
expect_eq "live check: the flex route at the config's flex row, 1.80/h" "$(C "$TMP/live.json" flex)" \
    "1.8 flex config [prices] anthropic.claude-3-haiku* (flex, our-contract, 2026-11-30) estimate"
expect_eq "live check: the provisioned route, 2 units x 40 = 80/h" "$(C "$TMP/live.json" pt | cut -d' ' -f1-2)" "80 standard"

# the header carries them
check "the header carries the tier, model_units, budgets and spike keys" python3 - "$TMP/s.rec" <<'PY'
import json, sys
h = json.loads(open(sys.argv[1]).readline())
assert h["version"] == "2.2", h["version"]
r = {x["name"]: x for x in h["routes"]}
assert r["flex"]["tier"] == "flex" and r["flex"]["budget_usd_per_day"] == 123, r["flex"]
assert r["pt"]["model_units"] == 2, r["pt"]
c = h["config"]
assert (c["budget_usd_per_day"], c["spend_spike_factor"], c["spend_spike_floor"], c["spend_spike_minutes"]) == (5000, 7, 11, 4), c
p = [x for x in h["prices"] if x.get("origin") == "config [prices]"]
assert len(p) == 2 and p[0]["tier"] == "flex" and p[0]["in"] == 0.2 and p[0]["out"] == 0.5, p
assert p[1]["inference"] == "provisioned" and p[1]["unit_hour"] == 40, p
# the table's rows come first, as loaded: later rows win
assert h["prices"][-1] is p[1] or h["prices"][-1] == p[1]
PY

# replayed on a machine whose installed table is empty: the recorded rows price it
mkdir -p "$TMP/empty"; : >"$TMP/empty/prices.conf"; cp "$BEDTOP_SRCDIR/data/burndown.conf" "$TMP/empty/"
BEDTOP_DATADIR=$TMP/empty "$BEDTOP" replay "$TMP/s.rec" --at -0m --format json >"$TMP/rp.json" 2>"$TMP/rp.err"
expect_eq "replay --at: the same cost as check live (flex)" "$(C "$TMP/rp.json" flex)" "$(C "$TMP/live.json" flex)"
expect_eq "replay --at: the same cost as check live (provisioned)" "$(C "$TMP/rp.json" pt)" "$(C "$TMP/live.json" pt)"
check "replay of a 2.2 file says nothing about the installed table" bash -c "! grep -q 'no price rows' '$TMP/rp.err'"
BEDTOP_DATADIR=$TMP/empty "$BEDTOP" export "$TMP/s.rec" --format json >"$TMP/ex.json" 2>"$TMP/ex.err"
check "export: every row of the flex route at 1.80/h from the recorded flex row" python3 - "$TMP/ex.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
rows = d["rows"]
f = [x for x in rows if x["name"] == "flex"]
assert f, "no flex rows"
for x in f:
    c = x["cost"]
    assert c["usd_per_hour"] == 1.8 and c["tier"] == "flex" and "our-contract" in c["price_row"], c
p = [x for x in rows if x["name"] == "pt"]
assert p and all(x["cost"]["usd_per_hour"] == 80 for x in p), p[:1]
PY

# report incident, on the same empty installed table: the recorded rows price the 20
# backfilled data minutes. By hand: flex 20 x 0.03 USD (1.80/h over a minute) = 0.60,
# peak 1.80/h; pt 80 USD/h x 20/60 h = 26.67; together 27.27.
BEDTOP_DATADIR=$TMP/empty "$BEDTOP" report incident "$TMP/s.rec" -o "$TMP/inc" >/dev/null 2>"$TMP/inc.err"
check "report incident: what the incident cost, from the recorded rows" \
    grep -q '^\$27.27 over the 20 data minutes at list prices' "$TMP/inc/report.md"
check "... the flex route at the flex row" \
    grep -qF '| flex | anthropic.claude-3-haiku-20240307-v1:0 | flex | $0.6000 | $1.80 | 20 |' "$TMP/inc/report.md"
check "... the provisioned route from its model units" \
    grep -qF '| pt | arn:aws:bedrock:us-east-1:123456789012:provisioned-model/abcd1234 | standard | $26.67 | $80.00 | 20 |' "$TMP/inc/report.md"

# an older recording (no "prices", no spend keys: the 2.1 header) still replays,
# priced with the installed table at the standard tier, and says so once
python3 - "$TMP/s.rec" "$TMP/old.rec" <<'PY'
import json, sys
lines = open(sys.argv[1]).read().splitlines()
h = json.loads(lines[0]); h["version"] = "2.1"; del h["prices"]
for r in h["routes"]:
    for k in ("tier", "model_units", "budget_usd_per_day"):
        r.pop(k, None)
for k in ("budget_usd_per_day", "spend_spike_factor", "spend_spike_floor", "spend_spike_minutes"):
    h["config"].pop(k, None)
open(sys.argv[2], "w").write("\n".join([json.dumps(h)] + lines[1:]) + "\n")
PY
"$BEDTOP" replay "$TMP/old.rec" --at -0m --format json >"$TMP/old.json" 2>"$TMP/old.err"
expect_eq "an old recording replays" "$?" 0
# data/prices.conf's Claude 3 Haiku standard row: 60 x (0.1 x 0.25 + 0.02 x 1.25) = 3.00
expect_eq "... priced with the installed table at standard" "$(C "$TMP/old.json" flex | cut -d' ' -f1-2)" "3 standard"
expect_eq "... saying so once on stderr" "$(grep -c 'carries no price rows (written before format 2.2)' "$TMP/old.err")" 1
"$BEDTOP" report incident "$TMP/old.rec" -o "$TMP/oldinc" >/dev/null 2>"$TMP/oldinc.err"
expect_eq "... report incident says so once too" "$(grep -c 'carries no price rows' "$TMP/oldinc.err")" 1
check "... and in the JSON's prices_note" grep -q '"prices_note":.*"the recording carries no price rows' "$TMP/old.json"
finish
