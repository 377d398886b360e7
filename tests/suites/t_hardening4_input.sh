#!/usr/bin/env bash
# Issue 37 ("hardening, round four"): recordings and numbers from outside, through the
# real binary, one named check (or a few) per break; the parsers' own parts are in the
# unit tests (test_recording_header, test_absurd_values, test_admission, test_plan).
# No check here asserts a time: `timeout` only keeps a regression from hanging the run.
. "$BEDTOP_SRCDIR/tests/lib.sh"
FIX=$BEDTOP_SRCDIR/tests/data/fixture.rec
G=300 # seconds before a hung command counts as a failure (generous: ASan, valgrind, load)

# ---- r4 break 5: a header time long before the polls is a note, not a window ----
# fixture.rec is a demo recording created 10:00:00 with its polls from 10:00:00 on; the
# same file saying "created":"1970-01-01T00:01:00Z" walked every minute since 1970
# (29 million minutes: hours and up to 1.5 GB). Now both cover the same 31 data minutes.
cp "$FIX" "$TMP/a.rec"
sed '1s/"created":"[^"]*"/"created":"1970-01-01T00:01:00Z"/' "$FIX" >"$TMP/b.rec"
"$BEDTOP" export "$TMP/a.rec" -o "$TMP/a.csv" 2>"$TMP/a.err"
timeout "$G" "$BEDTOP" export "$TMP/b.rec" -o "$TMP/b.csv" 2>"$TMP/b.err"
expect_eq "r4 break 5: export of a recording 'created' in 1970 ends" "$?" 0
check "r4 break 5: ... with the rows of its own polls only (as the same file created 10:00)" \
    cmp -s "$TMP/a.csv" "$TMP/b.csv"
check "r4 break 5: ... and says why the header time is not its start" \
    grep -q "b.rec:1: header says created 1970-01-01T00:01:00Z, long before the first poll (2026-11-29T10:00:00Z); the recording starts at its first poll" "$TMP/b.err"
"$BEDTOP" report incident "$TMP/a.rec" -o "$TMP/ia" >/dev/null 2>&1
timeout "$G" "$BEDTOP" report incident "$TMP/b.rec" -o "$TMP/ib" >"$TMP/ib.out" 2>"$TMP/ib.err"
expect_eq "r4 break 5: report incident of it ends" "$?" 0
check "r4 break 5: ... over its 31 data minutes" grep -q "31 data minutes" "$TMP/ib.out"
sed 's/b\.rec/a.rec/' "$TMP/ib/report.md" >"$TMP/ib.md"
check "r4 break 5: ... and its report.md is the one of the same file created 10:00" \
    cmp -s "$TMP/ia/report.md" "$TMP/ib.md"
# an event far after the last poll does not stretch the end either
{ cat "$FIX"; echo '{"t":1795948260,"s":[],"e":[{"t":4102444800,"type":"marker","text":"2100"}]}'; } >"$TMP/late.rec"
timeout "$G" "$BEDTOP" export "$TMP/late.rec" -o "$TMP/late.csv" 2>"$TMP/late.err"
expect_eq "r4 break 5: an event in 2100 after the last poll: export ends" "$?" 0
check "r4 break 5: ... at the last poll, and says so" \
    grep -q "an event at 2100-01-01T00:00:00Z is more than an hour after the last poll" "$TMP/late.err"

finish
