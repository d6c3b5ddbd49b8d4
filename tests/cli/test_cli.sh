#!/bin/sh
# CLI transcript tests: exact first line of stderr (or stdout) and exit code for each case.
# usage: test_cli.sh GPUEXP_BINARY CASES_DIR
gpuexp="$1"
cases="$2"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failed=0
passed=0

# expect CODE 'FIRST LINE' command...   (the first line of stderr, or of stdout when stderr is empty)
expect() {
    code="$1"; line="$2"; shift 2
    "$@" >"$work/out" 2>"$work/err"
    got_code=$?
    if [ -s "$work/err" ]; then got_line=$(head -n 1 "$work/err"); else got_line=$(head -n 1 "$work/out"); fi
    if [ "$got_code" = "$code" ] && [ "$got_line" = "$line" ]; then
        passed=$((passed + 1))
    else
        failed=$((failed + 1))
        echo "FAIL: $*"
        echo "  expected exit $code: $line"
        echo "  got      exit $got_code: $got_line"
    fi
}

cd "$cases" || exit 1
version=$("$gpuexp" --version | sed -n 's/^gpuexp \([0-9.]*\) .*/\1/p')
expect 2 "gpuexp: no script given" "$gpuexp"
expect 2 "gpuexp: unknown option '--bogus'" "$gpuexp" --bogus x.lua
expect 2 "gpuexp: --device takes a GPU number, got 'abc'" "$gpuexp" --device abc x.lua
expect 2 "gpuexp: --out needs a path" "$gpuexp" --out
expect 2 "gpuexp: cannot open missing.lua: No such file or directory" "$gpuexp" missing.lua
expect 0 "usage: gpuexp [options] SCRIPT.lua [script arguments...]" "$gpuexp" --help
expect 1 "raises.lua:3: something went wrong" "$gpuexp" raises.lua
expect 1 "syntax.lua:2: unexpected symbol near '='" "$gpuexp" syntax.lua
expect 1 "check.lua:2: check failed: 2 + 2 is 5" "$gpuexp" check.lua
expect 4 "compile_error.lua:2: nvrtcCompileProgram failed: NVRTC_ERROR_COMPILATION for bad_kernel.cu (arch sm_80):" "$gpuexp" compile_error.lua
expect 0 "args: a b 2" "$gpuexp" args.lua a b
expect 0 "out: $work/x.csv" "$gpuexp" --out "$work/x.csv" args.lua
# no driver: the one form, with the script's location, and exit code 3
expect 3 "device.lua:1: no CUDA driver found: dlopen(/nonexistent/libcuda.so.1) failed: /nonexistent/libcuda.so.1: cannot open shared object file: No such file or directory (is the NVIDIA driver installed?)" \
    env GX_LIBCUDA=/nonexistent/libcuda.so.1 "$gpuexp" device.lua
expect 3 "device.lua:1: no CUDA driver found: /usr/local/cuda/lib64/stubs/libcuda.so is the CUDA toolkit's stub library, not a driver (cuInit: CUDA_ERROR_STUB_LIBRARY)" \
    env GX_LIBCUDA=/usr/local/cuda/lib64/stubs/libcuda.so "$gpuexp" device.lua
expect 3 "gpuexp info: no CUDA driver found: dlopen(/nonexistent/libcuda.so.1) failed: /nonexistent/libcuda.so.1: cannot open shared object file: No such file or directory (is the NVIDIA driver installed?)" \
    env GX_LIBCUDA=/nonexistent/libcuda.so.1 "$gpuexp" info
expect 2 "gpuexp info: unknown argument '--x' (usage: gpuexp info [--device N])" "$gpuexp" info --x
expect 0 "gpuexp $version (built with CUDA 13.0, Lua 5.4.4)" "$gpuexp" --version

echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
