/* A project's nvcc command-line options, made into what NVRTC takes: passed on, mapped to NVRTC's
   equivalent, dropped with a note when they only concern host code or output files, or refused
   with the equivalent named. The architecture options (-arch, -gencode, -code) say which builds
   the project makes; gx_options_pick_arch chooses the one the driver would run on a GPU. Pure
   text: no NVRTC, no GPU. */
#ifndef GX_OPTIONS_H
#define GX_OPTIONS_H

#include <stddef.h>

#include "gx_error.h"

#define GX_OPTIONS_MAX 256
#define GX_OPTIONS_TARGETS 32

typedef struct gx_options {
    char *nvrtc[GX_OPTIONS_MAX]; /* options for NVRTC, malloc'ed */
    int nvrtc_count;
    char *includes[GX_OPTIONS_MAX]; /* -I/-isystem folders, for the caller to resolve; malloc'ed */
    int include_count;
    /* the options as nvcc takes them, less -I (in includes), the architecture, output and link
       options (gpuexp sets those when it runs nvcc); malloc'ed */
    char *nvcc[GX_OPTIONS_MAX];
    int nvcc_count;
    /* the builds the options ask for: "sm_90", "sm_90a", "compute_90" (from -arch, -gencode,
       -code); "native" for -arch=native, "all" for -arch=all or all-major */
    char targets[GX_OPTIONS_TARGETS][16];
    int target_count;
    char notes[2048]; /* "-O3: host code only; ..." for what was dropped or mapped */
} gx_options;

/* Translates count options. On a refused option returns GX_ERR_USAGE with the equivalent named;
 *out is freed then. for_nvcc: nothing is refused (nvcc compiles, with out->nvcc). */
int gx_options_translate(const char *const *options, int count, int for_nvcc, gx_options *out, gx_error *error);
void gx_options_free(gx_options *options);

/* Chooses what to compile for a GPU of architecture device_arch ("sm_90") given the targets,
   as the driver chooses from nvcc's fat binary: SASS for the same major version and a minor
   version at most the device's (the highest such), else PTX of the highest compute_XY at most the
   device's (compiled by the driver at load). Writes "sm_XY" or "compute_XY" to out. No targets:
   device_arch. GX_ERR_USAGE when no build the options make could run there. */
int gx_options_pick_arch(const gx_options *options, const char *device_arch, char *out, size_t size, gx_error *error);

#endif
