#!/usr/bin/env bash
# `bedtop CMD --help` and `bedtop help CMD` (as `kubectl CMD --help` and `aws CMD help`):
# the command's synopsis and exactly the options parse_args takes for it, so the help and
# the parser cannot drift. What parse_args takes is asked of parse_args itself: an option
# the command does not take is refused before --help is answered ("--wide does not apply
# to serve"), one it takes lets the help through. `bedtop help nosuch` fails as an unknown
# command does (exit 3, the usage error of every command line mistake).
. "$BEDTOP_SRCDIR/tests/lib.sh"
cd "$TMP" || exit 2

# the options column of a help: "  -c, --config FILE   text" and "      --from T, --to T  text"
opt_names() { grep -E '^  (-[a-zA-Z], |    )--' | cut -c1-27 | grep -oE -- '--[a-z][a-z-]*' | sort -u; }

"$BEDTOP" --help >"$TMP/global" 2>&1
cmds=$(sed -nE 's/^ +bedtop ([a-z]+) .*/\1/p' "$TMP/global" | grep -vx help | sort -u)
check "bedtop --help names the help command" grep -qE '^ +bedtop help \[COMMAND\] ' "$TMP/global"
opt_names <"$TMP/global" >"$TMP/all"
check "bedtop --help names the commands" test "$(echo "$cmds" | wc -w)" -ge 7
check "bedtop --help lists the options" test "$(wc -l <"$TMP/all")" -ge 30
# the options that take a value, with one every parser check accepts
takes_value() { grep -E '^  (-[a-zA-Z], |    )--' "$TMP/global" | cut -c1-27 | grep -qE -- "--$1 [A-Zx]"; }
value() {
    case $1 in
    region) echo us-east-1 ;; interval) echo 60 ;; duration) echo 1m ;; demo-speed) echo 1 ;;
    demo-at) echo 1 ;; unknown-as) echo warn ;; output) echo out.txt ;; *) echo x ;;
    esac
}

for c in $cmds; do
    "$BEDTOP" "$c" --help >"$TMP/$c.help" 2>"$TMP/$c.err"
    rc=$?
    expect_eq "bedtop $c --help exits 0 and prints nothing on stderr" "$rc $(cat "$TMP/$c.err")" "0 "
    check "bedtop $c --help starts with its synopsis" grep -q "^usage: bedtop $c" "$TMP/$c.help"
    check "... and is not the global help" test "$(grep -c '^ *bedtop [a-z]' "$TMP/$c.help")" -le 2
    opt_names <"$TMP/$c.help" >"$TMP/$c.listed"
    : >"$TMP/$c.takes"
    bad=''
    while read -r o; do
        n=${o#--}
        if takes_value "$n"; then set -- "$o" "$(value "$n")"; else set -- "$o"; fi
        # --help first: an option read wrongly is an error, never a command that runs
        timeout 20 "$BEDTOP" --help "$c" "$@" >/dev/null 2>"$TMP/probe.err"
        r=$?
        if [ "$r" -eq 0 ]; then
            echo "$o" >>"$TMP/$c.takes"
        elif [ "$r" -ne 3 ] || ! grep -q "^bedtop: $o does not apply to $c; it is for " "$TMP/probe.err"; then
            bad="$bad $o(exit $r: $(head -1 "$TMP/probe.err"))"
        fi
    done <"$TMP/all"
    expect_eq "bedtop $c: every option is taken or refused as not applying" "$bad" ""
    expect_eq "bedtop $c --help lists exactly the options parse_args takes for $c" \
        "$(comm -3 "$TMP/$c.listed" "$TMP/$c.takes" | tr -d '\t' | tr '\n' ' ')" ""
    "$BEDTOP" help "$c" >"$TMP/$c.help2" 2>&1
    check "bedtop help $c is bedtop $c --help" cmp -s "$TMP/$c.help" "$TMP/$c.help2"
done

# the lists differ where the commands do: serve listens, check does not; plan's what-ifs
check "serve --help lists --listen" grep -q -- '--listen ADDR:PORT' "$TMP/serve.help"
check "check --help does not" test "$(grep -c -- '--listen' "$TMP/check.help")" -eq 0
check "plan --help lists --max-tokens" grep -q -- '--max-tokens N' "$TMP/plan.help"
check "report --help shows both documents" grep -q "bedtop report incident FILE" "$TMP/report.help"
# option lines are the global help's, word for word (one entry, two helps)
missing=$(grep -E '^  (-[a-zA-Z], |    )--' "$TMP/check.help" | grep -vxF -f "$TMP/global" | head -3)
expect_eq "check --help's option lines are those of bedtop --help" "$missing" ""

"$BEDTOP" help >"$TMP/help0" 2>&1
check "bedtop help alone is bedtop --help" cmp -s "$TMP/global" "$TMP/help0"
expect_rc "bedtop help nosuch fails as a usage error" 3 "$BEDTOP" help nosuch
check "... naming the command and the ones there are" \
    grep -q "^bedtop: help: unknown command 'nosuch'; commands are check, plan, record, replay, export, serve, report" "$TMP/last.err"
check "... and printing no help" test ! -s "$TMP/last.out"
expect_rc "bedtop help check extra is an unexpected argument" 3 "$BEDTOP" help check extra
expect_rc "an option the command does not take is refused before --help" 3 "$BEDTOP" serve --wide --help
check "... in one line naming both" grep -q "^bedtop: --wide does not apply to serve; it is for check, replay" "$TMP/last.err"
finish
