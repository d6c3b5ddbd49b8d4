// What CuTe's Hopper tutorial GEMM (wgmma_tma_sm90.cu, gemm_nt) passes its kernel, printed without a
// GPU, so that bench/hopper/cutlass_gemm.lua can build the same parameters in Lua: the arguments
// make_tma_atom gives cuTensorMapEncodeTiled (this file's own cuTensorMapEncodeTiled records them;
// CUTLASS_ENABLE_DIRECT_CUDA_DRIVER_CALL makes CuTe call it by name), the sizes of the kernel's
// parameters, where the descriptor lies in the TMA atom, the tiled MMA's bytes and the shared
// storage's size. Build (headers placed by bench/hopper/fetch.sh) and run:
//   nvcc -std=c++17 -arch=sm_90a -DCUTLASS_ENABLE_DIRECT_CUDA_DRIVER_CALL=1 --expt-relaxed-constexpr \
//     -I.whl/hopper_cutlass_src/include bench/hopper/cute_tma_args.cu -o cute_tma_args && ./cute_tma_args
// Its output, as recorded: bench/hopper/cute_tma_args.txt.
#include <cstdio>
#include <cstring>
#include <cute/tensor.hpp>
#include "cutlass/arch/mma_sm90.h"
using namespace cute;

extern "C" CUresult cuTensorMapEncodeTiled(CUtensorMap *map, CUtensorMapDataType type, cuuint32_t rank, void *address,
                                           const cuuint64_t *dims, const cuuint64_t *strides, const cuuint32_t *box,
                                           const cuuint32_t *element_strides, CUtensorMapInterleave interleave,
                                           CUtensorMapSwizzle swizzle, CUtensorMapL2promotion l2,
                                           CUtensorMapFloatOOBfill oob)
{
    printf("cuTensorMapEncodeTiled: type %d, rank %u, address %p, dims", (int)type, rank, address);
    for (unsigned i = 0; i < rank; i++) printf(" %llu", (unsigned long long)dims[i]);
    printf(", strides");
    for (unsigned i = 0; i + 1 < rank; i++) printf(" %llu", (unsigned long long)strides[i]);
    printf(", box");
    for (unsigned i = 0; i < rank; i++) printf(" %u", box[i]);
    printf(", element strides");
    for (unsigned i = 0; i < rank; i++) printf(" %u", element_strides[i]);
    printf(", interleave %d, swizzle %d, L2 promotion %d, OOB fill %d\n", (int)interleave, (int)swizzle, (int)l2, (int)oob);
    memset(map, 0xab, sizeof *map); // to find the descriptor in the atom
    return CUDA_SUCCESS;
}

template <class ElementA, class ElementB, class SmemLayoutA, class SmemLayoutB> struct SharedStorage { // the tutorial's
    alignas(128) cute::ArrayEngine<ElementA, cosize_v<SmemLayoutA>> A;
    alignas(128) cute::ArrayEngine<ElementB, cosize_v<SmemLayoutB>> B;
    uint64_t tma_barrier[size<2>(SmemLayoutA{})];
    uint64_t mma_barrier[size<2>(SmemLayoutA{})];
};

int main()
{
    int m = 4096, n = 4096, k = 4096; // the bench's problem, NT: ldA = m, ldB = n
    using TA = cute::half_t;
    using TB = cute::half_t;
    TA *A = (TA *)0x10000000;
    TB *B = (TB *)0x20000000;
    auto prob_shape = make_shape(m, n, k);
    auto dA = make_stride(Int<1>{}, m), dB = make_stride(Int<1>{}, n);
    auto dC = make_stride(Int<1>{}, m);
    auto bM = Int<128>{}, bN = Int<128>{};
    auto bK = Int<64>{};
    auto cta_tiler = make_shape(bM, bN, bK);
    auto bP = Int<3>{};
    auto sA = tile_to_shape(GMMA::Layout_MN_SW128_Atom<TA>{}, make_shape(bM, bK, bP));
    auto sB = tile_to_shape(GMMA::Layout_MN_SW128_Atom<TB>{}, make_shape(bN, bK, bP));
    TiledMMA tiled_mma = make_tiled_mma(SM90_64x64x16_F16F16F16_SS<GMMA::Major::MN, GMMA::Major::MN>{});
    Tensor mA = make_tensor(A, make_shape(m, k), dA);
    Tensor mB = make_tensor(B, make_shape(n, k), dB);
    Copy_Atom tmaA = make_tma_atom(SM90_TMA_LOAD{}, mA, sA(_, _, 0), make_shape(bM, bK));
    Copy_Atom tmaB = make_tma_atom(SM90_TMA_LOAD{}, mB, sB(_, _, 0), make_shape(bN, bK));
    (void)tmaB;
    printf("parameter sizes: shape %zu, cta_tiler %zu, TMA atom %zu (aligned to %zu), dC %zu, tiled_mma %zu, alpha %zu\n",
           sizeof(prob_shape), sizeof(cta_tiler), sizeof(tmaA), alignof(decltype(tmaA)), sizeof(dC), sizeof(tiled_mma),
           sizeof(cute::half_t));
    const unsigned char *atom = (const unsigned char *)&tmaA;
    size_t first = sizeof(tmaA), last = 0, nonzero_after = 0;
    for (size_t i = 0; i < sizeof(tmaA); i++) {
        if (atom[i] == 0xab) { first = i < first ? i : first; last = i; }
        else if (atom[i] != 0) nonzero_after++;
    }
    printf("the descriptor lies at bytes %zu to %zu of the atom; %zu other bytes are not zero\n", first, last, nonzero_after);
    const unsigned char *mma = (const unsigned char *)&tiled_mma;
    printf("tiled_mma bytes:");
    for (size_t i = 0; i < sizeof(tiled_mma); i++) printf(" %02x", mma[i]);
    printf(" (GMMA::ScaleOut accumulate_ = One)\n");
    printf("shared storage: %zu bytes\n", sizeof(SharedStorage<TA, TB, decltype(sA), decltype(sB)>));
    return 0;
}
