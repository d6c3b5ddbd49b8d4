#!/bin/sh
# CLI transcript tests: exact first line of stderr (or stdout) and exit code for each case.
# usage: test_cli.sh GPUEXP_BINARY CASES_DIR
# covers: lua/gpuexp/main.lua, lua/gpuexp/commands/run.lua, lua/gpuexp/commands/runner.lua, lua/gpuexp/engine/exits.lua, lua/gpuexp/engine/run.lua, src/core/gx_paths.c, src/core/gx_driver.c, src/core/gx_metric.c, lua/gpuexp/store/suite.lua
gpuexp="$1"
cases="$2"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failed=0
passed=0

# check CODE WHERE 'LINE' command...: the exit code, and one line of output: WHERE is "first"
# (the first line of stderr, or of stdout when stderr is empty) or N (line N of stdout)
check() {
    code="$1"; where="$2"; line="$3"; shift 3
    "$@" >"$work/out" 2>"$work/err"
    got_code=$?
    if [ "$where" != first ]; then got_line=$(sed -n "${where}p" "$work/out")
    elif [ -s "$work/err" ]; then got_line=$(head -n 1 "$work/err")
    else got_line=$(head -n 1 "$work/out"); fi
    if [ "$got_code" = "$code" ] && [ "$got_line" = "$line" ]; then
        passed=$((passed + 1))
    else
        failed=$((failed + 1))
        echo "FAIL: $*"
        echo "  expected exit $code, $where line: $line"
        echo "  got      exit $got_code: $got_line"
    fi
}
expect() { code="$1"; shift; check "$code" first "$@"; }
expect_line() { code="$1"; shift; check "$code" "$@"; }

cd "$cases" || exit 1
version=$(sed -n "s/^project(gpuexp VERSION \([0-9.]*\).*/\1/p" "$cases/../../CMakeLists.txt")
expect 2 "gpuexp: no script given" "$gpuexp"
expect 2 "gpuexp: unknown option '--bogus'" "$gpuexp" --bogus x.lua
expect 2 "gpuexp: --device takes a GPU number, got 'abc'" "$gpuexp" --device abc x.lua
expect 2 "gpuexp: --out needs a path" "$gpuexp" --out
expect 2 "gpuexp: cannot open missing.lua: No such file or directory" "$gpuexp" missing.lua
expect 0 "usage: gpuexp [options] SCRIPT.lua [script arguments...]" "$gpuexp" --help
expect 1 "raises.lua:3: something went wrong" "$gpuexp" --no-plan raises.lua
expect 1 "syntax.lua:2: unexpected symbol near '='" "$gpuexp" --no-plan syntax.lua
expect 1 "check.lua:2: check failed: 2 + 2 is 5" "$gpuexp" --no-plan check.lua
expect 1 "raises_table.lua:2: the script raised a table value, not an error message (table: 0x" sh -c "\"$gpuexp\" --arch sm_90 raises_table.lua 2>&1 | head -n 1 | cut -c1-84 >&2; exit 1"
expect 1 "plan_shared.lua:3: launch of 'k' with 1000000000 bytes of dynamic shared memory: sm_90 allows 232448 bytes per block, 0 of them taken by the kernel's static shared memory, so at most 232448 dynamic" "$gpuexp" --arch sm_90 plan_shared.lua
expect 2 "gpuexp: --point-timeout takes seconds >= 0 (0: no limit), got 'x'" "$gpuexp" --arch sm_90 --point-timeout x args.lua
expect 2 "gpuexp: --shard takes I/N with 0 <= I < N (e.g. 0/4), got '3/3'" "$gpuexp" --arch sm_90 --shard 3/3 args.lua
expect 4 "compile_error.lua:2: nvrtcCompileProgram failed: NVRTC_ERROR_COMPILATION for bad_kernel.cu (arch sm_80):" "$gpuexp" --no-plan compile_error.lua
expect 0 "args: a b 2" "$gpuexp" --no-plan args.lua a b
expect 0 "out: $work/x.csv" "$gpuexp" --no-plan --out "$work/x.csv" args.lua
# no driver: the one form, with the script's location, and exit code 3
expect 3 "device.lua:1: no CUDA driver found: dlopen(/nonexistent/libcuda.so.1) failed: /nonexistent/libcuda.so.1: cannot open shared object file: No such file or directory (is the NVIDIA driver installed?)" \
    env GX_LIBCUDA=/nonexistent/libcuda.so.1 "$gpuexp" --no-plan device.lua
# --no-plan without a GPU: the error at the script's line, then that no GPU was found (no traceback)
expect 3 "gpuexp: no GPU found; --no-plan shows no offline plan instead (without it, or with --arch ARCH, gpuexp shows the plan)" \
    sh -c "GX_LIBCUDA=/nonexistent/libcuda.so.1 \"$gpuexp\" --no-plan device.lua 2>&1 >/dev/null | grep -v '^device.lua:1: ' >&2; exit 3"
expect 3 "device.lua:1: no CUDA driver found: /usr/local/cuda/lib64/stubs/libcuda.so is the CUDA toolkit's stub library, not a driver (cuInit: CUDA_ERROR_STUB_LIBRARY)" \
    env GX_LIBCUDA=/usr/local/cuda/lib64/stubs/libcuda.so "$gpuexp" --no-plan device.lua
expect 3 "gpuexp info: no CUDA driver found: dlopen(/nonexistent/libcuda.so.1) failed: /nonexistent/libcuda.so.1: cannot open shared object file: No such file or directory (is the NVIDIA driver installed?)" \
    env GX_LIBCUDA=/nonexistent/libcuda.so.1 "$gpuexp" info
expect 2 "gpuexp info: unknown option '--x'" "$gpuexp" info --x
expect 0 "gpuexp $version" "$gpuexp" --version

# offline plans: explicit, and the automatic one when no GPU is found
expect 0 "gpuexp: no GPU found (no CUDA driver found: dlopen(/nonexistent/libcuda.so.1) failed: /nonexistent/libcuda.so.1: cannot open shared object file: No such file or directory (is the NVIDIA driver installed?))" \
    env GX_LIBCUDA=/nonexistent/libcuda.so.1 "$gpuexp" plan.lua
expect_line 0 1 "plan sm_90 offline plan for sm_90 64" env GX_LIBCUDA=/nonexistent/libcuda.so.1 "$gpuexp" plan.lua
expect_line 0 1 "plan sm_86 offline plan for sm_86 48" "$gpuexp" --arch sm_86 plan.lua
expect_line 0 2 "minimal 1 warps 66.666666666667 nil" "$gpuexp" --arch 8.6 plan.lua
expect 2 "gpuexp: unknown architecture 'sm_61' (gpuexp occupancy --limits lists them)" "$gpuexp" --arch sm_61 plan.lua

# the occupancy calculator
header="arch,block_size,registers,shared_bytes,barriers,limit_warps,limit_blocks,limit_registers,limit_shared,limit_barriers,blocks_per_sm,active_warps,max_warps,occupancy_pct,limiter,shared_config_bytes,allocated_shared_bytes,allocated_registers_per_block"
expect_line 0 1 "$header" "$gpuexp" occupancy --arch sm_86 --block 1024 --registers 40 --shared 49152
expect_line 0 2 "sm_86,1024,40,49152,0,1,16,1,2,,1,32,48,66.67,warps+registers,102400,50176,40960" \
    "$gpuexp" occupancy --arch sm_86 --block 1024 --registers 40 --shared 49152
expect_line 0 5 "sm_80,256,33,0,0,8,32,6,164,,6,48,64,75.00,registers,167936,1024,10240" \
    "$gpuexp" occupancy --arch sm_80 --block 256 --registers 30:34:1
expect_line 0 9 "sm_90,1024,32,0,1,2,32,2,228,64,2,64,64,100.00,warps+registers,233472,1024,32768" \
    "$gpuexp" occupancy --arch sm_90 --block 128,256,512,1024 --registers 32 --barriers 0,1
expect_line 0 2 "sm_90,256,16,0,0,8,32,16,8,,8,64,64,100.00,warps+shared,8192,1024,4096" \
    "$gpuexp" occupancy --arch sm_90 --block 256 --registers 16 --carveout driver
expect 2 "gpuexp occupancy: --arch and --block are required" "$gpuexp" occupancy --block 256
expect 2 "gpuexp occupancy: unknown architecture 'sm_61' (known: sm_70 sm_75 sm_80 sm_86 sm_87 sm_89 sm_90 sm_100 sm_120)" \
    "$gpuexp" occupancy --arch sm_61 --block 256
expect 2 "gpuexp occupancy: --registers takes numbers, lists (1,2) and ranges (start:stop:step), got '8:4'" \
    "$gpuexp" occupancy --arch sm_90 --block 256 --registers 8:4
expect 2 "gpuexp occupancy: block size 2048 is outside 1..1024 for sm_90" "$gpuexp" occupancy --arch sm_90 --block 2048
# a refused combination is said before anything is printed: no CSV header without its rows
expect_line 2 1 "" "$gpuexp" occupancy --arch sm_90 --block 256,2048

# metrics without CUPTI, and names checked without a GPU
expect 3 "gpuexp metrics: CUPTI not found (tried /nonexistent): install the CUDA toolkit's CUPTI or set GX_LIBCUPTI" \
    env GX_LIBCUPTI=/nonexistent "$gpuexp" metrics --chips
# (not in the sanitizer job: CUPTI loads libnvperf_host with RTLD_DEEPBIND, which AddressSanitizer refuses)
if [ -z "${GPUEXP_NO_CUPTI_HOST:-}" ]; then
expect 1 "gpuexp metrics: unknown metric 'dram__byts.sum' on GH100; did you mean: dram__bytes, dram__sectors, dram__bytes_read, dramc__sectors, lts__t_bytes" \
    "$gpuexp" metrics --check dram__byts.sum --chip GH100
expect_line 0 2 "dram__bytes_read.sum,counter,byte,\"# of bytes read from DRAM\"" "$gpuexp" metrics --check dram__bytes_read.sum --chip GH100
expect_line 0 2 "sm__warps_active.avg.pct_of_peak_sustained_active,counter,percent,\"cumulative # of warps in flight\"" \
    "$gpuexp" metrics --check occupancy --chip GH100
expect 0 "2 metric(s) on GH100: 1 replay pass(es)" "$gpuexp" metrics --check occupancy --chip GH100
fi
expect_line 0 2 "offline nil no hardware counters in an offline plan" "$gpuexp" --arch sm_90 metrics_offline.lua

# suggestions: commands, options, shipped experiments; `run` names the default command
expect 2 "gpuexp: cannot open comapre: No such file or directory (did you mean 'compare'?)" "$gpuexp" comapre a.csv b.csv
expect 2 "gpuexp: unknown option '--arhc' (did you mean '--arch'?)" "$gpuexp" --arhc sm_90 plan.lua
expect 2 "gpuexp: cannot open occupancy_swep: No such file or directory (did you mean 'occupancy_sweep' or 'occupancy'?)" \
    "$gpuexp" occupancy_swep
expect 2 "gpuexp: cannot open experiments/occupancy_sweep.lua: No such file or directory (the shipped experiment runs by name from any folder: gpuexp occupancy_sweep)" \
    "$gpuexp" experiments/occupancy_sweep.lua
expect 1 "raises.lua:3: something went wrong" "$gpuexp" run --no-plan raises.lua
expect 2 "gpuexp: no script given" "$gpuexp" run
expect 2 "gpuexp occupancy: unknown option '--blok' (did you mean '--block'?)" "$gpuexp" occupancy --blok 3
expect 2 "gpuexp compare: unknown option '--treshold' (did you mean '--threshold'?)" "$gpuexp" compare --treshold 3 a b
expect 2 "gpuexp nightly: unknown option '--baselin' (did you mean '--baseline'?)" "$gpuexp" nightly x --baselin 3
expect 2 "gpuexp metrics: unknown option '--chekc' (did you mean '--check'?)" "$gpuexp" metrics --chekc
# one style for every command's messages: gpuexp NAME: (plot and calibrate said "plot:", "calibrate:")
expect 2 "gpuexp plot: give the CSV file" "$gpuexp" plot
expect 3 "gpuexp calibrate: measures this machine's GPU, and there is none to use (no CUDA driver found: dlopen(/nonexistent/libcuda.so.1) failed: /nonexistent/libcuda.so.1: cannot open shared object file: No such file or directory (is the NVIDIA driver installed?)). A roofline plot without a GPU takes the peaks instead: gpuexp plot --roofline --peak-gflops G --peak-gbps B ..." \
    env GX_LIBCUDA=/nonexistent/libcuda.so.1 "$gpuexp" calibrate
# swapped letters, subcommands, architectures and files beside a script
expect 2 "gpuexp: cannot open hepl: No such file or directory (did you mean 'help'?)" "$gpuexp" hepl
expect 2 "gpuexp help: unknown command 'comapre' (did you mean 'compare'?)" "$gpuexp" help comapre
expect 2 "gpuexp history: unknown command 'lst' (did you mean 'list'?)" "$gpuexp" history --history "$work/h.sqlite" lst
expect 2 "gpuexp history: unknown command 'shwo' (did you mean 'show'?)" "$gpuexp" history --history "$work/h.sqlite" shwo 1
expect 2 "gpuexp: unknown architecture 'sm90' (did you mean 'sm_90'?)" "$gpuexp" --arch sm90 plan.lua
expect 2 "gpuexp: unknown architecture 'sm_9' (did you mean 'sm_90' or 'sm_89'?)" "$gpuexp" --arch sm_9 plan.lua
expect 2 "gpuexp occupancy: unknown architecture 'sm90' (did you mean 'sm_90'?)" "$gpuexp" occupancy --arch sm90 --block 32
expect 2 "gpuexp nightly: unknown architecture 'sm_61' (gpuexp occupancy --limits lists them)" "$gpuexp" nightly --arch sm_61 x
expect 2 "gpuexp tune: unknown architecture 'sm90' (did you mean 'sm_90'?)" "$gpuexp" tune --arch sm90 x.lua
expect 2 "gpuexp: cannot open rasies.lua: No such file or directory (did you mean 'raises.lua'?)" "$gpuexp" rasies.lua
expect 2 "gpuexp nightly: cannot read the suite rasies.lua: rasies.lua: No such file or directory (did you mean 'raises.lua'?)" \
    "$gpuexp" nightly --out "$work/night" rasies.lua
# a bad value is refused, never read as 0 (the C commands' lines are parsed by the one parser too)
expect 2 "gpuexp metrics: --device takes a GPU number, got 'x'" "$gpuexp" metrics --device x --list
expect 2 "gpuexp occupancy: --carveout takes max, driver or a size in KiB, got '99999999999'" \
    "$gpuexp" occupancy --arch sm_90 --block 128 --carveout 99999999999
# the options of every command come from one parser (engine/args.lua): the same words everywhere
expect 2 "gpuexp tune: --seed takes a whole number >= 0, got '1.5'" "$gpuexp" tune --seed 1.5 x.lua
expect 2 "gpuexp: --night needs a value" "$gpuexp" --night
expect 2 "gpuexp: --shard takes I/N with 0 <= I < N (e.g. 0/4), got '1/1'" "$gpuexp" --shard 1/1 x.lua
expect 2 "gpuexp ab: --b-define takes NAME=VALUE, got 'x'" "$gpuexp" ab --b-define x ab.lua
# history's subcommands too: a missing value is said, never read as nil (it listed every run)
expect 2 "gpuexp history: list: --experiment needs a value" "$gpuexp" history --history "$work/h.sqlite" list --experiment
expect 2 "gpuexp history: record: --kind takes run or nightly, got 'x'" "$gpuexp" history --history "$work/h.sqlite" record --kind x a.csv
expect 2 "gpuexp history: unaccept: unknown option '--note'" \
    "$gpuexp" history --history "$work/h.sqlite" unaccept 1 --note x

# occupancy --help's defaults are the ones used: no option gives the row the stated defaults give
registers=$("$gpuexp" occupancy --help | sed -n 's/.*--registers N.*(default \([0-9]*\).*/\1/p')
barriers=$("$gpuexp" occupancy --help | sed -n 's/.*--barriers N.*(default \([0-9]*\).*/\1/p')
shared=$("$gpuexp" occupancy --help | sed -n 's/.*--shared BYTES.*(default \([0-9]*\).*/\1/p')
stated=$("$gpuexp" occupancy --arch sm_90 --block 256 --registers "$registers" --barriers "$barriers" --shared "$shared" | sed -n 2p)
expect_line 0 2 "$stated" "$gpuexp" occupancy --arch sm_90 --block 256

echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
