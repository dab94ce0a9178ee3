// Pointer chase for the memory hierarchy (Wong et al., Listings 1-2 and "Inferring cache
// characteristics from latency plots"). One thread follows a chain whose every element holds
// the index of the next: `warm` untimed loads, then `steps` timed ones (a multiple of 16; the
// loop is unrolled 16 times). out[0] = cycles of the timed loads, out[1] = the final index,
// which the host checks against the chain so a shortened chase cannot pass unnoticed.
// Variants differ only in the load instruction (or, for shared, where the chain lives).

#include "common.cuh"

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

__device__ __forceinline__ unsigned long long load_pointer_default(unsigned long long p)
{
    unsigned long long v;
    asm volatile("ld.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
    return v;
}

__device__ __forceinline__ unsigned long long load_pointer_cg(unsigned long long p)
{
    unsigned long long v;
    asm volatile("ld.global.cg.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
    return v;
}

__device__ __forceinline__ unsigned long long load_pointer_nc(unsigned long long p)
{
    unsigned long long v;
    asm volatile("ld.global.nc.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
    return v;
}

// Load-to-use chases: every element holds the address of the next (`p = *p`), so nothing but
// the load sits on the dependency chain (an index would add an address computation per load).
// The host uploads byte offsets; `absolute_pointers` adds the buffer's address in place.
extern "C" __global__ void absolute_pointers(unsigned long long *chain, unsigned long long n)
{
    const unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        chain[i] += (unsigned long long)chain;
    }
}

// The address-order chain built on the device (the host would build and upload a buffer of
// the whole footprint, gigabytes for the conflict experiment's widest strides): element i, at
// word i * stride_words, holds the address of element i + 1, the last that of element 0.
// One element per warp, written by its first lane (CHAIN_ELEMENT), past the L1 (st.global.cg):
// a conflicting stride puts every element in one set, and GPGPU-Sim deadlocks on stores
// that reserve more lines of one L1D set than it has ways (a 6-way L1D: 32 lanes of one store,
// or one lane of each of many warps). A GPU writes the same chain either way, and the chases
// warm their own lines.
#define CHAIN_ELEMENT() ((((unsigned long long)blockIdx.x * blockDim.x + threadIdx.x) >> 5))
#define CHAIN_WRITER() ((threadIdx.x & 31) == 0)
extern "C" __global__ void stride_pointers(unsigned long long *chain, unsigned long long elements,
                                           unsigned long long stride_words)
{
    const unsigned long long i = CHAIN_ELEMENT();
    if (CHAIN_WRITER() && i < elements) {
        const unsigned long long next = (i + 1 == elements) ? 0 : i + 1;
        __stcg(chain + i * stride_words, (unsigned long long)(chain + next * stride_words));
    }
}

// The same chain of 32-bit word indices, for the texture space: word i * stride_words holds
// the index of element i + 1's word, the last element's that of element 0.
extern "C" __global__ void stride_indices(unsigned *chain, unsigned long long elements,
                                          unsigned long long stride_words)
{
    const unsigned long long i = CHAIN_ELEMENT();
    if (CHAIN_WRITER() && i < elements) {
        const unsigned long long next = (i + 1 == elements) ? 0 : i + 1;
        __stcg(chain + i * stride_words, (unsigned)(next * stride_words));
    }
}

// Global-memory chases run on `blockDim.x` threads of one block (`--threads`, for contention
// studies): thread t starts at word starts[t] and writes out[2t] (cycles) and out[2t + 1]
// (the word index it ended on, for the host's check).
#define CHASE_KERNEL(NAME, LOAD)                                                              \
    extern "C" __global__ void NAME(const unsigned long long *chain, const unsigned *starts,  \
                                    int warm, int steps, long long *out)                      \
    {                                                                                         \
        const unsigned long long base = (unsigned long long)chain;                            \
        unsigned long long p = base + 4ull * starts[threadIdx.x];                             \
        out[2 * threadIdx.x] =                                                                \
            timed_chase(p, warm, steps, [](unsigned long long q) { return LOAD(q); });        \
        out[2 * threadIdx.x + 1] = (long long)((p - base) / 4);                               \
    }

CHASE_KERNEL(chase_global, load_pointer_default)
CHASE_KERNEL(chase_l2, load_pointer_cg)
CHASE_KERNEL(chase_readonly, load_pointer_nc)

// The L2 sweep's chase over an address-order chain of `elements` elements: thread 0 chases
// as chase_l2 does, from element 0, but the warm pass before it is made by the whole block,
// every thread reading every blockDim.x-th element, so the elements are read in about the
// order one thread's pass would read them (element 0 first, the last last) in a thousandth
// of its time. out[0] = cycles of the timed loads, out[1] = the word index it ended on.
extern "C" __global__ void chase_l2_block_warmed(const unsigned long long *chain,
                                                 unsigned long long elements,
                                                 unsigned long long stride_words, int steps,
                                                 long long *out)
{
    const unsigned long long base = (unsigned long long)chain;
    unsigned long long sum = 0;
    for (unsigned long long i = threadIdx.x; i < elements; i += blockDim.x) {
        sum += load_pointer_cg(base + 8 * i * stride_words);
    }
    // Counting a predicate on every loaded value makes the barrier wait for the loads.
    if (__syncthreads_count(sum == 0) > (int)blockDim.x) {
        out[0] = -1;
    }
    if (threadIdx.x != 0) {
        return;
    }
    unsigned long long p = base;
    out[0] = timed_chase(p, 0, steps, [](unsigned long long q) { return load_pointer_cg(q); });
    out[1] = (long long)((p - base) / 4);
}

// The same chase with 32-bit word indices (`j = chain[j]`), as gpubench measured before: the
// address computation it puts between loads is the difference to chase_global, reported as
// the index chain's overhead.
extern "C" __global__ void chase_global_index(const unsigned *chain, int warm, int steps,
                                              long long *out)
{
    unsigned j = 0;
    out[0] = timed_chase(j, warm, steps, [chain](unsigned i) { return load_default(chain + i); });
    out[1] = j;
}

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
// up to tens of GiB, too large to build on the host. The host uploads next[] (n entries, the
// visiting order as element numbers) and tlb_chain_init scatters it, one element per thread,
// as the address of the next element, so the chase is `p = *p` with no address arithmetic.
// Loads are ld.global.cg: the elements (a few thousand lines) stay in L2, and what grows with
// the footprint is address translation. out[1] is the element number the chase ended on.
extern "C" __global__ void tlb_chain_init(unsigned char *base, unsigned long long stride,
                                          const unsigned *next, unsigned n)
{
    const unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        *(unsigned long long *)(base + i * stride) =
            (unsigned long long)(base + (unsigned long long)next[i] * stride);
    }
}

extern "C" __global__ void chase_tlb(const unsigned char *base, unsigned long long stride,
                                     int warm, int steps, long long *out)
{
    unsigned long long p = (unsigned long long)base;
    out[0] = timed_chase(p, warm, steps, [](unsigned long long q) { return load_pointer_cg(q); });
    out[1] = (long long)((p - (unsigned long long)base) / stride);
}

// The chain (byte offsets) copied into dynamic shared memory by the whole block as shared-
// window addresses, then chased by thread 0 with `ld.shared` on the address itself: no index
// arithmetic between loads. out[1] is the word index the chase ended on.
extern "C" __global__ void chase_shared(const unsigned *chain, int words, int warm, int steps,
                                        long long *out)
{
    extern __shared__ unsigned shared_chain[];
    const unsigned base = (unsigned)__cvta_generic_to_shared(shared_chain);
    for (int i = threadIdx.x; i < words; i += blockDim.x) {
        shared_chain[i] = base + chain[i];
    }
    __syncthreads();
    if (threadIdx.x != 0) {
        return;
    }
    unsigned j = base;
    out[0] = timed_chase(j, warm, steps, [](unsigned address) {
        asm volatile("ld.shared.u32 %0, [%0];" : "+r"(address)::"memory");
        return address;
    });
    out[1] = (j - base) / 4;
}

// The whole 64 KiB of user constant memory; the host writes the chain into it as byte
// offsets, so a load is `c[bank][offset]` with no index arithmetic.
__constant__ unsigned const_chain[16384];

__device__ __forceinline__ unsigned constant_at(unsigned offset)
{
    return *(const unsigned *)((const char *)const_chain + offset);
}

// Two constant-cache paths. chase_constant starts from starts[threadIdx.x], read from global
// memory: the compiler cannot prove the index warp-uniform, keeps it in a per-thread register
// and loads with LDC (the constant cache hierarchy). chase_constant_uniform starts from 0: the
// whole chain is warp-uniform and ptxas moves it to the uniform datapath (ULDC). out[1] is the
// word index the chase ended on.
#define CONSTANT_CHASE(NAME, FIRST)                                                           \
    extern "C" __global__ void NAME(const unsigned *starts, int warm, int steps, long long *out) \
    {                                                                                         \
        (void)starts;                                                                         \
        unsigned j = FIRST;                                                                   \
        out[0] = timed_chase(j, warm, steps, [](unsigned offset) { return constant_at(offset); }); \
        out[1] = j / 4;                                                                       \
    }

CONSTANT_CHASE(chase_constant, starts[threadIdx.x])
CONSTANT_CHASE(chase_constant_uniform, 0u)

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
    out[0] = timed_chase(j, warm, steps,
                         [texture](unsigned i) { return texture_fetch(texture, i); });
    out[1] = j;
}

// Which caches share one array (after MT4G's sharing test): one thread walks the fill chain
// through `fill_path` for `fill_passes` passes, then the evict chain through `evict_path` for
// `evict_steps` steps (none where evict_path < 0), then times one pass of `fill_steps` steps
// (a multiple of 16) of the fill chain through fill_path again. A cache the eviction walk
// fills too holds fewer of the fill chain's lines, and the timed pass slows as it does after
// an eviction through fill_path itself. Paths: 0 ld.global (the L1), 1 ld.global.nc (read-
// only), 2 tex.1d (texture), 3 the constant bank (LDC: the start is read from global memory,
// so the index is not warp-uniform). Chains hold word indices into their buffer (and the
// texture over it), or for the constant path byte offsets into const_chain, fill and evict in
// disjoint parts of it. out[0] = cycles of the timed pass, out[1] = where the fill chain
// ended, out[2] = where the evict chain ended (the host checks both).
template <int PATH>
__device__ __forceinline__ unsigned storage_load(const unsigned *chain, unsigned long long texture,
                                                 unsigned j)
{
    if (PATH == 0) {
        return load_default(chain + j);
    }
    if (PATH == 1) {
        return load_nc(chain + j);
    }
    if (PATH == 2) {
        return texture_fetch(texture, j);
    }
    return constant_at(j);
}

template <int PATH>
__device__ __forceinline__ unsigned storage_walk(const unsigned *chain, unsigned long long texture,
                                                 unsigned j, int steps)
{
#pragma unroll 1
    for (int i = 0; i < steps; ++i) {
        j = storage_load<PATH>(chain, texture, j);
    }
    return j;
}

__device__ __forceinline__ unsigned storage_walk_on(int path, const unsigned *chain,
                                                    unsigned long long texture, unsigned j, int steps)
{
    switch (path) {
    case 0: return storage_walk<0>(chain, texture, j, steps);
    case 1: return storage_walk<1>(chain, texture, j, steps);
    case 2: return storage_walk<2>(chain, texture, j, steps);
    default: return storage_walk<3>(chain, texture, j, steps);
    }
}

template <int PATH>
__device__ __forceinline__ long long storage_timed(const unsigned *chain, unsigned long long texture,
                                                   unsigned &j, int steps)
{
    return timed_chase(j, 0, steps,
                       [chain, texture](unsigned i) { return storage_load<PATH>(chain, texture, i); });
}

extern "C" __global__ void storage_probe(const unsigned *fill, unsigned long long fill_texture,
                                         const unsigned *starts, int fill_steps, int fill_passes,
                                         const unsigned *evict, unsigned long long evict_texture,
                                         int evict_steps, int fill_path, int evict_path, long long *out)
{
    unsigned j =
        storage_walk_on(fill_path, fill, fill_texture, starts[threadIdx.x], fill_passes * fill_steps);
    unsigned k = starts[threadIdx.x + 1];
    if (evict_path >= 0) {
        k = storage_walk_on(evict_path, evict, evict_texture, k, evict_steps);
    }
    long long cycles;
    switch (fill_path) {
    case 0: cycles = storage_timed<0>(fill, fill_texture, j, fill_steps); break;
    case 1: cycles = storage_timed<1>(fill, fill_texture, j, fill_steps); break;
    case 2: cycles = storage_timed<2>(fill, fill_texture, j, fill_steps); break;
    default: cycles = storage_timed<3>(fill, fill_texture, j, fill_steps); break;
    }
    out[0] = cycles;
    out[1] = j;
    out[2] = k;
}
