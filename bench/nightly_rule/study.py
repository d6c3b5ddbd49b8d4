#!/usr/bin/env python3
"""The regression-rule study: counts the alarms of gpuexp's rule and of NVBench's rule on nights
with nothing changed (A/A) and the detections on nights with an injected slowdown, using
`gpuexp compare --json` on the nights that bench/nightly_rule/collect.sh recorded.

    python3 bench/nightly_rule/study.py DATA_DIR [path/to/gpuexp] > bench/nightly_rule/RESULTS.md
"""
import os
import sys

from nights import Nights

nights = Nights(sys.argv)
data = nights.data
BASELINE = 5  # as gpuexp nightly's default
night, kernel_of = nights.night, nights.kernel_of


def compare(bases, new, rule="gpuexp"):
    return nights.compare(bases, new, ["--rule", rule])


aa = nights.aa()
print("# Regression rule study (gpuexp nightly on an H200)\n")
print(f"Data: `{data}`; {len(aa)} A/A nights of `experiments/nightly` (12 points each), each a separate "
      "`gpuexp nightly` process; injected nights make one kernel do P% more work (GPUEXP_INJECT).\n")
print("gpuexp's rule: baseline = the previous nights (at most 5), the rule of `gpuexp compare` (floor 2%, "
      "3x the night-to-night spread, 2x the within-run noise while fewer than 3 nights). NVBench's rule "
      "(nvbench_compare.py): same when |change| <= min(noise of the two runs), against the previous night.\n")
print("## A/A: nights with nothing changed\n")
print("| night | baseline nights | gpuexp: slower | gpuexp: faster | largest change | smallest margin "
      "(threshold - change) | NVBench: SLOW | NVBench: FAST |")
print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |")
totals = {"g_slow": 0, "g_fast": 0, "n_slow": 0, "n_fast": 0, "points": 0}
largest = 0.0
for n in aa[1:]:
    bases = [night(f"aa/{b}") for b in aa if n - BASELINE <= b < n]
    g = compare(bases, night(f"aa/{n}"))
    nv = compare([night(f"aa/{n - 1}")], night(f"aa/{n}"), "nvbench")
    g_slow = sum(e["verdict"] == "slower" for e in g)
    g_fast = sum(e["verdict"] == "faster" for e in g)
    n_slow = sum(e["verdict"] == "slower" for e in nv)
    n_fast = sum(e["verdict"] == "faster" for e in nv)
    change = max(abs(e["change_pct"]) for e in g)
    margin = min(e["threshold_pct"] - abs(e["change_pct"]) for e in g)
    largest = max(largest, change)
    totals["g_slow"] += g_slow; totals["g_fast"] += g_fast
    totals["n_slow"] += n_slow; totals["n_fast"] += n_fast; totals["points"] += len(g)
    print(f"| {n} | {len(bases)} | {g_slow} | {g_fast} | {change:.2f}% | {margin:.2f}% | {n_slow} | {n_fast} |")
print(f"| all | | **{totals['g_slow']}** | {totals['g_fast']} | {largest:.2f}% | | **{totals['n_slow']}** | "
      f"{totals['n_fast']} |\n")
print(f"Out of {totals['points']} point comparisons: gpuexp's rule raised {totals['g_slow']} false regression "
      f"alarms, NVBench's {totals['n_slow']} SLOW and {totals['n_fast']} FAST claims.\n")

print("## Injected slowdowns\n")
print("Baseline: the last 5 A/A nights (NVBench's rule: the last A/A night). Affected points are those of "
      "the injected kernel.\n")
print("| injected | affected points | their measured change | gpuexp: caught | gpuexp: false alarms elsewhere "
      "| NVBench: caught | NVBench: false alarms elsewhere | `gpuexp nightly` exit |")
print("| --- | ---: | --- | ---: | ---: | ---: | ---: | ---: |")
exits = {}
exits_path = os.path.join(data, "exits.txt")
if os.path.exists(exits_path):
    for line in open(exits_path):
        w = line.split()
        if w[0] == "inject":
            exits[f"{w[1]}_{w[2]}"] = w[4]
last = aa[-BASELINE:]
for name in nights.injected():
    kernel, pct = name.rsplit("_", 1)
    new = night(f"inject/{name}")
    kernels = kernel_of(new)
    g = compare([night(f"aa/{b}") for b in last], new)
    nv = compare([night(f"aa/{aa[-1]}")], new, "nvbench")
    affected = [e for e in g if kernels[e["point"]] == kernel]
    changes = sorted(e["change_pct"] for e in affected)
    caught = sum(e["verdict"] == "slower" for e in affected)
    false_g = sum(e["verdict"] == "slower" for e in g if kernels[e["point"]] != kernel)
    nv_caught = sum(e["verdict"] == "slower" for e in nv if kernels[e["point"]] == kernel)
    false_nv = sum(e["verdict"] != "same" for e in nv if kernels[e["point"]] != kernel)
    print(f"| {kernel} +{pct}% | {len(affected)} | {changes[0]:+.2f}% .. {changes[-1]:+.2f}% | {caught}/{len(affected)} "
          f"| {false_g} | {nv_caught}/{len(affected)} | {false_nv} | {exits.get(name, '?')} |")
