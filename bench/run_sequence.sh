#!/bin/sh
# A sequence of three launches timed as one, against ncu: gpuexp's hot and graph-mode medians of
# the sequence (bench/sequence_ncu.lua), ncu's gpu__time_duration of each kernel (no cache
# flushing: the sequence runs hot), and the launch gaps a --trace timeline measures.
# usage: bench/run_sequence.sh [BUILD_DIR] [OUT_DIR]   (from the repository root)
build=${1:-build}
out=${2:-/tmp/gx_sequence}
mkdir -p "$out"
"$build/gpuexp" --quiet --inline bench/sequence_ncu.lua measure "$out"
ncu --clock-control none --cache-control none --csv --page raw --metrics gpu__time_duration.sum \
    --log-file "$out/ncu.csv" "$build/gpuexp" --quiet --inline bench/sequence_ncu.lua ncu >/dev/null 2>&1 || echo "ncu failed"
"$build/gpuexp" --quiet --inline --trace "$out/trace.json" bench/sequence_ncu.lua trace
"$build/gpuexp" --inline bench/sequence_ncu.lua compare "$out"
