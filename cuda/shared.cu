// Shared-memory bank conflicts (Erez's lecture notes on banks; Wong et al. on shared-memory
// latency). One warp; lane l owns the element at element index l * stride of a shared array,
// and each element holds its own word offset, so `offset = smem[offset]` is a chain of
// dependent loads that always hits the same addresses. The warp's request then touches 32
// addresses spaced `stride` elements apart, and the number of distinct words that share a
// bank sets how many wavefronts (passes) the load needs. 8- and 16-byte elements are loaded
// as one vector load; their extra words hold 0 so the sum keeps the chain intact.
//
// out[lane] = cycles for `iterations` dependent loads in that lane; sink keeps the chain live.

#include "common.cuh"

template <int WORDS>
__device__ __forceinline__ unsigned load_element(const unsigned *smem, unsigned offset)
{
    if (WORDS == 1) {
        return smem[offset];
    } else if (WORDS == 2) {
        const uint2 v = *reinterpret_cast<const uint2 *>(smem + offset);
        return v.x + v.y;
    } else {
        const uint4 v = *reinterpret_cast<const uint4 *>(smem + offset);
        return v.x + v.y + v.z + v.w;
    }
}

template <int WORDS>
__device__ void shared_stride(long long *out, unsigned *sink, int stride, int iterations)
{
    extern __shared__ unsigned smem[];
    const int lane = threadIdx.x % WARP_LANES;
    const int words = WARP_LANES * stride * WORDS;
    for (int i = lane; i < words; i += WARP_LANES) {
        smem[i] = 0;
    }
    __syncwarp();
    const unsigned mine = lane * stride * WORDS;
    smem[mine] = mine;
    __syncwarp();
    unsigned offset = mine;
    // One untimed pass, so the timed one starts with everything issued and warm.
#pragma unroll 1
    for (int k = 0; k < iterations; k += 32) {
#pragma unroll
        for (int u = 0; u < 32; ++u) {
            offset = load_element<WORDS>(smem, offset);
        }
    }
    __syncwarp();
    const long long start = read_clock64();
#pragma unroll 1
    for (int k = 0; k < iterations; k += 32) {
#pragma unroll
        for (int u = 0; u < 32; ++u) {
            offset = load_element<WORDS>(smem, offset);
        }
    }
    const long long stop = read_clock64();
    out[lane] = stop - start;
    sink[lane] = offset;
}

extern "C" __global__ void shared_stride_4(long long *out, unsigned *sink, int stride, int iterations)
{
    shared_stride<1>(out, sink, stride, iterations);
}

extern "C" __global__ void shared_stride_8(long long *out, unsigned *sink, int stride, int iterations)
{
    shared_stride<2>(out, sink, stride, iterations);
}

extern "C" __global__ void shared_stride_16(long long *out, unsigned *sink, int stride, int iterations)
{
    shared_stride<4>(out, sink, stride, iterations);
}
