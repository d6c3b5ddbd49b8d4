/* Text the compiler produces: the ptxas -v report and the PTX entry signatures. Pure parsing. */
#ifndef GX_PTX_H
#define GX_PTX_H

#include <stddef.h>

/* The room for a kernel's name or mangled symbol: C++ templates (CUB's kernels) make names of
   hundreds or thousands of characters, and one cut short matches nothing or another kernel. */
#define GX_NAME_BYTES 4096

typedef struct gx_resources {
    char name[GX_NAME_BYTES];
    int registers;
    int barriers;
    int static_shared_bytes;
    int stack_frame_bytes; /* local memory per thread */
    int spill_store_bytes;
    int spill_load_bytes;
    int constant_bytes; /* cmem[0], the parameter bank, where reported */
} gx_resources;

/* Fills out[] with one entry per function in the ptxas -v report; returns how many (at most max). */
int gx_ptxas_parse(const char *log, gx_resources *out, int max);
/* Finds one function's resources; returns 0 when found. */
int gx_ptxas_find(const char *log, const char *name, gx_resources *out);

typedef enum gx_param_class {
    GX_PARAM_INTEGER, /* .u8 .u16 .u32 .u64 .s8 ... .b32 .b64 (pointers are .u64) */
    GX_PARAM_FLOAT,   /* .f16 .f32 .f64 */
    GX_PARAM_BYTES,   /* .b8 name[N]: structs passed by value */
    GX_PARAM_SIZED,   /* known only by its size (a binary's cuFuncGetParamInfo): any value of that size */
} gx_param_class;

typedef struct gx_param {
    gx_param_class type_class;
    int size_bytes;
    int align_bytes;   /* .align N of a struct; 0 when not given */
    char ptx_type[16]; /* "u64", "f32", "b8[24]", or "8 bytes" for GX_PARAM_SIZED */
    char c_type[48];   /* "float*", "int": as the source writes it, when known (gx_signature.h); else "" */
} gx_param;

/* Parameters of entry `name` in PTX text; returns the count, -1 when there is no such entry or its
   parameter list is not one a compiler writes (a negative or huge array, an odd type): not known,
   or -2 when it has more than max. */
int gx_ptx_params(const char *ptx, const char *name, gx_param *out, int max);
/* Entry names in PTX text, written comma-separated into buffer (for "it has: a, b" messages). */
void gx_ptx_entries(const char *ptx, char *buffer, size_t size);

/* The __cluster_dims__ of entry `name` (its .reqnctapercluster directive): 1 and cluster set, else 0
   and zeros. */
int gx_ptx_required_cluster(const char *ptx, const char *name, int cluster[3]);

/* A module global (__constant__ or __device__ variable) as PTX declares it. */
typedef struct gx_ptx_global {
    char name[256];   /* the symbol, mangled when C++ mangles it */
    char ptx_type[8]; /* "f32", "b8", ... */
    size_t bytes;
    int constant; /* .const (__constant__), else .global (__device__) */
} gx_ptx_global;
/* The module-scope .const and .global variables of PTX text; returns how many (at most max). */
int gx_ptx_globals(const char *ptx, gx_ptx_global *out, int max);

#endif
