#!/bin/sh
# Short work timed as the GPU runs it (issue 26), in one command on a GPU machine (about a minute):
# gpuexp's auto mode for a 3-kernel sequence of ~15 µs and a single kernel of ~3 µs, against ncu's
# gpu__time_duration plus the trace's gaps, and against the C peer running them back to back.
# usage: bench/run_short_sequence.sh [BUILD_DIR] [OUT_DIR]   (from the repository root; ncu on PATH)
set -e
build=${1:-build}
out=${2:-/tmp/gx_short_sequence}
mkdir -p "$out"
# built beforehand where the GPU machine has no cmake (the build folder carried over)
[ -x "$build/bench/bench_short_sequence" ] || cmake --build "$build" --target bench_short_sequence gpuexp >/dev/null
"$build/bench/bench_short_sequence" 200 > "$out/c.txt"
"$build/gpuexp" --quiet --inline bench/short_sequence.lua measure "$out"
ncu --clock-control none --cache-control none --csv --page raw --metrics gpu__time_duration.sum \
    --log-file "$out/ncu.csv" "$build/gpuexp" --quiet --inline bench/short_sequence.lua ncu >/dev/null 2>&1 || echo "ncu failed"
"$build/gpuexp" --quiet --inline --trace "$out/trace.json" bench/short_sequence.lua trace
"$build/gpuexp" --quiet --inline bench/short_sequence.lua compare "$out" | tee "$out/comparison.txt"
