#!/usr/bin/env bash
# Issue 38: the event log of a recording holds every event of it. It used to keep
# its newest 20,000 entries and drop the oldest without a word, so a 24-hour export
# had no events for its first hours. A 24-hour recording from tests/bench/gen.py
# --flap (10 routes, each near its quota one minute and at a quarter of it the next:
# a status change, a warning raised or cleared every minute, ~3,300 entries a
# route-day, so ~33,000 in all: past the old cap) is exported whole; its first
# hour's events must be the ones a 2-hour recording of the same seed (the same first
# two hours, byte for byte) gives, and there must be some.
. "$BEDTOP_SRCDIR/tests/lib.sh"
GEN=$BEDTOP_SRCDIR/tests/bench/gen.py

python3 "$GEN" recording "$TMP/day.rec" --routes 10 --hours 24 --seed 5 --flap
python3 "$GEN" recording "$TMP/two.rec" --routes 10 --hours 2 --seed 5 --flap
# header + 120 poll lines in common
check "the 2-hour recording is the 24-hour one's first two hours" \
    cmp -s <(head -n 121 "$TMP/day.rec") "$TMP/two.rec"

check "export --format json of the 24-hour recording" \
    "$BEDTOP" export "$TMP/day.rec" --format json -o "$TMP/day.json"
check "export --format json of the 2-hour recording" \
    "$BEDTOP" export "$TMP/two.rec" --format json -o "$TMP/two.json"
check "export (CSV) of the 24-hour recording" "$BEDTOP" export "$TMP/day.rec" -o "$TMP/day.csv"
check "export (CSV) of the 2-hour recording" "$BEDTOP" export "$TMP/two.rec" -o "$TMP/two.csv"

# the first hour: data minutes before the recording's first + 60 min
check "the 24-hour log is past the old cap, its first hour's events are all there (JSON)" \
    python3 - "$TMP/day.json" "$TMP/two.json" <<'PY'
import datetime, json, sys
def hour_after(iso):
    t = datetime.datetime.strptime(iso, "%Y-%m-%dT%H:%M:%SZ") + datetime.timedelta(hours=1)
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")
day, two = (json.load(open(p)) for p in sys.argv[1:])
t0 = min(r["time"] for r in day["rows"])
end = hour_after(t0)
first = lambda j: [e for e in j["events"] if e["time"] < end]
a, b = first(day), first(two)
print("# %d entries in 24 h; %d in the first hour (%s to %s), %d from the 2-hour recording"
      % (len(day["events"]), len(a), t0, end, len(b)))
sys.exit(0 if len(day["events"]) > 20000 and len(a) > 100 and a == b else 1)
PY
check "the CSV's events column of the first hour equals the 2-hour recording's" \
    python3 - "$TMP/day.csv" "$TMP/two.csv" <<'PY'
import csv, datetime, sys
def hour_after(iso):
    t = datetime.datetime.strptime(iso, "%Y-%m-%dT%H:%M:%SZ") + datetime.timedelta(hours=1)
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")
def first_hour(p):
    rows = list(csv.DictReader(open(p, newline="")))
    t0 = rows[0]["time"]
    end = hour_after(t0)
    return [(r["time"], r["route"], r["events"]) for r in rows if r["time"] < end]
a, b = first_hour(sys.argv[1]), first_hour(sys.argv[2])
with_events = sum(1 for x in a if x[2])
print("# %d first-hour rows, %d with events" % (len(a), with_events))
sys.exit(0 if a == b and with_events > 50 else 1)
PY
finish
