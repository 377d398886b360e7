# Shared helpers for shell suites (tests/suites/t_*.sh). Source it; call `finish` last.
set -u
PASS=0 FAIL=0 SKIP=0
BEDTOP=${BEDTOP:-$BEDTOP_SRCDIR/build/bedtop}
SHARED=${BEDTOP_SHARED:-$BEDTOP_SRCDIR/../shared}
TMP=$(mktemp -d "${TMPDIR:-/tmp}/bedtop-test.XXXXXX")
# check keeps its state in the cache by default: each suite has its own, never the
# user's (a suite that runs check twice sees what cron would)
export XDG_CACHE_HOME=$TMP/cache
CLEANUP=()
cleanup_all() {
    local c
    for c in "${CLEANUP[@]}"; do eval "$c" >/dev/null 2>&1; done
    rm -rf "$TMP"
}
trap cleanup_all EXIT
ok()     { echo "ok - $*"; PASS=$((PASS + 1)); }
notok()  { echo "not ok - $*"; FAIL=$((FAIL + 1)); }
# skip WHY: a check that could not run is a skip, never a pass; in CI (CI=true),
# where everything a check needs is installed, it is a failure.
skip() {
    if [ "${CI:-}" = true ]; then notok "$* (a skip, and CI must not skip)"; else
        echo "ok - # SKIP $*"; SKIP=$((SKIP + 1))
    fi
}
check()  { local name=$1; shift; if "$@"; then ok "$name"; else notok "$name"; fi; }
# expect_eq NAME GOT WANT
expect_eq() {
    if [ "$2" == "$3" ]; then ok "$1"; else notok "$1: got '$2' want '$3'"; fi
}
# expect_rc NAME WANT cmd...
expect_rc() {
    local name=$1 want=$2; shift 2
    "$@" >"$TMP/last.out" 2>"$TMP/last.err"
    local rc=$?
    if [ "$rc" -eq "$want" ]; then ok "$name"; else
        notok "$name: exit $rc want $want"; sed 's/^/#   /' "$TMP/last.err" | head -5
    fi
}
# free_port: a TCP port on 127.0.0.1 that nothing listens on now
free_port() {
    python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'
}
# expect_policy_covers CMD SERVICES LOG...: every AWS action the fake logged (service:op,
# the scope's "monitoring" read as "cloudwatch") is one `bedtop help policy` allows and
# `bedtop CMD --help` lists: a request by a collector that did not name its action would be
# refused in an account given that policy. SERVICES: the services asked, sorted, spaced.
expect_policy_covers() {
    local cmd=$1 services=$2 asked missing a; shift 2
    "$BEDTOP" help policy >"$TMP/policy.json"
    "$BEDTOP" "$cmd" --help >"$TMP/$cmd-help.txt"
    asked=$(python3 -c "
import json, sys
svc = {'monitoring': 'cloudwatch'}
ops = set()
for f in sys.argv[1:]:
    for line in open(f):
        e = json.loads(line)
        if e.get('op'):
            ops.add(svc.get(e['service'], e['service']) + ':' + e['op'])
print(' '.join(sorted(ops)))" "$@")
    expect_eq "$cmd asked these services' actions" \
        "$(tr ' ' '\n' <<<"$asked" | sed 's/:.*//' | sort -u | paste -sd' ')" "$services"
    missing=$(python3 -c "
import json, sys
allowed = set(json.load(open(sys.argv[1]))['Statement'][0]['Action'])
print(' '.join(a for a in sys.argv[2].split() if a not in allowed))" "$TMP/policy.json" "$asked")
    expect_eq "every action $cmd asked is in bedtop help policy" "$missing" ""
    for a in $asked; do
        check "$cmd --help lists $a" grep -qE "^  $a( |\$)" "$TMP/$cmd-help.txt"
    done
}

# start_fake NAME [fake_aws.py args...]: the fake AWS endpoint on 127.0.0.1; its
# request log is $TMP/NAME.log, its stdout $TMP/NAME.out. Sets PORT (1 if it never came up).
start_fake() {
    local name=$1; shift
    python3 "$BEDTOP_SRCDIR/tests/fake/fake_aws.py" --log "$TMP/$name.log" "$@" \
        >"$TMP/$name.out" 2>"$TMP/$name.err" &
    CLEANUP+=("kill $!")
    PORT=
    local i
    for i in $(seq 1 100); do
        PORT=$(awk '/^PORT /{print $2}' "$TMP/$name.out")
        [ -n "$PORT" ] && return 0
        sleep 0.05
    done
    return 1
}
# The AWS documentation's example keys, every other AWS setting of the caller cleared
# and the instance-metadata address off: "${AWS_ENV[@]}" "$BEDTOP" ... (an array, not
# a function: "${AWS_ENV[@]}" cmd & makes $! the command itself, as env execs it)
AWS_SK='wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY'
AWS_ENV=(env -u AWS_PROFILE -u AWS_ENDPOINT_URL -u AWS_REGION -u AWS_DEFAULT_REGION -u AWS_SESSION_TOKEN
    AWS_ACCESS_KEY_ID=AKIDEXAMPLE AWS_SECRET_ACCESS_KEY="$AWS_SK" AWS_CONFIG_FILE=/nonexistent
    AWS_SHARED_CREDENTIALS_FILE=/nonexistent AWS_EC2_METADATA_DISABLED=true)
# haiku_scenario FILE START INVOCATIONS INPUT OUTPUT [FAULTS_JSON]: a fake_aws.py
# scenario of Claude 3 Haiku (on-demand) with constant per-minute Invocations,
# InputTokenCount and OutputTokenCount from epoch second START on, Service Quotas
# listing its 1,000,000 TPM quota, and the fault rules given (none by default)
haiku_scenario() {
    python3 - "$@" <<'PY'
import json, sys
out, start, inv, inp, outp = sys.argv[1], int(sys.argv[2]), *(json.loads(x) for x in sys.argv[3:6])
faults = json.loads(sys.argv[6]) if len(sys.argv) > 6 else []
mid = "anthropic.claude-3-haiku-20240307-v1:0"
def ser(metric, v):
    return {"namespace": "AWS/Bedrock", "metric": metric, "stat": "Sum",
            "dimensions": {"ModelId": mid}, "start": start, "generator": {"constant": v}}
sc = {"series": [ser("Invocations", inv), ser("InputTokenCount", inp), ser("OutputTokenCount", outp)],
      "quotas": [{"QuotaCode": "L-TEST1", "Value": 1000000,
                  "QuotaName": "On-demand model inference tokens per minute for Anthropic Claude 3 Haiku"}]}
if faults:
    sc["faults"] = faults
json.dump(sc, open(out, "w"))
PY
}
# stop_when PID CMD...: waits (0.1 s a try, at most 60 s) until CMD succeeds or PID
# has ended, then stops PID as a user would (SIGTERM); returns PID's exit code
stop_when() {
    local pid=$1 i; shift
    for i in $(seq 1 600); do
        "$@" && break
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.1
    done
    kill -TERM "$pid" 2>/dev/null
    wait "$pid"
}
finish() { echo "$PASS passed, $FAIL failed, $SKIP skipped"; [ "$FAIL" -eq 0 ]; }
