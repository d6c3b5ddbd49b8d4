#!/bin/bash
# The tuning study of issue 37 on one GPU (16 cores, nvcc, a carried build/ and .kt/convolution.cu):
#   bench/tune/run.sh OUTDIR
# Nine tunes, each its own gpuexp process within 500 s (timeout), each skipped when its record
# (OUTDIR/SPACE/RUN.json) exists, so a rerun finishes what is missing and never loses a finished one:
# brute force, racing and model (seed 1) on Kernel Tuner's convolution (NVRTC), the transpose (nvcc)
# and the project's matmul. Brute force and racing start from an empty cubin cache of their own
# (cold: the compile pool's wall time is measured); model reuses racing's (warm). Every round's CSV
# and samples file is kept (the raw samples of every configuration); bench/tune/replay.lua rebuilds
# the tables from OUTDIR alone, and runs at the end. About 4-6 minutes on an H100 or H200.
set -u
OUT=${1:?usage: bench/tune/run.sh OUTDIR}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
GPUEXP=${GPUEXP:-$ROOT/build/gpuexp}
mkdir -p "$OUT"
CACHES=$(mktemp -d)
trap 'rm -rf "$CACHES"' EXIT
LOG="$OUT/run.log"
{ date -u +%FT%TZ; git -C "$ROOT" rev-parse HEAD 2>/dev/null; nvidia-smi -L 2>/dev/null; nproc; } >> "$LOG"
status=0
for space in conv transpose matmul; do
  for run in brute racing model; do
    record="$OUT/$space/$run.json"
    if [ -s "$record" ]; then echo "$space $run: recorded already" | tee -a "$LOG"; continue; fi
    rm -f "$OUT/$space/$run".*  # an unfinished attempt's rounds
    case $run in
      brute|racing) cache="$CACHES/$space-$run"; state=cold; rm -rf "$cache" ;;
      model) cache="$CACHES/$space-racing"; state=warm ;;
    esac
    mkdir -p "$cache"
    started=$(date +%s.%N)
    GPUEXP_CACHE_DIR="$cache" GPUEXP_CACHE_STATE=$state timeout -k 10 500 \
      "$GPUEXP" --quiet "$ROOT/bench/tune/study.lua" "$space" "$run" "$OUT" >> "$LOG" 2>&1
    code=$?
    echo "$space $run: exit $code, $(awk "BEGIN { printf \"%.1f\", $(date +%s.%N) - $started }") s" | tee -a "$LOG"
    [ $code -ne 0 ] && status=1
  done
done
"$GPUEXP" --quiet --inline "$ROOT/bench/tune/replay.lua" "$OUT" 2>> "$LOG" || status=1
exit $status
