#!/bin/sh
# bench/lines/run.sh OUTDIR [BUILD] [SEED]: issue 38 on the GPU machine, from the repository root,
# with the built gpuexp in BUILD (default build) and nvcc and gcc on the machine; about 4 minutes on
# an H100, at most 6. SEED picks the cases (default 38, the development seed of records/h100: a
# held-out run names another, never developed on); the table names it.
# PC sampling and SASS metrics never share a process (the H100's first try, bench/h100/lines_try1:
# PC sampling after SASS metrics gave no samples, SASS metrics after PC sampling failed).
#   1. the probe (probe_pc.c, no gpuexp): two PC sampling sessions in one process, each on a fresh
#      module, as gpuexp takes a base and a new profile; SASS metrics twice in one process.
#      OUTDIR/probe.txt                                                             (~5 s)
#   2. tests/gpu/test_lines.lua: PC profiles in its process, SASS counts and the range profiler in
#      children of their own. OUTDIR/tests/test_lines.log                           (~15 s)
#   3. the measurement: 44 line-level regressions of the seed (bench/lines/measure.lua), each sized
#      to 1-10%, one sweep point a case, supervised, every profile in a child process (PC samples
#      and SASS counts of both builds); cases that would start after 290 s are skipped, the
#      measurement ends at 330 s. OUTDIR/lines.csv, its samples and metadata, OUTDIR/profiles.tar.gz
#      (the profiles and the children's logs), OUTDIR/measure.log       (~3.5 min, at most 5.3)
#   4. the table, recomputed from the files (bench/lines/recompute.lua): OUTDIR/table.md
set -u
out=$1
build=$(cd "${2:-build}" && pwd)
seed=${3:-38}
case $seed in ''|*[!0-9]*) echo "bench/lines/run.sh: SEED must be a whole number, not '$seed'" >&2; exit 2;; esac
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
mkdir -p "$out"
out=$(cd "$out" && pwd)
start=$(date +%s)
cuda=${CUDA_HOME:-/usr/local/cuda}
exec 3>&1
say() { echo "$*" >&3; echo "$*" >>"$out/run.log"; }
say "bench/lines/run.sh: seed $seed, $(date -u) on $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1)"

# ---- 1. the probe ----
probe="$out/probe.txt"
: >"$probe"
if nvcc -cubin -arch=sm_90 -lineinfo -o "$out/probe_kernel.cubin" "$root/bench/lineprobe/kernel.cu" >>"$probe" 2>&1 &&
   gcc -O1 -I"$cuda/include" -I"$cuda/extras/CUPTI/include" "$here/probe_pc.c" -o "$out/probe_pc" \
     -L"$cuda/lib64" -L"$cuda/extras/CUPTI/lib64" -L"$cuda/targets/x86_64-linux/lib" -lcuda -lcupti \
     -Wl,-rpath,"$cuda/extras/CUPTI/lib64:$cuda/lib64" >>"$probe" 2>&1; then
  # LOAD MODE BUFFER LAUNCHES ITERS STARTSTOP SASS_FIRST REPEAT SASS_AFTER: gpuexp's recipe, twice
  echo "=== pc after continuous separate 1 200 1 0 each 0" >>"$probe"
  (cd "$out" && timeout 30 ./probe_pc probe_kernel.cubin pc after continuous separate 1 200 1 0 each 0) >>"$probe" 2>&1
  echo "=== exit $?" >>"$probe"
  # NMETRICS LOAD TIMES: gpuexp's seven metrics, twice in one process
  echo "=== sass 7 after 2" >>"$probe"
  (cd "$out" && timeout 30 ./probe_pc probe_kernel.cubin sass 7 after 2) >>"$probe" 2>&1
  echo "=== exit $?" >>"$probe"
else
  say "the probe did not build (see $probe)"
fi
grep '^result' "$probe" >&3
say "probe: $(( $(date +%s) - start )) s"

# ---- 2. the GPU test ----
t=$(date +%s)
"$root/tests/gpu/run_all.sh" "$build" "$out/tests" test_lines >&3 2>&1
say "test_lines: $(( $(date +%s) - t )) s"

# ---- 3. the measurement ----
t=$(date +%s)
deadline=$(( start + 290 ))
cd "$root/bench/lines" &&
LINES_DEADLINE=$deadline GPUEXP_CACHE_DIR="$out/cache" \
  timeout $(( start + 330 - t )) "$build/gpuexp" --quiet --out "$out/lines.csv" --point-timeout 90 \
  measure.lua "$out" 44 "$seed" >"$out/measure.log" 2>&1
say "measure.lua: exit $? in $(( $(date +%s) - t )) s"
tail -n 50 "$out/measure.log" >&3
rm -rf "$out/cache"

# ---- 4. the table, from the files ----
"$build/gpuexp" --quiet --arch sm_90 "$root/bench/lines/recompute.lua" "$out" >"$out/table.md" 2>"$out/recompute.log"
say "recompute: exit $?"
cat "$out/table.md" >&3
if [ -d "$out/profiles" ]; then
  tar czf "$out/profiles.tar.gz" -C "$out" profiles && rm -rf "$out/profiles"
fi
rm -f "$out/probe_pc" "$out/probe_kernel.cubin"
say "bench/lines/run.sh: $(( $(date +%s) - start )) s in all"
