#!/usr/bin/env bash
# Terminal tests (tmux's habit): the dashboard on the demo, frozen at data minute
# 10:13 (--demo-at names a data minute: issue 34; the retry storm's first crit minute,
# seen at 10:16:59), in a private tmux server at fixed sizes; keys driven with send-keys,
# screens captured with capture-pane -p and compared with tests/term/golden/*.txt
# (helpers in tests/termlib.sh). UPDATE_GOLDEN=1 rewrites the goldens.
# TUI_CMD overrides the program (default: the real binary, `bedtop --demo-at 13`).
. "$BEDTOP_SRCDIR/tests/lib.sh"
TUI_CMD=${TUI_CMD:-"$BEDTOP --demo-at 13"}
. "$BEDTOP_SRCDIR/tests/termlib.sh"
EXTRA=""
# Goldens (tests/termlib.sh): these value goldens check every figure on the screen (the
# first screen at 80x24 and triage's detail at 120x40, whose numbers are worked from
# check --demo-at 13 in the checks below, and legacy's SLOWDOWN graph at data minute 22); every other golden is a layout golden, its
# numbers and plotted glyphs masked, so a change to the demo's story rewrites only these.
LAYOUT_GOLDENS=1
VALUE_GOLDENS="overview-80x24-CUTF-8 detail-triage-120x40-CUTF-8 detail-legacy-speed-120x40"
HEAD="ROUTE "     # the table heading: the dashboard is up

# The xterm sequences of Home and End, sent whole (tmux's own differ from TERM=xterm's).
HOME_KEY=$'\eOH' END_KEY=$'\eOF'
lit() { T send-keys -t "$1" -l "$2"; }
# screen_has NAME REGEX : the screen shows an extended regex (polls as wait_for does)
screen_has() {
    local i
    for i in $(seq 1 100); do
        T capture-pane -p -t "$1" | grep -qE -- "$2" && return 0
        sleep 0.05
    done
    return 1
}

# The layout mask itself, on the value golden of the first screen: other figures (a
# story where triage has 100 % headroom, a shorter bar and 1.50M settled) leave its
# layout golden as it was; a heading gone or a pane line lost does not.
g80=$GOLD/overview-80x24-CUTF-8.txt
check "layout mask: other figures, the same layout" cmp -s <(mask_layout <"$g80") \
    <(sed 's/   43\.6 █████▒▒/  100.0 ██▒▒▒▒▒/; s/   873k / 1.50M /' "$g80" | mask_layout)
check "layout mask: a heading gone is a different layout" bash -c '! cmp -s "$1" "$2"' _ \
    <(mask_layout <"$g80") <(sed 's/ THR\/m / THR   /' "$g80" | mask_layout)
check "layout mask: a lost line is a different layout" bash -c '! cmp -s "$1" "$2"' _ \
    <(mask_layout <"$g80") <(sed '/^─ Warnings/d' "$g80" | mask_layout)

# At every size, UTF-8 and ASCII: the overview; the detail of triage (every runtime
# graph: tokens, throttles, latency, in flight, operating point); the same detail
# scrolled to its end (the last warning).
for size in 80x24 120x40 200x60; do
    w=${size%x*} h=${size#*x}
    for lang in C.UTF-8 C; do
        s=ov-$size-$lang; s=${s//./}; L=${lang//./}
        start "$s" "$w" "$h" "$lang"
        check "overview $size LANG=$lang comes up" wait_for "$s" "$HEAD"
        golden "overview-$size-$L" "$s"
        keys "$s" Down Enter # triage, below preview
        check "detail $size LANG=$lang" wait_for "$s" " triage CRIT "
        golden "detail-triage-$size-$L" "$s"
        lit "$s" "$END_KEY"
        check "detail $size LANG=$lang: End goes to the end (the figures)" wait_for "$s" " PgUp"
        golden "detail-triage-end-$size-$L" "$s"
        T kill-session -t "$s"
    done
done

# The story is where an engineer looks (80x24): worst routes first, warnings pane.
s=story; start $s 80 24 C.UTF-8; wait_for $s "$HEAD"
scr=$(T capture-pane -p -t $s)
# Two routes are critical: the ESTIMATE ONLY banner gives up its line and is one
# warning among the others.
check "two crit routes: no ESTIMATE ONLY banner line" bash -c '! grep -q "^ ESTIMATE ONLY" <<<"$1"' _ "$scr"
check "... the estimate-only warning is in the warnings pane" grep -q "WARN legacy *ESTIMATE_ONLY" <<<"$scr"
row2=$(sed -n 3p <<<"$scr"); row3=$(sed -n 4p <<<"$scr")
# crit first, and among them a route with no headroom known (preview's applied quota
# is 0) before the rest: not last, as a plain headroom sort put it (issue 22)
check "worst route first: preview, crit, whose applied quota is 0 (not 'unknown')" \
    grep -q "^preview *CRIT *- *quota 0 " <<<"$row2"
check "then triage, crit in its retry storm, 43.6% of a shared quota left" \
    grep -q "^triage *CRIT *43.6" <<<"$row3"
check "80x24: the key line says how to get help and quit" grep -q "^ ? help  q quit  " <<<"$scr"
# the action line: the worst warning among the crit routes of the most calls, triage's
# retry storm (806 calls/min offered against preview's few), its remedy from
# check --demo-at 13 --format json (the first words: the line is cut at 80 columns)
act=$("$BEDTOP" check --demo-at 13 --format json | python3 -c '
import json, sys
r = {x["name"]: x for x in json.load(sys.stdin)["routes"]}["triage"]
print([w["action"] for w in r["warnings"] if w["code"] == "RETRY_LOAD"][0][:40])')
check "the action line above the warnings: triage's remedy ($act)" \
    grep -qF " do CRIT triage RETRY_LOAD: $act" <<<"$scr"
check "summarize (max_tokens 64,000, ~0.25 calls in flight) is a warning, not critical" \
    grep -q "^summarize *WARN *87.1" <<<"$scr"
check "warnings pane lists the retry storm" grep -q "CRIT triage *RETRY_LOAD" <<<"$scr"
check "a warning cut at the edge ends in an ellipsis" grep -q "…$" <<<"$scr"
check "the warnings pane says where it is" grep -qE "1-[0-9]+/[0-9]+ \(Tab scrolls\)" <<<"$scr"
# data minute 10:13 arrived at 10:16:00 and is seen at 10:16:59, its last second as the
# newest: 59 s old, shown in 10 s steps
check "status bar: freshness, lag, paused, cost, mode" \
    grep -q "CW 50s lag 2m .* paused .* metrics/day n/a" <<<"$scr"
# Tab moves to the warnings pane: a cursor on its first warning, Up/Down move it, Enter
# expands that warning in place (its whole message and what to do) and selects its
# route; Enter again opens that route's detail, not the row selected before.
keys $s Tab
check "Tab: the warnings pane has the keys" wait_for $s "warnings: Up/Down pick one"
keys $s Down Down Down # the fourth warning, worst first: legacy's ESTIMATE_ONLY
keys $s Enter
check "Enter expands it in place: what to do follows the message" \
    wait_for $s "do: "
check "... and says Enter again opens its route" wait_for $s "Enter again opens legacy"
golden warning-expanded-80x24 $s
keys $s Enter
check "Enter again opens that warning's route (legacy)" wait_for $s " legacy WARN "
keys $s Escape
wait_for $s "$HEAD"
keys $s Tab
# With only the estimate-only route shown, nothing is worse: the banner has its line.
keys $s / l e g a c y Enter
check "nothing worse: the banner names the estimate-only route and why" \
    wait_for $s " ESTIMATE ONLY legacy: EstimatedTPMQuotaUsage misses max_tokens reservations"
T kill-session -t $s

# HEAD% is coloured by the headroom thresholds alone: summarize's 87.1 % (warn only for
# its throttles and max_tokens) in the colour of OK, as agents' OK status cell.
s=colour; start $s 120 40 C.UTF-8; wait_for $s "$HEAD"
sgr_before() { # the SGR sequence in effect where TEXT starts on the row of ROUTE
    T capture-pane -e -p -t "$1" | grep -a "^[^ ]*$2 " | head -1 | python3 -c '
import re, sys
row = sys.stdin.read()
i = row.find(sys.argv[1])
print(re.findall(r"\x1b\[[0-9;]*m", row[:i])[-1] if i >= 0 else "none")' "$3"
}
expect_eq "HEAD% 87.1 of summarize (warn) has OK's colour, not its status'" \
    "$(sgr_before $s summarize 87.1)" "$(sgr_before $s agents 'OK ')"
check "the sort column says its direction (ST▼)" wait_for $s "ST▼"
keys $s I
check "I inverts it (ST▲)" wait_for $s "ST▲"
keys $s s
check "the next sort starts in its own direction, not inverted" wait_for $s "HEAD%▼"
check "... and the message says so" bash -c '! tmux -L "$1" capture-pane -p -t "$2" | grep -q "(inverted)"' _ "$SOCK" $s
check "120 columns: a FITS column" wait_for $s " FITS "
keys $s F3 w o r
check "F3 searches: the prompt" wait_for $s "search: wor_"
keys $s Enter Enter
check "F3 jumped to the route matching (workers), without filtering" wait_for $s " workers WARN "
T kill-session -t $s

# Graphs (issue 22): every time graph ends at the data minute on screen, so the used
# series reaches the right edge (it fell to ~0 in the last columns, whose CloudWatch
# minutes were not published yet); the window is minutes, not columns (+ - zoom,
# [ ] pan), and a cursor (< >) reads every legend at one minute.
graph_rows() { # the rows of the graph titled $2, up to its time axis
    T capture-pane -p -t "$1" | awk -v t="$2" 'index($0, t) { f = 1; next } f && /now|[0-9][0-9]:[0-9][0-9] *$/ { print; exit } f'
}
for size in 120x40 200x60; do
    w=${size%x*} h=${size#*x}
    s=graphs-$size; start $s "$w" "$h" C.UTF-8; wait_for $s "$HEAD"
    keys $s Down Enter; wait_for $s " triage CRIT "
    # down the document a few lines at a time until the graph is on screen (where a
    # page ends depends on the size and on how many graphs the route has)
    for i in $(seq 1 15); do
        T capture-pane -p -t $s | grep -qF "admitted 356" && break
        keys $s Down Down Down Down Down; sleep 0.1
    done
    check "$size: the offered-vs-accepted graph (admission counters)" \
        wait_for $s "admitted 356  ◇ retried 420  ✕ throttled 60  □ completed 303"
    lit $s "$HOME_KEY"; wait_for $s "Tokens/min against the quota"
    zero=$(graph_rows $s "Tokens/min against the quota" | grep "^ *0 ┤")
    check "$size: used reaches the right edge: nothing at 0 in the last columns" \
        bash -c '! grep -q "×" <<<"$1"' _ "$zero"
    # + steps down 10080, 2880, 1440, 720, 480, 240, 120, 60, 30, ... minutes from the
    # width's span (111 minutes at 120 columns, 191 at 200): two or three steps to 30.
    # Each + waits for its own step's message: waiting for any "graphs: " message read
    # the previous one on a loaded machine, pressed + again and zoomed past 30.
    steps="60 30"; [ "$w" = 200 ] && steps="120 60 30"
    for n in $steps; do
        keys $s +
        wait_for $s "graphs: $n minutes"
    done
    check "$size: + zooms to 30 minutes" wait_for $s "graphs: 30 minutes"
    axis=$(graph_rows $s "Tokens/min against the quota" | tail -1)
    # 30 minutes ending at data minute 10:13 start at 09:44: labels every 5 minutes,
    # at any width, and the right edge names its data minute (not "now", read as the
    # clock minute three minutes later: issue 34)
    check "$size: ... the axis spans 09:45 to 10:10 in 5-minute steps, to 10:13" \
        bash -c 'grep -q "09:45 .* 09:50 .* 10:05 .* 10:10 .*10:13 *$" <<<"$1" && ! grep -q "09:40\|now" <<<"$1"' _ "$axis"
    keys $s '<' '<' '<'
    axis_has() { # the tokens graph's time axis shows $2 (polls as wait_for does)
        local i
        for i in $(seq 1 60); do
            graph_rows "$1" "Tokens/min against the quota" | tail -1 | grep -q -- "$2" && return 0
            sleep 0.05
        done
        return 1
    }
    check "$size: < < < puts the cursor on 10:11 (two minutes back from 10:13)" axis_has $s "10:11"
    # triage's settled tokens at data minute 10:11, as check --demo-at 11 computes it
    # (data minute 10:11): the legend reads that minute, in bedtop's k/M form
    want=$("$BEDTOP" check --demo-at 11 --format json | python3 -c '
import json, sys
r = {x["name"]: x for x in json.load(sys.stdin)["routes"]}["triage"]
v = r["tpm"]["settled"]
print("%.0fk" % (v / 1000) if v < 1e6 else "%.2fM" % (v / 1e6))')
    check "$size: ... and the legend reads settled $want there" wait_for $s "● settled $want "
    keys $s '['
    check "$size: [ pans back (the cursor keeps its place from the edge)" \
        wait_for $s "graphs end 7 min before now (] comes back)"
    keys $s ']'
    check "$size: ] comes back to now" wait_for $s "graphs end at now"
    T kill-session -t $s
done

# Why calls got slow (issue 23): legacy's speed graphs at data minute 22, seen at
# 10:25:59, two minutes into its slowdown (collectors/demo.c: from minute 20 generation
# takes twice as long at the same traffic). check --demo-at 22 says "output tokens per second 542, 32%
# below the trailing hour's 792": the SLOWDOWN floor is 70 % of that hour, 0.7 x 792 =
# 554.4, drawn at 554/s; the legend's now is the last five minutes' 542/s; the data
# minutes since the slowdown, 10:20 to 10:22 (the minute on screen at 10:25), lie under
# the floor, so the floor line is marked ! in its last three columns.
saved=$TUI_CMD; TUI_CMD="$BEDTOP --demo-at 22"
s=speed; start $s 120 40 C.UTF-8; wait_for $s "$HEAD"
TUI_CMD=$saved
keys $s / l e g a c y Enter Enter
check "legacy's detail" wait_for $s " legacy WARN "
msg=$("$BEDTOP" check --demo-at 22 --format json | python3 -c '
import json, re, sys
r = {x["name"]: x for x in json.load(sys.stdin)["routes"]}["legacy"]
m = [w["message"] for w in r["warnings"] if w["code"] == "SLOWDOWN"][0]
now, hour = re.search(r"per second ([0-9]+), .*? hour.s ([0-9]+)", m).groups()
print(now, hour, round(0.7 * int(hour)))')
read -r s_now s_hour s_floor <<<"$msg"
expect_eq "check --demo-at 22: legacy's SLOWDOWN numbers (now, hour, 0.7 x hour)" "$msg" "542 792 554"
for i in 1 2 3 4 5 6; do
    T capture-pane -p -t $s | grep -qF "SLOWDOWN: output tokens/s" && break
    keys $s PageDown; sleep 0.2
done
check "the speed graph's title says SLOWDOWN" wait_for $s "─ SLOWDOWN: output tokens/s fell, traffic did not grow "
check "... its legend: the floor, the hour and now ($s_floor, $s_hour, $s_now)" \
    wait_for $s "┄ slowdown < $s_floor/s  ┈ hour $s_hour/s  ▪ now $s_now/s"
floor_row=$(T capture-pane -p -t $s | awk '/SLOWDOWN: output tokens/ { f = 1; next } f && /┄/ { print; exit }')
check "... the floor marked ! where the speed fell under it (the last minutes)" \
    grep -qE '┄!!! *$' <<<"$floor_row"
check "... and not before the slowdown" bash -c 'grep -qE "[┤│]┄{50,}" <<<"$1"' _ "$floor_row"
check "the time to first token graph follows" wait_for $s "Time to first token: are calls waiting to start?"
golden detail-legacy-speed-120x40 $s
keys $s '<' '<' '<' '<' '<' '<'
check "six < put the cursor on 10:17 (five minutes back from 10:22): the time axes show it" \
    wait_for $s "10:17"
at17=$(T capture-pane -p -t $s | grep -o "hour $s_hour/s  ▪ now [0-9]*/s" | head -1)
check "... the legend reads that minute, before the slowdown: above the floor ($at17)" \
    test "${at17##* now }" != "$s_now/s" -a "$(tr -dc 0-9 <<<"${at17##* now }")0" -gt "${s_floor}0"
T kill-session -t $s

# REC at 80x24 whenever recording; the file is named on exit.
saved=$TUI_CMD; TUI_CMD="$BEDTOP --demo-at 16 --record $TMP/rec80.rec"
s=rec80; start $s 80 24 C.UTF-8; wait_for $s "$HEAD"
TUI_CMD=$saved
check "80x24 while recording: REC in the header" bash -c 'tmux -L "$1" capture-pane -p -t "$2" | sed -n 1p | grep -q " REC "' _ "$SOCK" $s
keys $s q
check "quitting names the recording" wait_for $s "bedtop: recorded "
check "... with its path" wait_for $s "to $TMP/rec80.rec"
T kill-session -t $s

# A short crit is not lost: the demo at 100x (triage is crit for one data minute,
# 10:13, about half a second of wall time), then the event log (e) lists it, the row
# keeps a mark (*), and --bell rang the terminal bell.
saved=$TUI_CMD; TUI_CMD="$BEDTOP --demo --demo-speed 100 --bell"
s=shortcrit; start $s 120 40 C.UTF-8; wait_for $s "$HEAD"
TUI_CMD=$saved
check "the demo at 100x reaches 10:18 (the crit is over)" wait_for_long $s "T10:18:"
check "triage's row keeps a mark: crit in the last 15 minutes" screen_has $s '^triage +WARN\*'
keys $s p e
check "the event log opens (e)" wait_for $s "events, newest first"
check "... and lists triage turning crit at data minute 10:13" \
    screen_has $s '10:13 CRIT triage +status warn -> crit'
check "... and back" screen_has $s '10:1[4-9] WARN triage +status crit -> warn'
golden_masked=$(T capture-pane -p -t $s | grep -c "status")
check "the log shows status changes of several routes ($golden_masked)" test "$golden_masked" -ge 2
check "--bell: the terminal bell rang on the new crit" \
    test "$(T display -p -t $s '#{window_bell_flag}')" = 1
keys $s Escape
check "Esc closes the event log" wait_gone $s "events, newest first"
T kill-session -t $s

# A dumb terminal cannot draw the dashboard: one line pointing to check, exit 3.
TERM=dumb script -qec "$BEDTOP --demo-at 16" /dev/null >"$TMP/dumb.out" 2>&1 </dev/null
check "TERM=dumb: points to bedtop check" grep -q "TERM=dumb cannot draw the dashboard; for plain output use \`bedtop check\`" "$TMP/dumb.out"

# Keys: q and Esc and Left back out of the detail; Q and F10 quit from anywhere.
s=keys; start $s 120 40 C.UTF-8; wait_for $s "$HEAD"
keys $s Down Enter; wait_for $s " triage CRIT "
keys $s PageDown PageDown
check "PgDn scrolls the detail to the operating point" wait_for $s "flat beyond 18 in flight"
check "... and says where it is (rows a-b/n, a past the first)" \
    screen_has $s ' ([2-9]|[1-9][0-9]+)-[0-9]+/[0-9]+ Pg(Up|Dn)'
keys $s q
check "q in the detail goes back to the overview" wait_for $s "$HEAD"
check "... and does not quit" bash -c '! tmux -L "$1" capture-pane -p -t "$2" | grep -q EXITED' _ "$SOCK" $s
keys $s Enter; wait_for $s " triage CRIT "
keys $s Left
check "Left goes back too" wait_for $s "$HEAD"
keys $s Enter; wait_for $s " triage CRIT "
keys $s Tab
check "Tab in the detail: the next route" wait_for $s " legacy WARN "
keys $s BTab
check "Shift-Tab: the previous route" wait_for $s " triage CRIT "
keys $s Escape
check "Esc backs out to the overview" wait_for $s "$HEAD"
keys $s z
check "a key with no action says so" wait_for $s "'z' does nothing here; ? lists the keys"
check "wide terminals have an F-key bar" wait_for $s "F1Help  F3Search  F4Filter  F5Refresh  F6SortBy  F10Quit"
keys $s Enter; wait_for $s " triage CRIT "
keys $s Q
check "Q quits from the detail (exit 0)" wait_for $s "EXITED rc=0"
T kill-session -t $s
s=f10; start $s 80 24 C.UTF-8; wait_for $s "$HEAD"
keys $s '?'; wait_for $s "bedtop keys"
keys $s F10
check "F10 quits from the help (exit 0)" wait_for $s "EXITED rc=0"
T kill-session -t $s

# A route list longer than the screen says which rows are shown.
s=short; start $s 80 12 C.UTF-8; wait_for $s "$HEAD"
lit $s "$END_KEY"
check "80x12: the header says which routes are shown" screen_has $s '[0-9]+ routes \([0-9]+-[0-9]+ shown\)'
T kill-session -t $s

# The smallest screen keeps the header's counts: 60x12 (issue 22: they were cut off).
s=tiny; start $s 60 12 C.UTF-8; wait_for $s "$HEAD"
check "60x12: the header keeps its crit and warn counts" \
    bash -c 'tmux -L "$1" capture-pane -p -t "$2" | sed -n 1p | grep -q "2 crit 4 warn"' _ "$SOCK" $s
check "60x12: the key line still says how to get help and quit" wait_for $s "? help  q quit"
T kill-session -t $s

# Sorting by a column that 80 columns hide says so.
s=sorthid; start $s 80 24 C.UTF-8; wait_for $s "$HEAD"
keys $s s s s s
check "sort by p99 at 80 columns: its column is hidden, and the bar says so" \
    wait_for $s "sort by p99 (its column is hidden at this width)"
T kill-session -t $s

# The mouse, as tmux passes it on (SGR 1006: ESC [ < button ; column ; row M/m, 1-based).
click() { lit "$1" $'\e[<'"$2;$3;$4M"$'\e[<'"$2;$3;$4m"; }
row_name() { T capture-pane -p -t "$1" | sed -n "$2p" | awk '{print $1}'; }
s=mouse; start $s 80 24 C.UTF-8; wait_for $s "$HEAD"
r5=$(row_name $s 5) r6=$(row_name $s 6)
click $s 0 3 5      # the route on row 5
keys $s Enter
wait_for $s " PgDn"
# (the detail's identity line is line 2, or 3 under a banner such as ESTIMATE ONLY)
check "mouse: a click selects the row (Enter opens $r5)" \
    bash -c 'tmux -L "$1" capture-pane -p -t "$2" | sed -n 2,3p | grep -q "^ $3 "' _ "$SOCK" $s "$r5"
keys $s Escape; wait_for $s "$HEAD"
# a double click on row 6, in one burst as a terminal sends it
lit $s $'\e[<0;3;6M\e[<0;3;6m\e[<0;3;6M\e[<0;3;6m'
wait_for $s " PgDn"
check "mouse: a double click opens the detail ($r6)" \
    bash -c 'tmux -L "$1" capture-pane -p -t "$2" | sed -n 2p | grep -q "^ $3 "' _ "$SOCK" $s "$r6"
lit $s $'\e[<65;10;10M'
check "mouse: the wheel scrolls the detail" wait_for $s " 4-22/"
keys $s Escape; wait_for $s "$HEAD"
thr_x=$(T capture-pane -p -t $s | sed -n 2p | awk '{print index($0, "THR/m")}')
click $s 0 "$thr_x" 2     # the heading THR/m
check "mouse: a click on a heading sorts by it" wait_for $s "sort by throttles"
thr_col() { # the THR/m cells of the rows (characters, not bytes: the bars are UTF-8)
    T capture-pane -p -t "$1" | sed -n '3,9p' | python3 -c '
import sys
x = int(sys.argv[1]) - 1
for l in sys.stdin.read().splitlines():
    v = l[x:x + 5].strip()
    print(-1 if v in ("", "-") else v)' "$2"
}
check "... the rows follow it (THR/m never rises down the table)" \
    bash -c 'sort -s -n -r -c <<<"$1"' _ "$(thr_col $s "$thr_x")"
lit $s $'\e[<65;10;19M'   # a warning line (13 route rows, then the warnings)
check "mouse: the wheel over the warnings scrolls them" screen_has $s ' [2-9][0-9]*-[0-9]+/[0-9]+ \(Tab'
# a double click on a warning opens the detail of the route it is about
wl=$(( $(T capture-pane -p -t $s | grep -n "^─ Warnings" | cut -d: -f1) + 1 )) # its first line
w_route=$(T capture-pane -p -t $s | sed -n ${wl}p | awk '{print $2}')
lit $s "$(printf '\e[<0;20;%dM\e[<0;20;%dm\e[<0;20;%dM\e[<0;20;%dm' $wl $wl $wl $wl)"
wait_for $s " PgDn"   # the detail's position tag: the detail is open
check "mouse: a double click on a warning opens its route ($w_route)" \
    bash -c 'tmux -L "$1" capture-pane -p -t "$2" | sed -n 2p | grep -q "^ $3 "' _ "$SOCK" $s "$w_route"
T kill-session -t $s

# Help overlay from the key table: complete at 80x24 by scrolling; Esc closes it.
for lang in C.UTF-8 C; do
    L=${lang//./}; s=help-$L; start $s 80 24 $lang; wait_for $s "$HEAD"
    keys $s '?'
    check "? opens the help ($lang)" wait_for $s "bedtop keys"
    golden help-80x24-$L $s
    keys $s PageDown
    check "PgDn scrolls the help ($lang)" wait_gone $s " 1-20/"
    golden help-80x24-pgdn-$L $s
    lit $s "$END_KEY"
    check "End: the end of the help ($lang)" wait_for $s "stale row"
    golden help-80x24-end-$L $s
    T kill-session -t $s
done
s=help; start $s 80 24 C.UTF-8; wait_for $s "$HEAD"
keys $s '?'; wait_for $s "bedtop keys"
seen=""
for i in 1 2 3 4 5 6 7; do seen+=$(T capture-pane -p -t $s); keys $s PageDown; sleep 0.2; done
for k in "t             next theme" "r, F5         refresh now" "m             add a marker" \
         "^L            redraw the screen" "USED/QUOTA" "graphs"; do
    check "help at 80x24 shows '$k' by scrolling" grep -qF -- "$k" <<<"$seen"
done
# The legend (after the keys) explains every column heading.
check "the legend is in the help" grep -q "Legend: columns, marks, the status bar" <<<"$seen"
for c in ROUTE MODEL REGION EP INFERENCE ST HEAD% USED/QUOTA FITS SETTLD ESTIM HELD "QUOTA SRC" \
         INV/m THR/m P50 P99 INFL "USED 30m" WARNINGS "CW SQ ADM" lag "STALE n" REC; do
    check "the legend explains '$c'" grep -qE -- "[│|] $c +[[:alnum:]\"]" <<<"$seen"
done
keys $s Escape
check "Esc closes the help" wait_gone $s "bedtop keys"
keys $s F1
check "F1 opens the help too" wait_for $s "bedtop keys"
T kill-session -t $s

# Filter and sort.
s=filt; start $s 80 24 C.UTF-8; wait_for $s "$HEAD"
keys $s / w o r k
check "/ shows the filter prompt" wait_for $s "filter: work_"
keys $s Enter
check "filter keeps the matching route" wait_for $s 'filter "work"'
golden filter-work-80x24 $s
scr=$(T capture-pane -p -t $s)
check "filter hides the others" bash -c '! grep -q "^triage " <<<"$1"' _ "$scr"
keys $s Escape
check "Esc clears the filter" wait_for $s "triage "
keys $s s s
check "s s sorts by used" wait_for $s "sort by used"
golden sort-used-80x24 $s
# USED/QUOTA sorts by the fraction its bar draws, not by tokens (issue 34), and the bar
# draws HEAD%'s side (one side per number): preview's quota is 0 (full: nothing fits)
# first; then legacy, bound by its rpm side, 79 of 95 requests (16 left: 83.2 %);
# backfill, bound by its daily side, 236.11M of 290.00M tokens today (53.89M left:
# 81.4 %); agents' 11.54M of 20.00M (58 %) after both, though it has the most tokens;
# luna's 4.08M of 30.00M (14 %) far below.
scr=$(T capture-pane -p -t $s)
order=$(sed -n '3,15p' <<<"$scr" | awk '{print $1}' | tr '\n' ' ')
check "sorted by used: preview (quota 0), legacy (rpm 83%), backfill (daily 81%) ($order)" \
    grep -q "^preview legacy backfill agents " <<<"$order"
check "... agents (58%, the most tokens) after backfill, luna (14%) after agents" \
    grep -qE "backfill .*agents .*luna " <<<"$order"
T kill-session -t $s

# Issue 34 item 7: a filter narrows the rows, not the status. /tri shows triage and
# triage-app; the header keeps every route's counts (14 routes: 2 crit 4 warn 1 unknown
# 7 ok, as with no filter) and says how many are shown; the do line is still triage's.
s=filtcount; start $s 80 24 C.UTF-8; wait_for $s "$HEAD"
keys $s / t r i Enter
check "/tri: the header keeps the global counts and says 2 shown" \
    wait_for $s " 14 routes: 2 crit 4 warn 1 unknown 7 ok · 2 shown  filter \"tri\""
keys $s Escape; wait_for $s "preview "
# /leg shows legacy alone (warn); preview and triage, crit, are hidden: the do line names
# the worst of them, triage's retry storm (806 calls/min against preview's few), marked
# hidden, instead of legacy's warning or "nothing to do"
keys $s / l e g Enter
check "/leg: 14 routes, 1 shown" wait_for $s "14 routes: 2 crit 4 warn 1 unknown 7 ok · 1 shown"
check "... the do line names the hidden crit route" wait_for $s " do CRIT triage (hidden) RETRY_LOAD: "
keys $s Escape; wait_for $s "preview "
keys $s / a g e n t s Enter
check "/agents (ok, nothing of its own to do): still the hidden crit's action, not 'nothing to do'" \
    wait_for $s " do CRIT triage (hidden) RETRY_LOAD: "
T kill-session -t $s

# Every route stale on credentials (no AWS credentials anywhere, every endpoint a closed
# port): each route has QUOTA_UNKNOWN and STALE, both unknown; the do line names the
# cause, STALE and the credential error its message carries, not QUOTA_UNKNOWN's
# "set quota_code", which no config change would fix.
mkdir -p "$TMP/nocred-home"
cat >"$TMP/nocred.conf" <<'CONF'
[bedtop]
region = us-east-1
[route triage]
model = us.anthropic.claude-sonnet-4-5-20250929-v1:0
max_tokens = 1024
[route batch]
model = anthropic.claude-3-haiku-20240307-v1:0
CONF
T -f /dev/null -u new-session -d -s nocred -x 80 -y 24 \
    "env -i PATH=$PATH TERM=xterm-256color LANG=C.UTF-8 HOME=$TMP/nocred-home XDG_CONFIG_HOME=$TMP/xdg \
     BEDTOP_DATADIR=$SRC/data AWS_EC2_METADATA_DISABLED=true AWS_ENDPOINT_URL=http://127.0.0.1:9 \
     $BEDTOP --config $TMP/nocred.conf; sleep 60"
check "no credentials: both routes stale" wait_for_long nocred "2 routes: 2 unknown"
check "... the do line names STALE and the credential error, not QUOTA_UNKNOWN" \
    wait_for nocred " do UNKN triage STALE: CloudWatch failing (cloudwatch us-east-1: credentials"
T kill-session -t nocred

# Issue 34 item 6: the overview shows the bound marks check prints (agents and luna, on
# bedrock-mantle with no reservations known, have headroom that is a lower bound: >).
marks=$("$BEDTOP" check --demo-at 13 | awk '$1 == "agents" || $1 == "luna" {print $1, $7}')
expect_eq "check --demo-at 13: agents and luna's HEAD% are lower bounds" "$marks" \
    "agents >38.4
luna >83.7"
s=marks; start $s 80 24 C.UTF-8; wait_for $s "$HEAD"
check "the overview shows agents' >38.4 as check does" screen_has $s "^agents +OK +>38\.4 "
check "... and luna's >83.7" screen_has $s "^luna +OK +>83\.7 "
check "... a known headroom has no mark (triage 43.6)" screen_has $s "^triage +CRIT +43\.6 "
T kill-session -t $s

# Issue 34 item 10: at 80 columns nothing is cut mid-word. The status bar drops whole
# parts (the poll interval first: the countdown implies it), ends in an ellipsis when
# it did, and the help shows it whole; the do line ends at a word of the action. At
# 10:16:01, a second after data minute 10:13 appears (--demo-at 13.02), every source's
# data is fresh (<10s), the widest the bar's parts are.
saved=$TUI_CMD; TUI_CMD="$BEDTOP --demo-at 13.02"
s=eighty; start $s 80 24 C.UTF-8; wait_for $s "$HEAD"
TUI_CMD=$saved
scr=$(T capture-pane -p -t $s)
sbar=$(grep "^ CW " <<<"$scr")
expect_eq "80x24 status bar: whole parts, the interval dropped, an ellipsis says so" "$sbar" \
    " CW <10s lag 2m | SQ <10s | ADM <10s | paused | metrics/day n/a | demo …"
do_line=$(grep "^ do " <<<"$scr")
act=$("$BEDTOP" check --demo-at 13.02 --format json | python3 -c '
import json, sys
r = {x["name"]: x for x in json.load(sys.stdin)["routes"]}["triage"]
print([w["action"] for w in r["warnings"] if w["code"] == "RETRY_LOAD"][0])')
check "the do line ends at a word of the action, in an ellipsis" python3 -c '
import sys
line, act = sys.argv[1], sys.argv[2]
lead = " do CRIT triage RETRY_LOAD: "
assert line.startswith(lead) and line.endswith("\u2026"), line
shown = line[len(lead):-1]
assert act.startswith(shown) and act[len(shown)] == " ", (shown, act)' "$do_line" "$act"
keys $s '?'; wait_for $s "bedtop keys"
help1=$(T capture-pane -p -t $s)
check "? opens on the keys, the legend after them" grep -q "│ Keys (the legend follows them) " <<<"$help1"
check "... the first key on the first page" grep -q "│ q  *back from detail" <<<"$help1"
seen=""
for i in 1 2 3 4 5 6; do seen+=$(T capture-pane -p -t $s); keys $s PageDown; sleep 0.2; done
check "... the status bar whole in the help (the interval the bar dropped)" \
    grep -qE "status now +CW <10s lag 2m \| SQ <10s \| ADM <10s \| paused \|" <<<"$seen"
check "... and its every 60s" grep -qF "every 60s" <<<"$seen"
keys $s Escape; wait_gone $s "bedtop keys"
# the what-if box (w in triage's detail): bedtop plan's text wrapped to the box, its
# hint cut at a word; no line inside the box ends in an ellipsis
keys $s Down Enter; wait_for $s " triage CRIT "
keys $s w; wait_for $s "what if: triage"
box=$(T capture-pane -p -t $s)
check "w at 80x24: the plan's prose wrapped in the box (ceiling: ... wraps, not cut)" \
    grep -qE "│ +to retries: a retry storm \(RETRY_LOAD, 420 retried attempts a +│" <<<"$box"
check "... no line of the box cut in an ellipsis but the hint, at a word" python3 -c '
import re, sys
rows = [l for l in sys.argv[1].splitlines() if re.match(r"^.?│ ", l) and "│" in l[3:]]
cut = [l for l in rows if re.search(r"\u2026 *│", l)]
assert len(cut) == 1 and "tier flex,\u2026" in cut[0], cut' "$box"
keys $s Escape
# e in a detail lists that route's events only (and those of no route)
keys $s e; wait_for $s "events of triage"
ev=$(T capture-pane -p -t $s)
check "e in triage's detail: the title names it" grep -q "events of triage, newest first" <<<"$ev"
check "... and its lines are triage's" python3 -c '
import re, sys
who = set(re.findall(r"│ \d\d:\d\d \w+ +(\S+) ", sys.argv[1]))
assert who and who <= {"triage", "-", "all"}, who' "$ev"
T kill-session -t $s

# Too small, then recovery on resize.
s=small; start $s 40 10 C.UTF-8
check "40x10 shows the too-small screen" wait_for $s "terminal too small:"
golden too-small-40x10 $s
T resize-window -t $s -x 80 -y 24
check "resize to 80x24 recovers" wait_for $s "$HEAD"
golden overview-80x24-CUTF-8 $s
T resize-window -t $s -x 59 -y 24
check "shrinking below 60 columns says so again" wait_for $s "need 60x12"
T kill-session -t $s

# Shrinking repaints every cell: 120x40 -> 80x24 reads exactly as a fresh start at 80x24
# (the text against the fresh-start golden, the attributes against a fresh session).
for lang in C.UTF-8 C; do
    L=${lang//./}
    s=shrink-$L; start $s 120 40 $lang; wait_for $s "$HEAD"
    fresh=fresh-$L; start $fresh 80 24 $lang; wait_for $fresh "$HEAD"
    T resize-window -t $s -x 80 -y 24
    check "resize 120x40 -> 80x24 redraws ($lang)" wait_gone $s " P50 "
    golden overview-80x24-$L $s
    check "resize 120x40 -> 80x24: colors and attributes as a fresh start ($lang)" \
        cmp -s <(T capture-pane -e -p -t $s) <(T capture-pane -e -p -t $fresh)
    T kill-session -t $s; T kill-session -t $fresh
done
# ... in the detail too, scrolled: the same rows at the new size
s=shrinkd; start $s 120 40 C.UTF-8; wait_for $s "$HEAD"
keys $s Down Enter; wait_for $s " triage CRIT "
T resize-window -t $s -x 80 -y 24
check "resize in the detail redraws at 80x24" wait_for $s " 1-19/"
golden detail-triage-80x24-CUTF-8 $s
T kill-session -t $s

# A mantle route's detail: the input and the output quota each have their graph.
s=mantle; start $s 120 40 C.UTF-8; wait_for $s "$HEAD"
keys $s / a g e n t s Enter Enter
check "mantle detail: input tokens against the input quota" \
    wait_for $s "Input tokens/min against the input quota"
check "mantle detail: output tokens against the output quota" \
    wait_for $s "Output tokens/min against the output quota"
golden detail-agents-120x40-CUTF-8 $s
keys $s Escape
keys $s + + + + + + + + +
check "+ at the longest interval says so" wait_for $s "interval 600s is already the longest"
T kill-session -t $s

# The selected row (screen row 2) in one attribute from its first cell to its last:
# its attributes are set once at the start, never changed inside the row.
# Issue 22: the status cells keep their colour on the selected row (reverse video of
# it), so "one attribute" became: every cell of the row is marked selected, by the
# selection's background or by reverse video, from its first cell to its last.
one_attr_row() { T capture-pane -e -p -S 2 -E 2 -t "$1" | python3 -c '
import re, sys
row = sys.stdin.read().rstrip("\n")
state, ok, cells = set(), True, 0
for sgr, text in re.findall(r"((?:\x1b\[[0-9;]*m)*)([^\x1b]*)", row):
    for params in re.findall(r"\x1b\[([0-9;]*)m", sgr):
        ps = params.split(";") if params else ["0"]
        if ps[0] == "0":
            state = set(); ps = ps[1:]
        i = 0
        while i < len(ps):
            if ps[i] in ("38", "48"):
                state = {x for x in state if not x.startswith(ps[i] + ":")}
                state.add(ps[i] + ":" + ";".join(ps[i + 1:i + 3])); i += 3; continue
            if ps[i] == "49":
                state = {x for x in state if not x.startswith("48:")}
            state.add(ps[i]); i += 1
    if text:
        cells += len(text)
        ok &= "7" in state or any(x.startswith("48:") for x in state)
sys.exit(0 if ok and cells >= 60 else 1)'; }
# The ST cell of the selected row in its status colour, reversed (preview: CRIT).
sel_status() { T capture-pane -e -p -S 2 -E 2 -t "$1" | grep -qP '\e\[7m(\e\[[0-9;]*m)*CRIT'; }

# Color: 256 colors by default; none with --no-color or NO_COLOR; same text either way.
s=col; start $s 80 24 C.UTF-8; wait_for $s "$HEAD"
check "color escapes with TERM=xterm-256color" bash -c 'tmux -L "$1" capture-pane -e -p -t "$2" | grep -q "\[38;5;[0-9]*m\|\[48;5;"' _ "$SOCK" $s
check "color: the selected row is marked across its whole width" one_attr_row $s
check "color: ... and its status keeps its colour (CRIT reversed)" sel_status $s
T kill-session -t $s
EXTRA="--no-color"; s=noc; start $s 80 24 C.UTF-8; wait_for $s "$HEAD"
check "--no-color: no color escapes" bash -c '! tmux -L "$1" capture-pane -e -p -t "$2" | grep -q "\[3[0-9];\|\[4[0-9];\|\[3[0-7]m\|\[4[0-7]m\|38;5\|48;5"' _ "$SOCK" $s
check "--no-color: reverse video marks the selection" bash -c 'tmux -L "$1" capture-pane -e -p -t "$2" | grep -q "\[7m\|;7m"' _ "$SOCK" $s
check "--no-color: the selected row is reversed across its whole width" one_attr_row $s
check "--no-color: ... in reverse video" bash -c 'tmux -L "$1" capture-pane -e -p -S 2 -E 2 -t "$2" | grep -qP "^\e\[[0-9;]*7m"' _ "$SOCK" $s
golden overview-80x24-CUTF-8 $s
T kill-session -t $s
EXTRA=""; s=noc2; start $s 80 24 C.UTF-8 NO_COLOR=1; wait_for $s "$HEAD"
check "NO_COLOR: no color escapes" bash -c '! tmux -L "$1" capture-pane -e -p -t "$2" | grep -q "38;5\|48;5\|\[3[0-7]m\|\[4[0-7]m"' _ "$SOCK" $s
T kill-session -t $s

# Theme cycling.
s=theme; start $s 80 24 C.UTF-8; wait_for $s "$HEAD"
keys $s t
check "t switches to the next theme" wait_for $s "theme high-contrast"
T kill-session -t $s

# Idle: frozen demo, nothing changes, so (almost) no CPU: < 5 ticks (50 ms) in 1 s.
s=idle; start $s 80 24 C.UTF-8; wait_for $s "$HEAD"
ppid=$(T display -p -t $s '#{pane_pid}')
pid=$(pgrep -P "${ppid:-1}" | head -1)
pid=${pid:-0}
t0=$(awk '{print $14+$15}' "/proc/$pid/stat" 2>/dev/null || echo 0)
sleep 1
t1=$(awk '{print $14+$15}' "/proc/$pid/stat" 2>/dev/null || echo 999)
check "idle CPU near zero ($((t1 - t0)) ticks in 1 s)" test $((t1 - t0)) -lt 5

# SIGTERM restores the terminal.
kill -TERM "$pid"
check "SIGTERM: program exits (128+15)" wait_for $s "EXITED rc=143"
check "SIGTERM: alternate screen left" test "$(T display -p -t $s '#{alternate_on}')" = 0
check "SIGTERM: cursor visible again" test "$(T display -p -t $s '#{cursor_flag}')" = 1
check "SIGTERM: dashboard gone from the screen" wait_gone $s "$HEAD"
T kill-session -t $s

# SIGINT and SIGHUP (a dropped SSH link) restore it too.
for sig in INT:2 HUP:1; do
    name=${sig%%:*} num=${sig##*:} want=$((128 + ${sig##*:}))
    s=sig$name; start $s 80 24 C.UTF-8; wait_for $s "$HEAD"
    ppid=$(T display -p -t $s '#{pane_pid}')
    pid=$(pgrep -P "${ppid:-1}" | head -1)
    kill -"$name" "${pid:-0}"
    check "SIG$name: program exits (128+$num)" wait_for $s "EXITED rc=$want"
    check "SIG$name: alternate screen left, cursor visible" \
        test "$(T display -p -t $s '#{alternate_on}#{cursor_flag}')" = 01
    T kill-session -t $s
done

# Recording onto a full disk (a file-size limit of 64 blocks: the header, 14 kB with its price rows since format 2.2, fits, the polls do not):
# the status bar says so, the view goes on.
printf 'ulimit -f 64\nexec "%s" --demo-at 16 --record "%s"\n' "$BEDTOP" "$TMP/full.rec" >"$TMP/fullrec.sh"
saved=$TUI_CMD; TUI_CMD="sh $TMP/fullrec.sh"
s=recfull; start $s 200 60 C.UTF-8; wait_for $s "$HEAD"
TUI_CMD=$saved
check "a recording that cannot be written shows REC FAILED" wait_for $s "REC FAILED (lines dropped) $TMP/full.rec"
keys $s Enter
check "... and the dashboard still answers keys" wait_for $s "Tokens/min against the quota"
T kill-session -t $s

# q restores the terminal.
s=quit; start $s 80 24 C; wait_for $s "$HEAD"
keys $s q
check "q: program exits 0" wait_for $s "EXITED rc=0"
check "q: alternate screen left" test "$(T display -p -t $s '#{alternate_on}')" = 0
check "q: cursor visible again" test "$(T display -p -t $s '#{cursor_flag}')" = 1
check "q: dashboard gone from the screen" wait_gone $s "$HEAD"
T kill-session -t $s
finish
