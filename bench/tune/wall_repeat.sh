#!/bin/bash
# The issue-37 wall-time cells again, each tune from an empty cubin cache, in alternation, to see their
# spread and what the compile pool's size does: the convolution's brute force (NVRTC) and the
# transpose's racing (nvcc), default helpers (the cores less one) and two fewer.
#   bench/tune/wall_repeat.sh OUTDIR [ROUNDS=2]
# Writes OUTDIR/runs/<n>-<space>-<run>-w<helpers>/ (study.lua's records) and OUTDIR/wall.tsv: space,
# run, helpers, wall s, GPU s, compile CPU s, cores, the target 1.3 x max(GPU, compile / cores).
set -u
OUT=${1:?usage: bench/tune/wall_repeat.sh OUTDIR [ROUNDS]}
ROUNDS=${2:-2}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
GPUEXP=${GPUEXP:-$ROOT/build/gpuexp}
CORES=$(nproc)
mkdir -p "$OUT/runs"
printf 'space\trun\thelpers\twall_s\tgpu_s\tcompile_s\tcores\ttarget_s\n' > "$OUT/wall.tsv"
n=0
for round in $(seq "$ROUNDS"); do
  for helpers in $((CORES - 1)) $((CORES - 3)); do
    for job in "conv brute" "transpose racing"; do
      set -- $job
      n=$((n + 1))
      dir=$OUT/runs/$n-$1-$2-w$helpers
      cache=$(mktemp -d)
      GPUEXP_CACHE_DIR=$cache GPUEXP_CACHE_STATE=cold GPUEXP_STUDY_WORKERS=$helpers timeout -k 10 200 \
        "$GPUEXP" --quiet "$ROOT/bench/tune/study.lua" "$1" "$2" "$dir" >> "$OUT/run.log" 2>&1
      echo "$1 $2 helpers $helpers: exit $?" | tee -a "$OUT/run.log"
      rm -rf "$cache"
      "$GPUEXP" --quiet --inline "$ROOT/bench/tune/wall_row.lua" "$dir/$1/$2.json" "$helpers" "$CORES" \
        >> "$OUT/wall.tsv" 2>> "$OUT/run.log"
    done
  done
done
cat "$OUT/wall.tsv"
