#!/usr/bin/env bash
# Fault suite: the real binary against the loopback fakes, one fault per file in
# tests/fake/faults/ (see its README), plus DNS failure, rotating credentials and
# a flapping admission endpoint. For each fault:
#   - `bedtop check --format json` with the fault never clearing: the process exits
#     by itself (no signal, code 0-3), the routes are stale and the reason (STALE
#     warning or stderr) names the fault;
#   - retries counted from the fake's request log: retried faults were retried, no
#     request took more than the SDK's 3 attempts, and the total stays inside the
#     standard-mode retry budget (500 tokens, 5 a retry: at most 100 retries);
#   - a live `bedtop record --interval 10` where the fault hits the first requests
#     and then clears: fresh data arrives within one poll after it clears (or in
#     the same poll, by retry), and the replayed recording's end is not stale.
# All faults run in parallel (each has its own fakes), so the suite takes about as
# long as its slowest fault (the hanging endpoint: 3 attempts x 10 s in check).
. "$BEDTOP_SRCDIR/tests/lib.sh"
FAKE=$BEDTOP_SRCDIR/tests/fake/fake_aws.py
FAULTS=$BEDTOP_SRCDIR/tests/fake/faults
SK='wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY'
TOKEN='IQoJb3JpZ2luX2VjEXAMPLESESSIONTOKENVALUE'
CONF=$BEDTOP_SRCDIR/tests/fake/integration.conf
INTERVAL=10
REC_FOR=25s
MAX_ATTEMPTS=3
MAX_RETRIES=100

TRIED=0 SURVIVED=0 RETRIES=0

# start_fake NAME SCENARIO: prints the port (empty on failure)
start_fake() {
    python3 "$FAKE" --log "$TMP/$1.log" --scenario "$2" --session-token "$TOKEN" \
        >"$TMP/$1.out" 2>"$TMP/$1.ferr" &
    echo "$!" >"$TMP/$1.pid"
    local i port=
    for i in $(seq 1 100); do
        port=$(awk '/^PORT /{print $2}' "$TMP/$1.out")
        [ -n "$port" ] && break
        sleep 0.05
    done
    echo "$port"
}
stop_fake() { [ -f "$TMP/$1.pid" ] && kill "$(cat "$TMP/$1.pid")" 2>/dev/null; }

# scenario FAULTFILE KEY OUT: the integration scenario + the file's scenario keys + its KEY faults
scenario() {
    python3 - "$BEDTOP_SRCDIR/tests/fake/scenario_integration.json" "$1" "$2" "$3" <<'PY'
import json, sys
base, fault, key, out = sys.argv[1:]
s = json.load(open(base)); f = json.load(open(fault))
s.update(f.get("scenario", {}))
s["faults"] = f.get(key, [])
json.dump(s, open(out, "w"))
PY
}

# bedtop_env CMD...: the AWS environment of the tests (documentation keys, no files, no IMDS)
bedtop_env() {
    env -u AWS_PROFILE -u AWS_ENDPOINT_URL -u AWS_REGION -u AWS_DEFAULT_REGION \
        AWS_ACCESS_KEY_ID=AKIDEXAMPLE AWS_SECRET_ACCESS_KEY="$SK" AWS_SESSION_TOKEN="$TOKEN" \
        AWS_CONFIG_FILE=/nonexistent AWS_SHARED_CREDENTIALS_FILE=/nonexistent \
        AWS_EC2_METADATA_DISABLED=true BEDTOP_DATADIR="$BEDTOP_SRCDIR/data" "$@"
}

# run_check NAME PORT [bedtop args]: NAME.json, NAME.err, NAME.rc
run_check() {
    local name=$1 port=$2; shift 2
    bedtop_env "$BEDTOP" check --format json --verbose --config "$CONF" \
        --endpoint-url "http://127.0.0.1:$port" "$@" >"$TMP/$name.json" 2>"$TMP/$name.err"
    echo $? >"$TMP/$name.rc"
}

# run_record NAME PORT [bedtop args]: NAME.rec, NAME.err, NAME.rc
run_record() {
    local name=$1 port=$2; shift 2
    bedtop_env "$BEDTOP" record "$TMP/$name.rec" --interval "$INTERVAL" --duration "$REC_FOR" \
        --config "$CONF" --endpoint-url "http://127.0.0.1:$port" "$@" \
        >"$TMP/$name.out" 2>"$TMP/$name.err"
    echo $? >"$TMP/$name.rc"
}

# Both runs of one fault file, in the background.
fault_job() {
    local f=$1 name
    name=$(basename "$f" .json)
    scenario "$f" faults "$TMP/$name-c.scen"
    scenario "$f" recover "$TMP/$name-r.scen"
    (
        port=$(start_fake "$name-c" "$TMP/$name-c.scen")
        run_check "$name-c" "${port:-1}"
        stop_fake "$name-c"
    ) &
    (
        port=$(start_fake "$name-r" "$TMP/$name-r.scen")
        run_record "$name-r" "${port:-1}"
        stop_fake "$name-r"
    ) &
}

# log_stat LOG EXPR: EXPR over L (the fake's log lines as dicts)
log_stat() {
    python3 -c "import json,sys; L=[json.loads(x) for x in open(sys.argv[1]) if x.strip()]; print($2)" "$1" 2>/dev/null
}
# retries in a fake log: attempts after the first
retries_in() { log_stat "$1" "sum(1 for x in L if (x.get('attempt') or 1) > 1)"; }
max_attempt() { log_stat "$1" "max([x.get('attempt') or 1 for x in L] or [0])"; }

# stale_of JSON: "name:stale:reason" per route
stale_of() {
    python3 -c "
import json,sys
d=json.load(open(sys.argv[1]))
for r in d['routes']:
    why=[w['message'] for w in r['warnings'] if w['code']=='STALE']
    print('%s:%s:%s' % (r['name'], r['stale'], why[0] if why else ''))" "$1" 2>/dev/null
}

# recovery REC: seconds from the last CloudWatch error to the first ok after it;
# "none" when nothing failed, "never" when no ok followed
recovery() {
    python3 -c "
import json,sys
L=[json.loads(x) for x in open(sys.argv[1]) if x.strip()][1:]
ev=sorted((e['t'], e['type']) for l in L for e in l.get('e', []) if e.get('source')=='cloudwatch' and e['type'] in ('error','ok'))
errs=[t for t,ty in ev if ty=='error']
if not errs: print('none'); sys.exit()
oks=[t for t,ty in ev if ty=='ok' and t>=errs[-1]]
print(oks[0]-errs[-1] if oks else 'never')" "$1" 2>/dev/null
}

survived() { # survived RC: the process ended by itself with a documented code
    [ "$1" -ge 0 ] 2>/dev/null && [ "$1" -le 3 ]
}

for f in "$FAULTS"/*.json; do
    fault_job "$f"
done

# ---- DNS failure: a name that never resolves, inside a network namespace with no
# interface up, so the resolver's query cannot leave the machine (resolv.conf
# points at a non-loopback server here). Without unshare the case is skipped.
DNS_OK=false
if unshare -rn true 2>/dev/null; then
    DNS_OK=true
    (
        bedtop_env unshare -rn "$BEDTOP" check --format json --config "$CONF" \
            --endpoint-url "http://bedtop-nonexistent.invalid:1" >"$TMP/dns.json" 2>"$TMP/dns.err"
        echo $? >"$TMP/dns.rc"
    ) &
fi

# ---- Credentials rotated mid-run: credential_process hands out OLDTOKEN first (which
# the fake answers with ExpiredTokenException), then NEWTOKEN on refresh.
cat >"$TMP/creds.sh" <<EOS
#!/bin/sh
n=\$(cat "$TMP/creds.count" 2>/dev/null || echo 0)
echo \$((n + 1)) >"$TMP/creds.count"
if [ "\$n" -eq 0 ]; then tok=OLDTOKEN; else tok=NEWTOKEN; fi
printf '{"Version":1,"AccessKeyId":"AKIDEXAMPLE","SecretAccessKey":"%s","SessionToken":"%s"}\n' '$SK' "\$tok"
EOS
chmod +x "$TMP/creds.sh"
printf '[default]\ncredential_process = %s\n' "$TMP/creds.sh" >"$TMP/aws-config"
python3 - "$BEDTOP_SRCDIR/tests/fake/scenario_integration.json" "$TMP/rotate.scen" <<'PY'
import json, sys
s = json.load(open(sys.argv[1])); s["faults"] = []; s["expired_tokens"] = ["OLDTOKEN"]
json.dump(s, open(sys.argv[2], "w"))
PY
(
    python3 "$FAKE" --log "$TMP/rotate.log" --scenario "$TMP/rotate.scen" >"$TMP/rotate.out" 2>&1 &
    fpid=$!
    port=
    for i in $(seq 1 100); do
        port=$(awk '/^PORT /{print $2}' "$TMP/rotate.out"); [ -n "$port" ] && break; sleep 0.05
    done
    env -u AWS_PROFILE -u AWS_ACCESS_KEY_ID -u AWS_SECRET_ACCESS_KEY -u AWS_SESSION_TOKEN \
        -u AWS_ENDPOINT_URL -u AWS_REGION -u AWS_DEFAULT_REGION \
        AWS_CONFIG_FILE="$TMP/aws-config" AWS_SHARED_CREDENTIALS_FILE=/nonexistent \
        AWS_EC2_METADATA_DISABLED=true BEDTOP_DATADIR="$BEDTOP_SRCDIR/data" \
        "$BEDTOP" check --format json --config "$CONF" --endpoint-url "http://127.0.0.1:${port:-1}" \
        >"$TMP/rotate.json" 2>"$TMP/rotate.err"
    echo $? >"$TMP/rotate.rc"
    kill "$fpid"
) &

# ---- Admission endpoint flapping: 2 good scrapes, 2 HTTP 500s, repeating, scraped
# every second by a live recording (CloudWatch healthy).
(
    python3 "$FAULTS/flap_admission.py" --up 2 --down 2 --log "$TMP/flap.log" >"$TMP/flap.out" 2>&1 &
    apid=$!
    aport=
    for i in $(seq 1 100); do
        aport=$(awk '/^PORT /{print $2}' "$TMP/flap.out"); [ -n "$aport" ] && break; sleep 0.05
    done
    scenario "$FAULTS/clock-skew.json" none "$TMP/flapcw.scen"   # no faults, no skew keys used
    python3 - "$TMP/flapcw.scen" <<'PY'
import json, sys
s = json.load(open(sys.argv[1])); s.pop("clock_offset", None); json.dump(s, open(sys.argv[1], "w"))
PY
    port=$(start_fake flapcw "$TMP/flapcw.scen")
    bedtop_env "$BEDTOP" record "$TMP/flap.rec" --interval 1 --duration 12s --config "$CONF" \
        --endpoint-url "http://127.0.0.1:${port:-1}" --admission "http://127.0.0.1:${aport:-1}/metrics" \
        >"$TMP/flap.stdout" 2>"$TMP/flap.err"
    echo $? >"$TMP/flap.rc"
    stop_fake flapcw
    kill "$apid"
) &

wait

# ---- assertions, fault by fault
for f in "$FAULTS"/*.json; do
    name=$(basename "$f" .json)
    IFS=$'\t' read -r reason retried want_stale recov < <(python3 -c "
import json,sys; f=json.load(open(sys.argv[1]))
print('\t'.join([f['reason'] or '-', str(f['retried']).lower(), str(f['stale']).lower(), f['recovery']]))" "$f")
    TRIED=$((TRIED + 1))
    crc=$(cat "$TMP/$name-c.rc" 2>/dev/null || echo 99)
    rrc=$(cat "$TMP/$name-r.rc" 2>/dev/null || echo 99)
    if survived "$crc" && [ "$rrc" -eq 0 ]; then
        SURVIVED=$((SURVIVED + 1))
        ok "$name: check exited $crc and record exited $rrc by themselves (no crash, no signal)"
    else
        notok "$name: check exit $crc (want 0-3), record exit $rrc (want 0)"
        sed 's/^/#   /' "$TMP/$name-c.err" "$TMP/$name-r.err" | head -6
    fi
    st=$(stale_of "$TMP/$name-c.json")
    if [ -z "$st" ]; then
        notok "$name: check printed a JSON report"
    elif [ "$want_stale" = true ]; then
        nstale=$(grep -c ':True:' <<<"$st")
        nroutes=$(wc -l <<<"$st")
        expect_eq "$name: every route stale under the fault" "$nstale" "$nroutes"
        if grep ':True:' <<<"$st" | grep -Eq -- "$reason" || grep -Eq -- "$reason" "$TMP/$name-c.err"; then
            ok "$name: the stale reason names the fault (/$reason/)"
        else
            notok "$name: stale reason does not match /$reason/: $(head -1 <<<"$st")"
        fi
        expect_eq "$name: check exit code 3 (unknown) while stale" "$crc" 3
    else
        expect_eq "$name: no route stale (handled inside the poll)" "$(grep -c ':True:' <<<"$st")" 0
        expect_eq "$name: check exit code 1 (the scenario's warn status)" "$crc" 1
    fi
    r1=$(retries_in "$TMP/$name-c.log"); r2=$(retries_in "$TMP/$name-r.log")
    r1=${r1:-0} r2=${r2:-0}
    RETRIES=$((RETRIES + r1 + r2))
    ma=$(max_attempt "$TMP/$name-c.log"); ma=${ma:-0}
    mb=$(max_attempt "$TMP/$name-r.log"); mb=${mb:-0}
    check "$name: at most $MAX_ATTEMPTS attempts per request (saw $ma, $mb)" \
        test "$ma" -le $MAX_ATTEMPTS -a "$mb" -le $MAX_ATTEMPTS
    check "$name: retries within the budget ($r1 + $r2 <= $MAX_RETRIES each)" \
        test "$r1" -le $MAX_RETRIES -a "$r2" -le $MAX_RETRIES
    if [ "$retried" = true ]; then
        check "$name: the fault was retried ($r1 retries in check)" test "$r1" -gt 0
    else
        expect_eq "$name: not retried (a 200 answer is final)" "$r1" 0
    fi
    rec=$(recovery "$TMP/$name-r.rec")
    case $recov in
    next-poll)
        if [[ $rec =~ ^[0-9]+$ ]] && [ "$rec" -le $((INTERVAL + 5)) ]; then
            ok "$name: fresh data ${rec}s after the last failed poll (within one poll of $INTERVAL s)"
        else
            notok "$name: recovery after the fault cleared: '$rec' (want <= $((INTERVAL + 5)) s)"
        fi ;;
    either)
        # libcurl silently re-sends once when a reused connection turns out dead, so
        # a reset may use up the fault's count inside the first poll
        if [ "$rec" = none ] || { [[ $rec =~ ^[0-9]+$ ]] && [ "$rec" -le $((INTERVAL + 5)) ]; }; then
            ok "$name: fresh data in the same poll or within one poll of $INTERVAL s ($rec)"
        else
            notok "$name: recovery after the fault cleared: '$rec' (want same poll or <= $((INTERVAL + 5)) s)"
        fi ;;
    same-poll)
        expect_eq "$name: no failed poll (a retry inside the poll got the data)" "$rec" none ;;
    esac
    if [ -s "$TMP/$name-r.rec" ]; then
        end=$(python3 -c "import json,sys; L=[json.loads(x) for x in open(sys.argv[1]) if x.strip()]; print(max(l['t'] for l in L[1:]))" "$TMP/$name-r.rec" 2>/dev/null)
        "$BEDTOP" replay "$TMP/$name-r.rec" --at -0m --format json >"$TMP/$name-end.json" 2>/dev/null
        expect_eq "$name: recording's last poll: no route stale" \
            "$(stale_of "$TMP/$name-end.json" | grep -c ':True:')" 0
    else
        notok "$name: the live run wrote a recording"
    fi
done

# DNS
if $DNS_OK; then
    TRIED=$((TRIED + 1))
    rc=$(cat "$TMP/dns.rc" 2>/dev/null || echo 99)
    if survived "$rc"; then SURVIVED=$((SURVIVED + 1)); fi
    expect_eq "dns: name that never resolves: exit 3 (unknown), no crash" "$rc" 3
    check "dns: the error names the host and the resolve failure" \
        grep -Eqi 'bedtop-nonexistent.invalid.*(resolve|host)|(resolve|host).*bedtop-nonexistent.invalid' "$TMP/dns.err"
else
    skip "dns: unshare -rn unavailable: a lookup could reach the non-loopback resolver"
fi

# credentials rotated
TRIED=$((TRIED + 1))
rc=$(cat "$TMP/rotate.rc" 2>/dev/null || echo 99)
if survived "$rc"; then SURVIVED=$((SURVIVED + 1)); fi
expect_eq "creds-rotate: ExpiredToken -> credential_process again -> fresh data (exit 1, warn)" "$rc" 1
expect_eq "creds-rotate: the fake saw the old token refused, then only the new one" \
    "$(log_stat "$TMP/rotate.log" "(sum(x['error']=='ExpiredTokenException' for x in L) >= 1, all(x['sig_ok'] for x in L))")" \
    "(True, True)"
check "creds-rotate: credential_process ran again after the refusal" test "$(cat "$TMP/creds.count" 2>/dev/null || echo 0)" -ge 2
rr=$(retries_in "$TMP/rotate.log"); RETRIES=$((RETRIES + ${rr:-0}))
expect_eq "creds-rotate: no route stale" "$(stale_of "$TMP/rotate.json" | grep -c ':True:')" 0

# admission flapping
TRIED=$((TRIED + 1))
rc=$(cat "$TMP/flap.rc" 2>/dev/null || echo 99)
if [ "$rc" -eq 0 ]; then SURVIVED=$((SURVIVED + 1)); fi
expect_eq "admission-flap: record survived the flapping endpoint (exit 0)" "$rc" 0
served=$(wc -l <"$TMP/flap.log" 2>/dev/null || echo 0)
failed=$(grep -c ' 500$' "$TMP/flap.log" 2>/dev/null)
read -r errs oks_after flips < <(python3 -c "
import json,sys
L=[json.loads(x) for x in open(sys.argv[1]) if x.strip()][1:]
ev=sorted((e['t'], e['type']) for l in L for e in l.get('e', []) if e.get('source')=='admission' and e['type'] in ('error','ok') and e.get('route')==0)
errs=sum(1 for t,ty in ev if ty=='error')
flips=sum(1 for a,b in zip(ev, ev[1:]) if a[1]=='error' and b[1]=='ok')
last_err=max([t for t,ty in ev if ty=='error'] or [0])
print(errs, sum(1 for t,ty in ev if ty=='ok' and t>=last_err), flips)" "$TMP/flap.rec" 2>/dev/null)
check "admission-flap: failed scrapes reported ($errs error events for $failed HTTP 500s)" \
    test "${errs:-0}" -ge 1 -a "${failed:-0}" -ge 1
check "admission-flap: every outage recovered on the next good scrape ($flips recoveries)" \
    test "${flips:-0}" -ge 1
check "admission-flap: scrapes are never retried ($served requests in 12 s at 1/s)" \
    test "$served" -le 14

# ---- secrets in everything produced
hits=$(cat "$TMP"/*.json "$TMP"/*.err "$TMP"/*.rec "$TMP"/*.log "$TMP"/*.out 2>/dev/null |
       grep -o -e "$SK" -e "$TOKEN" -e 'Signature=' -e NEWTOKEN | wc -c)
expect_eq "no secret key, session token or Signature= in any output, log or recording" "$hits" 0
echo "faults: tried $TRIED, survived $SURVIVED, retries spent $RETRIES, secret bytes found $hits"
finish
