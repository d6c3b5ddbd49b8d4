#!/bin/sh
# What gpuexp's own code costs per launch, without a GPU: CPU instructions (callgrind) per launch of
# an empty kernel from the C loop on the driver API (bench/launch_rate.c) and from a Lua loop, bound
# (l:launch()) and table (k:launch{...}), all against the fake driver (bench/fake_driver.c: a
# cuLaunchKernel that only counts). Each is run for N and 2N launches; the difference over N is the
# cost of one launch, start-up and compilation (GPUEXP_NO_CACHE: the same in both) cancelled out. Deterministic: the same build gives the
# same counts on any x86-64 machine. usage: bench/launch_overhead.sh [BUILD_DIR] [N]   (needs valgrind)
set -e
build=${1:-build}
n=${2:-100000}
fake="$PWD/$build/bench/libgx_fake_cuda.so"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
instructions() { # command... -> the Ir total of its run
    GX_LIBCUDA="$fake" GPUEXP_NO_CACHE=1 valgrind --tool=callgrind --callgrind-out-file="$work/out" "$@" \
        >/dev/null 2>"$work/err" || { cat "$work/err" >&2; exit 1; }
    sed -n 's/.*Collected : \([0-9]*\).*/\1/p' "$work/err"
}
per_launch() { # name, then the command with N where the count goes
    name=$1; shift
    one=$(instructions $(echo "$@" | sed "s/COUNT/$n/"))
    two=$(instructions $(echo "$@" | sed "s/COUNT/$((2 * n))/"))
    echo "$name $(( (two - one) / n ))"
}
echo "# $(date -u +%Y-%m-%dT%H:%M:%SZ) $("$build/gpuexp" --version | head -n 1), $(git rev-parse --short HEAD 2>/dev/null), N=$n"
echo "# instructions per launch (callgrind Ir), fake driver"
per_launch c_loop "$build/bench/bench_launch_rate" COUNT 1
per_launch lua_bound "$build/gpuexp" --inline bench/launch_overhead.lua bound COUNT
per_launch lua_table "$build/gpuexp" --inline bench/launch_overhead.lua table COUNT
per_launch lua_loop_alone "$build/gpuexp" --inline bench/launch_overhead.lua none COUNT
