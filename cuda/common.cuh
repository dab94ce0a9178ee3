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

// Thread 0's clock64 as the block's start (which = 0) or end (1): stamps[2 * block + which].
// The kernels that use it put a barrier on both sides, so the span covers every warp.
__device__ __forceinline__ void stamp(long long *stamps, int which)
{
    const long long t = read_clock64();
    if (threadIdx.x == 0) {
        stamps[2 * blockIdx.x + which] = t;
    }
}

// The timed loop every latency chase shares (Wong et al.'s Listing 1): `warm` untimed steps,
// then `steps` timed ones (a multiple of 16, unrolled 16 times so that the loop's own
// instructions are amortised); returns the cycles of the timed steps. `step` is one load of
// the chain: nothing else may sit between two loads.
template <typename T, typename Step>
__device__ __forceinline__ long long timed_chase(T &p, int warm, int steps, Step step)
{
#pragma unroll 1
    for (int i = 0; i < warm; ++i) {
        p = step(p);
    }
    const long long start = read_clock64();
#pragma unroll 1
    for (int i = 0; i < steps; i += 16) {
#pragma unroll
        for (int u = 0; u < 16; ++u) {
            p = step(p);
        }
    }
    const long long stop = read_clock64();
    return stop - start;
}
