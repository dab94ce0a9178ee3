// The DRAM copy by TMA bulk copies through shared memory (the tma suite's tma_dram_copy) with
// chunks taken in order from an atomic ticket instead of fixed chunks b, b + grid, ... per
// block: the bandwidth suite's SM copy rose from 84 to 89 % of the peak that way
// (scripts/slice-order-probe.cu), the bulk copy stopped at 86-87 % with fixed chunks. Thread 0
// of each block issues everything; it fetches the ticket of its next load one chunk ahead.
// Beside: the SM copy by ticket (4 vectors per thread, 128 x 4) and the copy engines.
// Arrays of 2 GiB; bytes = read + write; median, min, max over 7 interleaved rounds; the
// target checked against the source after each kernel's last round.
//   nvcc -O3 -arch=sm_90 -o bulkt scripts/dram-bulk-ticket-probe.cu && ./bulkt
#include <algorithm>
#include <cstdio>
#include <cuda_runtime.h>
#include <functional>
#include <string>
#include <vector>

__device__ __forceinline__ void wait_parity(unsigned bar, unsigned parity) {
  unsigned done = 0;
  while (!done)
    asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2; selp.u32 %0, 1, 0, p; }"
                 : "=r"(done) : "r"(bar), "r"(parity) : "memory");
}
__device__ __forceinline__ void load_chunk(unsigned smem, const char *g, unsigned bytes, unsigned bar) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "r"(bytes) : "memory");
  asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"
               ::"r"(smem), "l"(g), "r"(bytes), "r"(bar) : "memory");
}
__device__ __forceinline__ void store_chunk(char *g, unsigned smem, unsigned bytes) {
  asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;" ::"l"(g), "r"(smem), "r"(bytes) : "memory");
  asm volatile("cp.async.bulk.commit_group;" ::: "memory");
}
// S stages; the buffer of chunk k is loaded again (with a later chunk) once the store of chunk
// k has read it, waited for LAG chunks later. TICKET: chunks from `next` in order; else block
// b's chunks are b, b + grid, ...
template <int S, int LAG, bool TICKET>
__global__ void bulk_copy(const char *src, char *dst, unsigned chunk, unsigned long long chunks, unsigned long long *next) {
  extern __shared__ __align__(128) char buf[];
  __shared__ __align__(8) unsigned long long bars[S];
  if (threadIdx.x != 0) return;
  const unsigned bar0 = (unsigned)__cvta_generic_to_shared(bars), buf0 = (unsigned)__cvta_generic_to_shared(buf);
  for (int i = 0; i < S; ++i) asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(bar0 + 8 * i) : "memory");
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  unsigned long long at[S];  // the chunk in each buffer; >= chunks: none
  unsigned long long fixed_next = blockIdx.x;
  auto take = [&]() -> unsigned long long {
    if (TICKET) return atomicAdd(next, 1ull);
    const unsigned long long k = fixed_next; fixed_next += gridDim.x; return k;
  };
  unsigned long long ahead = take();
#pragma unroll
  for (int i = 0; i < S; ++i) {
    at[i] = ahead;
    if (ahead < chunks) { load_chunk(buf0 + i * chunk, src + ahead * chunk, chunk, bar0 + 8 * i); ahead = take(); }
  }
  unsigned parity = 0;
  for (unsigned long long k = 0;; ++k) {
    const int s = (int)(k % S);
    if (s == 0 && k > 0) parity ^= 1u;
    if (at[s] >= chunks) break;
    wait_parity(bar0 + 8 * s, parity);
    store_chunk(dst + at[s] * chunk, buf0 + s * chunk, chunk);
    if (k >= LAG) {
      const int r = (int)((k - LAG) % S);
      at[r] = ahead;
      if (ahead < chunks) {
        asm volatile("cp.async.bulk.wait_group.read %0;" ::"n"(LAG) : "memory");
        load_chunk(buf0 + r * chunk, src + ahead * chunk, chunk, bar0 + 8 * r);
        ahead = take();
      }
    }
  }
  asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
}
__device__ __forceinline__ void put(uint4 *p, uint4 v) {
  asm volatile("st.global.v4.u32 [%0], {%1,%2,%3,%4};" ::"l"(p), "r"(v.x), "r"(v.y), "r"(v.z), "r"(v.w) : "memory");
}
__device__ __forceinline__ uint4 get(const uint4 *p) {
  uint4 v;
  asm volatile("ld.global.L1::no_allocate.v4.u32 {%0,%1,%2,%3}, [%4];" : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p));
  return v;
}
__global__ void ticket_copy(const uint4 *src, uint4 *dst, unsigned slices, unsigned long long *next) {
  __shared__ unsigned long long taken[2];
  const unsigned count = 4 * blockDim.x;
  if (threadIdx.x == 0) taken[0] = atomicAdd(next, 1ull);
  __syncthreads();
  unsigned long long mine = taken[0];
  unsigned b = 1;
  while (mine < slices) {
    if (threadIdx.x == 0) taken[b] = atomicAdd(next, 1ull);
    const size_t base = (size_t)mine * count + threadIdx.x;
    uint4 v[4];
#pragma unroll
    for (int u = 0; u < 4; ++u) v[u] = get(src + base + u * blockDim.x);
#pragma unroll
    for (int u = 0; u < 4; ++u) put(dst + base + u * blockDim.x, v[u]);
    __syncthreads();
    mine = taken[b];
    b ^= 1;
  }
}
__global__ void mismatches(const int *a, const int *b, size_t n, unsigned long long *bad) {
  unsigned long long local = 0;
  for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) local += a[i] != b[i];
  if (local) atomicAdd(bad, local);
}
__global__ void fill(int *a, size_t n, int salt) {
  for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) a[i] = (int)(i * 2654435761u) ^ salt;
}

struct Case { std::string name; double bytes; std::function<void()> launch; bool kernel; std::vector<double> rates; unsigned long long wrong = 0; };

int main() {
  int sms, clk, bus;
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  cudaDeviceGetAttribute(&clk, cudaDevAttrMemoryClockRate, 0);
  cudaDeviceGetAttribute(&bus, cudaDevAttrGlobalMemoryBusWidth, 0);
  const double peak = 2.0 * clk * 1e3 * bus / 8;
  const size_t bytes = 2ull << 30;
  char *src, *dst; unsigned long long *next, *bad;
  if (cudaMalloc(&src, 2 * bytes) != cudaSuccess || cudaMalloc(&dst, 2 * bytes) != cudaSuccess || cudaMalloc(&next, 8) != cudaSuccess || cudaMalloc(&bad, 8) != cudaSuccess) { printf("allocation failed\n"); return 1; }
  fill<<<sms * 4, 512>>>((int *)src, 2 * bytes / 4, 1);
  std::vector<Case> cases;
  auto bulk = [&](auto kernel, int stages, int lag, bool ticket, unsigned kib, int bps) {
    const unsigned chunk = kib << 10; const size_t smem = (size_t)stages * chunk;
    if (smem * bps > 227 * 1024) return;
    cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem);
    char name[128]; snprintf(name, sizeof name, "bulk %s %2u KiB x %2d stages (lag %d), %d block/SM", ticket ? "ticket" : "fixed ", kib, stages, lag, bps);
    cases.push_back({name, 2.0 * bytes, [=] { kernel<<<sms * bps, 32, smem>>>(src, dst, chunk, bytes / chunk, next); }, true, {}});
  };
  for (unsigned kib : {8u, 16u, 32u})
    for (int bps : {1, 2}) {
      bulk(bulk_copy<4, 2, false>, 4, 2, false, kib, bps);
      bulk(bulk_copy<4, 2, true>, 4, 2, true, kib, bps);
      bulk(bulk_copy<6, 3, true>, 6, 3, true, kib, bps);
      bulk(bulk_copy<8, 4, true>, 8, 4, true, kib, bps);
      bulk(bulk_copy<12, 6, true>, 12, 6, true, kib, bps);
    }
  for (auto [t, k] : {std::pair{128, 4}, {256, 2}}) {
    const int threads = t, bps = k;
    cases.push_back({"SM copy by ticket, 4 vectors per thread, " + std::to_string(threads) + " x " + std::to_string(bps), 2.0 * bytes,
                     [=] { ticket_copy<<<sms * bps, threads>>>((const uint4 *)src, (uint4 *)dst, (unsigned)(bytes / 16 / (4 * threads)), next); }, true, {}});
  }
  cases.push_back({"copy engines, 2 GiB arrays, 2 copies", 4.0 * bytes, [=] { for (int i = 0; i < 2; ++i) cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice); }, false, {}});
  cases.push_back({"copy engines, 4 GiB arrays, 2 copies", 8.0 * bytes, [=] { for (int i = 0; i < 2; ++i) cudaMemcpyAsync(dst, src, 2 * bytes, cudaMemcpyDeviceToDevice); }, false, {}});
  cudaEvent_t e0, e1; cudaEventCreate(&e0); cudaEventCreate(&e1);
  auto seconds = [&](Case &c) {
    cudaMemsetAsync(next, 0, 8);
    cudaEventRecord(e0); c.launch(); cudaEventRecord(e1); cudaEventSynchronize(e1);
    float ms; cudaEventElapsedTime(&ms, e0, e1); return ms * 1e-3;
  };
  for (auto &c : cases) seconds(c);
  for (int r = 0; r < 7; ++r)
    for (auto &c : cases) {
      if (r == 6 && c.kernel) cudaMemsetAsync(dst, 0, bytes);
      c.rates.push_back(c.bytes / seconds(c));
      if (r == 6 && c.kernel) {
        cudaMemsetAsync(bad, 0, 8);
        mismatches<<<sms * 4, 512>>>((const int *)src, (const int *)dst, bytes / 4, bad);
        cudaMemcpy(&c.wrong, bad, 8, cudaMemcpyDeviceToHost);
      }
    }
  printf("last error: %s\n", cudaGetErrorString(cudaGetLastError()));
  printf("%-56s %8s %8s %8s %7s %s\n", "case (GB/s, read + write)", "median", "min", "max", "% peak", "words wrong");
  for (auto &c : cases) {
    auto s = c.rates; std::sort(s.begin(), s.end());
    printf("%-56s %8.1f %8.1f %8.1f %6.1f%% %llu\n", c.name.c_str(), s[3] / 1e9, s[0] / 1e9, s[6] / 1e9, 100 * s[3] / peak, c.wrong);
  }
}
