// gpubench-arch: compute_90
// Distributed shared memory from every SM to the others of its cluster (the sm-map suite,
// issue #52): the chase of cuda/dsm.cu's dsm_latency, made by every block of every cluster
// that fits at once instead of by block 0 of one cluster. Built for compute_90, the first
// target with clusters; launched with the cluster dimension as a launch attribute and enough
// dynamic shared memory that one block fills an SM, so every block sits on an SM of its own.
//
// sm_map_dsm(long long *out[blocks * n], unsigned *smid[blocks], int steps):
//   every block builds a ring of RING_WORDS cluster-window addresses of its own words (mapa),
//   STRIDE words apart, and records its %smid. After a cluster barrier, thread 0 of the block
//   of rank r chases the ring of rank (r + k) mod n for k = 1 .. n - 1 in turn (so that at any
//   moment each block's memory serves one chaser), with ld.shared::cluster: out[block * n + t]
//   = cycles of `steps` timed loads into rank t after one untimed lap; out[block * n + r] = the
//   same chase of its own ring through the cluster window. A closing barrier keeps every
//   block's memory alive until the last chase ends.

#include "common.cuh"

#define RING_WORDS 1024
#define STRIDE 33

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

extern "C" __global__ void sm_map_dsm(long long *out, unsigned *smid, int steps)
{
    extern __shared__ unsigned words[];
    const unsigned rank = cluster_rank();
    const unsigned n = cluster_size();
    const unsigned base = (unsigned)__cvta_generic_to_shared(words);
    const unsigned own = map_to(base, rank);
    for (int i = threadIdx.x; i < RING_WORDS; i += blockDim.x) {
        words[i] = own + 4u * ((i + STRIDE) % RING_WORDS);
    }
    if (threadIdx.x == 0) {
        smid[blockIdx.x] = sm_id();
    }
    cluster_sync();
    if (threadIdx.x == 0) {
        unsigned sink = 0;
        for (unsigned k = 0; k < n; ++k) {
            // k = 0 last: the block's own ring through the window, after the remote ones.
            const unsigned t = (rank + k + 1) % n;
            unsigned p = map_to(base, t);
            out[(size_t)blockIdx.x * n + t] =
                timed_chase(p, RING_WORDS, steps, [](unsigned q) { return load_cluster(q); });
            sink += p;
        }
        // Never true (cluster-window addresses are below 2^31): keeps the chains live.
        if (sink == 0xffffffffu) {
            out[0] = sink;
        }
    }
    cluster_sync();
}
