// What cuda/flops.cu and cuda/flops_bf16.cu share: the loop's shape, the block stamps and the
// timed loop itself. Included by those files only (build.rs compiles *.cu).
#pragma once

#include "common.cuh"

// Thread 0's clock64 and %globaltimer as the block's start (which = 0) or end (1):
// stamps[4 * block + which] (cycles of its SM) and stamps[4 * block + 2 + which] (ns, one
// clock for the whole GPU), so the host gets each SM's rate per clock and the chip's per second.
__device__ __forceinline__ void flops_stamp(long long *stamps, int which)
{
    const long long cycles = read_clock64();
    long long ns;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(ns)::"memory");
    if (threadIdx.x == 0) {
        stamps[4 * blockIdx.x + which] = cycles;
        stamps[4 * blockIdx.x + 2 + which] = ns;
    }
}

#define FLOPS_THREADS 1024
#define FLOPS_CHAINS 16
#define FLOPS_UNROLL 16

// The timed loop every kernel shares: `fma(acc[c])` updates one accumulator.
#define FLOPS_LOOP(T, INIT, FMA, SUM)                                                           \
    T acc[FLOPS_CHAINS];                                                                        \
    _Pragma("unroll") for (int c = 0; c < FLOPS_CHAINS; ++c) { acc[c] = INIT(c); }              \
    __syncthreads();                                                                            \
    flops_stamp(stamps, 0);                                                                     \
    _Pragma("unroll 1") for (int i = 0; i < iterations; ++i)                                    \
    {                                                                                           \
        _Pragma("unroll") for (int u = 0; u < FLOPS_UNROLL; ++u)                                \
        {                                                                                       \
            _Pragma("unroll") for (int c = 0; c < FLOPS_CHAINS; ++c) { FMA(acc[c]); }           \
        }                                                                                       \
    }                                                                                           \
    __syncthreads();                                                                            \
    flops_stamp(stamps, 1);                                                                     \
    float total = 0.0f;                                                                         \
    _Pragma("unroll") for (int c = 0; c < FLOPS_CHAINS; ++c) { total += SUM(acc[c]); }          \
    sink[blockIdx.x * blockDim.x + threadIdx.x] = total;

