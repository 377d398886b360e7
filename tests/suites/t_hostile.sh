# Hostile strings from outside reach no output raw (issue 16, breaks 1 and 2): a
# ModelId served by ListMetrics, a route name or region in the config, strings in
# a recording. One sanitiser per sink: terminal text, CSV, JSON.
. "$BEDTOP_SRCDIR/tests/lib.sh"
SK='wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY'
ESC=$'\033'
BEL=$'\a'
# no_ctl FILE: no ESC, BEL or other C0 control but tab/newline, no DEL, no C1 (UTF-8 C2 80..9F)
no_ctl() {
    python3 - "$1" <<'PY'
import re, sys
b = open(sys.argv[1], "rb").read()
bad = re.search(rb"[\x00-\x08\x0b-\x1f\x7f]|\xc2[\x80-\x9f]", b)
sys.exit(1 if bad else 0)
PY
}

# --- escape_in_listmetrics_modelid: discovery names a route after a ModelId that
# carries a screen clear, a title change and a bell.
EVIL=$'evil\033[2J\033]0;PWNED\amodel'
python3 - "$EVIL" >"$TMP/evil.json" <<'PY'
import json, sys
m = sys.argv[1]
ser = lambda metric, v: {"namespace": "AWS/Bedrock", "metric": metric, "stat": "Sum",
                         "dimensions": {"ModelId": m}, "generator": {"constant": v}}
print(json.dumps({"now": 1795946400, "series": [ser("Invocations", 10), ser("InputTokenCount", 5000),
                                                 ser("OutputTokenCount", 1000)]}))
PY
start_fake evil --scenario "$TMP/evil.json"
printf '[bedtop]\nregion = us-east-1\n' >"$TMP/disc.conf"
run() {
    env -u AWS_PROFILE -u AWS_ENDPOINT_URL -u AWS_REGION -u AWS_DEFAULT_REGION \
        AWS_ACCESS_KEY_ID=AKIDEXAMPLE AWS_SECRET_ACCESS_KEY="$SK" \
        AWS_CONFIG_FILE=/nonexistent AWS_SHARED_CREDENTIALS_FILE=/nonexistent \
        AWS_EC2_METADATA_DISABLED=true \
        "$BEDTOP" check --config "$TMP/disc.conf" --endpoint-url "http://127.0.0.1:$PORT" "$@"
}
run >"$TMP/evil.txt" 2>"$TMP/evil.err"
check "escape_in_listmetrics_modelid: the route was discovered" grep -q 'evil?\[2J?\]0;PWNED?model' "$TMP/evil.txt"
check "escape_in_listmetrics_modelid: check text carries no control character" no_ctl "$TMP/evil.txt"
check "escape_in_listmetrics_modelid: stderr carries no control character" no_ctl "$TMP/evil.err"
run --wide >"$TMP/evilw.txt" 2>/dev/null
check "escape_in_listmetrics_modelid: --wide text carries none either" no_ctl "$TMP/evilw.txt"
run --format json >"$TMP/evil.jsn" 2>/dev/null
check "escape_in_listmetrics_modelid: JSON escapes it and keeps the real ID" python3 - "$TMP/evil.jsn" "$EVIL" <<'PY'
import json, sys
raw = open(sys.argv[1], "rb").read()
assert b"\x1b" not in raw and b"\x07" not in raw
d = json.loads(raw)
assert [r["model_id"] for r in d["routes"]] == [sys.argv[2]], d["routes"]
PY

# --- hostile_config_strings: the config refuses what AWS would not accept, and the
# error line itself is sanitised.
printf '[route evil\033[2Jname]\nmodel = m\n' >"$TMP/name.conf"
expect_rc "hostile_config_strings: a route name with an escape is refused" 3 "$BEDTOP" check --config "$TMP/name.conf"
check "... with file:line and the allowed characters" grep -q "name.conf:2: bad route name in \[route evil?\[2Jname\]; use up to 43 letters, digits and - _ . : /" "$TMP/last.err"
check "... and no control character on stderr" no_ctl "$TMP/last.err"
printf '[route =HYPERLINK("http://x")]\nmodel = m\n' >"$TMP/formula.conf"
expect_rc "hostile_config_strings: a route name that is a formula is refused" 3 "$BEDTOP" check --config "$TMP/formula.conf"
printf '[route ok]\nmodel = m\nregion = us-east-1,evil\n' >"$TMP/region.conf"
expect_rc "hostile_config_strings: a region with a comma is refused" 3 "$BEDTOP" check --config "$TMP/region.conf"
check "... naming the form of a Region" grep -q "region.conf:3: bad region 'us-east-1,evil'; use an AWS Region name like us-east-1" "$TMP/last.err"
printf '[route a]\nmodel = m\nregion = us-gov-west-1\n[route b.c:d/e_f-1]\nmodel = m\nregion = eu-central-2\n' >"$TMP/good.conf"
"$BEDTOP" check --config "$TMP/good.conf" --endpoint-url "http://127.0.0.1:$(free_port)" --format json >/dev/null 2>"$TMP/good.err"
check "hostile_config_strings: us-gov-west-1 and a name with - _ . : / are accepted" \
    bash -c "! grep -q 'bad region\|bad route name' '$TMP/good.err'"
expect_rc "hostile_config_strings: --region with a comma is refused" 3 "$BEDTOP" check --demo --region 'us-east-1,x'

# --- hostile_recording_strings: a recording whose header carries an escape-laden
# route name, a formula as a name, a region with a comma and a C1 CSI in a model.
"$BEDTOP" record "$TMP/demo.rec" --demo --demo-speed max --duration 20m 2>/dev/null
python3 - "$TMP/demo.rec" "$TMP/evil.rec" <<'PY'
import json, sys
lines = open(sys.argv[1]).read().splitlines(True)
h = json.loads(lines[0])
h["routes"][0]["name"] = "evil\x1b[2J\x1b]0;PWNED\x07route"
h["routes"][1]["name"] = '=HYPERLINK("http://x")'
h["routes"][1]["region"] = "us-east-1,evil"
h["routes"][2]["model"] = "m\u009b31mred"
with open(sys.argv[2], "w") as f:
    f.write(json.dumps(h) + "\n")
    f.writelines(lines[1:])
PY
"$BEDTOP" replay "$TMP/evil.rec" --at +16m >"$TMP/rt.txt" 2>"$TMP/rt.err"
check "hostile_recording_strings: replay --at text does not clear the screen or retitle" no_ctl "$TMP/rt.txt"
check "... and shows the name with ? for each control (cut to its column with ~)" grep -q '^evil?\[2J?\]0;PWNE~ ' "$TMP/rt.txt"
check "... and in full in the warnings" grep -q ' evil?\[2J?\]0;PWNED?route: ' "$TMP/rt.txt"
"$BEDTOP" replay "$TMP/evil.rec" --at +16m --wide >"$TMP/rtw.txt" 2>/dev/null
check "hostile_recording_strings: replay --at --wide neither" no_ctl "$TMP/rtw.txt"
check "... --wide shows the whole name and the C1 as ?" grep -q '^evil?\[2J?\]0;PWNED?route .*' "$TMP/rtw.txt"
check "... --wide shows a model's C1 CSI as ?" grep -q ' m?31mred ' "$TMP/rtw.txt"
"$BEDTOP" replay "$TMP/evil.rec" --at +16m --format json >"$TMP/rt.json" 2>/dev/null
check "hostile_recording_strings: replay JSON has no raw control or C1 and parses" python3 - "$TMP/rt.json" <<'PY'
import json, re, sys
raw = open(sys.argv[1], "rb").read()
assert not re.search(rb"[\x00-\x08\x0b-\x1f\x7f]|\xc2[\x80-\x9f]", raw)
d = json.loads(raw)
assert d["routes"][2]["model_id"] == "m\u009b31mred"
PY
"$BEDTOP" export "$TMP/evil.rec" --format json >"$TMP/ex.json" 2>/dev/null
check "hostile_recording_strings: export JSON has no raw control or C1 and parses" python3 - "$TMP/ex.json" <<'PY'
import json, re, sys
raw = open(sys.argv[1], "rb").read()
assert not re.search(rb"[\x00-\x08\x0b-\x1f\x7f]|\xc2[\x80-\x9f]", raw)
json.loads(raw)
PY

# --- csv_injection_and_broken_rows: every field quoted, formulas neutralised, a
# comma in a region stays inside its field.
"$BEDTOP" export "$TMP/evil.rec" --format csv >"$TMP/ex.csv" 2>/dev/null
check "csv_injection_and_broken_rows: export CSV has no control character" no_ctl "$TMP/ex.csv"
check "csv_injection_and_broken_rows: read back, every row is as wide as the header" python3 - "$TMP/ex.csv" <<'PY'
import csv, sys
rows = list(csv.reader(open(sys.argv[1], newline="")))
assert len(rows) > 1 and all(len(r) == len(rows[0]) for r in rows), {len(r) for r in rows}
h = rows[0].index("region"); n = rows[0].index("route")
regions = {r[h] for r in rows[1:]}
assert "us-east-1,evil" in regions, regions
names = {r[n] for r in rows[1:]}
assert "'=HYPERLINK(\"http://x\")" in names, names
assert not any(v[:1] in "=+-@" for r in rows[1:] for v in (r[n], r[h])), "live formula"
PY
check "csv_injection_and_broken_rows: every field is quoted" python3 - "$TMP/ex.csv" <<'PY'
import sys
for line in open(sys.argv[1], newline=""):
    line = line.rstrip("\n")
    # split outside quotes: every field must start and end with a quote
    fields, cur, q = [], "", False
    for ch in line:
        if ch == '"':
            q = not q
        if ch == "," and not q:
            fields.append(cur); cur = ""
        else:
            cur += ch
    fields.append(cur)
    assert all(len(f) >= 2 and f[0] == '"' and f[-1] == '"' for f in fields), line[:80]
PY
finish
