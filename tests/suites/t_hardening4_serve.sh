#!/usr/bin/env bash
# Issue 37 (hardening, round four), the serve parts, against a real `bedtop serve`
# polling the fake AWS over loopback:
#   break 1:  64 clients that pipeline GET /metrics and never read held every slot (a
#             slot that was writing was never evicted): scrapes got 503 or a reset
#   break 2:  a SIGHUP reload ran route discovery on the loop that serves HTTP:
#             /metrics got no answer until discovery gave up
#   break 15: a NUL byte in a request went unanswered for 10 s; a malformed
#             Content-Length let the body be answered as a second request
# No result is decided by a clock: the clients are sequential, and a wait is only a
# bound on something that must happen (curl -m, wait_for).
. "$BEDTOP_SRCDIR/tests/lib.sh"
AWS_ENV+=(BEDTOP_DATADIR="$BEDTOP_SRCDIR/data")
wait_for() {
    local n=$(($1 * 5)); shift
    for _ in $(seq 1 "$n"); do "$@" >/dev/null 2>&1 && return 0; sleep 0.2; done
    return 1
}

start_fake fake --scenario "$BEDTOP_SRCDIR/tests/fake/scenario_fleet.json" || notok "fake AWS started"
FAKE=$PORT
SP=$(free_port)
"${AWS_ENV[@]}" "$BEDTOP" serve --listen "127.0.0.1:$SP" --config "$BEDTOP_SRCDIR/tests/fake/fleet.conf" \
    --endpoint-url "http://127.0.0.1:$FAKE" --interval 60 >/dev/null 2>"$TMP/serve.err" &
SERVE_PID=$!
CLEANUP+=("kill $SERVE_PID")
polled() { curl -sS -m 5 "http://127.0.0.1:$SP/metrics" | grep -q '^bedtop_headroom_ratio{route="hot"'; }
check "serve is up and has polled once" wait_for 30 polled

# ---- break 1: 64 pipelining clients that never read, and 30 scrapes in a row ----
# Each hog has a 4 kB receive buffer and pipelines 256 GET /metrics (far more answer than
# its buffers and serve's send queue hold), so once it has some of an answer it stalls
# writing. A hog serve closes is opened again at once, so 64 are held throughout. Each
# scrape is a new connection; it must get the whole answer (200, ending in the last
# series' newline, as long as Content-Length says).
python3 - "$SP" >"$TMP/hogs.txt" 2>&1 <<'PY'
import select, socket, sys, time
port = int(sys.argv[1])
pipeline = b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n" * 256
def hog():
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    s.connect(("127.0.0.1", port))
    s.sendall(pipeline)
    return s
hogs = [hog() for _ in range(64)]
# a bound, not pacing: every hog has been answered into its buffer (it is writing)
for h in hogs:
    p = select.poll(); p.register(h, select.POLLIN)
    p.poll(10000)
def scrape():
    s = socket.create_connection(("127.0.0.1", port), timeout=10)
    s.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    data = b""
    try:
        while True:
            d = s.recv(65536)
            if not d:
                break
            data += d
    except (ConnectionResetError, socket.timeout) as e:
        return type(e).__name__
    s.close()
    head, _, body = data.partition(b"\r\n\r\n")
    status = head.split(b"\r\n", 1)[0].decode(errors="replace")
    cl = [l for l in head.split(b"\r\n") if l.lower().startswith(b"content-length:")]
    whole = cl and int(cl[0].split(b":")[1]) == len(body) and body.endswith(b"\n")
    return "200 whole" if status == "HTTP/1.1 200 OK" and whole else status or "nothing"
codes, replaced = [], 0
for _ in range(30):
    codes.append(scrape())
    for i, h in enumerate(hogs):  # keep 64 held: a hog serve let go is opened again
        p = select.poll(); p.register(h, select.POLLRDHUP | select.POLLHUP | select.POLLERR)
        if p.poll(0):
            h.close(); hogs[i] = hog(); replaced += 1
print(sum(c == "200 whole" for c in codes), "of", len(codes), "replaced", replaced)
print(" ".join(sorted(set(codes))))
for h in hogs:
    h.close()
PY
read -r GOT _ OF _ REPLACED <"$TMP/hogs.txt"
echo "# $(sed -n 2p "$TMP/hogs.txt") (hogs evicted and opened again: ${REPLACED:-?})"
expect_eq "r4 break 1: 64 pipelining non-reading clients held, 30 scrapes in a row all get the whole 200" \
    "${GOT:-0} of ${OF:-0}" "30 of 30"
check "r4 break 1: serve still alive" kill -0 "$SERVE_PID"
check "r4 break 1: ... and answers a scrape after the hogs went" polled

# ---- break 15: a NUL byte, and framing that would answer a body as a request ----
python3 - "$SP" >"$TMP/framing.txt" 2>&1 <<'PY'
import socket, sys
port = int(sys.argv[1])
def exchange(data):
    s = socket.create_connection(("127.0.0.1", port), timeout=5)  # a bound: 400 comes at once
    s.sendall(data)
    out = b""
    try:
        while True:
            d = s.recv(65536)
            if not d:
                return out, "closed"
            out += d
    except socket.timeout:
        return out, "held open"
    except ConnectionResetError:
        return out, "reset"
def answers(out):
    return [l.decode() for l in out.split(b"\r\n") if l.startswith(b"HTTP/1.1 ")]
out, how = exchange(b"GET /metrics HTTP/1.1\r\nHost: x\0\r\n\r\n")
print("nul", (answers(out) or ["none"])[0], how)
body = b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n"
for name, cl in (("duplicate", b"Content-Length: 0\r\nContent-Length: %d\r\n" % len(body)),
                 ("space-before-colon", b"Content-Length : %d\r\n" % len(body)),
                 ("not-a-number", b"Content-Length: 0x%x\r\n" % len(body))):
    out, how = exchange(b"GET /healthz HTTP/1.1\r\nHost: x\r\n" + cl + b"\r\n" + body)
    print(name, len(answers(out)), (answers(out) or ["none"])[0], how,
          "body-answered" if b"bedtop_route_status" in out else "body-not-answered")
PY
expect_eq "r4 break 15: a NUL byte in a request: 400 at once, then closed" \
    "$(sed -n 1p "$TMP/framing.txt")" "nul HTTP/1.1 400 Bad Request closed"
for case in duplicate space-before-colon not-a-number; do
    expect_eq "r4 break 15: malformed Content-Length ($case): one 400, closed, the body never answered" \
        "$(grep "^$case " "$TMP/framing.txt")" "$case 1 HTTP/1.1 400 Bad Request closed body-not-answered"
done
kill -TERM "$SERVE_PID"
wait "$SERVE_PID"
expect_eq "serve exits 0 on SIGTERM after all of it" "$?" 0

# ---- break 2: a reload whose route discovery hangs ----
# No route configured: serve discovers them (ListMetrics in AWS/Bedrock, then in
# AWS/BedrockMantle). While $TMP/hang exists the fake reads every ListMetrics and never
# answers it: the reload's discovery hangs (every attempt, 10 s each), and meanwhile
# /metrics must answer at once with the previous routes. A second SIGHUP, with the
# file gone, starts the reload over and it completes; a third hangs again and SIGTERM
# ends serve without waiting on it.
haiku_scenario "$TMP/disc.json" "$(($(date +%s) / 60 * 60 - 7200))" 10 1000 100 \
    '[{"op": "ListMetrics", "while_file": "'"$TMP/hang"'", "count": 0, "action": "hang", "secs": 3600}]'
start_fake disc --scenario "$TMP/disc.json" || notok "fake AWS (discovery) started"
DFAKE=$PORT
: >"$TMP/empty.conf"
SP2=$(free_port)
"${AWS_ENV[@]}" AWS_REGION=us-east-1 "$BEDTOP" serve --listen "127.0.0.1:$SP2" --config "$TMP/empty.conf" \
    --endpoint-url "http://127.0.0.1:$DFAKE" --interval 60 >/dev/null 2>"$TMP/serve2.err" &
S2=$!
CLEANUP+=("kill $S2")
routes() { curl -sS -m 10 "http://127.0.0.1:$SP2/metrics" | grep -o '^bedtop_route_status{route="[^"]*"' | sort -u; }
has_routes() { [ -n "$(routes)" ]; }
check "r4 break 2: serve discovers its routes at start" wait_for 30 has_routes
BEFORE=$(routes)
echo "# routes: $BEFORE"
seen() { grep -q 'discovering the routes' "$TMP/serve2.err"; }
touch "$TMP/hang"
kill -HUP "$S2"
check "r4 break 2: the reload's discovery has started (its first ListMetrics hangs)" wait_for 30 seen
# curl -m 10 is a bound: before the fix the loop sat in discovery until all three
# hung attempts timed out (10 s each) and nothing answered
DURING=$(routes)
expect_eq "r4 break 2: /metrics answers during the reload, with the previous routes" "$DURING" "$BEFORE"
expect_eq "r4 break 2: /healthz answers during the reload" \
    "$(curl -sS -m 10 -o /dev/null -w '%{http_code}' "http://127.0.0.1:$SP2/healthz")" 200
check "r4 break 2: ... and serve says the previous routes are served meanwhile" \
    grep -q 'discovering the routes; the previous 1 route is served meanwhile' "$TMP/serve2.err"
rm -f "$TMP/hang"
kill -HUP "$S2"
reloaded() { grep -q 'config reloaded (1 route)' "$TMP/serve2.err"; }
check "r4 break 2: a second SIGHUP starts the reload over, and it completes" wait_for 90 reloaded
check "r4 break 2: ... which serve says" grep -q 'SIGHUP again: the reload in progress starts over' "$TMP/serve2.err"
expect_eq "r4 break 2: the reloaded routes are served" "$(routes)" "$BEFORE"
check "r4 break 2: the reload did not fail" bash -c "! grep -q 'reload failed' '$TMP/serve2.err'"
# a reload still discovering when serve is told to stop (its ListMetrics hang again):
# serve ends without waiting on its request (30 s: a bound, the hang is 3600)
touch "$TMP/hang"
N0=$(grep -c 'discovering the routes' "$TMP/serve2.err")
kill -HUP "$S2"
again() { [ "$(grep -c 'discovering the routes' "$TMP/serve2.err")" -gt "$N0" ]; }
check "r4 break 2: a third reload's discovery hangs" wait_for 30 again
kill -TERM "$S2"
gone() { ! kill -0 "$S2" 2>/dev/null; }
if wait_for 30 gone; then wait "$S2"; RC=$?; else RC="still running"; kill -KILL "$S2"; fi
expect_eq "r4 break 2: SIGTERM during a reload: serve exits 0 without waiting on discovery" "$RC" 0
finish
