#!/bin/sh
# Mutation run: does the suite fail when the code it guards breaks? Each mutant of
# tests/mutation/mutants.txt (a one-line sed change to one file, and the tests expected to kill it)
# is applied to a copy of the working tree, built, and its tests run; the copy is removed at the
# end. The working tree itself is never changed.
#
#   tests/mutation/run.sh [-j JOBS] [-l LIST] [NAME...]    (NAME: only these mutants)
#
# Prints a line per mutant: "killed" (a test failed: good), "ALIVE" (its tests pass: a test is
# missing), "stale" (the change no longer applies: fix the list), "no build" (the mutant does not
# compile: change it), then the counts. Exit 0 when every mutant run was killed, 1 otherwise, 2 on
# a usage or setup error. Each mutant's tests run under a time limit (a mutant that hangs a test is
# killed by the limit). Needs git, cmake, ctest, sed.
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
list="$here/mutants.txt"
jobs=2
while getopts "j:l:" flag; do
    case "$flag" in
    j) jobs=$OPTARG ;;
    l) list=$OPTARG ;;
    *) echo "usage: $0 [-j JOBS] [-l LIST] [NAME...]" >&2; exit 2 ;;
    esac
done
shift $((OPTIND - 1))
[ -r "$list" ] || { echo "mutation: cannot read $list" >&2; exit 2; }

work=$(mktemp -d "${TMPDIR:-/tmp}/gpuexp-mutation.XXXXXX") || exit 2
trap 'rm -rf "$work"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
copy="$work/tree"
build="$work/build"
mkdir -p "$copy"

# the working tree as it is (tracked and untracked files, not the ignored ones)
(cd "$root" && git ls-files -co --exclude-standard) | while IFS= read -r file; do
    [ -e "$root/$file" ] || continue # deleted but still in the index
    mkdir -p "$copy/$(dirname "$file")" && cp -P "$root/$file" "$copy/$file"
done
echo "mutation: building a copy of the tree in $work (once)"
if ! cmake -S "$copy" -B "$build" > "$work/configure.log" 2>&1 || ! cmake --build "$build" -j "$jobs" > "$work/build.log" 2>&1; then
    echo "mutation: the unchanged tree does not build:" >&2
    tail -20 "$work/build.log" "$work/configure.log" >&2 2>/dev/null
    exit 2
fi

wanted() { # wanted NAME: run this mutant (no names given: every one)
    [ -z "$names" ] && return 0
    for wanted_name in $names; do [ "$wanted_name" = "$1" ] && return 0; done
    return 1
}
names="$*"
killed=0 alive=0 stale=0 broken=0
separator=' :: '
while IFS= read -r line <&3; do # the list on fd 3: a build or a test reading stdin never eats it
    case "$line" in '' | '#'*) continue ;; esac
    name=${line%%"$separator"*}; rest=${line#*"$separator"}
    file=${rest%%"$separator"*}; rest=${rest#*"$separator"}
    change=${rest%"$separator"*}; tests=${rest##*"$separator"}
    wanted "$name" || continue
    target="$copy/$file"
    if [ ! -f "$target" ]; then printf '%-28s stale: no file %s\n' "$name" "$file"; stale=$((stale + 1)); continue; fi
    cp -p "$target" "$work/original"
    if ! sed -e "$change" "$work/original" > "$target" || cmp -s "$work/original" "$target"; then
        printf '%-28s stale: %s no longer has what the change replaces\n' "$name" "$file"
        cp -p "$work/original" "$target"
        stale=$((stale + 1))
        continue
    fi
    if ! cmake --build "$build" -j "$jobs" > "$work/mutant.log" 2>&1; then
        printf '%-28s no build (%s)\n' "$name" "$file"
        broken=$((broken + 1))
    elif (cd "$build" && ctest -R "$tests" --timeout 180 > "$work/tests.log" 2>&1); then
        printf '%-28s ALIVE: %s still pass\n' "$name" "$tests"
        alive=$((alive + 1))
    else
        failed=$(sed -n 's/^[[:space:]]*[0-9]* - \([^ ]*\) .*/\1/p' "$work/tests.log" | grep -v '^cache\.' | tr '\n' ' ')
        printf '%-28s killed by %s\n' "$name" "${failed:-the build's tests}"
        killed=$((killed + 1))
    fi
    cp "$work/original" "$target" # a newer time than the build's: rebuilt as it was with the next mutant
done 3< "$list"
echo "mutation: $killed killed, $alive alive, $stale stale, $broken not built"
[ $alive -eq 0 ] && [ $stale -eq 0 ] && [ $broken -eq 0 ]
