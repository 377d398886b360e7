#!/usr/bin/env bash
# One rule for the binding side of a mantle route, read by every view: the JSON of
# `replay --at` and the dashboard (tmux) show the same side, figures and status.
# A hand-written recording: mantle route "m", input and output quotas 4,000,000 each;
# minute 10:06: 400 inferences, 1,000,000 input (2,500 each), 3,900,000 output,
# max_tokens 2,000, no latency metric (mantle publishes none):
#   input used  = max(1,000,000, 400 x (2,500 + 2,000)) = 1,800,000 -> 55 % left
#   output used = 3,900,000                             -> 100,000 = 2.5 % left
# output binds (version 1's dashboard drew the input side beside a crit 2.5 %).
. "$BEDTOP_SRCDIR/tests/lib.sh"
T0=1795946400                     # 2026-11-29 10:00:00 UTC
M=$((T0 + 360)) AT=$((T0 + 600))  # minute 10:06, polled at 10:09:30 (2 min lag)
REC=$TMP/m.rec
cat >"$REC" <<JSON
{"format":"bedtop-recording","version":"1.2","created":"2026-11-29T10:09:30Z","created_by":"test","mode":"live","signals":["invocations","input_tokens","output_tokens"],"config":{"interval":60,"cloudwatch_lag":120,"warn_headroom":"20%","crit_headroom":"5%"},"routes":[{"name":"m","model":"anthropic.claude-opus-4-7","region":"us-east-1","endpoint":"mantle","inference":"on-demand","priority":"online","max_tokens":2000,"burndown":1,"burndown_source":"default","admission":false,"quotas":{"input_tpm":{"value":4000000,"source":"config"},"output_tpm":{"value":4000000,"source":"config"}}}]}
{"t":$((AT - 30)),"s":[[0,$M,$((AT - 30)),[0,400,1,1000000,2,3900000]]],"e":[{"t":$((AT - 30)),"type":"ok","route":-1,"source":"cloudwatch"}]}
JSON
chmod 600 "$REC"
"$BEDTOP" replay "$REC" --at 10:06 --format json >"$TMP/m.json" 2>"$TMP/m.err"
j() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); r=d['routes'][0]; print($1)" "$TMP/m.json"; }
expect_eq "JSON: the two sides" \
    "$(j "(r['mantle']['input']['headroom_pct'], r['mantle']['output']['headroom_pct'])")" "(55, 2.5)"
expect_eq "JSON: output binds; the route's quota, used and headroom are its" \
    "$(j "(r['mantle']['binding'], r['quota']['output_tpm'], r['tpm']['used'], r['headroom_tpm'], r['headroom_pct'], r['status'])")" \
    "('output', 4000000, 3900000, 100000, 2.5, 'crit')"
check "JSON: LOW_HEADROOM says the output quota binds" grep -q "output quota binds" "$TMP/m.json"

TUI_CMD="$BEDTOP replay $REC"
EXTRA=""
. "$BEDTOP_SRCDIR/tests/termlib.sh"
start mv 120 30 C.UTF-8
check "dashboard comes up on the recording" wait_for mv "ROUTE "
row=$(T capture-pane -p -t mv | grep -E '^m +' | head -1)
echo "# $row"
check "dashboard row: crit at 2.5 %, the output side's 3.90M of 4.00M" \
    grep -qE '^m +CRIT +2\.5 .* 3\.90M .* 4\.00M' <<<"$row"
check "dashboard row: not the input side's 1.80M" bash -c "! grep -q '1\.80M' <<<\"\$1\"" _ "$row"
finish
