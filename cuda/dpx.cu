// gpubench-arch: compute_90
// Hopper's DPX functions (CUDA Math API, "DPX"), issue #74: latency and throughput per function
// and whether they issue to the integer pipe. Built for compute_90: below it the CUDA headers
// implement every DPX function with ordinary integer code (`max(a + b, c)` in C, the 16x2
// forms split into halves), and at compute_90 they are the PTX that ptxas fuses for sm_90.
//
// Every function runs as a chain of dependent calls x = f(x, y, z), unrolled STEPS times in a
// loop of `iterations` trips; y and z are kernel arguments, so that nothing folds at compile
// time. Two lengths per function (the difference of the two timings over the difference of
// their calls is the cost of one call, the loop and the clock reads subtracted out):
//
// dpx_lat_NAME_32 / dpx_lat_NAME_128 (long long *stamps[2], unsigned *sink[1], int iterations,
//   int y, int z): one thread, one chain of 32 or 128 calls per trip; stamps = clock64 before
//   and after the loop.
// dpx_thr_NAME_8 / dpx_thr_NAME_16 (long long *stamps[2 * blocks], unsigned *smids[blocks],
//   unsigned *sink[blocks * THR_THREADS], int iterations, int y, int z): THR_THREADS threads a
//   block (launched THR_BLOCKS_PER_SM blocks per SM: 2048 threads, a full SM), CHAINS
//   independent chains per thread of 8 or 16 calls each per trip; stamps[2 b], stamps[2 b + 1]
//   = thread 0's clock64 after a barrier before and after the loop, smids[b] = the block's SM.
//
// The mixes (dpx_thr_mix_A_B_8/16, throughput only) run CHAINS / 2 chains of A and as many of
// B, alternating in the code: whether A and B share a pipe.
//
// __vibmax_s32 gives a predicate besides its value (a >= b); each chain counts it, so that the
// predicate is computed, as a dynamic-programming traceback would use it.

#include "common.cuh"

#define CHAINS 8
#define THR_THREADS 256
#define THR_BLOCKS_PER_SM 8

// One call of each function on the chain value x; y and z are the kernel's operands, acc the
// chain's predicate count (used by vibmax only).
#define S(v) ((int)(v))
#define STEP_vimax3_s32(x, acc) ((unsigned)__vimax3_s32(S(x), y, z))
#define STEP_vimin3_s32(x, acc) ((unsigned)__vimin3_s32(S(x), y, z))
#define STEP_vimax3_s32_relu(x, acc) ((unsigned)__vimax3_s32_relu(S(x), y, z))
#define STEP_vimax_s32_relu(x, acc) ((unsigned)__vimax_s32_relu(S(x), y))
#define STEP_viaddmax_s32(x, acc) ((unsigned)__viaddmax_s32(S(x), y, z))
#define STEP_viaddmin_s32(x, acc) ((unsigned)__viaddmin_s32(S(x), y, z))
#define STEP_viaddmax_s32_relu(x, acc) ((unsigned)__viaddmax_s32_relu(S(x), y, z))
#define STEP_viaddmax_u32(x, acc) (__viaddmax_u32((x), (unsigned)y, (unsigned)z))
#define STEP_vibmax_s32(x, acc) (vibmax_step((x), y, (acc)))
#define STEP_vimax3_s16x2(x, acc) (__vimax3_s16x2((x), (unsigned)y, (unsigned)z))
#define STEP_viaddmax_s16x2(x, acc) (__viaddmax_s16x2((x), (unsigned)y, (unsigned)z))
#define STEP_vimax_s16x2_relu(x, acc) (__vimax_s16x2_relu((x), (unsigned)y))
// References: PTX's two-input max (no DPX function), and the integer pipe's IADD3 and IMAD,
// written in PTX so that the compiler cannot fold a chain of them (as cuda/pipeline.cu does).
#define STEP_imax(x, acc) (ptx_max((x), y))
#define STEP_iadd3(x, acc) (ptx_add(ptx_add((x), (unsigned)y), (unsigned)z))
#define STEP_imad(x, acc) (ptx_mad((x), (unsigned)y, (unsigned)z))

__device__ __forceinline__ unsigned vibmax_step(unsigned x, int y, unsigned &acc)
{
    bool p;
    const int r = __vibmax_s32(S(x), y, &p);
    acc += p;
    return (unsigned)r;
}

__device__ __forceinline__ unsigned ptx_max(unsigned a, int b)
{
    unsigned d;
    asm("max.s32 %0, %1, %2;" : "=r"(d) : "r"(a), "r"(b));
    return d;
}

__device__ __forceinline__ unsigned ptx_add(unsigned a, unsigned b)
{
    unsigned d;
    asm("add.u32 %0, %1, %2;" : "=r"(d) : "r"(a), "r"(b));
    return d;
}

__device__ __forceinline__ unsigned ptx_mad(unsigned a, unsigned b, unsigned c)
{
    unsigned d;
    asm("mad.lo.u32 %0, %1, %2, %3;" : "=r"(d) : "r"(a), "r"(b), "r"(c));
    return d;
}

__device__ __forceinline__ unsigned smid()
{
    unsigned id;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(id));
    return id;
}

#define LATENCY_KERNEL(NAME, STEPS)                                                              \
    extern "C" __global__ void dpx_lat_##NAME##_##STEPS(long long *stamps, unsigned *sink,         \
                                                        int iterations, int y, int z)            \
    {                                                                                            \
        unsigned x = (unsigned)(y * 7 + z);                                                      \
        unsigned acc = 0;                                                                        \
        const long long start = read_clock64();                                                  \
        _Pragma("unroll 1") for (int i = 0; i < iterations; ++i)                                 \
        {                                                                                        \
            _Pragma("unroll") for (int u = 0; u < STEPS; ++u) { x = STEP_##NAME(x, acc); }       \
        }                                                                                        \
        const long long stop = read_clock64();                                                   \
        stamps[0] = start;                                                                       \
        stamps[1] = stop;                                                                        \
        sink[threadIdx.x] = x ^ acc;                                                             \
    }

// Chain c runs STEP_A where c is even and STEP_B where it is odd.
#define THROUGHPUT_KERNEL(NAME, STEP_A, STEP_B, STEPS)                                           \
    extern "C" __global__ void __launch_bounds__(THR_THREADS, THR_BLOCKS_PER_SM)                 \
        dpx_thr_##NAME##_##STEPS(long long *stamps, unsigned *smids, unsigned *sink,             \
                                 int iterations, int y, int z)                                   \
    {                                                                                            \
        const unsigned thread = blockIdx.x * blockDim.x + threadIdx.x;                           \
        unsigned x[CHAINS];                                                                      \
        unsigned acc[CHAINS];                                                                    \
        _Pragma("unroll") for (int c = 0; c < CHAINS; ++c)                                       \
        {                                                                                        \
            x[c] = thread * CHAINS + c + (unsigned)y;                                            \
            acc[c] = 0;                                                                          \
        }                                                                                        \
        __syncthreads();                                                                         \
        stamp(stamps, 0);                                                                        \
        _Pragma("unroll 1") for (int i = 0; i < iterations; ++i)                                 \
        {                                                                                        \
            _Pragma("unroll") for (int u = 0; u < STEPS; ++u)                                    \
            {                                                                                    \
                _Pragma("unroll") for (int c = 0; c < CHAINS; c += 2)                            \
                {                                                                                \
                    x[c] = STEP_A(x[c], acc[c]);                                                 \
                    x[c + 1] = STEP_B(x[c + 1], acc[c + 1]);                                     \
                }                                                                                \
            }                                                                                    \
        }                                                                                        \
        __syncthreads();                                                                         \
        stamp(stamps, 1);                                                                        \
        if (threadIdx.x == 0) {                                                                  \
            smids[blockIdx.x] = smid();                                                          \
        }                                                                                        \
        unsigned fold = 0;                                                                       \
        _Pragma("unroll") for (int c = 0; c < CHAINS; ++c) { fold ^= x[c] + acc[c]; }            \
        sink[thread] = fold;                                                                     \
    }

#define FUNCTION_KERNELS(NAME)                                                                   \
    LATENCY_KERNEL(NAME, 32)                                                                     \
    LATENCY_KERNEL(NAME, 128)                                                                    \
    THROUGHPUT_KERNEL(NAME, STEP_##NAME, STEP_##NAME, 8)                                         \
    THROUGHPUT_KERNEL(NAME, STEP_##NAME, STEP_##NAME, 16)

#define MIX_KERNELS(A, B)                                                                        \
    THROUGHPUT_KERNEL(mix_##A##_##B, STEP_##A, STEP_##B, 8)                                      \
    THROUGHPUT_KERNEL(mix_##A##_##B, STEP_##A, STEP_##B, 16)

FUNCTION_KERNELS(vimax3_s32)
FUNCTION_KERNELS(vimin3_s32)
FUNCTION_KERNELS(vimax3_s32_relu)
FUNCTION_KERNELS(vimax_s32_relu)
FUNCTION_KERNELS(viaddmax_s32)
FUNCTION_KERNELS(viaddmin_s32)
FUNCTION_KERNELS(viaddmax_s32_relu)
FUNCTION_KERNELS(viaddmax_u32)
FUNCTION_KERNELS(vibmax_s32)
FUNCTION_KERNELS(vimax3_s16x2)
FUNCTION_KERNELS(viaddmax_s16x2)
FUNCTION_KERNELS(vimax_s16x2_relu)
FUNCTION_KERNELS(imax)
FUNCTION_KERNELS(iadd3)
FUNCTION_KERNELS(imad)
MIX_KERNELS(viaddmax_s32, iadd3)
MIX_KERNELS(viaddmax_s32, imad)
MIX_KERNELS(vimax3_s32, iadd3)
