// The L2 seen from every SM at once (the sm-map suite, issue #52; the first-touch method of
// cuda/l2_partition.cu, run for every SM in one launch instead of one launch per SM). Every SM
// has a region of its own; one warming SM first reads every region into the L2, then every SM
// walks its own region twice, timing each load. A line homed in the partition across from the
// reader, which the warming SM left on its own side, costs the trip across on the first touch
// (the partition experiment of the cache suite shows the re-read leaves a copy on the
// reader's side). Both kernels are launched with many one-warp blocks; per SM, the first block
// that lands there claims the work (an atomic on its flag), every other block leaves at once.
//
// sm_map_warm(const unsigned *regions, unsigned words, unsigned target, int *flag,
//             unsigned *sink):
//   the claiming block's 32 threads read the first word of every line (32 words, 128 B) of
//   `regions` (`words` words) with ld.global.cg, so that each line sits in the L2 and in the
//   warming SM's partition.
//
// sm_map_probe(const unsigned *regions, unsigned lines, unsigned sms, int *flags,
//              unsigned *out[sms * 2 * lines]):
//   thread 0 of the block claiming SM s < sms (flags[s]) walks region s (`lines` lines from
//   regions + s * lines * 32) twice in address order; each line's first word holds the word
//   index of the next line within the region (the last: 0), so every load waits for the one
//   before. Each load is timed by itself, as in l2_partition_probe: the clock, the load, a
//   volatile shared store of the value (which waits for it), the clock; only the low 32 bits
//   of the difference are kept. out[(s * 2 + pass) * lines + j].

#include "common.cuh"

#define LINE_WORDS 32

__device__ __forceinline__ unsigned sm_id()
{
    unsigned r;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(r));
    return r;
}

__device__ __forceinline__ unsigned load_cg(const unsigned *p)
{
    unsigned v;
    asm volatile("ld.global.cg.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
    return v;
}

extern "C" __global__ void sm_map_warm(const unsigned *regions, unsigned words, unsigned target, int *flag,
                                       unsigned *sink)
{
    __shared__ int mine;
    if (threadIdx.x == 0) {
        mine = sm_id() == target && atomicCAS(flag, 0, 1) == 0;
    }
    __syncthreads();
    if (!mine) {
        return;
    }
    unsigned sum = 0;
    for (unsigned j = threadIdx.x * LINE_WORDS; j < words; j += blockDim.x * LINE_WORDS) {
        sum += load_cg(regions + j);
    }
    if (sum == 0xdeadbeefu) {
        *sink = sum;
    }
}

extern "C" __global__ void sm_map_probe(const unsigned *regions, unsigned lines, unsigned sms, int *flags,
                                        unsigned *out)
{
    __shared__ unsigned held;
    if (threadIdx.x != 0) {
        return;
    }
    const unsigned s = sm_id();
    if (s >= sms || atomicCAS(flags + s, 0, 1) != 0) {
        return;
    }
    const unsigned *region = regions + (size_t)s * lines * LINE_WORDS;
    volatile unsigned *hold = &held;
    for (unsigned p = 0; p < 2; ++p) {
        unsigned at = 0;
        unsigned *row = out + ((size_t)s * 2 + p) * lines;
#pragma unroll 1
        for (unsigned j = 0; j < lines; ++j) {
            const long long start = read_clock64();
            const unsigned next = load_cg(region + at);
            *hold = next;
            const long long stop = read_clock64();
            row[j] = (unsigned)(stop - start);
            at = next;
        }
    }
}
