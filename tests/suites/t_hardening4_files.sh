#!/usr/bin/env bash
# Issue 37 ("hardening, round four"): secrets in every URL form, files from outside, text
# sinks. One named check (or a few) per break through the real binary; the URL parser and
# redactor against curl's own reading are in tests/unit/test_url.c, the sinks in
# tests/unit/test_sanitize.c, the config's keys in tests/unit/test_config.c.
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

# ---- break 3: http:///u:p@h and http:/u:p@h, which curl sends as Basic auth ----
for form in 'http:///' 'http:/'; do
    aws_env "$BEDTOP" check --config "$CONF" --endpoint-url "http://127.0.0.1:$CLOSED" \
        --admission "${form}bob:hunter2@127.0.0.1:$CLOSED/metrics" --verbose >"$TMP/adm.out" 2>"$TMP/adm.err"
    check "r4 break 3: --admission '${form}bob:pw@': the failure names bob:***@" \
        grep -q "bob:\*\*\*@127.0.0.1:$CLOSED" "$TMP/adm.err"
    check "r4 break 3: --admission '${form}bob:pw@': no password on stdout or stderr (--verbose too)" \
        bash -c "! grep -q hunter2 '$TMP/adm.err' '$TMP/adm.out'"
    "$BEDTOP" check --source "prometheus+${form}bob:hunter2@127.0.0.1:$CLOSED" >"$TMP/src.out" 2>"$TMP/src.err"
    check "r4 break 3: --source 'prometheus+${form}bob:pw@': the server named bob:***@, no password" \
        bash -c "grep -q 'bob:\*\*\*@127.0.0.1:$CLOSED' '$TMP/src.err' && ! grep -q hunter2 '$TMP/src.err' '$TMP/src.out'"
done
BEDTOP_DATADIR="$BEDTOP_SRCDIR/data" "$BEDTOP" record "$TMP/src.rec" --config "$CONF" --duration 3s \
    --source "prometheus+http:///bob:hunter2@127.0.0.1:$CLOSED" >"$TMP/srcrec.out" 2>"$TMP/srcrec.err"
check "r4 break 3: record --source 'prometheus+http:///bob:pw@': the recording holds the failure" \
    grep -q 'bob:\*\*\*@' "$TMP/src.rec"
check "r4 break 3: ... and no password in it or on stderr" \
    bash -c "! grep -q hunter2 '$TMP/src.rec' '$TMP/srcrec.err' '$TMP/srcrec.out'"

# ---- break 13: --verbose and the errors print no query value ----
aws_env "$BEDTOP" check --config "$CONF" --endpoint-url "http://127.0.0.1:$CLOSED/?token=sekrit1" \
    --admission "http://127.0.0.1:$CLOSED/metrics?token=sekrit2" --verbose >"$TMP/q.out" 2>"$TMP/q.err"
check "r4 break 13: --verbose shows the request lines (query names, values ***)" \
    grep -q "^bedtop: http: GET http://127.0.0.1:$CLOSED/metrics?token=\*\*\* " "$TMP/q.err"
check "r4 break 13: no query value in any --verbose, error or output line" \
    bash -c "! grep -q sekrit '$TMP/q.err' '$TMP/q.out'"
aws_env "$BEDTOP" record "$TMP/q.rec" --config "$CONF" --duration 3s --endpoint-url "http://127.0.0.1:$CLOSED/?token=sekrit1" \
    --admission "http://127.0.0.1:$CLOSED/metrics?token=sekrit2" --verbose >"$TMP/qrec.out" 2>"$TMP/qrec.err"
check "r4 break 13: record: the failures are recorded" grep -q "127.0.0.1:$CLOSED" "$TMP/q.rec"
check "r4 break 13: ... without a query value (recording, stderr)" \
    bash -c "! grep -q sekrit '$TMP/q.rec' '$TMP/qrec.err' '$TMP/qrec.out'"

# ---- break 4: with HOME unset, no config from the current directory ----
# a config planted in the current directory: were it read, its first line would be refused
# ("outside any section") and name ./.config/bedtop/config
mkdir -p "$TMP/cwd/.config/bedtop"
printf 'endpoint_url = http://127.0.0.1:%s\n' "$CLOSED" >"$TMP/cwd/.config/bedtop/config"
chmod -R a+rX "$TMP"
home_env() { # home_env ENV-CHANGES... -- CMD...: check from $TMP/cwd, no AWS reached
    (cd "$TMP/cwd" && aws_env env -u XDG_CONFIG_HOME -u XDG_STATE_HOME "$@")
}
home_env -u HOME "$BEDTOP" check --region us-east-1 --endpoint-url "http://127.0.0.1:$CLOSED" >"$TMP/h1.out" 2>"$TMP/h1.err"
check "r4 break 4: HOME unset: the config planted in ./.config/bedtop is not read" \
    bash -c "! grep -q '\.config/bedtop/config' '$TMP/h1.err'"
home_env HOME=. XDG_CONFIG_HOME=.config "$BEDTOP" check --region us-east-1 --endpoint-url "http://127.0.0.1:$CLOSED" \
    >"$TMP/h2.out" 2>"$TMP/h2.err"
check "r4 break 4: a relative HOME and XDG_CONFIG_HOME are ignored (the XDG rules): not read either" \
    bash -c "! grep -q '\.config/bedtop/config' '$TMP/h2.err'"
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
    # a uid the password database does not know, HOME unset: no home at all
    home_env -u HOME setpriv --reuid=54321 --regid=54321 --clear-groups \
        "$BEDTOP" check --region us-east-1 --endpoint-url "http://127.0.0.1:$CLOSED" >"$TMP/h3.out" 2>"$TMP/h3.err"
    check "r4 break 4: no home anywhere: no config read, and bedtop says so" \
        bash -c "grep -q 'no config read: neither XDG_CONFIG_HOME (an absolute path), HOME nor the password database names a home directory; give --config FILE' '$TMP/h3.err' && ! grep -q 'outside any section' '$TMP/h3.err'"
    home_env HOME=. setpriv --reuid=54321 --regid=54321 --clear-groups \
        "$BEDTOP" check --config "$CONF" --state default --endpoint-url "http://127.0.0.1:$CLOSED" >"$TMP/h4.out" 2>"$TMP/h4.err"
    check "r4 break 4: check --state default with HOME=. writes no state under the current directory" \
        bash -c "[ ! -e '$TMP/cwd/.local' ] && grep -q 'check --state default: neither XDG_STATE_HOME' '$TMP/h4.err'"
else
    skip "r4 break 4: no home anywhere (needs root and setpriv for a uid without a passwd entry)"
    skip "r4 break 4: check --state default with HOME=. (needs root and setpriv)"
fi

# ---- the demo's 30 minutes, for the report breaks ----
BEDTOP_DATADIR="$BEDTOP_SRCDIR/data" "$BEDTOP" record "$TMP/demo.rec" --demo --demo-speed max --duration 30m 2>/dev/null
sums() { (cd "$1" && ls -A | sort | while read -r f; do cksum "$f"; done); }

# ---- break 12: a FIFO (or a link) named like an output file inside -o DIR ----
mkdir -p "$TMP/fifo"
mkfifo "$TMP/fifo/throttles.svg"
timeout 30 "$BEDTOP" report incident "$TMP/demo.rec" -o "$TMP/fifo" >"$TMP/fifo.out" 2>"$TMP/fifo.err"
rc=$?
check "r4 break 12: a FIFO at DIR/throttles.svg: report incident does not block, exits 3 (rc $rc)" [ "$rc" = 3 ]
check "r4 break 12: ... naming the file and what it is" \
    grep -q "throttles.svg exists and is a FIFO, not a regular file; remove it or give another -o DIR" "$TMP/fifo.err"
check "r4 break 12: ... and writes nothing (no report.md, no temporary file left)" \
    bash -c "[ \"\$(ls -A '$TMP/fifo')\" = throttles.svg ]"
mkdir -p "$TMP/lnk"
ln -s "$TMP/elsewhere.svg" "$TMP/lnk/latency.svg"
timeout 30 "$BEDTOP" report incident "$TMP/demo.rec" -o "$TMP/lnk" >/dev/null 2>"$TMP/lnk.err"
check "r4 break 12: a symbolic link at DIR/latency.svg is refused, never followed" \
    bash -c "grep -q 'latency.svg exists and is a symbolic link' '$TMP/lnk.err' && [ ! -e '$TMP/elsewhere.svg' ]"

# ---- break 9: a full disk leaves the previous set whole ----
if [ "$(id -u)" = 0 ] && mkdir -p "$TMP/full" && mount -t tmpfs -o size=4m tmpfs "$TMP/full" 2>/dev/null; then
    CLEANUP+=("umount '$TMP/full'")
    "$BEDTOP" report incident "$TMP/demo.rec" -o "$TMP/full/inc" >/dev/null 2>&1
    before=$(sums "$TMP/full/inc")
    # leave 24 kB: the new report.md (about 12 kB) fits, its PNG charts do not
    avail=$(df -k --output=avail "$TMP/full" | tail -1)
    dd if=/dev/zero of="$TMP/full/filler" bs=1k count=$((avail - 24)) 2>/dev/null
    "$BEDTOP" report incident "$TMP/demo.rec" -o "$TMP/full/inc" --png >"$TMP/full.out" 2>"$TMP/full.err"
    rc=$?
    check "r4 break 9: a full disk: report incident exits 3 (rc $rc)" [ "$rc" = 3 ]
    check "r4 break 9: ... saying why (No space left on device)" grep -q "No space left on device" "$TMP/full.err"
    check "r4 break 9: ... and the previous report.md and charts are all as they were, no temporary file left" \
        test "$(sums "$TMP/full/inc")" = "$before"
    rm -f "$TMP/full/filler"
    "$BEDTOP" report incident "$TMP/demo.rec" -o "$TMP/full/inc" --png >/dev/null 2>&1
    check "r4 break 9: with room again, the new set replaces the old whole (PNG beside SVG)" \
        bash -c "[ -s '$TMP/full/inc/headroom.png' ] && grep -q 'headroom.png' '$TMP/full/inc/report.md'"
else
    for n in "exits 3" "says why" "previous set intact" "new set whole"; do
        skip "r4 break 9: full disk: $n (needs root to mount a small tmpfs)"
    done
fi

# ---- break 10: a recording's region and mode reach their sinks escaped ----
FX=$BEDTOP_SRCDIR/tests/data/quota-request.rec
python3 - "$FX" "$TMP/region.rec" <<'PY'
import json, sys
lines = open(sys.argv[1]).read().splitlines()
h = json.loads(lines[0])
for r in h["routes"]:
    r["region"] = "us-east-1\x1b]0;pwned\x07\x1b[2J\nFORGED line\r"
lines[0] = json.dumps(h, separators=(",", ":"))
open(sys.argv[2], "w").write("\n".join(lines) + "\n")
PY
"$BEDTOP" report quota-request "$TMP/region.rec" >"$TMP/region.txt" 2>"$TMP/region.err"
check "r4 break 10: report quota-request of a hostile region: no ESC, BEL or CR reaches the terminal" \
    bash -c "! grep -q \$'[\x1b\x07\r]' '$TMP/region.txt' '$TMP/region.err'"
check "r4 break 10: ... and no forged line starts" bash -c "! grep -q '^FORGED' '$TMP/region.txt'"
check "r4 break 10: ... the region shown, its controls as ?" grep -qF 'Region us-east-1?]0;pwned??[2J?FORGED' "$TMP/region.txt"
"$BEDTOP" report quota-request "$TMP/region.rec" --format markdown >"$TMP/region.md" 2>/dev/null
check "r4 break 10: --format markdown: no forged line, no ESC" \
    bash -c "! grep -q '^FORGED' '$TMP/region.md' && ! grep -q \$'\x1b' '$TMP/region.md'"
python3 - "$TMP/demo.rec" "$TMP/mode.rec" <<'PY'
import json, sys
lines = open(sys.argv[1]).read().splitlines()
h = json.loads(lines[0])
h["mode"] = "live <img src=x onerror=alert(1)>\n# forged heading" # kept to its first 15 bytes
lines[0] = json.dumps(h, separators=(",", ":"))
open(sys.argv[2], "w").write("\n".join(lines) + "\n")
PY
"$BEDTOP" report incident "$TMP/mode.rec" -o "$TMP/mode" >/dev/null 2>"$TMP/mode.err"
check "r4 break 10: report incident: the recording's mode reaches report.md escaped (no HTML tag, link or emphasis)" \
    bash -c "grep -qF '(live \<img src=x, bedtop' '$TMP/mode/report.md' && ! grep -qE '(^|[^\\\\])<img' '$TMP/mode/report.md'"
check "r4 break 10: ... and no forged heading" bash -c "! grep -q '^# forged' '$TMP/mode/report.md'"

# ---- break 11: route names that are not UTF-8, or cut mid-character, never stop the charts ----
python3 - "$TMP/demo.rec" "$TMP/utf8.rec" <<'PY'
import json, sys
lines = open(sys.argv[1], "rb").read().split(b"\n")
h = json.loads(lines[0])
names = [r["name"] for r in h["routes"]]
# the first route: a Latin-1 byte and a stray continuation byte (placeholders replaced
# as bytes below); the second: 62 ASCII bytes then "é" (2 bytes) cut at byte 63
h["routes"][0]["name"] = "BADNAME0"
h["routes"][1]["name"] = "x" * 62 + "\u00e9tail"
head = json.dumps(h, separators=(",", ":"), ensure_ascii=False).encode()
head = head.replace(b"BADNAME0", b"tri\xe9ge\x80")
lines[0] = head
open(sys.argv[2], "wb").write(b"\n".join(lines))
PY
"$BEDTOP" report incident "$TMP/utf8.rec" -o "$TMP/utf8" >"$TMP/utf8.out" 2>"$TMP/utf8.err"
rc=$?
check "r4 break 11: route names not UTF-8 or cut mid-character: report incident exits 0 (rc $rc)" [ "$rc" = 0 ]
check "r4 break 11: ... all four charts written" \
    bash -c "for f in headroom throttles traffic latency; do [ -s '$TMP/utf8/'\$f.svg ] || exit 1; done"
check "r4 break 11: ... report.md is valid UTF-8 (the bad bytes replaced)" \
    python3 -c "open('$TMP/utf8/report.md', encoding='utf-8', errors='strict').read()"

# ---- break 15: stdout write errors, duplicate keys, hex numbers, a directory as the config ----
if [ -w /dev/full ]; then
    "$BEDTOP" replay "$FX" --at 10:03 >/dev/full 2>"$TMP/full1.err"
    rc=$?
    check "r4 break 15: replay --at >/dev/full exits 3 (rc $rc)" [ "$rc" = 3 ]
    check "r4 break 15: ... saying why" grep -q "stdout: No space left on device" "$TMP/full1.err"
    BEDTOP_DATADIR="$BEDTOP_SRCDIR/data" "$BEDTOP" plan --demo triage >/dev/full 2>"$TMP/full2.err"
    rc=$?
    check "r4 break 15: plan >/dev/full exits 3 (rc $rc)" [ "$rc" = 3 ]
    check "r4 break 15: ... saying why" grep -q "stdout: No space left on device" "$TMP/full2.err"
else
    skip "r4 break 15: replay --at >/dev/full (no writable /dev/full)"
    skip "r4 break 15: plan >/dev/full (no writable /dev/full)"
fi
printf '[bedtop]\nregion = us-east-1\ninterval = 60\n\n[route a]\nmodel = m\nmax_tokens = 30\n[bedtop]\ninterval = 30\n' >"$TMP/dup.conf"
BEDTOP_DATADIR="$BEDTOP_SRCDIR/data" "$BEDTOP" check --config "$TMP/dup.conf" >/dev/null 2>"$TMP/dup.err"
rc=$?
check "r4 break 15: a key set twice in one section: exit 3, naming file:line of both (rc $rc)" \
    bash -c "[ $rc = 3 ] && grep -qF '$TMP/dup.conf:9: '\''interval'\'' is set twice in [bedtop] (first on line 3); keep one' '$TMP/dup.err'"
printf '[route a]\nmodel = m\nmax_tokens = 0x100\n' >"$TMP/hex.conf"
BEDTOP_DATADIR="$BEDTOP_SRCDIR/data" "$BEDTOP" check --config "$TMP/hex.conf" >/dev/null 2>"$TMP/hex.err"
check "r4 break 15: a hex number in the config is refused, naming file:line" \
    grep -qF "$TMP/hex.conf:3: bad number for max_tokens: '0x100'; use 1 to 10,000,000 in decimal (no hex)" "$TMP/hex.err"
mkdir -p "$TMP/confdir"
BEDTOP_DATADIR="$BEDTOP_SRCDIR/data" "$BEDTOP" check --config "$TMP/confdir" >/dev/null 2>"$TMP/dir.err"
check "r4 break 15: a directory as the config says 'Is a directory'" \
    bash -c "grep -qF '$TMP/confdir: Is a directory' '$TMP/dir.err' && ! grep -q 'Input/output' '$TMP/dir.err'"

finish
