#!/usr/bin/env bash
# Issue 35, who holds the quota: `bedtop check --by team` and the JSON `shares` from the
# admission counters' team label, through real parts: the fake AWS (CloudWatch and
# Service Quotas, SigV4 checked) and tests/fake/admission_server.py's /teams/chat (three
# workers labelled by team, one restarting between check's two scrapes).
#
# By hand. CloudWatch, Claude 3 Haiku every minute: 100 calls, 600,000 input tokens, no
# output: settled 600,000. Admission (two scrapes admission_gap = 2 s apart):
#   a team=search settled 4,000/s = 240,000 a minute, held 16,000
#   b team=search restarted after the first scrape (old total 90,000,000): its increase
#     is its new value, 1,000/s = 60,000 a minute (never 90 million), held 8,000
#   c team=ads    settled 2,000/s = 120,000 a minute, held 8,000
# held (the gauge, summed) 32,000; chat used = 600,000 + 32,000 = 632,000
#   search 240,000 + 60,000 + 16,000 + 8,000 = 324,000   51.27 %
#   ads    120,000 + 8,000                  = 128,000   20.25 %
#   unattributed 632,000 - 452,000          = 180,000   28.48 %  (CloudWatch's charge
#     above the counters': callers without admission; never spread over the teams)
# The settled rates are measured over the client's own gap: 3 % allowed on them.
. "$BEDTOP_SRCDIR/tests/lib.sh"
AWS_ENV+=(BEDTOP_DATADIR="$BEDTOP_SRCDIR/data" XDG_CACHE_HOME="$TMP/cache")

python3 "$BEDTOP_SRCDIR/tests/fake/admission_server.py" >"$TMP/adm.port" 2>"$TMP/adm.err" &
CLEANUP+=("kill $!")
for _ in $(seq 50); do [ -s "$TMP/adm.port" ] && break; sleep 0.1; done
APORT=$(head -n 1 "$TMP/adm.port")
[ -n "$APORT" ] || { notok "fake admission server did not start"; finish; exit; }
now=$(date +%s)
haiku_scenario "$TMP/scenario.json" $((now - 7200)) 100 600000 0
start_fake fake --scenario "$TMP/scenario.json" || notok "fake AWS started"
FAKE=$PORT

cat >"$TMP/shares.conf" <<EOF
[bedtop]
region = us-east-1
admission_gap = 2

[route chat]
model = anthropic.claude-3-haiku-20240307-v1:0
max_tokens = 1000
admission = http://127.0.0.1:$APORT/teams/chat
EOF

"${AWS_ENV[@]}" "$BEDTOP" check --format json --config "$TMP/shares.conf" \
    --endpoint-url "http://127.0.0.1:$FAKE" >"$TMP/check.json" 2>"$TMP/check.err"
sed 's/^/#   /' "$TMP/check.err" | head -5
check "the JSON validates against data/check.schema.json" \
    python3 "$BEDTOP_SRCDIR/tests/schema_check.py" "$BEDTOP_SRCDIR/data/check.schema.json" "$TMP/check.json"
j() { python3 -c "
import json, sys
d = json.load(open(sys.argv[1]))
r = {x['name']: x for x in d['routes']}
sh = {(s['by'], s['name']): s for s in r['chat']['shares']}
print($1)" "$TMP/check.json"; }
j "'# chat used', r['chat']['tpm']['used'], [(k, s['used'], s['pct']) for k, s in sh.items()]"
expect_eq "chat uses 600,000 + 32,000 held" "$(j "r['chat']['tpm']['used']")" 632000
near() { j "abs(sh[('team', '$1')]['used'] - $2) <= $3"; }
expect_eq "search holds 324,000 (its restarted worker counts 60,000, not 90 million)" \
    "$(near search 324000 9000)" True
expect_eq "ads holds 128,000" "$(near ads 128000 3600)" True
expect_eq "unattributed 180,000: what the counters do not account for" \
    "$(near unattributed 180000 12000)" True
# each share is rounded to a token in the JSON: three of them may be 1.5 off together
expect_eq "the team shares sum to the route's use" \
    "$(j "abs(sum(s['used'] for k, s in sh.items() if k[0] == 'team') - r['chat']['tpm']['used']) <= 1.5")" True
expect_eq "qualities and sources" \
    "$(j "(sh[('team','search')]['quality'], sh[('team','search')]['source'], sh[('team','unattributed')]['source'])")" \
    "('known', 'admission', 'unattributed')"
expect_eq "by route: chat holds all of it" "$(j "(sh[('route','chat')]['used'], sh[('route','chat')]['pct'])")" "(632000, 100)"

# ---- share_label = worker: the label the config names (the fake's worker label) ----
# The same scrapes by worker: a 240,000 + 16,000 = 256,000, b 60,000 + 8,000 = 68,000
# (its restart its own), c 120,000 + 8,000 = 128,000; unattributed 180,000 as before.
sed 's/^admission_gap = 2$/admission_gap = 2\nshare_label = worker/' "$TMP/shares.conf" >"$TMP/worker.conf"
"${AWS_ENV[@]}" "$BEDTOP" check --format json --config "$TMP/worker.conf" \
    --endpoint-url "http://127.0.0.1:$FAKE" >"$TMP/worker.json" 2>"$TMP/worker.err"
check "share_label = worker: a 256,000, b 68,000, c 128,000, unattributed 180,000 (3 %)" python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))["routes"][0]
sh = {s["name"]: s["used"] for s in r["shares"] if s["by"] == "team"}
print("#", sh)
want = {"a": 256000, "b": 68000, "c": 128000, "unattributed": 180000}
sys.exit(0 if set(sh) == set(want) and all(abs(sh[k] - v) <= 0.03 * v for k, v in want.items()) else 1)' "$TMP/worker.json"

# ---- the table ----
"${AWS_ENV[@]}" "$BEDTOP" check --by team --config "$TMP/shares.conf" \
    --endpoint-url "http://127.0.0.1:$FAKE" >"$TMP/by.txt" 2>"$TMP/by.err"
sed 's/^/#   /' "$TMP/by.txt"
check "check --by team: a header" grep -q '^GROUP  *QUOTA  *BY  *NAME  *USED/MIN  *SHARE  *QUALITY  *SOURCE' "$TMP/by.txt"
check "... search first, about 51 %" bash -c "sed -n 2p '$TMP/by.txt' | grep -Eq '^chat +L-TEST1 +team +search +3[12][0-9]\\.?[0-9]*k +5[01]\\.[0-9]%'"
check "... unattributed with its reason" grep -q 'team  *unattributed .*(use the admission counters do not account for' "$TMP/by.txt"
check "... a total row of 632k" grep -Eq '^chat +L-TEST1 +total +632k +100\.0%' "$TMP/by.txt"
expect_rc "check --by tag: refused, naming what is accepted" 3 \
    "$BEDTOP" check --demo --by colour
check "... with the reason" grep -q "check --by: 'colour' is not a share; use team, tag:KEY, project or route" "$TMP/last.err"
expect_rc "--by with --format json: refused (the JSON has every share)" 3 \
    "$BEDTOP" check --demo --by team --format json

# ---- serve: 1,000 teams stay share_top_n + 1 series ----
# /teams/chat?teams=1000: team t0000 settles 1,000 tokens/s, t0001 999, ... t0999 1: the
# five largest are t0000..t0004, the other 995 are one name="other"; their counters
# (500,500 tokens/s) exceed chat's 600,000 a minute (no reservations held), so the teams are scaled to it and
# nothing is left unattributed: 5 + 1 = 6 team series, and one route series.
cat >"$TMP/serve.conf" <<EOF
[bedtop]
region = us-east-1
share_top_n = 5

[route chat]
model = anthropic.claude-3-haiku-20240307-v1:0
max_tokens = 1000
admission = http://127.0.0.1:$APORT/teams/chat?teams=1000
EOF
SP=$(free_port)
"${AWS_ENV[@]}" "$BEDTOP" serve --listen "127.0.0.1:$SP" --config "$TMP/serve.conf" \
    --endpoint-url "http://127.0.0.1:$FAKE" --interval 2 >/dev/null 2>"$TMP/serve.err" &
CLEANUP+=("kill $!")
teams() {
    curl -s -m 5 "http://127.0.0.1:$SP/metrics" >"$TMP/metrics.txt"
    grep -q '^bedtop_share_used_tokens_per_minute{.*by="team",name="other"} [1-9]' "$TMP/metrics.txt"
}
for _ in $(seq 1 150); do teams && break; sleep 0.2; done
grep '^bedtop_share_used' "$TMP/metrics.txt" | sed 's/^/#   /'
expect_eq "serve: 1,000 teams are share_top_n 5 + other = 6 team series" \
    "$(grep -c '^bedtop_share_used_tokens_per_minute{.*by="team"' "$TMP/metrics.txt")" 6
expect_eq "... the five largest by name, then other" \
    "$(grep -o 'by="team",name="[^"]*"' "$TMP/metrics.txt" | sed 's/.*name=//' | tr '\n' ' ')" \
    '"t0000" "t0001" "t0002" "t0003" "t0004" "other" '
expect_eq "... and one route series" \
    "$(grep -c '^bedtop_share_used_tokens_per_minute{.*by="route",name="chat"}' "$TMP/metrics.txt")" 1

# ---- the incident report: who held the quota when it ran out ----
# The demo (collectors/demo.c): triage's worker a is team search, b team ads, and a
# carries DEMO_SEARCH_SHARE 0.75 of triage's counters and calls in flight: every minute
# search's part is 3 times ads'; the rest of the group's use (triage-app, and
# CloudWatch's charge above the counters) is unattributed. Recorded and replayed: the
# readings per series are in the file, the shares derived again.
"$BEDTOP" record "$TMP/demo.rec" --demo --demo-speed max --duration 30m >/dev/null 2>"$TMP/rec.err"
BEDTOP_DATADIR="$BEDTOP_SRCDIR/data" "$BEDTOP" report incident "$TMP/demo.rec" -o "$TMP/inc" \
    >/dev/null 2>"$TMP/inc.err"
sed 's/^/#   /' "$TMP/inc.err" | head -3
check "report incident writes holders.svg" test -s "$TMP/inc/holders.svg"
sed -n '/^## Who held the quota/,$p' "$TMP/inc/report.md" | sed 's/^/#   /'
expect_eq "the section names triage's group, stacked by team" \
    "$(grep -c "^!\[Who held the quota of triage's group, by team (stacked)\](holders.svg)" "$TMP/inc/report.md")" 1
row() { sed -n '/^## Who held the quota/,$p' "$TMP/inc/report.md" | awk -F'|' -v n=" $1 " '$2 == n {gsub(/[ ,%]/, "", $3); gsub(/[ %]/, "", $4); print $3, $4}'; }
read -r s_tpm s_pct <<<"$(row search)"
read -r a_tpm a_pct <<<"$(row ads)"
read -r u_tpm u_pct <<<"$(row unattributed)"
expect_eq "search holds 3 times ads' (0.75 of triage's counters against 0.25)" \
    "$(python3 -c "print(abs($s_tpm / $a_tpm - 3) < 0.001)")" True
expect_eq "... and the three shares sum to 100 %" \
    "$(python3 -c "print(abs($s_pct + $a_pct + $u_pct - 100) <= 0.2)")" True

# ---- a mantle model with two projects: shares by project, by hand ----
# Routes m-alpha (Project alpha) and m-beta (Project beta) on mantle's openai.gpt-oss-120b,
# one quota group (the Project is not in the quota's key), quotas from the config (1M
# input, 1M output a minute). AWS/BedrockMantle every minute, per Model and Project:
#   alpha: 10 inferences, 30,000 input, 2,000 output
#   beta:   5 inferences, 10,000 input, 1,000 output
# No latency on mantle and no admission: calls in flight are unknown, so each route's
# input use is the per-minute bound, an upper bound:
#   m-alpha R = 30,000 / 10 + 1,000 = 4,000; 10 x 4,000 = 40,000
#   m-beta  R = 10,000 /  5 + 1,000 = 3,000;  5 x 3,000 = 15,000
# group 55,000: alpha 40,000 (72.73 %), beta 15,000 (27.27 %), both upper bounds.
python3 - "$TMP/mantle.json" $(($(date +%s) - 7200)) <<'PY'
import json, sys
out, start = sys.argv[1], int(sys.argv[2])
def ser(metric, project, v):
    return {"namespace": "AWS/BedrockMantle", "metric": metric, "stat": "Sum", "start": start,
            "dimensions": {"Model": "openai.gpt-oss-120b", "Project": project},
            "generator": {"constant": v}}
series = [ser("Inferences", "alpha", 10), ser("TotalInputTokens", "alpha", 30000),
          ser("TotalOutputTokens", "alpha", 2000), ser("Inferences", "beta", 5),
          ser("TotalInputTokens", "beta", 10000), ser("TotalOutputTokens", "beta", 1000)]
json.dump({"series": series, "quotas": []}, open(out, "w"))
PY
start_fake mantle --scenario "$TMP/mantle.json" || notok "fake AWS (mantle) started"
MFAKE=$PORT
cat >"$TMP/mantle.conf" <<EOF
[bedtop]
region = us-east-1

[route m-alpha]
model = openai.gpt-oss-120b
endpoint = mantle
project = alpha
max_tokens = 1000
quota_input_tpm = 1000000
quota_output_tpm = 1000000

[route m-beta]
model = openai.gpt-oss-120b
endpoint = mantle
project = beta
max_tokens = 1000
quota_input_tpm = 1000000
quota_output_tpm = 1000000
EOF
"${AWS_ENV[@]}" "$BEDTOP" check --format json --config "$TMP/mantle.conf" \
    --endpoint-url "http://127.0.0.1:$MFAKE" >"$TMP/mantle.out.json" 2>"$TMP/mantle.err"
sed 's/^/#   /' "$TMP/mantle.err" | head -3
expect_eq "mantle: by project, alpha 40,000 (72.73 %) and beta 15,000 (27.27 %), upper bounds" \
    "$(python3 -c '
import json, sys
r = {x["name"]: x for x in json.load(open(sys.argv[1]))["routes"]}["m-alpha"]
print([(s["name"], s["used"], s["pct"], s["quality"], s["source"]) for s in r["shares"] if s["by"] == "project"])' "$TMP/mantle.out.json" 2>&1)" \
    "[('alpha', 40000, 72.73, 'upper-bound', 'config'), ('beta', 15000, 27.27, 'upper-bound', 'config')]"
"${AWS_ENV[@]}" "$BEDTOP" check --by project --config "$TMP/mantle.conf" \
    --endpoint-url "http://127.0.0.1:$MFAKE" >"$TMP/mantle.txt" 2>&1
sed 's/^/#   /' "$TMP/mantle.txt"
check "check --by project: alpha then beta, upper bounds" bash -c "
    sed -n 2p '$TMP/mantle.txt' | grep -Eq '^m-alpha .* project +alpha +40k +72\.7% +upper-bound +config' &&
    sed -n 3p '$TMP/mantle.txt' | grep -Eq '^m-alpha .* project +beta +15k +27\.3% +upper-bound +config'"

# ---- one minute, one set of shares: check --demo-at M, replay --at M and export ----
# The demo recorded on the unpaced clock (above) keeps the readings per series; replay
# derives the shares in core again. For several data minutes, every route's shares (by
# team, tag, project, route and the callers outside the config) are the same in check
# --demo-at M's JSON, replay --at M's JSON, export's JSON row and CSV row of M (shares_team,
# shares_tag, shares_project, shares_route: "name=used (pct%)", "; "-joined).
"$BEDTOP" export "$TMP/demo.rec" --format csv >"$TMP/demo.csv" 2>"$TMP/csv.err"
"$BEDTOP" export "$TMP/demo.rec" --format json >"$TMP/demo.json" 2>"$TMP/json.err"
for m in 8 13 19 26; do
    "$BEDTOP" check --demo-at "$m" --format json >"$TMP/c$m.json" 2>/dev/null
    "$BEDTOP" replay "$TMP/demo.rec" --at "$(printf '10:%02d' "$m")" --format json >"$TMP/r$m.json" 2>/dev/null
done
python3 - "$TMP" >"$TMP/agree.txt" 2>&1 <<'PY'
import csv, json, sys
d = sys.argv[1]
rows = list(csv.DictReader(open(f"{d}/demo.csv", newline="")))
jrows = json.load(open(f"{d}/demo.json"))["rows"]
rel = {"upper-bound": "<=", "lower-bound": ">=", "estimate": "~", "unknown": "=?"}
def field(shares):
    out = []
    for s in shares:
        if s["used"] is None:
            out.append(s["name"] + "=unknown")
            continue
        t = "%s%s%d" % (s["name"], rel.get(s["quality"], "="), s["used"])
        if s["pct"] is not None:
            t += " (%s%%)" % ("%.2f" % s["pct"]).rstrip("0").rstrip(".")
        out.append(t)
    return "; ".join(out)
bad, compared, teams = [], 0, 0
for m in (8, 13, 19, 26):
    minute = "2026-11-29T10:%02d:00Z" % m
    c = {x["name"]: x["shares"] for x in json.load(open(f"{d}/c{m}.json"))["routes"]}
    r = {x["name"]: x["shares"] for x in json.load(open(f"{d}/r{m}.json"))["routes"]}
    e = {x["route"]: x for x in rows if x["time"] == minute}
    j = {x["name"]: x["shares"] for x in jrows if x["time"] == minute}
    for name in c:
        if c[name] != r.get(name) or c[name] != j.get(name):
            bad.append((m, name, "check", c[name], "replay", r.get(name), "export json", j.get(name)))
        for by, col in (("team", "shares_team"), ("tag", "shares_tag"), ("project", "shares_project")):
            want = field([s for s in c[name] if s["by"] == by])
            if e[name][col] != want:
                bad.append((m, name, col, e[name][col], want))
        want = field([s for s in c[name] if s["by"] in ("route", "outside")])
        if e[name]["shares_route"] != want:
            bad.append((m, name, "shares_route", e[name]["shares_route"], want))
        teams += any(s["by"] == "team" and s["source"] == "admission" for s in c[name])
        compared += 1
print(compared, "routes compared,", teams, "with team shares,", len(bad), "differences")
for b in bad[:6]:
    print("#", b)
sys.exit(1 if bad or compared < 40 or teams < 8 else 0)
PY
rc=$?
sed 's/^/#   /' "$TMP/agree.txt"
expect_eq "4 minutes: check --demo-at, replay --at and export's JSON and CSV rows name the same shares" "$rc" 0

# ---- SHARED_QUOTA names the biggest holders with their share, in text and JSON ----
# The demo at 10:13: triage and triage-app share L-DEM00001; the message names the
# group's teams with the share the JSON's "shares" gives them (rounded to a percent).
"$BEDTOP" check --demo-at 13 >"$TMP/sq.txt" 2>/dev/null
"$BEDTOP" check --demo-at 13 --format json >"$TMP/sq.json" 2>/dev/null
want=$(python3 -c '
import json, sys
r = {x["name"]: x for x in json.load(open(sys.argv[1]))["routes"]}["triage"]
t = [s for s in r["shares"] if s["by"] == "team" and s["name"] != "unattributed"]
print("the biggest holders by team: " + ", ".join("%s %.0f%%" % (s["name"], s["pct"]) for s in t[:3]))' "$TMP/sq.json")
echo "# $want"
check "JSON: triage's SHARED_QUOTA names search and ads with the shares' percents" python3 -c '
import json, sys
r = {x["name"]: x for x in json.load(open(sys.argv[1]))["routes"]}
sys.exit(0 if all(any(w["code"] == "SHARED_QUOTA" and w["message"].endswith(sys.argv[2]) for w in r[n]["warnings"])
                  for n in ("triage", "triage-app")) and "search" in sys.argv[2] and "ads" in sys.argv[2] else 1)' "$TMP/sq.json" "$want"
check "text: the same words in triage's SHARED_QUOTA" \
    bash -c "sed -n '/triage: SHARED_QUOTA/,/->/p' '$TMP/sq.txt' | tr -s ' \n' ' ' | grep -qF '$want'"

# ---- plan triage --limits --by team: per-team budgets that fit the quota ----
# The demo at 10:13 (check's JSON above): the quota 2,000,000 less the reserve (20 %:
# 400,000) and the unattributed use is what the teams may use together; their demands
# (search's and ads' use now) fit, so each gets its demand and half of what is left:
# the budgets sum to what is available, and each holder's demand is its share in check.
"$BEDTOP" plan triage --demo-at 13 --limits --by team >"$TMP/plan.json" 2>"$TMP/plan.err"
check "plan --limits --by team: budgets for search and ads that fit the quota" python3 - "$TMP/plan.json" "$TMP/sq.json" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))
r = {x["name"]: x for x in json.load(open(sys.argv[2]))["routes"]}["triage"]
sh = {s["name"]: s["used"] for s in r["shares"] if s["by"] == "team"}
b = {x["name"]: x for x in p["budgets"]}
print("# plan", p["quota_tpm"], p["reserve_tpm"], p["unattributed_tpm"], p["available_tpm"],
      [(k, v["demand_tpm"], v["budget_tpm"]) for k, v in b.items()])
ok = (p["by"] == "team" and set(b) == {"search", "ads"} and p["cap_tpm"] is None and
      p["quota_tpm"] == 2000000 and p["reserve_tpm"] == 400000 and
      abs(p["unattributed_tpm"] - sh["unattributed"]) <= 1 and
      abs(p["available_tpm"] - (2000000 - 400000 - p["unattributed_tpm"])) <= 1 and
      abs(sum(v["budget_tpm"] for v in b.values()) - p["available_tpm"]) <= 1 and
      all(abs(b[k]["demand_tpm"] - sh[k]) <= 1 and b[k]["budget_tpm"] >= b[k]["demand_tpm"] for k in b) and
      abs((b["search"]["budget_tpm"] - b["search"]["demand_tpm"]) - (b["ads"]["budget_tpm"] - b["ads"]["demand_tpm"])) <= 1)
sys.exit(0 if ok else 1)
PY
finish
