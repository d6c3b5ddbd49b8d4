#!/bin/sh
# The data of the regression-rule study, on a real GPU: 10 runs of the shipped nightly suite with
# nothing changed (A/A), interleaved with runs where the triad kernel does 2%, 5% or 10% more work
# (GPUEXP_INJECT), each a separate gpuexp process as a nightly would be.
#   bench/nightly_rule/collect.sh OUT_DIR      (from the repository root, after building)
out="$1"
bin=./build/gpuexp
i=0
for r in 1 2 3 4 5 6 7 8 9 10; do
    $bin --quiet --out "$out/aa/$r/kernels.csv" experiments/nightly/kernels.lua || echo "A/A run $r failed: $?"
    if [ $r -le 9 ]; then
        pct=$(echo "2 5 10" | cut -d' ' -f$((i % 3 + 1)))
        i=$((i + 1))
        GPUEXP_INJECT=triad=$pct $bin --quiet --out "$out/inject_triad_$pct/$r/kernels.csv" experiments/nightly/kernels.lua \
            || echo "injected run $r failed: $?"
    fi
done
