#!/usr/bin/env bash
# One clock (issue 22): replay --at T, export's row of T and the event log name the
# same CloudWatch data minute. A demo recording on the unpaced clock (deterministic
# under load) with a marker added between two polls, then for every data minute
# `replay --at T --format json` against the CSV row of T: same status, throttles,
# warnings, markers and events; the marker in both exports; triage's crit in the event log.
. "$BEDTOP_SRCDIR/tests/lib.sh"
REC=$TMP/demo.rec
"$BEDTOP" record "$REC" --demo --demo-speed max --duration 30m >"$TMP/rec.out" 2>&1
check "the demo recorded on the unpaced clock" test -s "$REC"
# A marker 30 s after the poll of 10:20:00 (the demo starts at 10:00:00): its data
# minute is floor(10:20:30 - 120 s lag) - 60 s = 10:17.
python3 - "$REC" <<'PY'
import json, sys
path = sys.argv[1]
lines = open(path).read().splitlines()
t = 1795946400 + 20 * 60 + 30
mark = json.dumps({"t": t, "e": [{"t": t, "type": "marker", "route": -1,
                                   "source": "cloudwatch", "text": "deploy 42"}]})
out, done = [lines[0]], False
for l in lines[1:]:
    if not done and json.loads(l)["t"] > t:
        out.append(mark); done = True
    out.append(l)
open(path, "w").write("\n".join(out) + "\n")
PY
"$BEDTOP" export "$REC" --format csv >"$TMP/all.csv" 2>"$TMP/csv.err"
"$BEDTOP" export "$REC" --format json >"$TMP/all.json" 2>"$TMP/json.err"
check "export csv and json ran" test -s "$TMP/all.csv" -a -s "$TMP/all.json"

check "every data minute: replay --at T agrees with the CSV row of T, markers and events too" python3 - "$BEDTOP" "$REC" "$TMP/all.csv" <<'PY'
import csv, json, subprocess, sys
bedtop, rec, path = sys.argv[1:4]
rows = list(csv.DictReader(open(path)))
minutes = sorted({r["time"] for r in rows})
bad, marked, evented = [], 0, 0
for m in minutes:
    out = subprocess.run([bedtop, "replay", rec, "--at", m, "--format", "json"],
                         capture_output=True, text=True)
    doc = json.loads(out.stdout)
    rep = {x["name"]: x for x in doc["routes"]}
    for r in (r for r in rows if r["time"] == m):
        j = rep[r["route"]]
        # the CSV's throttles column is CloudWatch's value for minute T itself; a
        # route whose newest data is older (STALE) has none there, and its report
        # names the older minute it evaluated
        thr = j["throttles_per_min"] if j["data_minute"] == m else None
        got = (j["status"], thr, sorted(w["code"] for w in j["warnings"]))
        want = (r["status"], float(r["throttles"]) if r["throttles"] else None,
                sorted(c for c in r["warnings"].split(";") if c))
        stale_ok = j["data_minute"] != m and "STALE" in got[2]
        if got[0] != want[0] or got[2] != want[2] or (got[1] != want[1] and not stale_ok):
            bad.append((m, r["route"], got, want))
        # the markers and events of minute T: the CSV's columns hold their texts
        # ("; " between them), the JSON's arrays the entries themselves
        mk = "; ".join(x["text"] for x in doc["markers"])
        ev = "; ".join(x["text"] for x in doc["events"] if x["route"] == r["route"])
        if (mk, ev) != (r["markers"], r["events"]):
            bad.append((m, r["route"], (mk, ev[:80]), (r["markers"], r["events"][:80])))
        marked += bool(mk)
        evented += bool(ev)
print(len(minutes), "minutes,", len(rows), "rows;", marked, "rows with a marker,", evented, "with events")
for b in bad[:5]:
    print("#", b)
# not vacuous: the marker's minute (13 routes) and the demo's changes were compared
sys.exit(1 if bad or len(minutes) < 25 or marked < 1 or evented < 10 else 0)
PY

# Known answer (collectors/demo.c): triage's retry storm throttles from story minute
# 13 (storm(13) = 0.25), so data minute 10:13 is the first crit one, with the
# evaluation of that row the last second it was the newest: 10:13 + 60 s + 120 s lag + 59 s = 10:16:59.
check "CSV row 10:13 of triage: crit, evaluated at 10:16:59, the change in its events" \
    python3 - "$TMP/all.csv" <<'PY'
import csv, sys
r = [r for r in csv.DictReader(open(sys.argv[1]))
     if r["route"] == "triage" and r["time"] == "2026-11-29T10:13:00Z"][0]
print(r["status"], r["evaluated_at"], r["admission_at"], r["events"][:60])
sys.exit(0 if r["status"] == "crit" and r["evaluated_at"] == "2026-11-29T10:16:59Z"
         and "warn -> crit" in r["events"] else 1)
PY
check "the marker in the CSV: on the rows of data minute 10:17 only" python3 - "$TMP/all.csv" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
marked = {r["time"] for r in rows if r["markers"] == "deploy 42"}
sys.exit(0 if marked == {"2026-11-29T10:17:00Z"} else 1)
PY
check "the marker and triage's crit in the JSON export" python3 - "$TMP/all.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
mk = d["markers"]
crit = [e for e in d["events"] if e["route"] == "triage" and e["kind"] == "status"
        and e["to"] == "crit"]
rows = [r for r in d["rows"] if r["name"] == "triage" and r["time"] == "2026-11-29T10:13:00Z"]
print(mk, crit[:1])
sys.exit(0 if mk == [{"time": "2026-11-29T10:17:00Z", "at": "2026-11-29T10:20:30Z",
                      "text": "deploy 42"}]
         and crit and crit[0]["time"] == "2026-11-29T10:13:00Z"
         and rows and rows[0]["status"] == "crit"
         and rows[0]["evaluated_at"] == "2026-11-29T10:16:59Z" else 1)
PY
# replay --at's JSON names the marker of its minute and the changes of it, in
# check.schema.json's shape
"$BEDTOP" replay "$REC" --at 10:17 --format json >"$TMP/at17.json"
check "replay --at 10:17 --format json: the marker deploy 42, added at 10:20:30" python3 - "$TMP/at17.json" <<'PY'
import json, sys
sys.exit(0 if json.load(open(sys.argv[1]))["markers"] == [
    {"time": "2026-11-29T10:17:00Z", "at": "2026-11-29T10:20:30Z", "text": "deploy 42"}] else 1)
PY
"$BEDTOP" replay "$REC" --at 10:13 --format json >"$TMP/at13.json"
check "replay --at 10:13 --format json: triage's warn -> crit among its events" python3 - "$TMP/at13.json" <<'PY'
import json, sys
ev = json.load(open(sys.argv[1]))["events"]
sys.exit(0 if any(e["route"] == "triage" and e["kind"] == "status" and (e["from"], e["to"]) == ("warn", "crit")
                  and e["time"] == "2026-11-29T10:13:00Z" for e in ev) else 1)
PY
check "... valid against data/check.schema.json" \
    python3 "$BEDTOP_SRCDIR/tests/schema_check.py" "$BEDTOP_SRCDIR/data/check.schema.json" "$TMP/at13.json" "$TMP/at17.json"
"$BEDTOP" export "$REC" --from 10:13 --to 10:13 --route triage >"$TMP/one.csv"
expect_eq "export --from 10:13 --to 10:13 is the one row of 10:13" \
    "$(python3 -c 'import csv,sys; print([(r["time"], r["status"]) for r in csv.DictReader(open(sys.argv[1]))])' "$TMP/one.csv")" \
    "[('2026-11-29T10:13:00Z', 'crit')]"
expect_rc "replay --at with --route prints that route" 2 "$BEDTOP" replay "$REC" --at 10:13 --route triage --format json
expect_eq "... and only that route" \
    "$(python3 -c 'import json,sys; print([r["name"] for r in json.load(open(sys.argv[1]))["routes"]])' "$TMP/last.out")" \
    "['triage']"
# range errors name the recording's data minutes
expect_rc "export --from past the end is an error" 3 "$BEDTOP" export "$REC" --from 11:00
check "... that names the recording's range, not a swap" \
    grep -q "this recording has data minutes 2026-11-29T09:57:00Z to 2026-11-29T10:27:00Z" "$TMP/last.err"
check "... and does not say swap" bash -c "! grep -q swap '$TMP/last.err'"
expect_rc "replay --at past the end is an error" 3 "$BEDTOP" replay "$REC" --at 11:00
check "... naming the data minutes" grep -q "data minutes 2026-11-29T09:57:00Z to 2026-11-29T10:27:00Z" "$TMP/last.err"
finish
