/* NVRTC, loaded with dlopen: compile CUDA C++ to a cubin, with the ptxas report and a disk cache. */
#ifndef GX_NVRTC_H
#define GX_NVRTC_H

#include <stddef.h>

#include "gx_compile.h"
#include "gx_error.h"

int gx_nvrtc_version(int *major, int *minor, gx_error *error);
int gx_nvrtc_loaded(void); /* whether this process has loaded NVRTC already (nothing is loaded) */
/* The file NVRTC was loaded from (dladdr of one of its functions), for finding its toolkit. */
int gx_nvrtc_library_path(char *out, size_t size);
int gx_nvrtc_compile(const gx_compile_request *request, gx_compile_result *result, gx_error *error);
#endif
