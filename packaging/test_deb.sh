#!/bin/sh
# Builds the .deb with CPack, checks its declared dependencies, installs it, runs the installed
# gpuexp from an unrelated folder, removes it and checks nothing is left. Needs root (dpkg -i).
# usage: packaging/test_deb.sh BUILD_DIR
set -eu
build=$1
fail() { echo "FAIL: $*"; exit 1; }
(cd "$build" && rm -f gpuexp_*.deb && cpack -G DEB >/dev/null)
deb=$(ls "$build"/gpuexp_*.deb)
depends=$(dpkg-deb -f "$deb" Depends)
echo "Depends: $depends"
echo "$depends" | grep -q '^libc6 (>= 2\.[0-9]*)$' || fail "Depends should be libc6 alone (everything else is linked in or loaded at run time): $depends"
[ "$(dpkg-deb -f "$deb" Recommends)" = gnuplot-nox ] || fail "Recommends"
contents=$(dpkg-deb -c "$deb")
echo "$contents" | grep -q '\./usr/bin/gpuexp$' || fail "no /usr/bin/gpuexp in the package"
dpkg -i "$deb" >/dev/null
work=$(mktemp -d)
trap 'rm -rf "$work"; dpkg -r gpuexp >/dev/null 2>&1 || true' EXIT
cd "$work"
/usr/bin/gpuexp --version
/usr/bin/gpuexp --arch sm_90 occupancy_sweep >/dev/null 2>&1 || fail "the installed gpuexp could not run a shipped experiment"
[ -s results/occupancy_sweep.csv ] || fail "no CSV"
man -w gpuexp >/dev/null 2>&1 || [ -f /usr/share/man/man1/gpuexp.1.gz ] || [ -f /usr/share/man/man1/gpuexp.1 ] || fail "no man page"
dpkg -r gpuexp >/dev/null
[ ! -e /usr/bin/gpuexp ] && [ ! -e /usr/share/gpuexp ] || fail "files left after dpkg -r"
echo "ok: $(basename "$deb") installed, ran and removed cleanly"
