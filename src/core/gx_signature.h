/* A kernel's parameter types as its C++ source writes them ("float*", "int"), for messages that
   speak the user's language instead of PTX's (u64, u32). Read from the source text, no compiler. */
#ifndef GX_SIGNATURE_H
#define GX_SIGNATURE_H

#include <stddef.h>

/* Finds the __global__ function named `name` (an unqualified identifier) in source and writes its
   parameters' types into types[0 .. max-1] (each size bytes): returns their count, or -1 when there
   is no such kernel or more than one with different parameter counts (overloads). */
int gx_signature_types(const char *source, const char *name, char *types, size_t size, int max);

#endif
