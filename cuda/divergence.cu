// Divergence kernels after Białas & Strzelecki, Listings 1–2 (single and double loop with
// per-lane bounds). Launched as ONE warp of 32 threads; every lane times the whole loop with
// clock64 and stores its own cycle count, so per-lane timelines can be drawn later.
//
// Layout of the outputs (row-major, one row per sample):
//   cycles[sample * 32 + lane]   loop cycles measured in that lane (timer overhead NOT removed)
//   overhead[sample * 32 + lane] two back-to-back clock64 reads in that lane, same sample
//   sink[lane]                   the loop result, so the loop cannot be removed as dead code
//
// Why the body is `acc = acc * 3 + i`: a sum of `i` has a closed form the compiler would use
// instead of the loop; this recurrence has none, yet costs one integer instruction (IMAD).
// `#pragma unroll 1` keeps each loop a real loop, so its back-edge is the diverging branch.

#include "common.cuh"

__device__ __forceinline__ int single_loop(int bound, int acc)
{
#pragma unroll 1
    for (int i = 0; i < bound; ++i) {
        acc = acc * 3 + i;
    }
    return acc;
}

__device__ __forceinline__ int double_loop(int bound, int acc)
{
#pragma unroll 1
    for (int i = 0; i < bound; ++i) {
#pragma unroll 1
        for (int j = 0; j < bound; ++j) {
            acc = acc * 3 + j;
        }
    }
    return acc;
}

// One timing loop for both kernels: LOOP is single_loop or double_loop.
template <int (*LOOP)(int, int)>
__device__ __forceinline__ void divergence_loop(const int *bounds, long long *cycles,
                                                long long *overhead, int *sink, int samples,
                                                int preheat, int unroll)
{
    const int lane = threadIdx.x % WARP_LANES;
    const int bound = bounds[lane];
    int acc = lane;
#pragma unroll 1
    for (int s = 0; s < samples; ++s) {
#pragma unroll 1
        for (int p = 0; p < preheat; ++p) {
            acc = LOOP(bound, acc);
        }
        const long long t0 = read_clock64();
        const long long t1 = read_clock64();
        const long long start = read_clock64();
#pragma unroll 1
        for (int u = 0; u < unroll; ++u) {
            acc = LOOP(bound, acc);
        }
        const long long stop = read_clock64();
        cycles[s * WARP_LANES + lane] = stop - start;
        overhead[s * WARP_LANES + lane] = t1 - t0;
    }
    sink[lane] = acc;
}

extern "C" __global__ void divergence_single(const int *bounds, long long *cycles,
                                             long long *overhead, int *sink, int samples,
                                             int preheat, int unroll)
{
    divergence_loop<single_loop>(bounds, cycles, overhead, sink, samples, preheat, unroll);
}

extern "C" __global__ void divergence_double(const int *bounds, long long *cycles,
                                             long long *overhead, int *sink, int samples,
                                             int preheat, int unroll)
{
    divergence_loop<double_loop>(bounds, cycles, overhead, sink, samples, preheat, unroll);
}

// Push/pop split after Listing 5 of the paper: the single loop with a timestamp after every
// iteration and a __syncthreads() before the final one, so that the last stamp is taken after
// the warp has reconverged. Per sample and lane, `stamps` receives `stride` values:
//   [0]            clock64 before the loop
//   [1 + i]        clock64 after iteration i (i < bound)
//   [stride - 1]   clock64 after __syncthreads()
// The host sets stride = max(bounds) + 2 and gives stride * 32 * 8 bytes of dynamic shared
// memory. Inside the timed loop the stamps go to shared memory, laid out stamp-major so the
// lanes of one store hit consecutive words (no bank conflicts): scattered global stores there
// would make the loop's speed depend on how many lanes are still storing. They are copied
// out after the last stamp, and __threadfence() drains those stores before the next sample.
// Launched as one warp, so the barrier waits only for lanes of this warp, all of which reach
// it once their loop ends: it cannot deadlock.
extern "C" __global__ void divergence_split(const int *bounds, long long *stamps, int *sink,
                                            int samples, int preheat, int stride)
{
    extern __shared__ long long shared_stamps[];
    const int lane = threadIdx.x % WARP_LANES;
    const int bound = bounds[lane];
    int acc = lane;
#pragma unroll 1
    for (int s = 0; s < samples; ++s) {
#pragma unroll 1
        for (int p = 0; p < preheat; ++p) {
            acc = single_loop(bound, acc);
        }
        shared_stamps[lane] = read_clock64();
#pragma unroll 1
        for (int i = 0; i < bound; ++i) {
            acc = acc * 3 + i;
            shared_stamps[(1 + i) * WARP_LANES + lane] = read_clock64();
        }
        __syncthreads();
        shared_stamps[(stride - 1) * WARP_LANES + lane] = read_clock64();
        long long *row = stamps + ((long long)s * WARP_LANES + lane) * stride;
#pragma unroll 1
        for (int k = 0; k < stride; ++k) {
            if (k <= bound || k == stride - 1) {
                row[k] = shared_stamps[k * WARP_LANES + lane];
            }
        }
        __threadfence();
        __syncthreads();
    }
    sink[lane] = acc;
}
