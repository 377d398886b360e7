#!/usr/bin/env bash
# Issue 38: serve evaluates and renders each data generation once. A live `bedtop serve`
# polling the fake AWS every 60 s; between its polls, scrapes a second and more apart of
# the poller's clock are sent the bytes of the one evaluation: the same strong ETag (one
# per evaluation, format and coding: its counter names the evaluation) and the same body,
# its bedtop_evaluation_timestamp_seconds and ages those of the evaluation. Before, serve
# evaluated again at each new second of its clock: every spaced scrape had a new tag, a new
# evaluation timestamp and a whole new render (59-63 ms for 500 routes, about 1 s for 5,000).
# The poller's clock moving is what is tested, so the scrapes are spaced by sleep 1.1; no
# result depends on how long a sleep lasts (a pair with a poll between them, seen by the
# request counters, is tried again).
. "$BEDTOP_SRCDIR/tests/lib.sh"
if ! command -v curl >/dev/null; then
    skip "curl is needed (BEDTOP_TEST_DEPS=1 scripts/deps)"
    finish; exit
fi
AWS_ENV+=(BEDTOP_DATADIR="$BEDTOP_SRCDIR/data")
start_fake fake --scenario "$BEDTOP_SRCDIR/tests/fake/scenario_fleet.json" || notok "fake AWS started"
FAKE=$PORT
SP=$(free_port)
"${AWS_ENV[@]}" "$BEDTOP" serve --listen "127.0.0.1:$SP" --config "$BEDTOP_SRCDIR/tests/fake/fleet.conf" \
    --endpoint-url "http://127.0.0.1:$FAKE" --interval 60 >/dev/null 2>"$TMP/serve.err" &
SERVE_PID=$!
CLEANUP+=("kill $SERVE_PID")
M="http://127.0.0.1:$SP/metrics"
polled() { curl -sS -m 5 "$M" | grep -q '^bedtop_headroom_ratio{route="hot"'; }
ok=1
for _ in $(seq 1 150); do polled && { ok=0; break; }; sleep 0.2; done
check "serve is up and has polled once" test "$ok" -eq 0
hdr() { tr -d '\r' <"$1" | sed -n "s/^$2: //Ip" | head -1; }
requests() { grep '^bedtop_api_requests_total\|^bedtop_cloudwatch_metrics_requested_total' "$1"; }
evaluated() { sed -n 's/^bedtop_evaluation_timestamp_seconds \([0-9]*\)$/\1/p' "$1"; }

# one pair of scrapes 1.1 s apart with no AWS request between them (then no new data):
# the request counters, read from plain scrapes before and after, did not move
pair() { # $1: extra curl arguments (a format, a coding)
    for _ in 1 2 3 4 5; do
        curl -s -m 10 -o "$TMP/c0.body" "$M"
        curl -s -m 10 -D "$TMP/a.h" -o "$TMP/a.body" $1 "$M"
        sleep 1.1
        curl -s -m 10 -D "$TMP/b.h" -o "$TMP/b.body" $1 "$M"
        curl -s -m 10 -o "$TMP/c1.body" "$M"
        [ -n "$(requests "$TMP/c0.body")" ] && [ "$(requests "$TMP/c0.body")" = "$(requests "$TMP/c1.body")" ] &&
            return 0
    done
    return 1
}

check "two plain scrapes 1.1 s apart with no poll between them" pair ""
A=$(hdr "$TMP/a.h" ETag); B=$(hdr "$TMP/b.h" ETag)
echo "# ETags: $A then $B; evaluated at $(evaluated "$TMP/a.body") then $(evaluated "$TMP/b.body")"
expect_eq "the second scrape of the generation is the same evaluation: the same ETag" "$B" "$A"
check "... the same bytes (no render of its own)" cmp -s "$TMP/a.body" "$TMP/b.body"
expect_eq "... and the same evaluation timestamp" "$(evaluated "$TMP/b.body")" "$(evaluated "$TMP/a.body")"
expect_eq "If-None-Match with the first scrape's tag a second later: 304" \
    "$(curl -s -m 5 -o /dev/null -w '%{http_code}' -H "If-None-Match: $A" "$M")" 304

check "two gzip scrapes 1.1 s apart with no poll between them" pair "--compressed"
expect_eq "gzip: the same ETag a second later" "$(hdr "$TMP/b.h" ETag)" "$(hdr "$TMP/a.h" ETag)"
check "... the same bytes" cmp -s "$TMP/a.body" "$TMP/b.body"
check "two OpenMetrics scrapes 1.1 s apart with no poll between them" \
    pair "-H Accept:application/openmetrics-text;version=1.0.0"
expect_eq "OpenMetrics: the same ETag a second later" "$(hdr "$TMP/b.h" ETag)" "$(hdr "$TMP/a.h" ETag)"
check "... the same bytes" cmp -s "$TMP/a.body" "$TMP/b.body"
check "serve said nothing of an error" bash -c "! grep -qi 'error\|fail' '$TMP/serve.err'"

# Issue 38: a generation's first gzip scrape is rendered straight into its gzip (the
# plain body is never built whole); a plain scrape of the same evaluation afterwards is
# that gzip inflated: the same bytes, the same evaluation's tag. serve --demo-at stands
# still, so every scrape here is one evaluation.
DP=$(free_port)
"$BEDTOP" serve --demo --demo-at 13 --listen "127.0.0.1:$DP" >/dev/null 2>"$TMP/demo.err" &
DEMO_PID=$!
CLEANUP+=("kill $DEMO_PID")
D="http://127.0.0.1:$DP/metrics"
for _ in $(seq 1 100); do curl -s -m 5 -o /dev/null -f "http://127.0.0.1:$DP/healthz" && break; sleep 0.1; done
OM="Accept: application/openmetrics-text; version=1.0.0"
curl -s -m 10 -D "$TMP/g.h" -o "$TMP/g.gz" -H "$OM" -H "Accept-Encoding: gzip" "$D"
curl -s -m 10 -D "$TMP/p.h" -o "$TMP/p.body" -H "$OM" "$D"
expect_eq "gzip first: the answer is gzip-coded" "$(hdr "$TMP/g.h" Content-Encoding)" "gzip"
check "... a plain scrape after it is that gzip inflated, byte for byte" \
    bash -c "gzip -dc '$TMP/g.gz' | cmp -s - '$TMP/p.body'"
check "... a whole OpenMetrics body (# EOF last)" bash -c "tail -1 '$TMP/p.body' | grep -q '^# EOF'"
G=$(hdr "$TMP/g.h" ETag); P=$(hdr "$TMP/p.h" ETag)
expect_eq "... of the same evaluation: its tag is the gzip's without -gz" "${G/-gz\"/\"}" "$P"
finish
