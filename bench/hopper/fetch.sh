#!/bin/sh
# Places the third-party sources bench/hopper/run.sh needs, from PyPI with pip (the GPU machine has
# no network): run here, then carry the folder (default .whl/hopper, ignored by git) to the GPU.
#   kernel_tuner 1.5.0 (sdist)   test/convolution.cu: Kernel Tuner's convolution example, its filter
#                                in __constant__ float d_filter[33*33]
#   cupy 13.6.0 (sdist)          tests/cupy_tests/core_tests/test_raw.py: the cooperative-groups
#                                grid-sync kernel of its TestRawGridSync, cut out to grid_sync.cu
#   nvidia-cutlass 4.2.0.0       CUTLASS's headers and CuTe's Hopper tutorial GEMM
#                                (examples/cute/tutorial/hopper/wgmma_tma_sm90.cu: TMA, clusters,
#                                wgmma), built here for sm_90a with nvcc (about 2.5 minutes); its
#                                headers go beside DEST (DEST_cutlass_src, 28 MB), which the GPU needs
#                                only to build it again: carry DEST alone (3 MB)
# usage: bench/hopper/fetch.sh [DEST]        (from the repository root)
set -eu
dest=${1:-.whl/hopper}
nvcc=${NVCC:-/usr/local/cuda/bin/nvcc}
mkdir -p "$dest/kernel_tuner" "$dest/cupy" "$dest/cutlass" "${dest}_cutlass_src"
dest=$(cd "$dest" && pwd)
headers=$(cd "${dest}_cutlass_src" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
pip download --quiet --no-deps --no-binary :all: kernel_tuner==1.5.0 -d .
tar xzf kernel_tuner-1.5.0.tar.gz kernel_tuner-1.5.0/test/convolution.cu
cp kernel_tuner-1.5.0/test/convolution.cu "$dest/kernel_tuner/convolution.cu"
pip download --quiet --no-deps --no-binary :all: cupy==13.6.0 -d .
tar xzf cupy-13.6.0.tar.gz cupy-13.6.0/tests/cupy_tests/core_tests/test_raw.py
cp cupy-13.6.0/tests/cupy_tests/core_tests/test_raw.py "$dest/cupy/test_raw.py"
# the kernel is the raw string _test_grid_sync = r'''...''' of that file
python3 - "$dest/cupy/test_raw.py" "$dest/cupy/grid_sync.cu" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
match = re.search(r"_test_grid_sync = r'''(.*?)'''", text, re.S)
if not match:
    sys.exit("no _test_grid_sync in " + sys.argv[1])
open(sys.argv[2], "w").write("// cupy 13.6.0, tests/cupy_tests/core_tests/test_raw.py: _test_grid_sync\n" + match.group(1))
PY
pip download --quiet --no-deps nvidia-cutlass==4.2.0.0 -d .
python3 -m zipfile -e nvidia_cutlass-4.2.0.0-py3-none-any.whl wheel >/dev/null
source=wheel/cutlass_library/source
rm -rf "$headers/include" "$headers/util"
cp -r "$source/include" "$headers/include"
cp -r "$source/tools/util/include" "$headers/util"
cp "$source/examples/cute/tutorial/hopper/wgmma_tma_sm90.cu" "$dest/cutlass/wgmma_tma_sm90.cu"
cp "$source/LICENSE.txt" "$dest/cutlass/LICENSE.txt" 2>/dev/null || true
"$nvcc" -std=c++17 -arch=sm_90a -O3 --expt-relaxed-constexpr -I"$headers/include" -I"$headers/util" \
  "$dest/cutlass/wgmma_tma_sm90.cu" -o "$dest/cutlass/wgmma_tma_sm90" 2>"$dest/cutlass/build.log" \
  || { echo "the CUTLASS tutorial did not build: $dest/cutlass/build.log"; exit 1; }
echo "placed in $dest (CUTLASS's headers in $headers):"
ls -1 "$dest/kernel_tuner" "$dest/cupy" "$dest/cutlass"
