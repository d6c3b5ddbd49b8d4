/* Compiling with the toolkit's nvcc instead of NVRTC: for a project's .cu file that holds host
   code beside its kernels, which NVRTC cannot take. nvcc -cubin (or -ptx for a compute_XY build)
   with the ptxas report, in a temporary folder, through the same cubin cache as NVRTC. */
#ifndef GX_NVCC_H
#define GX_NVCC_H

#include "gx_compile.h"

/* request->options are nvcc's own options (gx_options' nvcc list); the result has the cubin
   (empty for compute_XY), the PTX and nvcc's output (the ptxas report included) as its log. */
int gx_nvcc_compile(const gx_compile_request *request, gx_compile_result *result, gx_error *error);

#endif
