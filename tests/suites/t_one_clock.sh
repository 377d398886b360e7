#!/usr/bin/env bash
# One clock, fourth pass (issue 34 items 1-3): every view names the data minute it
# shows (the CloudWatch minute its figures describe) and the clock beside it; check
# --demo-at M, replay --at, export's rows, plan --replay F --at and plan --demo-at M
# all mean data minute M, so for the same minute they print the same figures. A demo
# recording on the unpaced clock (deterministic under load); the dashboard's own
# screens (header, graphs, their cursor, markers) are t_one_clock_tui.sh's.
#
# Known answers (collectors/demo.c, 120 s CloudWatch lag, a data minute shown as it
# stood the last second it was the newest: M + 60 s + 120 s + 59 s):
#   data minute 10:16 is the peak of triage's retry storm: storm(16) = 1, so 60
#   CloudWatch throttles a minute (round(60 x storm)); seen at 10:19:59.
#   data minute 10:13 is its first crit minute: storm(13) = 0.25, 15 throttles;
#   seen at 10:16:59 (the issue's "replay at 10:13 says 43.6 %, 297").
. "$BEDTOP_SRCDIR/tests/lib.sh"
REC=$TMP/demo.rec
"$BEDTOP" record "$REC" --demo --demo-speed max --duration 30m >"$TMP/rec.out" 2>&1
check "the demo recorded on the unpaced clock" test -s "$REC"

# Case 1: check's text names its data minute, and the clock beside it. Before, its
# header named the evaluation instant alone ("bedtop check  2026-11-29T10:16:00Z"),
# three minutes after the minute its figures describe.
"$BEDTOP" check --demo-at 16 >"$TMP/c16.txt"
check "check --demo-at 16: 'data 2026-11-29T10:16:00Z, now 10:19:59' in its header" \
    grep -qE '^bedtop check  data 2026-11-29T10:16:00Z, now 10:19:59  [0-9]+ routes  status ' "$TMP/c16.txt"
"$BEDTOP" check --demo-at 16 --format json >"$TMP/c16.json"
expect_eq "check --demo-at 16 is data minute 10:16: triage's 60 throttles of the storm's peak" \
    "$(python3 -c 'import json,sys; r={x["name"]:x for x in json.load(open(sys.argv[1]))["routes"]}["triage"]; print(r["evaluated_minute"], r["throttles_per_min"])' "$TMP/c16.json")" \
    "2026-11-29T10:16:00Z 60"
"$BEDTOP" replay "$REC" --at 10:16 >"$TMP/r16.txt"
check "replay --at 10:16: 'data 2026-11-29T10:16:00Z, seen 10:19:59' in its header" \
    grep -qE '^bedtop replay  data 2026-11-29T10:16:00Z, seen 10:19:59  [0-9]+ routes  status ' "$TMP/r16.txt"
# the table of check --demo-at 16 is replay --at 10:16's, line for line (the header
# names its command; check alone adds the forecast, fitted from its one poll's gauges)
check "check --demo-at 16 and replay --at 10:16 print the same table and warnings" \
    python3 - "$TMP/c16.txt" "$TMP/r16.txt" <<'PY'
import sys
def body(p):
    lines = open(p).read().splitlines()[1:]
    out = []
    for l in lines:
        if l.startswith("FORECAST"):
            break
        out.append(l)
    return out
a, b = body(sys.argv[1]), body(sys.argv[2])
for x, y in zip(a, b):
    if x != y:
        print("#", x, "|", y)
sys.exit(0 if a and a[:20] == b[:20] else 1)
PY

# Case 2: plan --replay F --at 10:13 plans for data minute 10:13 (it planned for
# 10:10 before: 45.8 %, fits 313 where replay --at 10:13 says 43.6 %, 297).
"$BEDTOP" plan triage --replay "$REC" --at 10:13 >"$TMP/p13.txt"
check "plan --replay --at 10:13 names data minute 10:13, seen 10:16:59" \
    grep -qE '^bedtop plan triage \(us-east-1, runtime\) data 10:13 UTC, seen 10:16:59, replay$' "$TMP/p13.txt"
check "... its headroom 43.6 %, fits 297 more at once (replay --at 10:13's triage)" \
    bash -c 'grep -qE "^  headroom +43\.6%$" "$1" && grep -qE "^  fits more at once +297$" "$1"' _ "$TMP/p13.txt"
"$BEDTOP" plan triage --demo-at 13 >"$TMP/pd13.txt"
check "plan --demo-at 13: the same minute, now 10:16:59" \
    grep -qE '^bedtop plan triage \(us-east-1, runtime\) data 10:13 UTC, now 10:16:59, demo$' "$TMP/pd13.txt"
expect_rc "plan --at a minute past the recording's last is an error" 3 \
    "$BEDTOP" plan triage --replay "$REC" --at 11:00
check "... naming its data minutes" grep -q "data minutes 2026-11-29T09:57:00Z to 2026-11-29T10:27:00Z" "$TMP/last.err"

# The views of one minute agree: for several data minutes of the recording, the minute
# named and the headline figures of check --demo-at M, replay --at M, export's row of
# M, plan --replay --at M and plan --demo-at M, route by route (plan: triage and
# workers), and no difference is found.
"$BEDTOP" export "$REC" --format csv >"$TMP/all.csv" 2>"$TMP/csv.err"
check "export ran" test -s "$TMP/all.csv"
for m in 8 10 13 16 19 22 24 26; do
    hm=$(printf '10:%02d' "$m")
    "$BEDTOP" check --demo-at "$m" --format json >"$TMP/c$m.json"
    "$BEDTOP" replay "$REC" --at "$hm" --format json >"$TMP/r$m.json"
    for route in triage workers; do
        "$BEDTOP" plan "$route" --replay "$REC" --at "$hm" -f json >"$TMP/p$m-$route.json"
        "$BEDTOP" plan "$route" --demo-at "$m" -f json >"$TMP/d$m-$route.json"
    done
done
check "8 data minutes: check, replay, export, plan --at and plan --demo-at name the same minute and figures" \
    python3 - "$TMP" <<'PY'
import csv, json, sys
d = sys.argv[1]
rows = list(csv.DictReader(open(f"{d}/all.csv", newline="")))
bad, compared = [], 0
def num(s):
    return None if s == "" else float(s)
for m in (8, 10, 13, 16, 19, 22, 24, 26):
    minute = "2026-11-29T10:%02d:00Z" % m
    c = {x["name"]: x for x in json.load(open(f"{d}/c{m}.json"))["routes"]}
    r = {x["name"]: x for x in json.load(open(f"{d}/r{m}.json"))["routes"]}
    e = {x["route"]: x for x in rows if x["time"] == minute}
    if not e or set(c) != set(r) or set(c) != set(e):
        bad.append((m, "routes", sorted(c), sorted(r), sorted(e)))
        continue
    for name in c:
        # the minute each names: the report's frame minute, the row's time
        fig = lambda j: (j["evaluated_minute"], j["status"], j["headroom_pct"], j["fits_more"],
                         j["tpm"]["used"], j["throttles_per_min"])
        x, y, z = fig(c[name]), fig(r[name]), e[name]
        row = (minute if x[0] == minute else x[0], z["status"], num(z["headroom_pct"]),
               num(z["fits_more"]), num(z["used_tpm"]),
               # CloudWatch's throttles of minute M itself; a route whose frame is older
               # (STALE) names that older minute, and the row has none of M's
               x[5] if x[0] != minute else num(z["throttles"]))
        if x != y or x != row:
            bad.append((m, name, "check", x, "replay", y, "export", row))
        compared += 1
    for name in ("triage", "workers"):
        for kind in ("p", "d"):
            p = json.load(open(f"{d}/{kind}{m}-{name}.json"))
            got = (p["evaluated_minute"], p["now"]["headroom_pct"], p["now"]["fits_more"],
                   p["now"]["binding_side"])
            want = (r[name]["evaluated_minute"], r[name]["headroom_pct"], r[name]["fits_more"],
                    r[name]["binding_side"])
            if got != want:
                bad.append((m, name, "plan --at" if kind == "p" else "plan --demo-at", got, want))
            compared += 1
print(compared, "comparisons,", len(bad), "differences")
for b in bad[:6]:
    print("#", b)
sys.exit(1 if bad or compared < 100 else 0)
PY
# Relative times name data minutes everywhere: +5m is 5 minutes after the recording's
# first data minute (09:57), 10:02, in export's --from as in report's (report counted
# from the first poll's instant, 10:05: three minutes later than export's rows).
"$BEDTOP" export "$REC" --from +5m --to +10m --route triage >"$TMP/rel.csv"
expect_eq "export --from +5m --to +10m: data minutes 10:02 to 10:07" \
    "$(python3 -c 'import csv,sys; t=[r["time"] for r in csv.DictReader(open(sys.argv[1]))]; print(t[0], t[-1], len(t))' "$TMP/rel.csv")" \
    "2026-11-29T10:02:00Z 2026-11-29T10:07:00Z 6"
"$BEDTOP" report incident "$REC" --from +5m --to +10m -o "$TMP/inc" >/dev/null 2>"$TMP/inc.err"
check "report incident --from +5m --to +10m: the same minutes, 10:02 to 10:07" \
    grep -q "^# Incident report: 2026-11-29T10:02:00Z to 2026-11-29T10:07:00Z$" "$TMP/inc/report.md"
finish
