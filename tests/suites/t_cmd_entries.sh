#!/usr/bin/env bash
# Commands as entries (issue 33): main.c reads every option by its row of the option
# table (how its value is read and checked, its help), each command's entry beside its
# app/cmd_*.c says which options it takes and where each value goes in its own options
# struct. The helps are those 1d9533e printed (tests/data/help/) with one section more:
# each command's AWS permissions, from its entry (when it asks AWS) and the collectors'
# own action lists; `bedtop help policy` is the IAM policy of them all. A refused value
# says what it said, and a value of each kind (text, flag, number, repeatable, the
# demo-at that is also --demo, the report's word) reaches the command that takes it.
. "$BEDTOP_SRCDIR/tests/lib.sh"
cd "$TMP" || exit 2
H=$BEDTOP_SRCDIR/tests/data/help

# ---- the helps, generated from the table and the entries, byte for byte
"$BEDTOP" --help >global.txt 2>&1
check "bedtop --help is the committed one" cmp -s global.txt "$H/global.txt"
for c in check record replay export serve report plan; do
    "$BEDTOP" "$c" --help >"$c.txt" 2>&1
    check "bedtop $c --help is the committed one" cmp -s "$c.txt" "$H/$c.txt"
    "$BEDTOP" help "$c" >"$c.2.txt" 2>&1
    check "bedtop help $c is the same" cmp -s "$c.2.txt" "$H/$c.txt"
done

# ---- permissions: each command's, and the policy of them all
"$BEDTOP" help policy >policy.json 2>policy.err
expect_rc "bedtop help policy exits 0" 0 "$BEDTOP" help policy
actions=$(python3 -c "
import json, sys
d = json.load(open(sys.argv[1]))
st = d['Statement']
assert d['Version'] == '2012-10-17' and len(st) == 1 and st[0]['Effect'] == 'Allow' and st[0]['Resource'] == '*'
a = st[0]['Action']
assert a == sorted(set(a)), 'sorted, each once'
print(' '.join(a))" policy.json 2>&1)
# README's "It only reads. The identity needs:" list, worked by hand from the collectors:
# CloudWatch 2, Service Quotas 2 (+ GetInferenceProfile), the catalogue 2, tags 1,
# pricing 1, the credential chain's AssumeRole: 10 actions
readme=$(sed -n '/^It only reads. The identity needs:/,/^$/p;/^It only reads/,/^GetMetricData is billed/p' \
    "$BEDTOP_SRCDIR/README.md" | grep -oE '`[a-z]+:[A-Za-z]+`' | tr -d '`' | sort -u | paste -sd' ')
expect_eq "help policy: valid, one read-only statement, the README's 10 actions" "$actions" "$readme"
expect_eq "... which are 10" "$(wc -w <<<"$actions")" 10
check "check --help: no pricing:GetProducts (one poll: the Price List is a live poll's)" \
    bash -c '! grep -q "pricing:GetProducts" "$1"' _ "$H/check.txt"
check "serve --help: pricing:GetProducts, when it is asked" \
    grep -qE "^  pricing:GetProducts +list prices" "$H/serve.txt"
check "replay --help: asks AWS nothing" grep -qx "AWS permissions: none (replay asks AWS nothing)" "$H/replay.txt"
expect_rc "help policy takes no more operands" 3 "$BEDTOP" help policy check
expect_eq "... saying so" "$(cat "$TMP/last.err")" "bedtop: help: unexpected argument 'check'; use bedtop help COMMAND"

# ---- each kind of row refuses a value as before, before the command runs
refused() { # NAME MESSAGE ARGS...: exit 3, the one line, nothing on stdout
    local name=$1 msg=$2; shift 2
    expect_rc "$name: refused" 3 "$BEDTOP" "$@"
    expect_eq "... saying so" "$(cat "$TMP/last.err")" "bedtop: $msg"
    check "... and printing nothing else" test ! -s "$TMP/last.out"
}
refused "--region (a text checked)" "--region: 'nope' is not an AWS Region; use a name like us-east-1" \
    check --region nope
refused "--interval (a duration, at least 1 s)" \
    "--interval: '0' is not a duration of at least 1 s; use e.g. 60, 90s, 5m" record x --interval 0
refused "--duration (a duration above 0)" "--duration: '0' is not a duration; use e.g. 90s, 30m, 2h" \
    record x --duration 0
refused "--demo-speed (a number in a range)" \
    "--demo-speed: '100001' is out of range; use a number from 0.1 to 100,000 (or max, for record)" \
    --demo-speed 100001
refused "--demo-speed max on the dashboard (the word is record's)" \
    "--demo-speed max does not apply to the dashboard; it is for record (a screen needs a pace: use a number up to 100,000)" \
    --demo --demo-speed max
refused "--demo-at (a number in a range)" "--demo-at: '30' is not a minute of the demo; use 0 to 29" \
    check --demo-at 30
refused "--unknown-as (a word)" "--unknown-as: 'maybe' is not a status; use warn, crit or unknown" \
    check --unknown-as maybe
refused "-o json (a file, never a format)" \
    "-o/--output json: bedtop's --output names a FILE to write; the output format is --format (-f json); to write a file of that name use -o ./json" \
    check -o json
routes=(); for i in $(seq 1 33); do routes+=(--route "r$i"); done
refused "a 33rd --route (repeatable, at most 32)" \
    "--route: at most 32 routes; list fewer, or none for every route" check "${routes[@]}"
refused "a value is read before the command is known" \
    "--region: 'nope' is not an AWS Region; use a name like us-east-1" --region nope --wide serve
refused "an option no entry of serve names" \
    "--wide does not apply to serve; it is for check, replay (see bedtop --help)" serve --wide
refused "a value missing" "--state: needs a value; see bedtop --help" check --state

# ---- each kind of value reaches the command's own struct
# --demo-at M is also --demo (the row implies the flag); --route twice (repeatable) keeps
# the two routes, in the demo's order; --no-state (a flag) leaves the cache empty
expect_rc "check --demo-at 16 --route summarize --route triage --no-state" 1 \
    "$BEDTOP" check --demo-at 16 --route summarize --route triage --no-state
expect_eq "... shows those two routes (the demo's, without --demo)" \
    "$(awk '/^ROUTE/{on=1; next} on && NF==0{exit} on{print $1}' "$TMP/last.out" | tr '\n' ' ')" "triage summarize "
check "... and read or wrote no state file" test ! -e "$XDG_CACHE_HOME/bedtop"
# -o FILE (a text of the command's own struct) and -f json
expect_rc "check --demo-at 16 -f json -o ./c.json" 2 "$BEDTOP" check --demo-at 16 -f json -o ./c.json --no-state
check "... wrote c.json, nothing on stdout" test -s c.json -a ! -s "$TMP/last.out"
check "... which is JSON" python3 -c 'import json; json.load(open("c.json"))'
# --duration (a number of record's own struct): the polls grow with the simulated time
# asked, one every 15 s of the demo's story plus the first: 3 min 13 polls, 6 min 25
for d in 3 6; do
    expect_rc "record --demo --demo-speed max --duration ${d}m" 0 \
        "$BEDTOP" record "r$d.rec" --demo --demo-speed max --duration "${d}m"
    check "... stopped after $d minutes: $((d * 4 + 1)) polls" \
        grep -q "^bedtop: recorded $((d * 4 + 1)) polls to r$d.rec$" "$TMP/last.err"
done
# the report's word (report KIND FILE) and its own --margin
expect_rc "report quota-request r3.rec --margin 30% -f json" 0 \
    "$BEDTOP" report quota-request r3.rec --margin 30% -f json
check "... asks for the peak x 1.30 (margin 1.3)" python3 -c '
import json, sys
assert json.load(open(sys.argv[1]))["margin"] == 1.3' "$TMP/last.out"
expect_rc "report incident r3.rec --png -o inc" 0 "$BEDTOP" report incident r3.rec --png -o inc
check "... a PNG beside each SVG (a flag of report's own struct)" \
    test "$(ls inc/*.png | wc -l)" -ge 1 -a "$(ls inc/*.png | wc -l)" -eq "$(ls inc/*.svg | wc -l)"
finish
