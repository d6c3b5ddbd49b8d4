#!/bin/bash
# The comparison with Kernel Tuner (issue 37, item 5) on one GPU, in one command within 9 minutes:
#   bench/tune/kt_compare.sh OUTDIR
# Needs build/gpuexp, .kt/convolution.cu (Kernel Tuner's example: bench/tune/convolution.lua), the
# Kernel Tuner 1.5 wheels in .whl/kt (installed here into a folder of its own) and python3 with numpy,
# scipy, scikit-learn and cuda-bindings (the GPU machine's).
# Two spaces, Kernel Tuner's convolution (702 configurations, the filter in constant memory) and the
# matmul (kernels/tune_matmul.*, 1392), each tool at the same budget, a tenth of the space
# (max_fevals / max_evals): Kernel Tuner's strategies (bench/tune/kt_run.py: random_sample,
# genetic_algorithm, bayes_opt, dual_annealing) and gpuexp's racing and model (bench/tune/study.lua),
# seed by seed. gpuexp's seed 1 starts from empty cubin caches (cold); its later seeds and the referee
# share the cache its seed-1 racing runs filled (warm). Kernel Tuner keeps no compile cache between runs.
# Seed by seed, space by space: a space's seed 2 or 3 starts only when the time left, less the
# referee's reserve, holds what its seed before took (the log says which ran); every step runs under
# `timeout` of the time left.
# The truth is not re-run: brute force's records (tie set, every configuration's median) come from
# bench/h100/tune37/tune37_records.tar.gz. Then one referee process (bench/tune/referee.lua)
# re-measures every reported winner and brute force's best, interleaved, and bench/tune/kt_table.lua
# builds the tables from the records alone.
# OUTDIR gets run.log (the header, every step's output and time), kt_table.md and
# kt_records.tar.gz (kt/: gpuexp/, kernel_tuner/, referee.json, steps.tsv; packed after every seed, so a
# cut run still returns what it finished). Rebuild the tables offline:
#   tar -xzf kt_records.tar.gz -C DIR && tar -xzf bench/h100/tune37/tune37_records.tar.gz -C DIR \
#     tune37/conv/brute.json tune37/matmul/brute.json && build/gpuexp --quiet --inline bench/tune/kt_table.lua DIR/kt DIR/tune37
# KT_COMPARE_BUDGET_S (520: the whole wall), KT_COMPARE_RESERVE_S (50: kept for the referee and the
# table), KT_COMPARE_SEEDS ("1 2 3"), KT_COMPARE_STRATEGIES and KT_TIME_LIMIT_S (90: Kernel Tuner's
# time_limit per run) change the plan. KT_COMPARE_PRIOR names an earlier call's kt_records.tar.gz
# (its seeds' records, on the same kind of GPU): this call's seeds are added to them, and the referee
# re-measures the winners of all of them in one run.
set -u
OUT=${1:?usage: bench/tune/kt_compare.sh OUTDIR}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
GPUEXP=${GPUEXP:-$ROOT/build/gpuexp}
BUDGET_S=${KT_COMPARE_BUDGET_S:-520}
RESERVE_S=${KT_COMPARE_RESERVE_S:-50}
SEEDS=${KT_COMPARE_SEEDS:-1 2 3}
STRATEGIES=${KT_COMPARE_STRATEGIES:-random_sample,genetic_algorithm,bayes_opt,dual_annealing}
KT_TIME_LIMIT_S=${KT_TIME_LIMIT_S:-90}
START=$(date +%s)
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
LOG=$OUT/run.log
for need in "$GPUEXP" "$ROOT/.kt/convolution.cu" "$ROOT/bench/h100/tune37/tune37_records.tar.gz"; do
  [ -e "$need" ] || { echo "kt_compare.sh: $need is missing (see the header)" | tee -a "$LOG" >&2; exit 2; }
done
ls "$ROOT"/.whl/kt/*.whl > /dev/null 2>&1 || { echo "kt_compare.sh: no wheels in $ROOT/.whl/kt" | tee -a "$LOG" >&2; exit 2; }
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
RECORDS=$WORK/kt TRUTH=$WORK/tune37 CACHES=$WORK/caches SITE=$WORK/site
mkdir -p "$RECORDS" "$CACHES/shared"
STEPS=$RECORDS/steps.tsv
if [ -n "${KT_COMPARE_PRIOR:-}" ]; then
  tar -xzf "$KT_COMPARE_PRIOR" -C "$WORK" || { echo "kt_compare.sh: cannot read $KT_COMPARE_PRIOR" | tee -a "$LOG" >&2; exit 2; }
  rm -f "$RECORDS/referee.json" "$RECORDS/kt_table.md" # the referee's run is this call's, of every seed
else
  printf 'step\tseconds\texit\n' > "$STEPS"
fi
say() { echo "$*" | tee -a "$LOG"; }
left() { echo $((START + BUDGET_S - $(date +%s))); }
now() { date +%s.%N; }
since() { awk "BEGIN { printf \"%.1f\", $(now) - $1 }"; }
pack() { tar -czf "$OUT/kt_records.tar.gz" -C "$WORK" kt; }
status=0
# step NAME COMMAND...: runs it under timeout of the time left before the reserve, its output to the log
step() {
  local name=$1 limit started code
  shift
  limit=$(($(left) - RESERVE_S))
  if [ "$limit" -lt 10 ]; then say "$name: not run, ${limit} s left before the referee's reserve"; status=1; return 1; fi
  started=$(now)
  timeout -k 10 "$limit" "$@" >> "$LOG" 2>&1
  code=$?
  printf '%s\t%s\t%d\n' "$name" "$(since "$started")" "$code" >> "$STEPS"
  say "$name: exit $code, $(since "$started") s$([ $code -eq 124 ] && echo " (cut by the time left)")"
  [ $code -ne 0 ] && status=1
  return $code
}

{ "$ROOT/tests/gpu/header.sh" "$ROOT/build" || echo "no commit known"; echo "cores: $(nproc)"; python3 --version; } >> "$LOG" 2>&1
say "plan: seeds $SEEDS, Kernel Tuner $STRATEGIES (time_limit $KT_TIME_LIMIT_S s a run) and gpuexp racing, model; budget $BUDGET_S s, $RESERVE_S s kept for the referee"
step install python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target "$SITE" "$ROOT"/.whl/kt/*.whl
export PYTHONPATH=$SITE${PYTHONPATH:+:$PYTHONPATH} PYTHONUNBUFFERED=1
step truth tar -xzf "$ROOT/bench/h100/tune37/tune37_records.tar.gz" -C "$WORK" tune37/conv/brute.json tune37/matmul/brute.json
step check-spaces sh -c "python3 '$ROOT/bench/tune/kt_run.py' --check conv '$TRUTH' && python3 '$ROOT/bench/tune/kt_run.py' --check matmul '$TRUTH'"
grep "Kernel Tuner's space" "$LOG" | tail -n 2

# gpuexp's tune: seed 1 racing fills the shared cache from empty (cold, both spaces in one folder:
# nothing of one space serves the other), seed 1 model from an empty folder of its own (cold), later
# seeds from the shared one (warm)
gpuexp_tune() {
  local space=$1 run=$2 seed=$3 cache=$CACHES/shared state=warm
  if [ "$seed" = 1 ]; then
    [ "$run" = racing ] || { cache=$CACHES/$space-$run-1; mkdir -p "$cache"; }
  fi
  # cold: an empty cache (seed 1's; a later seed's racing when no seed 1 ran in this call)
  [ -n "$(ls -A "$cache" 2>/dev/null)" ] || state=cold
  GPUEXP_CACHE_DIR=$cache GPUEXP_CACHE_STATE=$state step "gpuexp $space $run seed $seed ($state)" \
    "$GPUEXP" --quiet "$ROOT/bench/tune/study.lua" "$space" "$run" "$RECORDS/gpuexp" "$seed"
  grep "^$space $run: seed $seed," "$LOG" | tail -n 1
}

# part by part: a part is one space and one seed, Kernel Tuner's strategies then gpuexp's; a part
# of seed 2 or later starts only when the time left before the reserve holds what the same space's
# part of the seed before took (that of seed 1 is cold: an overestimate); seed 1's, when 10 s are left
declare -A took
for seed in $SEEDS; do
  for space in conv matmul; do
    need=${took[$space]:-10}
    if [ $(($(left) - RESERVE_S)) -lt "$need" ]; then
      say "$space seed $seed: not run: it needs about $need s, $(($(left) - RESERVE_S)) s are left before the referee's reserve"
      continue
    fi
    part_started=$(date +%s)
    step "kernel_tuner $space seed $seed" python3 "$ROOT/bench/tune/kt_run.py" "$space" "$TRUTH" "$RECORDS" "$seed" \
      "$STRATEGIES" "$KT_TIME_LIMIT_S"
    grep "^kernel_tuner $space .* seed $seed:" "$LOG" | tail -n 4
    gpuexp_tune "$space" racing "$seed"
    gpuexp_tune "$space" model "$seed"
    took[$space]=$(($(date +%s) - part_started))
    say "$space seed $seed: ${took[$space]} s"
    pack
  done
done

# the referee: every winner re-measured in one process (the reserve is its time)
RESERVE_S=10 GPUEXP_CACHE_DIR=$CACHES/shared step referee "$GPUEXP" --quiet "$ROOT/bench/tune/referee.lua" "$RECORDS" "$TRUTH"
grep "^referee " "$LOG" | tail -n 40
"$GPUEXP" --quiet --inline "$ROOT/bench/tune/kt_table.lua" "$RECORDS" "$TRUTH" 2>> "$LOG" || status=1
cp "$RECORDS/kt_table.md" "$OUT/" 2>/dev/null
pack
say "done in $(($(date +%s) - START)) s, exit $status"
exit $status
