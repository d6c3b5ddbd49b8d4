/* Unit tests of the core: no GPU, no Lua. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gx_cache.h"
#include "gx_files.h"
#include "gx_device.h"
#include "gx_memory.h"
#include "gx_occupancy.h"
#include "gx_ptx.h"
#include "gx_fill.h"
#include "gx_signature.h"
#include "gx_stats.h"
#include "gx_suggest.h"

#include "check.h"
#define CHECK_NEAR(a, b, tolerance) CHECK(fabs((double)(a) - (double)(b)) <= (tolerance))

static void test_stats(void)
{
    double samples[] = {5, 1, 4, 2, 3};
    gx_stats s;
    gx_stats_compute(samples, 5, &s);
    CHECK(s.count == 5);
    CHECK_NEAR(s.min, 1, 0);
    CHECK_NEAR(s.max, 5, 0);
    CHECK_NEAR(s.median, 3, 0);
    CHECK_NEAR(s.mean, 3, 1e-12);
    CHECK_NEAR(s.stddev, sqrt(2.5), 1e-12);
    CHECK_NEAR(s.noise_pct, 100 * sqrt(2.5) / 3, 1e-9);
    double even[] = {4, 1, 3, 2};
    gx_stats_compute(even, 4, &s);
    CHECK_NEAR(s.median, 2.5, 1e-12);
    /* an outlier moves the mean, not the median */
    double outlier[] = {1, 1, 1, 1, 1000};
    gx_stats_compute(outlier, 5, &s);
    CHECK_NEAR(s.median, 1, 0);
    CHECK(s.mean > 100);
    gx_stats_compute(NULL, 0, &s);
    CHECK(s.count == 0 && s.median == 0);
}

static const char ptxas_log[] =
    "ptxas info    : 0 bytes gmem\n"
    "ptxas info    : Compiling entry function '_Z4tmplPf' for 'sm_90'\n"
    "ptxas info    : Function properties for _Z4tmplPf\n"
    "    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
    "ptxas info    : Used 8 registers, used 0 barriers\n"
    "ptxas info    : Compile time = 16.446 ms\n"
    "ptxas info    : Compiling entry function 's' for 'sm_90'\n"
    "ptxas info    : Function properties for s\n"
    "    256 bytes stack frame, 44 bytes spill stores, 40 bytes spill loads\n"
    "ptxas info    : Used 96 registers, used 1 barriers, 16384 bytes smem, 380 bytes cmem[0]\n";

static void test_ptxas(void)
{
    gx_resources r[8];
    int n = gx_ptxas_parse(ptxas_log, r, 8);
    CHECK(n == 2);
    CHECK(strcmp(r[0].name, "_Z4tmplPf") == 0);
    CHECK(r[0].registers == 8 && r[0].barriers == 0 && r[0].static_shared_bytes == 0);
    gx_resources s;
    CHECK(gx_ptxas_find(ptxas_log, "s", &s) == 0);
    CHECK(s.registers == 96);
    CHECK(s.barriers == 1);
    CHECK(s.static_shared_bytes == 16384);
    CHECK(s.stack_frame_bytes == 256);
    CHECK(s.spill_store_bytes == 44);
    CHECK(s.spill_load_bytes == 40);
    CHECK(s.constant_bytes == 380);
    CHECK(gx_ptxas_find(ptxas_log, "missing", &s) != 0);
}

static const char ptx[] = ".version 9.0\n.target sm_90\n"
                          ".visible .entry k(\n"
                          "\t.param .u64 k_param_0,\n"
                          "\t.param .f32 k_param_1,\n"
                          "\t.param .u32 k_param_2,\n"
                          "\t.param .f64 k_param_3,\n"
                          "\t.param .u8 k_param_4,\n"
                          "\t.param .align 8 .b8 k_param_5[24]\n"
                          ")\n{\n ret;\n}\n"
                          ".visible .entry empty()\n{\n ret;\n}\n";

static void test_ptx_params(void)
{
    gx_param p[8];
    int n = gx_ptx_params(ptx, "k", p, 8);
    CHECK(n == 6);
    CHECK(p[0].type_class == GX_PARAM_INTEGER && p[0].size_bytes == 8 && strcmp(p[0].ptx_type, "u64") == 0);
    CHECK(p[1].type_class == GX_PARAM_FLOAT && p[1].size_bytes == 4);
    CHECK(p[2].type_class == GX_PARAM_INTEGER && p[2].size_bytes == 4);
    CHECK(p[3].type_class == GX_PARAM_FLOAT && p[3].size_bytes == 8);
    CHECK(p[4].type_class == GX_PARAM_INTEGER && p[4].size_bytes == 1);
    CHECK(p[5].type_class == GX_PARAM_BYTES && p[5].size_bytes == 24);
    CHECK(gx_ptx_params(ptx, "empty", p, 8) == 0);
    CHECK(gx_ptx_params(ptx, "nope", p, 8) == -1);
    CHECK(gx_ptx_params(ptx, "em", p, 8) == -1); /* a prefix is not a match */
    /* more parameters than the caller takes: -2, never the first max of them (issue 34) */
    CHECK(gx_ptx_params(ptx, "k", p, 5) == -2);
    CHECK(gx_ptx_params(ptx, "k", p, 6) == 6);
    /* found by tests/fuzz: a negative or huge array, an odd width, a huge alignment are not PTX a
       compiler writes: the parameters are not known (-1), never a negative size */
    CHECK(gx_ptx_params(".entry k(\n.param .align 8 .b8 k_p[-4]\n)\n{\n}\n", "k", p, 8) == -1);
    CHECK(gx_ptx_params(".entry k(\n.param .b8 k_p[2111111111111111111114]\n)\n{\n}\n", "k", p, 8) == -1);
    CHECK(gx_ptx_params(".entry k(\n.param .u7 k_p\n)\n{\n}\n", "k", p, 8) == -1);
    CHECK(gx_ptx_params(".entry k(\n.param .align 99999999999 .b8 k_p[4]\n)\n{\n}\n", "k", p, 8) == -1);
    /* a damaged ptxas report: "Function properties for" with no space after it, no "for " later */
    gx_resources damaged[2];
    CHECK(gx_ptxas_parse("ptxas info    : Function properties for\xd8\xd8 k\n    8 bytes stack frame\n", damaged, 2) ==
          1);
    char names[64];
    gx_ptx_entries(ptx, names, sizeof names);
    CHECK(strcmp(names, "k, empty") == 0);
}

static void test_random_and_types(void)
{
    CHECK(gx_type_parse("f32") == GX_F32 && gx_type_parse("u8") == GX_U8 && gx_type_parse("float") == -1);
    float a[1000], b[600];
    gx_fill_random(a, GX_F32, 0, 1000, 7, -1, 1);
    gx_fill_random(b, GX_F32, 400, 600, 7, -1, 1); /* element i depends only on (seed, i) */
    CHECK(memcmp(a + 400, b, sizeof b) == 0);
    double sum = 0;
    int distinct = 0;
    for (int i = 0; i < 1000; i++) {
        CHECK(a[i] >= -1 && a[i] < 1);
        sum += a[i];
        distinct += i > 0 && a[i] != a[i - 1];
    }
    CHECK(fabs(sum / 1000) < 0.1); /* uniform on [-1, 1): mean near 0 */
    CHECK(distinct > 990);
    gx_fill_random(b, GX_F32, 0, 600, 8, -1, 1);
    CHECK(memcmp(a, b, sizeof b) != 0); /* another seed, other values */
    int32_t ints[500];
    gx_fill_random(ints, GX_I32, 0, 500, 3, -5, 5);
    int seen_low = 0, seen_high = 0;
    for (int i = 0; i < 500; i++) {
        CHECK(ints[i] >= -5 && ints[i] <= 5);
        seen_low |= ints[i] == -5;
        seen_high |= ints[i] == 5;
    }
    CHECK(seen_low && seen_high);
    double values[37];
    gx_fill_value(values, GX_F64, 37, 2.5);
    for (int i = 0; i < 37; i++)
        CHECK(values[i] == 2.5);
}

static void test_host_buffers(void)
{
    gx_buffer a, b;
    gx_error error;
    CHECK(gx_buffer_alloc(&a, NULL, GX_MEMORY_PAGEABLE, GX_F32, 100, &error) == GX_OK);
    CHECK(gx_buffer_alloc(&b, NULL, GX_MEMORY_PAGEABLE, GX_F32, 100, &error) == GX_OK);
    CHECK(gx_buffer_random(&a, 1, 0, 1, &error) == GX_OK);
    CHECK(gx_buffer_copy(&b, 0, &a, 0, 100, &error) == GX_OK);
    gx_compare_result r;
    CHECK(gx_buffer_compare(&a, &b, 0, 0, -1, &r, &error) == GX_OK && r.mismatches == 0);
    ((float *)b.host_pointer)[42] += 0.5f;
    ((float *)b.host_pointer)[77] = NAN;
    CHECK(gx_buffer_compare(&b, &a, 1e-6, 0, -1, &r, &error) == GX_OK);
    CHECK(r.mismatches == 2 && r.first_mismatch == 42);
    CHECK_NEAR(r.first_value - r.first_expected, 0.5, 1e-6);
    CHECK(gx_buffer_copy(&b, 50, &a, 0, 60, &error) == GX_ERR_USAGE);
    CHECK(strstr(error.message, "out of range") != NULL);
    gx_buffer_free(&a);
    gx_buffer_free(&a); /* idempotent */
    gx_buffer_free(&b);
}

static void test_files(void)
{
    char dir[] = "/tmp/gx_test_XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    char path[256];
    snprintf(path, sizeof path, "%s/a/b/c", dir);
    gx_error error;
    CHECK(gx_make_directories(path, &error) == GX_OK);
    snprintf(path, sizeof path, "%s/a/b/c/file.bin", dir);
    const char data[] = "cubin\0bytes";
    CHECK(gx_write_file_atomic(path, data, sizeof data, &error) == GX_OK);
    char *read;
    size_t size;
    CHECK(gx_read_file(path, &read, &size, &error) == GX_OK);
    CHECK(size == sizeof data && memcmp(read, data, size) == 0);
    free(read);
    /* what a path names: a file, a folder, or nothing there */
    CHECK(gx_is_file(path) && !gx_is_directory(path));
    CHECK(gx_is_directory(dir) && !gx_is_file(dir));
    CHECK(!gx_is_file("/nonexistent/x") && !gx_is_directory("/nonexistent/x"));
    CHECK(gx_read_file("/nonexistent/x", &read, &size, &error) == GX_ERR_SYSTEM);
    CHECK(strstr(error.message, "No such file") != NULL);
    /* checked cache entries (the counter availability image): a hit, a miss, and damage found */
    uint8_t *blob;
    char why[160] = "";
    snprintf(path, sizeof path, "%s/a/entry", dir);
    CHECK(gx_blob_load(path, &blob, &size, why, sizeof why) == -1 && blob == NULL);
    const uint8_t image[] = {0, 1, 2, 255, '\n', 0, 7};
    CHECK(gx_blob_store(path, image, sizeof image, &error) == GX_OK);
    CHECK(gx_blob_load(path, &blob, &size, why, sizeof why) == GX_OK);
    CHECK(size == sizeof image && memcmp(blob, image, size) == 0);
    free(blob);
    FILE *file = fopen(path, "r+b"); /* one byte flipped: the hash no longer matches */
    CHECK(file && fseek(file, -2, SEEK_END) == 0 && fputc('x', file) != EOF && fclose(file) == 0);
    CHECK(gx_blob_load(path, &blob, &size, why, sizeof why) == -2 && blob == NULL);
    CHECK(strstr(why, "hash") != NULL);
    CHECK(truncate(path, 30) == 0); /* cut short */
    CHECK(gx_blob_load(path, &blob, &size, why, sizeof why) == -2 && strstr(why, "the header says 7") != NULL);
    CHECK(gx_write_file_atomic(path, "junk", 4, &error) == GX_OK);
    CHECK(gx_blob_load(path, &blob, &size, why, sizeof why) == -2 && strcmp(why, "no header") == 0);
    char command[300];
    snprintf(command, sizeof command, "rm -rf %s", dir);
    CHECK(system(command) == 0);
}

static void test_attributes(void)
{
    CHECK(gx_device_attribute_count() > 100);
    CHECK(gx_device_attribute_lookup("max_threads_per_block") == 1);
    CHECK(gx_device_attribute_lookup("multiprocessor_count") == 16);
    CHECK(gx_device_attribute_lookup("l2_cache_size") == 38);
    CHECK(gx_device_attribute_lookup("no_such_thing") == -1);
    CHECK(gx_fp32_lanes_per_sm(9, 0) == 128 && gx_fp32_lanes_per_sm(8, 0) == 64 && gx_fp32_lanes_per_sm(8, 6) == 128);
}

static gx_occupancy_result occupancy(const char *arch, int block, int registers, int shared, int carveout)
{
    gx_occupancy_input in = {.block_size = block,
                             .registers = registers,
                             .static_shared_bytes = shared,
                             .barriers = 1,
                             .carveout_kib = carveout};
    gx_occupancy_result r;
    gx_error error;
    const gx_arch_limits *limits = gx_arch_find(arch);
    CHECK(limits != NULL);
    CHECK(limits && gx_occupancy_compute(limits, &in, &r, &error) == GX_OK);
    return r;
}

static void test_occupancy(void)
{
    /* seed 000, A10G (sm_86): the three SAXPY kernels at 1024 threads are held to one block per
       SM by the warp limit (48 warps, 32 per block): 66.7% */
    int registers[] = {19, 25, 40}, shared[] = {0, 16384, 49152 - 1024};
    for (int i = 0; i < 3; i++) {
        gx_occupancy_result r = occupancy("sm_86", 1024, registers[i], shared[i], -1);
        CHECK(r.blocks_per_sm == 1 && r.limit_warps == 1 && (r.limiters & GX_LIMIT_WARPS));
        CHECK(i < 2 ? r.limiters == GX_LIMIT_WARPS
                    : r.limiters == (GX_LIMIT_WARPS | GX_LIMIT_REGISTERS)); /* 40 registers tie */
        CHECK_NEAR(r.occupancy_pct, 66.6666666, 1e-5);
    }
    CHECK(occupancy("sm_86", 1024, 19, 0, -1).limit_registers == 2); /* 3.36 by the seed's formula, 2 allocated */
    CHECK(occupancy("sm_86", 1024, 19, 0, -1).limit_shared == 100);  /* 1 KB reservation: 100 KB / 1 KB */
    /* seed 003, the register cliff on sm_80 at 256 threads: 32 registers 100%, 33 registers 75% */
    gx_occupancy_result at32 = occupancy("sm_80", 256, 32, 0, -1), at33 = occupancy("sm_80", 256, 33, 0, -1);
    CHECK(at32.blocks_per_sm == 8 && at32.occupancy_pct == 100.0);
    CHECK(at33.blocks_per_sm == 6 && at33.occupancy_pct == 75.0 && at33.limiters == GX_LIMIT_REGISTERS);
    /* the 1 KB per-block reservation: 32 KB blocks on sm_80 fit 5 without it, 4 with it */
    gx_occupancy_result reserved = occupancy("sm_80", 128, 16, 32768, -1);
    CHECK(reserved.allocated_shared_per_block_bytes == 33792);
    CHECK(reserved.limit_shared == 4 && reserved.limiters == GX_LIMIT_SHARED);
    CHECK(occupancy("sm_75", 128, 16, 32768, -1).limit_shared == 2); /* no reservation before 8.0 */
    /* carve-outs: the largest by default, the requested one, or the driver's smallest sufficient one */
    CHECK(occupancy("sm_90", 256, 16, 0, -1).shared_config_bytes == 228 * 1024);
    CHECK(occupancy("sm_90", 256, 16, 0, -1).limit_shared == 228);
    gx_occupancy_result picked = occupancy("sm_90", 256, 16, 0, -2);
    CHECK(picked.shared_config_bytes == 8 * 1024 && picked.limit_shared == 8 && picked.blocks_per_sm == 8);
    CHECK(occupancy("sm_90", 128, 16, 4096, 64).limit_shared == 12); /* 64 KB / 5 KB */
    /* barriers on 9.0: twice the block limit */
    CHECK(occupancy("sm_90", 32, 16, 0, -1).limit_barriers == 64);
    /* names */
    CHECK(gx_arch_find("8.6") == gx_arch_find("sm_86") && gx_arch_find("90a") == gx_arch_find("sm_90"));
    CHECK(gx_arch_find("sm_61") == NULL);
    char names[64];
    gx_limiter_names(GX_LIMIT_WARPS | GX_LIMIT_BLOCKS, names, sizeof names);
    CHECK(strcmp(names, "warps+blocks") == 0);
    gx_occupancy_input bad = {.block_size = 2048, .registers = 16};
    gx_occupancy_result r;
    gx_error error;
    CHECK(gx_occupancy_compute(gx_arch_find("sm_90"), &bad, &r, &error) == GX_ERR_USAGE);
    CHECK(strcmp(error.message, "block size 2048 is outside 1..1024 for sm_90") == 0);
    bad.block_size = 256;
    bad.static_shared_bytes = 232449;
    CHECK(gx_occupancy_compute(gx_arch_find("sm_90"), &bad, &r, &error) == GX_ERR_USAGE);
}

/* A kernel's C parameter types from its source, and the suggestions' ranking. */
static void test_signature_and_suggest(void)
{
    const char *source = "extern \"C\" __global__ void bounded(float *y) __launch_bounds__(128);\n"
                         "extern \"C\" __global__ void __launch_bounds__(128) bounded(float *y) { y[0] = 1; }\n"
                         "__global__ void k(const float * __restrict__ in, unsigned int n, float2 *out, size_t) {}\n"
                         "__global__ void none(void) {}\n"
                         "__global__ void over(int a) {}\n__global__ void over(int a, int b) {}\n";
    char types[8][48];
    CHECK(gx_signature_types(source, "k", &types[0][0], sizeof types[0], 8) == 4);
    CHECK(strcmp(types[0], "const float*") == 0 && strcmp(types[1], "unsigned int") == 0);
    CHECK(strcmp(types[2], "float2*") == 0 && strcmp(types[3], "size_t") == 0);
    CHECK(gx_signature_types(source, "bounded", &types[0][0], sizeof types[0], 8) == 1);
    CHECK(strcmp(types[0], "float*") == 0);
    CHECK(gx_signature_types(source, "none", &types[0][0], sizeof types[0], 8) == 0);
    CHECK(gx_signature_types(source, "over", &types[0][0], sizeof types[0], 8) == -1); /* overloads: no answer */
    CHECK(gx_signature_types(source, "missing", &types[0][0], sizeof types[0], 8) == -1);
    const char *names[] = {"--arch", "-a", "--inline", "--device", "-d"};
    char hint[128];
    gx_did_you_mean("--arhc", names, 5, hint, sizeof hint);
    CHECK(strcmp(hint, " (did you mean '--arch'?)") == 0);
    gx_did_you_mean("--x", names, 5, hint, sizeof hint); /* nothing plausibly meant: no hint */
    CHECK(strcmp(hint, "") == 0);
    const char *commands[] = {"compare", "merge", "occupancy", "occupancy_sweep"};
    gx_did_you_mean("occupancy_swep", commands, 4, hint, sizeof hint);
    CHECK(strcmp(hint, " (did you mean 'occupancy_sweep' or 'occupancy'?)") == 0);
}

int main(void)
{
    test_signature_and_suggest();
    test_occupancy();
    test_stats();
    test_ptxas();
    test_ptx_params();
    test_random_and_types();
    test_host_buffers();
    test_files();
    test_attributes();
    printf("%d checks, %d failed\n", checks, failures);
    return failures ? 1 : 0;
}
