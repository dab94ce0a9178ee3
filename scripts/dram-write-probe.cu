// DRAM write variants beside gpubench's `dram write` (3.21-3.23 TB/s on the H100 against
// gpu-stream init's 3.25): the store's cache operator (default .wb, .cs evict-first, .cg) and
// the access pattern (gpubench's slices of one region, each block walking its slices; a plain
// grid-stride loop as gpu-stream's init; four stores in flight per thread), over a 1 GiB region,
// at 128-1024 threads per block and 1-16 blocks per SM. Each variant: best of 7 launches after
// a warm one, timed with events.
//   nvcc -O3 -arch=sm_90 -o dram-write-probe scripts/dram-write-probe.cu && ./dram-write-probe
// results/h100/peers/dram-write-probe.txt holds what it gave on the H100.
#include <cstdio>
#include <cstdint>
#include <cuda_runtime.h>
enum Op { WB, CS, CG };
template <Op OP> __device__ __forceinline__ void put(uint4 *p, uint4 v) {
  if (OP == WB) asm volatile("st.global.v4.u32 [%0], {%1,%2,%3,%4};" ::"l"(p), "r"(v.x), "r"(v.y), "r"(v.z), "r"(v.w) : "memory");
  if (OP == CS) asm volatile("st.global.cs.v4.u32 [%0], {%1,%2,%3,%4};" ::"l"(p), "r"(v.x), "r"(v.y), "r"(v.z), "r"(v.w) : "memory");
  if (OP == CG) asm volatile("st.global.cg.v4.u32 [%0], {%1,%2,%3,%4};" ::"l"(p), "r"(v.x), "r"(v.y), "r"(v.z), "r"(v.w) : "memory");
}
// Grid-stride over the whole region, four stores per trip.
template <Op OP> __global__ void stride(uint4 *d, size_t n) {
  const uint4 v = make_uint4(1, 2, 3, 4);
  size_t step = (size_t)gridDim.x * blockDim.x;
  size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
  for (; i + 3 * step < n; i += 4 * step) {
#pragma unroll
    for (int u = 0; u < 4; ++u) put<OP>(d + i + u * step, v);
  }
  for (; i < n; i += step) put<OP>(d + i, v);
}
// gpubench's pattern: the region in slices of `slice` vectors (4 x threads), block b writing
// slices b, b + grid, ...
template <Op OP> __global__ void slices(uint4 *d, unsigned slice, unsigned count) {
  const uint4 v = make_uint4(1, 2, 3, 4);
  for (unsigned s = blockIdx.x % count; s < count; s += gridDim.x) {
    uint4 *base = d + (size_t)s * slice;
#pragma unroll 4
    for (unsigned i = threadIdx.x; i < slice; i += blockDim.x) put<OP>(base + i, v);
  }
}
int main() {
  const size_t bytes = 1ull << 30, n = bytes / 16;
  uint4 *d; cudaMalloc(&d, bytes);
  int sms; cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  cudaEvent_t a, b; cudaEventCreate(&a); cudaEventCreate(&b);
  auto time = [&](auto launch) {
    launch(); cudaDeviceSynchronize();
    float best = 1e9;
    for (int r = 0; r < 7; ++r) { cudaEventRecord(a); launch(); cudaEventRecord(b); cudaEventSynchronize(b); float ms; cudaEventElapsedTime(&ms, a, b); if (ms < best) best = ms; }
    return bytes / (best * 1e-3) / 1e12;
  };
  const char *names[] = {"wb", "cs", "cg"};
  for (int op = 0; op < 3; ++op) {
    double top = 0; char where[64] = "";
    for (int threads : {128, 256, 512, 1024}) {
      for (int bps : {1, 2, 4, 8, 16}) {
        if (threads * bps > 2048) continue;
        int grid = sms * bps;
        double s = time([&] { if (op == 0) stride<WB><<<grid, threads>>>(d, n); else if (op == 1) stride<CS><<<grid, threads>>>(d, n); else stride<CG><<<grid, threads>>>(d, n); });
        // Slices of four vectors per thread, as gpubench's device kernels cut a region.
        unsigned slice = 4 * threads, count = n / slice;
        double t = time([&] { if (op == 0) slices<WB><<<grid, threads>>>(d, slice, count); else if (op == 1) slices<CS><<<grid, threads>>>(d, slice, count); else slices<CG><<<grid, threads>>>(d, slice, count); });
        printf("%s %4d x %2d: grid-stride %.3f TB/s, slices %.3f TB/s\n", names[op], threads, bps, s, t);
        if (s > top) { top = s; snprintf(where, sizeof where, "grid-stride %d x %d", threads, bps); }
        if (t > top) { top = t; snprintf(where, sizeof where, "slices %d x %d", threads, bps); }
      }
    }
    printf("best %s: %.3f TB/s (%s)\n", names[op], top, where);
  }
  printf("%s\n", cudaGetErrorString(cudaGetLastError()));
}
