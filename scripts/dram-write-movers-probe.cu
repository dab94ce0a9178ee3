// DRAM write by every mover, interleaved, beside gpu-stream's init (issue #32: gpubench's `dram
// write` headline read 3.19-3.25 TB/s against gpu-stream init's 3.25 over four sessions, its own
// occupancy search 3.25-3.26 at the same occupancy minutes before). Movers, each writing a
// region of 1 or 4 GiB:
//   slices        gpubench's kernel: the region in slices of 4 x threads 16-byte vectors, block b
//                 writing slices b, b + grid, ... (1024 threads x 1 block per SM, its winner);
//   stream8 T     gpu-stream's init: one 8-byte store per thread, one block of T threads per
//                 T elements, the grid covering the region once;
//   stream16 T    the same with 16-byte stores;
//   bulk C/N      TMA bulk stores: thread 0 of one block per SM stores C bytes of shared memory
//                 (cp.async.bulk.global.shared::cta) to chunks b, b + grid, ..., at most N
//                 groups unread at once;
//   memset8/32    the driver's cudaMemsetAsync / cuMemsetD32Async.
// Every timing is two launches back to back between events (as gpu-stream times its kernels);
// the movers take turns in each of ROUNDS rounds, and each mover's median and range over the
// rounds is printed, then per round the two kernels the issue compares, so a drift over the
// session shows. Copy engines' D2D copy of 4 GiB arrays is timed in the same rounds (bytes read
// + written), for the DRAM copy's share of the peak.
//   nvcc -O3 -arch=sm_90 -o writes scripts/dram-write-movers-probe.cu && ./writes
#include <algorithm>
#include <cstdio>
#include <cuda_runtime.h>
#include <dlfcn.h>
#include <functional>
#include <string>
#include <vector>

__device__ __forceinline__ void put(uint4 *p, uint4 v) {
  asm volatile("st.global.v4.u32 [%0], {%1,%2,%3,%4};" ::"l"(p), "r"(v.x), "r"(v.y), "r"(v.z), "r"(v.w) : "memory");
}
__global__ void slices(uint4 *d, unsigned slice, unsigned count) {
  const uint4 v = make_uint4(1, 2, 3, 4);
  for (unsigned s = blockIdx.x % count; s < count; s += gridDim.x) {
    uint4 *base = d + (size_t)s * slice;
#pragma unroll 4
    for (unsigned i = threadIdx.x; i < slice; i += blockDim.x) put(base + i, v);
  }
}
__global__ void stream8(double *a, size_t n) {
  size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) a[i] = 0.23;
}
__global__ void stream16(uint4 *a, size_t n) {
  size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) put(a + i, make_uint4(5, 6, 7, 8));
}
template <int UNREAD>
__global__ void bulk(char *dst, unsigned chunk, unsigned long long chunks) {
  extern __shared__ __align__(128) char buf[];
  for (unsigned i = threadIdx.x * 16; i < chunk; i += blockDim.x * 16) *(uint4 *)(buf + i) = make_uint4(i, 9, 10, 11);
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  __syncthreads();
  if (threadIdx.x != 0) return;
  const unsigned src = (unsigned)__cvta_generic_to_shared(buf);
  for (unsigned long long k = blockIdx.x; k < chunks; k += gridDim.x) {
    asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;" ::"l"(dst + k * chunk), "r"(src), "r"(chunk) : "memory");
    asm volatile("cp.async.bulk.commit_group;" ::: "memory");
    asm volatile("cp.async.bulk.wait_group.read %0;" ::"n"(UNREAD) : "memory");
  }
  asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
}

typedef int (*MemsetD32)(unsigned long long, unsigned, size_t, void *);
static cudaEvent_t e0, e1;
struct Mover { std::string name; double bytes; std::function<void()> launch; std::vector<double> rates; };

int main() {
  int sms, clk, bus;
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  cudaDeviceGetAttribute(&clk, cudaDevAttrMemoryClockRate, 0);
  cudaDeviceGetAttribute(&bus, cudaDevAttrGlobalMemoryBusWidth, 0);
  const double peak = 2.0 * clk * 1e3 * bus / 8;
  printf("peak %.1f GB/s (2 x %d kHz x %d bit), %d SMs\n", peak / 1e9, clk, bus, sms);
  void *cuda = dlopen("libcuda.so.1", RTLD_NOW);
  MemsetD32 memset32 = cuda ? (MemsetD32)dlsym(cuda, "cuMemsetD32Async") : nullptr;
  cudaEventCreate(&e0); cudaEventCreate(&e1);
  char *region, *src, *dst;
  if (cudaMalloc(&region, 4ull << 30) != cudaSuccess || cudaMalloc(&src, 4ull << 30) != cudaSuccess ||
      cudaMalloc(&dst, 4ull << 30) != cudaSuccess) { printf("allocation failed\n"); return 1; }
  cudaMemset(src, 1, 4ull << 30);
  std::vector<Mover> movers;
  for (size_t gib : {1, 4}) {
    const size_t bytes = gib << 30, n16 = bytes / 16;
    const std::string at = std::to_string(gib) + " GiB ";
    movers.push_back({at + "slices 1024 x 1", (double)bytes, [=] { slices<<<sms, 1024>>>((uint4 *)region, 4096, n16 / 4096); }, {}});
    movers.push_back({at + "slices 512 x 2", (double)bytes, [=] { slices<<<2 * sms, 512>>>((uint4 *)region, 2048, n16 / 2048); }, {}});
    for (int t : {256, 512, 1024})
      movers.push_back({at + "stream8 " + std::to_string(t), (double)bytes, [=] { stream8<<<(bytes / 8 + t - 1) / t, t>>>((double *)region, bytes / 8); }, {}});
    movers.push_back({at + "stream16 256", (double)bytes, [=] { stream16<<<(n16 + 255) / 256, 256>>>((uint4 *)region, n16); }, {}});
    for (unsigned kib : {16u, 32u}) {
      const unsigned chunk = kib << 10;
      cudaFuncSetAttribute(bulk<4>, cudaFuncAttributeMaxDynamicSharedMemorySize, chunk);
      cudaFuncSetAttribute(bulk<16>, cudaFuncAttributeMaxDynamicSharedMemorySize, chunk);
      movers.push_back({at + "bulk " + std::to_string(kib) + " KiB/4 unread", (double)bytes, [=] { bulk<4><<<sms, 128, chunk>>>(region, chunk, bytes / chunk); }, {}});
      movers.push_back({at + "bulk " + std::to_string(kib) + " KiB/16 unread", (double)bytes, [=] { bulk<16><<<sms, 128, chunk>>>(region, chunk, bytes / chunk); }, {}});
    }
    movers.push_back({at + "memset8 (cudaMemsetAsync)", (double)bytes, [=] { cudaMemsetAsync(region, 3, bytes); }, {}});
    if (memset32) movers.push_back({at + "memset32 (cuMemsetD32Async)", (double)bytes, [=] { memset32((unsigned long long)region, 0x01020304u, bytes / 4, nullptr); }, {}});
  }
  for (size_t gib : {2, 4})
    movers.push_back({"copy engines D2D " + std::to_string(gib) + " GiB (read + write)", 2.0 * (gib << 30), [=] { cudaMemcpyAsync(dst, src, gib << 30, cudaMemcpyDeviceToDevice); }, {}});
  for (auto &m : movers) { m.launch(); m.launch(); }
  if (cudaDeviceSynchronize() != cudaSuccess) { printf("warm-up failed: %s\n", cudaGetErrorString(cudaGetLastError())); return 1; }
  const int ROUNDS = 9;
  for (int r = 0; r < ROUNDS; ++r)
    for (auto &m : movers) {
      cudaEventRecord(e0); m.launch(); m.launch(); cudaEventRecord(e1); cudaEventSynchronize(e1);
      float ms; cudaEventElapsedTime(&ms, e0, e1);
      m.rates.push_back(2 * m.bytes / (ms * 1e-3));
    }
  printf("last error: %s\n", cudaGetErrorString(cudaGetLastError()));
  printf("%-44s %9s %9s %9s %7s\n", "mover", "median", "min", "max", "% peak");
  for (auto &m : movers) {
    auto s = m.rates; std::sort(s.begin(), s.end());
    printf("%-44s %9.1f %9.1f %9.1f %6.1f%%\n", m.name.c_str(), s[s.size() / 2] / 1e9, s.front() / 1e9, s.back() / 1e9, 100 * s[s.size() / 2] / peak);
  }
  printf("per round (GB/s): 1 GiB slices 1024 x 1 | 1 GiB stream8 best of three | 4 GiB copy engines\n");
  for (int r = 0; r < ROUNDS; ++r) {
    double s8 = std::max({movers[2].rates[r], movers[3].rates[r], movers[4].rates[r]});
    printf("  round %d: %7.1f %7.1f %7.1f\n", r, movers[0].rates[r] / 1e9, s8 / 1e9, movers.back().rates[r] / 1e9);
  }
}
