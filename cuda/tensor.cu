// gpubench-arch: compute_90a
// Tensor cores (issue #17; Luo et al. 2024, "Benchmarking and Dissecting the Nvidia Hopper GPU
// Architecture", sections on mma and wgmma). Built for compute_90a: wgmma exists only there.
//
// Every kernel has the signature (long long *stamps, float *sink, int iterations) and writes,
// from thread 0 of each block, stamps[2 * block] = start and stamps[2 * block + 1] = end
// (clock64, after a barrier on both sides, so the span covers every warp of the block). sink
// keeps the accumulators live. The host knows each kernel's MMAs per loop trip and FLOP per MMA.
//
//   mma_TYPE_lat:  one warp, one accumulator: each mma.sync needs the previous one's result.
//   mma_TYPE_thr:  MMA_WARPS warps, MMA_CHAINS independent accumulators each.
//   wgmma_TYPE_lat: one warpgroup; every wgmma is committed and waited for before the next.
//   wgmma_TYPE_thr: WGMMA_GROUPS warpgroups; WGMMA_UNROLL wgmmas into one accumulator per
//                  commit group, one group left in flight while the next is issued.
// wgmma m64n256 reads A (64 x 32 bytes) and B (256 x 32 bytes) from shared memory through matrix
// descriptors without swizzling: 8-row x 16-byte core matrices, 128 bytes apart along K and
// 256 bytes apart along M or N. The values are a fixed pseudo-random fill (zeros would let the
// units idle): the timing does not depend on their meaning.

#include "tensor.cuh"

// ---- mma.sync (warp-level, Ampere style) ----

#define MMA_F32(NAME, SHAPE, TYPES)                                                               \
    __device__ __forceinline__ void NAME(float (&d)[4], const unsigned (&a)[4], const unsigned (&b)[2]) \
    {                                                                                             \
        asm volatile("mma.sync.aligned." SHAPE ".row.col.f32." TYPES ".f32 "                      \
                     "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};"            \
                     : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])                             \
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));          \
    }

MMA_F32(mma_f16, "m16n8k16", "f16.f16")
MMA_F32(mma_bf16, "m16n8k16", "bf16.bf16")
MMA_F32(mma_tf32, "m16n8k8", "tf32.tf32")
MMA_F32(mma_e4m3, "m16n8k32", "e4m3.e4m3")

__device__ __forceinline__ void mma_s8(int (&d)[4], const unsigned (&a)[4], const unsigned (&b)[2])
{
    asm volatile("mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 "
                 "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};"
                 : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

#define MMA_KERNELS(NAME, ACC)                                                                    \
    extern "C" __global__ void mma_##NAME##_lat(long long *stamps, float *sink, int iterations)  \
    {                                                                                             \
        unsigned a[4], b[2];                                                                      \
        for (int i = 0; i < 4; ++i) a[i] = fill(threadIdx.x * 4 + i);                             \
        for (int i = 0; i < 2; ++i) b[i] = fill(threadIdx.x * 2 + i + 777);                       \
        ACC d[4] = {0, 0, 0, 0};                                                                  \
        __syncthreads();                                                                          \
        stamp(stamps, 0);                                                            \
        _Pragma("unroll 1") for (int i = 0; i < iterations; ++i)                                  \
        {                                                                                         \
            _Pragma("unroll") for (int u = 0; u < MMA_UNROLL; ++u) { mma_##NAME(d, a, b); }       \
        }                                                                                         \
        __syncthreads();                                                                          \
        stamp(stamps, 1);                                                           \
        sink[blockIdx.x * blockDim.x + threadIdx.x] = float(d[0]) + float(d[1]) + float(d[2]) + float(d[3]); \
    }                                                                                             \
    extern "C" __global__ void mma_##NAME##_thr(long long *stamps, float *sink, int iterations)  \
    {                                                                                             \
        unsigned a[4], b[2];                                                                      \
        for (int i = 0; i < 4; ++i) a[i] = fill(threadIdx.x * 4 + i);                             \
        for (int i = 0; i < 2; ++i) b[i] = fill(threadIdx.x * 2 + i + 777);                       \
        ACC d[MMA_CHAINS][4] = {};                                                                \
        __syncthreads();                                                                          \
        stamp(stamps, 0);                                                            \
        _Pragma("unroll 1") for (int i = 0; i < iterations; ++i)                                  \
        {                                                                                         \
            _Pragma("unroll") for (int u = 0; u < MMA_UNROLL / MMA_CHAINS; ++u)                   \
            {                                                                                     \
                _Pragma("unroll") for (int c = 0; c < MMA_CHAINS; ++c) { mma_##NAME(d[c], a, b); } \
            }                                                                                     \
        }                                                                                         \
        __syncthreads();                                                                          \
        stamp(stamps, 1);                                                           \
        float s = 0;                                                                              \
        _Pragma("unroll") for (int c = 0; c < MMA_CHAINS; ++c) s += float(d[c][0]) + float(d[c][3]); \
        sink[blockIdx.x * blockDim.x + threadIdx.x] = s;                                          \
    }

MMA_KERNELS(f16, float)
MMA_KERNELS(bf16, float)
MMA_KERNELS(tf32, float)
MMA_KERNELS(e4m3, float)
MMA_KERNELS(s8, int)

// ---- wgmma m64n256 (the smaller N: cuda/tensor_shapes.cu) ----

WGMMA(f16, 256, float, F_OPERAND, "m64n256k16.f32.f16.f16", ", 1, 1, 0, 0")
WGMMA(bf16, 256, float, F_OPERAND, "m64n256k16.f32.bf16.bf16", ", 1, 1, 0, 0")
WGMMA(tf32, 256, float, F_OPERAND, "m64n256k8.f32.tf32.tf32", ", 1, 1")
WGMMA(e4m3, 256, float, F_OPERAND, "m64n256k32.f32.e4m3.e4m3", ", 1, 1")
WGMMA(e5m2, 256, float, F_OPERAND, "m64n256k32.f32.e5m2.e5m2", ", 1, 1")
WGMMA(s8, 256, int, R_OPERAND, "m64n256k32.s32.s8.s8", "")

WGMMA_KERNELS(f16, 256, float)
WGMMA_KERNELS(bf16, 256, float)
WGMMA_KERNELS(tf32, 256, float)
WGMMA_KERNELS(e4m3, 256, float)
WGMMA_KERNELS(e5m2, 256, float)
WGMMA_KERNELS(s8, 256, int)
