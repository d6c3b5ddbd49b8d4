/* `gpuexp occupancy`: the occupancy calculator as CSV on stdout, one row per combination. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gx_cli.h"
#include "gx_occupancy.h"

#define MAX_VALUES 4096

static const char usage[] = "(gpuexp occupancy --help)\n";

/* Parses "a,b,c:d:e" into values; returns the count or -1. */
static int parse_values(const char *text, int *values, int max)
{
    int count = 0;
    char copy[1024];
    snprintf(copy, sizeof copy, "%s", text);
    for (char *save = NULL, *part = strtok_r(copy, ",", &save); part; part = strtok_r(NULL, ",", &save)) {
        long start, stop, step = 1;
        char *end;
        errno = 0;
        start = strtol(part, &end, 10);
        if (end == part || errno)
            return -1;
        stop = start;
        if (*end == ':') {
            char *next = end + 1;
            stop = strtol(next, &end, 10);
            if (end == next)
                return -1;
            if (*end == ':') {
                next = end + 1;
                step = strtol(next, &end, 10);
                if (end == next || step <= 0)
                    return -1;
            }
        }
        if (*end || stop < start || start < 0 || stop > 1 << 30)
            return -1;
        for (long v = start; v <= stop; v += step) {
            if (count >= max)
                return -1;
            values[count++] = (int)v;
        }
    }
    return count;
}

static void print_limits(const gx_arch_limits *a)
{
    printf("%s,%d.%d,%d,%d,%d,%d,%d,%d,%d,%d,%d,%d,%d,%d,%d,%d,", a->arch, a->cc_major, a->cc_minor,
           a->max_warps_per_sm, a->max_threads_per_sm, a->max_blocks_per_sm, a->max_threads_per_block,
           a->registers_per_sm, a->registers_per_block, a->register_allocation_unit, a->max_registers_per_thread,
           a->shared_per_sm_bytes, a->shared_per_block_bytes, a->shared_per_block_optin_bytes,
           a->reserved_shared_per_block_bytes, a->shared_allocation_unit_bytes,
           a->cc_major >= 9 ? a->barriers_per_block_slot : 0);
    for (int i = 0; i < a->carveout_count; i++)
        printf("%s%d", i ? " " : "\"", a->carveouts_kib[i]);
    printf("\"\n");
}

static void print_limit(int value)
{
    if (value == GX_UNLIMITED)
        printf(",");
    else
        printf(",%d", value);
}

/* What the command line asks for: the value texts of --block, --registers, --shared and
   --barriers, the architectures, the carveout, --limits. */
static const char *const value_names[4] = {"--block", "--registers", "--shared", "--barriers"};
struct occupancy_request {
    const char *arch_list, *texts[4];
    int carveout, limits;
};

/* --carveout max|driver|KiB: -1, -2 or the size; -3 when it is none of those. */
static int carveout_of(const char *v)
{
    char *end;
    if (strcmp(v, "max") == 0)
        return -1;
    if (strcmp(v, "driver") == 0)
        return -2;
    long kib = strtol(v, &end, 10);
    return kib < 0 || kib > 1 << 20 || *end || end == v ? -3 : (int)kib;
}

/* Reads the command line into r: -1 to go on, else the exit code (--help, a usage error). */
static int read_line(int argc, char **argv, struct occupancy_request *r)
{
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        int matched = 0;
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            gx_cli_help("occupancy", stdout);
            return GX_EXIT_OK;
        }
        if (strcmp(a, "--limits") == 0) {
            r->limits = 1;
            continue;
        }
        if (i + 1 >= argc) {
            fprintf(stderr, "gpuexp occupancy: %s needs a value\n%s", a, usage);
            return GX_EXIT_USAGE;
        }
        if (strcmp(a, "--arch") == 0) {
            r->arch_list = argv[++i];
            continue;
        }
        if (strcmp(a, "--carveout") == 0) {
            if ((r->carveout = carveout_of(argv[++i])) == -3) {
                fprintf(stderr, "gpuexp occupancy: --carveout takes max, driver or a size in KiB, got '%s'\n", argv[i]);
                return GX_EXIT_USAGE;
            }
            continue;
        }
        for (int k = 0; k < 4; k++)
            if (strcmp(a, value_names[k]) == 0) {
                r->texts[k] = argv[++i];
                matched = 1;
            }
        if (!matched) {
            char hint[256];
            gx_cli_did_you_mean("occupancy", a, hint, sizeof hint);
            fprintf(stderr, "gpuexp occupancy: unknown argument '%s'%s\n%s", a, hint, usage);
            return GX_EXIT_USAGE;
        }
    }
    return -1;
}

/* The architectures of a list (sm_80,sm_90): their count, or -1 with an unknown one said. */
static int read_archs(const char *list, const gx_arch_limits **archs, int max)
{
    int count = 0;
    char copy[512];
    snprintf(copy, sizeof copy, "%s", list);
    for (char *save = NULL, *part = strtok_r(copy, ",", &save); part && count < max;
         part = strtok_r(NULL, ",", &save)) {
        if (!(archs[count++] = gx_arch_find(part))) {
            fprintf(stderr, "gpuexp occupancy: unknown architecture '%s' (known:", part);
            for (int k = 0; gx_arch_at(k); k++)
                fprintf(stderr, " %s", gx_arch_at(k)->arch);
            fprintf(stderr, ")\n");
            return -1;
        }
    }
    return count;
}

/* One CSV row of an architecture and a combination; 0, or -1 when the model refuses it (said). */
static int print_row(const gx_arch_limits *arch, const gx_occupancy_input *in)
{
    gx_occupancy_result o;
    gx_error error;
    if (gx_occupancy_compute(arch, in, &o, &error)) {
        fprintf(stderr, "gpuexp occupancy: %s\n", error.message);
        return -1;
    }
    char limiter[64];
    gx_limiter_names(o.limiters, limiter, sizeof limiter);
    printf("%s,%d,%d,%d,%d", arch->arch, in->block_size, in->registers, in->static_shared_bytes, in->barriers);
    print_limit(o.limit_warps);
    print_limit(o.limit_blocks);
    print_limit(o.limit_registers);
    print_limit(o.limit_shared);
    print_limit(o.limit_barriers);
    printf(",%d,%d,%d,%.2f,%s,%d,%d,%d\n", o.blocks_per_sm, o.active_warps, arch->max_warps_per_sm, o.occupancy_pct,
           limiter, o.shared_config_bytes, o.allocated_shared_per_block_bytes, o.allocated_registers_per_block);
    return 0;
}

/* Every combination of every architecture, a row each; the exit code. */
static int print_rows(const gx_arch_limits **archs, int arch_count, const struct occupancy_request *r)
{
    static int values[4][MAX_VALUES];
    int counts[4];
    for (int k = 0; k < 4; k++)
        if ((counts[k] = parse_values(r->texts[k], values[k], MAX_VALUES)) <= 0) {
            fprintf(stderr, "gpuexp occupancy: %s takes numbers, lists (1,2) and ranges (start:stop:step), got '%s'\n",
                    value_names[k], r->texts[k]);
            return GX_EXIT_USAGE;
        }
    printf("arch,block_size,registers,shared_bytes,barriers,limit_warps,limit_blocks,limit_registers,limit_shared,"
           "limit_barriers,blocks_per_sm,active_warps,max_warps,occupancy_pct,limiter,shared_config_bytes,"
           "allocated_shared_bytes,allocated_registers_per_block\n");
    int status = GX_EXIT_OK;
    for (int a = 0; a < arch_count; a++)
        for (int b = 0; b < counts[0]; b++)
            for (int g = 0; g < counts[1]; g++)
                for (int s = 0; s < counts[2]; s++)
                    for (int n = 0; n < counts[3]; n++) {
                        gx_occupancy_input in = {values[0][b], values[1][g], values[2][s],
                                                 0,            values[3][n], r->carveout};
                        if (print_row(archs[a], &in))
                            status = GX_EXIT_USAGE;
                    }
    return status;
}

int gx_cli_occupancy(int argc, char **argv)
{
    struct occupancy_request r = {.texts = {NULL, "0", "0", "0"}, .carveout = -1};
    int code = read_line(argc, argv, &r);
    if (code >= 0)
        return code;
    const gx_arch_limits *archs[32];
    int arch_count = r.arch_list ? read_archs(r.arch_list, archs, 32) : 0;
    if (arch_count < 0)
        return GX_EXIT_USAGE;
    if (r.limits) {
        printf("arch,compute_capability,max_warps_per_sm,max_threads_per_sm,max_blocks_per_sm,max_threads_per_block,"
               "registers_per_sm,registers_per_block,register_allocation_unit,max_registers_per_thread,"
               "shared_per_sm_bytes,shared_per_block_bytes,shared_per_block_optin_bytes,"
               "reserved_shared_per_block_bytes,shared_allocation_unit_bytes,barriers_per_block_slot,carveouts_kib\n");
        for (int k = 0; arch_count ? k < arch_count : gx_arch_at(k) != NULL; k++)
            print_limits(arch_count ? archs[k] : gx_arch_at(k));
        return GX_EXIT_OK;
    }
    if (!arch_count || !r.texts[0]) {
        fprintf(stderr, "gpuexp occupancy: --arch and --block are required\n%s", usage);
        return GX_EXIT_USAGE;
    }
    return print_rows(archs, arch_count, &r);
}
