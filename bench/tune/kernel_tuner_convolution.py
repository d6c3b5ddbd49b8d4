#!/usr/bin/env python3
"""Kernel Tuner on its own convolution example, at gpuexp's budget, for the comparison of issue 37
(item 5): the same source (.kt/convolution.cu, or GPUEXP_KT_CONVOLUTION), image (4096 x 4096), 7 x 7
filter in constant memory (Kernel Tuner's cmem_args; gpuexp's bench/tune/convolution.lua sets the
same d_filter through program:global), the same 702 configurations (the axes are read from gpuexp's
brute-force record, OUTDIR/conv/brute.json, written by bench/tune/run.sh) and max_fevals a tenth of
them, for each strategy and seed. Writes OUTDIR/kernel_tuner/STRATEGY-SEED.json: every evaluation
(configuration, times, compile and benchmark time) and the wall time, then bench/tune/referee.lua
re-measures every reported winner, gpuexp's and Kernel Tuner's, in one run by one method.

    python3 bench/tune/kernel_tuner_convolution.py OUTDIR [strategies] [seeds]
        strategies: random_sample,genetic_algorithm,bayes_opt,dual_annealing (default); seeds: 1,2,3

Kernel Tuner 1.5 with its CUDA Python backend (lang="nvcuda") and the wheels bench/kernel_tuner_study.py
lists.
"""
import json
import os
import random
import sys
import time

import numpy as np
import kernel_tuner
import kernel_tuner.backends.nvcuda as kt_nvcuda

# as bench/kernel_tuner_study.py: Kernel Tuner 1.5's CUDA Python backend checks a launch's
# (CUresult,) tuple as a bare CUresult; unwrapped, a failed launch is a skipped configuration
_error_check = kt_nvcuda.cuda_error_check
kt_nvcuda.cuda_error_check = lambda error: _error_check(error[0] if isinstance(error, tuple) and error else error)

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUT = sys.argv[1]
STRATEGIES = (sys.argv[2] if len(sys.argv) > 2 else "random_sample,genetic_algorithm,bayes_opt,dual_annealing").split(",")
SEEDS = [int(s) for s in (sys.argv[3] if len(sys.argv) > 3 else "1,2,3").split(",")]
SOURCE = os.environ.get("GPUEXP_KT_CONVOLUTION") or os.path.join(ROOT, ".kt", "convolution.cu")
IMAGE, FILTER = 4096, 7

with open(os.path.join(OUT, "conv", "brute.json")) as f:
    brute = json.load(f)
tune_params = {name: [int(v) for v in values] for name, values in brute["axes"]}
tune_params["filter_width"] = [FILTER]
tune_params["filter_height"] = [FILTER]


def restrictions(p):
    """gpuexp's where (bench/tune/convolution.lua): 32 to 1024 threads; padding only where it changes the layout."""
    threads = p["block_size_x"] * p["block_size_y"]
    return 32 <= threads <= 1024 and (p["use_padding"] == 0 or p["block_size_x"] % 32 != 0)


MAX_FEVALS = -(-brute["configurations"] // 10)
with open(SOURCE) as f:
    source = f.read()
side = IMAGE + FILTER - 1
rng = np.random.default_rng(3)
output = np.zeros(IMAGE * IMAGE, dtype=np.float32)
image = rng.uniform(-1, 1, side * side).astype(np.float32)
filter_weights = rng.uniform(-1, 1, 33 * 33).astype(np.float32)
args = [output, image, filter_weights]

os.makedirs(os.path.join(OUT, "kernel_tuner"), exist_ok=True)
for strategy in STRATEGIES:
    for seed in SEEDS:
        path = os.path.join(OUT, "kernel_tuner", "%s-%d.json" % (strategy, seed))
        if os.path.exists(path):
            continue
        np.random.seed(seed)  # Kernel Tuner's strategies draw from numpy's and random's global state
        random.seed(seed)
        started = time.perf_counter()
        results, env = kernel_tuner.tune_kernel(
            "convolution_kernel", source, (IMAGE, IMAGE), args, tune_params, restrictions=restrictions,
            lang="nvcuda", grid_div_x=["block_size_x", "tile_size_x"], grid_div_y=["block_size_y", "tile_size_y"],
            cmem_args={"d_filter": filter_weights}, strategy=strategy, strategy_options={"max_fevals": MAX_FEVALS},
            iterations=7, verbose=False, quiet=True)
        wall = time.perf_counter() - started
        evaluations = []
        for r in results:
            evaluations.append({"point": {name: r[name] for name, _ in brute["axes"]},
                                "time": r.get("time") if isinstance(r.get("time"), (int, float)) else None,
                                "times": r.get("times") if isinstance(r.get("times"), list) else None,
                                "compile_ms": r.get("compile_time"), "benchmark_ms": r.get("benchmark_time")})
        valid = [e for e in evaluations if e["time"] is not None]
        best = min(valid, key=lambda e: e["time"]) if valid else None
        with open(path, "w") as f:
            json.dump({"tool": "kernel_tuner", "version": kernel_tuner.__version__, "strategy": strategy, "seed": seed,
                       "max_fevals": MAX_FEVALS, "wall_s": wall, "gpu": env.get("device_name"),
                       "gpu_s": sum(sum(e["times"]) for e in valid if e["times"]) / 1000.0,
                       "best": best and best["point"], "evaluations": evaluations}, f)
        print("%s seed %d: %d evaluations, %.1f s wall, best %s" % (strategy, seed, len(evaluations), wall,
                                                                   best and best["point"]))
