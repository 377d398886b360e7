#!/usr/bin/env bash
# Issue 25, serve's /metrics built once per evaluation, and an HA pair. Real sockets over
# loopback to a real `bedtop serve --demo --demo-at 16`: the demo's clock stands still at
# minute 16, so there is one evaluation and its entity tag holds for as long as the test
# runs (no wall-clock pacing decides anything).
#   - the plain and gzip bodies are made once per evaluation and sent to every scrape:
#     gzip scrapes cost serve about what plain ones do (CPU ticks from /proc/PID/stat, a
#     ratio of two windows of the same process, as t_serve_clients judges CPU); before,
#     each gzip scrape deflated the whole body again (about 2 ms a scrape for this
#     114 kB body: 1,000 scrapes, some 70 ticks, against a few for plain ones)
#   - ETag (strong, one per evaluation, format and coding) with If-None-Match -> 304, and
#     Last-Modified with If-Modified-Since -> 304 (RFC 9110 13.1, 13.2.2, 15.4.5)
#   - two serves with --replica a / b: the same series, apart from the replica label
. "$BEDTOP_SRCDIR/tests/lib.sh"
if ! command -v curl >/dev/null; then
    skip "curl is needed (BEDTOP_TEST_DEPS=1 scripts/deps)"
    finish; exit
fi
M() { echo "http://127.0.0.1:$1/metrics"; }
wait_up() {
    for _ in $(seq 1 100); do
        curl -s -m 5 "$(M "$1")" | grep -q '^bedtop_route_status{route="triage"' && return 0
        sleep 0.1
    done
    return 1
}
SP=$(free_port)
"$BEDTOP" serve --demo --demo-at 16 --listen "127.0.0.1:$SP" >/dev/null 2>"$TMP/serve.err" &
SERVE_PID=$!
CLEANUP+=("kill $SERVE_PID")
check "serve --demo --demo-at 16 answers /metrics" wait_up "$SP"

# ---- one body per evaluation, plain and gzip ----
hdr() { tr -d '\r' <"$1" | sed -n "s/^$2: //Ip" | head -1; }
curl -s -m 5 -D "$TMP/p.h" -o "$TMP/p.body" "$(M "$SP")"
curl -s -m 5 -D "$TMP/z.h" -o "$TMP/z.body" -H 'Accept-Encoding: gzip' "$(M "$SP")"
curl -s -m 5 -D "$TMP/o.h" -o "$TMP/o.body" -H 'Accept: application/openmetrics-text; version=1.0.0' "$(M "$SP")"
PTAG=$(hdr "$TMP/p.h" ETag); ZTAG=$(hdr "$TMP/z.h" ETag); OTAG=$(hdr "$TMP/o.h" ETag)
echo "# ETags: plain $PTAG, gzip $ZTAG, OpenMetrics $OTAG"
check "a strong ETag (quoted, not W/)" bash -c "[[ '$PTAG' == '\"'*'\"' ]]"
check "the gzip answer is Content-Encoding gzip" grep -qi '^Content-Encoding: gzip' "$TMP/z.h"
check "... and inflates to the plain body, byte for byte (the same evaluation)" \
    bash -c "gzip -dc '$TMP/z.body' | cmp -s - '$TMP/p.body'"
check "plain, gzip and OpenMetrics have three different tags" \
    bash -c "[ '$PTAG' != '$ZTAG' ] && [ '$PTAG' != '$OTAG' ] && [ '$ZTAG' != '$OTAG' ]"
check "Vary: Accept, Accept-Encoding (the body depends on both)" \
    grep -qi '^Vary: Accept, Accept-Encoding' "$TMP/p.h"
check "Cache-Control: no-cache (stored only to be revalidated), not no-store" \
    grep -qi '^Cache-Control: no-cache' "$TMP/p.h"
curl -s -m 5 -D "$TMP/p2.h" -o "$TMP/p2.body" "$(M "$SP")"
expect_eq "a second scrape of the standing evaluation: the same tag" "$(hdr "$TMP/p2.h" ETag)" "$PTAG"
check "... and the same bytes" cmp -s "$TMP/p.body" "$TMP/p2.body"

# ---- conditional requests ----
code() { curl -s -m 5 -o "$TMP/c.body" -D "$TMP/c.h" -w '%{http_code}' "$@" "$(M "$SP")"; }
expect_eq "If-None-Match with the tag: 304" "$(code -H "If-None-Match: $PTAG")" 304
check "... with no body" test ! -s "$TMP/c.body"
expect_eq "... carrying the tag" "$(hdr "$TMP/c.h" ETag)" "$PTAG"
check "... and no Content-Encoding or Content-Length" \
    bash -c "! grep -qi '^Content-Encoding\|^Content-Length' '$TMP/c.h'"
expect_eq "If-None-Match listing it among others (weakly): 304" \
    "$(code -H "If-None-Match: \"other\", W/$PTAG")" 304
expect_eq "If-None-Match: * : 304" "$(code -H 'If-None-Match: *')" 304
expect_eq "If-None-Match with the gzip tag on a gzip request: 304" \
    "$(code -H 'Accept-Encoding: gzip' -H "If-None-Match: $ZTAG")" 304
expect_eq "... but the plain tag on a gzip request: 200 (another representation)" \
    "$(code -H 'Accept-Encoding: gzip' -H "If-None-Match: $PTAG")" 200
expect_eq "HEAD with the tag: 304 too" "$(code -I -H "If-None-Match: $PTAG")" 304
expect_eq "a tag of another evaluation: 200 with the body" "$(code -H 'If-None-Match: "0-0-text"')" 200
check "... the whole body" cmp -s "$TMP/c.body" "$TMP/p.body"
LM=$(hdr "$TMP/p.h" Last-Modified)
LMS=$(date -u -d "$LM" +%s)
BEFORE=$(date -u -d "@$((LMS - 1))" '+%a, %d %b %Y %H:%M:%S GMT')
echo "# Last-Modified: $LM; a second before: $BEFORE"
check "Last-Modified is an IMF-fixdate" bash -c "[[ '$LM' =~ ^[A-Z][a-z]{2},\ [0-9]{2}\ [A-Z][a-z]{2}\ [0-9]{4}\ [0-9:]{8}\ GMT$ ]]"
expect_eq "If-Modified-Since at Last-Modified: 304" "$(code -H "If-Modified-Since: $LM")" 304
expect_eq "If-Modified-Since a second before it: 200" "$(code -H "If-Modified-Since: $BEFORE")" 200
expect_eq "If-None-Match decides over If-Modified-Since (a stale tag, a current date): 200" \
    "$(code -H 'If-None-Match: "0-0-text"' -H "If-Modified-Since: $LM")" 200
expect_eq "an If-Modified-Since that is no date is ignored: 200" \
    "$(code -H 'If-Modified-Since: yesterday')" 200
expect_eq "/healthz has no validator: no-store, no ETag" \
    "$(curl -s -m 5 -D - -o /dev/null "http://127.0.0.1:$SP/healthz" | tr -d '\r' | grep -ci '^ETag:\|^Cache-Control: no-store')" 1

# ---- gzip scrapes cost what plain ones do: the gzip is made once, not per scrape ----
python3 - "$SERVE_PID" "$SP" >"$TMP/cpu.txt" 2>&1 <<'PY'
import http.client, sys
pid, port = int(sys.argv[1]), int(sys.argv[2])
def ticks():
    f = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return int(f[11]) + int(f[12])
def scrapes(n, headers):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    t0 = ticks()
    for _ in range(n):
        c.request("GET", "/metrics", headers=headers)
        r = c.getresponse()
        r.read()
        assert r.status == 200
    c.close()
    return ticks() - t0
plain = scrapes(1000, {})
gz = scrapes(1000, {"Accept-Encoding": "gzip"})
print(plain, gz)
PY
read -r PLAIN GZ <"$TMP/cpu.txt"
echo "# serve's CPU ticks for 1,000 scrapes: plain ${PLAIN:-?}, gzip ${GZ:-?}"
# 5 ticks added to each side so two near-idle windows compare as about 1
check "1,000 gzip scrapes cost serve under 3x what 1,000 plain ones do ((gzip+5)/(plain+5) < 3)" \
    python3 -c "import sys; p, g = int(sys.argv[1]), int(sys.argv[2]); sys.exit(0 if (g + 5) / (p + 5) < 3 else 1)" \
    "${PLAIN:-0}" "${GZ:-999}"

# ---- an HA pair: two serves, --replica a and b, identical series apart from replica ----
A=$(free_port)
"$BEDTOP" serve --demo --demo-at 16 --replica a --listen "127.0.0.1:$A" >/dev/null 2>"$TMP/a.err" &
CLEANUP+=("kill $!")
B=$(free_port)
"$BEDTOP" serve --demo --demo-at 16 --replica b --listen "127.0.0.1:$B" >/dev/null 2>"$TMP/b.err" &
CLEANUP+=("kill $!")
check "replica a is up" wait_up "$A"
check "replica b is up" wait_up "$B"
curl -s -m 5 "$(M "$A")" >"$TMP/a.prom"
curl -s -m 5 "$(M "$B")" >"$TMP/b.prom"
na=$(grep -vc '^#' "$TMP/a.prom")
expect_eq "every sample of replica a says replica=\"a\" ($na samples)" \
    "$(grep -v '^#' "$TMP/a.prom" | grep -c ',replica="a"}\|{replica="a"}')" "$na"
check "... as the last label, after the route's and mode=\"demo\"" \
    grep -q '^bedtop_route_status{route="triage",.*,mode="demo",replica="a"} ' "$TMP/a.prom"
check "the two replicas' series are identical apart from replica" \
    bash -c "diff <(sed 's/replica=\"a\"/replica=R/' '$TMP/a.prom') <(sed 's/replica=\"b\"/replica=R/' '$TMP/b.prom')"
check "... and, without it, the same as a serve with no --replica" \
    bash -c "diff <(sed 's/,replica=\"a\"//; s/{replica=\"a\"}//' '$TMP/a.prom') '$TMP/p.body'"
if command -v promtool >/dev/null; then
    check "promtool check metrics accepts the replica's exposition" bash -c "promtool check metrics <'$TMP/a.prom'"
else
    skip "promtool check metrics (BEDTOP_TEST_DEPS=1 scripts/deps)"
fi
# the HA pair as examples/prometheus/prometheus.yml scrapes it (its metric_relabel_configs
# taken from the file): a real Prometheus, then one series per route once replica goes
if command -v prometheus >/dev/null; then
    PP=$(free_port)
    mkdir -p "$TMP/prom"
    {
        printf 'global:\n  scrape_interval: 1s\nscrape_configs:\n  - job_name: bedtop\n'
        printf '    static_configs:\n      - targets: ["127.0.0.1:%s", "127.0.0.1:%s"]\n' "$A" "$B"
        printf '        labels:\n          pair: demo-pair\n'
        sed -n '/^    metric_relabel_configs:/,$p' "$BEDTOP_SRCDIR/examples/prometheus/prometheus.yml"
    } >"$TMP/prom/prometheus.yml"
    prometheus --config.file="$TMP/prom/prometheus.yml" --storage.tsdb.path="$TMP/prom/data" \
        --web.listen-address="127.0.0.1:$PP" >"$TMP/prom.log" 2>&1 &
    CLEANUP+=("kill $!")
    q() { curl -s -m 10 "http://127.0.0.1:$PP/api/v1/query" --data-urlencode "query=$1" |
          python3 -c 'import json,sys; r=json.load(sys.stdin)["data"]["result"]; print(" ".join(sorted(x["value"][1] for x in r)))' 2>/dev/null; }
    both() { [ "$(q 'count(up{job="bedtop"} == 1)')" = 2 ] && [ -n "$(q 'count by (replica) (bedtop_route_status)')" ] &&
             [ "$(q 'count(count by (replica) (bedtop_route_status))')" = 2 ]; }
    ok_both=1
    for _ in $(seq 1 300); do both && { ok_both=0; break; }; sleep 0.2; done
    check "Prometheus scrapes both replicas" test "$ok_both" -eq 0
    nr=$(grep -c '^bedtop_route_status{' "$TMP/a.prom")
    expect_eq "the relabelled pair: each replica's $nr routes under one instance, the pair's name" \
        "$(q 'count by (instance, replica) (bedtop_route_status)')" "$nr $nr"
    expect_eq "... so without replica, one series per route: what Thanos deduplicates" \
        "$(q 'count(count without (replica) (bedtop_route_status))')" "$nr"
    expect_eq "... and up keeps each host's own instance (BedtopPollerDown names the host)" \
        "$(q 'count(count by (instance) (up{job="bedtop"}))')" 2
else
    skip "prometheus (BEDTOP_TEST_DEPS=1 scripts/deps) for the HA pair's relabelling"
fi
expect_rc "--replica with a space is refused (exit 3)" 3 "$BEDTOP" serve --demo --replica 'a b' --listen "127.0.0.1:0"
check "... saying what a replica name may hold" grep -q 'replica .*letters, digits' "$TMP/last.err"
expect_rc "--replica is serve's only (check refuses it)" 3 "$BEDTOP" check --demo --replica a
finish
