#!/bin/sh
# Runs every speed comparison of the foundation issue in one go, each gpuexp figure beside its
# C peer measured in the same run. usage: bench/run.sh [BUILD_DIR]   (from the repository root)
set -e
build=${1:-build}
gpuexp="$build/gpuexp"
echo "# $(date -u +%Y-%m-%dT%H:%M:%SZ) $("$gpuexp" --version)"
"$gpuexp" info | sed -n '1,2p'

echo "## launch overhead: empty kernel, 200000 launches, median of 5 rounds, C and Lua alternated"
for i in 1 2; do
    "$build/bench/bench_launch_rate" 200000 5
    "$gpuexp" bench/launch_rate.lua 200000 5
done | tee /tmp/gx_launch.txt
awk '/^c_launches/ {c = $2} /^lua_bound/ {b = $2} /^lua_table/ {t = $2}
     END {printf "launch_rate_ratio_bound %.3f\nlaunch_rate_ratio_table %.3f\n", b / c, t / c}' /tmp/gx_launch.txt

echo "## timing fidelity: SAXPY 32M, block 256, median of 200 event-timed samples"
for i in 1 2 3; do
    "$build/bench/bench_saxpy_timing"
    "$gpuexp" bench/saxpy_timing.lua
done | tee /tmp/gx_saxpy.txt
awk '/^c_saxpy/ {c += $2; nc++} /^gpuexp_saxpy/ {g += $2; ng++}
     END {printf "saxpy_median_difference_pct %.2f\n", 100 * (g / ng - c / nc) / (c / nc)}' /tmp/gx_saxpy.txt

echo "## script start to first launch, warm cubin cache (wall time of the whole process)"
"$gpuexp" bench/first_launch.lua # warms the cache
for i in 1 2 3 4 5; do
    start=$(date +%s%N)
    "$gpuexp" bench/first_launch.lua
    end=$(date +%s%N)
    echo "start_to_first_launch_seconds $(echo "$start $end" | awk '{printf "%.3f", ($2 - $1) / 1e9}')"
done
