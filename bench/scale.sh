#!/bin/sh
# The run engine's cost against the number of points (issue 18): wall time per point and peak
# memory of a supervised sweep, an --inline one, a --resume that runs the one missing point, a
# compare of two runs, a merge of 4 shards and a history record, at 1k, 10k and 100k points of a
# trivial Lua point (the engine's own cost: a real point adds its GPU time). Offline plans (no
# GPU needed). Usage: bench/scale.sh [GPUEXP] [POINTS...]
set -eu
gpuexp=$(realpath "${1:-build/gpuexp}")
[ $# -gt 0 ] && shift
sizes=${*:-1000 10000 100000}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
cat > points.lua <<'EOF'
local n = tonumber(os.getenv("N"))
local values = {}
for i = 1, n do values[i] = i end
gpuexp.sweep{name = "points", axes = {{"i", values}},
  run = function(p) return {median_ms = 1 + (p.i % 7) * 0.01, noise_pct = 0.5, samples = 100} end}
EOF
# one measurement: "seconds peak_kb" of the command
measure() {
    start=$(date +%s.%N)
    /usr/bin/time -f "%M" -o t.txt "$@" > /dev/null 2> err.txt || { cat err.txt >&2; exit 1; }
    awk -v a="$start" -v b="$(date +%s.%N)" -v kb="$(cat t.txt)" 'BEGIN { print b - a, kb }'
}
row() { # what n seconds kb
    awk -v what="$1" -v n="$2" -v s="$3" -v kb="$4" \
        'BEGIN { printf "| %-12s | %7d | %9.3f | %8.1f | %7.0f |\n", what, n, s, s / n * 1e6, kb / 1024 }'
}
echo "gpuexp: $("$gpuexp" --version 2>/dev/null | head -1); $(nproc) CPUs: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
echo
echo "| what         |  points |   total s | us/point | peak MB |"
echo "| ---          |    ---: |      ---: |     ---: |    ---: |"
for n in $sizes; do
    export N=$n
    rm -f ./*.csv ./*.json ./*.sqlite* ./*.lock
    set -- $(measure "$gpuexp" --arch sm_90 --quiet -o run.csv points.lua); row supervised "$n" "$1" "$2"
    set -- $(measure "$gpuexp" --arch sm_90 --quiet --inline -o inline.csv points.lua); row inline "$n" "$1" "$2"
    cp run.csv whole.csv
    grep -v "^$((n / 2))," whole.csv > run.csv # one point missing in the middle
    set -- $(measure "$gpuexp" --arch sm_90 --quiet --resume -o run.csv points.lua); row "resume 1" "$n" "$1" "$2"
    cmp -s run.csv whole.csv || { echo "resume did not restore the run" >&2; exit 1; }
    set -- $(measure "$gpuexp" compare inline.csv run.csv); row compare "$n" "$1" "$2"
    for s in 0 1 2 3; do "$gpuexp" --arch sm_90 --quiet --inline --shard $s/4 -o part.csv points.lua 2> /dev/null; done
    set -- $(measure "$gpuexp" merge merged.csv part.shard-0-of-4.csv part.shard-1-of-4.csv part.shard-2-of-4.csv \
        part.shard-3-of-4.csv); row "merge 4" "$n" "$1" "$2"
    set -- $(measure "$gpuexp" history --history h.sqlite record run.csv); row "record" "$n" "$1" "$2"
done
