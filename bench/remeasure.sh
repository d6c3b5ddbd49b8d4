#!/bin/sh
# Re-measures, on one GPU, the published figures whose raw output was not kept (issue 34), and keeps
# it whole this time: each step's raw output under OUTDIR, then `bench/claims.lua` recomputes the
# docs' figures from it once OUTDIR is copied to bench/remeasure/ (the claims with status
# `remeasure` in bench/claims/*.tsv name the files they read). About 3 minutes on an H100 or H200.
#
#   bench/remeasure.sh OUTDIR [BUILD_DIR]     (from the repository root; BUILD_DIR default build,
#                                              carried built: gpuexp and bench/bench_short_sequence)
#
# Steps, each writing its folder of OUTDIR (a failed step is said and the next one runs):
#   header.txt           tests/gpu/header.sh: the commit (git, $GPUEXP_COMMIT or .gpuexp-commit), the
#                        GPU, the time. No commit known: nothing runs, exit 2.
#   counters_cost/       the shipped nightly, whole runs timed here, without and with the counters in
#                        the order without, with, with, without (one history; the kernels compiled
#                        before the first night): each night's output and times.tsv.
#   ab/                  bench/ab_study.lua 100 50 5: 100 A/A and 50 injected decisions, every
#                        decision's verdicts (decisions.csv) and the long runs' samples (long_samples.csv).
#   short_sequence/      bench/run_short_sequence.sh: the C peer's output, gpuexp's readings, ncu's raw
#                        CSV and the trace (trace.json.gz), then the comparison recomputed from them.
#   restart_cost/        bench/restart_cost.lua: its sweep's CSV and metadata (every restart's time).
#   suite/               tests/gpu/run_all.sh on three short tests: a GPU suite record with its header.
# Exit status: 0 when every step wrote its output, 1 when one failed, 2 with no commit known.
set -u
out=${1:?usage: bench/remeasure.sh OUTDIR [BUILD_DIR]}
build=${2:-build}
src=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "$build" && pwd)
mkdir -p "$out"
out=$(cd "$out" && pwd)
cd "$src"
PATH=$PATH:/usr/local/cuda/bin # ncu, where the toolkit is installed
export PATH
sh tests/gpu/header.sh "$build" > "$out/header.txt" || exit 2
cat "$out/header.txt"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT INT TERM
failed=0
step() { echo "== $1 ($(date -u +%H:%M:%S))"; }
fail() { echo "FAILED: $1"; failed=1; }
now_ms() { echo $(( $(date +%s%N) / 1000000 )); }

# The counters' cost as whole runs: each night a separate `gpuexp nightly` of the shipped suite, its
# wall time taken here around the whole process; the kernels compiled first (an offline plan into
# the same cubin cache), so that no night pays NVRTC alone.
step "counters_cost: 4 nights of experiments/nightly"
mkdir -p "$out/counters_cost"
export GPUEXP_CACHE_DIR="$work/cache" GPUEXP_LOCK_DIR="$work/locks"
mkdir -p "$GPUEXP_CACHE_DIR" "$GPUEXP_LOCK_DIR" "$work/plan"
"$build/gpuexp" --quiet --arch sm_90 --out "$work/plan/kernels.csv" experiments/nightly/kernels.lua >/dev/null 2>&1 ||
  echo "(the offline plan that compiles the kernels first failed; the first night compiles them)"
printf 'night\tcounters\texit\twall_ms\n' > "$out/counters_cost/times.tsv"
night=0
for counters in without with with without; do
  night=$((night + 1))
  flag=""
  [ "$counters" = without ] && flag=--no-counters
  start=$(now_ms)
  "$build/gpuexp" nightly experiments/nightly --quiet --history "$work/nights.sqlite" --out "$work/night$night" $flag \
    > "$out/counters_cost/night${night}_$counters.txt" 2>&1
  rc=$?
  end=$(now_ms)
  printf '%d\t%s\t%d\t%d\n' "$night" "$counters" "$rc" $((end - start)) >> "$out/counters_cost/times.tsv"
  mkdir -p "$out/counters_cost/night$night" # the night's rows and metadata (its samples files stay out: large)
  for f in "$work/night$night"/*.csv "$work/night$night"/*.json "$work/night$night"/*.md; do
    case $f in *.samples.csv|*"*"*) ;; *) cp "$f" "$out/counters_cost/night$night/" ;; esac
  done
  echo "night $night $counters counters: exit $rc in $((end - start)) ms"
  case $rc in 0|1) ;; *) fail "night $night (exit $rc)" ;; esac
done
unset GPUEXP_CACHE_DIR GPUEXP_LOCK_DIR

step "ab: bench/ab_study.lua 100 50 5"
mkdir -p "$out/ab"
OUT="$out/ab" "$build/gpuexp" --quiet --no-plan bench/ab_study.lua 100 50 5 > "$out/ab/ab_study.log" 2>&1 || fail "ab_study"
tail -n 8 "$out/ab/ab_study.log"

step "short_sequence: bench/run_short_sequence.sh"
mkdir -p "$out/short_sequence"
if sh bench/run_short_sequence.sh "$build" "$out/short_sequence" > "$out/short_sequence/run.log" 2>&1; then
  gzip -9 "$out/short_sequence/trace.json"
else
  fail "short_sequence"
fi
tail -n 14 "$out/short_sequence/run.log"

step "restart_cost: bench/restart_cost.lua"
mkdir -p "$out/restart_cost"
# its points crash on purpose (the run exits 5): what counts is every restart's time in the metadata
"$build/gpuexp" --quiet --no-plan bench/restart_cost.lua "$out/restart_cost/restart_cost.csv" > "$out/restart_cost/run.log" 2>&1
grep -q '"restarts"' "$out/restart_cost/restart_cost.meta.json" 2>/dev/null || fail "restart_cost"
tail -n 2 "$out/restart_cost/run.log"

step "suite: tests/gpu/run_all.sh, three short tests"
sh tests/gpu/run_all.sh "$build" "$out/suite" test_launch test_timing test_random || fail "suite"

step "done"
exit $failed
