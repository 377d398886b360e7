# Record, replay, export: round trip against `check --demo-at`, damaged files, permissions.
. "$BEDTOP_SRCDIR/tests/lib.sh"
REC=$TMP/demo.rec

# Record the demo headless at high speed for 30 simulated minutes.
"$BEDTOP" record "$REC" --demo --demo-speed max --duration 30m 2>"$TMP/rec.err"
expect_eq "record exits 0" "$?" 0
expect_eq "recording is created 0600" "$(stat -c %a "$REC")" 600
check "recording header names its format and version" \
    grep -q '^{"format":"bedtop-recording","version":"2\.' "$REC"
check "record reports what it wrote" grep -q "recorded [0-9]* polls to $REC" "$TMP/rec.err"
expect_rc "recording over an existing file is refused" 3 "$BEDTOP" record "$REC" --demo --duration 1m
check "refusal says why" grep -q "never overwritten" "$TMP/last.err"

# A full disk (here: a file-size limit) is reported once and watching goes on: the
# recorder drops lines, says so, and keeps running to the end of its duration.
( ulimit -f 64; exec "$BEDTOP" record "$TMP/full.rec" --demo --demo-speed max --duration 10m ) \
    >"$TMP/full.out" 2>"$TMP/full.err"
rc=$?
expect_eq "disk full: record runs to the end and exits 1 (lines dropped)" "$rc" 1
check "disk full: the write error is reported" grep -q "recording $TMP/full.rec: File too large (lines are being dropped)" "$TMP/full.err"
# each spell of failing writes is reported once, not per line: the prefill's long first
# line fails, shorter lines then fit ("writing again") until the limit is reached
drops=$(grep -c 'lines are being dropped' "$TMP/full.err")
agains=$(grep -c 'writing again' "$TMP/full.err")
check "disk full: reported once per spell of failing writes, not per line ($drops for $agains recoveries)" \
    test "$drops" -ge 1 -a "$drops" -ge "$agains" -a "$drops" -le $((agains + 1))
check "disk full: the summary says lines were dropped" grep -q "some lines dropped" "$TMP/full.err"
# issue 16 item 5: no partial line is left for the next line to be appended to
expect_eq "disk full: the recording ends on a line boundary" "$(tail -c 1 "$TMP/full.rec" | od -An -c | tr -d ' ')" '\n'
"$BEDTOP" replay "$TMP/full.rec" --at +1m >/dev/null 2>"$TMP/full.replay.err"
check "disk full: replay of what was written skips no line" test ! -s "$TMP/full.replay.err"
sed 's/^/#   /' "$TMP/full.replay.err" | head -3

# Issue 16 item 6, replay of a non-regular file: a symlink to /dev/zero was read up to
# 4 GiB into memory, a FIFO blocked. Both are refused at once with one line.
ln -s /dev/zero "$TMP/zero.rec"
expect_rc "replay of a non-regular file (symlink to /dev/zero) is refused" 3 \
    timeout 20 "$BEDTOP" replay "$TMP/zero.rec" --at +1m
expect_eq "... with one line saying why" "$(cat "$TMP/last.err")" \
    "bedtop: $TMP/zero.rec: not a regular file; replay reads recordings bedtop record wrote (save a pipe's output to a file first)"
mkfifo "$TMP/fifo.rec"
expect_rc "replay of a FIFO is refused without waiting for a writer" 3 \
    timeout 20 "$BEDTOP" replay "$TMP/fifo.rec" --at +1m
expect_rc "export of a non-regular file is refused" 3 timeout 20 "$BEDTOP" export "$TMP/zero.rec" --format csv

# The demo's admission counters are raw readings per worker series, as an application
# exports them (collectors/demo.c): no per-minute rate is recorded, the reader derives
# them. Triage's worker a is team search's, b team ads' (issue 35's shares); b
# restarts at story minute 8 (10:08:00): its readings drop.
expect_eq "demo: admission counters recorded per worker series, no counter rates as samples" \
    "$(python3 - "$REC" <<'PY'
import json, sys
L = [json.loads(x) for x in open(sys.argv[1]).read().split("\n")[1:] if x.strip()]
ids = sorted(i for x in L for _, i in x.get("k", []))
counters = set(range(17, 24))  # adm_admitted_pm .. adm_settled_tpm in the header's list
rates = sum(1 for x in L for row in x.get("s", []) for sig in row[3][0::2] if sig in counters)
print(ids, rates)
PY
)" "['route=\"triage\",team=\"ads\",worker=\"b\"', 'route=\"triage\",team=\"search\",worker=\"a\"', 'route=\"workers\",worker=\"a\"', 'route=\"workers\",worker=\"b\"'] 0"
expect_eq "demo: triage's worker b restarts at 10:08:00 (its admitted counter drops), worker a does not" \
    "$(python3 - "$REC" <<'PY'
import json, sys
L = [json.loads(x) for x in open(sys.argv[1]).read().split("\n")[1:] if x.strip()]
names = {i: n for x in L for i, n in x.get("k", [])}
seq = {}
for x in L:
    for route, series, arrival, t, sv in x.get("c", []):
        for sig, v in zip(sv[0::2], sv[1::2]):
            if route == 0 and sig == 17:
                seq.setdefault(names[series], []).append((arrival, v))
drops = {n: [a for (a, v), (_, w) in zip(s[1:], s) if v < w] for n, s in seq.items()}
print(drops['route="triage",team="search",worker="a"'], drops['route="triage",team="ads",worker="b"'])
PY
)" "[] [1795946880]"
# Across the restart the route's rate is its traffic, not a worker's whole total: at
# 10:08:06 (the restart's scrape is the newest; --demo-at 5.1 is data minute 10:05,
# 6 s after it appears at 10:05 + 60 s + 120 s lag = 10:08:00) triage reserves 300 calls x 2,926
# (1,500 input + 67 cache write + 335 cache read + max_tokens 1,024) = 877,800 a
# minute, +-2 % (the demo's jitter on admitted): 860,244 .. 895,356.
"$BEDTOP" check --demo --demo-at 5.1 --format json >"$TMP/restart.json"
expect_eq "demo: triage's reservations across worker b's restart are ~877,800 a minute, R 2,926" \
    "$(python3 -c "import json,sys; r={x['name']:x for x in json.load(open(sys.argv[1]))['routes']}['triage']; print(860244 <= r['tpm']['reserved_per_min'] <= 895356, r['reservation_per_call'], r['reservation_source'])" "$TMP/restart.json")" \
    "True 2926 admission"

# Round trip: the replayed numbers at a minute equal what check --demo-at computes.
# Both name a data minute (the one clock, issue 34): replay --at 10:MM and check
# --demo-at MM are data minute 10:MM, shown as it stood the last second it was the
# newest (10:MM + 60 s + 120 s lag + 59 s). The recording's first data minute is
# 09:57 (complete at its 10:00 start), its last 10:27 (shown at its 10:30:00 end,
# before its last second: not compared).
same=0 total=0
for m in 0 5 9 13 16 19 22 24 26; do
    total=$((total + 1))
    "$BEDTOP" replay "$REC" --at "$(printf '10:%02d' "$m")" --format json >"$TMP/r$m.json"
    "$BEDTOP" check --demo --demo-at "$m" --format json >"$TMP/c$m.json"
    if python3 - "$TMP/r$m.json" "$TMP/c$m.json" <<'PY'
import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:3])
a.pop("mode"); b.pop("mode")
# a replay says what was recorded: a demo (check's mode says it live)
assert a.pop("recorded_mode") == "demo"
# the replay's own: the minute's markers and event log (t_clock compares them with
# export's); a lone check has no log to carry
assert isinstance(a.pop("markers"), list) and isinstance(a.pop("events"), list)
# the forecast is fitted over the frames of the last 15 minutes, which read the
# admission gauges each store holds: the recording every scrape, check's one poll
# only the newest; it is compared apart (present, same side). Its points are the
# minutes read with the newest point's definitions (coverage, issue 31): a minute
# without the gauges the newest had is none, so the recording, which has every
# scrape, has at least check's. The observed ceiling's minutes and cause are equal; the
# peak its "why" names for held reservations ("the group used up to 57% of the quota")
# reads the admission gauges too, so the recording's is at least check's.
import re
def peak(c):
    w = c.get("why") or ""
    m = re.search(r"used up to (\d+)%", w)
    c["why"] = re.sub(r"used up to \d+%", "used up to N%", w)
    return int(m.group(1)) if m else None
for x, y in zip(a["routes"], b["routes"]):
    fx, fy = x.pop("forecast"), y.pop("forecast")
    if fx["side"] != fy["side"] or fx["points"] < fy["points"]:
        sys.exit(1)
    cx, cy = x.get("observed_ceiling"), y.get("observed_ceiling")
    if isinstance(cx, dict) and isinstance(cy, dict):
        px, py = peak(cx), peak(cy)
        if (px is None) != (py is None) or (px is not None and px < py):
            sys.exit(1)
sys.exit(0 if a == b else 1)
PY
    then same=$((same + 1)); else echo "# minute $m differs"; fi
done
expect_eq "replay --at equals check --demo-at at $total moments" "$same" "$total"
# --at names a data minute (the one clock): +16m after the first data minute (09:57,
# complete at the 10:00 start) is 10:13, evaluated when it was the newest: 10:16.
"$BEDTOP" replay "$REC" --at +16m --format json >"$TMP/plus16.json"
"$BEDTOP" replay "$REC" --at 10:13 --format json >"$TMP/hhmm.json"
check "replay --at HH:MM is the same moment as +16m" python3 -c "
import json,sys; a=json.load(open('$TMP/hhmm.json')); b=json.load(open('$TMP/plus16.json')); sys.exit(a!=b)"
"$BEDTOP" replay "$REC" --at 2026-11-29T10:13:00Z --format json >"$TMP/iso.json"
check "replay --at ISO time" cmp -s "$TMP/iso.json" "$TMP/hhmm.json"
expect_rc "replay --at outside the recording is an error" 3 "$BEDTOP" replay "$REC" --at 2026-11-30T10:00:00Z
check "... naming the recording's span" grep -q "outside the recording" "$TMP/last.err"
"$BEDTOP" replay "$REC" --at +16m >"$TMP/text.txt"
check "replay --at prints the text table" grep -q "^triage " "$TMP/text.txt"

# An older recording (format 1.0: nine-digit values, no adm_reserved_held, a
# cache_read_reserved key) replays under the current headroom contract; its numbers,
# worked out from the file itself: settled = input + cache write + output x burndown at
# the minute the last good poll settled (minute + 60 s + lag <= the poll); R = adm_reserved_tpm / adm_admitted_pm and held =
# adm_in_flight x R at the newest scrape (docs/headroom.md).
OLD=$BEDTOP_SRCDIR/examples/demo-retry-storm.rec
check "the example recording is format 1.0" grep -q '^{"format":"bedtop-recording","version":"1.0"' "$OLD"
"$BEDTOP" replay "$OLD" --at +8m --format json >"$TMP/old.json" 2>"$TMP/old.err"
# its one line on stderr: it has no price rows (before format 2.2), none skipped
check "an old recording replays with no line skipped" bash -c "! grep -qv 'carries no price rows (written before format 2.2)' '$TMP/old.err'"
expect_eq "... and says once that its spend is priced with the installed table" \
    "$(grep -c 'carries no price rows' "$TMP/old.err")" 1
check "its replay validates against the current schema" \
    python3 "$BEDTOP_SRCDIR/tests/schema_check.py" "$BEDTOP_SRCDIR/data/check.schema.json" "$TMP/old.json"
# A demo recording replayed is still simulated (issue 34): JSON keeps mode "replay" and
# says the recording's own mode, the exposition carries mode="demo" on every series as
# serve --demo does, the text says so; and the demo's AWS errors say they are simulated.
check "replay of a demo recording: JSON recorded_mode is demo" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["mode"] == "replay" and d.get("recorded_mode") == "demo", (d["mode"], d.get("recorded_mode"))' "$TMP/old.json"
"$BEDTOP" replay "$OLD" --at +8m --format prometheus >"$TMP/old.prom"
check "... its exposition: every route series carries mode=\"demo\"" python3 -c '
import sys
rows = [l for l in open(sys.argv[1]) if l.startswith("bedtop_") and "route=" in l]
assert rows and all("mode=\"demo\"" in l for l in rows), [l for l in rows if "mode=" not in l][:2]' "$TMP/old.prom"
check "... its text header says simulated" bash -c '"$1" replay "$2" --at +8m | grep -q "^bedtop replay .*(demo recording: simulated)$"' _ "$BEDTOP" "$OLD"
check "the demo's simulated AWS error is labelled (experiments at minute 20)" python3 -c '
import json, subprocess, sys
d = json.loads(subprocess.run([sys.argv[1], "check", "--demo-at", "20", "--format", "json"],
                              capture_output=True, text=True).stdout)
r = {x["name"]: x for x in d["routes"]}["experiments"]
m = [w["message"] for w in r["warnings"] if w["code"] == "STALE"][0]
assert "(simulated: monitoring.eu-west-1: connection timed out" in m, m' "$BEDTOP"
check "... and so are the example demo recording's" bash -c '! grep -q "\"text\":\"monitoring\." "$1" && grep -q "\"text\":\"simulated: monitoring\." "$1"' _ "$OLD"
check "triage's settled, R and held equal the file's own numbers" python3 - "$OLD" "$TMP/old.json" <<'PY'
import json, sys
lines = open(sys.argv[1]).read().splitlines()
hdr = json.loads(lines[0])
sig = {n: i for i, n in enumerate(hdr["signals"])}
polls = [json.loads(x) for x in lines[1:]]
rep = json.load(open(sys.argv[2]))
tri = {r["name"]: r for r in rep["routes"]}["triage"]
import datetime
at = int(datetime.datetime.fromisoformat(rep["generated_at"].replace("Z", "+00:00")).timestamp())
cw, adm = {}, {}
for p in polls:
    for r, m, arr, kv in p["s"]:
        if r != 0 or arr > at:
            continue
        v = dict(zip(kv[0::2], kv[1::2]))
        (adm if sig["adm_in_flight"] in v or sig["adm_admitted_pm"] in v else cw).setdefault(m, {}).update(v)
# the evaluated minute (contract v3): the newest the last good poll settled
lag = hdr.get("config", {}).get("cloudwatch_lag", 120)
last_ok = max(e["t"] for p in polls for e in p.get("e", [])
              if e.get("type") == "ok" and e.get("source") == "cloudwatch" and e["t"] <= at)
m = (last_ok - lag) // 60 * 60 - 60
v = cw[m]
settled = v[sig["input_tokens"]] + v.get(sig["cache_write_tokens"], 0) + v[sig["output_tokens"]] * hdr["routes"][0]["burndown"]
a = adm[max(adm)]
R = a[sig["adm_reserved_tpm"]] / a[sig["adm_admitted_pm"]]
held = a[sig["adm_in_flight"]] * R
ok = (tri["tpm"]["settled"] == round(settled) and tri["reservation_per_call"] == round(R)
      and tri["tpm"]["held"] == round(held) and tri["in_flight_source"] == "admission")
if not ok:
    print("# got", tri["tpm"], tri["reservation_per_call"], "want settled", settled, "R", R, "held", held)
sys.exit(0 if ok else 1)
PY

# A recording replays with no config at all, even when the current config has other routes.
mkdir -p "$TMP/xdg/bedtop"
printf '[route other]\nmodel = amazon.nova-pro-v1:0\n' >"$TMP/xdg/bedtop/config"
XDG_CONFIG_HOME=$TMP/xdg "$BEDTOP" replay "$REC" --at +16m --format json >"$TMP/nocfg.json"
check "recording replays with its own routes, whatever the config" cmp -s "$TMP/nocfg.json" "$TMP/plus16.json"
expect_rc "replay --config is an error (the recording carries its routes)" 3 "$BEDTOP" replay "$REC" --config "$TMP/xdg/bedtop/config" --at +16m
check "... saying so in one line" grep -q "^bedtop: --config does not apply to replay" "$TMP/last.err"

# Damage: a truncated last line, a corrupt middle line, an empty file, a future version.
head -c -40 "$REC" >"$TMP/trunc.rec"
"$BEDTOP" replay "$TMP/trunc.rec" --at +16m --format json >"$TMP/t.json" 2>"$TMP/t.err"
rc=$?
check "truncated last line: replay still works (rc $rc)" test -s "$TMP/t.json"
lines=$(wc -l <"$REC")
check "truncated last line: warning names the line" grep -q "trunc.rec:$((lines)): truncated last line" "$TMP/t.err"
# the middle line of what was recorded: the demo is paced by the wall clock, so a
# loaded machine records fewer, longer polls (line 40 was not always there)
mid=$((lines / 2 > 2 ? lines / 2 : 2))
awk -v n="$mid" 'NR==n{print "{\"t\":17959, garbage"; next} {print}' "$REC" >"$TMP/corrupt.rec"
"$BEDTOP" replay "$TMP/corrupt.rec" --at +29m --format json >"$TMP/k.json" 2>"$TMP/k.err"
check "corrupt middle line: warning names line $mid of $lines" grep -q "corrupt.rec:$mid: not valid JSON; line skipped" "$TMP/k.err"
check "corrupt middle line: the rest replays" test -s "$TMP/k.json"
: >"$TMP/empty.rec"
expect_rc "empty recording is refused" 3 "$BEDTOP" replay "$TMP/empty.rec" --at +1m
check "... with a clear message" grep -q "empty recording" "$TMP/last.err"
sed '1s/"version":"2\.[0-9]*"/"version":"2.9"/' "$REC" >"$TMP/minor.rec"
"$BEDTOP" replay "$TMP/minor.rec" --at +16m --format json >"$TMP/minor.json" 2>"$TMP/minor.err"
check "a newer minor version is read (additions are ignored)" cmp -s "$TMP/minor.json" "$TMP/plus16.json"
sed '1s/"version":"2\.[0-9]*"/"version":"3.0"/' "$REC" >"$TMP/future.rec"
expect_rc "newer major version is refused" 3 "$BEDTOP" replay "$TMP/future.rec" --at +1m
check "... saying to upgrade" grep -q "recording format 3.0 is newer than this bedtop reads (2.x)" "$TMP/last.err"
echo '{"hello":"world"}' >"$TMP/notrec.rec"
expect_rc "a JSON file that is not a recording is refused" 3 "$BEDTOP" replay "$TMP/notrec.rec" --at +1m
expect_rc "a missing recording is an error" 3 "$BEDTOP" replay "$TMP/nope.rec" --at +1m

# Export: one row per route per minute, every signal, headroom and warnings.
"$BEDTOP" export "$REC" --format csv --from +11m --to +16m -o "$TMP/out.csv"
expect_eq "export file is created 0600" "$(stat -c %a "$TMP/out.csv")" 600
: >"$TMP/old.csv"; chmod 644 "$TMP/old.csv"
"$BEDTOP" export "$REC" --format csv --from +10m --to +11m -o "$TMP/old.csv"
expect_eq "export over an existing 0644 file leaves it 0600" "$(stat -c %a "$TMP/old.csv")" 600
check "csv header lists signals and headroom" bash -c "head -1 '$TMP/out.csv' | grep -q '^\"time\",\"route\",\"model_id\",\"region\",\"endpoint\",\"inference\",\"invocations\",.*,\"headroom_tpm\",\"headroom_pct\",\"fits_more\",\"usd_per_hour\",\"status\",\"warnings\",\"evaluated_at\",\"admission_at\",\"shares_team\",\"shares_tag\",\"shares_project\",\"shares_route\",\"markers\",\"events\",\"headroom_quality\",\"binding_side\"$'"
# --from +11m .. --to +16m are data minutes (the time column) after the first, 09:57:
# 10:08..10:13 = 6 minutes x 14 routes, read back with Python's csv module.
check "csv read back: unique columns, every row as wide as the header, rows inside --from/--to by time" \
    python3 - "$TMP/out.csv" <<'PY'
import csv, sys, collections
rows = list(csv.reader(open(sys.argv[1], newline="")))
head, body = rows[0], rows[1:]
dup = [c for c, n in collections.Counter(head).items() if n > 1]
assert not dup, dup
assert all(len(r) == len(head) for r in body), "ragged rows"
times = sorted({r[0] for r in body})
assert times == ["2026-11-29T10:%02d:00Z" % m for m in range(8, 14)], times
assert len(body) == 84, len(body)
PY
check "csv rows carry warnings" grep -q 'summarize.*THROTTLED_BELOW_ESTIMATE' "$TMP/out.csv"
"$BEDTOP" export "$REC" --format json --route triage --from +16m --to +16m >"$TMP/out.json"
check "json export for one route parses" python3 -c "
import json,sys
rows=json.load(open('$TMP/out.json'))['rows']
assert len(rows)==1 and rows[0]['name']=='triage' and rows[0]['time']=='2026-11-29T10:13:00Z', rows
assert rows[0]['evaluated_at']=='2026-11-29T10:16:59Z', rows
assert rows[0]['signals']['invocations'] > 0 and 'RETRY_LOAD' in [w['code'] for w in rows[0]['warnings']]
"
expect_rc "export of an unknown route is an error" 3 "$BEDTOP" export "$REC" --route nosuch
check "... listing the routes" grep -q "no route 'nosuch'; the routes are: triage," "$TMP/last.err"

# Time semantics: one meaning for relative times (+D after the first data minute, -D
# before the last). The demo recording runs 10:00..10:30: data minutes 09:57..10:27,
# so -14m is 10:13, the same as +16m, shown at 10:16:59 (end - 14 min + 59 s).
# (the end is the last poll's time, read from the file)
"$BEDTOP" replay "$REC" --at -14m --format json >"$TMP/m14.json"
check "replay --at -14m is 14 minutes before the recording's last poll" python3 - "$REC" "$TMP/m14.json" <<'PY'
import json, sys, datetime
end = max(json.loads(l)["t"] for l in open(sys.argv[1]).read().splitlines()[1:] if l.strip())
got = json.load(open(sys.argv[2]))["generated_at"]
want = datetime.datetime.fromtimestamp(end - 840 + 59, datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
assert got == want, (got, want)
PY
"$BEDTOP" export "$REC" --from -20m --to -15m >"$TMP/rel.csv"
check "export --from -20m --to -15m: data minutes 10:07..10:12" python3 - "$TMP/rel.csv" <<'PY'
import csv, sys
t = sorted({r["time"] for r in csv.DictReader(open(sys.argv[1], newline=""))})
assert t == ["2026-11-29T10:%02d:00Z" % m for m in range(7, 13)], t
PY
# The same figure reads the same in check and export: the CSV row of minute 10:13
# is what bedtop showed when 10:13 was the newest complete minute (10:16 = +16m).
check "csv figures equal check --format json for the same moment" python3 - "$TMP/out.csv" "$TMP/plus16.json" <<'PY'
import csv, json, sys
rows = {r["route"]: r for r in csv.DictReader(open(sys.argv[1], newline="")) if r["time"] == "2026-11-29T10:13:00Z"}
rep = {r["name"]: r for r in json.load(open(sys.argv[2]))["routes"]}
for name, j in rep.items():
    c = rows[name]
    for col, val in (("settled_tpm", j["tpm"]["settled"]), ("used_tpm", j["tpm"]["used"]),
                     ("headroom_tpm", j["headroom_tpm"]), ("headroom_pct", j["headroom_pct"]),
                     ("fits_more", j["fits_more"]), ("status", j["status"])):
        want = "" if val is None else str(val)
        assert c[col] == want, (name, col, c[col], want)
PY
expect_rc "export --from after --to is an error" 3 "$BEDTOP" export "$REC" --from +20m --to +10m
check "... saying to swap them" grep -q "^bedtop: export: --from 2026-11-29T10:17:00Z is after --to 2026-11-29T10:07:00Z; swap them" "$TMP/last.err"
expect_rc "export of an empty range is an error" 3 "$BEDTOP" export "$REC" --from 2026-11-30T10:00:00Z --to 2026-11-30T11:00:00Z
check "... naming the minutes the recording has" grep -q "no data minutes from .* this recording has data minutes 2026-11-29T09:57:00Z to 2026-11-29T10:27:00Z" "$TMP/last.err"
# A recording shorter than a minute still exports what replay shows: the header
# and the polls of the first 40 seconds of the demo recording.
python3 - "$REC" "$TMP/short.rec" <<'PY'
import json, sys
lines = open(sys.argv[1]).read().splitlines(True)
t0 = None
with open(sys.argv[2], "w") as out:
    out.write(lines[0])
    for l in lines[1:]:
        t = json.loads(l)["t"]
        t0 = t if t0 is None else t0
        if t - t0 <= 40:
            out.write(l)
PY
"$BEDTOP" export "$TMP/short.rec" >"$TMP/short.csv"
"$BEDTOP" replay "$TMP/short.rec" --at +0m --format json >"$TMP/short.json"
check "a 40-second recording exports the minute replay shows, 14 routes" python3 - "$TMP/short.csv" "$TMP/short.json" <<'PY'
import csv, json, sys
rows = list(csv.DictReader(open(sys.argv[1], newline="")))
rep = {r["name"]: r for r in json.load(open(sys.argv[2]))["routes"]}
assert len(rows) == 14, len(rows)
for r in rows:
    assert r["time"] == rep[r["route"]]["data_minute"], (r["time"], rep[r["route"]]["data_minute"])
    want = rep[r["route"]]["tpm"]["settled"]
    assert r["settled_tpm"] == ("" if want is None else str(want)), r["route"]
PY
# --demo-speed max: the unpaced simulated clock. Two runs are the same byte for byte
# after the header (whose "created" is the wall time), whatever the machine's load;
# The demo polls every 15 s: 2 hours from 10:00 = 7200 / 15 = 480 intervals, 481 polls
# (10:00:00 .. 12:00:00 inclusive), every gap exactly 15 s (a paced run jitters 14-17 s).
"$BEDTOP" record "$TMP/max1.rec" --demo --demo-speed max --duration 2h 2>"$TMP/max1.err"
expect_eq "--demo-speed max: record exits 0" "$?" 0
"$BEDTOP" record "$TMP/max2.rec" --demo --demo-speed max --duration 2h 2>/dev/null
check "--demo-speed max: two runs record the same polls" cmp -s <(tail -n +2 "$TMP/max1.rec") <(tail -n +2 "$TMP/max2.rec")
expect_eq "--demo-speed max: 481 polls, every gap 15 s" \
    "$(python3 -c "
import json,sys
t=[l['t'] for l in map(json.loads, open(sys.argv[1])) if 't' in l]
print(len(t), sorted({b-a for a,b in zip(t,t[1:])}))" "$TMP/max1.rec")" "481 [15]"
expect_rc "--demo-speed max on the dashboard is an error" 3 "$BEDTOP" --demo --demo-speed max
check "... one line saying it is for record" grep -q "^bedtop: --demo-speed max does not apply to the dashboard; it is for record" "$TMP/last.err"
finish
