#include "gx_occupancy.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KIB 1024
/* Published compute-capability limits (CUDA C++ Programming Guide, "Technical Specifications per
   Compute Capability"; shared-memory carve-outs as the driver configures them). */
static const gx_arch_limits table[] = {
    {"sm_70", 7, 0,        64,       2048,     32, 1024, 65536, 65536, 256,
     255,     4, 96 * KIB, 48 * KIB, 96 * KIB, 0,  256,  2,     6,     {0, 8, 16, 32, 64, 96}},
    {"sm_75", 7, 5,        32,       1024,     16, 1024, 65536, 65536, 256,
     255,     4, 64 * KIB, 48 * KIB, 64 * KIB, 0,  256,  2,     2,     {32, 64}},
    {"sm_80", 8, 0,         64,       2048,      32,      1024, 65536, 65536, 256,
     255,     4, 164 * KIB, 48 * KIB, 163 * KIB, 1 * KIB, 128,  2,     8,     {0, 8, 16, 32, 64, 100, 132, 164}},
    {"sm_86", 8, 6,         48,       1536,     16,      1024, 65536, 65536, 256,
     255,     4, 100 * KIB, 48 * KIB, 99 * KIB, 1 * KIB, 128,  1,     6,     {0, 8, 16, 32, 64, 100}},
    {"sm_87", 8, 7,         48,       1536,      16,      1024, 65536, 65536, 256,
     255,     4, 164 * KIB, 48 * KIB, 163 * KIB, 1 * KIB, 128,  1,     8,     {0, 8, 16, 32, 64, 100, 132, 164}},
    {"sm_89", 8, 9,         48,       1536,     24,      1024, 65536, 65536, 256,
     255,     4, 100 * KIB, 48 * KIB, 99 * KIB, 1 * KIB, 128,  1,     6,     {0, 8, 16, 32, 64, 100}},
    {"sm_90", 9,    0,         64,       2048,
     32,      1024, 65536,     65536,    256,
     255,     4,    228 * KIB, 48 * KIB, 227 * KIB,
     1 * KIB, 128,  2,         10,       {0, 8, 16, 32, 64, 100, 132, 164, 196, 228}},
    {"sm_100", 10,   0,         64,       2048,
     32,       1024, 65536,     65536,    256,
     255,      4,    228 * KIB, 48 * KIB, 227 * KIB,
     1 * KIB,  128,  2,         10,       {0, 8, 16, 32, 64, 100, 132, 164, 196, 228}},
    {"sm_120", 12, 0,         48,       1536,     24,      1024, 65536, 65536, 256,
     255,      4,  100 * KIB, 48 * KIB, 99 * KIB, 1 * KIB, 128,  1,     6,     {0, 8, 16, 32, 64, 100}},
};
#define TABLE_SIZE (sizeof table / sizeof table[0])

const gx_arch_limits *gx_arch_at(int index)
{
    return index >= 0 && (size_t)index < TABLE_SIZE ? &table[index] : NULL;
}

const gx_arch_limits *gx_arch_find(const char *arch)
{
    char wanted[16];
    if (strncmp(arch, "sm_", 3) == 0 || strncmp(arch, "SM_", 3) == 0)
        arch += 3;
    else if (strncmp(arch, "compute_", 8) == 0)
        arch += 8;
    if (strchr(arch, '.')) { /* "8.6" */
        int major = 0, minor = 0;
        if (sscanf(arch, "%d.%d", &major, &minor) != 2)
            return NULL;
        snprintf(wanted, sizeof wanted, "sm_%d%d", major, minor);
    } else {
        snprintf(wanted, sizeof wanted, "sm_%s", arch);
    }
    size_t length = strlen(wanted);
    if (length > 3 && (wanted[length - 1] == 'a' || wanted[length - 1] == 'f')) /* sm_90a: the same limits */
        wanted[length - 1] = 0;
    for (size_t i = 0; i < TABLE_SIZE; i++)
        if (strcmp(table[i].arch, wanted) == 0)
            return &table[i];
    return NULL;
}

static int round_up(int value, int unit)
{
    return (value + unit - 1) / unit * unit;
}
static int divide_up(int value, int unit)
{
    return (value + unit - 1) / unit;
}
static int minimum(int a, int b)
{
    return a < b ? a : b;
}

/* The smallest configurable carve-out of at least `bytes`; -1 when none is that large. */
static int carveout_at_least(const gx_arch_limits *arch, long bytes)
{
    for (int i = 0; i < arch->carveout_count; i++)
        if ((long)arch->carveouts_kib[i] * KIB >= bytes)
            return arch->carveouts_kib[i] * KIB;
    return -1;
}

void gx_limiter_names(unsigned limiters, char *buffer, size_t size)
{
    static const char *const names[] = {"warps", "registers", "shared", "blocks", "barriers"};
    buffer[0] = 0;
    for (int i = 0; i < 5; i++)
        if (limiters & (1u << i))
            snprintf(buffer + strlen(buffer), size - strlen(buffer), "%s%s", buffer[0] ? "+" : "", names[i]);
}

int gx_occupancy_compute(const gx_arch_limits *arch, const gx_occupancy_input *in, gx_occupancy_result *r,
                         gx_error *error)
{
    memset(r, 0, sizeof *r);
    if (in->block_size < 1 || in->block_size > arch->max_threads_per_block)
        return gx_fail(error, GX_ERR_USAGE, "block size %d is outside 1..%d for %s", in->block_size,
                       arch->max_threads_per_block, arch->arch);
    if (in->registers < 0 || in->registers > arch->max_registers_per_thread)
        return gx_fail(error, GX_ERR_USAGE, "%d registers per thread is outside 0..%d for %s", in->registers,
                       arch->max_registers_per_thread, arch->arch);
    if (in->static_shared_bytes < 0 || in->dynamic_shared_bytes < 0 || in->barriers < 0)
        return gx_fail(error, GX_ERR_USAGE, "shared memory and barriers must be >= 0");
    long shared = (long)in->static_shared_bytes + in->dynamic_shared_bytes;
    long block_limit =
        shared > arch->shared_per_block_bytes ? arch->shared_per_block_optin_bytes : arch->shared_per_block_bytes;
    if (shared > block_limit)
        return gx_fail(error, GX_ERR_USAGE, "%ld bytes of shared memory per block exceed %s's limit of %ld (opt-in)",
                       shared, arch->arch, block_limit);

    const int warp_size = 32;
    r->warps_per_block = divide_up(in->block_size, warp_size);

    /* warps: whole blocks of warps per SM */
    r->limit_warps = arch->max_warps_per_sm / r->warps_per_block;
    r->limit_blocks = arch->max_blocks_per_sm;

    /* registers: allocated per warp in units, from a register file split between sub-partitions;
       a block must fit when its warps are spread evenly over them */
    int per_warp = round_up(in->registers * warp_size, arch->register_allocation_unit);
    r->allocated_registers_per_block = per_warp * r->warps_per_block;
    int assumed = per_warp * round_up(r->warps_per_block, arch->sub_partitions);
    if (per_warp == 0)
        r->limit_registers = GX_UNLIMITED;
    else if (assumed > arch->registers_per_block || r->allocated_registers_per_block > arch->registers_per_block)
        r->limit_registers = 0;
    else {
        int warps_per_sub_partition = (arch->registers_per_sm / arch->sub_partitions) / per_warp;
        r->limit_registers = warps_per_sub_partition * arch->sub_partitions / r->warps_per_block;
    }

    /* shared memory: the block's bytes plus the driver's reservation, rounded to the allocation
       unit, against the carve-out */
    int allocated = round_up((int)shared + arch->reserved_shared_per_block_bytes, arch->shared_allocation_unit_bytes);
    r->allocated_shared_per_block_bytes = allocated;
    int largest = arch->carveouts_kib[arch->carveout_count - 1] * KIB;
    int config;
    if (in->carveout_kib == -2) { /* the driver's pick, decided below once the other limits are known */
        config = largest;
    } else if (in->carveout_kib < 0) {
        config = largest;
    } else {
        config = carveout_at_least(arch, (long)in->carveout_kib * KIB);
        if (config < 0)
            return gx_fail(error, GX_ERR_USAGE, "carve-out of %d KiB is larger than %s's %d KiB", in->carveout_kib,
                           arch->arch, largest / KIB);
    }
    if (allocated > config) /* the SM is reconfigured to the smallest carve-out that fits one block */
        config = carveout_at_least(arch, allocated);
    r->limit_shared = allocated > 0 ? config / allocated : GX_UNLIMITED;

    /* named barriers (9.0 and later): a budget proportional to the block limit */
    r->limit_barriers = GX_UNLIMITED;
    if (arch->cc_major >= 9 && in->barriers > 0)
        r->limit_barriers = arch->barriers_per_block_slot * r->limit_blocks / in->barriers;

    int others = minimum(minimum(r->limit_warps, r->limit_registers), minimum(r->limit_blocks, r->limit_barriers));
    if (in->carveout_kib == -2 && allocated > 0) {
        /* the smallest carve-out that holds as many blocks as the other limits allow, or as many as
           the largest carve-out can hold when that is fewer */
        int target = minimum(others, largest / allocated);
        for (int i = 0; i < arch->carveout_count; i++) {
            int size = arch->carveouts_kib[i] * KIB;
            if (size >= allocated && size / allocated >= target) {
                config = size;
                break;
            }
        }
        r->limit_shared = config / allocated;
    }
    r->shared_config_bytes = config;

    r->blocks_per_sm = minimum(others, r->limit_shared);
    unsigned limiters = 0;
    if (r->blocks_per_sm == r->limit_warps)
        limiters |= GX_LIMIT_WARPS;
    if (r->blocks_per_sm == r->limit_registers)
        limiters |= GX_LIMIT_REGISTERS;
    if (r->blocks_per_sm == r->limit_shared)
        limiters |= GX_LIMIT_SHARED;
    if (r->blocks_per_sm == r->limit_blocks)
        limiters |= GX_LIMIT_BLOCKS;
    if (r->blocks_per_sm == r->limit_barriers)
        limiters |= GX_LIMIT_BARRIERS;
    r->limiters = limiters;
    r->active_warps = r->blocks_per_sm * r->warps_per_block;
    r->occupancy_pct = 100.0 * r->active_warps / arch->max_warps_per_sm;
    return GX_OK;
}

int gx_launch_check_limits(const gx_arch_limits *arch, const char *kernel, const unsigned block[3],
                           unsigned dynamic_shared_bytes, int static_shared_bytes, gx_error *error)
{
    unsigned long long threads = (unsigned long long)block[0] * block[1] * block[2];
    if (threads > (unsigned long long)arch->max_threads_per_block)
        return gx_fail(error, GX_ERR_USAGE, "launch of '%s' with a block of %llu threads: at most %d per block on %s",
                       kernel, threads, arch->max_threads_per_block, arch->arch);
    long available = (long)arch->shared_per_block_optin_bytes - static_shared_bytes;
    if ((long)dynamic_shared_bytes > available)
        return gx_fail(
            error, GX_ERR_USAGE,
            "launch of '%s' with %u bytes of dynamic shared memory: %s allows %d bytes per block, %d of them "
            "taken by the kernel's static shared memory, so at most %ld dynamic",
            kernel, dynamic_shared_bytes, arch->arch, arch->shared_per_block_optin_bytes, static_shared_bytes,
            available);
    return GX_OK;
}
