#!/usr/bin/env bash
# Secrets: bedtop holds AWS credentials and must never print, log or record the
# secret key, the session token or a request signature. Everything produced is
# grepped: stdout and stderr of check (every format, --verbose), record, replay
# and export, the recordings and exports themselves, including runs where the
# server's error message quotes the string to sign. Also: recordings and exports
# are created 0600 whatever the umask; a shared credentials file readable by
# others draws a warning (once); credential_process runs without a shell.
. "$BEDTOP_SRCDIR/tests/lib.sh"
FAKE=$BEDTOP_SRCDIR/tests/fake/fake_aws.py
SK='wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY'
TOKEN='IQoJb3JpZ2luX2VjEXAMPLESESSIONTOKENVALUE'
CONF=$BEDTOP_SRCDIR/tests/fake/integration.conf
OUT=$TMP/out
mkdir -p "$OUT"

start_fake() { # start_fake NAME SCENARIO [args]: sets PORT
    local name=$1 scen=$2; shift 2
    python3 "$FAKE" --log "$OUT/$name.fakelog" --scenario "$scen" "$@" >"$TMP/$name.port" 2>"$OUT/$name.fakeerr" &
    CLEANUP+=("kill $!")
    PORT=
    local i
    for i in $(seq 1 100); do
        PORT=$(awk '/^PORT /{print $2}' "$TMP/$name.port")
        [ -n "$PORT" ] && return 0
        sleep 0.05
    done
    return 1
}
aws_env() { # the documentation keys in the environment, no shared files, no IMDS
    env -u AWS_PROFILE -u AWS_ENDPOINT_URL -u AWS_REGION -u AWS_DEFAULT_REGION \
        AWS_ACCESS_KEY_ID=AKIDEXAMPLE AWS_SECRET_ACCESS_KEY="$SK" AWS_SESSION_TOKEN="$TOKEN" \
        AWS_CONFIG_FILE=/nonexistent AWS_SHARED_CREDENTIALS_FILE=/nonexistent \
        AWS_EC2_METADATA_DISABLED=true BEDTOP_DATADIR="$BEDTOP_SRCDIR/data" "$@"
}
# secret_bytes FILES...: bytes of secret key, token or "Signature=" found
secret_bytes() { cat "$@" 2>/dev/null | grep -o -e "$SK" -e "$TOKEN" -e 'Signature=' | wc -c; }

check "fake AWS starts (session token required)" start_fake main \
    "$BEDTOP_SRCDIR/tests/fake/scenario_integration.json" --session-token "$TOKEN"
EP=http://127.0.0.1:$PORT

for fmt in text json prometheus; do
    aws_env "$BEDTOP" check --format "$fmt" --verbose --config "$CONF" --endpoint-url "$EP" \
        >"$OUT/check-$fmt.out" 2>"$OUT/check-$fmt.err"
done
check "check --verbose traced the requests (the trace is there to be searched)" \
    grep -q 'GetMetricData' "$OUT/check-json.err"
expect_eq "check signed with the session token (the fake verified every request)" \
    "$(python3 -c "import json,sys; L=[json.loads(x) for x in open(sys.argv[1])]; print(len(L) > 0 and all(x['sig_ok'] and x['token_ok'] for x in L))" "$OUT/main.fakelog")" True

# record (live, --verbose), then replay and export what was recorded; umask 000 so
# only bedtop's own mode bits decide who can read the files
(umask 000; aws_env "$BEDTOP" record "$OUT/live.rec" --verbose --interval 10 --duration 3s \
    --config "$CONF" --endpoint-url "$EP" >"$OUT/record.out" 2>"$OUT/record.err")
check "record wrote a recording" test -s "$OUT/live.rec"
expect_eq "recording created 0600 (umask 000)" "$(stat -c %a "$OUT/live.rec" 2>/dev/null)" 600
end=$(python3 -c "import json,sys; L=[json.loads(x) for x in open(sys.argv[1]) if x.strip()]; print(max(l['t'] for l in L[1:]))" "$OUT/live.rec" 2>/dev/null)
"$BEDTOP" replay "$OUT/live.rec" --at -0m --format json >"$OUT/replay.out" 2>"$OUT/replay.err"
for fmt in csv json; do
    (umask 000; "$BEDTOP" export "$OUT/live.rec" --format "$fmt" -o "$OUT/export.$fmt" \
        >"$OUT/export-$fmt.out" 2>"$OUT/export-$fmt.err")
    check "export --format $fmt wrote a file" test -s "$OUT/export.$fmt"
    expect_eq "export.$fmt created 0600 (umask 000)" "$(stat -c %a "$OUT/export.$fmt" 2>/dev/null)" 600
done
(umask 000; "$BEDTOP" record "$OUT/demo.rec" --demo --demo-speed max --duration 10m \
    >"$OUT/demo.out" 2>"$OUT/demo.err")
expect_eq "demo recording created 0600 (umask 000)" "$(stat -c %a "$OUT/demo.rec" 2>/dev/null)" 600

# A server whose error quotes the canonical request and string to sign (as
# SignatureDoesNotMatch does), with the token and a signature in it.
python3 - "$BEDTOP_SRCDIR/tests/fake/scenario_integration.json" "$TMP/leaky.scen" "$TOKEN" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
msg = ("The request signature we calculated does not match the signature you provided. "
       "Check your AWS Secret Access Key and signing method.\n\nThe Canonical String for this request "
       "should have been\n'POST\n/\n\nx-amz-security-token:%s\n'\n\nThe String-to-Sign should have been "
       "'AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20261129/us-east-1/monitoring/aws4_request, "
       "Signature=0123456789abcdef'" % sys.argv[3])
s["faults"] = [{"op": "*", "nth": 1, "count": 0, "action": "error", "status": 403,
                "code": "SignatureDoesNotMatch", "message": msg}]
json.dump(s, open(sys.argv[2], "w"))
PY
check "leaky fake starts" start_fake leaky "$TMP/leaky.scen"
aws_env "$BEDTOP" check --format json --verbose --config "$CONF" --endpoint-url "http://127.0.0.1:$PORT" \
    >"$OUT/leaky.out" 2>"$OUT/leaky.err"
check "SignatureDoesNotMatch is reported (by code)" grep -q SignatureDoesNotMatch "$OUT/leaky.err"

# The whole haul: every stdout, stderr, trace, recording and export above.
n=$(ls "$OUT" | wc -l)
hits=$(secret_bytes "$OUT"/*)
expect_eq "secret key, session token, Signature=: 0 bytes in $n files produced" "$hits" 0
# and the check can fail: the same grep finds the secret when it is there
echo "x $SK y" >"$TMP/planted"
check "the grep finds a planted secret (the check above can fail)" test "$(secret_bytes "$TMP/planted")" -gt 0

# Shared credentials file readable by others: a warning, once, naming the file.
H=$TMP/home
mkdir -p "$H/.aws"
printf '[default]\naws_access_key_id = AKIDEXAMPLE\naws_secret_access_key = %s\naws_session_token = %s\n' \
    "$SK" "$TOKEN" >"$H/.aws/credentials"
printf '[default]\nregion = us-east-1\n' >"$H/.aws/config"
chmod 600 "$H/.aws/config"
file_run() { # file_run OUT: check with credentials from $H/.aws only
    env -i PATH="$PATH" HOME="$H" AWS_EC2_METADATA_DISABLED=true BEDTOP_DATADIR="$BEDTOP_SRCDIR/data" \
        "$BEDTOP" check --format json --config "$CONF" --endpoint-url "$EP" >"$1.out" 2>"$1.err"
    echo $? >"$1.rc"
}
chmod 644 "$H/.aws/credentials"
file_run "$TMP/perm644"
check "~/.aws/credentials mode 644: warning naming the file and chmod 600" \
    grep -q "warning: $H/.aws/credentials is accessible by group/others (mode 0644): run chmod 600" "$TMP/perm644.err"
expect_eq "the warning is printed once" "$(grep -c 'accessible by group/others' "$TMP/perm644.err")" 1
check "mode 644: the credentials still work (exit 0-2, not 3)" test "$(cat "$TMP/perm644.rc")" -le 2
chmod 600 "$H/.aws/credentials"
file_run "$TMP/perm600"
expect_eq "~/.aws/credentials mode 600: no warning" "$(grep -c 'accessible by group/others' "$TMP/perm600.err")" 0
expect_eq "no secret in the runs from the credentials file" "$(secret_bytes "$TMP"/perm6*)" 0

# credential_process runs the program directly: shell syntax in its arguments
# stays literal (no ;, $(), globbing), and nothing else runs.
cat >"$TMP/cp.sh" <<EOS
#!/bin/sh
for a in "\$@"; do printf '%s\n' "\$a"; done >"$TMP/cp.argv"
printf '{"Version":1,"AccessKeyId":"AKIDEXAMPLE","SecretAccessKey":"%s","SessionToken":"%s"}\n' '$SK' '$TOKEN'
EOS
chmod +x "$TMP/cp.sh"
printf '[default]\nregion = us-east-1\ncredential_process = %s "a;touch %s/pwned" $(touch %s/pwned2) *\n' \
    "$TMP/cp.sh" "$TMP" "$TMP" >"$TMP/cp-config"
env -i PATH="$PATH" HOME="$TMP" AWS_CONFIG_FILE="$TMP/cp-config" AWS_SHARED_CREDENTIALS_FILE=/nonexistent \
    AWS_EC2_METADATA_DISABLED=true BEDTOP_DATADIR="$BEDTOP_SRCDIR/data" \
    "$BEDTOP" check --format json --config "$CONF" --endpoint-url "$EP" >"$TMP/cp.out" 2>"$TMP/cp.err"
rc=$?
check "credential_process credentials work (exit $rc is 0-2)" test "$rc" -le 2
expect_eq "credential_process got its arguments literally, no shell expansion" \
    "$(tr '\n' '|' <"$TMP/cp.argv" 2>/dev/null)" "a;touch $TMP/pwned|\$(touch|$TMP/pwned2)|*|"
check "no shell ran the command (nothing touched)" test ! -e "$TMP/pwned" -a ! -e "$TMP/pwned2"
expect_eq "no secret in the credential_process run's output" "$(secret_bytes "$TMP"/cp.out "$TMP"/cp.err)" 0
echo "secrets: files searched $((n + 6)), secret bytes found $hits"
finish
