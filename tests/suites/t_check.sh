# bedtop check on the demo: schema, every warning code over the timeline, formats, exit codes, bad config.
. "$BEDTOP_SRCDIR/tests/lib.sh"
SCHEMA=$BEDTOP_SRCDIR/data/check.schema.json

# JSON validates against the schema at every minute of the story; collect the codes seen.
codes=""
bad=0
for m in $(seq 0 29); do
    "$BEDTOP" check --demo --demo-at "$m" --format json >"$TMP/m$m.json"
    rc=$?
    st=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["status"])' "$TMP/m$m.json")
    want=$(case $st in ok) echo 0;; warn) echo 1;; crit) echo 2;; *) echo 3;; esac)
    [ "$rc" = "$want" ] || { bad=1; echo "# minute $m: status $st but exit $rc"; }
    python3 "$BEDTOP_SRCDIR/tests/schema_check.py" "$SCHEMA" "$TMP/m$m.json" || bad=1
    codes="$codes $(python3 -c 'import json,sys; print(" ".join(w["code"] for r in json.load(open(sys.argv[1]))["routes"] for w in r["warnings"]))' "$TMP/m$m.json")"
done
expect_eq "JSON validates and exit code matches status at every demo minute" "$bad" 0
for c in ESTIMATE_ONLY THROTTLED_BELOW_ESTIMATE OVERSIZED_MAX_TOKENS RETRY_LOAD HIDDEN_PARALLELISM \
         LOW_HEADROOM QUOTA_DEFAULT QUOTA_UNKNOWN STALE DAILY_QUOTA BATCH_CANDIDATE \
         NO_QUOTA SHARED_QUOTA BURNDOWN_MISMATCH PARTIAL_GROUP OUTPUT_CUTOFF SLOWDOWN; do
    case " $codes " in *" $c "*) ok "demo timeline triggers $c";; *) notok "demo timeline never triggers $c";; esac
done

# Story beats at the minutes the demo's comment promises.
j() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); r={x['name']:x for x in d['routes']}; print($2)" "$TMP/m$1.json"; }
expect_eq "minute 4: calm triage has no RETRY_LOAD" "$(j 4 "'RETRY_LOAD' in [w['code'] for w in r['triage']['warnings']]")" False
expect_eq "minute 16: triage retry storm" "$(j 16 "'RETRY_LOAD' in [w['code'] for w in r['triage']['warnings']]")" True
expect_eq "minute 12: summarize throttled while the estimate is ~6% of quota" \
    "$(j 12 "r['summarize']['tpm']['estimated'] < 0.1*r['summarize']['quota']['tpm'] and r['summarize']['throttles_per_min']>0")" True
expect_eq "workers: 40 in flight vs 25" "$(j 10 "(r['workers']['in_flight'], r['workers']['concurrency_limit'])")" "(40, 25)"
# The observed ceiling (core/ceiling.c) against the frame's own figures: at data minute
# 13 (--demo-at names a data minute: issue 34) the most summarize was charged (max(settled, estimated), summarize alone on its
# quota) in a throttled minute of the hour, read from the per-minute JSON of every
# earlier demo minute; a lower bound far below the 400k quota: reservations.
check "minute 13: summarize's observed ceiling is its most charged throttled minute" python3 - "$TMP" <<'PY'
import json, sys
d = sys.argv[1]
at16 = {r["name"]: r for r in json.load(open(f"{d}/m13.json"))["routes"]}["summarize"]
c = at16["observed_ceiling"]
seen = {}
for m in range(14):
    r = {x["name"]: x for x in json.load(open(f"{d}/m{m}.json"))["routes"]}["summarize"]
    if r["evaluated_minute"] <= at16["evaluated_minute"] and r["throttles_per_min"]:
        seen[r["evaluated_minute"]] = max(v for v in (r["tpm"]["settled"], r["tpm"]["estimated"]) if v is not None)
assert seen and c["tokens_per_minute"] == max(seen.values()), (c, seen)
assert c["minute"] == max(seen, key=seen.get) and c["throttled_minutes"] >= len(seen), (c, seen)
assert c["quality"] == "lower-bound" and c["quota"] == 400000 and c["points_to"] == "reservations", c
assert c["pct_of_quota"] == round(1000 * c["tokens_per_minute"] / 400000) / 10, c
# triage at 49 % of its quota in its retry storm: the evidence points to retries
t = {x["name"]: x for x in json.load(open(f"{d}/m13.json"))["routes"]}["triage"]["observed_ceiling"]
assert t["pct_of_quota"] < 50 and t["points_to"] == "retries" and "RETRY_LOAD" in t["why"], t
w = {x["name"]: x for x in json.load(open(f"{d}/m13.json"))["routes"]}["workers"]
assert w["observed_ceiling"]["tokens_per_minute"] is None and w["observed_ceiling"]["quality"] == "unknown", w
PY
# The forecast in check JSON: workers ramps (demo.c) and by minute 26 runs out within
# the hour at this trend, its minute on the data-minute clock (every point read with
# the present frame's definitions: the admission gauge, so 11 of the 15 minutes; at
# minute 16 the ramp fitted so is 130 min away: the hour-long run-out there came from
# Little's-law points below a gauge point); agents at 16 is flat: no minute, null.
check "forecast: workers at minute 26 runs out at a minute, agents (flat) at 16 none" python3 - "$TMP/m26.json" "$TMP/m16.json" <<'PY'
import json, sys, datetime as dt
r = {x["name"]: x for x in json.load(open(sys.argv[1]))["routes"]}
f = r["workers"]["forecast"]
assert f["side"] == "tpm" and 0 < f["minutes_to_quota"] < 60 and f["slope_per_minute"] > 0, f
iso = lambda s: dt.datetime.strptime(s, "%Y-%m-%dT%H:%M:%SZ")
ev = iso(r["workers"]["evaluated_minute"])
assert iso(f["runs_out_minute"]) == ev + dt.timedelta(minutes=int(f["minutes_to_quota"])), (f, ev)
assert "trend" in f["assumption"] and f["none"] is None, f
r = {x["name"]: x for x in json.load(open(sys.argv[2]))["routes"]}
a = r["agents"]["forecast"]
assert a["minutes_to_quota"] is None and a["runs_out_minute"] is None and a["none"] == "flat", a
PY
expect_eq "agents is mantle with split quotas" "$(j 10 "(r['agents']['endpoint'], r['agents']['mantle']['input']['quota'], r['agents']['mantle']['output']['quota'])")" "('mantle', 20000000, 4000000)"
# issue 19: mantle has no burndown (output counts once, on its own quota): null and
# "none", never the table's 1 and "table"; a runtime route keeps its table value
expect_eq "agents (mantle) has no burndown: null, source none" "$(j 10 "(r['agents']['burndown'], r['agents']['burndown_source'])")" "(None, 'none')"
expect_eq "triage (runtime) keeps a burndown with its source" "$(j 10 "r['triage']['burndown_source'] in ('table', 'config', 'default') and r['triage']['burndown'] >= 1")" True
# Headroom v2 story beats (docs/headroom.md): a handful of short calls with max_tokens
# 64,000 is not critical; the retry storm is blamed on retries, not on max_tokens.
expect_eq "summarize (10 short calls a minute, max_tokens 64,000) is never crit" \
    "$(for m in $(seq 0 29); do j "$m" "r['summarize']['status']"; done | grep -c crit)" 0
expect_eq "minute 12: summarize holds ~0.25 calls in flight (Little's law)" \
    "$(j 12 "(0.2 < r['summarize']['in_flight'] < 0.3, r['summarize']['in_flight_source'])")" "(True, 'littles-law')"
expect_eq "minute 16: triage's throttles are put down to retries, not max_tokens" \
    "$(j 16 "[('retry' in w['message'], 'max_tokens' in w['action']) for w in r['triage']['warnings'] if w['code']=='THROTTLED_BELOW_ESTIMATE']")" "[(True, True)]"
check "minute 16: ... and its action says lowering max_tokens will not help" \
    grep -q "lowering max_tokens will not help" "$TMP/m16.json"
expect_eq "triage and triage-app share one quota" \
    "$(j 10 "(r['triage']['quota']['shared_with'], r['triage-app']['quota']['shared_with'], r['triage']['headroom_tpm'] == r['triage-app']['headroom_tpm'])")" \
    "(['triage-app'], ['triage'], True)"
expect_eq "preview: applied quota 0 is NO_QUOTA crit, headroom_pct null" \
    "$(j 10 "(r['preview']['status'], r['preview']['headroom_pct'], [w['code'] for w in r['preview']['warnings']])")" \
    "('crit', None, ['NO_QUOTA'])"
expect_eq "experiments: burndown measured from the estimate vs the config's 1" \
    "$(j 10 "(r['experiments']['burndown'], round(r['experiments']['burndown_measured']))")" "(1, 5)"
# Version 3 beats: legacy's published 95 RPM binds before its tokens (80 calls a
# minute: about 16 % left on the rpm side); triage-app's CloudWatch is refused 22-25,
# so triage's group headroom is an upper bound naming it (data minute 20, polled at
# 10:23); agents' long answers (24-26) bring the mantle output side near exhaustion.
expect_eq "legacy: the rpm side binds, warn, LOW_HEADROOM names rpm" \
    "$(j 10 "(r['legacy']['binding_side'], r['legacy']['rpm']['quota'], r['legacy']['status'], [('rpm headroom' in w['message']) for w in r['legacy']['warnings'] if w['code']=='LOW_HEADROOM'])")" \
    "('rpm', 95, 'warn', [True])"
expect_eq "minute 20: triage's PARTIAL_GROUP names triage-app; the headroom is at most" \
    "$(j 20 "([('triage-app' in w['message']) for w in r['triage']['warnings'] if w['code']=='PARTIAL_GROUP'], r['triage']['headroom_quality'], r['triage-app']['status'])")" \
    "([True], 'upper-bound', 'unknown')"
expect_eq "minute 25: agents' output side binds and OUTPUT_CUTOFF says answers get cut off" \
    "$(j 25 "(r['agents']['binding_side'], [('cut off' in w['message']) for w in r['agents']['warnings'] if w['code']=='OUTPUT_CUTOFF'])")" \
    "('output', [True])"
expect_eq "workers: a quarter of its calls on the reserved tier, taken out of on-demand use" \
    "$(j 10 "(r['workers']['tiers']['reserved_share'], r['workers']['binding_side'], sorted(r['workers']['sides']))")" \
    "(0.25, 'tpm', ['reserved-input', 'reserved-output', 'tpm'])"
expect_eq "agents (mantle) has no burndown: null, source none" \
    "$(j 10 "(r['agents']['burndown'], r['agents']['burndown_source'])")" "(None, 'none')"
expect_eq "experiments goes stale at 20 and recovers by 28" \
    "$(j 20 "r['experiments']['stale']") $(j 28 "r['experiments']['stale']")" "True False"

# Deterministic: the same minute twice gives the same bytes.
"$BEDTOP" check --demo --demo-at 16 --format json >"$TMP/a.json"
"$BEDTOP" check --demo --demo-at 16 --format json >"$TMP/b.json"
check "demo is deterministic" cmp -s "$TMP/a.json" "$TMP/b.json"

# Text: aligned table, no escape codes when stdout is not a terminal (data minute 13:
# the retry storm's first crit minute).
"$BEDTOP" check --demo --demo-at 13 >"$TMP/t.txt"
check "text output has no escape codes when piped" bash -c "! grep -q $'\033' '$TMP/t.txt'"
check "text output has the header row" grep -q '^ROUTE  *STATUS .*HEAD%' "$TMP/t.txt"
check "text output lists warnings with actions" grep -q -- '-> ' "$TMP/t.txt"
# summarize (Claude 3.5 Haiku, 5x) throttles at 10 calls a minute: 10 x (2,000 + 300 x 5)
# = 35,000 charged (the demo's estimate, jittered: 36k at its largest minute, 10:07)
check "text: the observed ceiling beside the quota" \
    grep -qE "^  summarize: at least 36k TPM at 10:07 UTC \([0-9]+ (of [0-9]+ covered )?min throttled\), quota 400k \(8\.9%\);" "$TMP/t.txt"
"$BEDTOP" check --demo --demo-at 26 >"$TMP/t26.txt"
check "text: the forecast of a route that runs out within the hour, with the minutes it had" \
    grep -qE "^  workers: tpm reaches its quota in about [0-9]+ min at this trend \(fit over [0-9]+" "$TMP/t26.txt"
expect_eq "text rows align (STATUS column at one offset)" \
    "$(awk '/^ROUTE/{h=index($0,"STATUS")} /^(triage|summarize|workers|agents|backfill|legacy|experiments|triage-app|preview) /{print (substr($0,h,1) ~ /[a-z]/)}' "$TMP/t.txt" | sort -u)" 1

# 80 columns by default: no line longer than 80 characters (characters, not bytes).
longest() { python3 -c 'import sys; print(max(len(l.rstrip("\n")) for l in open(sys.argv[1], encoding="utf-8")))' "$1"; }
worst=0
for m in 0 8 16 20 24 29; do
    "$BEDTOP" check --demo --demo-at "$m" >"$TMP/w$m.txt"
    n=$(longest "$TMP/w$m.txt"); [ "$n" -gt "$worst" ] && worst=$n
done
check "check text fits 80 columns at every sampled minute (longest $worst)" test "$worst" -le 80
"$BEDTOP" check --demo --demo-at 16 --wide >"$TMP/wide.txt"
check "--wide shows every column (model, region, source, in flight)" \
    grep -q '^ROUTE .*MODEL .*REGION .*SOURCE .*INFL' "$TMP/wide.txt"
check "--wide puts a route on one line" grep -q '^triage .*us.anthropic.claude-sonnet-4-5-20250929-v1:0 .*50/50' "$TMP/wide.txt"
# Routes crit first, then warn, unknown, ok (minute 13: triage (retry storm) and preview
# (applied quota 0) crit; summarize, workers, backfill, legacy warn; experiments unknown;
# agents, triage-app, luna, opus48, fable (no published quota: information), reserved
# (provisioned: information) and nightly-eval (a batch candidate, before its runaway) ok).
expect_eq "routes ordered crit, warn, unknown, ok" \
    "$(awk '/^ROUTE/{on=1;next} on&&/^$/{exit} on{print $2}' "$TMP/t.txt" | paste -sd' ')" \
    "crit crit warn warn warn warn unknown ok ok ok ok ok ok ok"
expect_eq "warnings ordered by severity" \
    "$(awk '/^WARNINGS/{on=1;next} on&&/^(crit|warn|unknown|info) /{print $1}' "$TMP/t.txt" | uniq | paste -sd' ')" \
    "crit warn unknown info"
# One figure, one formatter: latency in s with its unit (not 5.3k); the mantle
# route's SETTLD is its input side, as the dashboard shows it (11.54M, not
# input + output 11.86M: they count against different quotas).
check "p99 latency printed with a unit" grep -q '^triage .* 5\.3s$' "$TMP/t.txt"
check "mantle SETTLD is the binding (input) side: 11.54M" grep -q '^agents .* 11\.54M ' "$TMP/t.txt"
check "no exponent anywhere in check text" bash -c "! grep -qE '[0-9]e[+-]?[0-9]' '$TMP/t.txt'"

# --route (repeatable) filters; an unknown name lists the names.
"$BEDTOP" check --demo --demo-at 16 --route agents --route triage --format json >"$TMP/sel.json"
expect_eq "--route twice: just those routes, config order in JSON" \
    "$(python3 -c 'import json,sys; print(" ".join(r["name"] for r in json.load(open(sys.argv[1]))["routes"]))' "$TMP/sel.json")" \
    "triage agents"
expect_rc "--route agents alone: ok, exit 0" 0 "$BEDTOP" check --demo --demo-at 16 --route agents
check "... and the text shows only that route" bash -c "grep -q '1 route  status ok' '$TMP/last.out' && ! grep -q '^triage' '$TMP/last.out'"
expect_rc "--route nosuch exits 3" 3 "$BEDTOP" check --demo --demo-at 16 --route nosuch
check "... naming the routes there are" grep -q "no route 'nosuch'; the routes are: triage, summarize, workers, agents, backfill, legacy, experiments" "$TMP/last.err"

# -o FILE: written there (0600), nothing on stdout; an existing 0644 file becomes 0600.
: >"$TMP/o.txt"; chmod 644 "$TMP/o.txt"
expect_rc "check -o FILE exits with the status (crit)" 2 "$BEDTOP" check --demo --demo-at 16 -o "$TMP/o.txt"
expect_eq "check -o writes nothing to stdout" "$(wc -c <"$TMP/last.out")" 0
check "check -o wrote the report" grep -q '^triage ' "$TMP/o.txt"
expect_eq "check -o file is 0600" "$(stat -c %a "$TMP/o.txt")" 600
expect_eq "check -o leaves no temporary file (written beside, renamed into place)" \
    "$(ls "$TMP" | grep -c '^o\.txt\.')" 0
expect_rc "check -o /dev/null (not a regular file) is written as it is" 2 "$BEDTOP" check --demo --demo-at 16 -o /dev/null
expect_rc "check -o into a missing directory exits 3" 3 "$BEDTOP" check --demo --demo-at 16 -o "$TMP/no/such/dir"
check "... one line naming the file" bash -c "[ \$(wc -l <'$TMP/last.err') = 1 ] && grep -q '^bedtop: -o $TMP/no/such/dir: No such file or directory; ' '$TMP/last.err'"

# Exit codes: worst of ok/warn/crit; an unknown route counts as --unknown-as (default
# warn), so it never masks another route; 3 is "bedtop could not run". Minute 0 without
# preview (its applied quota of 0 is crit at every minute): summarize and legacy warn,
# experiments unknown (no quota), nothing crit.
m0=(--demo --demo-at 0 --route summarize --route legacy --route experiments --route agents)
expect_rc "minute 0: warn + unknown route exits 1 (unknown counts as warn)" 1 "$BEDTOP" check "${m0[@]}"
expect_rc "--unknown-as unknown: exits 3" 3 "$BEDTOP" check "${m0[@]}" --unknown-as unknown
expect_rc "--unknown-as crit: exits 2" 2 "$BEDTOP" check "${m0[@]}" --unknown-as crit
expect_rc "only the unknown route: exits 1 by default" 1 "$BEDTOP" check --demo --demo-at 0 --route experiments
expect_rc "minute 16: crit beside an unknown route exits 2" 2 "$BEDTOP" check --demo --demo-at 16
"$BEDTOP" check "${m0[@]}" --format json >"$TMP/u.json"
expect_eq "JSON status follows the same rule (warn), the route keeps 'unknown'" \
    "$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["status"], {r["name"]:r["status"] for r in d["routes"]}["experiments"])' "$TMP/u.json")" \
    "warn unknown"
expect_rc "--unknown-as bogus exits 3" 3 "$BEDTOP" check --demo --unknown-as maybe
check "... saying what is accepted" grep -q "use warn, crit or unknown" "$TMP/last.err"

# Options that do not apply are errors, one line naming the option and the command.
na() { # NAME ARGS...
    local name=$1; shift
    expect_rc "$name exits 3" 3 "$BEDTOP" "$@"
    check "... one line naming the option and command" bash -c "[ \$(wc -l <'$TMP/last.err') = 1 ]"
}
na "check --at" check --demo --at 10:00
check "... says it is for replay" grep -q "^bedtop: --at does not apply to check; it is for replay" "$TMP/last.err"
na "export --at" export "$TMP/x.rec" --at 10:00
check "... names export" grep -q "^bedtop: --at does not apply to export" "$TMP/last.err"
na "check --since" check --demo --since 3h
na "check --interval" check --demo --interval 30
na "check --theme" check --demo --theme light
na "record --route" record "$TMP/r.rec" --demo --route triage
na "dashboard --format" --demo --format json
na "check --demo-at 30 (help says 0-29)" check --demo-at 30
check "... says 0 to 29" grep -q "use 0 to 29" "$TMP/last.err"
na "check --demo-at -1" check --demo-at -1
na "--bogus" --bogus
expect_eq "--bogus prints one line, not the usage" "$(cat "$TMP/last.err")" "bedtop: unknown option --bogus; see bedtop --help"
na "--route without a value" check --route
na "--wide with --format json" check --demo --wide --format json

# Prometheus text: every sample line is name{labels} value; HELP/TYPE before samples.
"$BEDTOP" check --demo --demo-at 16 --format prometheus >"$TMP/p.prom"
check "prometheus output parses" python3 - "$TMP/p.prom" <<'PY'
import re, sys
typed = set()
for line in open(sys.argv[1]):
    line = line.rstrip("\n")
    if line.startswith("# TYPE "):
        typed.add(line.split()[2]); continue
    if line.startswith("#") or not line: continue
    m = re.match(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{([a-zA-Z_][a-zA-Z0-9_]*="([^"\\]|\\.)*",?)*\})? (NaN|[-+0-9.eE]+|[+-]Inf)$', line)
    if not m or m.group(1) not in typed:
        print("bad line:", line); sys.exit(1)
PY
check "prometheus has the headroom of triage" grep -q '^bedtop_headroom_tokens_per_minute{route="triage"' "$TMP/p.prom"

# Bad config: one line "file:line: why; what to do", exit 3. As data: name, config
# text (printf format), the message expected (grep pattern).
cfg_err() {
    printf "$2" >"$TMP/$1.conf"
    expect_rc "$1: exits 3" 3 "$BEDTOP" check --config "$TMP/$1.conf"
    check "$1: says $3" grep -q -- "$1.conf:$3" "$TMP/last.err"
}
cfg_err bad '[bedtop]\ninterval = 60\nfrobnicate = yes\n' "3: unknown key 'frobnicate'"
cfg_err nomodel '[route x]\nregion = us-east-1\n' "1: route 'x' has no model"
cfg_err neg '[route x]\nmodel = m\nquota_tpm = -4\n' "3: bad number for quota_tpm"
cfg_err typo '[route a]\nmodel = m\nmax_token = 5\n' "3: unknown key 'max_token' in \[route a\]; did you mean 'max_tokens'?"
cfg_err typo2 '[bedtop]\nintervall = 30\n' "2: unknown key 'intervall' in \[bedtop\]; did you mean 'interval'?"
cfg_err unterm '[bedtop\nregion = us-east-1\n' "1: unterminated section header '\[bedtop'; close it with ']'"
cfg_err huge '[route a]\nmodel = m\nquota_tpm = 1e300\n' "3: bad number for quota_tpm: '1e300'; use 1 to 1,000,000,000,000,000"
cfg_err nosection 'region = us-east-1\n' "1: 'region' is outside any section; put it under \[bedtop\] or \[route NAME\]"
expect_rc "missing config file exits 3" 3 "$BEDTOP" check --config "$TMP/nope.conf"

# Error messages: one line, "bedtop: what: why; what to do", never cut short.
noaws() { env -i PATH="$PATH" HOME="$TMP/home" AWS_EC2_METADATA_DISABLED=true \
    AWS_CONFIG_FILE=/nonexistent AWS_SHARED_CREDENTIALS_FILE=/nonexistent "$@"; }
mkdir -p "$TMP/home"
expect_rc "no Region exits 3" 3 noaws "$BEDTOP" check
check "no Region: one line naming AWS_REGION and --region" bash -c "[ \$(wc -l <'$TMP/last.err') = 1 ] && grep -q 'no AWS Region is set; set AWS_REGION, pass --region' '$TMP/last.err'"
expect_rc "no credentials exits 3" 3 noaws AWS_REGION=us-east-1 "$BEDTOP" check
check "no credentials: one line, the whole list tried, a remedy and --demo" python3 - "$TMP/last.err" <<'PY'
import sys
t = open(sys.argv[1]).read()
assert t.count("\n") == 1, t
assert t.startswith("bedtop: route discovery (ListMetrics us-east-1): "), t
assert "route discovery: route discovery" not in t, t
assert "IMDSv2" in t, "cut short: " + t          # the last source tried is there
assert "aws sso login" in t and "bedtop --demo" in t, t
PY
mkdir -p "$TMP/adir"
expect_rc "replay of a directory exits 3" 3 "$BEDTOP" replay "$TMP/adir"
check "replay of a directory says so" grep -q "replay: $TMP/adir is a directory; give a recording file" "$TMP/last.err"
closed=$(free_port)
printf '[route a]\nmodel = m\nregion = us-east-1\n' >"$TMP/one.conf"
expect_rc "nothing answers: exit 3 (bedtop could not read any usage)" 3 noaws AWS_ACCESS_KEY_ID=AKIDEXAMPLE \
    AWS_SECRET_ACCESS_KEY=x "$BEDTOP" check --config "$TMP/one.conf" --endpoint-url "http://127.0.0.1:$closed" --format json
expect_eq "... and the JSON status says unknown" \
    "$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["status"])' "$TMP/last.out")" unknown
check "... each collector error once, without a doubled prefix, with a remedy" \
    bash -c "grep -q '^bedtop: cloudwatch us-east-1: .*; check the network, the credentials and --endpoint-url' '$TMP/last.err' && ! grep -q 'cloudwatch: cloudwatch' '$TMP/last.err'"
# A burndown table that cannot be read is an error naming its path, never every model
# at 1 (Claude Sonnet 4.5 would settle 562,704 instead of 872,784). The binary is run
# from outside the tree, with BEDTOP_DATADIR pointing at an empty directory.
mkdir -p "$TMP/bin" "$TMP/nodata"
cp "$BEDTOP" "$TMP/bin/bedtop"
if [ -r /usr/local/share/bedtop/burndown.conf ]; then
    skip "missing burndown table: an installed /usr/local/share/bedtop/burndown.conf would be found"
else
    BEDTOP_DATADIR=$TMP/nodata "$TMP/bin/bedtop" check --demo >"$TMP/nob.out" 2>"$TMP/nob.err"
    expect_eq "missing burndown table: exit 3" "$?" 3
    check "... naming the path it looked for" grep -q "^bedtop: burndown table: $TMP/nodata/burndown.conf: cannot be read" "$TMP/nob.err"
    check "... nothing on stdout" test ! -s "$TMP/nob.out"
fi
mkdir -p "$TMP/baddata"
printf 'anthropic.claude-sonnet-4* = five\n' >"$TMP/baddata/burndown.conf"
BEDTOP_DATADIR=$TMP/baddata "$TMP/bin/bedtop" check --demo >"$TMP/bad.out" 2>"$TMP/bad.err"
expect_eq "unparsable burndown table: exit 3" "$?" 3
check "... naming file and line" grep -q "$TMP/baddata/burndown.conf:1: bad burndown row 'five'" "$TMP/bad.err"
expect_rc "bad --format exits 3" 3 "$BEDTOP" check --demo --format yaml
expect_rc "unknown command exits 3" 3 "$BEDTOP" frobnicate
expect_rc "--help exits 0" 0 "$BEDTOP" --help
check "--help fits 80 columns" bash -c "[ \$(awk '{ if (length(\$0) > m) m = length(\$0) } END { print m }' '$TMP/last.out') -le 80 ]"
check "--version prints the version" bash -c "'$BEDTOP' --version | grep -q '^bedtop [0-9]'"
# The remedy follows the kind of failure the HTTP answer had (typed by the AWS policy),
# not words found in the message: AccessDenied whose text mentions credentials is still
# a permission problem, and a throttled ListMetrics is neither.
discover_with_fault() { # NAME STATUS CODE MESSAGE
    printf '{"series": [], "faults": [{"op": "ListMetrics", "count": 0, "action": "error", "status": %s, "code": "%s", "message": "%s"}]}\n' \
        "$2" "$3" "$4" >"$TMP/$1.json"
    start_fake "$1" --scenario "$TMP/$1.json" || return 1
    noaws AWS_ACCESS_KEY_ID=AKIDEXAMPLE AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY \
        AWS_REGION=us-east-1 "$BEDTOP" check --endpoint-url "http://127.0.0.1:$PORT" >"$TMP/$1.out" 2>"$TMP/$1.err"
}
discover_with_fault denied 400 AccessDeniedException \
    "User is not authorized to perform cloudwatch:ListMetrics with these credentials"
check "discovery refused (AccessDenied, 'credentials' in its text): the permission remedy" \
    bash -c "grep -q 'grant cloudwatch:ListMetrics' '$TMP/denied.err' && ! grep -q 'aws sso login' '$TMP/denied.err'"
discover_with_fault badkey 403 UnrecognizedClientException "The security token included in the request is invalid"
check "discovery with keys AWS does not know: the credentials remedy" grep -q 'aws sso login' "$TMP/badkey.err"
discover_with_fault slow 400 ThrottlingException "Rate exceeded"
check "discovery throttled: retry later, not the network or credentials remedy" \
    bash -c "grep -q 'retry in a minute' '$TMP/slow.err' && ! grep -q 'aws sso login' '$TMP/slow.err'"

finish
