// What every kernel file shares: the warp width and the cycle-counter read. Included by
// cuda/*.cu (nvcc finds it beside the including file); build.rs compiles only *.cu.
#pragma once

#define WARP_LANES 32

// clock64 as an `asm volatile` with a memory clobber, so the compiler can move neither the read
// nor any memory access across it.
__device__ __forceinline__ long long read_clock64()
{
    long long t;
    asm volatile("mov.u64 %0, %%clock64;" : "=l"(t)::"memory");
    return t;
}
