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
         NO_QUOTA SHARED_QUOTA BURNDOWN_MISMATCH; do
    case " $codes " in *" $c "*) ok "demo timeline triggers $c";; *) notok "demo timeline never triggers $c";; esac
done

# Story beats at the minutes the demo's comment promises.
j() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); r={x['name']:x for x in d['routes']}; print($2)" "$TMP/m$1.json"; }
expect_eq "minute 4: calm triage has no RETRY_LOAD" "$(j 4 "'RETRY_LOAD' in [w['code'] for w in r['triage']['warnings']]")" False
expect_eq "minute 16: triage retry storm" "$(j 16 "'RETRY_LOAD' in [w['code'] for w in r['triage']['warnings']]")" True
expect_eq "minute 12: summarize throttled while the estimate is ~6% of quota" \
    "$(j 12 "r['summarize']['tpm']['estimated'] < 0.1*r['summarize']['quota']['tpm'] and r['summarize']['throttles_per_min']>0")" True
expect_eq "workers: 40 in flight vs 25" "$(j 10 "(r['workers']['in_flight'], r['workers']['concurrency_limit'])")" "(40, 25)"
expect_eq "agents is mantle with split quotas" "$(j 10 "(r['agents']['endpoint'], r['agents']['mantle']['input']['quota'], r['agents']['mantle']['output']['quota'])")" "('mantle', 20000000, 4000000)"
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
expect_eq "experiments goes stale at 20 and recovers by 28" \
    "$(j 20 "r['experiments']['stale']") $(j 28 "r['experiments']['stale']")" "True False"

# Deterministic: the same minute twice gives the same bytes.
"$BEDTOP" check --demo --demo-at 16 --format json >"$TMP/a.json"
"$BEDTOP" check --demo --demo-at 16 --format json >"$TMP/b.json"
check "demo is deterministic" cmp -s "$TMP/a.json" "$TMP/b.json"

# Text: aligned table, no escape codes when stdout is not a terminal.
"$BEDTOP" check --demo --demo-at 16 >"$TMP/t.txt"
check "text output has no escape codes when piped" bash -c "! grep -q $'\033' '$TMP/t.txt'"
check "text output has the header row" grep -q '^ROUTE .*HEAD%.*STATUS' "$TMP/t.txt"
check "text output lists warnings with actions" grep -q -- '-> ' "$TMP/t.txt"
expect_eq "text rows align (STATUS column at one offset)" \
    "$(awk '/^ROUTE/{h=index($0,"STATUS")} /^(triage|summarize|workers|agents|backfill|legacy|experiments|triage-app|preview) /{print (substr($0,h,1) ~ /[a-z]/)}' "$TMP/t.txt" | sort -u)" 1

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
check "prometheus has the headroom of triage" grep -q '^bedtop_headroom_tpm{route="triage"' "$TMP/p.prom"

# Bad config: file:line: why, exit 3, nothing on stdout.
printf '[bedtop]\ninterval = 60\nfrobnicate = yes\n' >"$TMP/bad.conf"
expect_rc "unknown key exits 3" 3 "$BEDTOP" check --config "$TMP/bad.conf"
check "unknown key message names file:line" grep -q "bad.conf:3: unknown key 'frobnicate'" "$TMP/last.err"
printf '[route x]\nregion = us-east-1\n' >"$TMP/nomodel.conf"
expect_rc "route without model exits 3" 3 "$BEDTOP" check --config "$TMP/nomodel.conf"
check "route without model names file:line" grep -q "nomodel.conf:1: route 'x' has no model" "$TMP/last.err"
printf '[route x]\nmodel = m\nquota_tpm = -4\n' >"$TMP/neg.conf"
expect_rc "bad number exits 3" 3 "$BEDTOP" check --config "$TMP/neg.conf"
check "bad number message" grep -q "neg.conf:3: bad number for quota_tpm" "$TMP/last.err"
expect_rc "missing config file exits 3" 3 "$BEDTOP" check --config "$TMP/nope.conf"
# A burndown table that cannot be read is an error naming its path, never every model
# at 1 (Claude Sonnet 4.5 would settle 562,704 instead of 872,784). The binary is run
# from outside the tree, with BEDTOP_DATADIR pointing at an empty directory.
mkdir -p "$TMP/bin" "$TMP/nodata"
cp "$BEDTOP" "$TMP/bin/bedtop"
if [ -r /usr/local/share/bedtop/burndown.conf ]; then
    echo "# SKIP missing burndown table: an installed /usr/local/share/bedtop/burndown.conf would be found"
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
check "... naming file and line" grep -q "$TMP/baddata/burndown.conf:1: bad burndown factor 'five'" "$TMP/bad.err"
expect_rc "bad --format exits 3" 3 "$BEDTOP" check --demo --format yaml
expect_rc "unknown command exits 3" 3 "$BEDTOP" frobnicate
expect_rc "--help exits 0" 0 "$BEDTOP" --help
check "--version prints the version" bash -c "'$BEDTOP' --version | grep -q '^bedtop [0-9]'"
finish
