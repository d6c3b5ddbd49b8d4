#!/bin/sh
# The corpus collection on a GPU machine (bench/corpus/README.md): run from the repository root
# after building (build/gpuexp), with python3-free tools only (sh, gzip, timeout; ncu for part 5).
#
#   bench/corpus/collect.sh OUTDIR PARTS [SEED]
#
# PARTS, comma-separated (each part's nights are separate processes, as a scheduler runs them):
#   1    corpus nights 1-3 (every point timed and its counters collected)        ~3 min on an H100
#   2    corpus nights 4-6                                                        ~2.5 min
#   3    grid nights 1-10 (durations x effects, the creep), then the tune space   ~3 min
#   4    gpuexp ab decisions on the grid, round after round for CORPUS_AB_S     ~2.7 min (default 150 s)
#   5    ncu's estimated speedups on the M-size corpus kernels (optional)        ~2-4 min
#   dry  every part in an offline plan with synthetic measurements (no GPU)     ~1 min
# SEED: the corpus seed (default: the held-out seed generate.lua names).
#
# Records go to OUTDIR/<gpu>/ (h100, h200; synthetic for dry), gzipped JSON lines, one file a
# night or part, written whole: a killed process leaves a .partial file and the night is run again
# by the same command. A file already in OUTDIR/<gpu>/ or in bench/corpus/records/<gpu>/ is not
# collected again: after a call that ran out of time, put the returned files under
# bench/corpus/records/<gpu>/ and run the same parts again.
# The whole call stops starting work after CORPUS_BUDGET_S seconds (default 540: the device
# call's limit is 600).
set -u
if [ $# -lt 2 ]; then
  echo "usage: bench/corpus/collect.sh OUTDIR PARTS [SEED]   (PARTS: 1,2,3,4,5 or dry)" >&2
  exit 2
fi
out=$1 parts=$2
here=bench/corpus
bin=./build/gpuexp
seed=${3:-$(sed -n 's/^M.HELD_OUT_SEED = \([0-9]*\).*/\1/p' $here/generate.lua)}
budget=${CORPUS_BUDGET_S:-540}
start=$(date +%s)
export GPUEXP_CACHE_DIR=${GPUEXP_CACHE_DIR:-/tmp/gpuexp-corpus-cache}
plan=""
case ",$parts," in *,dry,*) plan="--arch sm_90"; parts=1,2,3,4 ;; esac
run() { $bin --quiet --inline $plan "$here/collect.lua" "$@"; }

tag=$(run tag) || { echo "collect.sh: no GPU here (gpuexp exited $?); 'dry' runs without one" >&2; exit 3; }
dir=$out/$tag
from=$here/records/$tag
mkdir -p "$dir"
log=$dir/collect.log
say() { echo "$*"; echo "$(date -u +%H:%M:%S) $*" >> "$log"; }
left() { echo $(( budget - ($(date +%s) - start) )); }
have() { [ -f "$dir/$1.gz" ] || [ -f "$from/$1.gz" ]; }
say "collect.sh $parts seed $seed on $tag ($(left) s to spend)"

# step NAME SECONDS ARGS...: one process writing $dir/NAME, unless it is there already or there
# is no time left for it; gzipped when it ended whole. Returns 1 when the time is up.
step() {
  name=$1 need=$2
  shift 2
  if have "$name"; then say "$name: collected before"; return 0; fi
  if [ "$(left)" -lt "$need" ]; then say "$name: not started ($(left) s left, it needs ~$need s): run the same command again"; return 1; fi
  t0=$(date +%s)
  timeout "$(left)" $bin --quiet --inline $plan "$here/collect.lua" "$@" >> "$log" 2>&1
  rc=$?
  took=$(( $(date +%s) - t0 ))
  if [ -f "$dir/$name" ]; then
    gzip -9 -f "$dir/$name"
    say "$name: $took s"
    last_took=$took
  else
    say "$name: FAILED (exit $rc after $(( $(date +%s) - t0 )) s; what it finished is in $dir/$name.partial; the log: $log)"
  fi
  return 0
}

# the nights of a part: each needs about what the last one took (the first, its estimate)
last_took=0
nights() {
  kind=$1 estimate=$2
  shift 2
  for night in "$@"; do
    need=$(( last_took > estimate ? last_took + 10 : estimate ))
    case $kind in
    corpus) step "corpus-night-$night.jsonl" "$need" corpus "$seed" "$night" "$dir/corpus-night-$night.jsonl" || return 1 ;;
    grid)
      n=$(printf %02d "$night")
      step "grid-night-$n.jsonl" "$need" grid "$night" "$dir/grid-night-$n.jsonl" "$dir/grid-calibration.json" || return 1 ;;
    esac
  done
}

calibration() {
  if [ -f "$from/grid-calibration.json" ] && [ ! -f "$dir/grid-calibration.json" ]; then
    cp "$from/grid-calibration.json" "$dir/grid-calibration.json"
  fi
}

for part in $(echo "$parts" | tr ',' ' '); do
  case $part in
  1) last_took=0; nights corpus 70 1 2 3 ;;
  2) last_took=0; nights corpus 50 4 5 6 ;;
  3)
    calibration
    last_took=0
    nights grid 25 $(seq 1 "$(sed -n 's/^M.NIGHTS = \([0-9]*\).*/\1/p' $here/grid.lua)") &&
      step tune-brute.jsonl 30 tune brute "$dir/tune-brute.jsonl" &&
      step tune-truth.jsonl 30 tune truth "$dir/tune-truth.jsonl" &&
      step tune-live.jsonl 60 tune live "$dir/tune-live.jsonl"
    ;;
  4)
    calibration
    # the decisions' time: CORPUS_AB_S (default 150 s), within what is left
    seconds=${CORPUS_AB_S:-150}
    [ $(( $(left) - 30 )) -lt "$seconds" ] && seconds=$(( $(left) - 30 ))
    [ -n "$plan" ] && seconds=20
    step ab.jsonl 60 ab "$dir/ab.jsonl" "$dir/grid-calibration.json" "$seconds"
    ;;
  5)
    if have ncu.txt; then say "ncu.txt: collected before"; continue; fi
    ncu=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
    if [ ! -x "$ncu" ]; then say "ncu: not found; part 5 skipped"; continue; fi
    kernels=$(sed -n 's/^M.order = {\(.*\)}$/\1/p' $here/families.lua | tr -d ' "' | tr ',' '|')
    t0=$(date +%s)
    timeout "$(left)" "$ncu" --clock-control none --target-processes all \
      --section SpeedOfLight --section LaunchStats --section Occupancy --section WarpStateStats \
      --section SchedulerStats --section MemoryWorkloadAnalysis --section MemoryWorkloadAnalysis_Tables \
      --section ComputeWorkloadAnalysis --section InstructionStats --section SourceCounters \
      --kernel-name "regex:^($kernels)_" \
      $bin --quiet --inline "$here/collect.lua" launch "$seed" > "$dir/ncu.txt.partial" 2>> "$log"
    rc=$?
    if [ $rc -eq 0 ]; then mv "$dir/ncu.txt.partial" "$dir/ncu.txt"; gzip -9 -f "$dir/ncu.txt"; fi
    say "ncu: exit $rc in $(( $(date +%s) - t0 )) s"
    ;;
  *) say "unknown part '$part' (1, 2, 3, 4, 5 or dry)"; exit 2 ;;
  esac
done
say "collect.sh: done in $(( $(date +%s) - start )) s; records in $dir"
ls -l "$dir" | tail -n +2
