// Pointer chase for the memory hierarchy (Wong et al., Listings 1-2 and "Inferring cache
// characteristics from latency plots"). One thread follows a chain whose every element holds
// the index of the next: `warm` untimed loads, then `steps` timed ones (a multiple of 16; the
// loop is unrolled 16 times). out[0] = cycles of the timed loads, out[1] = the final index,
// which the host checks against the chain so a shortened chase cannot pass unnoticed.
// Variants differ only in the load instruction (or, for shared, where the chain lives).

__device__ __forceinline__ long long read_clock64()
{
    long long t;
    asm volatile("mov.u64 %0, %%clock64;" : "=l"(t)::"memory");
    return t;
}

__device__ __forceinline__ unsigned load_default(const unsigned *p)
{
    unsigned v;
    asm volatile("ld.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
    return v;
}

__device__ __forceinline__ unsigned load_cg(const unsigned *p)
{
    unsigned v;
    asm volatile("ld.global.cg.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
    return v;
}

__device__ __forceinline__ unsigned load_nc(const unsigned *p)
{
    unsigned v;
    asm volatile("ld.global.nc.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
    return v;
}

// Global-memory chases run on `blockDim.x` threads of one block (`--threads`, for contention
// studies): thread t starts at starts[t] and writes out[2t] (cycles) and out[2t + 1] (index).
#define CHASE_KERNEL(NAME, LOAD)                                                              \
    extern "C" __global__ void NAME(const unsigned *chain, const unsigned *starts, int warm,  \
                                    int steps, long long *out)                                \
    {                                                                                         \
        unsigned j = starts[threadIdx.x];                                                     \
        _Pragma("unroll 1") for (int i = 0; i < warm; ++i) { j = LOAD(chain + j); }           \
        const long long start = read_clock64();                                               \
        _Pragma("unroll 1") for (int i = 0; i < steps; i += 16)                               \
        {                                                                                     \
            _Pragma("unroll") for (int u = 0; u < 16; ++u) { j = LOAD(chain + j); }           \
        }                                                                                     \
        const long long stop = read_clock64();                                                \
        out[2 * threadIdx.x] = stop - start;                                                  \
        out[2 * threadIdx.x + 1] = j;                                                         \
    }

CHASE_KERNEL(chase_global, load_default)
CHASE_KERNEL(chase_l2, load_cg)
CHASE_KERNEL(chase_readonly, load_nc)

// Fine-grained chase (after Mei & Chu): one thread, every load timed on its own. The loaded
// index is stored to shared memory before the second clock read, so the read waits for the
// load; latencies and indices go to shared memory during the run (no global stores in the
// timed path) and out afterwards: out[2i] = cycles of load i, out[2i + 1] = the index it read.
#define PER_LOAD_LIMIT 4096
#define PER_LOAD_KERNEL(NAME, LOAD)                                                           \
    extern "C" __global__ void NAME(const unsigned *chain, int warm, int loads, long long *out) \
    {                                                                                         \
        __shared__ unsigned indices[PER_LOAD_LIMIT];                                          \
        __shared__ unsigned latencies[PER_LOAD_LIMIT];                                        \
        unsigned j = 0;                                                                       \
        _Pragma("unroll 1") for (int i = 0; i < warm; ++i) { j = LOAD(chain + j); }           \
        _Pragma("unroll 1") for (int i = 0; i < loads && i < PER_LOAD_LIMIT; ++i)             \
        {                                                                                     \
            const long long start = read_clock64();                                           \
            j = LOAD(chain + j);                                                              \
            indices[i] = j;                                                                   \
            const long long stop = read_clock64();                                            \
            latencies[i] = (unsigned)(stop - start);                                          \
        }                                                                                     \
        _Pragma("unroll 1") for (int i = 0; i < loads && i < PER_LOAD_LIMIT; ++i)             \
        {                                                                                     \
            out[2 * i] = latencies[i];                                                        \
            out[2 * i + 1] = indices[i];                                                      \
        }                                                                                     \
    }

PER_LOAD_KERNEL(per_load_global, load_default)
PER_LOAD_KERNEL(per_load_l2, load_cg)
PER_LOAD_KERNEL(per_load_readonly, load_nc)

// TLB chase (Wong et al., TLB section): elements one page-scale stride apart over a buffer of
// up to tens of GiB, too large for 32-bit word indices and too large to build on the host.
// Elements hold element numbers; the host uploads next[] (n entries, the visiting order) and
// tlb_chain_init scatters it, one element per thread. Loads are ld.global.cg, so the elements
// (a few thousand lines) stay in L2 and what grows with the footprint is address translation.
extern "C" __global__ void tlb_chain_init(unsigned char *base, unsigned long long stride,
                                          const unsigned *next, unsigned n)
{
    const unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        *(unsigned *)(base + i * stride) = next[i];
    }
}

extern "C" __global__ void chase_tlb(const unsigned char *base, unsigned long long stride,
                                     int warm, int steps, long long *out)
{
    unsigned j = 0;
#pragma unroll 1
    for (int i = 0; i < warm; ++i) {
        j = load_cg((const unsigned *)(base + j * stride));
    }
    const long long start = read_clock64();
#pragma unroll 1
    for (int i = 0; i < steps; i += 16) {
#pragma unroll
        for (int u = 0; u < 16; ++u) {
            j = load_cg((const unsigned *)(base + j * stride));
        }
    }
    const long long stop = read_clock64();
    out[0] = stop - start;
    out[1] = j;
}

// The chain copied into dynamic shared memory (words = its length) by the whole block, then
// chased by thread 0.
extern "C" __global__ void chase_shared(const unsigned *chain, int words, int warm, int steps,
                                        long long *out)
{
    extern __shared__ unsigned shared_chain[];
    for (int i = threadIdx.x; i < words; i += blockDim.x) {
        shared_chain[i] = chain[i];
    }
    __syncthreads();
    if (threadIdx.x != 0) {
        return;
    }
    unsigned j = 0;
#pragma unroll 1
    for (int i = 0; i < warm; ++i) {
        j = shared_chain[j];
    }
    const long long start = read_clock64();
#pragma unroll 1
    for (int i = 0; i < steps; i += 16) {
#pragma unroll
        for (int u = 0; u < 16; ++u) {
            j = shared_chain[j];
        }
    }
    const long long stop = read_clock64();
    out[0] = stop - start;
    out[1] = j;
}

// The whole 64 KiB of user constant memory, chased with dynamic indices (the constant cache
// path; uniform across the warp, as one thread runs). The host writes the chain into it.
__constant__ unsigned const_chain[16384];

extern "C" __global__ void chase_constant(int warm, int steps, long long *out)
{
    unsigned j = 0;
#pragma unroll 1
    for (int i = 0; i < warm; ++i) {
        j = const_chain[j];
    }
    const long long start = read_clock64();
#pragma unroll 1
    for (int i = 0; i < steps; i += 16) {
#pragma unroll
        for (int u = 0; u < 16; ++u) {
            j = const_chain[j];
        }
    }
    const long long stop = read_clock64();
    out[0] = stop - start;
    out[1] = j;
}

// Texture path: tex1Dfetch through a texture object over linear memory, written as PTX
// (`tex.1d`) because the texture headers need more of the toolkit than the pinned compiler
// has. The handle is the CUtexObject the host created (unified texture mode).
__device__ __forceinline__ unsigned texture_fetch(unsigned long long texture, unsigned index)
{
    unsigned x, y, z, w;
    asm volatile("tex.1d.v4.u32.s32 {%0, %1, %2, %3}, [%4, {%5}];"
                 : "=r"(x), "=r"(y), "=r"(z), "=r"(w)
                 : "l"(texture), "r"(index)
                 : "memory");
    (void)y;
    (void)z;
    (void)w;
    return x;
}

extern "C" __global__ void chase_texture(unsigned long long texture, int warm, int steps,
                                         long long *out)
{
    unsigned j = 0;
#pragma unroll 1
    for (int i = 0; i < warm; ++i) {
        j = texture_fetch(texture, j);
    }
    const long long start = read_clock64();
#pragma unroll 1
    for (int i = 0; i < steps; i += 16) {
#pragma unroll
        for (int u = 0; u < 16; ++u) {
            j = texture_fetch(texture, j);
        }
    }
    const long long stop = read_clock64();
    out[0] = stop - start;
    out[1] = j;
}
