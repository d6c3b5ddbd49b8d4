#!/bin/sh
# Everything Hopper on the GPU in one go (about 3 minutes on an H100 or H200), each step's output
# under OUT_DIR: the GPU test (tests/gpu/test_hopper.lua), the three-way load study
# (experiments/hopper_copy.lua), Kernel Tuner's convolution with its filter in constant memory,
# CuPy's cooperative-groups grid-sync kernel, and CuTe's Hopper tutorial GEMM launched from Lua and
# timed against the tutorial's own harness. The third-party sources come from bench/hopper/fetch.sh
# (run where PyPI is reachable; carry its folder, default .whl/hopper, to the GPU machine).
# usage: bench/hopper/run.sh OUT_DIR [BUILD_DIR=build] [THIRD_PARTY=.whl/hopper]   (from the repository root)
set -u
mkdir -p "$1"
out=$(cd "$1" && pwd) # gpuexp finds a script's relative paths from the script's folder: absolute ones here
build=${2:-build}
third=$(cd "${3:-.whl/hopper}" && pwd) || { echo "no third-party folder ${3:-.whl/hopper}: run bench/hopper/fetch.sh"; exit 1; }
gpuexp="$build/gpuexp"
failed=0
step() {
  name=$1
  shift
  started=$(date +%s)
  "$@" >"$out/$name.log" 2>&1
  rc=$?
  echo "$name: exit $rc in $(( $(date +%s) - started )) s"
  if [ $rc -ne 0 ]; then
    failed=1
    tail -n 20 "$out/$name.log" | sed 's/^/    /'
  fi
}
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv >"$out/gpu.txt" 2>&1
step test_hopper sh tests/gpu/run_all.sh "$build" "$out/tests" test_hopper
step hopper_copy "$gpuexp" --quiet --out "$out/hopper_copy.csv" experiments/hopper_copy.lua
step convolution "$gpuexp" --quiet bench/hopper/convolution.lua "$third/kernel_tuner/convolution.cu" "$out"
step grid_sync "$gpuexp" --quiet bench/hopper/grid_sync.lua "$third/cupy/grid_sync.cu" "$out"
tutorial="$third/cutlass/wgmma_tma_sm90"
if [ ! -x "$tutorial" ]; then # built by fetch.sh; else here from the headers beside it (about 2 minutes)
  step cutlass_build nvcc -std=c++17 -arch=sm_90a -O3 --expt-relaxed-constexpr -I"${third}_cutlass_src/include" \
    -I"${third}_cutlass_src/util" "$third/cutlass/wgmma_tma_sm90.cu" -o "$out/wgmma_tma_sm90"
  tutorial="$out/wgmma_tma_sm90"
fi
# the tutorial's own harness (GPU_Clock over 100 runs), three times, then gpuexp on the same kernel
step cutlass_harness sh -c "for i in 1 2 3; do '$tutorial' 4096 4096 4096 N T || exit 1; done"
# and the profiler's view of the same executable's kernels: ncu's duration of each gemm_device launch
step cutlass_ncu ncu --clock-control none -k regex:gemm_device -c 40 --metrics gpu__time_duration.sum --csv \
  "$tutorial" 4096 4096 4096 N T
step cutlass_gemm "$gpuexp" --quiet bench/hopper/cutlass_gemm.lua "$tutorial" "$out/cutlass_harness.log" "$out" \
  "$out/cutlass_ncu.log"
for f in convolution grid_sync cutlass_gemm; do [ -f "$out/$f.txt" ] && cat "$out/$f.txt"; done
exit $failed
