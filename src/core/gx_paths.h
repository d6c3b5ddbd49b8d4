/* Where gpuexp's shared data (experiments, kernels, the LuaLS definitions) lives: beside the
   binary in an installed prefix (BIN/../share/gpuexp), else the source tree it was built from. */
#ifndef GX_PATHS_H
#define GX_PATHS_H

#include <stddef.h>

/* Writes the folder into out and returns 1, or returns 0 when there is none. */
int gx_data_directory(char *out, size_t size);

/* Finds a shipped experiment by name ("occupancy_sweep", "nightly/kernels" or with ".lua"):
   writes its path and returns 1, or returns 0. */
int gx_find_experiment(const char *name, char *out, size_t size);

/* The shipped experiments' names as gpuexp runs them ("occupancy_sweep", "nightly/kernels"), at
   most max, each in a slot of names_size bytes of names; returns how many. */
int gx_experiment_names(char *names, size_t names_size, int max);

#endif
