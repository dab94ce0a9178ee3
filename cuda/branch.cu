// Branch order and reconvergence (Wong et al., section IV-C, Listing 3 and Figs 7-8): a
// 32-way if / else-if chain in which lane c[k] takes the k-th clause. Each clause times a
// short busy loop with clock64, so every lane records when its path started and ended. Each
// clause's clock reads are asm statements with distinct text, so the compiler cannot merge the
// 32 clauses into one path (which would hide the divergence being measured).
//
// Launched with 32 threads (one warp) or 64 (two warps, both diverging 32 ways; lane = tid %
// 32). stamps[tid * 2] = start, stamps[tid * 2 + 1] = end; -1 where a thread took no clause.

#include "common.cuh"

__device__ __forceinline__ unsigned busy(unsigned acc, int work)
{
#pragma unroll 1
    for (int i = 0; i < work; ++i) {
        acc = acc * 3 + 1;
    }
    return acc;
}

#define CLAUSE(K)                                                                  \
    if (lane == c[K]) {                                                            \
        asm volatile("mov.u64 %0, %%clock64; // path " #K " start" : "=l"(t0)::"memory"); \
        acc = busy(acc + K, work);                                                 \
        asm volatile("mov.u64 %0, %%clock64; // path " #K " end" : "=l"(t1)::"memory");   \
    }

extern "C" __global__ void branch_order(const int *c, long long *stamps, unsigned *sink, int work)
{
    const int tid = threadIdx.x;
    const int lane = tid % WARP_LANES;
    long long t0 = -1;
    long long t1 = -1;
    unsigned acc = tid;
    __syncthreads();
    CLAUSE(0)
    else CLAUSE(1)
    else CLAUSE(2)
    else CLAUSE(3)
    else CLAUSE(4)
    else CLAUSE(5)
    else CLAUSE(6)
    else CLAUSE(7)
    else CLAUSE(8)
    else CLAUSE(9)
    else CLAUSE(10)
    else CLAUSE(11)
    else CLAUSE(12)
    else CLAUSE(13)
    else CLAUSE(14)
    else CLAUSE(15)
    else CLAUSE(16)
    else CLAUSE(17)
    else CLAUSE(18)
    else CLAUSE(19)
    else CLAUSE(20)
    else CLAUSE(21)
    else CLAUSE(22)
    else CLAUSE(23)
    else CLAUSE(24)
    else CLAUSE(25)
    else CLAUSE(26)
    else CLAUSE(27)
    else CLAUSE(28)
    else CLAUSE(29)
    else CLAUSE(30)
    else CLAUSE(31)
    stamps[tid * 2] = t0;
    stamps[tid * 2 + 1] = t1;
    sink[tid] = acc;
}
