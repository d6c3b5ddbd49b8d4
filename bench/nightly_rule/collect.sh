#!/bin/sh
# The data of the regression-rule study, on a real GPU, through `gpuexp nightly` itself:
#   bench/nightly_rule/collect.sh OUT aa N        N nights with nothing changed (A/A), one history
#   bench/nightly_rule/collect.sh OUT inject K:P...  a night where kernel K does P% more work
#                                                   (GPUEXP_INJECT), each on a copy of the A/A history
# Each night is a separate `gpuexp nightly experiments/nightly` process, as a scheduler runs it; its
# exit code goes to OUT/exits.txt. Run from the repository root after building.
out="$1"; phase="$2"; shift 2
bin=./build/gpuexp
mkdir -p "$out"
case "$phase" in
aa)
    n=1
    while [ "$n" -le "$1" ]; do
        start=$(date +%s)
        $bin nightly experiments/nightly --quiet --history "$out/aa.sqlite" --out "$out/aa/$n" > "$out/aa_$n.txt" 2>&1
        echo "aa $n exit $? seconds $(( $(date +%s) - start ))" >> "$out/exits.txt"
        n=$((n + 1))
    done ;;
inject)
    for case in "$@"; do
        kernel=${case%%:*}; pct=${case##*:}
        cp "$out/aa.sqlite" "$out/inject_${kernel}_$pct.sqlite"
        start=$(date +%s)
        GPUEXP_INJECT=$kernel=$pct $bin nightly experiments/nightly --quiet --history "$out/inject_${kernel}_$pct.sqlite" \
            --out "$out/inject/${kernel}_$pct" > "$out/inject_${kernel}_$pct.txt" 2>&1
        echo "inject $kernel $pct exit $? seconds $(( $(date +%s) - start ))" >> "$out/exits.txt"
        rm -f "$out/inject_${kernel}_$pct.sqlite"*
    done ;;
esac
