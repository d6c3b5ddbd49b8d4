#!/bin/sh
# Issue 3's target: an offline plan with a cold cubin cache (NVRTC compiles the four kernels) in at
# most 2 s of wall time, no GPU. Prints the machine, then each of 5 runs' wall seconds (each with
# an empty cache folder, removed after); bench/cpu/offline_plan.txt is this machine's record.
# usage: bench/offline_plan.sh [BUILD_DIR]   (from the repository root)
set -eu
build=${1:-build}
echo "# $(date -u +%Y-%m-%dT%H:%M:%SZ) $("$build/gpuexp" --version | head -1); $(nproc) CPUs: $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)"
for i in 1 2 3 4 5; do
  cache=$(mktemp -d)
  start=$(date +%s%N)
  GPUEXP_CACHE_DIR=$cache "$build/gpuexp" --quiet --arch sm_86 --out "$cache/plan.csv" experiments/occupancy_sweep.lua \
    >/dev/null 2>&1
  end=$(date +%s%N)
  rm -rf "$cache"
  echo "offline_plan_cold_cache_seconds $(( (end - start) / 1000000 ))e-3"
done
