// Why gpu-stream's init writes DRAM 2-3 % faster than gpubench's `dram write` on an H100
// (scripts/dram-write-movers-probe.cu: 1 GiB, 3.26-3.27 TB/s against 3.19). gpu-stream launches
// one short block per 256 elements, which the hardware hands to SMs in order as others finish;
// gpubench's kernels keep SMs x k blocks resident and give block b the slices b, b + grid, ...
// fixed in advance, so fast SMs run ahead of slow ones, the writes of one moment spread over
// the region, and the last slices of a pass fall on a few blocks. Here the same kernels take
// their slices in order from an atomic ticket instead (thread 0 fetches the next ticket while
// the block works on the current one): `static` against `ticket`, write and copy, at an L2
// footprint (12.5 MiB) and a DRAM one (1 GiB), 1024 x 1 to 128 x 8 threads x blocks per SM,
// (and, in a second version, weak and strong reads), passes enough for a 2 ms launch, as the suite launches; plus gpu-stream's one-shot grids
// (write 8 bytes per thread, copy 16) as the reference. Median over 7 interleaved rounds.
//   nvcc -O3 -arch=sm_90 -o order scripts/slice-order-probe.cu && ./order
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cuda_runtime.h>
#include <functional>
#include <string>
#include <vector>

#define UNROLL 4
__device__ __forceinline__ void put(uint4 *p, uint4 v) {
  asm volatile("st.global.v4.u32 [%0], {%1,%2,%3,%4};" ::"l"(p), "r"(v.x), "r"(v.y), "r"(v.z), "r"(v.w) : "memory");
}
__device__ __forceinline__ uint4 get(const uint4 *p) {
  uint4 v;
  asm volatile("ld.global.L1::no_allocate.v4.u32 {%0,%1,%2,%3}, [%4];" : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p));
  return v;
}
__device__ __forceinline__ uint4 get_strong(const uint4 *p) {
  uint4 v;
  asm volatile("ld.global.cg.v4.u32 {%0,%1,%2,%3}, [%4];" : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p));
  return v;
}
enum Op { WRITE, COPY, READ, STRONG_READ };
// One slice of `count` vectors: each thread UNROLL vectors blockDim apart (count = UNROLL x blockDim).
// Reads fold what they load into `sum`, which a store the compiler cannot rule out keeps alive.
template <Op OP> __device__ __forceinline__ void slice(const uint4 *src, uint4 *dst, unsigned count, uint4 value, unsigned &sum) {
  uint4 v[UNROLL];
#pragma unroll
  for (int u = 0; u < UNROLL; ++u) v[u] = OP == COPY || OP == READ ? get(src + threadIdx.x + u * blockDim.x) : OP == STRONG_READ ? get_strong(src + threadIdx.x + u * blockDim.x) : value;
#pragma unroll
  for (int u = 0; u < UNROLL; ++u) {
    if (OP == WRITE || OP == COPY) put(dst + threadIdx.x + u * blockDim.x, v[u]);
    else sum += v[u].x + v[u].y + v[u].z + v[u].w;
  }
}
template <Op OP> __global__ void fixed(const uint4 *src, uint4 *dst, unsigned count, unsigned slices, int passes) {
  unsigned sum = 0;
  for (int p = 0; p < passes; ++p) {
    const uint4 value = make_uint4(p, p, p, p);
    for (unsigned s = blockIdx.x; s < slices; s += gridDim.x) {
      const size_t base = (size_t)s * count;
      slice<OP>(src + base, dst + base, count, value, sum);
    }
  }
  if (sum == 0x9e3779b9u) dst[0].x = sum;
}
template <Op OP> __global__ void ticket(const uint4 *src, uint4 *dst, unsigned count, unsigned slices, int passes, unsigned *next) {
  __shared__ unsigned tickets[2];
  const unsigned total = slices * passes;
  if (threadIdx.x == 0) tickets[0] = atomicAdd(next, 1u);
  __syncthreads();
  unsigned mine = tickets[0], b = 0, sum = 0;
  while (mine < total) {
    if (threadIdx.x == 0) tickets[b ^ 1] = atomicAdd(next, 1u);
    const unsigned s = mine % slices, p = mine / slices;
    const size_t base = (size_t)s * count;
    slice<OP>(src + base, dst + base, count, make_uint4(p, p, p, p), sum);
    __syncthreads();
    b ^= 1;
    mine = tickets[b];
  }
  if (sum == 0x9e3779b9u) dst[0].x = sum;
}
__global__ void stream8(double *a, size_t n) {
  size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) a[i] = 0.23;
}
__global__ void stream_copy16(const uint4 *src, uint4 *dst, size_t n) {
  size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) put(dst + i, get(src + i));
}

struct Case { std::string name; double bytes; std::function<void()> launch; std::vector<double> rates; };

int main() {
  int sms; cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  uint4 *src, *dst; unsigned *next;
  if (cudaMalloc(&src, 1ull << 30) != cudaSuccess || cudaMalloc(&dst, 1ull << 30) != cudaSuccess || cudaMalloc(&next, 4) != cudaSuccess) { printf("allocation failed\n"); return 1; }
  cudaMemset(src, 1, 1ull << 30);
  cudaEvent_t e0, e1; cudaEventCreate(&e0); cudaEventCreate(&e1);
  auto seconds = [&](const std::function<void()> &launch) {
    cudaMemsetAsync(next, 0, 4);
    cudaEventRecord(e0); launch(); cudaEventRecord(e1); cudaEventSynchronize(e1);
    float ms; cudaEventElapsedTime(&ms, e0, e1); return ms * 1e-3;
  };
  std::vector<Case> cases;
  const std::pair<const char *, size_t> footprints[] = {{"L2 12.5 MiB", 25ull << 19}, {"DRAM 1 GiB", 1ull << 30}};
  for (auto [w, b] : footprints) {
    const char *where = w; const size_t bytes = b;
    for (Op op : {WRITE, COPY, READ, STRONG_READ})
      for (auto [t, k] : {std::pair{1024, 1}, {512, 2}, {256, 4}, {128, 8}}) {
        const int threads = t, bps = k;
        const unsigned count = UNROLL * threads;
        const unsigned slices = (unsigned)(bytes / 16 / count);
        const bool copy = op == COPY;
        const double moved = (copy ? 2.0 : 1.0) * slices * count * 16.0;
        const int grid = sms * bps;
        for (bool dynamic : {false, true}) {
          auto one = [=](int passes) {
            return std::function<void()>([=] {
              if (dynamic) { switch (op) { case WRITE: ticket<WRITE><<<grid, threads>>>(src, dst, count, slices, passes, next); break; case COPY: ticket<COPY><<<grid, threads>>>(src, dst, count, slices, passes, next); break; case READ: ticket<READ><<<grid, threads>>>(src, dst, count, slices, passes, next); break; default: ticket<STRONG_READ><<<grid, threads>>>(src, dst, count, slices, passes, next); } }
              else { switch (op) { case WRITE: fixed<WRITE><<<grid, threads>>>(src, dst, count, slices, passes); break; case COPY: fixed<COPY><<<grid, threads>>>(src, dst, count, slices, passes); break; case READ: fixed<READ><<<grid, threads>>>(src, dst, count, slices, passes); break; default: fixed<STRONG_READ><<<grid, threads>>>(src, dst, count, slices, passes); } }
            });
          };
          // Passes for a launch of at least 2 ms, as the suite calibrates (a fifth to spare).
          double t = seconds(one(1)); seconds(one(1)); t = seconds(one(1));
          int passes = std::max(1, (int)std::ceil(2.4e-3 / t));
          char name[128];
          const char *ops[] = {"write", "copy", "read", "strong read"};
          snprintf(name, sizeof name, "%s %-11s %-6s %4d x %d (%d passes)", where, ops[op], dynamic ? "ticket" : "static", threads, bps, passes);
          cases.push_back({name, moved * passes, one(passes), {}});
        }
      }
  }
  const size_t n = (1ull << 30) / 16;
  cases.push_back({"DRAM 1 GiB write one-shot grid, 8 B x 256 (gpu-stream init), 2 launches", 2.0 * (1ull << 30), [=] { stream8<<<(n * 2 + 255) / 256, 256>>>((double *)dst, n * 2); stream8<<<(n * 2 + 255) / 256, 256>>>((double *)dst, n * 2); }, {}});
  cases.push_back({"DRAM 1 GiB copy  one-shot grid, 16 B x 256, 2 launches", 4.0 * (1ull << 30), [=] { stream_copy16<<<(n + 255) / 256, 256>>>(src, dst, n); stream_copy16<<<(n + 255) / 256, 256>>>(src, dst, n); }, {}});
  for (auto &c : cases) seconds(c.launch);
  for (int r = 0; r < 7; ++r)
    for (auto &c : cases) c.rates.push_back(c.bytes / seconds(c.launch));
  printf("last error: %s\n", cudaGetErrorString(cudaGetLastError()));
  printf("%-62s %8s %8s %8s  (GB/s over 7 rounds)\n", "case", "median", "min", "max");
  for (auto &c : cases) {
    auto s = c.rates; std::sort(s.begin(), s.end());
    printf("%-62s %8.1f %8.1f %8.1f\n", c.name.c_str(), s[3] / 1e9, s[0] / 1e9, s[6] / 1e9);
  }
}
