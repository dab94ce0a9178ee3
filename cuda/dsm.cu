// gpubench-arch: compute_90
// Distributed shared memory (issue #17; Luo et al. 2024, "Benchmarking and Dissecting the Nvidia
// Hopper GPU Architecture", the distributed-shared-memory section): thread-block clusters whose
// blocks read each other's shared memory through the cluster window (mapa, ld.shared::cluster).
// Built for compute_90, the first target with clusters. The host launches them with the cluster
// dimension as a launch attribute and enough dynamic shared memory that one block fills an SM,
// so every block of a cluster sits on its own SM (each block records its %smid to show it).
//
// dsm_latency(long long *out[n + 1], unsigned *smid[n], int steps, int stride):
//   every block builds two rings of RING_WORDS words `stride` apart in its shared memory: one
//   of cluster-window addresses (mapa of its own words), one of its own shared addresses. After
//   a cluster barrier, thread 0 of block 0 chases the cluster ring of every block r of the
//   cluster in turn (r = 0 is itself, through the cluster window) with ld.shared::cluster:
//   out[r] = cycles of `steps` timed loads (after one untimed lap); then its own local ring with
//   ld.shared: out[n]. A closing cluster barrier keeps every block's memory alive until then.
//
// dsm_bandwidth(long long *stamps[2 * blocks], unsigned *sink[blocks * threads], int pattern,
//               int iterations):
//   every block fills BW_BYTES of its shared memory, then all its threads read BW_BYTES of one
//   block's shared memory `iterations` times with 16-byte loads: pattern 0 its own through the
//   cluster window, 1 its pair partner's (rank ^ 1), 2 the next rank's (a ring), 3 rank 0's (all
//   read one), 4 its own with plain ld.shared. stamps: clock64 of the block before and after
//   (barriers on both sides).
//
// dsm_store(long long *stamps[2 * blocks], unsigned *sink[blocks], int pattern, int iterations):
//   as dsm_bandwidth, but every thread stores 16-byte vectors: `iterations` passes over BW_BYTES
//   of the target's shared memory (pattern 4: its own with st.shared, else st.shared::cluster
//   through the window into the rank dsm_bandwidth's pattern names). Stores do not wait for an
//   answer, so before the closing stamp every thread fences at cluster scope (its stores are
//   performed) and the block meets at a barrier: the span covers the stores' arrival.
//
// dsm_histogram(long long *stamps[2 * blocks], unsigned *counts[2 * blocks], int pattern, int op,
//               int bins, int iterations):
//   every block zeroes `bins` (a power of two, at most BW_BYTES / 4) words of its shared memory;
//   after a cluster barrier each thread adds 1 `iterations` times to bin (thread + 97 * pass) &
//   (bins - 1) of the target's histogram (pattern as above; 4: its own with plain shared
//   atomics). op 0: red.shared::cluster.add (no answer), 1: atom.shared::cluster.add (the old
//   values are summed, so each waits for its answer before the thread ends). Fence, barrier
//   and stamp as dsm_store; after a second cluster barrier thread 0 writes the sum of its own
//   bins to counts[block]: the host checks that every add arrived (counts holds 2 * blocks
//   words; the second half keeps the old values live).

#include "common.cuh"

#define RING_WORDS 1024
#define BW_BYTES 65536
#define BW_VECTORS (BW_BYTES / 16)

__device__ __forceinline__ unsigned cluster_rank()
{
    unsigned r;
    asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
    return r;
}

__device__ __forceinline__ unsigned cluster_size()
{
    unsigned n;
    asm volatile("mov.u32 %0, %%cluster_nctarank;" : "=r"(n));
    return n;
}

__device__ __forceinline__ unsigned sm_id()
{
    unsigned s;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(s));
    return s;
}

__device__ __forceinline__ void cluster_sync()
{
    asm volatile("barrier.cluster.arrive.aligned;\n\tbarrier.cluster.wait.aligned;" ::: "memory");
}

// The cluster-window address of `local` (a shared address of this block) in block `rank`.
__device__ __forceinline__ unsigned map_to(unsigned local, unsigned rank)
{
    unsigned remote;
    asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(remote) : "r"(local), "r"(rank));
    return remote;
}

__device__ __forceinline__ unsigned load_cluster(unsigned address)
{
    unsigned v;
    asm volatile("ld.shared::cluster.u32 %0, [%1];" : "=r"(v) : "r"(address) : "memory");
    return v;
}

__device__ __forceinline__ unsigned load_local(unsigned address)
{
    unsigned v;
    asm volatile("ld.shared.u32 %0, [%1];" : "=r"(v) : "r"(address) : "memory");
    return v;
}

extern "C" __global__ void dsm_latency(long long *out, unsigned *smid, int steps, int stride)
{
    extern __shared__ unsigned words[];
    unsigned *cluster_ring = words;
    unsigned *local_ring = words + RING_WORDS;
    const unsigned rank = cluster_rank();
    const unsigned n = cluster_size();
    const unsigned base = (unsigned)__cvta_generic_to_shared(words);
    const unsigned own = map_to(base, rank);
    for (int i = threadIdx.x; i < RING_WORDS; i += blockDim.x) {
        const unsigned next = 4u * ((i + stride) % RING_WORDS);
        cluster_ring[i] = own + next;
        local_ring[i] = base + 4u * RING_WORDS + next;
    }
    if (threadIdx.x == 0) {
        smid[rank] = sm_id();
    }
    cluster_sync();
    if (rank == 0 && threadIdx.x == 0) {
        unsigned sink = 0;
        for (unsigned r = 0; r < n; ++r) {
            unsigned p = map_to(base, r);
            out[r] = timed_chase(p, RING_WORDS, steps, [](unsigned q) { return load_cluster(q); });
            sink += p;
        }
        unsigned p = base + 4u * RING_WORDS;
        out[n] = timed_chase(p, RING_WORDS, steps, [](unsigned q) { return load_local(q); });
        // Never true (addresses are below 2^31): keeps the chains live.
        if (sink + p == 0xffffffffu) {
            out[n + 1] = sink;
        }
    }
    cluster_sync();
}

// `iterations` passes of this block's threads over BW_VECTORS 16-byte vectors from `base`: a
// shared-window address with LOCAL, a cluster-window one without.
template <bool LOCAL>
__device__ __forceinline__ unsigned read_passes(unsigned base, int iterations)
{
    unsigned acc = 0;
#pragma unroll 1
    for (int it = 0; it < iterations; ++it) {
#pragma unroll 4
        for (int i = threadIdx.x; i < BW_VECTORS; i += blockDim.x) {
            unsigned a, b, c, d;
            if (LOCAL) {
                asm volatile("ld.shared.v4.u32 {%0, %1, %2, %3}, [%4];"
                             : "=r"(a), "=r"(b), "=r"(c), "=r"(d)
                             : "r"(base + 16u * i)
                             : "memory");
            } else {
                asm volatile("ld.shared::cluster.v4.u32 {%0, %1, %2, %3}, [%4];"
                             : "=r"(a), "=r"(b), "=r"(c), "=r"(d)
                             : "r"(base + 16u * i)
                             : "memory");
            }
            acc ^= a ^ b ^ c ^ d;
        }
    }
    return acc;
}

extern "C" __global__ void dsm_bandwidth(long long *stamps, unsigned *sink, int pattern, int iterations)
{
    extern __shared__ uint4 vectors[];
    const unsigned rank = cluster_rank();
    const unsigned n = cluster_size();
    for (int i = threadIdx.x; i < BW_VECTORS; i += blockDim.x) {
        vectors[i] = make_uint4(i, i ^ rank, i + 7u, ~i);
    }
    unsigned target = rank;
    if (pattern == 1) {
        target = (rank ^ 1u) < n ? rank ^ 1u : rank;
    } else if (pattern == 2) {
        target = (rank + 1u) % n;
    } else if (pattern == 3) {
        target = 0;
    }
    const unsigned local = (unsigned)__cvta_generic_to_shared(vectors);
    const unsigned base = pattern == 4 ? local : map_to(local, target);
    cluster_sync();
    const long long start = read_clock64();
    const unsigned acc = pattern == 4 ? read_passes<true>(base, iterations) : read_passes<false>(base, iterations);
    __syncthreads();
    const long long stop = read_clock64();
    if (threadIdx.x == 0) {
        stamps[2 * blockIdx.x] = start;
        stamps[2 * blockIdx.x + 1] = stop;
    }
    sink[blockIdx.x * blockDim.x + threadIdx.x] = acc;
    // No block leaves while another may still read its shared memory.
    cluster_sync();
}

// The rank a block's pattern points at (dsm_bandwidth's codes; 4 and 0 are the block itself).
__device__ __forceinline__ unsigned target_rank(int pattern, unsigned rank, unsigned n)
{
    if (pattern == 1) {
        return (rank ^ 1u) < n ? rank ^ 1u : rank;
    }
    if (pattern == 2) {
        return (rank + 1u) % n;
    }
    if (pattern == 3) {
        return 0;
    }
    return rank;
}

// Waits until this thread's stores and atomics into any block of the cluster are performed.
__device__ __forceinline__ void fence_cluster()
{
    asm volatile("fence.acq_rel.cluster;" ::: "memory");
}

// `iterations` passes of this block's threads storing BW_VECTORS 16-byte vectors from `base`
// (a shared-window address with LOCAL, a cluster-window one without).
template <bool LOCAL>
__device__ __forceinline__ void write_passes(unsigned base, int iterations)
{
#pragma unroll 1
    for (int it = 0; it < iterations; ++it) {
#pragma unroll 4
        for (int i = threadIdx.x; i < BW_VECTORS; i += blockDim.x) {
            const unsigned v = (unsigned)it ^ (unsigned)i;
            if (LOCAL) {
                asm volatile("st.shared.v4.u32 [%0], {%1, %2, %3, %4};"
                             :
                             : "r"(base + 16u * i), "r"(v), "r"(v + 1u), "r"(v + 2u), "r"(v + 3u)
                             : "memory");
            } else {
                asm volatile("st.shared::cluster.v4.u32 [%0], {%1, %2, %3, %4};"
                             :
                             : "r"(base + 16u * i), "r"(v), "r"(v + 1u), "r"(v + 2u), "r"(v + 3u)
                             : "memory");
            }
        }
    }
}

extern "C" __global__ void dsm_store(long long *stamps, unsigned *sink, int pattern, int iterations)
{
    extern __shared__ uint4 vectors[];
    const unsigned rank = cluster_rank();
    const unsigned n = cluster_size();
    const unsigned local = (unsigned)__cvta_generic_to_shared(vectors);
    const unsigned base = pattern == 4 ? local : map_to(local, target_rank(pattern, rank, n));
    cluster_sync();
    const long long start = read_clock64();
    if (pattern == 4) {
        write_passes<true>(base, iterations);
    } else {
        write_passes<false>(base, iterations);
    }
    fence_cluster();
    __syncthreads();
    const long long stop = read_clock64();
    if (threadIdx.x == 0) {
        stamps[2 * blockIdx.x] = start;
        stamps[2 * blockIdx.x + 1] = stop;
    }
    // No block leaves while another may still write into its shared memory.
    cluster_sync();
    if (threadIdx.x == 0) {
        sink[blockIdx.x] = load_local(local);
    }
}

// `iterations` adds of 1 by this thread into the histogram at `base` (`bins` words, a power of
// two); OP 0 red.shared::cluster, 1 atom.shared::cluster, 2 atom.shared (own memory). Returns
// the sum of the old values (0 for red) so that atom's answers are waited for.
template <int OP>
__device__ __forceinline__ unsigned add_passes(unsigned base, int bins, int iterations)
{
    unsigned acc = 0;
    const unsigned mask = (unsigned)bins - 1u;
#pragma unroll 8
    for (int it = 0; it < iterations; ++it) {
        const unsigned address = base + 4u * ((threadIdx.x + 97u * (unsigned)it) & mask);
        unsigned old = 0;
        if (OP == 0) {
            asm volatile("red.shared::cluster.add.u32 [%0], 1;" : : "r"(address) : "memory");
        } else if (OP == 1) {
            asm volatile("atom.shared::cluster.add.u32 %0, [%1], 1;"
                         : "=r"(old)
                         : "r"(address)
                         : "memory");
        } else {
            asm volatile("atom.shared.add.u32 %0, [%1], 1;" : "=r"(old) : "r"(address) : "memory");
        }
        acc += old;
    }
    return acc;
}

extern "C" __global__ void dsm_histogram(long long *stamps, unsigned *counts, int pattern, int op,
                                         int bins, int iterations)
{
    extern __shared__ unsigned histogram[];
    const unsigned rank = cluster_rank();
    const unsigned n = cluster_size();
    for (int i = threadIdx.x; i < bins; i += blockDim.x) {
        histogram[i] = 0;
    }
    const unsigned local = (unsigned)__cvta_generic_to_shared(histogram);
    const unsigned base = pattern == 4 ? local : map_to(local, target_rank(pattern, rank, n));
    cluster_sync();
    const long long start = read_clock64();
    unsigned acc;
    if (pattern == 4) {
        acc = add_passes<2>(base, bins, iterations);
    } else if (op == 0) {
        acc = add_passes<0>(base, bins, iterations);
    } else {
        acc = add_passes<1>(base, bins, iterations);
    }
    fence_cluster();
    __syncthreads();
    const long long stop = read_clock64();
    if (threadIdx.x == 0) {
        stamps[2 * blockIdx.x] = start;
        stamps[2 * blockIdx.x + 1] = stop;
    }
    // Every add into this block has arrived once every block of the cluster has fenced.
    cluster_sync();
    if (threadIdx.x == 0) {
        unsigned total = 0;
        for (int i = 0; i < bins; ++i) {
            total += histogram[i];
        }
        counts[blockIdx.x] = total;
    }
    // Keeps every thread's old values live (an atom whose answer is unused may be issued as a
    // red); the host reads only the first half.
    if (acc == 0xffffffffu) {
        counts[gridDim.x + blockIdx.x] = acc;
    }
}
