# tests/run itself: a hung suite is stopped at TEST_TIMEOUT and reported failed with its
# name and the end of its log, while the others still count; a suite's summary line is
# summed. Runs a copy of tests/run over a tree of three tiny suites (no wall-clock
# pacing: the hung one waits on a FIFO nobody writes; the bound is TEST_TIMEOUT=2).
. "$BEDTOP_SRCDIR/tests/lib.sh"
T=$TMP/tree
mkdir -p "$T/tests/suites"
cp "$BEDTOP_SRCDIR/tests/run" "$T/tests/run"
mkfifo "$T/never"
cat >"$T/tests/suites/t_hang.sh" <<EOS
echo \$\$ >"$T/hang.pid"
echo "ok - started"
echo "waiting on the fake"
read -r _ <"$T/never"
echo "1 passed, 0 failed"
EOS
printf 'echo "ok - a"\necho "ok - b"\necho "2 passed, 0 failed"\n' >"$T/tests/suites/t_fine.sh"
printf 'echo "ok - a"\necho "not ok - b"\necho "1 passed, 1 failed, 1 skipped"\n' >"$T/tests/suites/t_mixed.sh"
(cd "$T" && env -u CI TESTBIN="$T/none" TEST_TIMEOUT=2 TEST_JOBS=3 timeout 60 bash tests/run) >"$TMP/out" 2>&1
rc=$?
expect_eq "a timed-out suite fails the run" "$rc" 1
check "the hung suite is named with its timeout" grep -q "t_hang: timed out after 2 s (TEST_TIMEOUT)" "$TMP/out"
check "the end of its log is shown" grep -q "| waiting on the fake" "$TMP/out"
expect_eq "the summary sums the others and counts the hang as one failure" \
    "$(tail -n 1 "$TMP/out")" "3 passed, 2 failed, 1 skipped"
check "the hung suite's shell is gone" sh -c "! kill -0 \$(cat '$T/hang.pid') 2>/dev/null"
[ "$FAIL" -gt 0 ] && sed 's/^/#   /' "$TMP/out"
finish
