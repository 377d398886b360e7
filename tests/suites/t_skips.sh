# Issue 16, "skips that count as passes": t_man.sh counted a missing mandoc as "1
# passed" and t_admission.sh kept a "not wired yet" skip that read "0 passed, 0
# failed". A check that cannot run is a skip, counted and shown as one by
# tests/lib.sh, tests/tap.c and tests/run, and with CI=true (.ci/run sets it) it is a
# failure. Each harness runs here in a child with a suite of its own.
. "$BEDTOP_SRCDIR/tests/lib.sh"

# tests/lib.sh: one pass, one skip
suite() { (CI=$1 bash -c ". '$BEDTOP_SRCDIR/tests/lib.sh'; ok one; skip 'mandoc not installed'; finish"); }
out=$(suite "")
rc=$?
expect_eq "lib.sh: a skip is counted as a skip" "$(tail -n 1 <<<"$out")" "1 passed, 0 failed, 1 skipped"
check "lib.sh: ... shown as '# SKIP' with its reason" grep -qx 'ok - # SKIP mandoc not installed' <<<"$out"
expect_eq "lib.sh: a skip alone does not fail the suite" "$rc" 0
out=$(suite true)
rc=$?
expect_eq "lib.sh: with CI=true a skip is a failure" "$(tail -n 1 <<<"$out")" "1 passed, 1 failed, 0 skipped"
expect_eq "lib.sh: ... and the suite exits 1" "$rc" 1

# tests/tap.c: the same for unit tests
cat >"$TMP/tapskip.c" <<'C'
#include "tests/tap.h"
int main(void) { OK(1, "one"); SKIP("no %s here", "clang"); return tap_done(); }
C
if cc -std=c11 -I"$BEDTOP_SRCDIR" -o "$TMP/tapskip" "$TMP/tapskip.c" "$BEDTOP_SRCDIR/tests/tap.c" -lm 2>"$TMP/cc.err"; then
    out=$(env -u CI "$TMP/tapskip"); rc=$?
    expect_eq "tap.c: a skip is counted as a skip" "$(tail -n 1 <<<"$out") rc=$rc" "1 passed, 0 failed, 1 skipped rc=0"
    check "tap.c: ... shown as '# SKIP' with its reason" grep -qx 'ok - # SKIP no clang here' <<<"$out"
    out=$(CI=true "$TMP/tapskip"); rc=$?
    expect_eq "tap.c: with CI=true a skip is a failure" "$(tail -n 1 <<<"$out") rc=$rc" "1 passed, 1 failed, 0 skipped rc=1"
else
    notok "tap.c builds with a test of its own"; sed 's/^/#   /' "$TMP/cc.err" | head -5
fi

# tests/run: sums skips from suites that print them, and from those that do not
mkdir -p "$TMP/bin"
printf '#!/bin/sh\necho "ok - a"\necho "ok - # SKIP b"\necho "1 passed, 0 failed, 1 skipped"\n' >"$TMP/bin/test_zzskip1"
printf '#!/bin/sh\necho "2 passed, 0 failed"\n' >"$TMP/bin/test_zzskip2"
chmod +x "$TMP/bin/test_zzskip1" "$TMP/bin/test_zzskip2"
runner() { env -u CI TESTBIN="$TMP/bin" TEST_LOGDIR="$TMP/logs" "$@" "$BEDTOP_SRCDIR/tests/run" zzskip; }
out=$(runner); rc=$?
expect_eq "tests/run: totals with skips" "$(tail -n 1 <<<"$out") rc=$rc" "3 passed, 0 failed, 1 skipped rc=0"
check "tests/run: the suite's line shows its skip and the reason" grep -q 'test_zzskip1 .* 1 skipped' <<<"$out"
check "tests/run: ... and the skipped check" grep -q '    ok - # SKIP b' <<<"$out"
out=$(runner CI=true); rc=$?
expect_eq "tests/run: with CI=true a skip a suite reports is a failure" "$(tail -n 1 <<<"$out") rc=$rc" \
    "3 passed, 1 failed, 1 skipped rc=1"

# .ci/run reads the same line, with or without the skipped tail
re=$(sed -nE "s/.*grep -E '(\^\[0-9\]\+ passed[^']*)'.*/\1/p" "$BEDTOP_SRCDIR/.ci/run" | head -n 1)
check ".ci/run's summary pattern was found" test -n "$re"
for l in "5 passed, 0 failed" "5 passed, 1 failed, 2 skipped"; do
    check ".ci/run reads '$l'" grep -qE "$re" <<<"$l"
done
check ".ci/run sets CI=true" grep -q 'CI=true' "$BEDTOP_SRCDIR/.ci/run"

# no suite counts a skip as a pass any more
bad=$(grep -nE 'ok "[^"]*SKIP|echo "ok - # SKIP|echo "# SKIP' "$BEDTOP_SRCDIR"/tests/suites/t_*.sh | grep -v '^[^:]*t_skips.sh:')
expect_eq "no suite prints a skip as ok or as a bare comment" "$bad" ""
finish
