// gpubench-arch: compute_90a
// The tensor-core forms Luo et al. measure beyond cuda/tensor.cu's (issue #74; "Benchmarking and
// Dissecting the Nvidia Hopper GPU Architecture", IPDPS 2024 and arXiv 2501.12084, the wgmma and
// sparse sections), FP16 -> FP32 only, the type they compare them in:
//   wgmma_f16_nN_lat / _thr        N = 32, 16, 8: A and B from shared memory (SS), as tensor.cu;
//   wgmma_f16_rs_nN_lat / _thr     N = 256 ... 8: A from registers (RS), B from shared memory;
//   wgmma_sp_f16_n256_lat / _thr   wgmma.sp m64n256k32: A 2:4-sparse (stored 64 x 16), SS;
//   wgmma_sp_f16_rs_n256_lat / _thr the same with A from registers;
//   mma_sp_f16_lat / _thr          mma.sp m16n8k32: A 2:4-sparse, every operand in registers;
//   wgmma_f16_sustain              tensor.cu's wgmma_f16_thr (SS m64n256k16) with an `int zero`
//                                  argument: the tiles hold the pseudo-random fill or zeros, for
//                                  the sustained run (`tensor --sustain`), since what the units
//                                  draw depends on the data they multiply.
// Signatures, stamps and loop shapes are tensor.cu's (cuda/tensor.cuh): the host counts MMAs the
// same way. A sparse MMA is counted at its dense shape's FLOP (2 M N K with K the logical 32),
// as the sparse peak is. The sparsity metadata is 0x44444444: in every group of four, elements
// 0 and 1 (a valid 2:4 pattern); the values are the fixed pseudo-random fill, so the units work
// on non-zero data as in tensor.cu. The operand lists below are written out by a script, since
// inline asm numbers its operands.

#include "tensor.cuh"

// B of a k32 FP16 shape (the sparse wgmma): 256 rows of 64 bytes, four core matrices along K
// (128 bytes apart), eight-row groups 512 bytes apart.
#define SP_B_BYTES (256 * 64)
#define SP_META 0x44444444u

__device__ __forceinline__ unsigned long long descriptor_k32(const void *smem)
{
    unsigned long long address = static_cast<unsigned long long>(__cvta_generic_to_shared(smem));
    return ((address >> 4) & 0x3fff) | (static_cast<unsigned long long>(128 >> 4) << 16) |
           (static_cast<unsigned long long>(512 >> 4) << 32);
}

#define VACC_256(T, d) T(d[0]), T(d[1]), T(d[2]), T(d[3]), T(d[4]), T(d[5]), T(d[6]), T(d[7]), T(d[8]), T(d[9]), T(d[10]), T(d[11]), T(d[12]), T(d[13]), T(d[14]), T(d[15]), T(d[16]), T(d[17]), T(d[18]), T(d[19]), T(d[20]), T(d[21]), T(d[22]), T(d[23]), T(d[24]), T(d[25]), T(d[26]), T(d[27]), T(d[28]), T(d[29]), T(d[30]), T(d[31]), T(d[32]), T(d[33]), T(d[34]), T(d[35]), T(d[36]), T(d[37]), T(d[38]), T(d[39]), T(d[40]), T(d[41]), T(d[42]), T(d[43]), T(d[44]), T(d[45]), T(d[46]), T(d[47]), T(d[48]), T(d[49]), T(d[50]), T(d[51]), T(d[52]), T(d[53]), T(d[54]), T(d[55]), T(d[56]), T(d[57]), T(d[58]), T(d[59]), T(d[60]), T(d[61]), T(d[62]), T(d[63]), T(d[64]), T(d[65]), T(d[66]), T(d[67]), T(d[68]), T(d[69]), T(d[70]), T(d[71]), T(d[72]), T(d[73]), T(d[74]), T(d[75]), T(d[76]), T(d[77]), T(d[78]), T(d[79]), T(d[80]), T(d[81]), T(d[82]), T(d[83]), T(d[84]), T(d[85]), T(d[86]), T(d[87]), T(d[88]), T(d[89]), T(d[90]), T(d[91]), T(d[92]), T(d[93]), T(d[94]), T(d[95]), T(d[96]), T(d[97]), T(d[98]), T(d[99]), T(d[100]), T(d[101]), T(d[102]), T(d[103]), T(d[104]), T(d[105]), T(d[106]), T(d[107]), T(d[108]), T(d[109]), T(d[110]), T(d[111]), T(d[112]), T(d[113]), T(d[114]), T(d[115]), T(d[116]), T(d[117]), T(d[118]), T(d[119]), T(d[120]), T(d[121]), T(d[122]), T(d[123]), T(d[124]), T(d[125]), T(d[126]), T(d[127])
#define VRS_256 "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, %64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, %80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, %96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, %112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127}, {%128, %129, %130, %131}, %132"
#define VSPSS_256 "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, %64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, %80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, %96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, %112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127}, %128, %129, %130"
#define VSPRS_256 "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, %64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, %80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, %96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, %112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127}, {%128, %129, %130, %131}, %132, %133"
#define VACC_128(T, d) T(d[0]), T(d[1]), T(d[2]), T(d[3]), T(d[4]), T(d[5]), T(d[6]), T(d[7]), T(d[8]), T(d[9]), T(d[10]), T(d[11]), T(d[12]), T(d[13]), T(d[14]), T(d[15]), T(d[16]), T(d[17]), T(d[18]), T(d[19]), T(d[20]), T(d[21]), T(d[22]), T(d[23]), T(d[24]), T(d[25]), T(d[26]), T(d[27]), T(d[28]), T(d[29]), T(d[30]), T(d[31]), T(d[32]), T(d[33]), T(d[34]), T(d[35]), T(d[36]), T(d[37]), T(d[38]), T(d[39]), T(d[40]), T(d[41]), T(d[42]), T(d[43]), T(d[44]), T(d[45]), T(d[46]), T(d[47]), T(d[48]), T(d[49]), T(d[50]), T(d[51]), T(d[52]), T(d[53]), T(d[54]), T(d[55]), T(d[56]), T(d[57]), T(d[58]), T(d[59]), T(d[60]), T(d[61]), T(d[62]), T(d[63])
#define VRS_128 "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, {%64, %65, %66, %67}, %68"
#define VACC_64(T, d) T(d[0]), T(d[1]), T(d[2]), T(d[3]), T(d[4]), T(d[5]), T(d[6]), T(d[7]), T(d[8]), T(d[9]), T(d[10]), T(d[11]), T(d[12]), T(d[13]), T(d[14]), T(d[15]), T(d[16]), T(d[17]), T(d[18]), T(d[19]), T(d[20]), T(d[21]), T(d[22]), T(d[23]), T(d[24]), T(d[25]), T(d[26]), T(d[27]), T(d[28]), T(d[29]), T(d[30]), T(d[31])
#define VRS_64 "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, {%32, %33, %34, %35}, %36"
#define VACC_32(T, d) T(d[0]), T(d[1]), T(d[2]), T(d[3]), T(d[4]), T(d[5]), T(d[6]), T(d[7]), T(d[8]), T(d[9]), T(d[10]), T(d[11]), T(d[12]), T(d[13]), T(d[14]), T(d[15])
#define VSS_32 "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15}, %16, %17"
#define VRS_32 "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15}, {%16, %17, %18, %19}, %20"
#define VACC_16(T, d) T(d[0]), T(d[1]), T(d[2]), T(d[3]), T(d[4]), T(d[5]), T(d[6]), T(d[7])
#define VSS_16 "{%0, %1, %2, %3, %4, %5, %6, %7}, %8, %9"
#define VRS_16 "{%0, %1, %2, %3, %4, %5, %6, %7}, {%8, %9, %10, %11}, %12"
#define VACC_8(T, d) T(d[0]), T(d[1]), T(d[2]), T(d[3])
#define VSS_8 "{%0, %1, %2, %3}, %4, %5"
#define VRS_8 "{%0, %1, %2, %3}, {%4, %5, %6, %7}, %8"

// Every form below has one signature, so one pair of kernels serves all: d the accumulators,
// ra A's four registers (RS), a and b the descriptors, meta the sparsity metadata.
#define V_SS(NAME, N)                                                                             \
    __device__ __forceinline__ void v_##NAME(float (&d)[N / 2], const unsigned (&ra)[4],         \
                                             unsigned long long a, unsigned long long b, unsigned meta) \
    {                                                                                             \
        asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, 1, 0;\n"                                   \
                     "wgmma.mma_async.sync.aligned.m64n" #N "k16.f32.f16.f16 " VSS_##N           \
                     ", p, 1, 1, 0, 0;\n}\n"                                                      \
                     : VACC_##N(F_OPERAND, d)                                                     \
                     : "l"(a), "l"(b));                                                           \
    }
#define V_RS(NAME, N)                                                                             \
    __device__ __forceinline__ void v_##NAME(float (&d)[N / 2], const unsigned (&ra)[4],         \
                                             unsigned long long a, unsigned long long b, unsigned meta) \
    {                                                                                             \
        asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, 1, 0;\n"                                   \
                     "wgmma.mma_async.sync.aligned.m64n" #N "k16.f32.f16.f16 " VRS_##N           \
                     ", p, 1, 1, 0;\n}\n"                                                         \
                     : VACC_##N(F_OPERAND, d)                                                     \
                     : "r"(ra[0]), "r"(ra[1]), "r"(ra[2]), "r"(ra[3]), "l"(b));                   \
    }

V_SS(f16_n32, 32)
V_SS(f16_n16, 16)
V_SS(f16_n8, 8)
V_RS(f16_rs_n256, 256)
V_RS(f16_rs_n128, 128)
V_RS(f16_rs_n64, 64)
V_RS(f16_rs_n32, 32)
V_RS(f16_rs_n16, 16)
V_RS(f16_rs_n8, 8)

__device__ __forceinline__ void v_sp_f16_n256(float (&d)[128], const unsigned (&ra)[4],
                                              unsigned long long a, unsigned long long b, unsigned meta)
{
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, 1, 0;\n"
                 "wgmma.mma_async.sp.sync.aligned.m64n256k32.f32.f16.f16 " VSPSS_256
                 ", 0, p, 1, 1, 0, 0;\n}\n"
                 : VACC_256(F_OPERAND, d)
                 : "l"(a), "l"(b), "r"(meta));
}

__device__ __forceinline__ void v_sp_f16_rs_n256(float (&d)[128], const unsigned (&ra)[4],
                                                 unsigned long long a, unsigned long long b, unsigned meta)
{
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, 1, 0;\n"
                 "wgmma.mma_async.sp.sync.aligned.m64n256k32.f32.f16.f16 " VSPRS_256
                 ", 0, p, 1, 1, 0;\n}\n"
                 : VACC_256(F_OPERAND, d)
                 : "r"(ra[0]), "r"(ra[1]), "r"(ra[2]), "r"(ra[3]), "l"(b), "r"(meta));
}

// tensor.cu's WGMMA_PROLOGUE with room for either B (k16 or the sparse k32), A's registers
// filled like the tiles, and the metadata.
#define V_PROLOGUE(N, B_DESCRIPTOR)                                                               \
    __shared__ __align__(128) unsigned tiles[(A_BYTES + SP_B_BYTES) / 4];                         \
    for (int i = threadIdx.x; i < (A_BYTES + SP_B_BYTES) / 4; i += blockDim.x) {                  \
        tiles[i] = fill(i);                                                                       \
    }                                                                                             \
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");                                  \
    __syncthreads();                                                                              \
    const unsigned long long a = descriptor(tiles);                                               \
    const unsigned long long b = B_DESCRIPTOR(tiles + A_BYTES / 4);                               \
    unsigned ra[4];                                                                               \
    _Pragma("unroll") for (int i = 0; i < 4; ++i) ra[i] = fill(threadIdx.x * 4 + i + 777);        \
    const unsigned meta = SP_META;                                                                \
    float d[N / 2];                                                                               \
    _Pragma("unroll") for (int i = 0; i < N / 2; ++i) d[i] = 0;                                   \
    __syncthreads();                                                                              \
    stamp(stamps, 0);

#define V_KERNELS(NAME, N, B_DESCRIPTOR)                                                          \
    extern "C" __global__ void __launch_bounds__(128 * WGMMA_GROUPS, 1)                           \
        wgmma_##NAME##_lat(long long *stamps, float *sink, int iterations)                        \
    {                                                                                             \
        V_PROLOGUE(N, B_DESCRIPTOR)                                                               \
        _Pragma("unroll 1") for (int i = 0; i < iterations; ++i)                                  \
        {                                                                                         \
            _Pragma("unroll") for (int u = 0; u < WGMMA_UNROLL; ++u)                              \
            {                                                                                     \
                wgmma_fence();                                                                    \
                v_##NAME(d, ra, a, b, meta);                                                      \
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
        V_PROLOGUE(N, B_DESCRIPTOR)                                                               \
        _Pragma("unroll 1") for (int i = 0; i < iterations; ++i)                                  \
        {                                                                                         \
            wgmma_fence();                                                                        \
            _Pragma("unroll") for (int u = 0; u < WGMMA_UNROLL; ++u) { v_##NAME(d, ra, a, b, meta); } \
            wgmma_commit();                                                                       \
            wgmma_wait<0>();                                                                      \
        }                                                                                         \
        wgmma_wait<0>();                                                                          \
        __syncthreads();                                                                          \
        WGMMA_EPILOGUE(N)                                                                         \
    }

V_KERNELS(f16_n32, 32, descriptor)
V_KERNELS(f16_n16, 16, descriptor)
V_KERNELS(f16_n8, 8, descriptor)
V_KERNELS(f16_rs_n256, 256, descriptor)
V_KERNELS(f16_rs_n128, 128, descriptor)
V_KERNELS(f16_rs_n64, 64, descriptor)
V_KERNELS(f16_rs_n32, 32, descriptor)
V_KERNELS(f16_rs_n16, 16, descriptor)
V_KERNELS(f16_rs_n8, 8, descriptor)
V_KERNELS(sp_f16_n256, 256, descriptor_k32)
V_KERNELS(sp_f16_rs_n256, 256, descriptor_k32)

// ---- mma.sp (warp-level, sparse A) ----

__device__ __forceinline__ void mma_sp_f16(float (&d)[4], const unsigned (&a)[4], const unsigned (&b)[4],
                                           unsigned meta)
{
    asm volatile("mma.sp::ordered_metadata.sync.aligned.m16n8k32.row.col.f32.f16.f16.f32 "
                 "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9, %10, %11}, {%0, %1, %2, %3}, %12, 0x0;"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "r"(b[2]),
                   "r"(b[3]), "r"(meta));
}

// tensor.cu's MMA_KERNELS for mma.sp: B has four registers (K = 32), and the metadata.
extern "C" __global__ void mma_sp_f16_lat(long long *stamps, float *sink, int iterations)
{
    unsigned a[4], b[4];
    for (int i = 0; i < 4; ++i) a[i] = fill(threadIdx.x * 4 + i);
    for (int i = 0; i < 4; ++i) b[i] = fill(threadIdx.x * 4 + i + 777);
    const unsigned meta = SP_META;
    float d[4] = {0, 0, 0, 0};
    __syncthreads();
    stamp(stamps, 0);
#pragma unroll 1
    for (int i = 0; i < iterations; ++i) {
#pragma unroll
        for (int u = 0; u < MMA_UNROLL; ++u) { mma_sp_f16(d, a, b, meta); }
    }
    __syncthreads();
    stamp(stamps, 1);
    sink[blockIdx.x * blockDim.x + threadIdx.x] = d[0] + d[1] + d[2] + d[3];
}

extern "C" __global__ void mma_sp_f16_thr(long long *stamps, float *sink, int iterations)
{
    unsigned a[4], b[4];
    for (int i = 0; i < 4; ++i) a[i] = fill(threadIdx.x * 4 + i);
    for (int i = 0; i < 4; ++i) b[i] = fill(threadIdx.x * 4 + i + 777);
    const unsigned meta = SP_META;
    float d[MMA_CHAINS][4] = {};
    __syncthreads();
    stamp(stamps, 0);
#pragma unroll 1
    for (int i = 0; i < iterations; ++i) {
#pragma unroll
        for (int u = 0; u < MMA_UNROLL / MMA_CHAINS; ++u) {
#pragma unroll
            for (int c = 0; c < MMA_CHAINS; ++c) { mma_sp_f16(d[c], a, b, meta); }
        }
    }
    __syncthreads();
    stamp(stamps, 1);
    float s = 0;
#pragma unroll
    for (int c = 0; c < MMA_CHAINS; ++c) s += d[c][0] + d[c][3];
    sink[blockIdx.x * blockDim.x + threadIdx.x] = s;
}

// ---- the sustained run ----

WGMMA(sustain_f16, 256, float, F_OPERAND, "m64n256k16.f32.f16.f16", ", 1, 1, 0, 0")

// wgmma_f16_sustain(long long *stamps[2 * blocks], float *sink[blocks * threads], int iterations,
//                   int zero): wgmma_f16_thr's loop (WGMMA_UNROLL wgmma per commit group, one
// wait per trip) over tiles filled with fill(i), or with zeros where `zero` is non-zero.
extern "C" __global__ void __launch_bounds__(128 * WGMMA_GROUPS, 1)
    wgmma_f16_sustain(long long *stamps, float *sink, int iterations, int zero)
{
    __shared__ __align__(128) unsigned tiles[(A_BYTES + B_BYTES) / 4];
    for (int i = threadIdx.x; i < (A_BYTES + B_BYTES) / 4; i += blockDim.x) {
        tiles[i] = zero ? 0u : fill(i);
    }
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    __syncthreads();
    const unsigned long long a = descriptor(tiles);
    const unsigned long long b = descriptor(tiles + A_BYTES / 4);
    float d[128];
#pragma unroll
    for (int i = 0; i < 128; ++i) {
        d[i] = 0;
    }
    __syncthreads();
    stamp(stamps, 0);
#pragma unroll 1
    for (int i = 0; i < iterations; ++i) {
        wgmma_fence();
#pragma unroll
        for (int u = 0; u < WGMMA_UNROLL; ++u) {
            wgmma_sustain_f16(d, a, b);
        }
        wgmma_commit();
        wgmma_wait<0>();
    }
    wgmma_wait<0>();
    __syncthreads();
    WGMMA_EPILOGUE(256)
}
