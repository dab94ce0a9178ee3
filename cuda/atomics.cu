// Atomics (issue #17; Luo et al. 2024 for the Hopper context, Wong et al. 2010 for the
// pointer-chase method): latency and throughput of atom / red on global and shared memory.
//
// Latency kernels, ATOMIC_<space>_<type>_<op>_lat: one thread follows a chain of indices with
// the atomic itself, p = atom(chain + p, value), where value leaves memory unchanged and the
// atomic returns the word it found: add 0, max 0, min ~0 (unsigned), CAS whose compare value
// ~0 no index equals. So the atomic is a pointer chase exactly as a load would be, and `load`
// is the same chase with a plain load (global: ld.global.cg, served by the L2 like the
// atomics; shared: ld.shared). Global: the host builds the chain (any footprint); shared: the
// block builds a ring of SHARED_WORDS words with the given stride.
//   global signature: (T *chain, long long *out[2], T value, T start, int warm, int steps)
//   (start: the index the chase begins at, so that chases of one chain can each walk lines no
//   earlier chase brought into the L2)
//   shared signature: (long long *out[2], T value, int stride, int warm, int steps)
//   out[0] = cycles of the `steps` timed steps, out[1] = the last index (keeps the chain live).
//
// Throughput kernels, ATOMIC_<space>_<type>_<variant>_thr: every thread issues
// iterations x ATOMIC_UNROLL atomics with `value` on the address its pattern gives it;
// `atom` variants fold the returned values into the sink, `red` variants discard them (so the
// compiler emits RED). Patterns: 0 one address for all (global: the whole grid; shared: the
// block), 1 one address per block (global only), 2 one address per warp, 3 one address per
// thread (consecutive words). The host times the launch between events.
//   global signature: (T *data, T *sink, T value, int pattern, int iterations)
//   shared signature: (T *sink, T value, int pattern, int iterations)

#include "common.cuh"

#define ATOMIC_UNROLL 16
#define SHARED_WORDS 1024
// Words between the addresses of two warps or blocks: 32 (128 bytes or more) so that two
// addresses never share a cache line.
#define APART 32

template <typename T> struct Ops;

template <> struct Ops<unsigned> {
    static __device__ __forceinline__ unsigned add(unsigned *a, unsigned v) { return atomicAdd(a, v); }
    static __device__ __forceinline__ unsigned cas(unsigned *a, unsigned v) { return atomicCAS(a, v, v); }
    static __device__ __forceinline__ unsigned min(unsigned *a, unsigned v) { return atomicMin(a, v); }
    static __device__ __forceinline__ unsigned max(unsigned *a, unsigned v) { return atomicMax(a, v); }
};

template <> struct Ops<unsigned long long> {
    typedef unsigned long long T;
    static __device__ __forceinline__ T add(T *a, T v) { return atomicAdd(a, v); }
    static __device__ __forceinline__ T cas(T *a, T v) { return atomicCAS(a, v, v); }
    static __device__ __forceinline__ T min(T *a, T v) { return atomicMin(a, v); }
    static __device__ __forceinline__ T max(T *a, T v) { return atomicMax(a, v); }
};

enum Op { ADD, CAS, MIN, MAX, LOAD_GLOBAL, LOAD_SHARED };

template <typename T, int OP>
__device__ __forceinline__ T apply(T *a, T v)
{
    if (OP == ADD) return Ops<T>::add(a, v);
    if (OP == CAS) return Ops<T>::cas(a, v);
    if (OP == MIN) return Ops<T>::min(a, v);
    if (OP == MAX) return Ops<T>::max(a, v);
    if (OP == LOAD_GLOBAL) return __ldcg(a);
    return *(volatile T *)a;
}

template <typename T, int OP>
__device__ __forceinline__ void global_latency(T *chain, long long *out, T value, T start, int warm,
                                               int steps)
{
    if (threadIdx.x != 0 || blockIdx.x != 0) {
        return;
    }
    T p = start;
    const long long cycles = timed_chase(p, warm, steps, [&](T q) { return apply<T, OP>(chain + q, value); });
    out[0] = cycles;
    out[1] = (long long)p;
}

template <typename T, int OP>
__device__ __forceinline__ void shared_latency(long long *out, T value, int stride, int warm, int steps)
{
    __shared__ T ring[SHARED_WORDS];
    for (int i = threadIdx.x; i < SHARED_WORDS; i += blockDim.x) {
        ring[i] = (T)((i + stride) % SHARED_WORDS);
    }
    __syncthreads();
    if (threadIdx.x != 0) {
        return;
    }
    T p = 0;
    const long long cycles = timed_chase(p, warm, steps, [&](T q) { return apply<T, OP>(ring + q, value); });
    out[0] = cycles;
    out[1] = (long long)p;
}

// The word of `pattern` for this thread, in a buffer of one word per thread of the grid.
__device__ __forceinline__ unsigned pattern_index(int pattern, bool grid)
{
    const unsigned warp = threadIdx.x / WARP_LANES;
    const unsigned warps = blockDim.x / WARP_LANES;
    const unsigned block = grid ? blockIdx.x : 0;
    switch (pattern) {
    case 0: return 0;
    case 1: return block * blockDim.x;
    case 2: return (block * warps + warp) * APART;
    default: return block * blockDim.x + threadIdx.x;
    }
}

template <typename T, int OP, bool RETURN>
__device__ __forceinline__ T hammer(T *a, T value, int iterations)
{
    T acc = 0;
#pragma unroll 1
    for (int i = 0; i < iterations; ++i) {
#pragma unroll
        for (int u = 0; u < ATOMIC_UNROLL; ++u) {
            const T r = apply<T, OP>(a, value);
            if (RETURN) {
                acc ^= r;
            }
        }
    }
    return acc;
}

template <typename T, int OP, bool RETURN>
__device__ __forceinline__ void global_throughput(T *data, T *sink, T value, int pattern, int iterations)
{
    T *a = data + pattern_index(pattern, true);
    const T acc = hammer<T, OP, RETURN>(a, value, iterations);
    if (RETURN) {
        sink[blockIdx.x * blockDim.x + threadIdx.x] = acc;
    }
}

template <typename T, int OP, bool RETURN>
__device__ __forceinline__ void shared_throughput(T *sink, T value, int pattern, int iterations)
{
    // One word per thread of a 1024-thread block, the most pattern 3 (or 2) indexes.
    __shared__ T words[1024];
    for (int i = threadIdx.x; i < 1024; i += blockDim.x) {
        words[i] = 0;
    }
    __syncthreads();
    T *a = words + pattern_index(pattern, false);
    T acc = hammer<T, OP, RETURN>(a, value, iterations);
    __syncthreads();
    if (!RETURN) {
        // What the block left in its words, so the atomics have an observable effect.
        acc = words[threadIdx.x];
    }
    sink[blockIdx.x * blockDim.x + threadIdx.x] = acc;
}

#define LATENCY(T, TN, OP, ON)                                                                     \
    extern "C" __global__ void atomic_global_##TN##_##ON##_lat(T *chain, long long *out, T value, \
                                                                T start, int warm, int steps)     \
    {                                                                                              \
        global_latency<T, OP>(chain, out, value, start, warm, steps);                             \
    }                                                                                              \
    extern "C" __global__ void atomic_shared_##TN##_##ON##_lat(long long *out, T value,           \
                                                                int stride, int warm, int steps)  \
    {                                                                                              \
        shared_latency<T, OP == LOAD_GLOBAL ? LOAD_SHARED : OP>(out, value, stride, warm, steps); \
    }

#define THROUGHPUT(T, TN, OP, VN, RETURN)                                                         \
    extern "C" __global__ void atomic_global_##TN##_##VN##_thr(T *data, T *sink, T value,        \
                                                                int pattern, int iterations)      \
    {                                                                                              \
        global_throughput<T, OP, RETURN>(data, sink, value, pattern, iterations);                 \
    }                                                                                              \
    extern "C" __global__ void atomic_shared_##TN##_##VN##_thr(T *sink, T value, int pattern,    \
                                                                int iterations)                   \
    {                                                                                              \
        shared_throughput<T, OP, RETURN>(sink, value, pattern, iterations);                       \
    }

#define ONE_TYPE(T, TN)                                                                            \
    LATENCY(T, TN, ADD, add)                                                                       \
    LATENCY(T, TN, CAS, cas)                                                                       \
    LATENCY(T, TN, MIN, min)                                                                       \
    LATENCY(T, TN, MAX, max)                                                                       \
    LATENCY(T, TN, LOAD_GLOBAL, load)                                                              \
    THROUGHPUT(T, TN, ADD, atom_add, true)                                                         \
    THROUGHPUT(T, TN, CAS, atom_cas, true)                                                         \
    THROUGHPUT(T, TN, MIN, atom_min, true)                                                         \
    THROUGHPUT(T, TN, MAX, atom_max, true)                                                         \
    THROUGHPUT(T, TN, ADD, red_add, false)                                                         \
    THROUGHPUT(T, TN, MIN, red_min, false)                                                         \
    THROUGHPUT(T, TN, MAX, red_max, false)

ONE_TYPE(unsigned, u32)
ONE_TYPE(unsigned long long, u64)
