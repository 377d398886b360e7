#!/usr/bin/env bash
# Issue 26 ("hardening, round three") through the real binary, one named check (or a few)
# per break that a whole command shows; the parsers' parts are in the unit tests
# (test_config, test_absurd_values, test_fleet, test_promtext) and serve's HTTP side in
# t_serve_clients.
. "$BEDTOP_SRCDIR/tests/lib.sh"
SK='wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY'
CONF=$BEDTOP_SRCDIR/tests/fake/fleet.conf
aws_env() {
    env -u AWS_PROFILE -u AWS_ENDPOINT_URL -u AWS_REGION -u AWS_DEFAULT_REGION \
        AWS_ACCESS_KEY_ID=AKIDEXAMPLE AWS_SECRET_ACCESS_KEY="$SK" \
        AWS_CONFIG_FILE=/nonexistent AWS_SHARED_CREDENTIALS_FILE=/nonexistent \
        AWS_EC2_METADATA_DISABLED=true BEDTOP_DATADIR="$BEDTOP_SRCDIR/data" "$@"
}
CLOSED=$(free_port) # nothing listens there: every request fails, and its message names the URL

# ---- break 6: a password in a URL is never printed or recorded ----
aws_env "$BEDTOP" check --config "$CONF" --endpoint-url "http://bob:hunter2@127.0.0.1:$CLOSED" \
    >"$TMP/ep.out" 2>"$TMP/ep.err"
check "break 6: --endpoint-url's failures name the URL (user:***@)" grep -q "bob:\*\*\*@127.0.0.1:$CLOSED" "$TMP/ep.err" "$TMP/ep.out"
check "break 6: ... and never its password (check's stdout and stderr)" \
    bash -c "! grep -q hunter2 '$TMP/ep.err' '$TMP/ep.out'"
aws_env "$BEDTOP" record "$TMP/ep.rec" --config "$CONF" --duration 5s \
    --endpoint-url "http://bob:hunter2@127.0.0.1:$CLOSED" >"$TMP/eprec.out" 2>"$TMP/eprec.err"
check "break 6: record --endpoint-url: the recording holds the failures" grep -q 'bob:\*\*\*@' "$TMP/ep.rec"
check "break 6: ... and no password in the recording or on stderr" \
    bash -c "! grep -q hunter2 '$TMP/ep.rec' '$TMP/eprec.err' '$TMP/eprec.out'"
"$BEDTOP" check --source "prometheus+http://bob:hunter2@127.0.0.1:$CLOSED" >"$TMP/src.out" 2>"$TMP/src.err"
check "break 6: --source's discovery failure names the server as bob:***@" \
    grep -q "prometheus http://bob:\*\*\*@127.0.0.1:$CLOSED" "$TMP/src.err"
check "break 6: ... without the password" bash -c "! grep -q hunter2 '$TMP/src.err' '$TMP/src.out'"
BEDTOP_DATADIR="$BEDTOP_SRCDIR/data" "$BEDTOP" record "$TMP/src.rec" --config "$CONF" --duration 5s \
    --source "prometheus+http://bob:hunter2@127.0.0.1:$CLOSED" >"$TMP/srcrec.out" 2>"$TMP/srcrec.err"
check "break 6: record --source: the recording holds the failure" grep -q 'bob:\*\*\*@' "$TMP/src.rec"
check "break 6: ... and no password in it or on stderr" \
    bash -c "! grep -q hunter2 '$TMP/src.rec' '$TMP/srcrec.err' '$TMP/srcrec.out'"
"$BEDTOP" check --source "bogus://bob:hunter2@x" >"$TMP/bad.out" 2>"$TMP/bad.err"
check "break 6: a malformed --source is quoted without its password" \
    bash -c "grep -q 'bob:\*\*\*@x' '$TMP/bad.err' && ! grep -q hunter2 '$TMP/bad.err'"

# ---- break 11: --verbose prints CloudWatch's Messages sanitized ----
# the fake's GetMetricData answers carry a Message with a screen clear, a title change, a
# bell and a forged second line
python3 - "$BEDTOP_SRCDIR/tests/fake/scenario_fleet.json" >"$TMP/msgs.json" <<'PY'
import json
import sys
sc = json.load(open(sys.argv[1]))
sc["get_metric_data_messages"] = [{"Code": "Evil\u001b[2J", "Value": "x\u001b]0;PWNED\u0007\nbedtop: forged line"}]
print(json.dumps(sc))
PY
start_fake msgs --scenario "$TMP/msgs.json"
aws_env "$BEDTOP" check --config "$CONF" --endpoint-url "http://127.0.0.1:$PORT" --verbose \
    >"$TMP/verbose.out" 2>"$TMP/verbose.err"
check "break 11: --verbose shows the GetMetricData message" grep -q 'GetMetricData: Evil?\[2J: x?\]0;PWNED??bedtop: forged line' "$TMP/verbose.err"
check "break 11: ... with no control character on stderr" python3 -c '
import re, sys
b = open(sys.argv[1], "rb").read()
sys.exit(1 if re.search(rb"[\x00-\x08\x0b-\x1f\x7f]", b) else 0)' "$TMP/verbose.err"
check "break 11: ... and no forged line of its own" bash -c "! grep -q '^bedtop: forged line' '$TMP/verbose.err'"
finish
