// L2 copy by the pattern of its source lines (issue #32: "the same for L2 write and copy"):
// gpubench's `l2 copy` reads each source line with one block per pass (private lines) and
// reaches 6.2-6.6 TB/s (read + write bytes) on an H100, while the L2 write alone stops at
// 3.9-4.0 TB/s (scripts/l2-write-probe.cu). This probe copies with the source read
//  - private: a 12.5 MiB region in slices of 4 x threads vectors, block b taking slices b,
//    b + grid, ... each pass (the suite's pattern);
//  - shared: the same region in chunks of 512 KiB, block b copying chunk (b + p x grid) mod
//    chunks in pass p, so grid / chunks blocks on as many SMs read each chunk at once (the
//    suite's shared-line read);
// and every block writing what it read over a destination of its own of one slice (4 x threads
// vectors), so that all writes stay in the L2 (528 blocks x 16 KiB = 8.25 MiB at 256 threads).
// Loads ld.global.cg (16 B, 4 in flight per thread), stores st.global (16 B). Bytes = read +
// write; best of five launches after a warm one, each about 5 ms, timed with events; every
// occupancy of 128-1024 threads x 1-16 blocks per SM.
//   nvcc -O3 -arch=sm_90 -o l2-copy scripts/l2-copy-probe.cu && ./l2-copy
#include <cstdio>
#include <cuda_runtime.h>

__device__ __forceinline__ uint4 ld_cg(const uint4 *p) {
  uint4 v;
  asm volatile("ld.global.cg.v4.u32 {%0,%1,%2,%3}, [%4];" : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p));
  return v;
}
__device__ __forceinline__ void st(uint4 *p, uint4 v) {
  asm volatile("st.global.v4.u32 [%0], {%1,%2,%3,%4};" ::"l"(p), "r"(v.x), "r"(v.y), "r"(v.z), "r"(v.w) : "memory");
}

// Copies `count` vectors from `from` onto the block's destination of `slice` vectors (the
// destination wraps), 4 loads in flight per thread before their stores.
__device__ __forceinline__ void copy_run(const uint4 *from, unsigned count, uint4 *to, unsigned slice) {
  for (unsigned i = threadIdx.x; i < count; i += 4 * blockDim.x) {
    uint4 v[4];
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      const unsigned j = i + k * blockDim.x;
      v[k] = j < count ? ld_cg(from + j) : make_uint4(0, 0, 0, 0);
    }
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      const unsigned j = i + k * blockDim.x;
      if (j < count) st(to + (j & (slice - 1)), v[k]); // slice: a power of two
    }
  }
}

template <bool SHARED>
__global__ void l2_copy(const uint4 *src, uint4 *dst, unsigned units, unsigned unit_vectors, int passes) {
  const unsigned slice = 4 * blockDim.x;
  uint4 *mine = dst + (size_t)blockIdx.x * slice;
  for (int p = 0; p < passes; ++p) {
    if (SHARED) {
      const unsigned c = (unsigned)(((unsigned long long)blockIdx.x + (unsigned long long)p * gridDim.x) % units);
      copy_run(src + (size_t)c * unit_vectors, unit_vectors, mine, slice);
    } else {
      for (unsigned s = blockIdx.x % units; s < units; s += gridDim.x) copy_run(src + (size_t)s * unit_vectors, unit_vectors, mine, slice);
    }
  }
}

int main() {
  const size_t region = 13107200, vectors = region / 16;
  int sms; cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  uint4 *src, *dst; cudaMalloc(&src, region); cudaMalloc(&dst, 64ull << 20);
  cudaMemset(src, 1, region); cudaMemset(dst, 0, 64ull << 20);
  cudaEvent_t e0, e1; cudaEventCreate(&e0); cudaEventCreate(&e1);
  for (int shared = 0; shared < 2; ++shared) {
    double top = 0; int tt = 0, tb = 0;
    for (int threads : {128, 256, 512, 1024})
      for (int bps : {1, 2, 4, 8, 16}) {
        if (threads * bps > 2048) continue;
        const int grid = sms * bps;
        const unsigned unit = shared ? (512u << 10) / 16 : 4u * threads;
        const unsigned units = (unsigned)(vectors / unit);
        if (!shared && units < (unsigned)grid) continue;
        // Bytes copied per pass: every block its chunk (shared), or every slice once (private).
        const double per_pass = shared ? (double)grid * unit * 16 : (double)units * unit * 16;
        const int passes = (int)(5e-3 * 6.5e12 / (2 * per_pass)) + 1;
        auto launch = [&] {
          if (shared) l2_copy<true><<<grid, threads>>>(src, dst, units, unit, passes);
          else l2_copy<false><<<grid, threads>>>(src, dst, units, unit, passes);
        };
        launch(); cudaDeviceSynchronize();
        float best = 1e9;
        for (int r = 0; r < 5; ++r) { cudaEventRecord(e0); launch(); cudaEventRecord(e1); cudaEventSynchronize(e1); float ms; cudaEventElapsedTime(&ms, e0, e1); if (ms < best) best = ms; }
        const double tbs = 2 * per_pass * passes / (best * 1e-3) / 1e12;
        printf("%-8s %4d threads x %2d blocks/SM: %6.2f TB/s (read + write)\n", shared ? "shared" : "private", threads, bps, tbs);
        if (tbs > top) { top = tbs; tt = threads; tb = bps; }
      }
    printf("%s source lines: best %.2f TB/s at %d x %d\n", shared ? "shared" : "private", top, tt, tb);
  }
  printf("last error: %s\n", cudaGetErrorString(cudaGetLastError()));
}
