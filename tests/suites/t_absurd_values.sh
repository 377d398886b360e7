# Issue 16 item 3, "absurd metric values are believed": with every CloudWatch value
# -5000, bedtop check said "used -5000, headroom 100.3%" and ok; with 1e308 it printed
# "infG" and "-nan% of calls are throttled"; 1e15 broke the table. A value no source
# can have (core/plausible.h: negative, not finite, above 1e12 tokens a minute, 1e9
# calls, a day of latency) is never a number on screen: the route goes stale, with
# the reason, and the JSON has no such number anywhere. The fake AWS endpoint serves
# the values over loopback, signed, as CloudWatch would.
. "$BEDTOP_SRCDIR/tests/lib.sh"
SK='wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY'
MODEL=anthropic.claude-3-haiku-20240307-v1:0

# scenario VALUE [METRIC]: every metric of the route at VALUE (or only METRIC, the
# others at sane values), every minute
scenario() {
    python3 - "$1" "${2:-}" "$MODEL" >"$TMP/scen.json" <<'PY'
import json, os, sys
sys.path.insert(0, os.environ["BEDTOP_SRCDIR"] + "/tests/bench")
from gen import CW_METRICS
value, only, model = float(sys.argv[1]), sys.argv[2], sys.argv[3]
sane = {"Invocations": 100, "InvocationLatency": 900, "TimeToFirstToken": 300}
series = [{"namespace": "AWS/Bedrock", "metric": m, "stat": s, "dimensions": {"ModelId": model},
           "generator": {"constant": value if (not only or m == only) else sane.get(m, 1000)}}
          for m, s in CW_METRICS]
print(json.dumps({"series": series}))
PY
}
printf '[bedtop]\nregion = us-east-1\n[route triage]\nmodel = %s\nmax_tokens = 1024\nquota_tpm = 2000000\n' \
    "$MODEL" >"$TMP/bedtop.conf"
run_check() { # run_check NAME FORMAT: output in $TMP/NAME.FORMAT
    env -i PATH="$PATH" HOME="$TMP" AWS_ACCESS_KEY_ID=AKIDEXAMPLE AWS_SECRET_ACCESS_KEY="$SK" \
        AWS_CONFIG_FILE=/dev/null AWS_SHARED_CREDENTIALS_FILE=/dev/null AWS_EC2_METADATA_DISABLED=true \
        BEDTOP_DATADIR="$BEDTOP_DATADIR" \
        "$BEDTOP" check --config "$TMP/bedtop.conf" --format "$2" --endpoint-url "http://127.0.0.1:$PORT" \
        >"$TMP/$1.$2" 2>"$TMP/$1.$2.err"
}
j() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); r=d['routes'][0]; print($2)" "$TMP/$1.json"; }
# no number in the JSON is infinite, below -100 (headroom_pct may be a little negative)
# or above 1e12; python would read an infinity bedtop wrote as Infinity
absurd_numbers() {
    python3 - "$1" <<'PY'
import json, math, sys
bad = []
def walk(x, path):
    if isinstance(x, dict):
        for k, v in x.items(): walk(v, path + "." + k)
    elif isinstance(x, list):
        for i, v in enumerate(x): walk(v, "%s[%d]" % (path, i))
    elif isinstance(x, (int, float)) and not isinstance(x, bool):
        if not math.isfinite(x) or x < -100 or x > 1e12:
            bad.append("%s=%r" % (path, x))
walk(json.load(open(sys.argv[1])), "")
print(" ".join(bad))
PY
}

# NAME VALUE AS-PRINTED [METRIC]
for case in "neg -5000 -5000" "huge 1e300 1e+300" "big 1e15 1e+15" "latency 9e7 9e+07 InvocationLatency"; do
    set -- $case
    name=$1 value=$2 shown=$3 metric=${4:-}
    scenario "$value" "$metric"
    start_fake "aws-$name" --scenario "$TMP/scen.json" || { notok "$name: the fake did not start"; continue; }
    run_check "$name" json
    run_check "$name" text
    kill "${CLEANUP[-1]#kill }" 2>/dev/null
    expect_eq "$name ($value): the route is stale" "$(j "$name" "r['stale']")" True
    stale=$(j "$name" "[w['message'] for w in r['warnings'] if w['code'] == 'STALE']")
    check "$name ($value): STALE names the implausible value" \
        grep -qE "implausible value: [a-z_0-9]+ = -?[0-9.e+]+ at [0-9:]+ UTC: " <<<"$stale"
    expect_eq "$name ($value): status is not ok" "$(j "$name" "r['status'] != 'ok'")" True
    expect_eq "$name ($value): no absurd number anywhere in the JSON" "$(absurd_numbers "$TMP/$name.json")" ""
    # the value may be quoted in the reason, never shown as a figure
    expect_eq "$name ($value): the text shows no inf, nan or absurd figure" "$(python3 - "$TMP/$name.text" "$shown" "$value" <<'PY'
import re, sys
text, vals = open(sys.argv[1]).read(), sys.argv[2:]
bad = [l for l in text.splitlines() if "implausible value" not in l and
       (re.search(r"(?i)\b(inf|infinity|-?nan)\b|\d+(\.\d+)?G\b", l) or any(v in l for v in vals))]
print("\n".join(bad))
PY
)" ""
    check "$name ($value): the text says why the route is stale" grep -q "implausible value" "$TMP/$name.text"
done

# Sane values: nothing refused, the numbers used.
scenario 1000
start_fake sane --scenario "$TMP/scen.json"
run_check sane json
expect_eq "sane values: the route is not stale" "$(j sane "r['stale']")" False
expect_eq "sane values: settled = 1000 input + 1000 cache write + 1000 output x burndown" \
    "$(j sane "r['tpm']['settled'] == 2000 + 1000 * r['burndown']")" True
finish
