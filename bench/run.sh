#!/bin/sh
# Runs every speed comparison of the foundation issue in one go, each gpuexp figure beside its
# C peer measured in the same run. usage: bench/run.sh [BUILD_DIR]   (from the repository root)
set -e
build=${1:-build}
gpuexp="$build/gpuexp"
echo "# $(date -u +%Y-%m-%dT%H:%M:%SZ) $("$gpuexp" --version)"
"$gpuexp" info | sed -n '1,2p'

echo "## launch overhead: empty kernel, 200000 launches, median of 5 rounds; C and Lua alternated 5 times"
for i in 1 2 3 4 5; do
    "$build/bench/bench_launch_rate" 200000 5
    "$gpuexp" bench/launch_rate.lua 200000 5
done | tee /tmp/gx_launch.txt
# the ratio of each alternation, and their median (sort, not gawk's asort: any awk works)
median_ratio() {
    awk -v key="$1" '/^c_launches/ {c = $2} $1 == key {print $2 / c}' /tmp/gx_launch.txt | sort -n |
        awk -v name="$2" '{a[NR] = $1} END {printf "%s %.3f (min %.3f, max %.3f)\n", name, a[int((NR + 1) / 2)], a[1], a[NR]}'
}
median_ratio lua_bound_launches_per_second launch_rate_ratio_bound_median
median_ratio lua_table_launches_per_second launch_rate_ratio_table_median

echo "## timing fidelity: SAXPY 32M, block 256, median of 200 event-timed samples"
for i in 1 2 3; do
    "$build/bench/bench_saxpy_timing"
    "$gpuexp" bench/saxpy_timing.lua
done | tee /tmp/gx_saxpy.txt
awk '/^c_saxpy/ {c += $2; nc++} /^gpuexp_saxpy/ {g += $2; ng++}
     END {printf "saxpy_median_difference_pct %.2f\n", 100 * (g / ng - c / nc) / (c / nc)}' /tmp/gx_saxpy.txt

echo "## script start to first launch, warm cubin cache (process start to the first launch done)"
"$gpuexp" bench/first_launch.lua # warms the cache
for i in 1 2 3 4 5; do
    "$gpuexp" bench/first_launch.lua "$(date +%s%N)"
done
