// Which L2 partition holds a line, seen from each SM: the first touch of L2-resident lines
// (issue #32, the near and far L2; gpubench's one-thread chase reads two L2 plateaus on Hopper).
// Both kernels are launched with many one-warp blocks; the first block that lands on SM
// `target` claims the work (an atomic on `flag`), every other block leaves at once. The host
// reads `flag` back to see that the SM got a block.
//
// l2_partition_warm(const unsigned *region, unsigned lines, unsigned target, int *flag,
//                   unsigned *sink):
//   the claiming block's 32 threads read every line of `region` (lines of 128 B) with
//   ld.global.cg, so that each sits in the L2 and in the warming SM's partition.
//
// l2_partition_probe(const unsigned *region, unsigned lines, unsigned passes, unsigned target,
//                    int *flag, unsigned *out[passes * lines]):
//   thread 0 of the claiming block walks the region `passes` times in address order; each
//   line's first word holds the word index of the next line (the last: 0), so every load's
//   address waits for the load before. Each load is timed by itself: the clock, the load, a
//   volatile shared store of the value (which waits for it), the clock. On sm_90 the window
//   is S2UR (start), NOP, IMAD.WIDE (the address), LDG.E.STRONG.GPU, STS, CS2R.32 (stop): a
//   few cycles besides the load, the same for every line. Only the clock's low 32 bits are
//   kept (a load takes far fewer cycles than they wrap in).

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

__device__ __forceinline__ bool claim(unsigned target, int *flag)
{
    return sm_id() == target && atomicCAS(flag, 0, 1) == 0;
}

extern "C" __global__ void l2_partition_warm(const unsigned *region, unsigned lines, unsigned target, int *flag,
                                             unsigned *sink)
{
    __shared__ int mine;
    if (threadIdx.x == 0) {
        mine = claim(target, flag);
    }
    __syncthreads();
    if (!mine) {
        return;
    }
    unsigned sum = 0;
    for (unsigned j = threadIdx.x; j < lines; j += blockDim.x) {
        sum += load_cg(region + (size_t)j * LINE_WORDS);
    }
    if (sum == 0xdeadbeefu) {
        *sink = sum;
    }
}

extern "C" __global__ void l2_partition_probe(const unsigned *region, unsigned lines, unsigned passes,
                                              unsigned target, int *flag, unsigned *out)
{
    __shared__ unsigned held;
    if (threadIdx.x != 0 || !claim(target, flag)) {
        return;
    }
    volatile unsigned *hold = &held;
    for (unsigned p = 0; p < passes; ++p) {
        unsigned at = 0;
#pragma unroll 1
        for (unsigned j = 0; j < lines; ++j) {
            const long long start = read_clock64();
            const unsigned next = load_cg(region + at);
            *hold = next;
            const long long stop = read_clock64();
            out[(size_t)p * lines + j] = (unsigned)(stop - start);
            at = next;
        }
    }
}
