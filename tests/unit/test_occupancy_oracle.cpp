// The occupancy model against NVIDIA's own calculator (cuda_occupancy.h) as an oracle: for every
// architecture in gpuexp's table, thousands of random launches (fixed seed), every per-resource
// block limit and the blocks per SM must agree exactly, under the header's default carve-out
// policy and under explicit carve-out preferences.
#include <climits>
#include <cstdio>
#include <cstring>

#include <cuda_occupancy.h>

extern "C" {
#include "gx_occupancy.h"
}

static unsigned long long state = 0x2545F4914F6CDD1Dull;
static int random_int(int low, int high) // inclusive
{
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return low + (int)(state % (unsigned long long)(high - low + 1));
}

static cudaOccDeviceProp properties_of(const gx_arch_limits *a)
{
    cudaOccDeviceProp p;
    p.computeMajor = a->cc_major;
    p.computeMinor = a->cc_minor;
    p.maxThreadsPerBlock = a->max_threads_per_block;
    p.maxThreadsPerMultiprocessor = a->max_threads_per_sm;
    p.regsPerBlock = a->registers_per_block;
    p.regsPerMultiprocessor = a->registers_per_sm;
    p.warpSize = 32;
    p.sharedMemPerBlock = (size_t)a->shared_per_block_bytes;
    p.sharedMemPerMultiprocessor = (size_t)a->shared_per_sm_bytes;
    p.numSms = 1;
    p.sharedMemPerBlockOptin = (size_t)a->shared_per_block_optin_bytes;
    p.reservedSharedMemPerBlock = (size_t)a->reserved_shared_per_block_bytes;
    return p;
}

int main()
{
    int cases = 0, mismatches = 0;
    for (int index = 0; gx_arch_at(index); index++) {
        const gx_arch_limits *arch = gx_arch_at(index);
        cudaOccDeviceProp properties = properties_of(arch);
        int arch_cases = 0;
        for (int i = 0; i < 20000; i++) {
            gx_occupancy_input in = {};
            in.block_size = i % 4 == 0 ? 32 * random_int(1, 32) : random_int(1, arch->max_threads_per_block);
            in.registers = i % 3 == 0 ? 8 * random_int(0, 31) : random_int(0, 255);
            in.static_shared_bytes = i % 5 == 0 ? 0 : random_int(0, arch->shared_per_block_bytes);
            int room = arch->shared_per_block_optin_bytes - in.static_shared_bytes;
            in.dynamic_shared_bytes = i % 2 == 0 ? 0 : random_int(0, room > 0 ? room : 0);
            in.barriers = i % 7 == 0 ? random_int(2, 16) : (i % 2);
            int percent = -1; // the header's default policy: the largest carve-out
            in.carveout_kib = -1;
            if (i % 4 == 1) {
                percent = random_int(0, 100);
                long bytes = (long)percent * arch->shared_per_sm_bytes / 100;
                in.carveout_kib = (int)((bytes + 1023) / 1024);
            }

            cudaOccFuncAttributes attributes;
            attributes.maxThreadsPerBlock = arch->max_threads_per_block;
            attributes.numRegs = in.registers;
            attributes.sharedSizeBytes = (size_t)in.static_shared_bytes;
            attributes.partitionedGCConfig = PARTITIONED_GC_OFF;
            attributes.shmemLimitConfig = FUNC_SHMEM_LIMIT_OPTIN;
            attributes.maxDynamicSharedSizeBytes = (size_t)in.dynamic_shared_bytes;
            attributes.numBlockBarriers = in.barriers;
            cudaOccDeviceState device_state;
            if (percent >= 0)
                device_state.carveoutConfig = percent;
            cudaOccResult expected;
            std::memset(&expected, 0, sizeof expected);
            cudaOccError status = cudaOccMaxActiveBlocksPerMultiprocessor(
                &expected, &properties, &attributes, &device_state, in.block_size, (size_t)in.dynamic_shared_bytes);
            gx_occupancy_result got;
            gx_error error;
            int ours = gx_occupancy_compute(arch, &in, &got, &error);
            cases++;
            arch_cases++;
            bool same = status == CUDA_OCC_SUCCESS && ours == GX_OK &&
                        got.blocks_per_sm == expected.activeBlocksPerMultiprocessor &&
                        got.limit_warps == expected.blockLimitWarps && got.limit_registers == expected.blockLimitRegs &&
                        got.limit_shared == expected.blockLimitSharedMem &&
                        got.limit_blocks == expected.blockLimitBlocks &&
                        got.limit_barriers == expected.blockLimitBarriers &&
                        got.allocated_registers_per_block == expected.allocatedRegistersPerBlock &&
                        (size_t)got.allocated_shared_per_block_bytes == expected.allocatedSharedMemPerBlock;
            if (!same) {
                if (++mismatches <= 20)
                    std::printf(
                        "MISMATCH %s block %d regs %d static %d dynamic %d barriers %d carveout %d%%: "
                        "ours %s blocks %d (w %d r %d s %d b %d bar %d) header status %d blocks %d "
                        "(w %d r %d s %d b %d bar %d)\n",
                        arch->arch, in.block_size, in.registers, in.static_shared_bytes, in.dynamic_shared_bytes,
                        in.barriers, percent, ours ? error.message : "ok", got.blocks_per_sm, got.limit_warps,
                        got.limit_registers, got.limit_shared, got.limit_blocks, got.limit_barriers, (int)status,
                        expected.activeBlocksPerMultiprocessor, expected.blockLimitWarps, expected.blockLimitRegs,
                        expected.blockLimitSharedMem, expected.blockLimitBlocks, expected.blockLimitBarriers);
            }
        }
        std::printf("%s: %d cases compared with cuda_occupancy.h\n", arch->arch, arch_cases);
    }
    std::printf("%d passed, %d failed\n", cases - mismatches, mismatches);
    return mismatches ? 1 : 0;
}
