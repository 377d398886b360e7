#!/usr/bin/env bash
# One clock on the dashboard (issue 34 items 1 and 3, helpers in tests/termlib.sh):
# the header names the data minute on screen and the clock beside it; the detail
# graphs file an admission reading under the data minute it is evaluated with, as
# export's row of that minute does (they filed it under its scrape minute, three
# minutes later: "retried 420" in the legend where the point drawn was 120); the
# graphs' right edge names its data minute; a marker says which data minute it is
# filed under, the one the header shows. Goldens: the header and graphs screen at
# 120x40 as layout goldens (numbers masked); the figures that matter are checked
# against export, worked below.
. "$BEDTOP_SRCDIR/tests/lib.sh"
TUI_CMD=""
. "$BEDTOP_SRCDIR/tests/termlib.sh"
EXTRA=""
LAYOUT_GOLDENS=1
VALUE_GOLDENS=""
HEAD="ROUTE "
screen_has() { # NAME REGEX: polls the screen as wait_for does
    local i
    for i in $(seq 1 100); do
        T capture-pane -p -t "$1" | grep -qE -- "$2" && return 0
        sleep 0.05
    done
    return 1
}

REC=$TMP/demo.rec
"$BEDTOP" record "$REC" --demo --demo-speed max --duration 30m >"$TMP/rec.out" 2>&1
check "the demo recorded on the unpaced clock" test -s "$REC"
"$BEDTOP" export "$REC" --route triage >"$TMP/triage.csv"
# export's admission columns of triage at data minute M (as replay --at M reads them)
adm() { python3 - "$TMP/triage.csv" "$1" "$2" <<'PY'
import csv, sys
r = [r for r in csv.DictReader(open(sys.argv[1], newline="")) if r["time"] == "2026-11-29T%s:00Z" % sys.argv[2]][0]
print(r[sys.argv[3]])
PY
}

# The live dashboard, frozen at data minute 10:13 (seen 10:16:59): the header says so.
s=head; TUI_CMD="$BEDTOP --demo-at 13"; start $s 120 40 C.UTF-8
check "dashboard --demo-at 13 comes up" wait_for $s "$HEAD"
check "the header names data minute 10:13 and the clock 10:16:59 beside it" \
    wait_for $s " bedtop  demo  data 2026-11-29T10:13:00Z · now 10:16:59 "
golden "clock-header-120x40" $s
T kill-session -t $s
s=head80; start $s 80 24 C.UTF-8
check "80x24: the short form, 'data 10:13 · now 10:16'" wait_for $s " demo data 10:13 · now 10:16 "
T kill-session -t $s
s=head80a; start $s 80 24 C
check "80x24 ASCII: 'data 10:13, now 10:16'" wait_for $s " demo data 10:13, now 10:16 "
T kill-session -t $s

# The graphs of a replay at data minute 10:16 (seen 10:19:59): triage's offered and
# accepted calls. Export's row of 10:16 has the admission figures the legend reads
# (the evaluation's own), and with the cursor at 10:13 the legend reads export's row
# of 10:13, not its row of 10:10 (the scrape of clock minute 10:13).
s=graphs; TUI_CMD="$BEDTOP replay $REC"; start $s 120 40 C.UTF-8
check "replay comes up" wait_for $s "$HEAD"
keys $s g 1 0 : 1 6 Enter
# the header's short form at 120 columns (the failing Region's count takes the room),
# the status bar's to the second
check "g 10:16: the header says data 10:16 · seen 10:19" wait_for $s " REPLAY data 10:16 · seen 10:19 "
check "... the status bar data 10:16 seen 10:19:59" wait_for $s "data 10:16 seen 10:19:59"
keys $s / t r i a g e Enter Enter
check "triage's detail" screen_has $s " triage (WARN|CRIT) "
for i in $(seq 1 15); do
    T capture-pane -p -t $s | grep -qF "■ admitted" && break
    keys $s Down Down Down Down Down; sleep 0.1
done
a16=$(adm 10:16 adm_admitted_pm) r16=$(adm 10:16 adm_retries_pm) c16=$(adm 10:16 adm_completed_pm)
check "the legend at 10:16 is export's row of 10:16: admitted $a16, retried $r16, completed $c16" \
    screen_has $s "admitted $a16  ◇ retried $r16  ✕ throttled [0-9]+  □ completed $c16"
check "the graphs' right edge names data minute 10:16, not 'now'" \
    screen_has $s "│? +10:16 *$"
golden "clock-graphs-1016-120x40" $s
# the first < puts the cursor on the right edge's minute, three more go back to 10:13
keys $s '<' '<' '<' '<'
check "< x4: the cursor on 10:13" screen_has $s "10:13"
a13=$(adm 10:13 adm_admitted_pm) r13=$(adm 10:13 adm_retries_pm) c13=$(adm 10:13 adm_completed_pm)
r10=$(adm 10:10 adm_retries_pm)
check "the cursor at 10:13 reads export's row of 10:13: admitted $a13, retried $r13, completed $c13" \
    screen_has $s "admitted $a13  ◇ retried $r13  ✕ throttled [0-9]+  □ completed $c13"
# the storm's offered load: 10:10 is calm (120 retried), 10:13 is the storm (420), so a
# cursor filing readings by scrape minute showed 10:10's figure at 10:13
check "... not export's row of 10:10 (retried $r10)" test "$r10" != "$r13"
golden "clock-graphs-cursor-1013-120x40" $s
T kill-session -t $s

# A marker is filed under the data minute the header shows: the dashboard frozen at
# data minute 10:04 (seen 10:07:59) while recording; m asks, Enter files the note under
# 10:04 and says so; export puts it on the rows of 10:04.
MREC=$TMP/marked.rec
s=marker; TUI_CMD="$BEDTOP --demo-at 4 --record $MREC"; start $s 120 40 C.UTF-8
check "the recording dashboard comes up" wait_for $s " REC "
check "... showing data minute 10:04, now 10:07:59" wait_for $s "data 2026-11-29T10:04:00Z · now 10:07:59"
keys $s m
check "m asks for a note" wait_for $s "marker note: _"
keys $s -l "deploy 42"
keys $s Enter
check "Enter files it under data minute 10:04 and says so" wait_for $s "marker at data 10:04 added: deploy 42"
keys $s q
check "the dashboard exits 0" wait_for $s "EXITED rc=0"
T kill-session -t $s
"$BEDTOP" export "$MREC" >"$TMP/marked.csv" 2>/dev/null
expect_eq "export: the marker on the rows of data minute 10:04 only" \
    "$(python3 -c 'import csv,sys; print(sorted({r["time"] for r in csv.DictReader(open(sys.argv[1])) if r["markers"] == "deploy 42"}))' "$TMP/marked.csv")" \
    "['2026-11-29T10:04:00Z']"
finish
