"""The nights bench/nightly_rule/collect.sh recorded, as study.py and three_rules.py read them:
DATA/aa/N and DATA/inject/NAME_P, each with its kernels.csv, judged by `gpuexp compare --json`."""
import csv
import json
import os
import subprocess
import sys


class Nights:
    def __init__(self, argv):
        self.data = argv[1]
        self.gpuexp = argv[2] if len(argv) > 2 else "./build/gpuexp"

    def night(self, path):
        """A night's CSV: night("aa/3"), night("inject/triad_5")."""
        return os.path.join(self.data, path, "kernels.csv")

    def aa(self):
        """The A/A nights' numbers, in order."""
        return sorted(int(n) for n in os.listdir(os.path.join(self.data, "aa")) if n.isdigit())

    def injected(self):
        """The injected nights' names (KERNEL_P), by kernel then by P."""
        return sorted(os.listdir(os.path.join(self.data, "inject")),
                      key=lambda s: (s.rsplit("_", 1)[0], int(s.rsplit("_", 1)[1])))

    def compare(self, bases, new, flags):
        """The points of `gpuexp compare --json FLAGS BASES NEW`; exits on a failure (not on exit 1, a regression)."""
        out = subprocess.run([self.gpuexp, "compare", "--json"] + flags + bases + [new], capture_output=True, text=True)
        if out.returncode not in (0, 1):
            sys.exit(f"gpuexp compare failed ({out.returncode}): {out.stderr}")
        return json.loads(out.stdout)["points"]

    @staticmethod
    def kernel_of(path):
        """Each point's kernel in a night's CSV, by the point's name as compare gives it."""
        with open(path) as f:
            return {f"case={r['case']} block_size={r['block_size']}": r["kernel"] for r in csv.DictReader(f)}
