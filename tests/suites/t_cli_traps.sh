#!/usr/bin/env bash
# The command line's traps (issue 22): the AWS CLI's --output json, file errors
# without a remedy, replay --route.
. "$BEDTOP_SRCDIR/tests/lib.sh"
cd "$TMP" || exit 2
expect_rc "check --output json (the AWS CLI's habit) is refused" 3 "$BEDTOP" check --demo-at 16 --output json
check "... saying the format is --format" \
    grep -q "^bedtop: -o/--output json: bedtop's --output names a FILE to write; the output format is --format (-f json)" "$TMP/last.err"
check "... and no file named json was written" test ! -e "$TMP/json"
expect_rc "--output table: the same, text is the table" 3 "$BEDTOP" check --demo-at 16 -o table
check "... -f text" grep -q "(-f text: text is the table)" "$TMP/last.err"
"$BEDTOP" check --demo-at 16 -f json -o ./json >/dev/null 2>&1
check "-o ./json writes a file of that name, as said" python3 -c 'import json; json.load(open("json"))'
expect_rc "a missing recording is an error" 3 "$BEDTOP" replay "$TMP/nope.rec" --at 10:00
check "... with a remedy" grep -q "nope.rec: No such file or directory; check the path; bedtop record FILE" "$TMP/last.err"
expect_rc "export of a missing recording" 3 "$BEDTOP" export "$TMP/nope.rec"
check "... with the same remedy" grep -q "; bedtop record FILE" "$TMP/last.err"
# the remedy follows from the file, not from the message's words: a path holding "; "
# (as a remedy does) still gets one
expect_rc "a missing recording whose name holds '; '" 3 "$BEDTOP" replay "$TMP/a; b.rec" --at 10:00
check "... still gets the remedy" grep -q "a; b.rec: No such file or directory; check the path; bedtop record FILE" "$TMP/last.err"
expect_rc "a missing config is an error" 3 "$BEDTOP" check -c "$TMP/nope.conf"
check "... with a remedy" grep -q "nope.conf: No such file or directory; check the path, or drop -c" "$TMP/last.err"
expect_rc "recording into a directory that does not exist" 3 "$BEDTOP" record "$TMP/no/dir/x.rec" --demo --duration 1m
check "... says to create it" grep -q "its directory does not exist: create it (mkdir -p)" "$TMP/last.err"
expect_rc "replay --route without --at is an error" 3 "$BEDTOP" replay "$TMP/nope.rec" --route triage
check "... naming --at" grep -q "need --at MINUTE" "$TMP/last.err"
finish
