#!/usr/bin/env bash
# Issue 22: a Region failing changes its routes' status and the header's counts. Two
# routes on Claude 3 Haiku, east (us-east-1) and west (eu-west-1), against the fake
# AWS; every call signed for eu-west-1 is refused (403 AccessDeniedException, or 500
# from Service Quotas alone). core/frame.c decides: a route whose CloudWatch or Service
# Quotas fails is stale (so unknown) with the reason; the dashboard renders it.
. "$BEDTOP_SRCDIR/tests/lib.sh"
NOW=$(date +%s)
# scenario FILE FAULTS_JSON : an hour of 100 calls/min, 100,000 input and 10,000 output
# tokens a minute (the same series in both Regions), a 1,000,000 TPM quota
scenario() { haiku_scenario "$1" "$(( NOW / 60 * 60 - 3600 ))" 100 100000 10000 "$2"; }
printf '[bedtop]\nregion = us-east-1\n[route east]\nmodel = anthropic.claude-3-haiku-20240307-v1:0\nmax_tokens = 500\n[route west]\nmodel = anthropic.claude-3-haiku-20240307-v1:0\nregion = eu-west-1\nmax_tokens = 500\n' >"$TMP/r.conf"
# st FILE ROUTE : status and STALE's message of ROUTE in check's JSON
st() {
    python3 -c '
import json, sys
r = {x["name"]: x for x in json.load(open(sys.argv[1]))["routes"]}[sys.argv[2]]
print(r["status"], "|", " ".join(w["message"] for w in r["warnings"] if w["code"] == "STALE"))' "$1" "$2"
}

# 1. eu-west-1 refuses everything (CloudWatch and Service Quotas: 403).
scenario "$TMP/all.json" '[{"op": "*", "region": "eu-west-1", "count": 0, "action": "error", "status": 403,
  "code": "AccessDeniedException", "message": "not authorized in eu-west-1"}]'
start_fake all --scenario "$TMP/all.json"
ALLPORT=$PORT
"${AWS_ENV[@]}" "$BEDTOP" check --config "$TMP/r.conf" --endpoint-url "http://127.0.0.1:$PORT" \
    --format json >"$TMP/all.out" 2>"$TMP/all.err"
check "check: the failing Region is said on stderr" grep -q "cloudwatch eu-west-1: AccessDeniedException" "$TMP/all.err"
s=$(st "$TMP/all.out" west)
check "check: west (eu-west-1) is unknown, stale: CloudWatch failing ($s)" \
    grep -q "^unknown | CloudWatch failing (cloudwatch eu-west-1: AccessDeniedException" <<<"$s"
check "... and Service Quotas failing too" grep -q "; Service Quotas failing too" <<<"$s"
s=$(st "$TMP/all.out" east)
check "check: east (us-east-1) is not stale ($s)" grep -qE "^(ok|warn) \| $" <<<"$s"

# 2. Service Quotas alone fails in eu-west-1 (500 on each of its operations):
# CloudWatch answers, the route is still stale, and says why.
scenario "$TMP/sq.json" "$(python3 -c '
import json
print(json.dumps([{"op": op, "region": "eu-west-1", "count": 0, "action": "5xx"}
                  for op in ("ListServiceQuotas", "ListAWSDefaultServiceQuotas", "GetServiceQuota",
                             "GetAWSDefaultServiceQuota")]))')"
start_fake sq --scenario "$TMP/sq.json"
"${AWS_ENV[@]}" "$BEDTOP" check --config "$TMP/r.conf" --endpoint-url "http://127.0.0.1:$PORT" \
    --format json >"$TMP/sq.out" 2>"$TMP/sq.err"
s=$(st "$TMP/sq.out" west)
check "Service Quotas failing alone: west is unknown, stale with that reason ($s)" \
    grep -q "^unknown | Service Quotas failing (.*ServiceException" <<<"$s"
check "... not CloudWatch's" bash -c '! grep -q "CloudWatch failing" <<<"$1"' _ "$s"

# 3. The dashboard (tmux, 80x24) on the Region of case 1: the header counts the Regions
# and the failing one beside the routes' statuses; west's row is UNKN; its detail says why.
TUI_CMD="${AWS_ENV[*]} $BEDTOP --config $TMP/r.conf --endpoint-url http://127.0.0.1:$ALLPORT"
EXTRA=""
. "$BEDTOP_SRCDIR/tests/termlib.sh"
s=rf; start $s 80 24 C.UTF-8
check "the dashboard comes up" wait_for_long $s "ROUTE "
check "header: 2 regions, 1 failing, beside the routes' counts" \
    wait_for_long $s "2 regions, 1 failing, 2 routes: "
# the failing Region is counted from its first refused call, west's status once its
# poll has been evaluated: wait for that too rather than read the header once
check "... and west is counted unknown" wait_for_long $s "1 unknown"
check "... in the header" bash -c 'tmux -L "$1" capture-pane -p -t "$2" | sed -n 1p | grep -q "1 unknown"' _ "$SOCK" $s
check "west's row: UNKN" bash -c 'tmux -L "$1" capture-pane -p -t "$2" | grep -qE "^west +UNKN"' _ "$SOCK" $s
check "east's row: not UNKN" bash -c 'tmux -L "$1" capture-pane -p -t "$2" | grep -qE "^east +(OK|WARN) "' _ "$SOCK" $s
check "the warnings pane names the failure" wait_for $s "STALE: CloudWatch failing"
T kill-session -t $s
finish
