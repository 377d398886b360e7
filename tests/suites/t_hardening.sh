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

# ---- break 9: the inference-profile cache (tests/fake/quotas.conf's route "app" is an
# application inference profile the fake resolves to Sonnet 4.5, burndown 5) ----
QCONF=$BEDTOP_SRCDIR/tests/fake/quotas.conf
APP_ARN='arn:aws:bedrock:us-east-1:123456789012:application-inference-profile/a1b2c3d4e5f6'
start_fake q --scenario "$BEDTOP_SRCDIR/tests/fake/scenario_quotas.json"
QPORT=$PORT
qcheck() { # qcheck CACHEDIR OUT [prefix command...]: check --format json with that cache
    local cache=$1 out=$2; shift 2
    aws_env XDG_CACHE_HOME="$cache" timeout -k 5 60 "$@" "$BEDTOP" check --format json --config "$QCONF" \
        --endpoint-url "http://127.0.0.1:$QPORT" >"$out.json" 2>"$out.err"
    echo $? >"$out.rc"
}
app_base() { python3 -c 'import json,sys; print([r["base_model"] for r in json.load(open(sys.argv[1]))["routes"] if r["name"]=="app"][0])' "$1" 2>/dev/null; }
# a symlink planted at the temp file's name (path.PID: the shell's PID is bedtop's after exec)
mkdir -p "$TMP/c9a/bedtop"
echo precious >"$TMP/victim"
aws_env XDG_CACHE_HOME="$TMP/c9a" timeout -k 5 60 bash -c 'ln -s "$1" "$2/bedtop/inference-profiles.json.$$"; exec "$3" check --format json --config "$4" --endpoint-url "$5" >"$6" 2>/dev/null' \
    _ "$TMP/victim" "$TMP/c9a" "$BEDTOP" "$QCONF" "http://127.0.0.1:$QPORT" "$TMP/c9a.json"
expect_eq "break 9: a symlink at the cache's temp name: the file it points to is untouched" \
    "$(cat "$TMP/victim")" precious
expect_eq "break 9: ... and the cache is a regular file of its own, 0600" \
    "$(stat -c '%F %a' "$TMP/c9a/bedtop/inference-profiles.json" 2>&1)" "regular file 600"
# a FIFO at the cache path: no open() blocks (the run ends by itself, well inside timeout 60)
mkdir -p "$TMP/c9b/bedtop"
mkfifo "$TMP/c9b/bedtop/inference-profiles.json"
qcheck "$TMP/c9b" "$TMP/c9b"
check "break 9: a FIFO at the cache path does not block check (exit $(cat "$TMP/c9b.rc"), not killed by timeout)" \
    test "$(cat "$TMP/c9b.rc")" -lt 124
expect_eq "break 9: ... the profile is resolved by asking" "$(app_base "$TMP/c9b.json")" \
    anthropic.claude-sonnet-4-5-20250929-v1:0
# "at": 1e300 (an undefined conversion that never expired) is a damaged entry: asked again
mkdir -p "$TMP/c9c/bedtop"
printf '{"%s": {"base_model": "amazon.nova-lite-v1:0", "inference": "on-demand", "regions": 1, "at": 1e300}}\n' \
    "$APP_ARN" >"$TMP/c9c/bedtop/inference-profiles.json"
qcheck "$TMP/c9c" "$TMP/c9c"
expect_eq "break 9: a cache entry dated 1e300 is not believed: the profile is asked for" \
    "$(app_base "$TMP/c9c.json")" anthropic.claude-sonnet-4-5-20250929-v1:0
if [ "$(app_base "$TMP/c9c.json")" != anthropic.claude-sonnet-4-5-20250929-v1:0 ]; then
    echo "# check exited $(cat "$TMP/c9c.rc"); its stderr:"; sed 's/^/#   /' "$TMP/c9c.err"
fi

# ---- break 12: check -o FILE stopped by SIGTERM renames no partial report into place ----
# an endpoint that accepts and never answers: check waits on it (up to its 30 s bound)
python3 -c '
import socket, sys
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(64)
print("PORT", s.getsockname()[1], flush=True)
held = []
while True:
    c, _ = s.accept(); held.append(c); print("conn", flush=True)
' >"$TMP/hang.out" &
CLEANUP+=("kill $!")
HANG=
for _ in $(seq 1 100); do HANG=$(awk '/^PORT /{print $2}' "$TMP/hang.out"); [ -n "$HANG" ] && break; sleep 0.05; done
echo "the old report" >"$TMP/report.txt"
# an array, not the function: "${AWS_ENV[@]}" ... & makes $! bedtop itself (env execs it),
# so the signal reaches bedtop rather than a subshell
AWS_ENV+=(BEDTOP_DATADIR="$BEDTOP_SRCDIR/data") # tests/lib.sh: the example keys, nothing else of AWS
"${AWS_ENV[@]}" "$BEDTOP" check --config "$CONF" --endpoint-url "http://127.0.0.1:$HANG" -o "$TMP/report.txt" \
    >"$TMP/term.out" 2>"$TMP/term.err" &
CPID=$!
for _ in $(seq 1 200); do grep -q conn "$TMP/hang.out" && break; sleep 0.05; done # a request is waiting
kill -TERM "$CPID"
wait "$CPID"
expect_eq "break 12: check -o stopped by SIGTERM exits 143 (128 + 15), not with a status" "$?" 143
expect_eq "break 12: ... and the file it would replace is unchanged" "$(cat "$TMP/report.txt")" "the old report"
expect_eq "break 12: ... with no temp file left beside it" "$(cd "$TMP" && ls report.txt.* 2>/dev/null)" ""
check "break 12: ... and says so" grep -q "stopped by signal 15 before the report was complete; no report written" "$TMP/term.err"
# ---- break 12: Ctrl-C during route discovery ends bedtop at once ----
# Discovery waits before the loop exists. It used to wait out the request's 10 s timeout and
# its retry (about 20 s, then "route discovery: ... timed out", exit 3) because no handler
# was installed yet: a background job of a script starts with SIGINT ignored, as here, and
# at a terminal the default action killed bedtop halfway. Now the loop's handler is in place
# first, and the wait wakes on its self-pipe: exit 130 (128 + 2), the request not retried.
conns() { grep -c conn "$TMP/hang.out"; }
printf '[bedtop]\nregion = us-east-1\n' >"$TMP/noroutes.conf"
for how in "source:--source prometheus+http://127.0.0.1:$HANG" \
           "cloudwatch:--config $TMP/noroutes.conf --endpoint-url http://127.0.0.1:$HANG"; do
    what=${how%%:*}
    before=$(conns)
    # shellcheck disable=SC2086 # the options are words
    "${AWS_ENV[@]}" "$BEDTOP" check ${how#*:} >"$TMP/int.out" 2>"$TMP/int.err" &
    CPID=$!
    for _ in $(seq 1 200); do [ "$(conns)" -gt "$before" ] && break; sleep 0.05; done # discovery's request waits
    kill -INT "$CPID"
    wait "$CPID"
    expect_eq "break 12: SIGINT during $what discovery exits 130 (128 + 2)" "$?" 130
    expect_eq "break 12: ... without retrying the request" "$(conns)" "$((before + 1))"
    check "break 12: ... and prints no discovery failure" bash -c "! grep -q 'route discovery' '$TMP/int.err'"
done
finish
