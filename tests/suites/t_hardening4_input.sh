#!/usr/bin/env bash
# Issue 37 ("hardening, round four"): recordings and numbers from outside, through the
# real binary, one named check (or a few) per break; the parsers' own parts are in the
# unit tests (test_recording_header, test_absurd_values, test_admission, test_plan).
# No check here asserts a time: `timeout` only keeps a regression from hanging the run.
. "$BEDTOP_SRCDIR/tests/lib.sh"
FIX=$BEDTOP_SRCDIR/tests/data/fixture.rec
G=${BEDTOP_TEST_GUARD:-300} # seconds before a hung command counts as a failure (generous: ASan, valgrind, load)

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
# a poll line at 1970-01-01T00:01:00Z itself: the window is the newest 16 days of polls
{ head -n 1 "$FIX"; echo '{"t":60,"s":[]}'; tail -n +2 "$FIX"; } >"$TMP/c.rec"
timeout "$G" "$BEDTOP" export "$TMP/c.rec" -o "$TMP/c.csv" 2>"$TMP/c.err"
expect_eq "r4 break 5: export of a recording with a poll in 1970 ends" "$?" 0
check "r4 break 5: ... with the minutes and routes of its newest 16 days (those of the fixture)" \
    bash -c "cmp -s <(cut -d, -f1,2 '$TMP/a.csv') <(cut -d, -f1,2 '$TMP/c.csv')"
check "r4 break 5: ... and says so" grep -q "c.rec: its polls span more than 16 days (from 1970-01-01T00:01:00Z); the last 16 are replayed, from 2026-11-29T10:00:00Z" "$TMP/c.err"
# an event far after the last poll does not stretch the end either
{ cat "$FIX"; echo '{"t":1795948260,"s":[],"e":[{"t":4102444800,"type":"marker","text":"2100"}]}'; } >"$TMP/late.rec"
timeout "$G" "$BEDTOP" export "$TMP/late.rec" -o "$TMP/late.csv" 2>"$TMP/late.err"
expect_eq "r4 break 5: an event in 2100 after the last poll: export ends" "$?" 0
check "r4 break 5: ... at the last poll, and says so" \
    grep -q "an event at 2100-01-01T00:00:00Z is more than an hour after the last poll" "$TMP/late.err"

# ---- r4 break 15: plan --traffic x0 printed "nan" ----
# x0 is "what if this route stopped": its calls, tokens and calls in flight are 0, so
# nothing of it throttles at the peak minute and no call "fits at once" after it.
"$BEDTOP" plan triage --traffic x0 --replay "$FIX" --at -0s >"$TMP/x0.txt" 2>"$TMP/x0.err"
expect_eq "r4 break 15: plan --traffic x0 runs" "$?" 0
check "r4 break 15: ... and prints no nan" bash -c "! grep -qi nan '$TMP/x0.txt'"
check "r4 break 15: ... it says the route stops" grep -q "traffic x0: the route stops" "$TMP/x0.txt"
check "r4 break 15: ... and would not throttle at the peak minute" \
    grep -q "would still throttle at the peak minute: no" "$TMP/x0.txt"
"$BEDTOP" plan triage --traffic x0 --replay "$FIX" --at -0s -f json >"$TMP/x0.json" 2>/dev/null
check "r4 break 15: plan --traffic x0 -f json: valid JSON without NaN" \
    python3 -c 'import json,sys; json.load(open(sys.argv[1]), parse_constant=lambda c: sys.exit(1)); sys.exit(0 if "nan" not in open(sys.argv[1]).read().lower() else 1)' "$TMP/x0.json"
for v in x-1 xnan xinf x1e400; do
    expect_rc "r4 break 15: plan --traffic $v is refused" 3 "$BEDTOP" plan triage --traffic "$v" --replay "$FIX" --at -0s
done
check "r4 break 15: ... with the range it takes" grep -q "plan --traffic: '1e400' is out of range; use a number from 0 to 1000" "$TMP/last.err"

# ---- r4 break 15: the marker array grew one element at a time ----
# 60,000 markers took 120 s under ASan (a realloc each); a replay of them opens and
# lists the newest one (the time guard only keeps a regression from hanging)
python3 - "$FIX" "$TMP/markers.rec" <<'PY'
import sys
src, dst = sys.argv[1], sys.argv[2]
lines = open(src).read().splitlines()
ev = ",".join('{"t":%d,"type":"marker","text":"m%d"}' % (1795946400 + i % 1800, i) for i in range(60000))
lines.insert(2, '{"t":1795946401,"s":[],"e":[%s]}' % ev)
open(dst, "w").write("\n".join(lines) + "\n")
PY
"$BEDTOP" replay "$FIX" --at -0s -f json >/dev/null 2>&1
want=$? # the fixture's status at its end (crit: 2)
timeout "$G" "$BEDTOP" replay "$TMP/markers.rec" --at -0s -f json >"$TMP/markers.json" 2>"$TMP/markers.err"
expect_eq "r4 break 15: a recording of 60,000 markers replays (its status, as without them)" "$?" "$want"

# ---- r4 break 7: record never writes a header the reader refuses ----
# The reader takes at most 20,000 routes (man 5 bedtop-recording, Limits); a config of
# 20,001 is refused by record itself before any file exists, naming both numbers.
python3 -c '
import sys
print("[bedtop]\nregion = us-east-1\n")
for i in range(20001):
    print("[route r%05d]\nmodel = amazon.nova-lite-v1:0\n" % i)' >"$TMP/big.conf"
"${AWS_ENV[@]}" timeout "$G" "$BEDTOP" record "$TMP/big.rec" --config "$TMP/big.conf" \
    --endpoint-url "http://127.0.0.1:9" --duration 1m >/dev/null 2>"$TMP/big.err"
rc=$?
check "r4 break 7: record refuses a config of 20,001 routes (exit $rc)" test "$rc" -ne 0 -a "$rc" -ne 124
check "r4 break 7: ... saying a recording holds at most 20000 and the config has 20001" \
    grep -q "a recording holds at most 20000 routes and the config has 20001" "$TMP/big.err"
check "r4 break 7: ... and leaves no file" test ! -e "$TMP/big.rec"

finish
