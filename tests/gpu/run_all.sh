#!/bin/sh
# Runs the GPU tests without ctest (the lent GPU machines have no cmake): each tests/gpu/test_*.lua
# as ctest would (same options and environment), one after the other, a log per test in LOGDIR and
# a summary line per test. Usage: tests/gpu/run_all.sh BUILD_DIR LOGDIR [NAME...]
# (no NAME: every test but test_explain_night, which takes about 7 minutes alone).
# The record: the header of tests/gpu/header.sh (the commit, the GPU, the time) then a line per
# test, on standard output and in LOGDIR/summary.txt. With no commit known it runs nothing.
# Exit status: 0 when every test passed or skipped (77), 2 when the commit is unknown, else 1.
set -u
build=$(cd "$1" && pwd) logs=$2
shift 2
mkdir -p "$logs"
src=$(cd "$(dirname "$0")/../.." && pwd)
header=$(sh "$src/tests/gpu/header.sh" "$build") || exit 2
echo "$header" | tee "$logs/summary.txt"
if [ $# -eq 0 ]; then
  for t in "$src"/tests/gpu/test_*.lua; do
    n=$(basename "$t" .lua)
    [ "$n" = test_explain_night ] || set -- "$@" "$n"
  done
fi
failed=0
for n in "$@"; do
  start=$(date +%s)
  (cd "$build" && GPUEXP_CACHE_DIR="$build/test-cache" GPUEXP_LUA_DIR= \
    ./gpuexp --quiet --no-plan --point-timeout 1200 "$src/tests/gpu/$n.lua" "$build/gpuexp") \
    >"$logs/$n.log" 2>&1
  rc=$?
  case $rc in 0) word=passed ;; 77) word=skipped ;; *) word="FAILED (exit $rc)"; failed=1 ;; esac
  echo "$n: $word in $(( $(date +%s) - start )) s" | tee -a "$logs/summary.txt"
  case $rc in 0|77) ;; *) tail -n 25 "$logs/$n.log" | sed 's/^/    /' ;; esac
done
rm -rf "$build/test-cache"
exit $failed
