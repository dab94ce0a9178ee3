// Why gpubench's `shared-line read` (the L2 read with lines many SMs share) moves by up to 13 %
// from one process to the next (15.5-17.6 TB/s on one H100, 2026-11-24) while a process's own
// five launches agree to 1-4 %: this probe reads the same pattern (resident grid of 132 x BPS
// blocks, 40 passes, block b reading 512 KiB chunk (b + rot + p * gridDim) % chunks of a
// 12.5 MiB region with .cg loads, four 16-byte loads in flight per thread) from ALLOCS regions
// at different places in memory (a padding allocation of 2-62 MiB before each), and from one
// region under different block-to-chunk rotations, five timed launches each; block 0 stamps
// clock64 and %globaltimer, so each line says the SM clock its last launch ran at.
//   nvcc -O3 -arch=sm_90 -o shared-line-spread scripts/shared-line-spread.cu
//   [ZEROS=1] [WARM=every] ./shared-line-spread THREADS BLOCKS_PER_SM ALLOCS [PASSES (default 40)]
// results/h100/peers/shared-line-spread.txt holds what it gave on the H100.
#include <algorithm>
#include <string>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <cuda_runtime.h>
// Block 0's thread 0 stamps clock64 and %globaltimer at its start and end: the SM clock the
// launch ran at.
__device__ long long stamps[4];
__device__ __forceinline__ long long globaltimer() { long long t; asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)); return t; }
__global__ void resident(const uint4 *data, unsigned chunk, unsigned chunks, int passes, unsigned rot, unsigned *sink) {
  unsigned sum = 0;
  if (blockIdx.x == 0 && threadIdx.x == 0) { stamps[0] = clock64(); stamps[1] = globaltimer(); }
  for (int p = 0; p < passes; ++p) {
    const uint4 *base = data + (size_t)((blockIdx.x + rot + (unsigned long long)p * gridDim.x) % chunks) * chunk;
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
  if (blockIdx.x == 0 && threadIdx.x == 0) { stamps[2] = clock64(); stamps[3] = globaltimer(); }
}
static const size_t BYTES = 13107200;
static const unsigned CHUNK = 32768, CHUNKS = BYTES / (CHUNK * 16);
static int PASSES = 40;
// Five timed launches: median, min and max in TB/s.
// WARM=every: before each set of launches every block of the grid reads the whole region
// once (every SM touches every line), in case where a line is held in the L2 depends on who
// read it before.
__global__ void everyone(const uint4 *data, size_t n, unsigned *sink) {
  unsigned sum = 0;
  for (size_t i = threadIdx.x; i < n; i += blockDim.x) { uint4 v; asm volatile("ld.global.cg.v4.u32 {%0,%1,%2,%3}, [%4];" : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(data + i)); sum += v.x ^ v.w; }
  if (sum == 0x9e3779b9u) sink[1] = sum;
}
static bool warm_every = false;
static double last_mhz = 0;
static void timed(const uint4 *d, int grid, int threads, unsigned rot, unsigned *sink, double out[3]) {
  cudaEvent_t a, b; cudaEventCreate(&a); cudaEventCreate(&b);
  if (warm_every) everyone<<<grid, threads>>>(d, BYTES / 16, sink);
  resident<<<grid, threads>>>(d, CHUNK, CHUNKS, PASSES, rot, sink); cudaDeviceSynchronize();
  std::vector<double> r;
  for (int k = 0; k < 5; ++k) {
    cudaEventRecord(a); resident<<<grid, threads>>>(d, CHUNK, CHUNKS, PASSES, rot, sink); cudaEventRecord(b);
    cudaEventSynchronize(b); float ms; cudaEventElapsedTime(&ms, a, b);
    r.push_back((double)grid * CHUNK * 16 * PASSES / ms / 1e9);
    long long st[4]; cudaMemcpyFromSymbol(st, stamps, sizeof st);
    last_mhz = (double)(st[2] - st[0]) / (double)(st[3] - st[1]) * 1e3;
  }
  std::sort(r.begin(), r.end());
  out[0] = r[2]; out[1] = r[0]; out[2] = r[4];
  cudaEventDestroy(a); cudaEventDestroy(b);
}
int main(int argc, char **argv) {
  if (argc != 4 && argc != 5) { fprintf(stderr, "usage: %s THREADS BLOCKS_PER_SM ALLOCS [PASSES]\n", argv[0]); return 2; }
  if (argc == 5) PASSES = atoi(argv[4]);
  warm_every = getenv("WARM") && std::string(getenv("WARM")) == "every";
  int threads = atoi(argv[1]), bps = atoi(argv[2]), allocs = atoi(argv[3]);
  int grid = 132 * bps;
  unsigned *h = (unsigned *)malloc(BYTES);
  // ZEROS=1 reads a region of zeros (what gpubench's bandwidth suite reads) instead of a hash.
  const bool zeros = getenv("ZEROS") && atoi(getenv("ZEROS")) == 1;
  for (size_t i = 0; i < BYTES / 4; ++i) h[i] = zeros ? 0u : (unsigned)(i * 2654435761u);
  unsigned *sink; cudaMalloc(&sink, 64);
  srand(12345);
  std::vector<uint4 *> regions;
  double first[3] = {0, 0, 0};
  for (int k = 0; k < allocs; ++k) {
    void *pad; size_t padding = (size_t)(1 + rand() % 31) << 21;
    cudaMalloc(&pad, padding);
    uint4 *d; cudaMalloc(&d, BYTES); cudaMemcpy(d, h, BYTES, cudaMemcpyHostToDevice);
    regions.push_back(d);
    double t[3]; timed(d, grid, threads, 0, sink, t);
    if (k == 0) std::copy(t, t + 3, first);
    printf("alloc %d (after %zu MiB padding, at %p): median %.2f TB/s (min %.2f, max %.2f); block 0 saw the SM clock at %.0f MHz in the last launch\n", k, padding >> 20, (void *)d, t[0], t[1], t[2], last_mhz);
  }
  for (unsigned rot : {1u, 7u, 13u, 50u}) {
    double t[3]; timed(regions[0], grid, threads, rot, sink, t);
    printf("alloc 0 rotation %u: median %.2f TB/s (min %.2f, max %.2f)\n", rot, t[0], t[1], t[2]);
  }
  double again[3]; timed(regions[0], grid, threads, 0, sink, again);
  printf("alloc 0 again: median %.2f TB/s (min %.2f, max %.2f); first %.2f; %s\n", again[0], again[1], again[2], first[0], cudaGetErrorString(cudaGetLastError()));
}
