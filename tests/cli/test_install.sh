#!/bin/sh
# cmake --install into a temporary prefix, the prefix moved elsewhere, and the installed binary run
# from an unrelated folder: shipped experiments by name, the nightly suite by name, the man page,
# the completion and the LuaLS file; every command's help. Cleans up after itself.
# usage: test_install.sh BUILD_DIR
set -u
build=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

cmake --install "$build" --prefix "$work/prefix" >/dev/null || fail "cmake --install"
mv "$work/prefix" "$work/moved" # relocated: the binary must find its data from its own location
gpuexp=$work/moved/bin/gpuexp
for f in share/gpuexp/experiments/occupancy_sweep.lua share/gpuexp/kernels/saxpy.cu share/gpuexp/luals/gpuexp.lua \
    share/man/man1/gpuexp.1 share/bash-completion/completions/gpuexp share/doc/gpuexp/README.md; do
    [ -f "$work/moved/$f" ] || fail "not installed: $f"
done
mkdir "$work/elsewhere"
cd "$work/elsewhere" || fail "cd"
"$gpuexp" --arch sm_86 occupancy_sweep > out.txt 2>&1 || fail "gpuexp occupancy_sweep from an unrelated folder: $(cat out.txt)"
[ "$(grep -c '^[a-z_]*,' results/occupancy_sweep.csv)" -ge 10 ] || fail "the shipped experiment wrote no rows"
GPUEXP_HISTORY="$work/history.sqlite" "$gpuexp" doctor 2>/dev/null | grep -q "shipped experiments *$work/moved/share/gpuexp/experiments" ||
    fail "the moved binary does not use its own share folder: $("$gpuexp" doctor 2>&1 | grep shipped)"
"$gpuexp" nightly nightly --arch sm_90 --out n > nightly.txt 2>&1 || fail "the nightly suite by name: $(cat nightly.txt)"
"$gpuexp" no_such_experiment > missing.txt 2>&1
[ $? -eq 2 ] && grep -q "cannot open no_such_experiment" missing.txt || fail "a missing experiment: $(cat missing.txt)"

# a build folder inside a source tree that was copied elsewhere: the copy's files, not the original's
root=$(cd "$(dirname "$0")/../.." && pwd)
mkdir -p "$work/tree/build" && cp -r "$root/experiments" "$root/kernels" "$work/tree/" && cp "$build/gpuexp" "$work/tree/build/" ||
    fail "copying a source tree"
GPUEXP_HISTORY="$work/history.sqlite" "$work/tree/build/gpuexp" doctor 2>/dev/null | grep -q "shipped experiments *$work/tree/experiments" ||
    fail "a build folder in a copied tree does not use that tree: $("$work/tree/build/gpuexp" doctor 2>&1 | grep shipped)"

# every command's help: gpuexp help CMD is gpuexp CMD --help, and says how to use it
for command in $("$gpuexp" help --commands); do
    "$gpuexp" help "$command" > help.txt 2>&1 || fail "gpuexp help $command"
    grep -q "usage" help.txt || fail "gpuexp help $command has no usage line"
    if [ "$command" != run ] && [ "$command" != help ]; then
        "$gpuexp" "$command" --help > direct.txt 2>&1 || fail "gpuexp $command --help exits $?"
        cmp -s help.txt direct.txt || fail "gpuexp help $command differs from gpuexp $command --help"
    fi
done
"$gpuexp" help nosuch >/dev/null 2>&1
[ $? -eq 2 ] || fail "gpuexp help of an unknown command must exit 2"
grep -q '^\.SS gpuexp nightly' "$work/moved/share/man/man1/gpuexp.1" || fail "the man page lacks the nightly command"
grep -q -- '--on-regression' "$work/moved/share/man/man1/gpuexp.1" || fail "the man page lacks nightly's options"

# bash completion, with the installed binary first on PATH
if command -v bash >/dev/null; then
    result=$(PATH="$work/moved/bin:$PATH" bash -c ". '$work/moved/share/bash-completion/completions/gpuexp'
        COMP_WORDS=(gpuexp compare --thr); COMP_CWORD=2; _gpuexp; echo \"\${COMPREPLY[*]}\"
        COMP_WORDS=(gpuexp --arch sm_8); COMP_CWORD=2; _gpuexp; echo \"\${COMPREPLY[*]}\"
        COMP_WORDS=(gpuexp occupancy_s); COMP_CWORD=1; _gpuexp; echo \"\${COMPREPLY[*]}\"")
    [ "$result" = "--threshold
sm_80 sm_86 sm_87 sm_89
occupancy_sweep" ] || fail "bash completion gave: $result"
fi
"$gpuexp" --version | grep -q "^gpuexp " || fail "--version"
echo "ok: installed, relocated and run from $work/elsewhere"
