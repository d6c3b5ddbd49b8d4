/* Theoretical occupancy for any architecture, no GPU needed: a table of per-architecture limits
   and the rules of NVIDIA's occupancy calculator, with the block limit of every resource. */
#ifndef GX_OCCUPANCY_H
#define GX_OCCUPANCY_H

#include <stddef.h>

#include "gx_error.h"

#define GX_MAX_CARVEOUTS 12

typedef struct gx_arch_limits {
    const char *arch; /* "sm_90" */
    int cc_major, cc_minor;
    int max_warps_per_sm;
    int max_threads_per_sm;
    int max_blocks_per_sm;
    int max_threads_per_block;
    int registers_per_sm;
    int registers_per_block;
    int register_allocation_unit; /* registers, allocated per warp in these units */
    int max_registers_per_thread;
    int sub_partitions;         /* register file split per scheduler */
    int shared_per_sm_bytes;    /* at the largest carve-out */
    int shared_per_block_bytes; /* without opt-in */
    int shared_per_block_optin_bytes;
    int reserved_shared_per_block_bytes; /* taken by the driver from each block's allocation */
    int shared_allocation_unit_bytes;
    int barriers_per_block_slot; /* named-barrier budget: this many x the block limit (9.0+) */
    int carveout_count;
    int carveouts_kib[GX_MAX_CARVEOUTS]; /* the shared-memory sizes the driver can configure */
} gx_arch_limits;

typedef struct gx_occupancy_input {
    int block_size; /* threads per block */
    int registers;  /* per thread, as ptxas reports them */
    int static_shared_bytes;
    int dynamic_shared_bytes;
    int barriers;     /* named barriers per block (ptxas "used N barriers"); 9.0+ counts them */
    int carveout_kib; /* -1: the largest (the calculator's default policy);
                         -2: the smallest that keeps the other limits (the driver's pick);
                         else a requested size, rounded up to a configurable one */
} gx_occupancy_input;

enum gx_limiter {
    GX_LIMIT_WARPS = 1,
    GX_LIMIT_REGISTERS = 2,
    GX_LIMIT_SHARED = 4,
    GX_LIMIT_BLOCKS = 8,
    GX_LIMIT_BARRIERS = 16,
};

#define GX_UNLIMITED 0x7fffffff

typedef struct gx_occupancy_result {
    int limit_warps, limit_registers, limit_shared, limit_blocks, limit_barriers; /* blocks per SM */
    int blocks_per_sm;
    int warps_per_block;
    int active_warps;
    double occupancy_pct;
    unsigned limiters; /* gx_limiter bits of every resource at the minimum */
    int allocated_registers_per_block;
    int allocated_shared_per_block_bytes; /* with the reservation and rounding */
    int shared_config_bytes;              /* the carve-out used for limit_shared */
} gx_occupancy_result;

/* The table entry for "sm_86" or "86" or "8.6"; NULL when unknown. */
const gx_arch_limits *gx_arch_find(const char *arch);
const gx_arch_limits *gx_arch_at(int index); /* NULL past the end */

/* Computes every limit; returns GX_ERR_USAGE for impossible inputs (a block over the maximum,
   more than 255 registers, shared memory over the per-block limit), with the reason. */
int gx_occupancy_compute(const gx_arch_limits *arch, const gx_occupancy_input *input, gx_occupancy_result *result,
                         gx_error *error);

/* The limits the driver checks at a launch, checked offline against an architecture (a plan):
   at most max_threads_per_block threads, and dynamic shared memory within the opt-in limit less
   the kernel's static shared memory. GX_ERR_USAGE naming the kernel and the limit otherwise. */
int gx_launch_check_limits(const gx_arch_limits *arch, const char *kernel, const unsigned block[3],
                           unsigned dynamic_shared_bytes, int static_shared_bytes, gx_error *error);

/* "warps", "registers+shared", ... */
void gx_limiter_names(unsigned limiters, char *buffer, size_t size);

#endif
