#!/usr/bin/env bash
# make fuzz-long: each target for FUZZ_TIME seconds (default 600), growing its
# own corpus in build-fuzz/corpus/<parser>/ (seeded from tests/fuzz/corpus/).
# Crashes land in build-fuzz/artifacts/; copy interesting new inputs into the
# committed corpus by hand (small ones only). FUZZ_ONLY="config time" runs only
# those targets (the parser names, fuzz_ dropped). FUZZ_TIMEOUT (default 10 s) is
# the per-input limit: raise it when running under nice on a loaded machine, where
# a 10,000-route input can wait that long for the CPU.
set -u
src=${BEDTOP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
fb=$src/build-fuzz
# the config targets load the burndown table from the data directory, as bedtop does
export BEDTOP_DATADIR=${BEDTOP_DATADIR:-$src/data}
time=${FUZZ_TIME:-600}
failed=0
mkdir -p "$fb/artifacts"
for t in "$src"/tests/fuzz/fuzz_*.c; do
    name=$(basename "$t" .c)
    parser=${name#fuzz_}
    case " ${FUZZ_ONLY:-$parser} " in *" $parser "*) ;; *) continue ;; esac
    mkdir -p "$fb/corpus/$parser"
    echo "== $name: $time s"
    if ! ASAN_OPTIONS=detect_leaks=1 "$fb/$name" -max_total_time="$time" -max_len=65536 -timeout="${FUZZ_TIMEOUT:-10}" \
        -artifact_prefix="$fb/artifacts/$name-" "$fb/corpus/$parser" "$src/tests/fuzz/corpus/$parser"; then
        echo "== $name: FAILED"
        failed=$((failed + 1))
    fi
done
echo "fuzz-long: $failed target(s) failed"
[ "$failed" -eq 0 ]
