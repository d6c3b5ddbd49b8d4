/* C++ names in canonical form (gx_cxxname.c) and kernel lookup by the names a programmer writes
   (gx_symbols.c), against demangled names of real mangled symbols. No GPU. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gx_cxxname.h"
#include "gx_symbols.h"

#include "check.h"

static void expect_form(const char *name, const char *expected)
{
    char out[512];
    CHECK(gx_cxx_normalize(name, out, sizeof out) == 0);
    if (strcmp(out, expected) != 0) {
        fprintf(stderr, "normalize(\"%s\") = \"%s\", expected \"%s\"\n", name, out, expected);
        failures++;
    }
}

int main(void)
{
    expect_form("reduce6<int, 256u, true>", "reduce6<int,256,1>");
    expect_form("reduce6 < int , 256 , 1 >", "reduce6<int,256,1>");
    expect_form("k<float, 256ul, 128ULL, 0x10, 1'024>", "k<float,256,128,16,1024>");
    expect_form("k<false>", "k<0>");
    expect_form("void k(const float *, float const*, const ns::T<int>&, volatile int*)",
                "void k(float const*,float const*,ns::T<int>const&,int volatile*)");
    expect_form("k(const unsigned long long *)", "k(unsigned long long const*)");
    expect_form("k<unsigned, long int, short int, signed, signed char, long long int>",
                "k<unsigned int,long,short,int,signed char,long long>");
    expect_form("k(struct P, class Q, enum E)", "k(P,Q,E)");
    expect_form("k(void)", "k()");
    expect_form("BlockPrefixSumKernel<1024, 1, (cub::CUB_300001_SM_900::BlockScanAlgorithm)0>",
                "BlockPrefixSumKernel<1024,1,(cub::BlockScanAlgorithm)0>");
    expect_form("BlockPrefixSumKernel<1024, 1, (cub::CUB_300001_SM_800_900::BlockScanAlgorithm)0>",
                "BlockPrefixSumKernel<1024,1,(cub::BlockScanAlgorithm)0>");
    expect_form("k<thrust::THRUST_300001_SM_900_NS::plus<int>, cuda::std::__4::less<void>, std::__cxx11::string>",
                "k<thrust::plus<int>,cuda::std::less<void>,std::string>");
    expect_form("k<-1, (char)65>", "k<-1,(char)65>");
    expect_form("k<a<b<int>>>", "k<a<b<int>>>");

    CHECK(gx_cxx_differs_by_enumerators("BlockPrefixSumKernel<1024,1,cub::BLOCK_SCAN_RAKING>",
                                        "BlockPrefixSumKernel<1024,1,(cub::BlockScanAlgorithm)0>"));
    CHECK(gx_cxx_differs_by_enumerators("k<BLOCK_SCAN_RAKING>", "k<(cub::BlockScanAlgorithm)0>"));
    CHECK(!gx_cxx_differs_by_enumerators("k<1023,1,cub::BLOCK_SCAN_RAKING>", "k<1024,1,(cub::BlockScanAlgorithm)0>"));
    CHECK(!gx_cxx_differs_by_enumerators("k<float>", "k<float>"));
    CHECK(!gx_cxx_differs_by_enumerators("j<X>", "k<(E)0>"));

    char *items[8];
    const char *end;
    CHECK(gx_cxx_list("<float, a<b, c>, (E)0>(x)", items, 8, &end) == 3 && strcmp(items[1], "a<b, c>") == 0 &&
          strcmp(items[2], "(E)0") == 0 && strcmp(end, "(x)") == 0);
    for (int i = 0; i < 3; i++)
        free(items[i]);
    CHECK(gx_cxx_list("()", items, 8, NULL) == 0);
    CHECK(gx_cxx_list("x", items, 8, NULL) == -1);
    CHECK(gx_edit_distance("reduce6<int,256,1>", "reduce6<int,128,1>") == 3);
    CHECK(gx_edit_distance("", "abc") == 3);
    CHECK(gx_edit_distance("fiel", "file") == 1); /* two neighbours swapped: one edit */
    CHECK(gx_edit_distance("shwo", "show") == 1);
    CHECK(gx_edit_distance("ab", "ba") == 1);
    CHECK(gx_edit_distance("abc", "ca") == 3); /* the optimal string alignment: no edit of a swapped pair */
    CHECK(gx_edit_distance("kitten", "sitting") == 3);

    /* real symbols (as g++ and nvcc mangle them) found by every form a programmer writes */
    const char *symbols[] = {
        "_Z7reduce6IiLj256ELb1EEvPT_S1_j",                 /* void reduce6<int, 256u, true>(int*, int*, unsigned int) */
        "_Z7reduce6IiLj128ELb1EEvPT_S1_j",                 /* reduce6<int, 128u, true> */
        "_Z20multi_warp_cg_reduceIfLm256ELm128EEvPT_S1_j", /* multi_warp_cg_reduce<float, 256ul, 128ul> */
        "_Z4scanILN3cub17CUB_300001_SM_90018BlockScanAlgorithmE0EEvPKf", /* scan<(cub::CUB_..::BlockScanAlgorithm)0>(float
                                                                            const*) */
        "_ZN2ns5applyEPKfPf",                                            /* ns::apply(float const*, float*) */
    };
    int count = 5, first, second;
    CHECK(gx_symbol_find(symbols, count, "reduce6<int, 256, true>", &first, &second) == 0);
    CHECK(gx_symbol_find(symbols, count, "reduce6<int,256,true>", &first, &second) == 0);
    CHECK(gx_symbol_find(symbols, count, "reduce6<int, 256u, 1>", &first, &second) == 0);
    CHECK(gx_symbol_find(symbols, count, "reduce6<int, 128, true>(int*, int*, unsigned)", &first, &second) == 1);
    CHECK(gx_symbol_find(symbols, count, "reduce6", &first, &second) == -2 && first == 0 && second == 1);
    CHECK(gx_symbol_find(symbols, count, "multi_warp_cg_reduce<float, 256, 128>", &first, &second) == 2);
    CHECK(gx_symbol_find(symbols, count, "scan<(cub::BlockScanAlgorithm)0>", &first, &second) == 3);
    CHECK(gx_symbol_find(symbols, count, "scan<(cub::CUB_300001_SM_800_900::BlockScanAlgorithm)0>", &first, &second) ==
          3);
    CHECK(gx_symbol_find(symbols, count, "scan<(cub::BlockScanAlgorithm)0>(const float*)", &first, &second) == 3);
    CHECK(gx_symbol_find(symbols, count, "ns::apply(const float *, float *)", &first, &second) == 4);
    CHECK(gx_symbol_find(symbols, count, "apply", &first, &second) == 4);
    CHECK(gx_symbol_find(symbols, count, "reduce6<int, 512, true>", &first, &second) == -1);
    CHECK(gx_symbol_enumerator_match(symbols, count, "scan<cub::BLOCK_SCAN_RAKING>") == 3);
    CHECK(gx_symbol_enumerator_match(symbols, count, "reduce6<int, 512, true>") == -1);
    int nearest[3];
    CHECK(gx_symbol_nearest(symbols, count, "reduce6<int, 512, true>", nearest, 3) == 3);
    CHECK(nearest[0] == 1 && nearest[1] == 0); /* "512" is 2 edits from "128" (drop 5, add 8), 3 from "256" */
    CHECK(gx_symbol_nearest(symbols, count, "aply", nearest, 1) == 1 && nearest[0] == 4);
    if (failures)
        fprintf(stderr, "%d failures\n", failures);
    else
        printf("cxxname: all checks passed\n");
    return failures ? 1 : 0;
}
