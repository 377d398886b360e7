# Terminal-test helpers (tmux's habit), sourced by tests/suites/t_tui.sh and
# tests/suites/t_replay_tui.sh after tests/lib.sh: a private tmux server, programs
# started at a fixed size, keys sent with send-keys, screens captured with
# capture-pane -p and compared with tests/term/golden/NAME.txt.
# UPDATE_GOLDEN=1 rewrites the goldens (then read them before committing).
SRC=$BEDTOP_SRCDIR
GOLD=$SRC/tests/term/golden
if ! command -v tmux >/dev/null; then
    echo "# tmux not installed"; notok "tmux available"; finish; exit
fi
# Themes from the source tree through the user theme dir (also isolates the user's own).
mkdir -p "$TMP/xdg/bedtop"
ln -s "$SRC/themes" "$TMP/xdg/bedtop/themes"
SOCK=bedtop-test-$$
T() { tmux -L "$SOCK" "$@"; }
CLEANUP+=("tmux -L $SOCK kill-server")
# a session that lives all along: the server exits with its last session otherwise
# (an hour: a suite on a loaded machine outlived 300 s; the cleanup kills the server)
T -f /dev/null -u new-session -d -s keep -x 80 -y 24 "sleep 3600"

# start NAME W H LANG [env assignments] : $TUI_CMD $EXTRA in a new session; after it
# exits the pane shows "EXITED rc=N" on the normal screen
start() {
    local name=$1 w=$2 h=$3 lang=$4; shift 4
    T -f /dev/null -u new-session -d -s "$name" -x "$w" -y "$h" \
        "env TERM=xterm-256color LANG=$lang LC_ALL= XDG_CONFIG_HOME=$TMP/xdg BEDTOP_DATADIR=$SRC/data $* $TUI_CMD $EXTRA; echo EXITED rc=\$?; sleep 60"
}
# wait_for NAME TEXT [TRIES] : polls the screen until TEXT shows (TRIES x 50 ms, ~5 s)
wait_for() {
    local i
    for i in $(seq 1 "${3:-100}"); do
        T capture-pane -p -t "$1" 2>/dev/null | grep -qF -- "$2" && return 0
        sleep 0.05
    done
    return 1
}
# wait_for_long NAME TEXT : the same for up to ~30 s (a demo running at high speed)
wait_for_long() { wait_for "$1" "$2" 600; }
wait_gone() {
    local i
    for i in $(seq 1 100); do
        T capture-pane -p -t "$1" 2>/dev/null | grep -qF -- "$2" || return 0
        sleep 0.05
    done
    return 1
}
# shot_compare FILTER WHAT NAME SESSION : the screen through FILTER against
# tests/term/golden/NAME.txt
shot_compare() {
    local filter=$1 what=$2 i; shift 2
    # the screen may still be settling after a key: compare for up to ~2 s
    for i in $(seq 1 40); do
        T capture-pane -p -t "$2" | $filter >"$TMP/$1.txt"
        [ -n "${UPDATE_GOLDEN:-}" ] && break
        cmp -s "$GOLD/$1.txt" "$TMP/$1.txt" && break
        sleep 0.05
    done
    if [ -n "${UPDATE_GOLDEN:-}" ]; then
        cp "$TMP/$1.txt" "$GOLD/$1.txt"; ok "$what $1 (updated)"; return
    fi
    if diff -u "$GOLD/$1.txt" "$TMP/$1.txt" >"$TMP/$1.diff" 2>&1; then ok "$what $1"; else
        notok "$what $1"; head -40 "$TMP/$1.diff" | sed 's/^/#   /'
    fi
}
# golden_value NAME SESSION : the screen as it is against tests/term/golden/NAME.txt
golden_value() { shot_compare cat golden "$@"; }
keys() { T send-keys -t "$1" "${@:2}"; }

# Layout goldens and value goldens. A value golden (golden_value NAME SESSION) is the
# screen as it is, every number checked. A layout golden (golden_layout NAME SESSION) is
# the screen through mask_layout: what is where (headings, columns in order, panes, rows, axes,
# key lines) without the demo's figures, so a change to the demo's story rewrites only
# the few value goldens. The mask, line by line:
#   - a graph's plot rows keep their axis and label and lose what is plotted;
#   - a run of bar or sparkline cells (▒ UTF-8, or # : . _ in ASCII) becomes [bar];
#   - a number (a run of digits, with . , : inside and a k/M/G suffix) becomes #, but
#     not one inside a name (us-east-1, opus48, P99, F10);
#   - padding becomes one space: a figure's width moves no column.
mask_layout() {
    python3 -c '
import re, sys
axis = re.compile(r"^( {0,7}[^ ]* ?)([┤│+|])(.*)$")
bars = re.compile(r"[█▓▒░·▁▂▃▄▅▆▇■◉●○×◇✕□◆•┄]{3,}|(?<![A-Za-z])[#:._=*]{6,}")
num = re.compile(r"(?<![A-Za-z_\d])(?<![A-Za-z]-)\d+(?:[.,:]\d+)*[kMG]?")
for line in sys.stdin.read().splitlines():
    m = axis.match(line)
    if m and len(m.group(1)) <= 8 and re.fullmatch(r" *[0-9.kMGs%/]* ?", m.group(1)):
        line = m.group(1) + m.group(2)
    line = bars.sub("[bar]", line)
    line = num.sub("#", line)
    line = re.sub(r" +", " ", line).rstrip()
    print(line)'
}
golden_layout() { shot_compare mask_layout "layout golden" "$@"; }
# golden NAME SESSION : a suite that sets LAYOUT_GOLDENS=1 names its value goldens in
# VALUE_GOLDENS (a list of names) and every other golden of it is a layout golden; a
# suite that does not set it compares every screen whole.
golden() {
    if [ -z "${LAYOUT_GOLDENS:-}" ] || [[ " ${VALUE_GOLDENS:-} " == *" $1 "* ]]; then
        golden_value "$@"
    else
        golden_layout "$@"
    fi
}
