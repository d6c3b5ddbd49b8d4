#!/bin/sh
# The header of every GPU record (tests/gpu/run_all.sh's suite, bench/remeasure.sh's figures): the
# commit measured, the GPU and its driver, the time. A record that does not name its commit is not
# a record: with no commit known this prints why and exits 2.
# usage: tests/gpu/header.sh BUILD_DIR   (prints the header lines; run from anywhere)
# The commit, first found of:
#   $GPUEXP_COMMIT (what the one who copied the tree says it is),
#   the file .gpuexp-commit at the repository root (one line: the hash, or `git describe` of it),
#   the repository's git (`git describe --always --dirty`, and the full hash).
# A declared commit comes first: a copied tree can carry a .git that is not its own (the lent GPU
# machine's copy held the session's first commit while its files were a later one's).
set -u
build=${1:?usage: tests/gpu/header.sh BUILD_DIR}
src=$(cd "$(dirname "$0")/../.." && pwd)
commit="" how=""
if [ -n "${GPUEXP_COMMIT:-}" ]; then
  commit=$GPUEXP_COMMIT how="GPUEXP_COMMIT"
elif [ -s "$src/.gpuexp-commit" ]; then
  commit=$(head -n 1 "$src/.gpuexp-commit") how=".gpuexp-commit"
elif [ -e "$src/.git" ] && command -v git >/dev/null 2>&1 &&
  full=$(git -C "$src" rev-parse HEAD 2>/dev/null) && described=$(git -C "$src" describe --always --dirty 2>/dev/null); then
  commit="$full ($described)" how="git"
fi
if [ -z "$commit" ]; then
  echo "tests/gpu/header.sh: no commit known for $src: no .git, no \$GPUEXP_COMMIT, no .gpuexp-commit;" \
    "a GPU record must name what it measured (git rev-parse HEAD > .gpuexp-commit before copying the tree)" >&2
  exit 2
fi
echo "commit: $commit [from $how]"
if command -v nvidia-smi >/dev/null 2>&1 &&
  gpus=$(nvidia-smi --query-gpu=index,name,uuid,driver_version --format=csv,noheader 2>/dev/null) && [ -n "$gpus" ]; then
  echo "$gpus" | sed 's/^/gpu: /'
else
  echo "gpu: $("$build/gpuexp" info 2>&1 | head -n 1)"
fi
echo "gpuexp: $("$build/gpuexp" --version 2>&1 | head -n 1)"
echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(uname -n)"
