// L2 reads by the asynchronous movers beside gpubench's `l2 read` (7.5-7.7 TB/s on the H100,
// private lines: every line read by one block per pass): a 12.5 MiB region (it stays in the
// 50 MiB L2) read PASSES times per launch, block b taking slices b, b + grid, ... of it, by
//   ldg   16-byte ld.global.L1::no_allocate, 4 in flight per thread (gpubench's own pattern);
//   cpa   cp.async.cg (LDGSTS) of 16 bytes per thread into shared memory, 4 groups in flight;
//   bulk  cp.async.bulk (TMA, non-tensor) of 4, 16 or 32 KiB into shared memory, one thread
//         per block issuing, 2-12 copies in flight, each completing on its own mbarrier;
// and the bulk copies again over lines shared by every SM (all blocks walk the same slices).
// Every bulk launch checks that each stage holds the data of the last slice copied into it.
// 1-8 blocks per SM; median and best of 5 timed launches after a warm one, events around each.
//   nvcc -O3 -arch=sm_90 -o l2-bulk-read-probe scripts/l2-bulk-read-probe.cu && ./l2-bulk-read-probe
// results/h100/peers/l2-bulk-read-probe.txt holds what it gave on the H100.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <vector>
#include <cuda_runtime.h>

__global__ void ldg(const uint4 *d, unsigned slice, unsigned count, int passes, unsigned *sink) {
  unsigned sum = 0;
  for (int p = 0; p < passes; ++p)
    for (unsigned s = blockIdx.x % count; s < count; s += gridDim.x) {
      const uint4 *base = d + (size_t)s * slice;
      for (unsigned i = threadIdx.x; i < slice; i += 4 * blockDim.x) {
        uint4 v[4];
#pragma unroll
        for (int u = 0; u < 4; ++u)
          asm volatile("ld.global.L1::no_allocate.v4.u32 {%0,%1,%2,%3}, [%4];"
                       : "=r"(v[u].x), "=r"(v[u].y), "=r"(v[u].z), "=r"(v[u].w)
                       : "l"(base + i + u * blockDim.x));
#pragma unroll
        for (int u = 0; u < 4; ++u) sum ^= v[u].x ^ v[u].y ^ v[u].z ^ v[u].w;
      }
    }
  if (sum == 0x9e3779b9u) sink[0] = sum;
}

// Each thread's 16 bytes of a slice of 4 x blockDim vectors, into stage (k % 4) of shared memory.
__global__ void cpa(const uint4 *d, unsigned slice, unsigned count, int passes) {
  extern __shared__ __align__(128) uint4 stage[];
  unsigned k = 0;
  for (int p = 0; p < passes; ++p)
    for (unsigned s = blockIdx.x % count; s < count; s += gridDim.x)
      for (unsigned i = threadIdx.x; i < slice; i += blockDim.x, ++k) {
        const unsigned dst = (unsigned)__cvta_generic_to_shared(stage + (k % 4) * blockDim.x + threadIdx.x);
        asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(dst), "l"(d + (size_t)s * slice + i) : "memory");
        asm volatile("cp.async.commit_group;" ::: "memory");
        asm volatile("cp.async.wait_group 3;" ::: "memory");
      }
  asm volatile("cp.async.wait_group 0;" ::: "memory");
}

__device__ __forceinline__ void wait_parity(unsigned bar, unsigned parity) {
  unsigned done = 0;
  while (!done)
    asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2; selp.u32 %0, 1, 0, p; }"
                 : "=r"(done) : "r"(bar), "r"(parity) : "memory");
}

// Thread 0 copies the block's slices of `bulk` bytes, `stages` in flight. With `shared` set every
// block walks every slice (from its own starting slice), so each line is read by all SMs.
__global__ void bulk(const char *d, unsigned bulk, unsigned count, int passes, unsigned stages, int shared,
                     unsigned *bad) {
  extern __shared__ __align__(128) char buf[];
  __shared__ __align__(8) unsigned long long bars[16];
  unsigned last[16];
  if (threadIdx.x != 0) return;
  const unsigned bar0 = (unsigned)__cvta_generic_to_shared(bars), dst0 = (unsigned)__cvta_generic_to_shared(buf);
  for (unsigned i = 0; i < stages; ++i) asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(bar0 + 8 * i) : "memory");
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  const unsigned step = shared ? 1 : gridDim.x, first = blockIdx.x % count;
  const unsigned per_pass = shared ? count : (count - first + step - 1) / step;
  const unsigned long long total = (unsigned long long)per_pass * passes;
  // Counters, not divisions: one thread issues every copy, and a 64-bit division per copy
  // held the first version of this probe to one copy in flight.
  unsigned st = 0, use = 0, j = 0, s = first;
  for (unsigned long long k = 0; k < total; ++k) {
    const unsigned bar = bar0 + 8 * st;
    if (use > 0) wait_parity(bar, (use - 1) & 1);
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "r"(bulk) : "memory");
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"
                 ::"r"(dst0 + st * bulk), "l"(d + (size_t)s * bulk), "r"(bulk), "r"(bar) : "memory");
    last[st] = s;
    if (++st == stages) { st = 0; ++use; }
    if (++j == per_pass) { j = 0; s = first; } else if ((s += step) >= count) { s -= count; }
  }
  for (unsigned long long k = total > stages ? total - stages : 0; k < total; ++k)
    wait_parity(bar0 + 8 * (k % stages), (k / stages) & 1);
  // Each stage holds the last slice it was given: its first and last words are that slice's
  // word indices (the region holds its own word index at every word).
  for (unsigned i = 0; i < stages && i < total; ++i) {
    const unsigned *w = (const unsigned *)(buf + i * bulk), words = bulk / 4;
    if (w[0] != last[i] * words || w[words - 1] != last[i] * words + words - 1) atomicAdd(bad, 1u);
  }
}

int main() {
  const size_t bytes = 13107200;
  const int passes = 400;
  char *d; cudaMalloc(&d, bytes);
  {
    std::vector<unsigned> words(bytes / 4);
    for (size_t i = 0; i < words.size(); ++i) words[i] = (unsigned)i;
    cudaMemcpy(d, words.data(), bytes, cudaMemcpyHostToDevice);
  }
  unsigned *sink; cudaMalloc(&sink, 4);
  unsigned *bad; cudaMalloc(&bad, 4); cudaMemset(bad, 0, 4);
  int sms; cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  cudaFuncSetAttribute(bulk, cudaFuncAttributeMaxDynamicSharedMemorySize, 200 << 10);
  cudaFuncSetAttribute(cpa, cudaFuncAttributeMaxDynamicSharedMemorySize, 64 << 10);
  cudaEvent_t a, b; cudaEventCreate(&a); cudaEventCreate(&b);
  auto rate = [&](auto launch, double moved, const char *what) {
    launch();
    if (cudaDeviceSynchronize() != cudaSuccess) { printf("%s: %s\n", what, cudaGetErrorString(cudaGetLastError())); return; }
    std::vector<double> r;
    for (int i = 0; i < 5; ++i) {
      cudaEventRecord(a); launch(); cudaEventRecord(b); cudaEventSynchronize(b);
      float ms; cudaEventElapsedTime(&ms, a, b); r.push_back(moved / (ms * 1e-3) / 1e12);
    }
    std::sort(r.begin(), r.end());
    printf("%-44s median %6.2f  best %6.2f TB/s\n", what, r[2], r[4]);
  };
  char what[96];
  for (unsigned threads : {256u, 512u, 1024u})
    for (unsigned per_sm : {1u, 2u, 4u, 8u}) {
      if (threads * per_sm > 2048) continue;
      const unsigned slice = 4 * threads, count = bytes / 16 / slice, grid = sms * per_sm;
      snprintf(what, sizeof what, "ldg  %4u threads x %u per SM", threads, per_sm);
      rate([&] { ldg<<<grid, threads>>>((const uint4 *)d, slice, count, passes, sink); }, double(count) * slice * 16 * passes, what);
      snprintf(what, sizeof what, "cpa  %4u threads x %u per SM", threads, per_sm);
      rate([&] { cpa<<<grid, threads, 4 * threads * 16>>>((const uint4 *)d, slice, count, passes); }, double(count) * slice * 16 * passes, what);
    }
  for (int shared : {0, 1})
    for (unsigned kib : {4u, 16u, 32u})
      for (unsigned stages : {2u, 4u, 8u, 12u})
        for (unsigned per_sm : {1u, 2u, 4u, 8u}) {
          const unsigned size = kib << 10, count = bytes / size, grid = sms * per_sm;
          if (per_sm * (stages * size + 1024) > 227u << 10) continue;
          const int p = shared ? passes / 20 : passes;
          const double moved = double(shared ? grid : count) * size * p * (shared ? count : 1);
          snprintf(what, sizeof what, "bulk %s %2u KiB x %u stages, %u per SM", shared ? "shared " : "private", kib, stages, per_sm);
          rate([&] { bulk<<<grid, 32, stages * size>>>(d, size, count, p, stages, shared, bad); }, moved, what);
        }
  unsigned wrong = 0;
  cudaMemcpy(&wrong, bad, 4, cudaMemcpyDeviceToHost);
  printf("bulk copies whose last slice in shared memory did not hold its data: %u (every launch, every block, every stage checked)\n", wrong);
  return 0;
}
