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
         LOW_HEADROOM QUOTA_DEFAULT QUOTA_UNKNOWN STALE DAILY_QUOTA BATCH_CANDIDATE; do
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
    "$(awk '/^ROUTE/{h=index($0,"STATUS")} /^(triage|summarize|workers|agents|backfill|legacy|experiments) /{print (substr($0,h,1) ~ /[a-z]/)}' "$TMP/t.txt" | sort -u)" 1

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
expect_rc "bad --format exits 3" 3 "$BEDTOP" check --demo --format yaml
expect_rc "unknown command exits 3" 3 "$BEDTOP" frobnicate
expect_rc "--help exits 0" 0 "$BEDTOP" --help
check "--version prints the version" bash -c "'$BEDTOP' --version | grep -q '^bedtop [0-9]'"
finish
