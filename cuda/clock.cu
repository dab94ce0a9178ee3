// Clock probes used by `gpubench info` and by every run's metadata: the SM clock (clock64 ticks
// against %globaltimer nanoseconds over a busy-wait) and the back-to-back overhead of clock64.
// One thread runs each probe; nothing here can wait on another thread, so nothing can hang.

__device__ __forceinline__ long long read_clock64()
{
    long long t;
    asm volatile("mov.u64 %0, %%clock64;" : "=l"(t)::"memory");
    return t;
}

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
