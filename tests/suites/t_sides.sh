#!/usr/bin/env bash
# One side per number (issue 34 item 4), every writer: a percentage is printed only
# beside the figures of its own side, and every writer names the binding side. The
# demo at minute 16 (data minute 10:13) has two routes bound by a side that is not
# their token side:
#   legacy   (Amazon Nova Lite, runtime): tpm quota 1,000,000, used 194,498 (a lower
#            bound: no held figure), headroom 805,502 = 80.6 % (at most); rpm quota 95,
#            accepted 79 a minute: headroom 16 = 16/95 = 16.8 %: rpm binds, fits 16.
#            Before: "806k of 1.00M TPM (16.8%, rpm)" and /metrics
#            bedtop_headroom_tokens_per_minute 805502 beside bedtop_headroom_ratio 0.168.
#   backfill (Llama 3.3 70B): daily quota 290,000,000, used 236,113,253 today: headroom
#            53,886,747 = 18.6 %; tpm 1,500,000 - 1,108,649 = 391,351 = 26.1 %: daily
#            binds, fits 53,886,747 / R = 21,257 more calls *today*, not "in flight".
# Float noise: triage's headroom is 2,000,000 - 1,128,598.2443 = 871,401.7557, printed
# 871401.7557000001 before (the shortest round trip of the double arithmetic left).
. "$BEDTOP_SRCDIR/tests/lib.sh"

"$BEDTOP" check --demo --demo-at 13 --format json >"$TMP/c.json"
j() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); r={x['name']: x for x in d['routes']}; print($1)" "$TMP/c.json"; }
expect_eq "JSON: legacy binds rpm; its tpm figures are the token side's, named" \
    "$(j "(r['legacy']['binding_side'], r['legacy']['token_side'], r['legacy']['headroom_pct'], r['legacy']['fits_more'], r['legacy']['headroom_tpm'])")" \
    "('rpm', 'tpm', 16.8, 16, 805502)"
expect_eq "JSON: the rpm side's own figures beside its percentage" \
    "$(j "tuple(r['legacy']['sides']['rpm'][k] for k in ('quota', 'used', 'headroom', 'headroom_pct'))")" \
    "(95, 79, 16, 16.8)"
expect_eq "JSON: a mantle route's token side is its binding input side" \
    "$(j "(r['agents']['binding_side'], r['agents']['token_side'])")" "('input', 'input')"

# Prometheus: each headroom series names its side
"$BEDTOP" check --demo --demo-at 13 --format prometheus >"$TMP/m.prom"
series() { grep -E "^$1\{route=\"$2\"" "$TMP/m.prom" | grep -oE 'side="[a-z_]*"[^ ]* [^ ]+$' | sed 's/,.*} / /; s/} / /'; }
expect_eq "/metrics: legacy's headroom tokens are the tpm side's" \
    "$(series bedtop_headroom_tokens_per_minute legacy)" 'side="tpm" 805502'
expect_eq "/metrics: legacy's headroom ratio is the rpm side's (16/95), labelled so" \
    "$(series bedtop_headroom_ratio legacy)" 'side="rpm" 0.168421052631579'
expect_eq "/metrics: legacy's fits_more is the rpm side's" \
    "$(series bedtop_fits_more_calls legacy)" 'side="rpm" 16'
expect_eq "/metrics: backfill's fits_more is the daily side's" \
    "$(series bedtop_fits_more_calls backfill)" 'side="daily" 21257'
expect_eq "/metrics: triage's headroom without float noise" \
    "$(grep -E '^bedtop_headroom_tokens_per_minute\{route="triage"' "$TMP/m.prom" | awk '{print $2}')" \
    "871401.7557"
check "/metrics: no sample carries binary noise (six 0s or 9s then a last digit)" \
    bash -c '! grep -vE "^#" "$1" | awk "{print \$NF}" | grep -qE "\.[0-9]*(000000|999999)[0-9]$"' _ "$TMP/m.prom"

# CSV: binding_side, the export row's side of headroom_pct and fits_more
"$BEDTOP" record "$TMP/d.rec" --demo --demo-speed max --duration 20m 2>/dev/null
"$BEDTOP" export "$TMP/d.rec" --format csv >"$TMP/e.csv" 2>"$TMP/e.err"
expect_eq "CSV: the header ends with binding_side" "$(head -1 "$TMP/e.csv" | awk -F, '{print $NF}')" '"binding_side"'
csvq() { python3 -c "
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
print($1)" "$TMP/e.csv"; }
expect_eq "CSV: legacy's row at 10:13 names rpm beside its 16.8 %" \
    "$(csvq "[(r['headroom_pct'], r['binding_side']) for r in rows if r['route'] == 'legacy' and r['time'] == '2026-11-29T10:13:00Z']")" \
    "[('16.8', 'rpm')]"
expect_eq "CSV: every row's binding_side is the JSON's" \
    "$(csvq "sorted({r['binding_side'] for r in rows if r['route'] == 'backfill' and r['time'] == '2026-11-29T10:13:00Z'})")" \
    "['daily']"

# text: the table's HEAD% names the side that binds
"$BEDTOP" check --demo --demo-at 13 >"$TMP/c.txt"
check "text: HEAD% names legacy's rpm and backfill's daily side" \
    grep -qE "HEAD% of the side that binds: .*legacy rpm" "$TMP/c.txt"
check "text: ... and backfill's daily side" grep -qE "HEAD% of the side that binds: .*backfill daily" "$TMP/c.txt"

# the detail view (tmux, 200x60): the headline and (End) the figures section, each
# percentage beside its own side's headroom and quota; the fits word of the side
TUI_CMD="$BEDTOP --demo-at 13"
EXTRA=""
. "$BEDTOP_SRCDIR/tests/termlib.sh"
detail() { # detail ROUTE: the route's detail screen, captured
    local s=d-$1
    start "$s" 200 60 C.UTF-8
    wait_for "$s" "ROUTE " || return 1
    keys "$s" / $(sed 's/./& /g' <<<"$1") Enter Enter
    wait_for "$s" " $1 WARN " || return 1
    T capture-pane -p -t "$s"
    T send-keys -t "$s" -l $'\eOF' # End: the figures section
    wait_for "$s" " PgUp" || return 1
    # the pane may be caught mid-redraw (the header's PgUp drawn, the figures not
    # yet): wait for the figures section's own headroom line too
    wait_for "$s" ", binding side " || return 1
    T capture-pane -p -t "$s"
    T kill-session -t "$s"
}
detail legacy >"$TMP/legacy.txt"
check "detail: legacy's headline is the rpm side's 16 of 95 RPM beside 16.8 %" \
    grep -qF " headroom 16 of 95 RPM (16.8%, rpm)  fits 16 more calls this minute  tpm at most 806k of 1.00M TPM (80.6%)" "$TMP/legacy.txt"
check "detail: no TPM tokens beside the rpm side's 16.8 %" bash -c '! grep -qE "TPM \(16\.8%|TPM, 16\.8%" "$1"' _ "$TMP/legacy.txt"
check "detail: the figures' headroom line is the rpm side's" \
    grep -qE "headroom +16 of 95 RPM, 16\.8% \(known\), binding side rpm" "$TMP/legacy.txt"
detail backfill >"$TMP/backfill.txt"
check "detail: backfill's daily side fits more calls today, not in flight" \
    grep -qF " headroom 53.89M of 290.00M tokens/day (18.6%, daily)  fits 21k more calls today  tpm 391k of 1.50M TPM (26.1%)" "$TMP/backfill.txt"
check "detail: ... and its fits line says so" grep -qE "fits +21k more calls today \(daily side\)" "$TMP/backfill.txt"
finish
