// gpubench-arch: compute_80
// BF16 HFMA2 beside cuda/flops.cu's kernels (fma.rn.bf16x2 exists from compute_80): the same
// loop, signature and stamps; see that file.

#include "common.cuh"

#define FLOPS_THREADS 1024
#define FLOPS_CHAINS 8
#define FLOPS_UNROLL 32

__device__ __forceinline__ unsigned bf16x2_of(float x)
{
    unsigned h;
    asm("{ .reg .b16 l; cvt.rn.bf16.f32 l, %1; mov.b32 %0, {l, l}; }" : "=r"(h) : "f"(x));
    return h;
}

extern "C" __global__ void flops_bf16x2(long long *stamps, float *sink, int iterations)
{
    const unsigned m = bf16x2_of(0.99f - 1e-2f * static_cast<float>(iterations & 7));
    const unsigned k = bf16x2_of(static_cast<float>(threadIdx.x & 15) * 1e-3f);
    unsigned acc[FLOPS_CHAINS];
#pragma unroll
    for (int c = 0; c < FLOPS_CHAINS; ++c) {
        acc[c] = bf16x2_of(static_cast<float>((threadIdx.x + c) & 63) * 0.01f);
    }
    __syncthreads();
    stamp(stamps, 0);
#pragma unroll 1
    for (int i = 0; i < iterations; ++i) {
#pragma unroll
        for (int u = 0; u < FLOPS_UNROLL; ++u) {
#pragma unroll
            for (int c = 0; c < FLOPS_CHAINS; ++c) {
                asm("fma.rn.bf16x2 %0, %0, %1, %2;" : "+r"(acc[c]) : "r"(m), "r"(k));
            }
        }
    }
    __syncthreads();
    stamp(stamps, 1);
    // The high half of each accumulator, as a float (a bf16 is a float's top 16 bits).
    float total = 0.0f;
#pragma unroll
    for (int c = 0; c < FLOPS_CHAINS; ++c) {
        total += __uint_as_float(acc[c] & 0xffff0000u);
    }
    sink[blockIdx.x * blockDim.x + threadIdx.x] = total;
}
