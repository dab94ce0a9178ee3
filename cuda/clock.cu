// Clock probes used by `gpubench info` and by every run's metadata: the SM clock (clock64 ticks
// against %globaltimer nanoseconds over a busy-wait) and the back-to-back overhead of clock64.
// One thread runs each probe; nothing here can wait on another thread, so nothing can hang.

#include "common.cuh"

__device__ __forceinline__ unsigned long long read_globaltimer()
{
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)::"memory");
    return t;
}

// out[0] = globaltimer at start (ns), out[1] = clock64 at start,
// out[2] = globaltimer at end (ns),   out[3] = clock64 at end.
// Spins until at least `spin_ns` nanoseconds of %globaltimer have passed.
extern "C" __global__ void clock_rate(unsigned long long spin_ns, long long *out)
{
    const unsigned long long g0 = read_globaltimer();
    const long long c0 = read_clock64();
    unsigned long long g1 = g0;
    while (g1 - g0 < spin_ns) {
        g1 = read_globaltimer();
    }
    const long long c1 = read_clock64();
    out[0] = (long long)g0;
    out[1] = c0;
    out[2] = (long long)g1;
    out[3] = c1;
}

// out[k] = cycles between two back-to-back clock64 reads, k < pairs.
extern "C" __global__ void clock_overhead(long long *out, int pairs)
{
#pragma unroll 1
    for (int k = 0; k < pairs; ++k) {
        const long long a = read_clock64();
        const long long b = read_clock64();
        out[k] = b - a;
    }
}

// Back-to-back reads of the three timers, `pairs` times each, one thread:
// out[k] = clock64 difference, out[pairs + k] = clock (32-bit) difference,
// out[2 * pairs + k] = %globaltimer difference in nanoseconds.
extern "C" __global__ void timer_overheads(long long *out, int pairs)
{
#pragma unroll 1
    for (int k = 0; k < pairs; ++k) {
        const long long a = read_clock64();
        const long long b = read_clock64();
        out[k] = b - a;
    }
#pragma unroll 1
    for (int k = 0; k < pairs; ++k) {
        unsigned a, b;
        asm volatile("mov.u32 %0, %%clock;" : "=r"(a)::"memory");
        asm volatile("mov.u32 %0, %%clock;" : "=r"(b)::"memory");
        out[pairs + k] = (long long)(b - a);
    }
#pragma unroll 1
    for (int k = 0; k < pairs; ++k) {
        const unsigned long long a = read_globaltimer();
        const unsigned long long b = read_globaltimer();
        out[2 * pairs + k] = (long long)(b - a);
    }
}

// Wong et al. Fig. 5: is the cycle counter shared between SMs? Thread 0 of every block records
// out[block * 6 + ...] = {smid, clock64 at start, globaltimer at start, clock64 at end,
// globaltimer at end, 0} around a busy-wait of `spin_ns` of %globaltimer.
extern "C" __global__ void clock_scope(unsigned long long spin_ns, long long *out)
{
    if (threadIdx.x != 0) {
        return;
    }
    unsigned smid;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(smid));
    const long long c0 = read_clock64();
    const unsigned long long g0 = read_globaltimer();
    unsigned long long g1 = g0;
    while (g1 - g0 < spin_ns) {
        g1 = read_globaltimer();
    }
    const long long c1 = read_clock64();
    long long *row = out + blockIdx.x * 6;
    row[0] = smid;
    row[1] = c0;
    row[2] = (long long)g0;
    row[3] = c1;
    row[4] = (long long)g1;
    row[5] = 0;
}
