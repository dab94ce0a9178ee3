// A cross-check of gpubench's `shared-line read` outside gpubench, to read with Nsight Compute:
// the same pattern (a resident grid of 132 x BLOCKS_PER_SM blocks, 40 passes, block b reading
// 512 KiB chunk (b + p * gridDim) % chunks of a 12.5 MiB region with .cg loads, four 16-byte
// loads in flight per thread), timed with events. Build and run on the GPU:
//   nvcc -O3 -arch=sm_90 -o shared-line-check scripts/shared-line-check.cu
//   ./shared-line-check THREADS BLOCKS_PER_SM
//   ncu --metrics lts__t_bytes.sum,l1tex__m_xbar2l1tex_read_bytes.sum,l1tex__t_sector_hit_rate.pct \
//       -c 2 ./shared-line-check 128 8
// results/h100/peers/ncu-shared-lines.md holds what it gave on the H100.
#include <cstdio>
#include <cstdint>
#include <cstdlib>
#include <cuda_runtime.h>
__global__ void resident(const uint4 *data, unsigned chunk, unsigned chunks, int passes, unsigned *sink) {
  unsigned sum = 0;
  for (int p = 0; p < passes; ++p) {
    const uint4 *base = data + (size_t)((blockIdx.x + (unsigned long long)p * gridDim.x) % chunks) * chunk;
#pragma unroll 1
    for (unsigned i = threadIdx.x; i + 3 * blockDim.x < chunk; i += 4 * blockDim.x) {
      uint4 v[4];
#pragma unroll
      for (int u = 0; u < 4; ++u) asm volatile("ld.global.cg.v4.u32 {%0,%1,%2,%3}, [%4];" : "=r"(v[u].x), "=r"(v[u].y), "=r"(v[u].z), "=r"(v[u].w) : "l"(base + i + u * blockDim.x));
#pragma unroll
      for (int u = 0; u < 4; ++u) sum += v[u].x ^ v[u].y ^ v[u].z ^ v[u].w;
    }
  }
  if (sum == 0x9e3779b9u) sink[0] = sum;
}
int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: %s THREADS BLOCKS_PER_SM\n", argv[0]);
    return 2;
  }
  int threads = atoi(argv[1]), bps = atoi(argv[2]);
  size_t bytes = 13107200; unsigned chunk = 32768, chunks = bytes / (chunk * 16); int passes = 40;
  uint4 *d; cudaMalloc(&d, bytes); 
  unsigned *h = (unsigned *)malloc(bytes); for (size_t i = 0; i < bytes / 4; ++i) h[i] = (unsigned)(i * 2654435761u);
  cudaMemcpy(d, h, bytes, cudaMemcpyHostToDevice);
  unsigned *sink; cudaMalloc(&sink, 64);
  int G = 132 * bps;
  cudaEvent_t a, b; cudaEventCreate(&a); cudaEventCreate(&b);
  resident<<<G, threads>>>(d, chunk, chunks, passes, sink); cudaDeviceSynchronize();
  float best = 1e9; for (int r = 0; r < 5; ++r) { cudaEventRecord(a); resident<<<G, threads>>>(d, chunk, chunks, passes, sink); cudaEventRecord(b); cudaEventSynchronize(b); float ms; cudaEventElapsedTime(&ms, a, b); if (ms < best) best = ms; }
  double moved = (double)G * chunk * 16 * passes;
  printf("threads %d bps %d: %.2f TB/s (%s)\n", threads, bps, moved / best / 1e9, cudaGetErrorString(cudaGetLastError()));
}
