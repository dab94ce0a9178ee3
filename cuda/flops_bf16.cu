// gpubench-arch: compute_80
// BF16 HFMA2 beside cuda/flops.cu's kernels (fma.rn.bf16x2 exists from compute_80): the same
// loop, signature and stamps; see that file.

#include "flops.cuh"

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
// A bf16 is a float's top 16 bits: the high half of an accumulator, read as a float.
#define BF16X2_INIT(c) bf16x2_of(static_cast<float>((threadIdx.x + c) & 63) * 0.01f)
#define BF16X2_STEP(a) asm("fma.rn.bf16x2 %0, %0, %1, %2;" : "+r"(a) : "r"(m), "r"(k))
#define BF16X2_SUM(a) __uint_as_float((a) & 0xffff0000u)
    FLOPS_LOOP(unsigned, BF16X2_INIT, BF16X2_STEP, BF16X2_SUM)
}
