// Arithmetic pipelines (Wong et al., section IV-B, Tables III-IV and Fig. 6). For every
// operation two kernels are generated:
//   lat_NAME: one dependent chain per thread (each op needs the previous result). With one
//             warp, cycles per op is the latency; with W warps it is Fig. 6's curve.
//   thr_NAME: four independent chains per thread, so a full block keeps the unit busy: total
//             ops over elapsed cycles is the throughput of one SM.
// Lane 0 of every warp writes stamps[2 * warp] = start, stamps[2 * warp + 1] = end (clock64;
// one block runs on one SM, so all warps read the same counter). sink keeps results live.
// Some chains need a second operation to stay in range; the host's table says which. Simple
// operations are unrolled 32 times per loop trip, library routines (division, square root,
// libm) 4 times, since their code is long; the host divides by the ops actually done.

#include "common.cuh"

#define PIPELINE_KERNELS(NAME, UNROLL, TYPE, INIT_X, INIT_Y, INIT_Z, STEP, FOLD)                        \
    extern "C" __global__ void lat_##NAME(long long *stamps, unsigned *sink, int iterations, unsigned seed)    \
    {                                                                                           \
        const int lane = threadIdx.x % WARP_LANES;                                              \
        const int warp = threadIdx.x / WARP_LANES;                                              \
        TYPE x = INIT_X;                                                                        \
        const TYPE y = INIT_Y;                                                                  \
        const TYPE z = INIT_Z;                                                                  \
        (void)y;                                                                                \
        (void)z;                                                                                \
        (void)seed;                                                                             \
        __syncthreads();                                                                        \
        const long long start = read_clock64();                                                 \
        _Pragma("unroll 1") for (int i = 0; i < iterations; ++i)                                \
        {                                                                                       \
            _Pragma("unroll") for (int u = 0; u < UNROLL; ++u) { x = STEP(x); }                 \
        }                                                                                       \
        const long long stop = read_clock64();                                                  \
        if (lane == 0) {                                                                        \
            stamps[2 * warp] = start;                                                           \
            stamps[2 * warp + 1] = stop;                                                        \
        }                                                                                       \
        sink[threadIdx.x] = FOLD(x);                                                            \
    }                                                                                           \
    extern "C" __global__ void thr_##NAME(long long *stamps, unsigned *sink, int iterations, unsigned seed)    \
    {                                                                                           \
        const int lane = threadIdx.x % WARP_LANES;                                              \
        const int warp = threadIdx.x / WARP_LANES;                                              \
        TYPE x = INIT_X;                                                                        \
        TYPE x1 = INIT_X;                                                                       \
        TYPE x2 = INIT_X;                                                                       \
        TYPE x3 = INIT_X;                                                                       \
        const TYPE y = INIT_Y;                                                                  \
        const TYPE z = INIT_Z;                                                                  \
        (void)y;                                                                                \
        (void)z;                                                                                \
        (void)seed;                                                                             \
        __syncthreads();                                                                        \
        const long long start = read_clock64();                                                 \
        _Pragma("unroll 1") for (int i = 0; i < iterations; ++i)                                \
        {                                                                                       \
            _Pragma("unroll") for (int u = 0; u < UNROLL; ++u)                                  \
            {                                                                                   \
                x = STEP(x);                                                                    \
                x1 = STEP(x1);                                                                  \
                x2 = STEP(x2);                                                                  \
                x3 = STEP(x3);                                                                  \
            }                                                                                   \
        }                                                                                       \
        const long long stop = read_clock64();                                                  \
        if (lane == 0) {                                                                        \
            stamps[2 * warp] = start;                                                           \
            stamps[2 * warp + 1] = stop;                                                        \
        }                                                                                       \
        sink[threadIdx.x] = FOLD(x) ^ FOLD(x1) ^ FOLD(x2) ^ FOLD(x3);                           \
    }

#define U(v) ((unsigned)(v))
#define F(v) (__float_as_uint(v))
#define D(v) ((unsigned)__double_as_longlong(v))

// Integer steps go through PTX directly, and their operands come from the kernel argument
// `seed` (the host passes 3): written in C with constants, a chain of `x + 3` is folded into
// one `x + 96` by the compiler, or by ptxas, measuring nothing.
__device__ __forceinline__ unsigned ptx_add(unsigned a, unsigned b)
{
    unsigned d;
    asm("add.u32 %0, %1, %2;" : "=r"(d) : "r"(a), "r"(b));
    return d;
}
__device__ __forceinline__ unsigned ptx_mul(unsigned a, unsigned b)
{
    unsigned d;
    asm("mul.lo.u32 %0, %1, %2;" : "=r"(d) : "r"(a), "r"(b));
    return d;
}
__device__ __forceinline__ unsigned ptx_mad(unsigned a, unsigned b, unsigned c)
{
    unsigned d;
    asm("mad.lo.u32 %0, %1, %2, %3;" : "=r"(d) : "r"(a), "r"(b), "r"(c));
    return d;
}
__device__ __forceinline__ unsigned ptx_mul24(unsigned a, unsigned b)
{
    unsigned d;
    asm("mul24.lo.u32 %0, %1, %2;" : "=r"(d) : "r"(a), "r"(b));
    return d;
}
#define IADD(v) (ptx_add((v), y))
#define IMUL(v) (ptx_mul((v), y))
#define IMAD(v) (ptx_mad((v), y, z))
#define IMUL24(v) (ptx_mul24((v), y))
#define IDIV(v) ((v) / y + z)
#define IREM(v) ((v) % y + z)
#define POPC(v) (__popc(v) + y)
#define CLZ(v) (__clz(v) + y)
#define SHFL(v) (__shfl_sync(0xffffffffu, (v), (lane + 1) % WARP_LANES))
PIPELINE_KERNELS(int_add, 32, unsigned, threadIdx.x + 1u, seed, seed + 2u, IADD, U)
PIPELINE_KERNELS(int_mul, 32, unsigned, threadIdx.x + 1u, seed, seed + 2u, IMUL, U)
PIPELINE_KERNELS(int_mad, 32, unsigned, threadIdx.x + 1u, seed, seed + 2u, IMAD, U)
PIPELINE_KERNELS(int_mul24, 32, unsigned, threadIdx.x + 1u, seed, seed + 2u, IMUL24, U)
PIPELINE_KERNELS(int_div, 4, unsigned, threadIdx.x + 100000u, seed, 100000u, IDIV, U)
PIPELINE_KERNELS(int_rem, 4, unsigned, threadIdx.x + 100000u, 2u * seed + 1u, 100000u, IREM, U)
PIPELINE_KERNELS(popc, 32, unsigned, threadIdx.x + 1u, seed, seed + 2u, POPC, U)
PIPELINE_KERNELS(clz, 32, unsigned, threadIdx.x + 1u, seed, seed + 2u, CLZ, U)
PIPELINE_KERNELS(shfl, 32, unsigned, threadIdx.x + 1u, seed, seed + 2u, SHFL, U)

#define FADD(v) ((v) + y)
#define FMUL(v) ((v) * y)
#define FFMA(v) (fmaf((v), y, z))
#define FDIV(v) (z / (v))
#define FSQRT(v) (sqrtf(v))
#define FRSQRT(v) (rsqrtf(v))
#define FAST_SIN(v) (__sinf(v))
#define FAST_COS(v) (__cosf(v))
#define FAST_EXP(v) (__expf(-(v)))
#define FAST_LOG2(v) (__log2f(v) + z)
#define LIBM_SIN(v) (sinf(v))
#define LIBM_COS(v) (cosf(v))
#define LIBM_EXP(v) (expf(-(v)))
#define LIBM_LOG2(v) (log2f(v) + z)
PIPELINE_KERNELS(f32_add, 32, float, threadIdx.x * 1e-3f, 1e-7f, 0.5f, FADD, F)
PIPELINE_KERNELS(f32_mul, 32, float, 1.0f + threadIdx.x * 1e-3f, 0.99999f, 0.5f, FMUL, F)
PIPELINE_KERNELS(f32_fma, 32, float, 1.0f + threadIdx.x * 1e-3f, 0.99999f, 1e-6f, FFMA, F)
PIPELINE_KERNELS(f32_div, 4, float, 1.5f + threadIdx.x * 1e-3f, 1.0f, 2.0f, FDIV, F)
PIPELINE_KERNELS(f32_sqrt, 4, float, 2.0f + threadIdx.x, 1.0f, 1.0f, FSQRT, F)
PIPELINE_KERNELS(f32_rsqrt, 4, float, 2.0f + threadIdx.x, 1.0f, 1.0f, FRSQRT, F)
PIPELINE_KERNELS(fast_sinf, 32, float, 0.5f + threadIdx.x * 1e-3f, 1.0f, 1.0f, FAST_SIN, F)
PIPELINE_KERNELS(fast_cosf, 32, float, 0.5f + threadIdx.x * 1e-3f, 1.0f, 1.0f, FAST_COS, F)
PIPELINE_KERNELS(fast_expf, 32, float, 0.5f + threadIdx.x * 1e-3f, 1.0f, 1.0f, FAST_EXP, F)
PIPELINE_KERNELS(fast_log2f, 32, float, 4.5f + threadIdx.x * 1e-3f, 1.0f, 2.0f, FAST_LOG2, F)
PIPELINE_KERNELS(libm_sinf, 4, float, 0.5f + threadIdx.x * 1e-3f, 1.0f, 1.0f, LIBM_SIN, F)
PIPELINE_KERNELS(libm_cosf, 4, float, 0.5f + threadIdx.x * 1e-3f, 1.0f, 1.0f, LIBM_COS, F)
PIPELINE_KERNELS(libm_expf, 4, float, 0.5f + threadIdx.x * 1e-3f, 1.0f, 1.0f, LIBM_EXP, F)
PIPELINE_KERNELS(libm_log2f, 4, float, 4.5f + threadIdx.x * 1e-3f, 1.0f, 2.0f, LIBM_LOG2, F)

#define DADD(v) ((v) + y)
#define DMUL(v) ((v) * y)
#define DFMA(v) (fma((v), y, z))
#define DDIV(v) (z / (v))
PIPELINE_KERNELS(f64_add, 32, double, threadIdx.x * 1e-3, 1e-9, 0.5, DADD, D)
PIPELINE_KERNELS(f64_mul, 32, double, 1.0 + threadIdx.x * 1e-3, 0.9999999, 0.5, DMUL, D)
PIPELINE_KERNELS(f64_fma, 32, double, 1.0 + threadIdx.x * 1e-3, 0.9999999, 1e-9, DFMA, D)
PIPELINE_KERNELS(f64_div, 4, double, 1.5 + threadIdx.x * 1e-3, 1.0, 2.0, DDIV, D)

// Half precision through PTX directly (cuda_fp16.h needs headers the pinned PyPI toolchain
// lacks): two fp16 values packed in 32 bits; 0x3C003800 = (1.0, 0.5), 0x3BFE3BFE = (0.999,
// 0.999), 0x14191419 = (0.001, 0.001).
__device__ __forceinline__ unsigned hfma2(unsigned a, unsigned b, unsigned c)
{
    unsigned d;
    asm("fma.rn.f16x2 %0, %1, %2, %3;" : "=r"(d) : "r"(a), "r"(b), "r"(c));
    return d;
}
#define HFMA2(v) (hfma2((v), y, z))
PIPELINE_KERNELS(f16x2_fma, 32, unsigned, 0x3C003800u, 0x3BFE3BFEu, 0x14191419u, HFMA2, U)
