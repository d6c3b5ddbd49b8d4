#!/usr/bin/env python3
"""Kernel Tuner on gpuexp's tuning study: the same kernel (kernels/tune_matmul.cu), space (1,392
configurations: block shape, outputs per thread, unroll, with the same restrictions), output check
and budget (max_fevals = a tenth of the space) as bench/tune_study.lua, on the same GPU.

For each Kernel Tuner strategy: the best configuration found, its time, the wall time and the
benchmark (GPU) time spent until it was first found, the evaluations, and whether it is in
gpuexp's brute-force tie set (the tune_ties.json that bench/tune_study.lua writes to $OUT: given as
the third argument, else read from $OUT or bench/h200/). Prints a Markdown table; writes $OUT/kernel_tuner_study.md.

    python3 bench/kernel_tuner_study.py [n=1024] [strategies=random_sample,genetic_algorithm,bayes_opt,dual_annealing]
        [gpuexp's tune_ties.json]

Kernel Tuner 1.5 with its CUDA Python backend (lang="nvcuda": cuda.bindings, already on the GPU
machine) needs these wheels carried (pip download --no-deps, python 3.12, manylinux x86_64):
kernel_tuner 1.5.0, python-constraint2 2.9.0, xmltodict 1.0.4, jsonschema 4.26.0,
jsonschema-specifications 2025.9.1, referencing 0.37.0, rpds-py 2026.9.1 (numpy, scipy, pandas,
scikit-learn, packaging and nvidia-ml-py are there already).
"""
import json
import os
import sys
import time

import numpy as np
import kernel_tuner

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# the space's restrictions, kernel, data and output check, and the launch check's repair, are those of
# bench/tune/kt_run.py (the comparison with Kernel Tuner)
sys.dont_write_bytecode = True  # no __pycache__ left in the tree
sys.path.insert(0, os.path.join(ROOT, "bench", "tune"))
import kt_run  # noqa: E402

kt_run.unwrap_launch_errors()
N = int(sys.argv[1]) if len(sys.argv) > 1 else 1024
STRATEGIES = (sys.argv[2] if len(sys.argv) > 2 else "random_sample,genetic_algorithm,bayes_opt,dual_annealing").split(",")

# gpuexp's space (kernels/tune_matmul.lua), in Kernel Tuner's names
tune_params = {
    "block_size_x": [4, 8, 16, 32, 64],
    "block_size_y": [1, 2, 4, 8, 16, 32],
    "TM": [1, 2, 4, 8],
    "TN": [1, 2, 4, 8],
    "UNROLL": [1, 2, 4, 8],
}
restrictions = kt_run.matmul_restrictions
space = sum(1 for bx in tune_params["block_size_x"] for by in tune_params["block_size_y"] for tm in tune_params["TM"]
            for tn in tune_params["TN"] for _ in tune_params["UNROLL"]
            if restrictions({"block_size_x": bx, "block_size_y": by, "TM": tm, "TN": tn}))
MAX_FEVALS = space // 10
kernel, source, problem_size, args, options, _ = kt_run.problem("matmul", np, N)


def key(p):
    return "%d/%d/%d/%d/%d" % (p["block_size_x"], p["block_size_y"], p["TM"], p["TN"], p["UNROLL"])


ties = set()
out = os.environ.get("OUT")
# gpuexp's tie set: the path given, else $OUT/tune_ties.json (bench/tune_study.lua in the same
# command), else bench/h200/tune_ties.json (a copy kept from an earlier run)
candidates = [sys.argv[3]] if len(sys.argv) > 3 else []
if out:
    candidates.append(os.path.join(out, "tune_ties.json"))
candidates.append(os.path.join(ROOT, "bench", "h200", "tune_ties.json"))
ties_path = next((c for c in candidates if os.path.exists(c)), None)
if ties_path:
    with open(ties_path) as f:
        for t in json.load(f):
            ties.add("%d/%d/%d/%d/%d" % (t["bx"], t["by"], t["tm"], t["tn"], t["unroll"]))

rows = []
for strategy in STRATEGIES:
    started = time.perf_counter()
    results, env = kernel_tuner.tune_kernel(
        kernel, source, problem_size, args, tune_params, restrictions=restrictions, lang="nvcuda", strategy=strategy,
        strategy_options={"max_fevals": MAX_FEVALS}, iterations=7, verbose=False, quiet=True, **options)
    wall = time.perf_counter() - started
    valid = [r for r in results if isinstance(r.get("time"), (int, float))]
    if not valid:
        rows.append((strategy, 0, wall, None, None, None, None))
        continue
    best_i = min(range(len(valid)), key=lambda i: valid[i]["time"])
    best = valid[best_i]
    # the time until the best was first measured: the benchmark time (GPU) and every phase (wall)
    gpu_until, wall_until = 0.0, 0.0
    for r in results:
        gpu_until += sum(r.get("times", [])) / 1000.0 if isinstance(r.get("times"), list) else 0.0
        for phase in ("compile_time", "verification_time", "benchmark_time", "framework_time", "strategy_time"):
            wall_until += float(r.get(phase) or 0) / 1000.0
        if r is best:
            break
    rows.append((strategy, len(results), wall, best, gpu_until, wall_until, key(best) in ties if ties else None))

gpu = env.get("device_name", "?") if rows else "?"
lines = ["# Kernel Tuner %s on gpuexp's tuning space: %s, n = %d, %d configurations, max_fevals %d" %
         (kernel_tuner.__version__, gpu, N, space, MAX_FEVALS), "",
         "| strategy | evaluations | wall s | best | best ms | GPU s until found | wall s until found | in gpuexp's brute-force tie set |",
         "| --- | ---: | ---: | --- | ---: | ---: | ---: | --- |"]
for strategy, evaluations, wall, best, gpu_until, wall_until, tied in rows:
    if best is None:
        lines.append("| %s | %d | %.1f | none valid | | | | |" % (strategy, evaluations, wall))
        continue
    lines.append("| %s | %d | %.1f | bx=%d by=%d tm=%d tn=%d u=%d | %.4g | %.2f | %.1f | %s |" % (
        strategy, evaluations, wall, best["block_size_x"], best["block_size_y"], best["TM"], best["TN"],
        best["UNROLL"], best["time"], gpu_until, wall_until,
        "n/a (no tune_ties.json)" if tied is None else ("yes" if tied else "no")))
lines.append("")
lines.append("Kernel Tuner compiles every configuration (the block shape is a define there); gpuexp compiles once "
             "per (tm, tn, unroll) and sets the block shape at launch.")
text = "\n".join(lines)
print(text)
if out:
    with open(os.path.join(out, "kernel_tuner_study.md"), "w") as f:
        f.write(text + "\n")
