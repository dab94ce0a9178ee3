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
