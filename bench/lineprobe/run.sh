#!/bin/sh
# bench/lineprobe/run.sh OUTDIR: builds the probe on the GPU machine and runs it (SASS metrics, PC sampling)
set -u
here=$(cd "$(dirname "$0")" && pwd); out=$1; mkdir -p "$out"
cuda=/usr/local/cuda; inc="-I$cuda/include -I$cuda/extras/CUPTI/include"
lib="-L$cuda/lib64 -L$cuda/extras/CUPTI/lib64 -L$cuda/targets/x86_64-linux/lib"
nvcc -cubin -arch=sm_90 -lineinfo -o "$out/kernel.cubin" "$here/kernel.cu" &&
gcc -O1 $inc "$here/probe.c" -o "$out/probe" $lib -lcuda -lcupti -Wl,-rpath,$cuda/extras/CUPTI/lib64:$cuda/lib64 &&
(cd "$out" && ./probe kernel.cubin) > "$out/probe.txt" 2>&1
echo "probe exit $?"; head -c 6000 "$out/probe.txt"; grep -c '^sass ' "$out/probe.txt"; grep '^pc \|stage\|pcs\|patched\|alone' "$out/probe.txt" | head -40
