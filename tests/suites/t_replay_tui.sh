#!/usr/bin/env bash
# Interactive replay in tmux (helpers in tests/termlib.sh): `bedtop replay FILE` on a
# headless demo recording, driven with its keys, screens compared with
# tests/term/golden/replay-*.txt (UPDATE_GOLDEN=1 rewrites them). Markers are
# written by the live dashboard's m; a backfill recording comes from the fake AWS.
. "$BEDTOP_SRCDIR/tests/lib.sh"
TUI_CMD=""
. "$BEDTOP_SRCDIR/tests/termlib.sh"
EXTRA=""
# Goldens (tests/termlib.sh): the value goldens check every figure on the screen (data
# minute 10:13, the retry storm, and the stale row at 80x24); the others are layout
# goldens, numbers and plotted glyphs masked.
LAYOUT_GOLDENS=1
VALUE_GOLDENS="replay-goto-1013-80x24 replay-stale-80x24-CUTF-8"

# The fixture is a committed recording, made once with
#   bedtop record tests/data/fixture.rec --demo --demo-speed max --duration 30m
# Recording it here, paced by the wall clock, made the goldens depend on the load
# of the machine (poll times move when the loop wakes late). Remake it (and the
# goldens, UPDATE_GOLDEN=1) when the recording format or the demo changes.
REC=$SRC/tests/data/fixture.rec
check "the fixture recording is there" test -s "$REC"
# Poll times as the file has them.
poll_iso() { python3 - "$REC" "$1" <<'PY'
import json, sys, time
polls = [json.loads(l)["t"] for l in open(sys.argv[1]).readlines()[1:] if l.strip()]
print(time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(polls[int(sys.argv[2])])))
PY
}
FIRST=$(poll_iso 0) SECOND=$(poll_iso 1) LAST=$(poll_iso -1)
expect_eq "the demo's first poll is at its start" "$FIRST" 2026-11-29T10:00:00Z
# at NAME ISO: the replay shows the model at exactly this instant. The status bar names
# it by its data minute (the one clock: floor(ISO - the recording's 120 s lag) - 60 s)
# and the instant seen, "data 09:57 seen 10:00:00".
at() {
    local want
    want=$(python3 -c '
import calendar, sys, time
t = calendar.timegm(time.strptime(sys.argv[1], "%Y-%m-%dT%H:%M:%SZ"))
m = (t - 120) // 60 * 60 - 60
print("data %s seen %s" % (time.strftime("%H:%M", time.gmtime(m)), time.strftime("%H:%M:%S", time.gmtime(t))))' "$2")
    wait_for "$1" "$want"
}
# The xterm sequences of Home and End, sent whole (tmux's own differ from TERM=xterm's).
HOME_KEY=$'\eOH' END_KEY=$'\eOF'
lit() { T send-keys -t "$1" -l "$2"; }

# g 10:13 goes to data minute 10:13 as it stood the last second it was the newest:
# 10:13 + 60 s + the recording's cloudwatch_lag 120 s + 59 s = 10:16:59.
# n from there: the next thing to start is experiments going STALE at 10:18:00 (data
# minute 10:15). Its Region's CloudWatch fails from story minute 18
# (collectors/demo.c); minute 10:15 is published 60 s + DEMO_CW_LAG 120 s after it
# starts = 10:18:00, and that publication is the first failure. N from there goes back
# to 10:16:00 (data 10:13): triage's retry storm throttles from story minute 13
# (storm(13) = 0.25), and minute 10:13 counts once complete: 10:13 + 60 s + 120 s.
G_AT=2026-11-29T10:16:59Z N_AT=2026-11-29T10:18:00Z P_AT=2026-11-29T10:16:00Z
stale_at() { # codes of experiments (STALE?) and triage throttles at time $1, from --at
    "$BEDTOP" replay "$REC" --at "$1" --format json | python3 -c '
import json, sys
r = {x["name"]: x for x in json.load(sys.stdin)["routes"]}
print("STALE" in [w["code"] for w in r["experiments"]["warnings"]], r["triage"]["throttles_per_min"] > 0)'
}
# --at names data minutes, each shown as it stood at its last second (+3 min - 1 s)
expect_eq "--at 10:14 (10:17:59): experiments not yet stale" "$(stale_at 10:14)" "False True"
expect_eq "--at 10:15 (10:18:59): experiments stale" "$(stale_at 10:15)" "True True"
expect_eq "--at 10:12 (10:15:59): triage not yet throttled" "$(stale_at 10:12)" "False False"
expect_eq "--at 10:13 (10:16:59): triage throttled" "$(stale_at 10:13)" "False True"

for size in 120x40 80x24; do
    w=${size%x*} h=${size#*x}
    s=rp-$size; TUI_CMD="$BEDTOP replay $REC"
    start "$s" "$w" "$h" C.UTF-8
    check "$size: replay opens at the first poll, paused" at "$s" "$FIRST"
    golden "replay-open-$size" "$s"
    keys "$s" g
    check "$size: g prompts for a time" wait_for "$s" "go to: _"
    # the prompt's hint whole at any width, the longest form that fits (issue 34 item 10):
    # at 80 columns the short one, never one cut mid-word
    if [ "$w" = 80 ]; then
        check "80x24: the go-to hint fits whole" bash -c 'tmux -L "$1" capture-pane -p -t "$2" |
            grep -qx " go to: _   (14:32, -30m, +5m or ISO; Enter goes, Esc cancels) *"' _ "$SOCK" "$s"
    else
        check "$size: the go-to hint whole" wait_for "$s" \
            "go to: _   (14:32, -30m from the end, +5m from the start, ISO; Enter goes, Esc cancels)"
    fi
    keys "$s" 1 0 : 1 3 Enter
    check "$size: g 10:13 goes to data minute 10:13 (10:16:59)" at "$s" "$G_AT"
    golden "replay-goto-1013-$size" "$s"
    keys "$s" n
    check "$size: n lands on the next start: experiments STALE at 10:18:00" at "$s" "$N_AT"
    check "$size: n says what started, by its data minute" \
        wait_for "$s" "data 10:15 experiments: STALE (seen 10:18:00)"
    golden "replay-next-$size" "$s"
    keys "$s" N
    check "$size: N goes back to triage's throttling at 10:16:00" at "$s" "$P_AT"
    golden "replay-prev-$size" "$s"
    keys "$s" ]
    check "$size: ] doubles the speed" wait_for "$s" "paused 2x"
    golden "replay-speed-$size" "$s"
    lit "$s" "$END_KEY"
    check "$size: End goes to the last poll ($LAST)" at "$s" "$LAST"
    keys "$s" Enter
    check "$size: the detail opens" wait_for "$s" " PgDn"
    lit "$s" "$HOME_KEY"
    lit "$s" "$END_KEY"
    check "$size: End inside the detail scrolls it to its end" wait_for "$s" " PgUp"
    check "$size: ... and leaves the clock alone" at "$s" "$LAST"
    keys "$s" Escape
    lit "$s" "$HOME_KEY"
    check "$size: Home goes back to the start" at "$s" "$FIRST"
    keys "$s" .
    check "$size: . steps to the second poll ($SECOND)" at "$s" "$SECOND"
    keys "$s" ,
    check "$size: , steps back to the first poll" at "$s" "$FIRST"
    keys "$s" [
    check "$size: [ halves the speed again" wait_for "$s" "paused 1x"
    golden "replay-home-step-$size" "$s"
    T kill-session -t "$s"
done

# A stale route at every size, UTF-8 and ASCII: at 10:20 experiments' CloudWatch has
# failed since 10:18:30 (see n above); its row is dimmed and shows the age of its newest
# data instead of a headroom that is not current.
for size in 80x24 120x40 200x60; do
    w=${size%x*} h=${size#*x}
    for lang in C.UTF-8 C; do
        L=${lang//./}; s=stale-$size-$L; TUI_CMD="$BEDTOP replay $REC"
        start "$s" "$w" "$h" "$lang"; at "$s" "$FIRST"
        keys "$s" g 1 0 : 1 7 Enter
        check "$size $lang: g 10:17 (10:20:59)" at "$s" 2026-11-29T10:20:59Z
        check "$size $lang: the stale row shows its age" wait_for "$s" "UNKN old 5m"
        # the routes are in us-east-1, us-west-2 and eu-west-1, whose CloudWatch fails
        # (experiments, the only route there, is stale: replay --at 10:17 says so)
        [ "$w" -ge 120 ] && check "$size $lang: the header counts the failing Region" \
            wait_for "$s" " 3 regions, 1 failing, 9 routes: "
        golden "replay-stale-$size-$L" "$s"
        if [ "$size" = 80x24 ]; then
            keys "$s" / e x p Enter Enter
            check "$size $lang: the stale route's detail says how old its data is" \
                wait_for "$s" "experiments UNKN STALE 5m old"
            golden "replay-stale-detail-$size-$L" "$s"
        fi
        T kill-session -t "$s"
    done
done

# Help in replay shows the replay's keys (and not the live-only ones).
s=help; TUI_CMD="$BEDTOP replay $REC"; start $s 120 40 C.UTF-8; at $s "$FIRST"
keys $s '?'
check "? opens the replay help" wait_for $s "bedtop replay keys"
golden replay-help-120x40 $s
scr=""
for i in 1 2 3 4 5 6; do scr+=$(T capture-pane -p -t $s); keys $s PageDown; sleep 0.2; done
for k in "Space, p      play / pause" "n             next warning" "Home          start of the recording" \
         "g             go to a time" "], }          play faster"; do
    check "help lists '$k'" grep -qF -- "$k" <<<"$scr"
done
check "help leaves out live-only keys (+ interval, r refresh)" \
    bash -c '! grep -qE "poll less often|refresh now" <<<"$1"' _ "$scr"
keys $s Escape
check "Esc closes the help" wait_gone $s "bedtop replay keys"
# Playing: space runs recorded time forward at the chosen speed, space stops it.
keys $s ] ] ] ] ] ' '
check "space plays (100x)" wait_for $s "playing 100x"
check "the header says PLAYING" wait_for $s "PLAYING"
check "recorded time moves while playing" wait_gone $s "seen 10:00:00 "
keys $s ' '
check "space pauses again" wait_for $s "paused 100x"
# A time that is not one, and one outside the recording.
keys $s g x y z Enter
check "g rejects what is not a time" wait_for $s "'xyz' is not a time"
keys $s g 0 9 : 0 0 Enter
check "g before the start clamps to the start, naming the data minutes" \
    wait_for $s "outside the recording (data 09:57 to 10:27): at its start"
check "... and shows the start" at $s "$FIRST"
keys $s q
check "q: replay exits 0" wait_for $s "EXITED rc=0"
check "q: alternate screen left" test "$(T display -p -t $s '#{alternate_on}')" = 0
check "q: cursor visible again" test "$(T display -p -t $s '#{cursor_flag}')" = 1
check "q: dashboard gone from the screen" wait_gone $s "REPLAY"
T kill-session -t $s

# ASCII twins (LANG=C) of the timeline; SIGTERM restores the terminal (128+15).
s=ascii; TUI_CMD="$BEDTOP replay $REC"; start $s 80 24 C; at $s "$FIRST"
keys $s g 1 0 : 1 3 Enter
check "LANG=C: g 10:13 goes to 10:16:59" at $s "$G_AT"
golden replay-goto-1013-80x24-C $s
ppid=$(T display -p -t $s '#{pane_pid}')
pid=$(pgrep -P "${ppid:-1}" | head -1)
kill -TERM "${pid:-0}"
check "SIGTERM: replay exits 143" wait_for $s "EXITED rc=143"
check "SIGTERM: alternate screen left" test "$(T display -p -t $s '#{alternate_on}')" = 0
check "SIGTERM: cursor visible again" test "$(T display -p -t $s '#{cursor_flag}')" = 1
T kill-session -t $s

# Markers: the live dashboard's m asks for a note and writes it into the recording.
MREC=$TMP/marked.rec
s=live; TUI_CMD="$BEDTOP --demo --demo-speed 60 --record $MREC"; start $s 160 24 C.UTF-8
check "live demo dashboard with --record comes up" wait_for $s " REC "
sleep 1 # a minute of simulated time, so the marker sits apart from the start
keys $s m
check "m asks for a note" wait_for $s "marker note: _"
keys $s -l "déploiement v2 canary ✓" # not ASCII: a note keeps its UTF-8
keys $s Enter
check "Enter adds the marker" wait_for $s "added: déploiement v2 canary ✓"
keys $s q
check "live dashboard exits 0" wait_for $s "EXITED rc=0"
T kill-session -t $s
MARK=$(python3 - "$MREC" <<'PY'
import json, sys, time
for l in open(sys.argv[1]).readlines()[1:]:
    for e in json.loads(l).get("e", []):
        if e["type"] == "marker":
            print(time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(e["t"])), e["text"])
PY
)
expect_eq "the recording holds the marker and its note, UTF-8 kept" "${MARK#* }" "déploiement v2 canary ✓"
MARK_T=${MARK%% *}
# the list names a marker by its data minute (the demo's lag, from the header), and
# when it was added
MARK_LINE=$(python3 -c '
import calendar, json, sys, time
lag = json.loads(open(sys.argv[1]).readline())["config"]["cloudwatch_lag"]
t = calendar.timegm(time.strptime(sys.argv[2], "%Y-%m-%dT%H:%M:%SZ"))
m = (t - int(lag)) // 60 * 60 - 60
print("data %s  " % time.strftime("%Y-%m-%dT%H:%M", time.gmtime(m)))' "$MREC" "$MARK_T")
sum0=$(md5sum <"$MREC")
s=marks; TUI_CMD="$BEDTOP replay $MREC"; start $s 80 24 C.UTF-8; wait_for $s "REPLAY"
keys $s M
check "M lists the markers by data minute" wait_for $s "${MARK_LINE}déploiement v2 canary ✓"
check "the list says how to use it" wait_for $s "markers (Enter jumps, Esc closes)"
check "the timeline marks it" bash -c 'tmux -L "$1" capture-pane -p -t "$2" | sed -n 22p | grep -q "M"' _ "$SOCK" $s
keys $s Enter
check "Enter jumps to the marker ($MARK_T)" wait_for $s "seen ${MARK_T:11:8}"
check "... and names it" wait_for $s "marker: déploiement v2 canary ✓"
keys $s m
check "m in replay lists markers too (the file is read-only)" wait_for $s "markers (Enter jumps"
keys $s Escape
check "Esc closes the list" wait_gone $s "markers (Enter jumps"
keys $s q
wait_for $s "EXITED rc=0"
expect_eq "replay left the recording untouched" "$(md5sum <"$MREC")" "$sum0"
T kill-session -t $s

# Issue 16, break 4: one admission gauge of 4e10 in flight sized the operating-point
# graph's table ((int)xmax + 1: undefined behaviour, then out of memory, exit 3) as
# soon as the detail view opened. Since break 3, 4e10 calls in flight is refused where
# samples enter (more than 1e9: core/plausible.h) and the route goes stale naming it;
# the largest gauge the store takes, 9e8, would still have sized a table of 900 M
# entries. The fixture with triage's gauge at VALUE throughout.
huge_fixture() { # huge_fixture VALUE OUT
python3 - "$REC" "$2" "$1" <<'PY'
import json, sys
lines = open(sys.argv[1]).read().splitlines()
hdr = json.loads(lines[0])
r = [x["name"] for x in hdr["routes"]].index("triage")
sig = hdr["signals"].index("adm_in_flight")
out = [lines[0]]
for l in lines[1:]:
    d = json.loads(l)
    for smp in d.get("s", []):
        kv = smp[3]
        for i in range(0, len(kv), 2):
            if smp[0] == r and kv[i] == sig:
                kv[i + 1] = float(sys.argv[3])
    out.append(json.dumps(d, separators=(",", ":")))
open(sys.argv[2], "w").write("\n".join(out) + "\n")
PY
}
huge_fixture 4e10 "$TMP/absurd-in-flight.rec"
"$BEDTOP" replay "$TMP/absurd-in-flight.rec" --at 2026-11-29T10:13:00Z --format json >"$TMP/absurd.json" 2>/dev/null
expect_eq "break 3, 4e10 in flight: not taken (in flight from CloudWatch instead), triage stale naming the value" "$(python3 -c "
import json, sys
r = {x['name']: x for x in json.load(open(sys.argv[1]))['routes']}['triage']
print(r['in_flight'] is None or r['in_flight'] < 1e9, any(w['code'] == 'STALE' and 'adm_in_flight = 4e+10' in w['message'] for w in r['warnings']))" "$TMP/absurd.json")" "True True"
HUGE=$TMP/huge-in-flight.rec
huge_fixture 9e8 "$HUGE"
s=huge; TUI_CMD="$BEDTOP replay $HUGE"; start $s 120 40 C.UTF-8; at $s "$FIRST"
keys $s g 1 0 : 1 3 Enter; at $s "$G_AT"
keys $s / t r i a g e Enter Enter
check "break 4, 9e8 in flight: the detail view opens" wait_for $s " PgDn"
# the warnings open the document: page down until the last graph shows
for i in 1 2 3 4 5; do
    T capture-pane -p -t $s | grep -qF "─ Operating point: " && break
    keys $s PageDown; sleep 0.2
done
check "break 4, 9e8 in flight: the operating point is drawn, bounded" wait_for $s "─ Operating point: "
check "break 4, 9e8 in flight: the operating point reads 900M now" wait_for $s "now 900.00M in flight"
check "break 4, 9e8 in flight: the dashboard is still running" bash -c '! tmux -L "$1" capture-pane -p -t "$2" | grep -q EXITED' _ "$SOCK" $s
keys $s Q
check "break 4, 9e8 in flight: Q exits 0" wait_for $s "EXITED rc=0"
T kill-session -t $s

# A damaged line is skipped with a warning in the status bar; the rest opens.
BAD=$TMP/damaged.rec
sed '5s/.*/{"t": this is not JSON/' "$REC" >"$BAD"
s=bad; TUI_CMD="$BEDTOP replay $BAD"; start $s 120 40 C.UTF-8
check "a recording with a damaged line opens" at $s "$FIRST"
check "the status bar says a line was skipped, and which" wait_for $s "1 damaged line skipped (line 5)"
T kill-session -t $s

# A backfill recording (from the fake CloudWatch) has no admission counters: the replay says so.
NOW=$(date +%s)
python3 - "$TMP/scen.json" "$(( (NOW / 60) * 60 - 40 * 60 ))" <<'PY'
import json, sys
start = int(sys.argv[2]); mid = "anthropic.claude-3-haiku-20240307-v1:0"
ser = lambda m, f: {"namespace": "AWS/Bedrock", "metric": m, "stat": "Sum", "dimensions": {"ModelId": mid},
                    "start": start, "values": [f(i) for i in range(40)]}
json.dump({"series": [ser("Invocations", lambda i: 100 + i), ser("InputTokenCount", lambda i: 1000 * (100 + i)),
                      ser("OutputTokenCount", lambda i: 200 * (100 + i))], "quotas": []}, open(sys.argv[1], "w"))
PY
printf '[bedtop]\nregion = us-east-1\n[route haiku]\nmodel = anthropic.claude-3-haiku-20240307-v1:0\nmax_tokens = 500\n' >"$TMP/b.conf"
start_fake fake --scenario "$TMP/scen.json"
env -u AWS_PROFILE -u AWS_ENDPOINT_URL -u AWS_REGION -u AWS_DEFAULT_REGION -u AWS_SESSION_TOKEN \
    AWS_ACCESS_KEY_ID=AKIDEXAMPLE AWS_SECRET_ACCESS_KEY='wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY' \
    AWS_CONFIG_FILE=/nonexistent AWS_SHARED_CREDENTIALS_FILE=/nonexistent AWS_EC2_METADATA_DISABLED=true \
    "$BEDTOP" record "$TMP/bf.rec" --since 20m --config "$TMP/b.conf" \
    --endpoint-url "http://127.0.0.1:${PORT:-1}" 2>"$TMP/bf.err"
expect_eq "backfill recording written" "$?" 0
s=bf; TUI_CMD="$BEDTOP replay $TMP/bf.rec"; start $s 120 40 C.UTF-8
check "a backfill recording opens in replay" wait_for $s "REPLAY"
check "the status bar says it has no admission counters" wait_for $s "backfilled: no admission counters"
keys $s q
check "q: exits 0" wait_for $s "EXITED rc=0"
T kill-session -t $s

# Without a terminal, the interactive replay says what to use instead.
"$BEDTOP" replay "$REC" </dev/null >"$TMP/nt.out" 2>"$TMP/nt.err"
expect_eq "replay without a terminal exits 3" "$?" 3
check "... and points to --at" grep -q "replay needs a terminal; for a report use: bedtop replay .* --at TIME" "$TMP/nt.err"
finish
