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

#define CHAIN_KERNELS(LATENCY, LATENCY_UNROLL, THROUGHPUT, UNROLL, TYPE, INIT_X, INIT_Y, INIT_Z, STEP, FOLD) \
    extern "C" __global__ void LATENCY(long long *stamps, unsigned *sink, int iterations, unsigned seed)       \
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
            _Pragma("unroll") for (int u = 0; u < LATENCY_UNROLL; ++u) { x = STEP(x); }         \
        }                                                                                       \
        const long long stop = read_clock64();                                                  \
        if (lane == 0) {                                                                        \
            stamps[2 * warp] = start;                                                           \
            stamps[2 * warp + 1] = stop;                                                        \
        }                                                                                       \
        sink[threadIdx.x] = FOLD(x);                                                            \
    }                                                                                           \
    extern "C" __global__ void THROUGHPUT(long long *stamps, unsigned *sink, int iterations, unsigned seed)    \
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

// Wong et al.'s table: lat_NAME and thr_NAME, UNROLL operations per loop trip.
#define PIPELINE_KERNELS(NAME, UNROLL, TYPE, INIT_X, INIT_Y, INIT_Z, STEP, FOLD)                        \
    CHAIN_KERNELS(lat_##NAME, UNROLL, thr_##NAME, UNROLL, TYPE, INIT_X, INIT_Y, INIT_Z, STEP, FOLD)

// One SASS instruction per chain step, at two chain lengths per loop trip: the difference of
// the two timings over the difference of the two instruction counts (read from the SASS) is
// the instruction's own latency, the loop's instructions and the clock reads subtracted out.
// The latency chains are 32 and 128 steps long: where the loop's branch target falls in the
// instruction stream moves its cost per trip by a few cycles (5 cycles a trip, between chains
// of 16 and 32 FFMAs on an H100), which 96 added steps dilute below 0.1 cycle; the throughput
// chains (16 and 32 steps of four chains) keep many warps in flight, which hide it.
#define SASS_KERNELS(NAME, TYPE, INIT_X, INIT_Y, INIT_Z, STEP, FOLD)                                   \
    CHAIN_KERNELS(sass_lat_##NAME##_32, 32, sass_thr_##NAME##_16, 16, TYPE, INIT_X, INIT_Y, INIT_Z, STEP, FOLD) \
    CHAIN_KERNELS(sass_lat_##NAME##_128, 128, sass_thr_##NAME##_32, 32, TYPE, INIT_X, INIT_Y, INIT_Z, STEP, FOLD)

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

// The per-instruction chains. Each step is one PTX instruction written as inline assembly, so
// that the compiler neither folds nor rewrites it; what ptxas made of it is read from the SASS
// by the host, which divides by the instructions it finds there, not by the steps written here.
#define PTX_UNARY(FN, INSTRUCTION)                                                              \
    __device__ __forceinline__ unsigned FN(unsigned a)                                          \
    {                                                                                           \
        unsigned d;                                                                             \
        asm(INSTRUCTION : "=r"(d) : "r"(a));                                                    \
        return d;                                                                               \
    }
#define PTX_BINARY(FN, INSTRUCTION)                                                             \
    __device__ __forceinline__ unsigned FN(unsigned a, unsigned b)                              \
    {                                                                                           \
        unsigned d;                                                                             \
        asm(INSTRUCTION : "=r"(d) : "r"(a), "r"(b));                                            \
        return d;                                                                               \
    }
#define PTX_TERNARY(FN, INSTRUCTION)                                                            \
    __device__ __forceinline__ unsigned FN(unsigned a, unsigned b, unsigned c)                  \
    {                                                                                           \
        unsigned d;                                                                             \
        asm(INSTRUCTION : "=r"(d) : "r"(a), "r"(b), "r"(c));                                    \
        return d;                                                                               \
    }
PTX_TERNARY(ptx_lop3, "lop3.b32 %0, %1, %2, %3, 0x6A;")
PTX_BINARY(ptx_rotate, "shf.l.wrap.b32 %0, %1, %1, %2;")
PTX_TERNARY(ptx_prmt, "prmt.b32 %0, %1, %2, %3;")
PTX_BINARY(ptx_mulhi, "mul.hi.u32 %0, %1, %2;")
PTX_UNARY(ptx_popc, "popc.b32 %0, %1;")
PTX_UNARY(ptx_bfind, "bfind.u32 %0, %1;")
PTX_UNARY(ptx_brev, "brev.b32 %0, %1;")
// Conversions keep the chain in one register: the converted value's bits are the next input.
PTX_UNARY(ptx_i2f, "{ .reg .f32 t; cvt.rn.f32.u32 t, %1; mov.b32 %0, t; }")
PTX_UNARY(ptx_f2i, "{ .reg .f32 t; mov.b32 t, %1; cvt.rzi.u32.f32 %0, t; }")
PTX_BINARY(ptx_fadd, "{ .reg .f32 a, b; mov.b32 a, %1; mov.b32 b, %2; add.rn.f32 a, a, b; mov.b32 %0, a; }")
PTX_BINARY(ptx_fmul, "{ .reg .f32 a, b; mov.b32 a, %1; mov.b32 b, %2; mul.rn.f32 a, a, b; mov.b32 %0, a; }")
PTX_TERNARY(ptx_ffma, "{ .reg .f32 a, b, c; mov.b32 a, %1; mov.b32 b, %2; mov.b32 c, %3; fma.rn.f32 a, a, b, c; mov.b32 %0, a; }")
// The special-function unit; .ftz so that no denormal scaling surrounds the instruction.
#define MUFU(FN, OP)                                                                            \
    PTX_UNARY(FN, "{ .reg .f32 a; mov.b32 a, %1; " OP " a, a; mov.b32 %0, a; }")
MUFU(ptx_ex2, "ex2.approx.ftz.f32")
MUFU(ptx_lg2, "lg2.approx.ftz.f32")
MUFU(ptx_rsqrt, "rsqrt.approx.ftz.f32")
MUFU(ptx_sqrt, "sqrt.approx.ftz.f32")
MUFU(ptx_sin, "sin.approx.ftz.f32")
MUFU(ptx_tanh, "tanh.approx.f32")
// rcp(rcp(x)) is x, and ptxas removes such a chain whole: the negation keeps it (a source
// modifier of MUFU.RCP, no instruction of its own).
PTX_UNARY(ptx_rcp, "{ .reg .f32 a; mov.b32 a, %1; neg.f32 a, a; rcp.approx.ftz.f32 a, a; mov.b32 %0, a; }")
PTX_BINARY(ptx_hadd2, "add.rn.f16x2 %0, %1, %2;")
PTX_BINARY(ptx_hmul2, "mul.rn.f16x2 %0, %1, %2;")
__device__ __forceinline__ double ptx_dadd(double a, double b)
{
    double d;
    asm("add.rn.f64 %0, %1, %2;" : "=d"(d) : "d"(a), "d"(b));
    return d;
}
__device__ __forceinline__ double ptx_dmul(double a, double b)
{
    double d;
    asm("mul.rn.f64 %0, %1, %2;" : "=d"(d) : "d"(a), "d"(b));
    return d;
}
__device__ __forceinline__ double ptx_dfma(double a, double b, double c)
{
    double d;
    asm("fma.rn.f64 %0, %1, %2, %3;" : "=d"(d) : "d"(a), "d"(b), "d"(c));
    return d;
}
__device__ __forceinline__ unsigned ptx_shfl(unsigned a, unsigned source_lane)
{
    unsigned d;
    asm volatile("shfl.sync.idx.b32 %0, %1, %2, 0x1f, 0xffffffff;" : "=r"(d) : "r"(a), "r"(source_lane));
    return d;
}

// x + y + z: ptxas folds a chain of x + y into shifts of y (LEA, IMAD), while two different
// operands make one IADD3 per step.
#define S_IADD3(v) (ptx_add(ptx_add((v), y), z))
#define S_IMAD(v) (ptx_mad((v), y, z))
#define S_IMADHI(v) (ptx_mulhi((v), y))
#define S_LOP3(v) (ptx_lop3((v), y, z))
#define S_SHF(v) (ptx_rotate((v), y))
#define S_PRMT(v) (ptx_prmt((v), y, z))
#define S_POPC(v) (ptx_popc(v))
#define S_FLO(v) (ptx_bfind(v))
#define S_BREV(v) (ptx_brev(v))
#define S_I2F(v) (ptx_i2f(v))
#define S_F2I(v) (ptx_f2i(v))
#define S_FADD(v) (ptx_fadd((v), y))
#define S_FMUL(v) (ptx_fmul((v), y))
#define S_FFMA(v) (ptx_ffma((v), y, z))
#define S_EX2(v) (ptx_ex2(v))
#define S_LG2(v) (ptx_lg2(v))
#define S_RSQ(v) (ptx_rsqrt(v))
#define S_RCP(v) (ptx_rcp(v))
#define S_SQRT(v) (ptx_sqrt(v))
#define S_SIN(v) (ptx_sin(v))
#define S_TANH(v) (ptx_tanh(v))
#define S_HFMA2(v) (hfma2((v), y, z))
#define S_HADD2(v) (ptx_hadd2((v), y))
#define S_HMUL2(v) (ptx_hmul2((v), y))
#define S_DADD(v) (ptx_dadd((v), y))
#define S_DMUL(v) (ptx_dmul((v), y))
#define S_DFMA(v) (ptx_dfma((v), y, z))
#define S_SHFL(v) (ptx_shfl((v), (lane + 1u) % WARP_LANES))
// Every chain starts from a value of its thread, so the thread index is read before the
// timed region (ptxas otherwise moves that read into it). 0x3F7FFF58 = 0.99999f and
// 0x358637BD = 1e-6f as bits; the seed (3) feeds the integer operands.
SASS_KERNELS(iadd3, unsigned, threadIdx.x + 1u, seed, seed + 2u, S_IADD3, U)
SASS_KERNELS(imad, unsigned, threadIdx.x + 1u, seed, seed + 2u, S_IMAD, U)
SASS_KERNELS(imad_hi, unsigned, threadIdx.x + 0x9E3779B9u, seed << 29, seed + 2u, S_IMADHI, U)
SASS_KERNELS(lop3, unsigned, threadIdx.x + 1u, seed * 0x01010101u, seed << 8, S_LOP3, U)
SASS_KERNELS(shf, unsigned, threadIdx.x + 1u, seed, seed + 2u, S_SHF, U)
SASS_KERNELS(prmt, unsigned, threadIdx.x + 0x01020304u, seed * 0x11111111u, seed * 0x1111u, S_PRMT, U)
SASS_KERNELS(popc, unsigned, threadIdx.x + 1u, seed, seed + 2u, S_POPC, U)
SASS_KERNELS(flo, unsigned, threadIdx.x + 1u, seed, seed + 2u, S_FLO, U)
SASS_KERNELS(brev, unsigned, threadIdx.x + 1u, seed, seed + 2u, S_BREV, U)
SASS_KERNELS(i2f, unsigned, threadIdx.x + 1u, seed, seed + 2u, S_I2F, U)
SASS_KERNELS(f2i, unsigned, 0x3F800000u + threadIdx.x, seed, seed + 2u, S_F2I, U)
SASS_KERNELS(fadd, unsigned, 0x3F800000u + threadIdx.x, 0x358637BDu, seed, S_FADD, U)
SASS_KERNELS(fmul, unsigned, 0x3F800000u + threadIdx.x, 0x3F7FFF58u, seed, S_FMUL, U)
SASS_KERNELS(ffma, unsigned, 0x3F800000u + threadIdx.x, 0x3F7FFF58u, 0x358637BDu, S_FFMA, U)
SASS_KERNELS(mufu_ex2, unsigned, 0x3F000000u + threadIdx.x, seed, seed, S_EX2, U)
SASS_KERNELS(mufu_lg2, unsigned, 0x40900000u + threadIdx.x, seed, seed, S_LG2, U)
SASS_KERNELS(mufu_rsq, unsigned, 0x40000000u + threadIdx.x, seed, seed, S_RSQ, U)
SASS_KERNELS(mufu_rcp, unsigned, 0x3FC00000u + threadIdx.x, seed, seed, S_RCP, U)
SASS_KERNELS(mufu_sqrt, unsigned, 0x40000000u + threadIdx.x, seed, seed, S_SQRT, U)
SASS_KERNELS(mufu_sin, unsigned, 0x3F000000u + threadIdx.x, seed, seed, S_SIN, U)
SASS_KERNELS(mufu_tanh, unsigned, 0x3F000000u + threadIdx.x, seed, seed, S_TANH, U)
SASS_KERNELS(hfma2, unsigned, 0x3C003800u + threadIdx.x, 0x3BFE3BFEu, 0x14191419u, S_HFMA2, U)
SASS_KERNELS(hadd2, unsigned, 0x3C003800u + threadIdx.x, 0x14191419u, seed, S_HADD2, U)
SASS_KERNELS(hmul2, unsigned, 0x3C003800u + threadIdx.x, 0x3BFE3BFEu, seed, S_HMUL2, U)
SASS_KERNELS(dadd, double, threadIdx.x * 1e-3, 1e-9 * seed, 0.5, S_DADD, D)
SASS_KERNELS(dmul, double, 1.0 + threadIdx.x * 1e-3, 0.9999999 + 1e-9 * seed, 0.5, S_DMUL, D)
SASS_KERNELS(dfma, double, 1.0 + threadIdx.x * 1e-3, 0.9999999 + 1e-9 * seed, 1e-9, S_DFMA, D)
SASS_KERNELS(shfl, unsigned, threadIdx.x + 1u, seed, seed + 2u, S_SHFL, U)
