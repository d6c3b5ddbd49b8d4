#!/usr/bin/env python3
"""Kernel Tuner at gpuexp's budget, for the comparison of issue 37 (item 5), run by bench/tune/kt_compare.sh:

    python3 bench/tune/kt_run.py SPACE TRUTH RECORDS SEED STRATEGIES [TIME_LIMIT_S]
    python3 bench/tune/kt_run.py --check SPACE TRUTH      (no GPU: the space is gpuexp's, then exit)

SPACE: conv (Kernel Tuner's own convolution example, .kt/convolution.cu or GPUEXP_KT_CONVOLUTION: a
4096 x 4096 image, a 7 x 7 filter in constant memory through cmem_args, as bench/tune/convolution.lua
sets d_filter through program:global) or matmul (kernels/tune_matmul.cu, n = 1024, the output checked
against numpy's product, as kernels/tune_matmul.lua checks it). TRUTH holds SPACE/brute.json, gpuexp's
brute-force record (bench/h100/tune37/tune37_records.tar.gz): its axes are the space, and the
configurations Kernel Tuner builds from this file's restrictions must be exactly those it measured
(checked before anything runs). max_fevals is a tenth of the space, as gpuexp's max_evals.
STRATEGIES: comma-separated (random_sample,genetic_algorithm,bayes_opt,dual_annealing); each
strategy's seed sets numpy's and random's global state, which Kernel Tuner's strategies draw from.
TIME_LIMIT_S (default 90): Kernel Tuner's own time_limit per run, a guard: a run it stops has fewer
evaluations than max_fevals, and its record says so.

Writes RECORDS/kernel_tuner/SPACE/STRATEGY-SEED.json per run (skipped when it exists): every visit
(configuration, KT's time and its iteration times, compile and benchmark time, the error of a
failed one), the winner it reports (the least `time` among the configurations that ran), the wall
time, the GPU time (the iteration times of each distinct configuration, as gpuexp's cost_s is the
sum of its timed samples) and KT's benchmark phase time. Prints one line per run.

Kernel Tuner 1.5 with its CUDA Python backend (lang="nvcuda": NVRTC in this process, no cache between
runs, so every run compiles what it visits) and the wheels in .whl/kt (see bench/kernel_tuner_study.py).
"""
import json
import os
import random
import sys
import time
import warnings

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
IMAGE, FILTER, N, KT_DEPTH = 4096, 7, 1024, 16

# gpuexp's axis names -> Kernel Tuner's parameter names (its block shape is block_size_x/y)
NAMES = {
    "conv": {name: name for name in ("block_size_x", "block_size_y", "tile_size_x", "tile_size_y", "use_padding",
                                     "read_only")},
    "matmul": {"bx": "block_size_x", "by": "block_size_y", "tm": "TM", "tn": "TN", "unroll": "UNROLL"},
}


def conv_restrictions(p):
    """gpuexp's where (bench/tune/convolution.lua): 32 to 1024 threads; padding only where it changes the layout."""
    threads = p["block_size_x"] * p["block_size_y"]
    return 32 <= threads <= 1024 and (p["use_padding"] == 0 or p["block_size_x"] % 32 != 0)


def matmul_restrictions(p):
    """gpuexp's where (kernels/tune_matmul.lua): 32 to 1024 threads, each tile side at most 256."""
    return (32 <= p["block_size_x"] * p["block_size_y"] <= 1024 and p["block_size_y"] * p["TM"] <= 256
            and p["block_size_x"] * p["TN"] <= 256)


RESTRICTIONS = {"conv": conv_restrictions, "matmul": matmul_restrictions}


def load_truth(space, truth):
    with open(os.path.join(truth, space, "brute.json")) as f:
        brute = json.load(f)
    names = NAMES[space]
    axes = [(name, [int(v) for v in values]) for name, values in brute["axes"]]
    if sorted(name for name, _ in axes) != sorted(names):
        raise SystemExit("kt_run.py: %s's axes %s are not %s" % (space, [a[0] for a in axes], sorted(names)))
    tune_params = {names[name]: values for name, values in axes}
    return brute, axes, tune_params


def key(point, axes):
    return "/".join(str(int(point[name])) for name, _ in axes)


def check(space, truth):
    """The configurations Kernel Tuner's Searchspace builds are those of gpuexp's brute-force record."""
    from kernel_tuner.searchspace import Searchspace
    brute, axes, tune_params = load_truth(space, truth)
    names = NAMES[space]
    built = Searchspace(dict(tune_params), RESTRICTIONS[space], 1024)
    ours = set()
    for config in built.list:
        p = dict(zip(tune_params, config))
        ours.add(key({name: p[names[name]] for name, _ in axes}, axes))
    theirs = set(key(e["point"], axes) for e in brute["evaluated"])
    if ours != theirs or len(ours) != brute["configurations"]:
        raise SystemExit("kt_run.py: %s: Kernel Tuner's space has %d configurations, gpuexp's %d (%d in one only)" % (
            space, len(ours), len(theirs), len(ours ^ theirs)))
    print("%s: Kernel Tuner's space is gpuexp's: %d configurations, max_fevals %d" % (
        space, len(ours), -(-brute["configurations"] // 10)))


def problem(space, np, n=N):
    """The kernel, its arguments, Kernel Tuner's options and fixed parameters for SPACE (the matmul's n x n)."""
    if space == "conv":
        path = os.environ.get("GPUEXP_KT_CONVOLUTION") or os.path.join(ROOT, ".kt", "convolution.cu")
        with open(path) as f:
            source = f.read()
        side = IMAGE + FILTER - 1
        rng = np.random.default_rng(3)
        output = np.zeros(IMAGE * IMAGE, dtype=np.float32)
        image = rng.uniform(-1, 1, side * side).astype(np.float32)
        filter_weights = rng.uniform(-1, 1, 33 * 33).astype(np.float32)
        return "convolution_kernel", source, (IMAGE, IMAGE), [output, image, filter_weights], dict(
            grid_div_x=["block_size_x", "tile_size_x"], grid_div_y=["block_size_y", "tile_size_y"],
            cmem_args={"d_filter": filter_weights}), {"filter_width": [FILTER], "filter_height": [FILTER]}
    with open(os.path.join(ROOT, "kernels", "tune_matmul.cu")) as f:
        source = f.read()
    rng = np.random.default_rng(1)
    a = rng.uniform(-1, 1, (n, n)).astype(np.float32)
    b = rng.uniform(-1, 1, (n, n)).astype(np.float32)
    c = np.zeros((n, n), dtype=np.float32)
    reference = (a.astype(np.float64) @ b.astype(np.float64)).astype(np.float32)
    return "matmul", source, (n, n), [a, b, c, np.int32(n)], dict(
        grid_div_x=["block_size_x", "TN"], grid_div_y=["block_size_y", "TM"],
        smem_args={"size": lambda p: KT_DEPTH * (p["block_size_y"] * p["TM"] + p["block_size_x"] * p["TN"]) * 4},
        answer=[None, None, reference, None], atol=1e-2), {}


def unwrap_launch_errors():
    """Kernel Tuner 1.5's CUDA Python backend passes cuLaunchKernel's (CUresult,) tuple to its error check,
    which checks only a bare CUresult: a launch that fails (too many registers for the block) goes
    unnoticed, and the output check then stops the whole tuning ("verification failed" for the matmul's
    bx=32 by=32 tm=8 tn=8: 122 registers x 1024 threads). Unwrapped, the launch error reaches Kernel
    Tuner's own handling, which skips such a configuration, as gpuexp does."""
    import kernel_tuner.backends.nvcuda as kt_nvcuda
    check = kt_nvcuda.cuda_error_check
    kt_nvcuda.cuda_error_check = lambda error: check(error[0] if isinstance(error, tuple) and error else error)


def number(v):
    return v if isinstance(v, (int, float)) and not isinstance(v, bool) else None


def main(argv):
    if argv and argv[0] == "--check":
        check(argv[1], argv[2])
        return 0
    if len(argv) < 5:
        print(__doc__, file=sys.stderr)
        return 2
    space, truth, records, seed, strategies = argv[0], argv[1], argv[2], int(argv[3]), argv[4].split(",")
    time_limit = float(argv[5]) if len(argv) > 5 else 90.0
    warnings.filterwarnings("ignore")  # bayes_opt's scikit-learn floods the log with RuntimeWarnings
    import numpy as np
    import kernel_tuner
    unwrap_launch_errors()

    brute, axes, tune_params = load_truth(space, truth)
    names = NAMES[space]
    kernel, source, size, args, options, fixed = problem(space, np)
    params = dict(tune_params, **fixed)
    max_fevals = -(-brute["configurations"] // 10)
    folder = os.path.join(records, "kernel_tuner", space)
    os.makedirs(folder, exist_ok=True)
    status = 0
    for strategy in strategies:
        path = os.path.join(folder, "%s-%d.json" % (strategy, seed))
        if os.path.exists(path):
            print("kernel_tuner %s %s seed %d: recorded already" % (space, strategy, seed))
            continue
        np.random.seed(seed)
        random.seed(seed)
        started = time.perf_counter()
        try:
            results, env = kernel_tuner.tune_kernel(
                kernel, source, size, args, params, restrictions=RESTRICTIONS[space], lang="nvcuda",
                strategy=strategy, strategy_options={"max_fevals": max_fevals, "time_limit": time_limit},
                iterations=7, verbose=False, quiet=True, seed=seed, **options)
        except Exception as e:  # a run that fails is a record too, and the next strategy still runs
            wall = time.perf_counter() - started
            with open(path, "w") as f:
                json.dump({"tool": "kernel_tuner", "version": kernel_tuner.__version__, "space": space,
                           "strategy": strategy, "seed": seed, "max_fevals": max_fevals, "wall_s": wall,
                           "error": "%s: %s" % (type(e).__name__, e)}, f)
            print("kernel_tuner %s %s seed %d: FAILED after %.1f s: %s: %s" % (space, strategy, seed, wall,
                                                                             type(e).__name__, e))
            status = 1
            continue
        wall = time.perf_counter() - started
        visits, seen = [], {}
        for r in results:
            point = {name: int(r[names[name]]) for name, _ in axes}
            error = r.get("__error__")
            visit = {"point": point, "time": number(r.get("time")),
                     "times": r.get("times") if isinstance(r.get("times"), list) else None,
                     "compile_ms": number(r.get("compile_time")), "benchmark_ms": number(r.get("benchmark_time")),
                     "error": type(error).__name__ if error is not None else (
                         None if number(r.get("time")) is not None else str(r.get("time")))}
            visits.append(visit)
            seen.setdefault(key(point, axes), visit)  # a revisit is served from Kernel Tuner's cache
        valid = [v for v in seen.values() if v["time"] is not None]
        best = min(valid, key=lambda v: v["time"]) if valid else None
        record = {"tool": "kernel_tuner", "version": kernel_tuner.__version__, "lang": "nvcuda", "space": space,
                  "strategy": strategy, "seed": seed, "max_fevals": max_fevals, "time_limit_s": time_limit,
                  "configurations": brute["configurations"], "wall_s": wall, "gpu": env.get("device_name"),
                  "visits": len(visits), "evaluations": len(seen), "valid": len(valid),
                  "stopped_by_time": len(visits) < max_fevals and wall >= time_limit,
                  "gpu_s": sum(sum(v["times"]) for v in valid if v["times"]) / 1000.0,
                  "benchmark_s": sum(v["benchmark_ms"] or 0 for v in visits) / 1000.0,
                  "compile_s": sum(v["compile_ms"] or 0 for v in visits) / 1000.0,
                  "best": best and best["point"], "best_ms": best and best["time"], "visited": visits}
        with open(path, "w") as f:
            json.dump(record, f)
        print("kernel_tuner %s %s seed %d: %d visits, %d configurations (%d ran), wall %.1f s, GPU %.2f s, "
              "compile %.1f s, best %s at %s ms%s" % (
                  space, strategy, seed, len(visits), len(seen), len(valid), wall, record["gpu_s"],
                  record["compile_s"], best and key(best["point"], axes), best and "%.4f" % best["time"],
                  ", STOPPED by the time limit" if record["stopped_by_time"] else ""))
        sys.stdout.flush()
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
