#!/bin/sh
# The CUPTI speed target and the numbers side by side with ncu, in one run:
# 24 points x 10 metrics in-process with gpuexp, against ncu run once per point with the same
# metrics (--clock-control none; ncu's default cache control flushes caches, as gpuexp does).
# usage: bench/run_metrics.sh [BUILD_DIR] [OUT_DIR]   (from the repository root)
build=${1:-build}
out=${2:-/tmp/gx_metrics}
mkdir -p "$out"
gpuexp="$build/gpuexp"
metrics=$("$gpuexp" bench/profile_points.lua names)
"$gpuexp" --quiet bench/profile_points.lua one 1 # warm the cubin cache for both sides
start=$(date +%s%N)
"$gpuexp" --quiet --out "$out/gpuexp.csv" bench/profile_points.lua all
middle=$(date +%s%N)
for k in $(seq 1 24); do
    ncu --clock-control none --csv --page raw --metrics "$metrics" --log-file "$out/ncu_$k.csv" \
        "$gpuexp" --quiet bench/profile_points.lua one "$k" >/dev/null 2>&1 || echo "ncu failed on point $k"
done
end=$(date +%s%N)
echo "$start $middle $end" | awk '{g = ($2 - $1) / 1e9; n = ($3 - $2) / 1e9;
    printf "wall seconds: gpuexp %.2f (24 points, one process), ncu %.2f (24 processes); gpuexp/ncu = 1/%.1f\n", g, n, n / g}'
"$gpuexp" bench/compare_ncu.lua "$out"
