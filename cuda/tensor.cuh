// What the tensor-core kernels share (cuda/tensor.cu, and cuda/tensor_shapes.cu for the
// smaller wgmma shapes): the block stamps, the operand fill, the shared-memory matrix
// descriptors and the wgmma kernels, with N (the wgmma shape's width) a macro parameter.
// Included by those files only (build.rs compiles *.cu).
#pragma once

#include "common.cuh"

#define MMA_UNROLL 16
#define MMA_WARPS 16
#define MMA_CHAINS 4
#define WGMMA_UNROLL 8
#define WGMMA_GROUPS 2

__device__ __forceinline__ unsigned fill(unsigned i)
{
    // Small non-zero values in every byte lane, for any element type.
    unsigned x = i * 2654435761u + 12345u;
    return (x & 0x3f3f3f3fu) | 0x01010101u;
}

// ---- wgmma (warpgroup-level, Hopper) ----

#define A_BYTES (64 * 32)
#define B_BYTES (256 * 32)

// A shared-memory matrix descriptor: start address, leading (K) byte offset 128, stride (M or
// N) byte offset 256, no swizzle; addresses and offsets in units of 16 bytes. A wgmma of width
// N < 256 reads the first N rows of B.
__device__ __forceinline__ unsigned long long descriptor(const void *smem)
{
    unsigned long long address = static_cast<unsigned long long>(__cvta_generic_to_shared(smem));
    return ((address >> 4) & 0x3fff) | (static_cast<unsigned long long>(128 >> 4) << 16) |
           (static_cast<unsigned long long>(256 >> 4) << 32);
}

// A thread's N / 2 accumulator registers as asm operands, and the operand list naming them
// followed by the two descriptors.
#define ACC_256(T, d) \
    T(d[0]), T(d[1]), T(d[2]), T(d[3]), T(d[4]), T(d[5]), T(d[6]), T(d[7]), T(d[8]), T(d[9]), \
    T(d[10]), T(d[11]), T(d[12]), T(d[13]), T(d[14]), T(d[15]), T(d[16]), T(d[17]), T(d[18]), \
    T(d[19]), T(d[20]), T(d[21]), T(d[22]), T(d[23]), T(d[24]), T(d[25]), T(d[26]), T(d[27]), \
    T(d[28]), T(d[29]), T(d[30]), T(d[31]), T(d[32]), T(d[33]), T(d[34]), T(d[35]), T(d[36]), \
    T(d[37]), T(d[38]), T(d[39]), T(d[40]), T(d[41]), T(d[42]), T(d[43]), T(d[44]), T(d[45]), \
    T(d[46]), T(d[47]), T(d[48]), T(d[49]), T(d[50]), T(d[51]), T(d[52]), T(d[53]), T(d[54]), \
    T(d[55]), T(d[56]), T(d[57]), T(d[58]), T(d[59]), T(d[60]), T(d[61]), T(d[62]), T(d[63]), \
    T(d[64]), T(d[65]), T(d[66]), T(d[67]), T(d[68]), T(d[69]), T(d[70]), T(d[71]), T(d[72]), \
    T(d[73]), T(d[74]), T(d[75]), T(d[76]), T(d[77]), T(d[78]), T(d[79]), T(d[80]), T(d[81]), \
    T(d[82]), T(d[83]), T(d[84]), T(d[85]), T(d[86]), T(d[87]), T(d[88]), T(d[89]), T(d[90]), \
    T(d[91]), T(d[92]), T(d[93]), T(d[94]), T(d[95]), T(d[96]), T(d[97]), T(d[98]), T(d[99]), \
    T(d[100]), T(d[101]), T(d[102]), T(d[103]), T(d[104]), T(d[105]), T(d[106]), T(d[107]), \
    T(d[108]), T(d[109]), T(d[110]), T(d[111]), T(d[112]), T(d[113]), T(d[114]), T(d[115]), \
    T(d[116]), T(d[117]), T(d[118]), T(d[119]), T(d[120]), T(d[121]), T(d[122]), T(d[123]), \
    T(d[124]), T(d[125]), T(d[126]), T(d[127])
#define D_256 "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, %64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, %80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, %96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, %112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127}, %128, %129"
#define ACC_128(T, d) \
    T(d[0]), T(d[1]), T(d[2]), T(d[3]), T(d[4]), T(d[5]), T(d[6]), T(d[7]), T(d[8]), T(d[9]), \
    T(d[10]), T(d[11]), T(d[12]), T(d[13]), T(d[14]), T(d[15]), T(d[16]), T(d[17]), T(d[18]), \
    T(d[19]), T(d[20]), T(d[21]), T(d[22]), T(d[23]), T(d[24]), T(d[25]), T(d[26]), T(d[27]), \
    T(d[28]), T(d[29]), T(d[30]), T(d[31]), T(d[32]), T(d[33]), T(d[34]), T(d[35]), T(d[36]), \
    T(d[37]), T(d[38]), T(d[39]), T(d[40]), T(d[41]), T(d[42]), T(d[43]), T(d[44]), T(d[45]), \
    T(d[46]), T(d[47]), T(d[48]), T(d[49]), T(d[50]), T(d[51]), T(d[52]), T(d[53]), T(d[54]), \
    T(d[55]), T(d[56]), T(d[57]), T(d[58]), T(d[59]), T(d[60]), T(d[61]), T(d[62]), T(d[63])
#define D_128 "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, %64, %65"
#define ACC_64(T, d) \
    T(d[0]), T(d[1]), T(d[2]), T(d[3]), T(d[4]), T(d[5]), T(d[6]), T(d[7]), T(d[8]), T(d[9]), \
    T(d[10]), T(d[11]), T(d[12]), T(d[13]), T(d[14]), T(d[15]), T(d[16]), T(d[17]), T(d[18]), \
    T(d[19]), T(d[20]), T(d[21]), T(d[22]), T(d[23]), T(d[24]), T(d[25]), T(d[26]), T(d[27]), \
    T(d[28]), T(d[29]), T(d[30]), T(d[31])
#define D_64 "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, %32, %33"

#define F_OPERAND(x) "+f"(x)
#define R_OPERAND(x) "+r"(x)

// One wgmma m64nNkK into d; SHAPE_TYPES is e.g. "m64n256k16.f32.f16.f16", TAIL the immediates
// after scale-d (scale-a, scale-b and, for 16-bit types, the two transposes).
#define WGMMA(NAME, N, ACC, OPERAND, SHAPE_TYPES, TAIL)                                            \
    __device__ __forceinline__ void wgmma_##NAME(ACC (&d)[N / 2], unsigned long long a,          \
                                                 unsigned long long b)                           \
    {                                                                                             \
        asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, 1, 0;\n"                                   \
                     "wgmma.mma_async.sync.aligned." SHAPE_TYPES " " D_##N ", p" TAIL ";\n}\n"     \
                     : ACC_##N(OPERAND, d)                                                        \
                     : "l"(a), "l"(b));                                                           \
    }

__device__ __forceinline__ void wgmma_fence()
{
    asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
}

__device__ __forceinline__ void wgmma_commit()
{
    asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
}

template <int N>
__device__ __forceinline__ void wgmma_wait()
{
    asm volatile("wgmma.wait_group.sync.aligned %0;" ::"n"(N) : "memory");
}

// Fills A and B with the pseudo-random pattern and makes the ordinary stores visible to the
// tensor cores' (async proxy) reads.
__device__ __forceinline__ void fill_tiles(unsigned *tiles)
{
    for (int i = threadIdx.x; i < (A_BYTES + B_BYTES) / 4; i += blockDim.x) {
        tiles[i] = fill(i);
    }
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    __syncthreads();
}

// What both kernels of a type do around their timed loop: the A and B tiles in shared memory
// and their descriptors, N / 2 zeroed accumulators, the start stamp; after it, the end stamp
// and the accumulators' sum into the sink.
#define WGMMA_PROLOGUE(N, ACC)                                                                    \
    __shared__ __align__(128) unsigned tiles[(A_BYTES + B_BYTES) / 4];                            \
    fill_tiles(tiles);                                                                            \
    const unsigned long long a = descriptor(tiles);                                               \
    const unsigned long long b = descriptor(tiles + A_BYTES / 4);                                 \
    ACC d[N / 2];                                                                                 \
    _Pragma("unroll") for (int i = 0; i < N / 2; ++i) d[i] = 0;                                   \
    __syncthreads();                                                                              \
    stamp(stamps, 0);

#define WGMMA_EPILOGUE(N)                                                                         \
    stamp(stamps, 1);                                                                             \
    float s = 0;                                                                                  \
    _Pragma("unroll") for (int i = 0; i < N / 2; ++i) s += float(d[i]);                           \
    sink[blockIdx.x * blockDim.x + threadIdx.x] = s;

#define WGMMA_KERNELS(NAME, N, ACC)                                                                  \
    extern "C" __global__ void __launch_bounds__(128 * WGMMA_GROUPS, 1)                           \
        wgmma_##NAME##_lat(long long *stamps, float *sink, int iterations)                        \
    {                                                                                             \
        WGMMA_PROLOGUE(N, ACC)                                                                    \
        _Pragma("unroll 1") for (int i = 0; i < iterations; ++i)                                  \
        {                                                                                         \
            _Pragma("unroll") for (int u = 0; u < WGMMA_UNROLL; ++u)                              \
            {                                                                                     \
                wgmma_fence();                                                                    \
                wgmma_##NAME(d, a, b);                                                            \
                wgmma_commit();                                                                   \
                wgmma_wait<0>();                                                                  \
            }                                                                                     \
        }                                                                                         \
        __syncthreads();                                                                          \
        WGMMA_EPILOGUE(N)                                                                         \
    }                                                                                             \
    extern "C" __global__ void __launch_bounds__(128 * WGMMA_GROUPS, 1)                           \
        wgmma_##NAME##_thr(long long *stamps, float *sink, int iterations)                        \
    {                                                                                             \
        WGMMA_PROLOGUE(N, ACC)                                                                    \
        _Pragma("unroll 1") for (int i = 0; i < iterations; ++i)                                  \
        {                                                                                         \
            wgmma_fence();                                                                        \
            _Pragma("unroll") for (int u = 0; u < WGMMA_UNROLL; ++u) { wgmma_##NAME(d, a, b); }   \
            wgmma_commit();                                                                       \
            wgmma_wait<0>();                                                                      \
        }                                                                                         \
        wgmma_wait<0>();                                                                          \
        __syncthreads();                                                                          \
        WGMMA_EPILOGUE(N)                                                                         \
    }
