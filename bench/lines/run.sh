#!/bin/sh
# bench/lines/run.sh OUTDIR [BUILD]: issue 38 on the GPU machine, from the repository root, with the
# built gpuexp in BUILD (default build) and nvcc and gcc on the machine; about 6 minutes at most.
#   1. the PC sampling probe (probe_pc.c, no gpuexp): one process a variant of the recipe, to settle
#      what gave the lead's first probe no samples; and the SASS metrics' record layout with 7
#      metrics at once. OUTDIR/probe.txt, and the mode the measurement then uses.   (~30 s)
#   2. tests/gpu/test_lines.lua (gpuexp's own line profiles against the range profiler's counts).
#      OUTDIR/tests/test_lines.log                                                   (~20 s)
#   3. the measurement: 33 line-level regressions (bench/lines/measure.lua), one sweep point a case,
#      supervised; cases that would start after the budget are skipped.  OUTDIR/lines.csv, its
#      samples and metadata, OUTDIR/profiles.tar.gz (the profiles), OUTDIR/measure.log   (<= 4.5 min)
#   4. the table, recomputed from the files (bench/lines/recompute.lua): OUTDIR/table.md
set -u
out=$1
build=$(cd "${2:-build}" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
mkdir -p "$out"
out=$(cd "$out" && pwd)
start=$(date +%s)
cuda=${CUDA_HOME:-/usr/local/cuda}
exec 3>&1
say() { echo "$*" >&3; echo "$*" >>"$out/run.log"; }
say "bench/lines/run.sh: $(date -u) on $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1)"

# ---- 1. the probe ----
probe="$out/probe.txt"
: >"$probe"
if nvcc -cubin -arch=sm_90 -lineinfo -o "$out/probe_kernel.cubin" "$root/bench/lineprobe/kernel.cu" >>"$probe" 2>&1 &&
   gcc -O1 -I"$cuda/include" -I"$cuda/extras/CUPTI/include" "$here/probe_pc.c" -o "$out/probe_pc" \
     -L"$cuda/lib64" -L"$cuda/extras/CUPTI/lib64" -L"$cuda/targets/x86_64-linux/lib" -lcuda -lcupti \
     -Wl,-rpath,"$cuda/extras/CUPTI/lib64:$cuda/lib64" >>"$probe" 2>&1; then
  # LOAD MODE BUFFER LAUNCHES ITERS STARTSTOP SASS_FIRST REPEAT SASS_AFTER: the first is the
  # lead's first probe; each and keep: two profiles in one process, as gpuexp makes them
  for variant in \
    "before serialized same 1 200 1 1 once 0" \
    "before serialized same 1 200 1 0 once 0" \
    "before serialized separate 1 200 1 0 once 0" \
    "after serialized separate 1 200 1 0 once 0" \
    "before continuous separate 1 200 1 0 once 0" \
    "after continuous separate 1 200 1 0 once 0" \
    "after continuous same 1 200 1 0 once 0" \
    "after serialized separate 10 2000 1 0 once 0" \
    "after continuous separate 1 200 0 0 once 0" \
    "after continuous separate 1 200 1 1 once 0" \
    "after continuous separate 1 200 1 0 each 1" \
    "after continuous separate 1 200 1 0 keep 1" \
    "after serialized separate 1 200 1 0 each 1" \
    "after serialized separate 1 200 1 0 keep 1"; do
    echo "=== pc $variant" >>"$probe"
    (cd "$out" && timeout 30 ./probe_pc probe_kernel.cubin pc $variant) >>"$probe" 2>&1
    echo "=== exit $?" >>"$probe"
  done
  for variant in "2 before" "7 before" "7 after"; do
    echo "=== sass $variant" >>"$probe"
    (cd "$out" && timeout 30 ./probe_pc probe_kernel.cubin sass $variant) >>"$probe" 2>&1
    echo "=== exit $?" >>"$probe"
  done
else
  say "the probe did not build (see $probe)"
fi
grep '^result' "$probe" >&3
# the mode: continuous when a continuous variant with a buffer of its own gave samples, else
# serialized when one did (else continuous: the measurement then says what PC sampling gave); and
# whether PC sampling is kept enabled between profiles: when enabling it again gave nothing and
# keeping it gave samples
serialized=0 mode=continuous
if ! grep -q '^result pc .*mode continuous buffer separate .*repeat once .*: samples [1-9]' "$probe" &&
   grep -q '^result pc .*mode serialized buffer separate .*repeat once .*: samples [1-9]' "$probe"; then
  serialized=1 mode=serialized
fi
keep=0
if grep -q "^result pc .*mode $mode buffer separate .*repeat each .*second 0 " "$probe" &&
   grep -q "^result pc .*mode $mode buffer separate .*repeat keep .*second [1-9]" "$probe"; then
  keep=1
fi
say "probe: $(( $(date +%s) - start )) s; the measurement samples PCs with LINES_SERIALIZED=$serialized GX_LINES_PC_KEEP=$keep"

# ---- 2. the GPU test ----
t=$(date +%s)
GX_LINES_PC_KEEP=$keep "$root/tests/gpu/run_all.sh" "$build" "$out/tests" test_lines >&3 2>&1
say "test_lines: $(( $(date +%s) - t )) s"

# ---- 3. the measurement ----
t=$(date +%s)
deadline=$(( start + 320 ))
cd "$root/bench/lines" &&
LINES_SERIALIZED=$serialized GX_LINES_PC_KEEP=$keep LINES_DEADLINE=$deadline GPUEXP_CACHE_DIR="$out/cache" \
  timeout $(( deadline + 25 - t )) "$build/gpuexp" --quiet --out "$out/lines.csv" --point-timeout 90 \
  measure.lua "$out" 33 >"$out/measure.log" 2>&1
say "measure.lua: exit $? in $(( $(date +%s) - t )) s"
tail -n 40 "$out/measure.log" >&3
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
