// DRAM copy on an H100, second look (the first, scripts/dram-copy-probe.cu, stopped at 86.3 % of
// the theoretical peak on the SMs and 89.4 % by the copy engines). What it tries:
//  1. where the destination lies relative to the source: both in one allocation, the destination
//     2 GiB + `offset` past the source, offsets from 0 to 3 MiB + odd amounts, for the best
//     grid-stride kernel of the first probe and for cudaMemcpy (copy engines); if reads and writes
//     of the same moment fall on the same DRAM banks, an offset should move the rate;
//  2. TMA bulk copies as the mover: one thread per block loads chunks of C bytes into shared
//     memory (cp.async.bulk, an mbarrier per stage) and stores each back out
//     (cp.async.bulk.global.shared::cta), S stages, half of them loads in flight and half stores;
//  3. the footprint: arrays of 256 MiB to 2 GiB.
// Bytes counted = read + write; best of five launches after a warm one, timed with events;
// every configuration's destination is checked word by word against the source afterwards.
//   nvcc -O3 -arch=sm_90 -o copy2 scripts/dram-copy-layout-probe.cu && ./copy2
#include <cstdio>
#include <cuda_runtime.h>

template <int ILP>
__global__ void grid_stride(const int4 *__restrict__ src, int4 *__restrict__ dst, size_t n) {
  size_t stride = (size_t)gridDim.x * blockDim.x * ILP;
  for (size_t i = (size_t)blockIdx.x * blockDim.x * ILP + threadIdx.x; i < n; i += stride) {
    int4 v[ILP];
#pragma unroll
    for (int u = 0; u < ILP; ++u) v[u] = __ldcs(src + i + (size_t)u * blockDim.x);
#pragma unroll
    for (int u = 0; u < ILP; ++u) __stcs(dst + i + (size_t)u * blockDim.x, v[u]);
  }
}

// The same loop with L2 hints: MODE 1 loads with the 256-byte L2 prefetch size, MODE 2 stores
// under an evict_first policy, MODE 3 loads and stores evict_first, MODE 4 stores evict_last.
template <int ILP, int MODE>
__global__ void hinted(const int4 *__restrict__ src, int4 *__restrict__ dst, size_t n) {
  unsigned long long first, last;
  asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(first));
  asm volatile("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(last));
  size_t stride = (size_t)gridDim.x * blockDim.x * ILP;
  for (size_t i = (size_t)blockIdx.x * blockDim.x * ILP + threadIdx.x; i < n; i += stride) {
    int4 v[ILP];
#pragma unroll
    for (int u = 0; u < ILP; ++u) {
      const int4 *p = src + i + (size_t)u * blockDim.x;
      if (MODE == 1)
        asm volatile("ld.global.L1::no_allocate.L2::256B.v4.s32 {%0,%1,%2,%3}, [%4];" : "=r"(v[u].x), "=r"(v[u].y), "=r"(v[u].z), "=r"(v[u].w) : "l"(p));
      else if (MODE == 3)
        asm volatile("ld.global.L1::no_allocate.L2::cache_hint.v4.s32 {%0,%1,%2,%3}, [%4], %5;" : "=r"(v[u].x), "=r"(v[u].y), "=r"(v[u].z), "=r"(v[u].w) : "l"(p), "l"(first));
      else v[u] = __ldcs(p);
    }
#pragma unroll
    for (int u = 0; u < ILP; ++u) {
      int4 *p = dst + i + (size_t)u * blockDim.x;
      if (MODE == 2 || MODE == 3)
        asm volatile("st.global.L1::no_allocate.L2::cache_hint.v4.s32 [%0], {%1,%2,%3,%4}, %5;" :: "l"(p), "r"(v[u].x), "r"(v[u].y), "r"(v[u].z), "r"(v[u].w), "l"(first) : "memory");
      else if (MODE == 4)
        asm volatile("st.global.L1::no_allocate.L2::cache_hint.v4.s32 [%0], {%1,%2,%3,%4}, %5;" :: "l"(p), "r"(v[u].x), "r"(v[u].y), "r"(v[u].z), "r"(v[u].w), "l"(last) : "memory");
      else __stcs(p, v[u]);
    }
  }
}

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
// Block b copies chunks b, b + grid, ... Stage of chunk k is k mod S; chunk k + S is loaded into
// it once the store of chunk k has finished reading it, which is waited for LAG chunks later
// (wait_group.read LAG), so about S - LAG loads and LAG stores are in flight.
template <int STAGES, int LAG>
__global__ void bulk_copy(const char *src, char *dst, unsigned chunk, unsigned long long chunks) {
  extern __shared__ __align__(128) char buf[];
  __shared__ __align__(8) unsigned long long bars[STAGES];
  if (threadIdx.x != 0) return;
  const unsigned bar0 = (unsigned)__cvta_generic_to_shared(bars), buf0 = (unsigned)__cvta_generic_to_shared(buf);
  for (int i = 0; i < STAGES; ++i) asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(bar0 + 8 * i) : "memory");
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  const unsigned long long mine = chunks > blockIdx.x ? (chunks - blockIdx.x + gridDim.x - 1) / gridDim.x : 0;
  auto at = [&](unsigned long long k) { return (size_t)(blockIdx.x + k * gridDim.x) * chunk; };
  for (unsigned long long k = 0; k < STAGES && k < mine; ++k) load_chunk(buf0 + k * chunk, src + at(k), chunk, bar0 + 8 * k);
  int s = 0; unsigned parity = 0;
  for (unsigned long long k = 0; k < mine; ++k) {
    wait_parity(bar0 + 8 * s, parity);
    store_chunk(dst + at(k), buf0 + s * chunk, chunk);
    if (k >= LAG) {
      const unsigned long long r = k - LAG, next = r + STAGES;
      if (next < mine) {
        asm volatile("cp.async.bulk.wait_group.read %0;" ::"n"(LAG) : "memory");
        const unsigned rs = (unsigned)(r % STAGES);
        load_chunk(buf0 + rs * chunk, src + at(next), chunk, bar0 + 8 * rs);
      }
    }
    if (++s == STAGES) { s = 0; parity ^= 1u; }
  }
  asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
}

__global__ void mismatches(const int *a, const int *b, size_t n, unsigned long long *bad) {
  unsigned long long local = 0;
  for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) local += a[i] != b[i];
  if (local) atomicAdd(bad, local);
}
__global__ void fill(int *a, size_t n, int salt) {
  for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) a[i] = (int)(i * 2654435761u) ^ salt;
}

static cudaEvent_t e0, e1;
static int sms;
static unsigned long long *bad;
static double peak;
template <class F> void timed(const char *what, const char *src, char *dst, size_t bytes, F launch) {
  fill<<<sms * 4, 512>>>((int *)dst, bytes / 4, 7);
  launch();
  cudaError_t warm = cudaDeviceSynchronize();
  float best = 1e9;
  for (int r = 0; r < 5; ++r) {
    cudaEventRecord(e0); launch(); cudaEventRecord(e1); cudaEventSynchronize(e1);
    float ms; cudaEventElapsedTime(&ms, e0, e1); if (ms < best) best = ms;
  }
  cudaMemset(bad, 0, 8);
  mismatches<<<sms * 4, 512>>>((const int *)src, (const int *)dst, bytes / 4, bad);
  unsigned long long wrong = 0; cudaMemcpy(&wrong, bad, 8, cudaMemcpyDeviceToHost);
  double gbs = 2.0 * bytes / best / 1e6;
  printf("%-58s %7.1f GB/s %5.1f %% of peak  %llu words wrong%s%s\n", what, gbs, 100 * gbs / peak, wrong,
         warm == cudaSuccess ? "" : "  ERROR ", warm == cudaSuccess ? "" : cudaGetErrorString(warm));
}

template <int ILP> void run_grid(const char *tag, const char *src, char *dst, size_t bytes, int bps, int threads) {
  char what[128]; snprintf(what, sizeof what, "%s grid-stride .cs ilp %d, %d x %d", tag, ILP, threads, bps);
  timed(what, src, dst, bytes, [&] { grid_stride<ILP><<<sms * bps, threads>>>((const int4 *)src, (int4 *)dst, bytes / 16); });
}
template <int S, int LAG> void run_bulk(const char *tag, const char *src, char *dst, size_t bytes, unsigned chunk, int bps) {
  size_t smem = (size_t)S * chunk;
  if (smem * bps > 227 * 1024) return;
  cudaFuncSetAttribute(bulk_copy<S, LAG>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem);
  char what[128]; snprintf(what, sizeof what, "%s TMA bulk %2u KiB x %2d stages (lag %d), %d block/SM", tag, chunk >> 10, S, LAG, bps);
  timed(what, src, dst, bytes, [&] { bulk_copy<S, LAG><<<sms * bps, 32, smem>>>(src, dst, chunk, bytes / chunk); });
}

template <int MODE> void run_hinted(const char *tag, const char *src, char *dst, size_t bytes) {
  static const char *names[] = {"", "loads .L2::256B", "stores evict_first", "loads+stores evict_first", "stores evict_last"};
  char what[128]; snprintf(what, sizeof what, "%s grid-stride ilp 16, 256 x 1, %s", tag, names[MODE]);
  timed(what, src, dst, bytes, [&] { hinted<16, MODE><<<sms, 256>>>((const int4 *)src, (int4 *)dst, bytes / 16); });
}

int main(int argc, char **argv) {
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  int clk, bus; cudaDeviceGetAttribute(&clk, cudaDevAttrMemoryClockRate, 0); cudaDeviceGetAttribute(&bus, cudaDevAttrGlobalMemoryBusWidth, 0);
  peak = 2.0 * clk * 1e3 * bus / 8 / 1e9;
  printf("peak %.1f GB/s (2 x %d kHz x %d bit)\n", peak, clk, bus);
  cudaEventCreate(&e0); cudaEventCreate(&e1);
  cudaMalloc(&bad, 8);
  const size_t gib2 = 2ull << 30;
  char *base; if (cudaMalloc(&base, 2 * gib2 + (64ull << 20)) != cudaSuccess) { printf("allocation failed\n"); return 1; }
  fill<<<sms * 4, 512>>>((int *)base, gib2 / 4, 1);
  cudaDeviceSynchronize();
  if (argc > 1 && argv[1][0] == 'e') {
    // Copy engines: k back-to-back copies of N MiB between one pair of events.
    char *big; if (cudaMalloc(&big, 8ull << 30) != cudaSuccess) { printf("8 GiB allocation failed\n"); return 1; }
    fill<<<sms * 4, 512>>>((int *)big, (4ull << 30) / 4, 3);
    for (size_t mib : {400, 1024, 2048, 4096})
      for (int k : {1, 2, 4, 8}) {
        if (mib * k > 8192) continue;
        const size_t bytes = mib << 20; char *src = big, *dst = big + (4ull << 30);
        char what[96]; snprintf(what, sizeof what, "%zu MiB cudaMemcpy D2D x %d back to back", mib, k);
        // `timed` counts one copy's bytes: scale the launch count into the reported rate.
        fill<<<sms * 4, 512>>>((int *)dst, bytes / 4, 7);
        cudaDeviceSynchronize();
        float best = 1e9;
        for (int r = 0; r < 6; ++r) {
          cudaEventRecord(e0);
          for (int i = 0; i < k; ++i) cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice);
          cudaEventRecord(e1); cudaEventSynchronize(e1);
          float ms; cudaEventElapsedTime(&ms, e0, e1); if (r > 0 && ms < best) best = ms;
        }
        double gbs = 2.0 * bytes * k / best / 1e6;
        printf("%-58s %7.1f GB/s %5.1f %% of peak\n", what, gbs, 100 * gbs / peak);
      }
    return 0;
  }
  if (argc > 1) {
    // Second pass: L2 hints on the best grid-stride kernel, and 2 and 4 GiB arrays.
    char *big; if (cudaMalloc(&big, 8ull << 30) != cudaSuccess) { printf("8 GiB allocation failed\n"); return 1; }
    fill<<<sms * 4, 512>>>((int *)big, (4ull << 30) / 4, 3);
    for (size_t gib : {2, 4}) {
      const size_t bytes = gib << 30; char *src = big, *dst = big + (4ull << 30); char tag[16]; snprintf(tag, sizeof tag, "%zu GiB", gib);
      run_grid<16>(tag, src, dst, bytes, 1, 256);
      run_hinted<1>(tag, src, dst, bytes);
      run_hinted<2>(tag, src, dst, bytes);
      run_hinted<3>(tag, src, dst, bytes);
      run_hinted<4>(tag, src, dst, bytes);
      run_bulk<4, 2>(tag, src, dst, bytes, 16u << 10, 1);
      char what[96]; snprintf(what, sizeof what, "%s cudaMemcpy D2D", tag);
      timed(what, src, dst, bytes, [&] { cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice); });
    }
    printf("last error: %s\n", cudaGetErrorString(cudaGetLastError()));
    return 0;
  }
  const size_t offsets[] = {0, 256, 1024, 4096, 16384, 65536, 262144, 1 << 20, 2 << 20, 3 << 20, 4096 * 5 + 256, 12345 * 256};
  for (size_t off : offsets) {
    char *dst = base + gib2 + off, tag[32]; snprintf(tag, sizeof tag, "2 GiB, dst +%zu", off);
    run_grid<16>(tag, base, dst, gib2, 1, 256);
    run_grid<8>(tag, base, dst, gib2, 2, 256);
    char what[96]; snprintf(what, sizeof what, "%s cudaMemcpy D2D", tag);
    timed(what, base, dst, gib2, [&] { cudaMemcpyAsync(dst, base, gib2, cudaMemcpyDeviceToDevice); });
  }
  char *dst = base + gib2;
  for (unsigned chunk : {8u << 10, 16u << 10, 32u << 10}) {
    for (int bps : {1, 2}) {
      run_bulk<4, 2>("2 GiB", base, dst, gib2, chunk, bps);
      run_bulk<6, 3>("2 GiB", base, dst, gib2, chunk, bps);
      run_bulk<8, 4>("2 GiB", base, dst, gib2, chunk, bps);
      run_bulk<8, 2>("2 GiB", base, dst, gib2, chunk, bps);
      run_bulk<12, 6>("2 GiB", base, dst, gib2, chunk, bps);
      run_bulk<12, 3>("2 GiB", base, dst, gib2, chunk, bps);
    }
  }
  for (size_t mib : {256, 512, 1024}) {
    size_t bytes = mib << 20; char tag[32]; snprintf(tag, sizeof tag, "%zu MiB", mib);
    run_grid<16>(tag, base, dst, bytes, 1, 256);
    char what[96]; snprintf(what, sizeof what, "%s cudaMemcpy D2D", tag);
    timed(what, base, dst, bytes, [&] { cudaMemcpyAsync(dst, base, bytes, cudaMemcpyDeviceToDevice); });
  }
  printf("last error: %s\n", cudaGetErrorString(cudaGetLastError()));
}
