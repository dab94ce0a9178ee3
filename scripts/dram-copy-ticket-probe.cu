// DRAM copy past 89 % of the peak? With slices taken in order by ticket (cuda/bandwidth.cu
// for_each_slice) the bandwidth suite's SM copy reached 88.6-89.0 % on an H100 and the copy
// engines' two copies of 4 GiB 89.9 % in one run (90.3 % in a probe on other cards). Tried
// here, interleaved over 7 rounds (median, min, max; bytes = read + write):
//   ticket U T x k   the suite's copy by ticket with U vectors in flight per thread (4: the
//                    suite's; 8 and 16), T threads x k blocks per SM;
//   engines S x n    cudaMemcpyAsync of the arrays split into n parts on n streams (n = 1: the
//                    suite's way), each timing two such copies.
// Arrays of 512 MiB (the suite's 1 GiB DRAM footprint) and 2 GiB.
//   nvcc -O3 -arch=sm_90 -o copyt scripts/dram-copy-ticket-probe.cu && ./copyt
#include <algorithm>
#include <cstdio>
#include <cuda_runtime.h>
#include <functional>
#include <string>
#include <vector>

__device__ __forceinline__ void put(uint4 *p, uint4 v) {
  asm volatile("st.global.v4.u32 [%0], {%1,%2,%3,%4};" ::"l"(p), "r"(v.x), "r"(v.y), "r"(v.z), "r"(v.w) : "memory");
}
__device__ __forceinline__ uint4 get(const uint4 *p) {
  uint4 v;
  asm volatile("ld.global.L1::no_allocate.v4.u32 {%0,%1,%2,%3}, [%4];" : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p));
  return v;
}
template <int U>
__global__ void ticket_copy(const uint4 *src, uint4 *dst, unsigned slices, int passes, unsigned long long *next) {
  __shared__ unsigned long long taken[2];
  const unsigned long long total = (unsigned long long)slices * passes;
  const unsigned count = U * blockDim.x;
  if (threadIdx.x == 0) taken[0] = atomicAdd(next, 1ull);
  __syncthreads();
  unsigned long long mine = taken[0];
  unsigned b = 1;
  while (mine < total) {
    if (threadIdx.x == 0) taken[b] = atomicAdd(next, 1ull);
    const size_t base = (size_t)(mine % slices) * count + threadIdx.x;
    uint4 v[U];
#pragma unroll
    for (int u = 0; u < U; ++u) v[u] = get(src + base + u * blockDim.x);
#pragma unroll
    for (int u = 0; u < U; ++u) put(dst + base + u * blockDim.x, v[u]);
    __syncthreads();
    mine = taken[b];
    b ^= 1;
  }
}

struct Case { std::string name; double bytes; std::function<void()> launch; std::vector<double> rates; };

int main() {
  int sms, clk, bus;
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  cudaDeviceGetAttribute(&clk, cudaDevAttrMemoryClockRate, 0);
  cudaDeviceGetAttribute(&bus, cudaDevAttrGlobalMemoryBusWidth, 0);
  const double peak = 2.0 * clk * 1e3 * bus / 8;
  char *src, *dst; unsigned long long *next;
  if (cudaMalloc(&src, 2ull << 30) != cudaSuccess || cudaMalloc(&dst, 2ull << 30) != cudaSuccess || cudaMalloc(&next, 8) != cudaSuccess) { printf("allocation failed\n"); return 1; }
  cudaMemset(src, 7, 2ull << 30);
  cudaStream_t streams[4];
  for (auto &s : streams) cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
  cudaEvent_t e0, e1, joined[4];
  cudaEventCreate(&e0); cudaEventCreate(&e1);
  for (auto &e : joined) cudaEventCreateWithFlags(&e, cudaEventDisableTiming);
  std::vector<Case> cases;
  for (size_t mib : {512, 2048}) {
    const size_t bytes = mib << 20;
    const std::string at = std::to_string(mib) + " MiB arrays ";
    auto add = [&](int u, int threads, int k, auto kernel) {
      const unsigned slices = (unsigned)(bytes / 16 / (u * threads));
      const int passes = mib == 512 ? 4 : 1;
      cases.push_back({at + "ticket U" + std::to_string(u) + " " + std::to_string(threads) + " x " + std::to_string(k), 2.0 * bytes * passes,
                       [=] { kernel<<<sms * k, threads>>>((const uint4 *)src, (uint4 *)dst, slices, passes, next); }, {}});
    };
    for (auto [t, k] : {std::pair{256, 2}, {128, 4}, {512, 1}}) add(4, t, k, ticket_copy<4>);
    for (auto [t, k] : {std::pair{256, 2}, {128, 4}, {512, 1}, {256, 1}}) add(8, t, k, ticket_copy<8>);
    for (auto [t, k] : {std::pair{128, 2}, {256, 1}, {128, 1}}) add(16, t, k, ticket_copy<16>);
    for (int n : {1, 2, 4}) {
      cases.push_back({at + "engines, 2 copies in " + std::to_string(n) + " part(s) on as many streams", 4.0 * bytes, [=] {
        cudaEventRecord(joined[0], 0);
        for (int i = 0; i < n; ++i) {
          cudaStreamWaitEvent(streams[i], joined[0]);
          for (int c = 0; c < 2; ++c) cudaMemcpyAsync(dst + i * bytes / n, src + i * bytes / n, bytes / n, cudaMemcpyDeviceToDevice, streams[i]);
        }
        for (int i = 0; i < n; ++i) { cudaEventRecord(joined[i], streams[i]); cudaStreamWaitEvent(0, joined[i]); }
      }, {}});
    }
  }
  auto seconds = [&](Case &c) {
    cudaMemsetAsync(next, 0, 8, 0);
    cudaEventRecord(e0, 0); c.launch(); cudaEventRecord(e1, 0); cudaEventSynchronize(e1);
    float ms; cudaEventElapsedTime(&ms, e0, e1); return ms * 1e-3;
  };
  for (auto &c : cases) seconds(c);
  for (int r = 0; r < 7; ++r)
    for (auto &c : cases) c.rates.push_back(c.bytes / seconds(c));
  printf("last error: %s\n", cudaGetErrorString(cudaGetLastError()));
  printf("%-66s %8s %8s %8s %7s\n", "case (GB/s, read + write)", "median", "min", "max", "% peak");
  for (auto &c : cases) {
    auto s = c.rates; std::sort(s.begin(), s.end());
    printf("%-66s %8.1f %8.1f %8.1f %6.1f%%\n", c.name.c_str(), s[3] / 1e9, s[0] / 1e9, s[6] / 1e9, 100 * s[3] / peak);
  }
}
