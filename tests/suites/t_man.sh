# The manual pages against the code, so they cannot drift: mandoc lint; options,
# commands, config keys, warning codes and actions, keys, environment variables
# and the recording format as bedtop writes it, each compared with its source.
. "$BEDTOP_SRCDIR/tests/lib.sh"
cd "$BEDTOP_SRCDIR" || exit 2
MAN1=man/bedtop.1 CONF5=man/bedtop.conf.5 REC5=man/bedtop-recording.5

if ! command -v mandoc >/dev/null; then
    # scripts/deps installs it with BEDTOP_TEST_DEPS=1 (make check does)
    skip "mandoc not installed: the manual pages are not checked (BEDTOP_TEST_DEPS=1 scripts/deps)"
    finish
    exit
fi

# A page as text, overstrike removed, one paragraph per line (no wrapping).
render() { mandoc -Tascii -O width=1000 "$1" | sed 's/.\x08//g'; }
# Section $2 (a heading at column 0) of page $1.
section() { render "$1" | awk -v s="$2" '$0 == s { f = 1; next } f && /^[A-Z]/ { exit } f'; }
# Tags of the tag lists in a section: the text at indent 5 up to the body.
tags() { sed -nE 's/^     ([^ ].*)$/\1/p' | sed -E 's/   +.*//'; }
# "a, b, c" -> one name a line
split_names() { sed -E 's/, /\n/g'; }
# in_list NAME FILE: NAME is one of FILE's lines
in_list() { grep -qxF -- "$1" "$2"; }

# ---- lint ----
for p in $MAN1 $CONF5 $REC5; do
    out=$(mandoc -Tlint -W warning "$p" 2>&1)
    rc=$?
    if [ -z "$out" ] && [ "$rc" -eq 0 ]; then ok "$p: mandoc -Tlint -W warning is clean"; else
        notok "$p: mandoc -Tlint -W warning"; echo "$out" | sed 's/^/#   /' | head -10
    fi
done

# ---- bedtop.1: options ----
section $MAN1 OPTIONS | tags | split_names | grep -oE -- '^-[a-zA-Z]|^--[a-z][a-z-]*' | sort -u >"$TMP/man_opts"
"$BEDTOP" --help >"$TMP/help" 2>&1
grep -oE -- '--[a-z][a-z-]*' "$TMP/help" | sort -u >"$TMP/help_long"
# main.c's getopt table, so an option missing from --help is caught too
sed -nE 's/^[[:space:]]*\{\.o = \{\.name = "([a-z][a-z-]*)", \.has_arg = (no|required|optional)_argument.*/--\1/p' main.c | sort -u >"$TMP/src_long"
shorts=$(sed -nE 's/.*getopt_long\(argc, argv, "([^"]*)".*/\1/p' main.c | tr -d ':')
check "main.c's option table was found" test -s "$TMP/src_long" -a -n "$shorts"
check "--help lists options" test "$(wc -l <"$TMP/help_long")" -ge 20
missing=$(comm -23 <(sort -u "$TMP/help_long" "$TMP/src_long") "$TMP/man_opts" | tr '\n' ' ')
expect_eq "every long option of --help and main.c is in bedtop(1) OPTIONS" "$missing" ""
for ((i = 0; i < ${#shorts}; i++)); do echo "-${shorts:i:1}"; done | sort -u >"$TMP/src_short"
missing=$(comm -23 "$TMP/src_short" "$TMP/man_opts" | tr '\n' ' ')
expect_eq "every short option of main.c is in bedtop(1) OPTIONS" "$missing" ""
extra=$(grep -- '^--' "$TMP/man_opts" | comm -23 - "$TMP/src_long" | tr '\n' ' ')
expect_eq "bedtop(1) OPTIONS documents no option main.c lacks" "$extra" ""

# ---- bedtop.1: commands ----
section $MAN1 SYNOPSIS >"$TMP/synopsis"
cmds=$(sed -nE 's/^ +bedtop ([a-z]+) .*/\1/p' "$TMP/help" | sort -u)
check "--help lists the commands" test "$(echo "$cmds" | wc -w)" -ge 4
for c in $cmds; do
    check "SYNOPSIS shows bedtop $c" grep -qE "^ +bedtop $c( |$)" "$TMP/synopsis"
done
for flag in --demo --since --from --duration --at; do
    check "SYNOPSIS shows $flag" grep -qe " \[*$flag" "$TMP/synopsis"
done

# ---- bedtop.1: warning codes, both ways, and the action of each ----
sed -n '/#define BT_WARNINGS/,/^$/p' core/rules.h | grep -oE 'X\([A-Z_]+\)' | sed -E 's/X\((.*)\)/\1/' |
    sort -u >"$TMP/src_codes"
section $MAN1 WARNINGS | sed -nE 's/^     ([A-Z][A-Z_]+) \(.*/\1/p' | sort -u >"$TMP/man_codes"
check "core/rules.h's warning table was found" test "$(wc -l <"$TMP/src_codes")" -ge 10
expect_eq "bedtop(1) WARNINGS lists exactly the codes of BT_WARNINGS" \
    "$(comm -3 "$TMP/src_codes" "$TMP/man_codes" | tr -d '\t' | tr '\n' ' ')" ""
# The action printed under each warning (core/headroom.c's table) is in the page word for word.
section $MAN1 WARNINGS | tr -s ' \n' '  ' >"$TMP/warn_text"
: >"$TMP/actions"
for m in $(seq 0 29); do
    "$BEDTOP" check --demo --demo-at "$m" --no-color 2>/dev/null |
        awk '/^[a-z]+ +[^ ]+: [A-Z_]+$/ { code = $NF } /^ +-> / { sub(/^ +-> /, ""); print code "\t" $0 }'
done | sort -u >"$TMP/actions"
covered=$(cut -f1 "$TMP/actions" | sort -u | comm -12 - "$TMP/src_codes" | wc -l)
expect_eq "the demo timeline shows the action of every warning code" "$covered" "$(wc -l <"$TMP/src_codes")"
bad=0
while IFS=$'\t' read -r code action; do
    a=$(printf '%s' "$action" | tr -s ' ' ' ')
    grep -qF -- "$a" "$TMP/warn_text" || { bad=$((bad + 1)); echo "# $code: action not in bedtop(1): $a"; }
done <"$TMP/actions"
expect_eq "every action bedtop prints is in bedtop(1) WARNINGS" "$bad" 0
# Codes bedtop check reports (JSON) are all documented.
"$BEDTOP" check --demo --demo-at 16 --format json 2>/dev/null | grep -oE '"code":[[:space:]]*"[A-Z_]+"' |
    grep -oE '[A-Z_]{4,}' | sort -u >"$TMP/json_codes"
check "check --format json reports warning codes" test -s "$TMP/json_codes"
expect_eq "every code in check --format json is in bedtop(1)" \
    "$(comm -23 "$TMP/json_codes" "$TMP/man_codes" | tr '\n' ' ')" ""

# ---- bedtop.1: keys of tui/keys.c ----
if [ -f tui/keys.c ]; then
    sed -nE 's/^[[:space:]]*\{[^"]*, "([^"]+)", ".*/\1/p' tui/keys.c | sort -u >"$TMP/src_keys"
    section $MAN1 KEYS >"$TMP/keys_sec"
    tags <"$TMP/keys_sec" | grep -v ':$' | split_names | sort -u >"$TMP/man_keys"
    # the dashboard's list only: from its heading to the next paragraph ending in ':'
    awk '/^     In the dashboard/ { f = 1; next } f && /^     [^ ].*:$/ { exit } f' "$TMP/keys_sec" |
        tags | split_names | sort -u >"$TMP/man_dash_keys"
    check "tui/keys.c's key table was found" test "$(wc -l <"$TMP/src_keys")" -ge 10
    expect_eq "every key of tui/keys.c is in bedtop(1) KEYS" \
        "$(comm -23 "$TMP/src_keys" "$TMP/man_keys" | tr '\n' ' ')" ""
    expect_eq "bedtop(1) lists no dashboard key that tui/keys.c lacks" \
        "$(comm -13 "$TMP/src_keys" "$TMP/man_dash_keys" | tr '\n' ' ')" ""
    # replay's own keys, once the key table has them
    if grep -q 'CTX_REPLAY' tui/keys.h tui/keys.c; then
        awk '/^     In replay/ { f = 1; next } f && /^     [^ ].*:$/ { exit } f' "$TMP/keys_sec" |
            tags | split_names | sort -u >"$TMP/man_replay_keys"
        expect_eq "bedtop(1) lists no replay key that tui/keys.c lacks" \
            "$(comm -13 "$TMP/src_keys" "$TMP/man_replay_keys" | tr '\n' ' ')" ""
    fi
else
    notok "tui/keys.c is missing: the KEYS section cannot be checked"
fi

# ---- bedtop.1: environment ----
{
    grep -ohE 'getenv\("[A-Z_][A-Z0-9_]*"\)' main.c app/*.c core/*.c collectors/*.c tui/*.c 2>/dev/null | sed -E 's/getenv\("(.*)"\)/\1/'
    grep -ohE '"AWS_[A-Z0-9_]+"' aws/*.c | tr -d '"'
} | sort -u >"$TMP/src_env"
section $MAN1 ENVIRONMENT >"$TMP/env_sec"
check "environment variables were found in the sources" test "$(wc -l <"$TMP/src_env")" -ge 15
missing=""
while read -r v; do grep -qw -- "$v" "$TMP/env_sec" || missing="$missing $v"; done <"$TMP/src_env"
expect_eq "every environment variable the code reads is in bedtop(1) ENVIRONMENT" "$missing" ""

# ---- bedtop.conf.5: keys, both ways, per section ----
keys_of() { # keys compared with k in function $1 of core/config_ini.c
    awk -v fn="$1" '$0 ~ "^static (bool|int) " fn "\\(" && !/;$/ { f = 1 } f { print } f && /^}/ { exit }' core/config_ini.c |
        grep -oE 'strcmp\(k, "[a-z_]+"\)' | sed -E 's/.*"(.*)".*/\1/' | sort -u
}
conf_keys() { section $CONF5 "$1" | sed -nE 's/^     ([a-z_]+) = .*/\1/p' | sort -u; }
{ keys_of global_key; keys_of spend_global_key; } | sort -u >"$TMP/src_global"
{ keys_of route_key; keys_of spend_route_key; } | sort -u >"$TMP/src_route"
conf_keys "THE [bedtop] SECTION" >"$TMP/man_global"
conf_keys "THE [route NAME] SECTION" >"$TMP/man_route"
check "core/config_ini.c's [bedtop] keys were found" test "$(wc -l <"$TMP/src_global")" -ge 10
check "core/config_ini.c's [route] keys were found" test "$(wc -l <"$TMP/src_route")" -ge 10
expect_eq "bedtop.conf(5) [bedtop] lists exactly the keys core/config_ini.c accepts" \
    "$(comm -3 "$TMP/src_global" "$TMP/man_global" | tr -d '\t' | tr '\n' ' ')" ""
expect_eq "bedtop.conf(5) [route NAME] lists exactly the keys core/config_ini.c accepts" \
    "$(comm -3 "$TMP/src_route" "$TMP/man_route" | tr -d '\t' | tr '\n' ' ')" ""
# every section name the parser knows is described
for s in "THE [bedtop] SECTION" "THE [route NAME] SECTION" "THE [burndown] SECTION"; do
    check "bedtop.conf(5) has $s" grep -qxF -- "$s" <(render $CONF5)
done
# the example is a working configuration (the demo loads a config for its thresholds)
render $CONF5 | awk '/^EXAMPLES/ { f = 1; next } f && /^[A-Z]/ { exit } f' | sed 's/^     //' >"$TMP/example.conf"
check "bedtop.conf(5) EXAMPLES has a [route] section" grep -q '^\[route ' "$TMP/example.conf"
"$BEDTOP" check --demo -c "$TMP/example.conf" >/dev/null 2>"$TMP/example.err"
rc=$?
check "bedtop.conf(5) EXAMPLES parses (exit $rc, not 3)" test "$rc" -ne 3 -a ! -s "$TMP/example.err"
sed 's/^/#   /' "$TMP/example.err"
# the shipped burndown table is quoted as it is
grep -E '^[^#[:space:]]' data/burndown.conf | tr -s ' ' >"$TMP/bd_src"
section $CONF5 "THE [burndown] SECTION" | sed -nE 's/^ +([a-z*][^ ]* += [0-9.]+( +endpoint=[a-z]+)?( +family)?)$/\1/p' | tr -s ' ' >"$TMP/bd_man"
expect_eq "bedtop.conf(5) quotes data/burndown.conf" "$(cat "$TMP/bd_man")" "$(cat "$TMP/bd_src")"
# the PromQL queries are the ones bedtop sends (collectors/admission.h keeps the list)
sed -nE 's/^ \*   ((sum|max) by .*|histogram_quantile.*)$/\1/p' collectors/admission.h >"$TMP/q_src"
section $CONF5 "ADMISSION COUNTERS" | sed -nE 's/^ +((sum|max) by .*|histogram_quantile.*)$/\1/p' >"$TMP/q_man"
check "collectors/admission.h lists the queries" test "$(wc -l <"$TMP/q_src")" -ge 10
expect_eq "bedtop.conf(5) gives the Prometheus queries of collectors/admission.h" \
    "$(cat "$TMP/q_man")" "$(cat "$TMP/q_src")"

# ---- bedtop-recording.5 against a recording bedtop writes ----
"$BEDTOP" record "$TMP/rec.jsonl" --demo --duration 3m --demo-speed max >/dev/null 2>&1
check "a demo recording was written" test -s "$TMP/rec.jsonl"
expect_eq "recordings are created 0600, as bedtop-recording(5) says" "$(stat -c %a "$TMP/rec.jsonl")" 600
check "bedtop-recording(5) says 0600" grep -q 'mode 0600' <(render $REC5)
python3 - "$TMP/rec.jsonl" >"$TMP/rec_names" <<'EOF'
import json, sys
lines = open(sys.argv[1]).read().splitlines()
h = json.loads(lines[0])
print("header", *h.keys())
print("signals", *h["signals"])
print("config", *h["config"].keys())
print("route", *sorted({k for r in h["routes"] for k in r}))
print("version", h["version"])
poll, ev, types = set(), set(), set()
for l in lines[1:]:
    o = json.loads(l)
    poll |= o.keys()
    for e in o["e"]:
        ev |= e.keys()
        types.add(e["type"])
print("poll", *sorted(poll))
print("event", *sorted(ev))
print("type", *sorted(types))
EOF
render $REC5 >"$TMP/rec_man"
words() { grep "^$1 " "$TMP/rec_names" | cut -d' ' -f2-; }
for part in header signals config route poll event type; do
    missing=""
    for w in $(words $part); do grep -qw -- "$w" "$TMP/rec_man" || missing="$missing $w"; done
    check "the recording has $part names" test -n "$(words $part)"
    expect_eq "bedtop-recording(5) names every $part member bedtop writes" "$missing" ""
done
v=$(words version)
check "bedtop-recording(5) gives the current version $v" grep -qF "\"$v\"" "$TMP/rec_man"
expect_eq "the version is core/recording.h's" "$v" \
    "$(sed -nE 's/^#define BT_REC_MAJOR ([0-9]+)/\1/p' core/recording.h).$(sed -nE 's/^#define BT_REC_MINOR ([0-9]+)/\1/p' core/recording.h)"
# the quota kinds and sources written are the ones listed
missing=""
for w in $(sed -nE 's/.*names\[\] = \{(.*)\};/\1/p' core/names.c | grep -oE '"[a-z_-]+"' | tr -d '"' | sort -u); do
    grep -qw -- "$w" "$TMP/rec_man" || missing="$missing $w"
done
expect_eq "bedtop-recording(5) names every source, quota source and quota kind of core/names.c" "$missing" ""

# The reading rules bedtop-recording(5) states, on variants of that recording.
R=$TMP/rec.jsonl
replay_at() { "$BEDTOP" replay "$1" --at +2m >"$TMP/ra.out" 2>"$TMP/ra.err"; echo $? >"$TMP/ra.rc"; }
sed '1s/"version":"[0-9.]*"/"version":"2.9","member_from_2_9":{"x":1}/' "$R" >"$TMP/v19.jsonl"
replay_at "$TMP/v19.jsonl"
check "a newer minor version with unknown header members is read silently" \
    test -s "$TMP/ra.out" -a ! -s "$TMP/ra.err"
sed '1s/"version":"[0-9.]*"/"version":"3.0"/' "$R" >"$TMP/v20.jsonl"
replay_at "$TMP/v20.jsonl"
expect_eq "a newer major version is refused (exit 3, 'upgrade bedtop')" \
    "$(cat "$TMP/ra.rc") $(grep -c 'upgrade bedtop' "$TMP/ra.err")" "3 1"
python3 - "$R" "$TMP" <<'PY'
import json, sys
L = open(sys.argv[1]).read().splitlines()
o = json.loads(L[2]); o["member_from_1_9"] = [1, 2]
open(sys.argv[2] + "/extra.jsonl", "w").write("\n".join(L[:2] + [json.dumps(o)] + L[3:]) + "\n")
o = json.loads(L[2]); o["s"][0][3].append(5)
open(sys.argv[2] + "/odd.jsonl", "w").write("\n".join(L[:2] + [json.dumps(o)] + L[3:]) + "\n")
PY
replay_at "$TMP/extra.jsonl"
check "unknown poll-line members are ignored" test -s "$TMP/ra.out" -a ! -s "$TMP/ra.err"
replay_at "$TMP/odd.jsonl"
check "a sample group with an odd pair list skips its line with FILE:LINE" \
    grep -q "odd.jsonl:3: .*line skipped" "$TMP/ra.err"
head -c -20 "$R" >"$TMP/trunc.jsonl"
replay_at "$TMP/trunc.jsonl"
check "a truncated last line is skipped with a warning" grep -q "truncated last line.*line skipped" "$TMP/ra.err"

# ---- README.md: the make targets it names exist ----
if [ -f README.md ]; then
    grep -oE '(^|[`( ])make [a-z][a-z-]*' README.md | sed -E 's/.*make //' | sort -u >"$TMP/readme_targets"
    check "README.md names make targets" test -s "$TMP/readme_targets"
    missing=""
    while read -r t; do grep -qE "^$t:" Makefile || missing="$missing $t"; done <"$TMP/readme_targets"
    expect_eq "every make target README.md names exists in the Makefile" "$missing" ""
    expect_eq "README.md's quick start is make demo, then make check" \
        "$(grep -A1 '^make demo ' README.md | sed -E 's/ +#.*//' | tr '\n' ' ')" "make demo make check "
fi

# The examples never point admission at serve's own port (issue 34): a dashboard beside
# `bedtop serve` would read bedtop's /metrics as the application's admission counters.
serve_port=$("$BEDTOP" serve --help 2>&1 | sed -n 's/.*--listen.*default 127\.0\.0\.1:\([0-9]*\)).*/\1/p' | head -1)
expect_eq "serve's default port, from its --help" "$serve_port" 9464
clash=$(grep -nE "^[[:space:]]*(admission[[:space:]]*=|bedtop( [a-z]+)? --admission)[^;]*:$serve_port/" \
    "$BEDTOP_SRCDIR"/examples/*.conf "$BEDTOP_SRCDIR"/examples/README.md "$BEDTOP_SRCDIR"/README.md \
    "$BEDTOP_SRCDIR"/man/bedtop.conf.5 "$BEDTOP_SRCDIR"/docs/*.md 2>/dev/null)
expect_eq "no example admission URL on serve's port $serve_port" "$clash" ""
finish
