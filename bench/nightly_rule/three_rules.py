#!/usr/bin/env python3
"""The A/A and injected-slowdown study with the three rules of `gpuexp compare` (gpuexp's, NVBench's,
Mann-Whitney's as asv decides, with the 2% floor) and Mann-Whitney's p-value alone (--threshold 0),
on the H200 nights bench/nightly_rule/collect.sh recorded (their samples files included):

    tar xzf bench/nightly_rule/h200/nightly_data.tgz -C /tmp
    python3 bench/nightly_rule/three_rules.py /tmp/nr [path/to/gpuexp] > bench/nightly_rule/THREE_RULES.md
"""
import sys

from nights import Nights

nights = Nights(sys.argv)
BASELINE = 5
RULES = [("gpuexp", ["--rule", "gpuexp"], "last 5 nights"), ("nvbench", ["--rule", "nvbench"], "last night"),
         ("mannwhitney", ["--rule", "mannwhitney"], "last night's samples, 2% floor"),
         ("p < 0.05 alone", ["--rule", "mannwhitney", "--threshold", "0"], "last night's samples, no floor")]
night, kernel_of, compare = nights.night, nights.kernel_of, nights.compare

aa = nights.aa()
injected = nights.injected()
false_aa = {name: 0 for name, _, _ in RULES}
aa_points = 0
for n in aa[1:]:
    bases = [night(f"aa/{b}") for b in aa if n - BASELINE <= b < n]
    for name, flags, _ in RULES:
        points = compare(bases, night(f"aa/{n}"), flags)
        false_aa[name] += sum(e["verdict"] != "same" for e in points)
        if name == "gpuexp":
            aa_points += len(points)
caught = {name: 0 for name, _, _ in RULES}
missed = {name: [] for name, _, _ in RULES}
false_inject = {name: 0 for name, _, _ in RULES}
affected_total = 0
per_injection = []
last = [night(f"aa/{b}") for b in aa[-BASELINE:]]
for injection in injected:
    kernel, pct = injection.rsplit("_", 1)
    new = night(f"inject/{injection}")
    kernels = kernel_of(new)
    row = [f"{kernel} +{pct}%"]
    for name, flags, _ in RULES:
        points = compare(last, new, flags)
        affected = [e for e in points if kernels[e["point"]] == kernel]
        hits = sum(e["verdict"] == "slower" for e in affected)
        caught[name] += hits
        missed[name] += [f"{injection} {e['point']}" for e in affected if e["verdict"] != "slower"]
        false_inject[name] += sum(e["verdict"] != "same" for e in points if kernels[e["point"]] != kernel)
        row.append(f"{hits}/{len(affected)}")
        if name == "gpuexp":
            affected_total += len(affected)
    per_injection.append(row)

print("# Three rules on the same H200 nights (A/A and injected slowdowns)\n")
print(f"Data: the nights of `bench/nightly_rule/h200/nightly_data.tgz` ({len(aa)} A/A nights of the shipped suite, "
      f"12 points each, every sample kept; {len(injected)} nights with one kernel made P% slower). Each rule judges "
      "the same files with `gpuexp compare`.\n")
print("| rule | baseline | A/A false calls (of %d) | injected points caught (of %d) | false calls beside the injections |"
      % (aa_points, affected_total))
print("| --- | --- | ---: | ---: | ---: |")
for name, _, baseline in RULES:
    print(f"| {name} | {baseline} | {false_aa[name]} | {caught[name]} | {false_inject[name]} |")
print("\nPer injection (points caught):\n")
print("| injected | " + " | ".join(name for name, _, _ in RULES) + " |")
print("| --- |" + " ---: |" * len(RULES))
for row in per_injection:
    print("| " + " | ".join(row) + " |")
for name, _, _ in RULES:
    if missed[name]:
        print(f"\n{name} missed: " + ", ".join(missed[name]))
