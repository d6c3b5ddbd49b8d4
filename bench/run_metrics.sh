#!/bin/sh
# The CUPTI speed target and the numbers side by side with ncu, in one run: 24 points x 10 metrics
# (bench/profile_points.lua) collected by
#   gpuexp, point by point (kernel:collect: one replay per point),
#   gpuexp, batched (gpuexp.metrics: one replay for all 24 points),
#   ncu in one process profiling all 24 launches (what a user runs on a whole sweep),
#   ncu started once per point (24 processes),
# all with the same metrics (--clock-control none; ncu's default cache control flushes caches, as
# gpuexp does). Then every value of each gpuexp run is compared with ncu's.
# usage: bench/run_metrics.sh [BUILD_DIR] [OUT_DIR]   (from the repository root)
build=${1:-build}
out=${2:-/tmp/gx_metrics}
mkdir -p "$out"
gpuexp="$build/gpuexp"
metrics=$("$gpuexp" --inline bench/profile_points.lua names)
"$gpuexp" --quiet bench/profile_points.lua one 1 # warm the cubin cache for every run
now() { date +%s%N; }
t0=$(now)
"$gpuexp" --quiet --out "$out/gpuexp.csv" bench/profile_points.lua all
t1=$(now)
"$gpuexp" --quiet --out "$out/gpuexp_batch.csv" bench/profile_points.lua batch
t2=$(now)
ncu --clock-control none --csv --page raw --metrics "$metrics" --log-file "$out/ncu_all.csv" \
    "$gpuexp" --quiet --inline bench/profile_points.lua every >/dev/null 2>&1 || echo "ncu (one process) failed"
t3=$(now)
for k in $(seq 1 24); do
    ncu --clock-control none --csv --page raw --metrics "$metrics" --log-file "$out/ncu_$k.csv" \
        "$gpuexp" --quiet --inline bench/profile_points.lua one "$k" >/dev/null 2>&1 || echo "ncu failed on point $k"
done
t4=$(now)
echo "$t0 $t1 $t2 $t3 $t4" | awk '{p = ($2 - $1) / 1e9; b = ($3 - $2) / 1e9; one = ($4 - $3) / 1e9; each = ($5 - $4) / 1e9;
    printf "wall seconds, 24 points x 10 metrics:\n";
    printf "  gpuexp batched (one process, one replay)      %6.2f\n", b;
    printf "  gpuexp point by point (one process)           %6.2f\n", p;
    printf "  ncu, one process for all 24 launches          %6.2f   batched gpuexp is %.1fx faster\n", one, one / b;
    printf "  ncu, one process per point (24 processes)     %6.2f   batched gpuexp is %.1fx faster\n", each, each / b}'
for ours in gpuexp_batch gpuexp; do
    for peer in one per_point; do
        echo "== $ours against ncu ($peer)"
        "$gpuexp" --inline bench/compare_ncu.lua "$out" "$ours" "$peer" | tail -1
    done
done
