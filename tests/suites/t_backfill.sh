# Backfill: `bedtop record FILE --since 20m` builds a recording from CloudWatch
# history served by the fake; the minutes and values must come back exactly.
. "$BEDTOP_SRCDIR/tests/lib.sh"
SK='wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY'
NOW=$(date +%s)
# 40 minutes of data before NOW's minute and 5 after it, oldest first: the record below
# asks for the 20 minutes before ITS now, which a loaded machine can push past a minute
# boundary after NOW (the window then ends a minute later); data that stopped at NOW's
# minute left that last minute empty, and the export check failed about one run in three
# under load (issue 26 item 10). Minutes after now are never asked for.
START=$(( (NOW / 60) * 60 - 40 * 60 ))
# Invocations at minute i (i = 0 at START) = 100 + i; input = 1000 x invocations;
# output = 200 x invocations; quota 1,000,000 TPM applied.
python3 - "$TMP/scen.json" "$START" <<'PY'
import json, sys
start = int(sys.argv[2]); n = 45
mid = "anthropic.claude-3-haiku-20240307-v1:0"
def ser(metric, f):
    return {"namespace": "AWS/Bedrock", "metric": metric, "stat": "Sum",
            "dimensions": {"ModelId": mid}, "start": start, "values": [f(i) for i in range(n)]}
json.dump({"series": [ser("Invocations", lambda i: 100 + i),
                      ser("InputTokenCount", lambda i: 1000 * (100 + i)),
                      ser("OutputTokenCount", lambda i: 200 * (100 + i))],
           "quotas": [{"QuotaCode": "L-TEST1", "Value": 1000000,
                       "QuotaName": "On-demand model inference tokens per minute for Anthropic Claude 3 Haiku"}]},
          open(sys.argv[1], "w"))
PY
printf '[bedtop]\nregion = us-east-1\n[route haiku]\nmodel = anthropic.claude-3-haiku-20240307-v1:0\nmax_tokens = 500\n' >"$TMP/b.conf"
start_fake fake --scenario "$TMP/scen.json"
run() {
    env -u AWS_PROFILE -u AWS_ENDPOINT_URL -u AWS_REGION -u AWS_DEFAULT_REGION -u AWS_SESSION_TOKEN \
        AWS_ACCESS_KEY_ID=AKIDEXAMPLE AWS_SECRET_ACCESS_KEY="$SK" AWS_CONFIG_FILE=/nonexistent \
        AWS_SHARED_CREDENTIALS_FILE=/nonexistent AWS_EC2_METADATA_DISABLED=true \
        "$BEDTOP" "$@" --config "$TMP/b.conf" --endpoint-url "http://127.0.0.1:$PORT"
}
run record "$TMP/bf.rec" --since 20m 2>"$TMP/bf.err"
expect_eq "backfill exits 0" "$?" 0
check "backfill says how many minutes" grep -q "backfilled 20 minutes" "$TMP/bf.err"
expect_eq "backfill recording is 0600" "$(stat -c %a "$TMP/bf.rec")" 600
# The request asked for exactly the 20 whole minutes before now.
check "GetMetricData asked for the window" python3 - "$TMP/fake.log" "$NOW" <<'PY'
import json, sys
now = int(sys.argv[2]); to = (now // 60) * 60; frm = to - 20 * 60
reqs = [json.loads(l) for l in open(sys.argv[1]) if '"GetMetricData"' in l]
b = reqs[0]["body"]
sys.exit(0 if (b["StartTime"], b["EndTime"]) in ((frm, to), (frm + 60, to + 60)) else 1)
PY
"$BEDTOP" export "$TMP/bf.rec" --format csv >"$TMP/bf.csv"
# 20 minutes, each invocations = 100 + (minute - START)/60, and headroom from the formulas:
# reserved = input + inv x 500 = 1,500 x inv; settled = input + output x 5 (Claude 3 Haiku)
# = 2,000 x inv, the larger: used = 2,000 x inv; headroom = 1,000,000 - 2,000 x inv.
check "export: every backfilled minute with the served values and headroom" python3 - "$TMP/bf.csv" "$START" <<'PY'
import csv, sys, datetime
start = int(sys.argv[2]); rows = list(csv.DictReader(open(sys.argv[1])))
assert len(rows) == 20, len(rows)
for r in rows:
    t = int(datetime.datetime.strptime(r["time"], "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=datetime.timezone.utc).timestamp())
    inv = 100 + (t - start) // 60
    assert float(r["invocations"]) == inv, (r["time"], r["invocations"], inv)
    assert float(r["input_tokens"]) == 1000 * inv and float(r["output_tokens"]) == 200 * inv
    assert float(r["reserved_tpm"]) == 1500 * inv, r["reserved_tpm"]
    assert float(r["headroom_tpm"]) == 1000000 - 2000 * inv, r["headroom_tpm"]
    assert r["quota_source"] == "service-quotas"
PY
last=$(tail -1 "$TMP/bf.rec" | python3 -c 'import json,sys; print(json.load(sys.stdin)["t"])')
"$BEDTOP" replay "$TMP/bf.rec" --at -0m >"$TMP/bf.txt"
check "replay of a backfill says admission counters are absent" grep -q "no admission counters" "$TMP/bf.txt"
expect_rc "--since and --from together are refused" 3 run record "$TMP/x.rec" --since 1h --from -2h
expect_rc "a window beyond 15 days is refused" 3 run record "$TMP/y.rec" --since 16d
expect_rc "the demo has no history to backfill" 3 "$BEDTOP" record "$TMP/z.rec" --demo --since 1h
finish
