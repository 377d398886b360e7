#!/usr/bin/env bash
# The benchmark generator (tests/bench/gen.py) must not rot: a tiny synthetic
# recording opens with `bedtop replay --at`, with no line skipped, and bedtop's
# numbers equal the ones worked out from the file itself (docs/headroom.md: settled =
# input + cache write + output x burndown, at the newest minute visible).
. "$BEDTOP_SRCDIR/tests/lib.sh"
GEN=$BEDTOP_SRCDIR/tests/bench/gen.py

check "generator writes a 3-route, 30-minute recording" \
    python3 "$GEN" recording "$TMP/a.rec" --routes 3 --hours 0.5 --seed 7
expect_eq "one header line and one poll line per minute" "$(wc -l <"$TMP/a.rec")" 31
expect_eq "recording is created 0600" "$(stat -c %a "$TMP/a.rec")" 600
python3 "$GEN" recording "$TMP/b.rec" --routes 3 --hours 0.5 --seed 7
check "same seed, same bytes" cmp -s "$TMP/a.rec" "$TMP/b.rec"

"$BEDTOP" replay "$TMP/a.rec" --at +20m --format json >"$TMP/r.json" 2>"$TMP/r.err"
rc=$?
check "replay --at opens it (exit 0-2, not 3: $rc)" test "$rc" -le 2
# the generator writes no price rows: the one line replay says about that, nothing else
check "no line skipped or error" bash -c "! grep -qv 'carries no price rows (written before format 2.2)' '$TMP/r.err'"
expect_eq "the three routes, named as in the header" \
    "$(python3 -c 'import json,sys; print(" ".join(r["name"] for r in json.load(open(sys.argv[1]))["routes"]))' "$TMP/r.json")" \
    "r000 r001 r002"

# The same numbers worked out from the file: quota from the header, settled from
# the newest minute whose samples had arrived by the instant --at showed.
check "settled TPM and quota per route equal the file's own numbers" python3 - "$TMP/a.rec" "$TMP/r.json" <<'PY'
import json, sys
lines = open(sys.argv[1]).read().splitlines()
hdr = json.loads(lines[0])
polls = [json.loads(x) for x in lines[1:]]
import calendar, time
report = json.load(open(sys.argv[2]))
# --at +20m: data minute 20 min after the first, shown at the instant the report names
at = calendar.timegm(time.strptime(report["generated_at"], "%Y-%m-%dT%H:%M:%SZ"))
rep = {r["name"]: r for r in report["routes"]}
bad = 0
for i, route in enumerate(hdr["routes"]):
    cw = {}
    for p in polls:
        for r, m, arr, kv in p["s"]:
            if r == i and arr <= at and kv[0] == 0:
                cw[m] = dict(zip(kv[0::2], kv[1::2]))
    m = max(cw)
    v = cw[m]
    settled = v[1] + v[4] + v[2] * route["burndown"]
    got = rep[route["name"]]
    if got["tpm"]["settled"] != settled or got["quota"]["tpm"] != route["quotas"]["tpm"]["value"]:
        print("# %s: settled %s want %s, quota %s want %s" % (route["name"], got["tpm"]["settled"],
              settled, got["quota"]["tpm"], route["quotas"]["tpm"]["value"]))
        bad = 1
sys.exit(bad)
PY

check "generator writes a config and a fake scenario for 4 routes" \
    python3 "$GEN" config "$TMP/b.conf" --routes 4
python3 "$GEN" scenario "$TMP/s.json" --routes 4 --minutes 5
expect_eq "scenario: 14 metrics x 4 routes" \
    "$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["series"]))' "$TMP/s.json")" 56
expect_eq "config: 4 routes" "$(grep -c '^\[route ' "$TMP/b.conf")" 4
python3 "$GEN" config "$TMP/nq.conf" --routes 4 --no-quota
expect_eq "config --no-quota: no quota_tpm (quotas come from Service Quotas)" \
    "$(grep -c '^quota_tpm' "$TMP/nq.conf")" 0

# The stub (tests/bench/stub_aws.py) answers what bedtop asks at fleet scale: 6 routes,
# quotas for the first 3 (by UsageMetric ModelId), so check matches exactly those 3.
python3 "$BEDTOP_SRCDIR/tests/bench/stub_aws.py" --routes 6 --quotas 3 >"$TMP/stub.out" 2>&1 &
stub=$!
for _ in $(seq 100); do grep -q '^PORT ' "$TMP/stub.out" && break; sleep 0.1; done
port=$(awk '/^PORT/{print $2}' "$TMP/stub.out")
python3 "$GEN" config "$TMP/s6.conf" --routes 6 --no-quota
env -u AWS_PROFILE AWS_ACCESS_KEY_ID=AKIDEXAMPLE AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY \
    AWS_CONFIG_FILE=/nonexistent AWS_SHARED_CREDENTIALS_FILE=/nonexistent AWS_EC2_METADATA_DISABLED=true \
    "$BEDTOP" check --format json --config "$TMP/s6.conf" --endpoint-url "http://127.0.0.1:$port" \
    >"$TMP/s6.json" 2>"$TMP/s6.err"
rc=$?
kill "$stub" 2>/dev/null; wait "$stub" 2>/dev/null
check "check against the stub exits 0-2 ($rc)" test "$rc" -le 2
expect_eq "the stub's quotas match by UsageMetric for routes 0-2, none for 3-5" \
    "$(python3 -c 'import json,sys; print(" ".join(str(r["quota"]["matched_by"]) for r in json.load(open(sys.argv[1]))["routes"]))' "$TMP/s6.json")" \
    "usage-metric usage-metric usage-metric None None None"
expect_eq "every route has its settled tokens from the stub (240000 + 12000 + 36000 x burndown)" \
    "$(python3 -c 'import json,sys; print(sum(1 for r in json.load(open(sys.argv[1]))["routes"] if r["tpm"]["settled"]))' "$TMP/s6.json")" 6

# The bench itself at small sizes (--smoke: fleets of 20-200 routes; figures printed, never
# asserted: only that each part ran and printed its lines, with no traceback).
DRV=$TESTBIN/../bench/bench_drv
check "bench_drv is built with the tests" test -x "$DRV"
python3 "$BEDTOP_SRCDIR/tests/bench/bench.py" --bedtop "$BEDTOP" --drv "$DRV" --smoke --runs 1 \
    --only check,scale,serve >"$TMP/bench.out" 2>&1
rc=$?
check "bench.py --smoke --only check,scale,serve exits 0 ($rc)" test "$rc" -eq 0
check "no traceback" sh -c '! grep -q Traceback "$1"' sh "$TMP/bench.out"
for f in "check, 20 routes vs one curl" "check, 60 routes vs one curl" \
         "fleet, 40 routes / 20 quotas: first poll CPU" "fleet, 40 routes: steady poll CPU" \
         "fleet, 40 routes: memory per route" "check, 200 routes:" "serve, 20 routes: CPU per gzip scrape" \
         "serve, 20 routes: CPU per gzip scrape spaced 1.1 s"; do
    check "bench prints '$f'" grep -qF "$f" "$TMP/bench.out"
done
python3 "$BEDTOP_SRCDIR/tests/bench/bench.py" --bedtop "$BEDTOP" --drv "$DRV" --smoke --runs 1 \
    --only groups >"$TMP/groups.out" 2>&1
rc=$?
check "bench.py --smoke --only groups exits 0 ($rc)" test "$rc" -eq 0
for f in "groups: evaluate 500 routes on one quota" "groups: evaluate 2000 routes on one quota" \
         "groups: check start-up, 2000 routes on one model (CPU)"; do
    check "bench prints '$f'" grep -qF "$f" "$TMP/groups.out"
done
python3 "$BEDTOP_SRCDIR/tests/bench/bench.py" --bedtop "$BEDTOP" --drv "$DRV" --smoke --runs 1 \
    --only export >"$TMP/export.out" 2>&1
rc=$?
check "bench.py --smoke --only export exits 0 ($rc)" test "$rc" -eq 0
for f in "export: 4 h x 20 routes, CSV (CPU)" "export growth: 4 h against 0.5 h, CSV to /dev/null (CPU)" \
         "export growth: 4 h against 0.5 h, JSON to /dev/null (CPU)" "export: peak resident memory (4 h x 20 routes)"; do
    check "bench prints '$f'" grep -qF "$f" "$TMP/export.out"
done
check "bench prints 'fleet, 40 routes: peak memory per route'" \
    grep -qF "fleet, 40 routes: peak memory per route" "$TMP/bench.out"
# the busy fleet's API cost (issue 38): 40 routes, an hour of polls against the stub
python3 "$BEDTOP_SRCDIR/tests/bench/bench.py" --bedtop "$BEDTOP" --drv "$DRV" --smoke --runs 1 \
    --only busy >"$TMP/busy.out" 2>&1
rc=$?
check "bench.py --smoke --only busy exits 0 ($rc)" test "$rc" -eq 0
for f in "API cost, busy fleet of 40 (the fleet bench's shape): metrics per route-hour" \
         "API cost, busy fleet of 40: minutes fetched again once settled: 0 minutes"; do
    check "bench prints '$f'" grep -qF "$f" "$TMP/busy.out"
done
python3 "$BEDTOP_SRCDIR/tests/bench/bench.py" --bedtop "$BEDTOP" --drv "$DRV" --smoke --runs 1 \
    --only discover >"$TMP/discover.out" 2>&1
rc=$?
check "bench.py --smoke --only discover exits 0 ($rc)" test "$rc" -eq 0
check "bench prints 'discovery: ListMetrics of 800 routes against 200'" \
    grep -qF "discovery: ListMetrics of 800 routes against 200 (CPU)" "$TMP/discover.out"
check "discovery matched every one of the 800 routes to its listed metrics" \
    grep -qF "800 routes matched" "$TMP/discover.out"
check "the fleet's 20 quotas matched their 20 routes, each with usage (bench_drv scale)" \
    grep -qF "20 of 40 routes with a quota and usage" "$TMP/bench.out"
python3 "$BEDTOP_SRCDIR/tests/bench/bench.py" --bedtop "$BEDTOP" --drv "$DRV" --smoke --runs 1 \
    --only shares >"$TMP/shares.out" 2>&1
rc=$?
check "bench.py --smoke --only shares exits 0 ($rc)" test "$rc" -eq 0
check "bench prints 'shares: a 40-route poll with shares by 20 teams vs without'" \
    grep -qF "shares: a 40-route poll with shares by 20 teams vs without (CPU)" "$TMP/shares.out"
check "every route's 3 team series told apart (40 x 3 team shares; bench_drv shares)" \
    grep -qF "120 team shares told apart" "$TMP/shares.out"
finish
