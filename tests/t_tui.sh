#!/usr/bin/env bash
# Terminal tests (tmux's habit): the dashboard on the demo, frozen at simulated
# minute 16, in a private tmux server at fixed sizes; keys driven with send-keys,
# screens captured with capture-pane -p and compared with tests/term/golden/*.txt
# (helpers in tests/termlib.sh). UPDATE_GOLDEN=1 rewrites the goldens.
# TUI_CMD overrides the program (default: the real binary, `bedtop --demo-at 16`).
. "$BEDTOP_SRCDIR/tests/lib.sh"
TUI_CMD=${TUI_CMD:-"$BEDTOP --demo-at 16"}
. "$BEDTOP_SRCDIR/tests/termlib.sh"
EXTRA=""
HEAD="ROUTE "     # the table heading: the dashboard is up

# Overview at every size, UTF-8 and ASCII.
for size in 80x24 120x40 200x60; do
    w=${size%x*} h=${size#*x}
    for lang in C.UTF-8 C; do
        s=ov-$size-$lang; s=${s//./}
        start "$s" "$w" "$h" "$lang"
        check "overview $size LANG=$lang comes up" wait_for "$s" "$HEAD"
        golden "overview-$size-${lang//./}" "$s"
        T kill-session -t "$s"
    done
done

# The story is where an engineer looks (80x24): banner, worst routes first, warnings pane.
s=story; start $s 80 24 C.UTF-8; wait_for $s "$HEAD"
scr=$(T capture-pane -p -t $s)
check "banner names the estimate-only route and why" \
    grep -q "^ ESTIMATE ONLY legacy: EstimatedTPMQuotaUsage misses max_tokens reservations" <<<"$scr"
row3=$(sed -n 4p <<<"$scr"); row4=$(sed -n 5p <<<"$scr")
check "worst route first (triage, crit in its retry storm, 43.6% of a shared quota left)" \
    grep -q "^triage *CRIT *43.6" <<<"$row3"
check "then preview, whose applied quota is 0" grep -q "^preview *CRIT *- *no quota" <<<"$row4"
check "summarize (max_tokens 64,000, ~0.25 calls in flight) is a warning, not critical" \
    grep -q "^summarize *WARN *90.2" <<<"$scr"
check "warnings pane lists the retry storm" grep -q "CRIT triage *RETRY_LOAD" <<<"$scr"
check "status bar: freshness, lag, paused, cost, mode" \
    grep -q "CW 30s lag 2m .* paused .* metrics/day | demo" <<<"$scr"

# Enter: route detail of the selected route (triage, the first).
keys $s Enter
check "Enter opens the route detail" wait_for $s "Warnings for triage"
T kill-session -t $s
for spec in "120x40 C.UTF-8" "80x24 C" "200x60 C.UTF-8"; do
    set -- $spec; w=${1%x*} h=${1#*x}; lang=$2
    s=det-$1-${lang//./}; start "$s" "$w" "$h" "$lang"; wait_for "$s" "$HEAD"
    keys "$s" Enter
    check "detail $1 LANG=$lang" wait_for "$s" "Warnings for triage"
    golden "detail-triage-$1-${lang//./}" "$s"
    if [ "$1" = 120x40 ]; then
        check "operating point marks where concurrency stopped paying" \
            wait_for "$s" "flat beyond 18 in flight"
        keys "$s" Escape
        check "Esc backs out to the overview" wait_for "$s" "$HEAD"
    fi
    T kill-session -t "$s"
done

# Help overlay from the key table; Esc closes it.
s=help; start $s 80 24 C.UTF-8; wait_for $s "$HEAD"
keys $s '?'
check "? opens the help" wait_for $s "bedtop keys"
golden help-80x24-CUTF-8 $s
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
row=$(T capture-pane -p -t $s | sed -n 4p)
check "sorted by used: agents (12.32M) first" grep -q "^agents " <<<"$row"
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

# Color: 256 colors by default; none with --no-color or NO_COLOR; same text either way.
s=col; start $s 80 24 C.UTF-8; wait_for $s "$HEAD"
check "color escapes with TERM=xterm-256color" bash -c 'tmux -L "$1" capture-pane -e -p -t "$2" | grep -q "\[38;5;[0-9]*m\|\[48;5;"' _ "$SOCK" $s
T kill-session -t $s
EXTRA="--no-color"; s=noc; start $s 80 24 C.UTF-8; wait_for $s "$HEAD"
check "--no-color: no color escapes" bash -c '! tmux -L "$1" capture-pane -e -p -t "$2" | grep -q "\[3[0-9];\|\[4[0-9];\|\[3[0-7]m\|\[4[0-7]m\|38;5\|48;5"' _ "$SOCK" $s
check "--no-color: reverse video marks the selection" bash -c 'tmux -L "$1" capture-pane -e -p -t "$2" | grep -q "\[7m\|;7m"' _ "$SOCK" $s
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

# Recording onto a full disk (a file-size limit): the status bar says so, the view goes on.
printf 'ulimit -f 8\nexec "%s" --demo-at 16 --record "%s"\n' "$BEDTOP" "$TMP/full.rec" >"$TMP/fullrec.sh"
saved=$TUI_CMD; TUI_CMD="sh $TMP/fullrec.sh"
s=recfull; start $s 200 60 C.UTF-8; wait_for $s "$HEAD"
TUI_CMD=$saved
check "a recording that cannot be written shows REC FAILED" wait_for $s "REC FAILED (lines dropped) $TMP/full.rec"
keys $s Enter
check "... and the dashboard still answers keys" wait_for $s "Warnings for"
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
