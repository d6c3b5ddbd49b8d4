#!/bin/sh
# Launch rate on a GPU: the empty kernel launched from the C loop on the driver API
# (bench/launch_rate.c) and from a Lua loop (bench/launch_rate.lua: bound l:launch() and table
# k:launch{...}), alternated ALTERNATIONS times (default 7), each run the median of 5 rounds of
# 200000 launches. Writes OUT/launch_rate.txt (every run's raw lines, in order), OUT/versions.txt
# and OUT/summary.txt: the ratio Lua / C of each alternation and their median, min and max.
# usage: bench/launch_rate.sh BUILD_DIR OUT [ALTERNATIONS]   (from the repository root)
set -eu
build=${1:?usage: bench/launch_rate.sh BUILD_DIR OUT [ALTERNATIONS]}
out=${2:?usage: bench/launch_rate.sh BUILD_DIR OUT [ALTERNATIONS]}
alternations=${3:-7}
mkdir -p "$out"
{ "$build/gpuexp" --version; "$build/gpuexp" info | sed -n '1,2p'; git rev-parse HEAD 2>/dev/null || true; } >"$out/versions.txt"
: >"$out/launch_rate.txt"
i=1
while [ "$i" -le "$alternations" ]; do
    echo "# alternation $i" >>"$out/launch_rate.txt"
    "$build/bench/bench_launch_rate" 200000 5 >>"$out/launch_rate.txt"
    "$build/gpuexp" --quiet bench/launch_rate.lua 200000 5 >>"$out/launch_rate.txt"
    i=$((i + 1))
done
ratios() { # the key's ratio to the C loop in each alternation, sorted, then the median line
    awk -v key="$1" '/^c_launches/ {c = $2} $1 == key {print $2 / c}' "$out/launch_rate.txt" | sort -n |
        awk -v name="$2" '{a[NR] = $1} END {printf "%s %.3f (min %.3f, max %.3f, %d alternations)\n", name,
            a[int((NR + 1) / 2)], a[1], a[NR], NR}'
}
{
    ratios lua_bound_launches_per_second launch_rate_ratio_bound_median
    ratios lua_table_launches_per_second launch_rate_ratio_table_median
    awk '/^c_launches/ {print $2}' "$out/launch_rate.txt" | sort -n |
        awk '{a[NR] = $1} END {printf "c_launches_per_second_median %d\n", a[int((NR + 1) / 2)]}'
} | tee "$out/summary.txt"
