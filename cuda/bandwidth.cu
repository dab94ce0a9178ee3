// Memory bandwidth against footprint (gpubench bandwidth). Every access is a 16-byte vector
// (one v4.u32 per thread: LDG.E.NA.128, LDG.E.128, STG.E.128, LDS.128, STS.128 in SASS), issued
// as inline PTX so that ptxas keeps every one (nothing is hoisted out of the pass loop) and so
// the L1 policy is the one named: `L1::no_allocate` leaves L1 out (LDG.E.NA), a plain load
// allocates in L1, `.cg` (bw_read_device_strong) is a STRONG.GPU load on sm_90. Each thread
// keeps UNROLL independent accesses in flight before it consumes any. The sums only feed a
// store to `sink` under a condition the compiler cannot decide, so no load is dead; the store
// is harmless when it happens.
//
// Three placements of the footprint:
//  - device (bw_*_device): the grid shares one region cut into slices (see for_each_slice).
//    Loads skip L1, so repeated passes hit in L2 until the region outgrows it, then stream from
//    DRAM. A slice is a whole number of UNROLL x blockDim vectors, so every thread keeps UNROLL
//    loads in flight however small the region.
//  - SM (bw_read_sm): every block reads a region of its own through L1; the regions of the
//    blocks on one SM are the footprint that SM keeps, so passes hit in L1 until they outgrow
//    it, then in L2.
//  - shared (bw_shared_*): every block reads / writes its own dynamic shared array.

#include "common.cuh"

#define UNROLL 4

__device__ __forceinline__ uint4 load_no_l1(const uint4 *p)
{
    uint4 v;
    asm volatile("ld.global.L1::no_allocate.v4.u32 {%0, %1, %2, %3}, [%4];"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                 : "l"(p));
    return v;
}

// `.cg` at gpu scope: on sm_90 a STRONG.GPU load, which the L2 keeps in one copy (the weak
// no-allocate loads above fill only the requesting SM's half of the H100's L2, see the README).
__device__ __forceinline__ uint4 load_strong(const uint4 *p)
{
    uint4 v;
    asm volatile("ld.global.cg.v4.u32 {%0, %1, %2, %3}, [%4];"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                 : "l"(p));
    return v;
}

__device__ __forceinline__ uint4 load_l1(const uint4 *p)
{
    uint4 v;
    asm volatile("ld.global.v4.u32 {%0, %1, %2, %3}, [%4];"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                 : "l"(p));
    return v;
}

__device__ __forceinline__ void store_global(uint4 *p, uint4 v)
{
    asm volatile("st.global.v4.u32 [%0], {%1, %2, %3, %4};" ::"l"(p), "r"(v.x), "r"(v.y),
                 "r"(v.z), "r"(v.w)
                 : "memory");
}

__device__ __forceinline__ uint4 load_shared(const uint4 *p)
{
    uint4 v;
    const unsigned address = static_cast<unsigned>(__cvta_generic_to_shared(p));
    asm volatile("ld.shared.v4.u32 {%0, %1, %2, %3}, [%4];"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                 : "r"(address));
    return v;
}

__device__ __forceinline__ void store_shared(uint4 *p, uint4 v)
{
    const unsigned address = static_cast<unsigned>(__cvta_generic_to_shared(p));
    asm volatile("st.shared.v4.u32 [%0], {%1, %2, %3, %4};" ::"r"(address), "r"(v.x), "r"(v.y),
                 "r"(v.z), "r"(v.w)
                 : "memory");
}

__device__ __forceinline__ unsigned fold(uint4 v)
{
    return v.x + v.y + v.z + v.w;
}

// How a read loads: through L1, past it (no allocation), with a strong .cg load, or from
// shared memory.
enum LoadPath { THROUGH_L1, NO_L1, STRONG, SHARED };

template <LoadPath PATH>
__device__ __forceinline__ uint4 load(const uint4 *p)
{
    return PATH == THROUGH_L1 ? load_l1(p)
           : PATH == NO_L1    ? load_no_l1(p)
           : PATH == STRONG   ? load_strong(p)
                              : load_shared(p);
}

// Adds `count` vectors from `data` to `sum`, the block's threads taking every blockDim-th one,
// UNROLL loads in flight before any is used.
template <LoadPath PATH>
__device__ __forceinline__ void read_once(unsigned &sum, const uint4 *data, unsigned count,
                                          unsigned step)
{
    unsigned i = threadIdx.x;
#pragma unroll 1
    for (; i + (UNROLL - 1) * step < count; i += UNROLL * step) {
        uint4 v[UNROLL];
#pragma unroll
        for (int u = 0; u < UNROLL; ++u) {
            v[u] = load<PATH>(data + i + u * step);
        }
#pragma unroll
        for (int u = 0; u < UNROLL; ++u) {
            sum += fold(v[u]);
        }
    }
#pragma unroll 1
    for (; i < count; i += step) {
        sum += fold(load<PATH>(data + i));
    }
}

// `count` vectors copied from `source` to `target` in the same order, UNROLL loads in flight
// before their stores; shared memory both ways for SHARED, else global memory.
template <LoadPath PATH>
__device__ __forceinline__ void copy_once(const uint4 *source, uint4 *target, unsigned count,
                                          unsigned step)
{
    unsigned i = threadIdx.x;
#pragma unroll 1
    for (; i + (UNROLL - 1) * step < count; i += UNROLL * step) {
        uint4 v[UNROLL];
#pragma unroll
        for (int u = 0; u < UNROLL; ++u) {
            v[u] = load<PATH>(source + i + u * step);
        }
#pragma unroll
        for (int u = 0; u < UNROLL; ++u) {
            if (PATH == SHARED) {
                store_shared(target + i + u * step, v[u]);
            } else {
                store_global(target + i + u * step, v[u]);
            }
        }
    }
#pragma unroll 1
    for (; i < count; i += step) {
        if (PATH == SHARED) {
            store_shared(target + i, load<PATH>(source + i));
        } else {
            store_global(target + i, load<PATH>(source + i));
        }
    }
}

// Hands the block its share of `passes` passes over `slices` slices: `work(slice, pass)` per
// slice. Without a ticket block b keeps slices b % slices, b + grid, ... in every pass, so the
// lines a block touches are its own from pass to pass (what an L2-resident region needs: weak
// loads bring a line to the requesting SM's side of the H100's L2, and a block that comes back
// to its own lines finds them there). With a ticket (a counter the host zeroes before the
// launch) the blocks take the slices of pass after pass in order, thread 0 fetching the next
// ticket while the block works on the current one: the slices in flight at one moment stay
// together and a pass's last slices go to whichever blocks are free, where fixed slices let
// fast SMs run ahead and leave the last of each pass to a few. That is what DRAM needs: on an
// H100 it read 1 GiB at 3.19 TB/s against 3.10 with fixed slices, wrote at 3.29 against 3.24
// and copied at 2.96 against 2.80, while the L2's read and copy fell by 4-25 %
// (scripts/slice-order-probe.cu). The host never launches more blocks than slices, so every
// slice is touched by one block per pass.
template <class Work>
__device__ __forceinline__ void for_each_slice(unsigned slices, int passes,
                                               unsigned long long *ticket, Work work)
{
    if (ticket == nullptr) {
#pragma unroll 1
        for (int p = 0; p < passes; ++p) {
#pragma unroll 1
            for (unsigned s = blockIdx.x % slices; s < slices; s += gridDim.x) {
                work(s, p);
            }
        }
        return;
    }
    __shared__ unsigned long long taken[2];
    const unsigned long long total = (unsigned long long)slices * passes;
    if (threadIdx.x == 0) {
        taken[0] = atomicAdd(ticket, 1ull);
    }
    __syncthreads();
    unsigned long long mine = taken[0];
    unsigned next = 1;
#pragma unroll 1
    while (mine < total) {
        if (threadIdx.x == 0) {
            taken[next] = atomicAdd(ticket, 1ull);
        }
        work((unsigned)(mine % slices), (int)(mine / slices));
        // Every thread has read `mine` before thread 0 writes that slot again, a slice later.
        __syncthreads();
        mine = taken[next];
        next ^= 1;
    }
}

template <LoadPath PATH>
__device__ __forceinline__ unsigned read_slices(const uint4 *data, unsigned slice_count,
                                                unsigned slices, int passes,
                                                unsigned long long *ticket)
{
    unsigned sum = 0;
    const unsigned step = blockDim.x;
    for_each_slice(slices, passes, ticket, [&](unsigned s, int) {
        read_once<PATH>(sum, data + (unsigned long long)s * slice_count, slice_count, step);
    });
    return sum;
}

// `passes` reads of the block's own `count` vectors.
template <LoadPath PATH>
__device__ __forceinline__ unsigned read_region(const uint4 *data, unsigned count, int passes)
{
    unsigned sum = 0;
#pragma unroll 1
    for (int p = 0; p < passes; ++p) {
        read_once<PATH>(sum, data, count, blockDim.x);
    }
    return sum;
}

// Reads through L2 only (L1::no_allocate). `ticket`: null for fixed slices (for_each_slice).
extern "C" __global__ void bw_read_device(const uint4 *data, unsigned slice_count,
                                          unsigned slices, int passes, unsigned *sink,
                                          unsigned long long *ticket)
{
    const unsigned sum = read_slices<NO_L1>(data, slice_count, slices, passes, ticket);
    if (sum == 0x9e3779b9u) {
        sink[0] = sum;
    }
}

// The same with strong .cg loads.
extern "C" __global__ void bw_read_device_strong(const uint4 *data, unsigned slice_count,
                                                 unsigned slices, int passes, unsigned *sink,
                                                 unsigned long long *ticket)
{
    const unsigned sum = read_slices<STRONG>(data, slice_count, slices, passes, ticket);
    if (sum == 0x9e3779b9u) {
        sink[0] = sum;
    }
}

// Lines shared by many SMs, as gpu-benches' gpu-l2-cache reads them: the region is `chunks`
// chunks of `chunk_count` vectors, and in pass p block b reads chunk (b + p * gridDim) %
// chunks. Where the grid has more blocks than the region chunks, gridDim / chunks blocks on
// as many SMs read each chunk at once; where it has fewer, each pass reads the next gridDim
// chunks, so the passes walk the whole region and nothing is read again before all of it has
// been. Strong .cg loads keep L1 out of it; what the L2 serves to many SMs at once is what
// this measures, beside the private lines of the kernels above.
extern "C" __global__ void bw_read_device_shared(const uint4 *data, unsigned chunk_count,
                                                 unsigned chunks, int passes, unsigned *sink)
{
    unsigned sum = 0;
#pragma unroll 1
    for (int p = 0; p < passes; ++p) {
        const unsigned chunk =
            (unsigned)((blockIdx.x + (unsigned long long)p * gridDim.x) % chunks);
        read_once<STRONG>(sum, data + (unsigned long long)chunk * chunk_count, chunk_count,
                          blockDim.x);
    }
    if (sum == 0x9e3779b9u) {
        sink[0] = sum;
    }
}

// Reads through L1: each block reads a region of its own, `count` vectors, placed by the SM it
// runs on (%smid) and its arrival order there (an atomic ticket in `tickets`, zeroed before the
// launch), so the blocks of one SM together keep `blocks_per_sm` regions and no two blocks read
// the same line: a block never hits on a line another block just fetched.
extern "C" __global__ void bw_read_sm(const uint4 *data, unsigned count, unsigned sms,
                                      unsigned blocks_per_sm, unsigned *tickets, int passes,
                                      unsigned *sink)
{
    __shared__ unsigned long long first;
    if (threadIdx.x == 0) {
        unsigned smid;
        asm volatile("mov.u32 %0, %%smid;" : "=r"(smid));
        const unsigned sm = smid % sms;
        const unsigned ticket = atomicAdd(&tickets[sm], 1u) % blocks_per_sm;
        first = ((unsigned long long)sm * blocks_per_sm + ticket) * count;
    }
    __syncthreads();
    const unsigned sum = read_region<THROUGH_L1>(data + first, count, passes);
    if (sum == 0x9e3779b9u) {
        sink[0] = sum;
    }
}

extern "C" __global__ void bw_write_device(uint4 *data, unsigned slice_count, unsigned slices,
                                           int passes, unsigned long long *ticket)
{
    const unsigned step = blockDim.x;
    for_each_slice(slices, passes, ticket, [&](unsigned s, int p) {
        const uint4 value = make_uint4(p, p, p, p);
        uint4 *slice = data + (unsigned long long)s * slice_count;
#pragma unroll 4
        for (unsigned i = threadIdx.x; i < slice_count; i += step) {
            store_global(slice + i, value);
        }
    });
}

// Copies the region `source` onto `target` (the footprint is both).
extern "C" __global__ void bw_copy_device(const uint4 *source, uint4 *target,
                                          unsigned slice_count, unsigned slices, int passes,
                                          unsigned long long *ticket)
{
    const unsigned step = blockDim.x;
    for_each_slice(slices, passes, ticket, [&](unsigned s, int) {
        const unsigned long long base = (unsigned long long)s * slice_count;
        copy_once<NO_L1>(source + base, target + base, slice_count, step);
    });
}

// Shared memory: `count` vectors of dynamic shared memory per block (zeroed first, untimed
// within the kernel but inside the launch: it is one pass of stores, against `passes` of work).
extern "C" __global__ void bw_shared_read(unsigned count, int passes, unsigned *sink)
{
    extern __shared__ uint4 smem[];
    for (unsigned i = threadIdx.x; i < count; i += blockDim.x) {
        smem[i] = make_uint4(0, 0, 0, 0);
    }
    __syncthreads();
    const unsigned sum = read_region<SHARED>(smem, count, passes);
    if (sum == 0x9e3779b9u) {
        sink[0] = sum;
    }
}

extern "C" __global__ void bw_shared_write(unsigned count, int passes, unsigned *sink)
{
    extern __shared__ uint4 smem[];
#pragma unroll 1
    for (int p = 0; p < passes; ++p) {
        const uint4 value = make_uint4(p, p, p, p);
        unsigned i = threadIdx.x;
#pragma unroll 1
        for (; i + (UNROLL - 1) * blockDim.x < count; i += UNROLL * blockDim.x) {
#pragma unroll
            for (int u = 0; u < UNROLL; ++u) {
                store_shared(smem + i + u * blockDim.x, value);
            }
        }
#pragma unroll 1
        for (; i < count; i += blockDim.x) {
            store_shared(smem + i, value);
        }
    }
    __syncthreads();
    // One word read back, so the stores have an observer.
    if (fold(smem[threadIdx.x % count]) == 0x9e3779b9u) {
        sink[0] = 1;
    }
}

// Copies the first half of the block's array onto the second half.
extern "C" __global__ void bw_shared_copy(unsigned count, int passes, unsigned *sink)
{
    extern __shared__ uint4 smem[];
    const unsigned half = count / 2;
    for (unsigned i = threadIdx.x; i < half; i += blockDim.x) {
        smem[i] = make_uint4(0, 0, 0, 0);
    }
    __syncthreads();
#pragma unroll 1
    for (int p = 0; p < passes; ++p) {
        copy_once<SHARED>(smem, smem + half, half, blockDim.x);
    }
    __syncthreads();
    if (fold(smem[half + threadIdx.x % half]) == 0x9e3779b9u) {
        sink[0] = 1;
    }
}
