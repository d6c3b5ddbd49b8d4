#!/bin/sh
# karpathy/llm.c's dev/cuda/global_norm.cu (with its common.h; not in this repository) through
# gpuexp: compiled with nvcc, its nvcc builds loaded, verified and timed cold; the same launches
# under ncu (gpu__time_duration, caches flushed as gpuexp's cold mode does); and llm.c's own
# event harness, built from the same file. Then the three side by side.
# usage: bench/run_llmc.sh LLMC_DEV_CUDA_DIR [BUILD_DIR] [OUT_DIR]   (from the repository root)
src=$1
build=${2:-build}
out=${3:-/tmp/gx_llmc}
mkdir -p "$out"
"$build/gpuexp" --quiet --inline bench/llmc_global_norm.lua run "$src" "$out"
ncu --clock-control none --csv --page raw --metrics gpu__time_duration.sum --log-file "$out/ncu.csv" \
    "$build/gpuexp" --quiet --inline bench/llmc_global_norm.lua ncu "$src" "$out" >/dev/null 2>&1 || echo "ncu failed"
if (cd "$src" && nvcc -O3 --use_fast_math global_norm.cu -o "$out/global_norm" -lcublas -lcublasLt) >"$out/llmc_build.log" 2>&1; then
    for k in 1 2 3 4; do "$out/global_norm" "$k" >"$out/llmc_$k.txt" 2>&1; done
else
    echo "llm.c's own build failed (see $out/llmc_build.log)"
fi
"$build/gpuexp" --inline bench/llmc_global_norm.lua compare - "$out"
