#!/bin/sh
# Regenerates this example (or writes it into OUTDIR): the demo's 30 minutes on the
# unpaced simulated clock (the same bytes on any machine), two markers where the
# on-call engineer pressed m, then `bedtop report incident` over it.
# Usage: examples/incident/regenerate.sh [OUTDIR [report incident options...]]
# BEDTOP names the binary (default: the one built in the source tree); with
# BEDTOP_EXAMPLE_REC set, the recording is kept there too.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
bedtop=${BEDTOP:-$here/../../bedtop}
out=${1:-$here}
[ $# -gt 0 ] && shift
tmp=$(mktemp -d "${TMPDIR:-/tmp}/bedtop-example.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
"$bedtop" record "$tmp/demo.rec" --demo --demo-speed max --duration 30m 2>/dev/null
# The markers, as the dashboard's m writes them (bedtop-recording(5), Events): at
# 10:12:30 and 10:22:10 simulated, so on screen with data minutes 10:09 and 10:19.
python3 - "$tmp/demo.rec" <<'PY'
import json, sys
p = sys.argv[1]; lines = open(p).read().splitlines()
T = 1795946400  # 2026-11-29T10:00:00Z, the demo's start
marks = [(T + 12 * 60 + 30, "retry storm paged | <img src=x>"), (T + 22 * 60 + 10, "retry budget deployed")]
for t, note in marks:
    for i in range(1, len(lines)):
        j = json.loads(lines[i])
        if j["t"] >= t:
            j.setdefault("e", []).append({"t": t, "type": "marker", "route": -1, "source": "cloudwatch", "text": note})
            lines[i] = json.dumps(j, separators=(",", ":"))
            break
open(p, "w").write("\n".join(lines) + "\n")
PY
[ -n "${BEDTOP_EXAMPLE_REC:-}" ] && cp "$tmp/demo.rec" "$BEDTOP_EXAMPLE_REC"
"$bedtop" report incident "$tmp/demo.rec" -o "$out" "$@"
