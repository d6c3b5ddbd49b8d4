/* The Hopper checks of the core without a GPU: launch attributes against a target's facts
   (gx_launch_attributes), TMA descriptors against cuTensorMapEncodeTiled's documented constraints
   (gx_tensor_map), and the PTX a plan reads them from (gx_ptx: __cluster_dims__, module globals). */
#include <string.h>

#include "check.h"
#include "gx_launch_attributes.h"
#include "gx_ptx.h"
#include "gx_tensor_map.h"

static gx_launch_target hopper(void)
{
    gx_launch_target t = {.where = "H",
                          .cc_major = 9,
                          .cc_minor = 0,
                          .cluster_launch = 1,
                          .cooperative_launch = 1,
                          .sm_count = 132,
                          .blocks_per_sm = 2,
                          .max_active_clusters = -1};
    return t;
}

static int refused(const gx_launch_config *c, const gx_launch_target *t, const char *needle)
{
    gx_error e;
    return gx_launch_check_attributes("k", c, t, &e) == GX_ERR_USAGE && strstr(e.message, needle) != NULL;
}

static void test_attributes(void)
{
    gx_launch_target t = hopper();
    gx_launch_config c = {.grid = {8, 1, 1}, .block = {128, 1, 1}, .cluster = {4, 1, 1}};
    gx_error e;
    CHECK(gx_launch_check_attributes("k", &c, &t, &e) == GX_OK);
    c.grid[0] = 6;
    CHECK(refused(&c, &t, "(grid.x = 6 is not a multiple of 4)"));
    c.grid[0] = 32, c.cluster[0] = 32;
    CHECK(refused(&c, &t, "allows at most 16 (8 portably"));
    c.cluster[0] = 16;
    CHECK(gx_launch_check_attributes("k", &c, &t, &e) == GX_OK); /* non-portable on 9.0 */
    t.max_active_clusters = 0;
    CHECK(refused(&c, &t, "no such cluster can be resident"));
    t = hopper();
    t.required_cluster[0] = 2, t.required_cluster[1] = 1, t.required_cluster[2] = 1;
    gx_launch_config own = {.grid = {3, 1, 1}, .block = {32, 1, 1}};
    CHECK(refused(&own, &t, "(its __cluster_dims__)"));
    own.grid[0] = 4, own.cluster[0] = 4;
    CHECK(refused(&own, &t, "declares __cluster_dims__(2, 1, 1)"));
    t = hopper();
    gx_launch_config coop = {.grid = {265, 1, 1}, .block = {1024, 1, 1}, .cooperative = 1};
    CHECK(refused(&coop, &t, "at most 264 of them can be resident"));
    coop.grid[0] = 264;
    CHECK(gx_launch_check_attributes("k", &coop, &t, &e) == GX_OK);
    t.cooperative_launch = 0;
    CHECK(refused(&coop, &t, "does not support cooperative launches"));
    gx_launch_target ampere = hopper();
    ampere.cc_major = 8, ampere.cluster_launch = 0;
    gx_launch_config pdl = {.grid = {1, 1, 1}, .block = {1, 1, 1}, .programmatic = 1};
    CHECK(refused(&pdl, &ampere, "programmatic dependent launch needs compute capability 9.0"));
    CHECK(refused(&c, &ampere, "thread block clusters need compute capability 9.0"));
    CHECK(gx_cluster_max_blocks(9, 0, 0) == 8 && gx_cluster_max_blocks(9, 0, 1) == 16 &&
          gx_cluster_max_blocks(8, 6, 1) == 0);
    CHECK(gx_arch_largest_sm_count("sm_90a") == 132 && gx_arch_largest_sm_count("sm_99") == 0);
}

static gx_tensor_map_spec map_2d(void)
{
    gx_tensor_map_spec s;
    memset(&s, 0, sizeof s);
    gx_error e;
    gx_tensor_map_element("f32", &s, &e);
    s.rank = 2, s.dims[0] = 100, s.dims[1] = 70, s.strides[0] = 400, s.box[0] = 32, s.box[1] = 32;
    s.element_strides[0] = s.element_strides[1] = 1;
    s.buffer_bytes = 100 * 70 * 4;
    return s;
}

static int map_refused(const gx_tensor_map_spec *s, const char *needle)
{
    gx_error e;
    return gx_tensor_map_check(s, &e) == GX_ERR_USAGE && strstr(e.message, needle) != NULL;
}

static void test_tensor_maps(void)
{
    gx_error e;
    gx_tensor_map_spec s = map_2d();
    CHECK(gx_tensor_map_check(&s, &e) == GX_OK);
    CHECK(gx_tensor_map_span_bytes(&s) == 28000);
    s.dims[1] = 71;
    CHECK(map_refused(&s, "spans 28400 bytes"));
    s = map_2d(), s.strides[0] = 408;
    CHECK(map_refused(&s, "a multiple of 16 bytes"));
    s = map_2d(), s.box[0] = 2;
    CHECK(map_refused(&s, "must be a multiple of 16 bytes"));
    s = map_2d(), s.swizzle = CU_TENSOR_MAP_SWIZZLE_64B;
    CHECK(map_refused(&s, "at most 64 bytes, and box[1] = 32 f32 elements is 128 bytes"));
    s.swizzle = CU_TENSOR_MAP_SWIZZLE_128B;
    CHECK(gx_tensor_map_check(&s, &e) == GX_OK);
    s = map_2d(), s.interleave = CU_TENSOR_MAP_INTERLEAVE_16B;
    CHECK(map_refused(&s, "needs a rank of at least 3"));
    s = map_2d(), s.offset = 8;
    CHECK(map_refused(&s, "16-byte aligned"));
    gx_tensor_map_element("fp8_e4m3", &s, &e);
    s.oob_fill = CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA;
    CHECK(map_refused(&s, "TMA copies fp8 as bytes"));
    CHECK(gx_tensor_map_element("f24", &s, &e) == GX_ERR_USAGE && strstr(e.message, "bf16"));
    CHECK(gx_tensor_map_swizzle("128B") == CU_TENSOR_MAP_SWIZZLE_128B && gx_tensor_map_swizzle("96B") < 0);
}

static void test_ptx(void)
{
    const char *ptx = ".const .align 4 .b8 coefficients[64];\n"
                      ".visible .global .align 4 .u32 counter = 5;\n"
                      ".global .align 8 .f64 _ZN2ns5scaleE[4];\n"
                      ".visible .entry fixed(\n\t.param .u64 fixed_param_0\n)\n.explicitcluster\n"
                      ".reqnctapercluster 2, 1, 1\n{\n\tret;\n}\n"
                      ".visible .entry plain(\n\t.param .u64 plain_param_0\n)\n{\n\tret;\n}\n";
    int cluster[3];
    CHECK(gx_ptx_required_cluster(ptx, "fixed", cluster) == 1 && cluster[0] == 2 && cluster[1] == 1);
    CHECK(gx_ptx_required_cluster(ptx, "plain", cluster) == 0 && cluster[0] == 0);
    gx_ptx_global globals[8];
    CHECK(gx_ptx_globals(ptx, globals, 8) == 3);
    CHECK(strcmp(globals[0].name, "coefficients") == 0 && globals[0].bytes == 64 && globals[0].constant);
    CHECK(strcmp(globals[1].name, "counter") == 0 && globals[1].bytes == 4 && !globals[1].constant &&
          strcmp(globals[1].ptx_type, "u32") == 0);
    CHECK(strcmp(globals[2].name, "_ZN2ns5scaleE") == 0 && globals[2].bytes == 32);
}

int main(void)
{
    test_attributes();
    test_tensor_maps();
    test_ptx();
    fprintf(stderr, "%d checks, %d failed\n", checks, failures);
    return failures ? 1 : 0;
}
