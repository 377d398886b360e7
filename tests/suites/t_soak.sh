#!/usr/bin/env bash
# Soak: a week of the demo on the unpaced simulated clock (--demo-speed max: 7
# simulated days in a second or two, the same run on an idle or a loaded machine),
# then a short
# live run against the fake AWS endpoint and an admission endpoint (real HTTP,
# real connections; live time cannot be accelerated). /proc/PID/status VmRSS and
# /proc/PID/fd are sampled while each runs:
#   - resident memory flat after warm-up: once the store's rings are full (for the
#     demo week: from simulated day 2 on, history being one day; read from the
#     recording itself, so a loaded machine that runs the first day slowly cannot
#     move the boundary), the rest of the run grows less than 10 % over its start;
#   - no file-descriptor growth: the second half never holds more fds than the
#     first half did (connections are reused or closed, none leak);
#   - no lost recording lines: lines after the header == the polls bedtop reports,
#     every one valid JSON, times non-decreasing, none skipped by replay, and the
#     demo recording spans the 7 days.
. "$BEDTOP_SRCDIR/tests/lib.sh"
FAKE=$BEDTOP_SRCDIR/tests/fake/fake_aws.py
ADM=$BEDTOP_SRCDIR/tests/fake/admission_server.py
SK='wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY'

# sample PID OUT [REC]: "rss_kb nfds [t]" every 0.1 s while PID lives; t is the
# simulated time of the newest poll in the recording REC (0 before the first)
sample() {
    while [ -d "/proc/$1" ]; do
        local rss fds t=
        rss=$(awk '/^VmRSS/{print $2}' "/proc/$1/status" 2>/dev/null)
        fds=$(ls "/proc/$1/fd" 2>/dev/null | wc -l)
        if [ -n "${3:-}" ]; then
            t=$(tail -c 4096 "$3" 2>/dev/null | grep -o '"t":[0-9]*' | tail -1 | cut -d: -f2)
            t=${t:-0}
        fi
        [ -n "$rss" ] && echo "$rss $fds $t"
        sleep 0.1
    done >"$2"
}

# judge NAME SAMPLES [WARMUP_S]: memory and fd assertions over the samples. With
# WARMUP_S the samples carry the simulated time: "after warm-up" is every sample
# WARMUP_S past the first poll; without it, the second half of the samples.
judge() {
    local name=$1 f=$2 verdict
    verdict=$(python3 - "$f" "${3:-}" <<'PY'
import sys
warm = int(sys.argv[2]) if sys.argv[2] else None
S = [tuple(map(int, l.split())) for l in open(sys.argv[1])
     if len(l.split()) == (3 if warm is not None else 2)]
if warm is not None:
    t0 = min((s[2] for s in S if s[2] > 0), default=0)
    second = [s for s in S if t0 and s[2] >= t0 + warm]
    first = [s for s in S if s not in second]
    if len(second) < 5 or not first:
        print("few %d" % len(second)); sys.exit()
else:
    if len(S) < 10:
        print("few %d" % len(S)); sys.exit()
    half = len(S) // 2
    first, second = S[:half], S[half:]
mid_rss = second[0][0]
grow = max(s[0] for s in second) / mid_rss - 1
print("ok" if grow < 0.10 else "grow", "%.1f" % (grow * 100), len(S), mid_rss,
      max(s[0] for s in second), max(s[1] for s in first), max(s[1] for s in second))
PY
)
    set -- $verdict
    if [ "$1" = few ]; then
        notok "$name: too few samples ($2) to judge memory"
        return
    fi
    # fields: verdict growth% nsamples rss_mid rss_max2 fd_max1 fd_max2
    if [ -n "${ASAN_OPTIONS:-}" ]; then
        # ASan's quarantine holds freed memory on purpose: RSS says nothing there
        ok "$name: RSS not judged under AddressSanitizer (+$2 %, $3 samples)"
    else
        check "$name: RSS flat after warm-up (+$2 %: ${4} -> max ${5} kB, $3 samples)" test "$1" = ok
    fi
    check "$name: no fd growth (max $6 during warm-up, $7 after)" test "$7" -le "$6"
}

# lines_ok NAME REC ERR: recording lines == polls reported, all valid, ordered
lines_ok() {
    local name=$1 rec=$2 err=$3 reported lines
    reported=$(sed -n 's/^bedtop: recorded \([0-9]*\) poll.*/\1/p' "$err")
    lines=$(($(wc -l <"$rec") - 1))
    expect_eq "$name: recording lines == polls reported ($reported)" "$lines" "${reported:-none}"
    expect_eq "$name: every line valid JSON with non-decreasing times" \
        "$(python3 -c "
import json,sys
L=[json.loads(x) for x in open(sys.argv[1])]
ts=[l['t'] for l in L[1:]]
print(all(a<=b for a,b in zip(ts,ts[1:])) and len(ts) > 0)" "$rec" 2>&1)" True
    "$BEDTOP" replay "$rec" --at -1m --format json >"$TMP/$name.replay" 2>"$TMP/$name.rerr"
    expect_eq "$name: replay skips no line" "$(grep -c 'line skipped' "$TMP/$name.rerr")" 0
}

# ---- a week of the demo
"$BEDTOP" record "$TMP/week.rec" --demo --demo-speed max --duration 7d 2>"$TMP/week.err" &
pid=$!
sample "$pid" "$TMP/week.samples" "$TMP/week.rec" &
spid=$!
wait "$pid"
rc=$?
wait "$spid"
expect_eq "demo week: record exits 0" "$rc" 0
judge "demo week" "$TMP/week.samples" $((2 * 86400))
lines_ok week "$TMP/week.rec" "$TMP/week.err"
expect_eq "demo week: the recording spans 7 days (first to last poll, in days)" \
    "$(python3 -c "
import json,sys
L=[json.loads(x) for x in open(sys.argv[1])]
print(round((L[-1]['t'] - L[1]['t']) / 86400))" "$TMP/week.rec" 2>&1)" 7

# ---- live: CloudWatch every 10 s, admission scraped every second, 20 s
python3 "$FAKE" --scenario "$BEDTOP_SRCDIR/tests/fake/scenario_integration.json" >"$TMP/fake.out" 2>&1 &
CLEANUP+=("kill $!")
PYTHONUNBUFFERED=1 python3 "$ADM" >"$TMP/adm.out" 2>&1 &
CLEANUP+=("kill $!")
port= aport=
for i in $(seq 1 100); do
    port=$(awk '/^PORT /{print $2}' "$TMP/fake.out")
    aport=$(grep -Eo '[0-9]+' "$TMP/adm.out" | head -1)
    [ -n "$port" ] && [ -n "$aport" ] && break
    sleep 0.05
done
env -u AWS_PROFILE -u AWS_ENDPOINT_URL -u AWS_REGION -u AWS_DEFAULT_REGION \
    AWS_ACCESS_KEY_ID=AKIDEXAMPLE AWS_SECRET_ACCESS_KEY="$SK" \
    AWS_CONFIG_FILE=/nonexistent AWS_SHARED_CREDENTIALS_FILE=/nonexistent \
    AWS_EC2_METADATA_DISABLED=true BEDTOP_DATADIR="$BEDTOP_SRCDIR/data" \
    "$BEDTOP" record "$TMP/live.rec" --interval 1 --duration 20s \
    --config "$BEDTOP_SRCDIR/tests/fake/integration.conf" --endpoint-url "http://127.0.0.1:${port:-1}" \
    --admission "http://127.0.0.1:${aport:-1}/text/triage" 2>"$TMP/live.err" &
pid=$!
sample "$pid" "$TMP/live.samples" &
spid=$!
wait "$pid"
rc=$?
wait "$spid"
expect_eq "live: record exits 0" "$rc" 0
judge "live" "$TMP/live.samples"
lines_ok live "$TMP/live.rec" "$TMP/live.err"
check "live: admission scrapes recorded (ok events)" grep -q '"type":"ok","route":0,"source":"admission"' "$TMP/live.rec"
finish
