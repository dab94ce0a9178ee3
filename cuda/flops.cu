// Peak arithmetic rate of the CUDA cores, for the roofline (issue #32): FP32 FFMA, FP64 DFMA
// and FP16 HFMA2 on every SM at once, the way LBNL's Empirical Roofline Toolkit measures its
// compute ceilings (many independent FMAs per thread, every SM busy). BF16 HFMA2 is in
// cuda/flops_bf16.cu (it needs compute_80).
//
// Every kernel has the signature (long long *stamps, float *sink, int iterations), runs as one
// block of FLOPS_THREADS per SM (or one block alone) and writes four stamps per block: start and
// end in clock64 and in %globaltimer, read by thread 0 after a barrier on both sides
// (cuda/flops.cuh). Each thread keeps FLOPS_CHAINS independent accumulators and applies
// FLOPS_UNROLL FMAs to each per loop trip: enough independent work to cover the FMA latency with
// every warp, and a loop whose counter and branch are about 1 % of the issued instructions
// (eight accumulators held DFMA at 92 % of its rate on an H100; sixteen reach it). The multiplier (just under one, so values
// stay finite over any number of trips) and the addend are run-time values, so the compiler can
// neither fold nor hoist the FMAs; they take no division, which ptxas would otherwise place
// inside the timed span. sink keeps the accumulators live.

#include "flops.cuh"

extern "C" __global__ void flops_ffma(long long *stamps, float *sink, int iterations)
{
    const float m = 0.999f - 1e-6f * static_cast<float>(iterations & 7);
    const float k = static_cast<float>(threadIdx.x) * 1e-3f;
#define FFMA_INIT(c) (static_cast<float>(threadIdx.x + c))
#define FFMA_STEP(a) a = fmaf(a, m, k)
#define FFMA_SUM(a) (a)
    FLOPS_LOOP(float, FFMA_INIT, FFMA_STEP, FFMA_SUM)
}

extern "C" __global__ void flops_dfma(long long *stamps, float *sink, int iterations)
{
    const double m = 0.999 - 1e-6 * static_cast<double>(iterations & 7);
    const double k = static_cast<double>(threadIdx.x) * 1e-3;
#define DFMA_INIT(c) (static_cast<double>(threadIdx.x + c))
#define DFMA_STEP(a) a = fma(a, m, k)
#define DFMA_SUM(a) static_cast<float>(a)
    FLOPS_LOOP(double, DFMA_INIT, DFMA_STEP, DFMA_SUM)
}

// Two FP16 lanes per register: one fma.rn.f16x2 is four FLOP per thread. Written in PTX so
// that no header is needed and the instruction is the one asked for.
__device__ __forceinline__ unsigned f16x2_of(float x)
{
    unsigned h;
    asm("{ .reg .f16 l; cvt.rn.f16.f32 l, %1; mov.b32 %0, {l, l}; }" : "=r"(h) : "f"(x));
    return h;
}

__device__ __forceinline__ float low_f16_as_float(unsigned h)
{
    float f;
    asm("{ .reg .f16 l, u; mov.b32 {l, u}, %1; cvt.f32.f16 %0, l; }" : "=f"(f) : "r"(h));
    return f;
}

extern "C" __global__ void flops_hfma2(long long *stamps, float *sink, int iterations)
{
    const unsigned m = f16x2_of(0.999f - 1e-3f * static_cast<float>(iterations & 7));
    const unsigned k = f16x2_of(static_cast<float>(threadIdx.x & 15) * 1e-3f);
#define HFMA2_INIT(c) f16x2_of(static_cast<float>((threadIdx.x + c) & 63) * 0.01f)
#define HFMA2_STEP(a) asm("fma.rn.f16x2 %0, %0, %1, %2;" : "+r"(a) : "r"(m), "r"(k))
#define HFMA2_SUM(a) low_f16_as_float(a)
    FLOPS_LOOP(unsigned, HFMA2_INIT, HFMA2_STEP, HFMA2_SUM)
}
