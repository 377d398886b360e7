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
T -f /dev/null -u new-session -d -s keep -x 80 -y 24 "sleep 300"

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
# golden NAME SESSION : compares the screen with tests/term/golden/NAME.txt
golden() {
    # the screen may still be settling after a key: compare for up to ~2 s
    local i
    for i in $(seq 1 40); do
        T capture-pane -p -t "$2" >"$TMP/$1.txt"
        [ -n "${UPDATE_GOLDEN:-}" ] && break
        cmp -s "$GOLD/$1.txt" "$TMP/$1.txt" && break
        sleep 0.05
    done
    if [ -n "${UPDATE_GOLDEN:-}" ]; then
        cp "$TMP/$1.txt" "$GOLD/$1.txt"; ok "golden $1 (updated)"; return
    fi
    if diff -u "$GOLD/$1.txt" "$TMP/$1.txt" >"$TMP/$1.diff" 2>&1; then ok "golden $1"; else
        notok "golden $1"; head -40 "$TMP/$1.diff" | sed 's/^/#   /'
    fi
}
keys() { T send-keys -t "$1" "${@:2}"; }
