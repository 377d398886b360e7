#!/usr/bin/env bash
# The detail view's `w` in a real terminal (tmux): the what-if overlay shows bedtop
# plan's answer for the selected route, a change typed at its prompt is applied, a
# word that is not a change is refused in place, Esc closes it.
. "$BEDTOP_SRCDIR/tests/lib.sh"
. "$BEDTOP_SRCDIR/tests/termlib.sh"
TUI_CMD="$BEDTOP --demo-at 12" EXTRA=""
screen() { T capture-pane -p -t "$1"; }
s=plan; start $s 100 45 C.UTF-8; wait_for $s "bedtop  demo"
keys $s / s u m m a r i z e Enter; keys $s Enter
check "detail of summarize" wait_for $s "summarize WARN"
keys $s w
check "w opens the what-if overlay" wait_for $s "what if: summarize (Enter applies"
check "... with the limits to set" wait_for $s "limits to set at the admission boundary:"
check "... and output tokens per second over the last hour" wait_for $s "output tok/s "
keys $s "max_tokens 768" Enter
check "a change typed at the prompt is applied" wait_for $s "after the change"
check "... with the peak minute's verdict" wait_for $s "would still throttle at the peak minute: no"
expect_eq "... the same reservation per call as bedtop plan's" \
    "$(screen $s | grep -o 'reservation per call *[^ ]* *[^ │]*' | tr -s ' ')" "reservation per call 66k 2.8k"
keys $s x Enter
check "a word that is not a change is refused in place" wait_for $s "max_tokens: '768x' is not a value for it"
keys $s Escape
check "Esc closes the overlay" wait_gone $s "what if: summarize"
keys $s '?'
wait_for $s "bedtop keys"
# the help opens on the keys (the legend after them): w is on its first pages
seen=""
for i in 1 2 3; do seen+=$(tmux -L "$SOCK" capture-pane -p -t $s); keys $s NPage; sleep 0.2; done
check "the help lists w" grep -qF "detail: what-if and the limits to set (bedtop plan)" <<<"$seen"
T kill-session -t $s

# The forecast beside headroom in the detail: workers' calls ramp from minute 17.
TUI_CMD="$BEDTOP --demo-at 26"
s=trend; start $s 100 45 C.UTF-8; wait_for $s "bedtop  demo"
keys $s / w o r k e r s Enter; keys $s Enter
wait_for $s "workers WARN"
for i in 1 2 3 4; do keys $s NPage; sleep 0.2; done
check "detail of workers shows the forecast beside headroom" wait_for $s "tpm reaches its quota in about"
finish
