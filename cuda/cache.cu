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

#define CHASE_KERNEL(NAME, LOAD)                                                              \
    extern "C" __global__ void NAME(const unsigned *chain, int warm, int steps, long long *out) \
    {                                                                                         \
        unsigned j = 0;                                                                       \
        _Pragma("unroll 1") for (int i = 0; i < warm; ++i) { j = LOAD(chain + j); }           \
        const long long start = read_clock64();                                               \
        _Pragma("unroll 1") for (int i = 0; i < steps; i += 16)                               \
        {                                                                                     \
            _Pragma("unroll") for (int u = 0; u < 16; ++u) { j = LOAD(chain + j); }           \
        }                                                                                     \
        const long long stop = read_clock64();                                                \
        out[0] = stop - start;                                                                \
        out[1] = j;                                                                           \
    }

CHASE_KERNEL(chase_global, load_default)
CHASE_KERNEL(chase_l2, load_cg)
CHASE_KERNEL(chase_readonly, load_nc)

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
