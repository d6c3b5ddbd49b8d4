#!/bin/sh
# Builds a libFuzzer target of the C core with clang (AddressSanitizer and UndefinedBehaviorSanitizer,
# no recovery) in a temporary folder and runs it for a fixed time on its committed corpus (the
# found crashes are kept there as regression inputs). A crash, a hang (-timeout), a leak or a
# sanitizer report fails; the input that did it is printed in hex for a regression test.
# usage: run_c.sh SOURCE_ROOT TARGET SECONDS     (exit 77: no clang with libFuzzer here)
set -u
root=$1 target=$2 seconds=$3
clang=$(command -v clang-14 || command -v clang) || { echo "skipped: no clang here"; exit 77; }
work=$(mktemp -d "${TMPDIR:-/tmp}/gpuexp-fuzz.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT INT TERM
core="$root/src/core"
if ! "$clang" -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror=implicit-function-declaration -I"$core" \
    "$root/tests/fuzz/$target.c" "$core/gx_binary.c" "$core/gx_ptx.c" "$core/gx_error.c" -o "$work/fuzzer" \
    2> "$work/build.log"; then
  if grep -q "fuzzer" "$work/build.log" && grep -qi "cannot find\|no such file" "$work/build.log"; then
    cat "$work/build.log"; echo "skipped: clang has no libFuzzer runtime (libclang-rt-14-dev)"; exit 77
  fi
  cat "$work/build.log"; exit 1
fi
mkdir "$work/new"
# the committed corpus is read, never written: new inputs go to the temporary folder
"$work/fuzzer" -max_total_time="$seconds" -timeout=5 -rss_limit_mb=2048 -print_final_stats=1 \
  -artifact_prefix="$work/" "$work/new" "$root/tests/fuzz/corpus/${target#fuzz_}" > "$work/log" 2>&1
code=$?
grep -B2 -A30 -m1 "ERROR\|runtime error\|deadly signal" "$work/log" | head -n 40; tail -n 8 "$work/log"
if [ $code -ne 0 ]; then
  for artifact in "$work"/crash-* "$work"/timeout-* "$work"/leak-* "$work"/oom-*; do
    [ -f "$artifact" ] || continue
    echo "the input ($(basename "$artifact")), to add to tests/fuzz/corpus/${target#fuzz_}/ as a regression:"
    od -A d -t x1 "$artifact" | head -n 40
  done
  exit 1
fi
