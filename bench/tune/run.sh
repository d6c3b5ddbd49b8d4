#!/bin/bash
# The tuning study of issue 37 on one GPU (16 cores, nvcc, a carried build/ and .kt/convolution.cu):
#   bench/tune/run.sh OUTDIR [RECORDS]
# Nine tunes, each its own gpuexp process within 500 s (timeout): brute force, racing and model (seed
# 1) on Kernel Tuner's convolution (NVRTC), the transpose (nvcc) and the project's matmul. Brute force
# and racing start from an empty cubin cache of their own (cold: the compile pool's wall time is
# measured); model reuses racing's (warm). The records (every round's CSV and samples file: the raw
# samples of every configuration; a JSON per tune) go to RECORDS (default results/tune37 in the
# repository, ignored and kept between calls on the same machine); a tune whose record exists is
# skipped, so a second call finishes what is missing and never redoes a finished one. After each
# tune the records are packed into OUTDIR/tune37_records.tar.gz; at the end bench/tune/replay.lua
# writes OUTDIR/tune_tables.md from them (with where each cold tune's wall time went: result.timing)
# and bench/tune/rounds.lua OUTDIR/rounds.txt (each round's configurations and seconds). OUTDIR holds
# four files (run.log too). About 4-6 minutes on an H100 or H200.
set -u
OUT=${1:?usage: bench/tune/run.sh OUTDIR [RECORDS]}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
RECORDS=${2:-$ROOT/results/tune37}
GPUEXP=${GPUEXP:-$ROOT/build/gpuexp}
mkdir -p "$OUT" "$RECORDS"
CACHES=$(mktemp -d)
trap 'rm -rf "$CACHES"' EXIT
LOG="$OUT/run.log"
{ date -u +%FT%TZ; git -C "$ROOT" rev-parse HEAD 2>/dev/null; nvidia-smi -L 2>/dev/null; nproc; } >> "$LOG"
pack() { tar -czf "$OUT/tune37_records.tar.gz" -C "$(dirname "$RECORDS")" "$(basename "$RECORDS")"; }
status=0
for space in conv transpose matmul; do
  for run in brute racing model; do
    record="$RECORDS/$space/$run.json"
    if [ -s "$record" ]; then echo "$space $run: recorded already" | tee -a "$LOG"; continue; fi
    rm -f "$RECORDS/$space/$run".*  # an unfinished attempt's rounds
    case $run in
      brute|racing) cache="$CACHES/$space-$run"; state=cold; rm -rf "$cache" ;;
      model) cache="$CACHES/$space-racing"; state=warm ;;
    esac
    mkdir -p "$cache"
    started=$(date +%s.%N)
    GPUEXP_CACHE_DIR="$cache" GPUEXP_CACHE_STATE=$state timeout -k 10 500 \
      "$GPUEXP" --quiet "$ROOT/bench/tune/study.lua" "$space" "$run" "$RECORDS" >> "$LOG" 2>&1
    code=$?
    echo "$space $run: exit $code, $(awk "BEGIN { printf \"%.1f\", $(date +%s.%N) - $started }") s" | tee -a "$LOG"
    [ $code -ne 0 ] && status=1
    pack
  done
done
"$GPUEXP" --quiet --inline "$ROOT/bench/tune/replay.lua" "$RECORDS" 2>> "$LOG" || status=1
cp "$RECORDS/tune_tables.md" "$OUT/" 2>/dev/null
"$GPUEXP" --quiet --inline "$ROOT/bench/tune/rounds.lua" "$RECORDS" > "$OUT/rounds.txt" 2>> "$LOG" || status=1
pack
exit $status
