#!/usr/bin/env bash
# Fuzz smoke: every libFuzzer target in tests/fuzz/ (one per parser of outside
# input) runs a fixed number of inputs from a fixed seed over its seed corpus
# under ASan+UBSan. A crash, leak, sanitizer report or a parse failure without
# a message fails the target; the crashing input is kept in build-fuzz/artifacts/.
# Needs clang (scripts/deps installs it): without it this suite fails, loudly.
# FUZZ_RUNS overrides the per-target count (default keeps the suite < 60 s on 2 cores);
# a target whose inputs are slow by design (fuzz_config_routes reaches 10,000 routes)
# says "fuzz-smoke-runs: N" in its source and runs N (scaled like FUZZ_RUNS).
. "$BEDTOP_SRCDIR/tests/lib.sh"
RUNS=${FUZZ_RUNS:-3000}
SEED=${FUZZ_SEED:-1}
FB=$BEDTOP_SRCDIR/build-fuzz
ART=$FB/artifacts
mkdir -p "$ART"

if ! command -v clang >/dev/null 2>&1; then
    notok "clang not found: the fuzz targets cannot be built (scripts/deps installs clang; CI must have it)"
    finish
    exit 1
fi
if ! make -C "$BEDTOP_SRCDIR" --no-print-directory -j2 fuzz >"$TMP/build.log" 2>&1; then
    notok "make fuzz builds every target"
    sed 's/^/#   /' "$TMP/build.log" | grep -E 'error|Error' | head -10
    finish
    exit 1
fi
ok "make fuzz builds every target"

for src in "$BEDTOP_SRCDIR"/tests/fuzz/fuzz_*.c; do
    name=$(basename "$src" .c)
    parser=${name#fuzz_}
    corpus=$BEDTOP_SRCDIR/tests/fuzz/corpus/$parser
    if [ ! -d "$corpus" ] || [ -z "$(ls -A "$corpus" 2>/dev/null)" ]; then
        notok "$name: seed corpus tests/fuzz/corpus/$parser is missing or empty"
        continue
    fi
    # new inputs go to a scratch dir (the first one), never into the committed corpus
    mkdir -p "$TMP/new-$parser"
    runs=$RUNS
    own=$(sed -nE 's/.*fuzz-smoke-runs: ([0-9]+).*/\1/p' "$src" | head -n 1)
    [ -n "$own" ] && runs=$((own * RUNS / 3000)) && [ "$runs" -lt 1 ] && runs=1
    ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
        "$FB/$name" -runs="$runs" -seed="$SEED" -max_len=65536 -timeout=10 -rss_limit_mb=2048 \
        -artifact_prefix="$ART/$name-" "$TMP/new-$parser" "$corpus" >"$TMP/$name.log" 2>&1
    rc=$?
    if [ "$rc" -eq 0 ] && grep -q '^Done [0-9]* runs' "$TMP/$name.log"; then
        ok "$name: $(grep -o '^Done [0-9]* runs' "$TMP/$name.log" | tail -1) clean under ASan+UBSan"
    else
        notok "$name: exit $rc (see build-fuzz/artifacts/$name-*)"
        grep -E 'ERROR|SUMMARY|runtime error|#[0-9]+ 0x' "$TMP/$name.log" | head -12 | sed 's/^/#   /'
    fi
done
finish
