// Which of gpu-benches' gpu-l2-cache choices make its L2 read faster than gpubench's private-line
// `l2 strong read` (issue 53: 9.92 against 8.81 TB/s on an H200). One process, one GPU, the
// same footprints (9-23 MB, the peer's best range), each variant timed over one launch with
// events, best and median of 11 after a warm launch; bytes counted as the bytes each kernel
// asks for.
//   peer      gpu-l2-cache's pattern in our own kernel: 200000 blocks of 1024 threads, block b
//             reading region b % regions (512 KiB each: 32 steps of two 8-byte loads per
//             thread, unrolled), weak loads; then with 128, 64 and 32 KiB regions.
//   resident  gpubench's shape: a grid of what is resident (blocks_per_sm x SMs), each block
//             looping over slices b, b + grid, ... for several passes, 16-byte loads, U in
//             flight per thread.
//   stream    the peer's shape with gpubench's loads: far more blocks than are resident, block b
//             reading slice b % slices once and retiring, 16-byte loads, U in flight.
// Load kinds: cg (ld.global.cg, gpubench's strong read), na (L1::no_allocate), ca (default).
//   nvcc -O3 -arch=sm_90 -o l2-private-read-probe scripts/l2-private-read-probe.cu
//   ./l2-private-read-probe [resident]
// results/h200/peers-d023e4d/l2-private-read-probe.txt holds what it gave on an H200.
#include <algorithm>
#include <string>
#include <cstdio>
#include <vector>
#include <cuda_runtime.h>

#define CHECK(x)                                                                              \
  do {                                                                                        \
    cudaError_t e = (x);                                                                      \
    if (e != cudaSuccess) {                                                                   \
      printf("CUDA error %s at %s:%d\n", cudaGetErrorString(e), __FILE__, __LINE__);          \
      exit(1);                                                                                \
    }                                                                                         \
  } while (0)

enum Kind { CG, NA, CA };

template <Kind K> __device__ __forceinline__ uint4 load16(const uint4 *p) {
  uint4 v;
  if (K == CG)
    asm volatile("ld.global.cg.v4.u32 {%0,%1,%2,%3}, [%4];"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p));
  else if (K == NA)
    asm volatile("ld.global.L1::no_allocate.v4.u32 {%0,%1,%2,%3}, [%4];"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p));
  else
    asm volatile("ld.global.v4.u32 {%0,%1,%2,%3}, [%4];"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p));
  return v;
}

// gpu-l2-cache's access pattern, written here in our own code (the peer's source stays out of
// this repository): block b reads region b % regions, which is STEPS chunks of 2 x blockDim
// doubles spaced regions chunks apart; each step a thread loads two doubles blockDim apart,
// every step unrolled, so all 2 x STEPS loads can be in flight; plain (weak, L1-allocating)
// loads.
template <int STEPS>
__global__ void peer(double *out, const double *__restrict__ in, int regions) {
  const size_t chunk = 2 * (size_t)blockDim.x;
  const double *base = in + (blockIdx.x % regions) * chunk + threadIdx.x;
  double sum = 0;
#pragma unroll
  for (int s = 0; s < STEPS; ++s) {
    const double *p = base + (size_t)s * regions * chunk;
    sum += p[0] * p[blockDim.x];
  }
  if (sum == 23.12) out[threadIdx.x] = sum;
}

// One slice of `count` vectors, U loads in flight per thread.
template <Kind K, int U>
__device__ __forceinline__ unsigned read_slice(const uint4 *d, unsigned count, unsigned &sum) {
  unsigned i = threadIdx.x;
  for (; i + (U - 1) * blockDim.x < count; i += U * blockDim.x) {
    uint4 v[U];
#pragma unroll
    for (int u = 0; u < U; ++u) v[u] = load16<K>(d + i + u * blockDim.x);
#pragma unroll
    for (int u = 0; u < U; ++u) sum += v[u].x + v[u].y + v[u].z + v[u].w;
  }
  return sum;
}

template <Kind K, int U>
__global__ void resident(const uint4 *d, unsigned slice, unsigned slices, int passes,
                         unsigned *sink) {
  unsigned sum = 0;
#pragma unroll 1
  for (int p = 0; p < passes; ++p)
#pragma unroll 1
    for (unsigned s = blockIdx.x % slices; s < slices; s += gridDim.x)
      read_slice<K, U>(d + (size_t)s * slice, slice, sum);
  if (sum == 0x9e3779b9u) sink[0] = sum;
}

template <Kind K, int U>
__global__ void stream(const uint4 *d, unsigned slice, unsigned slices, unsigned *sink) {
  unsigned sum = 0;
  read_slice<K, U>(d + (size_t)(blockIdx.x % slices) * slice, slice, sum);
  if (sum == 0x9e3779b9u) sink[0] = sum;
}

// Skips a variant whose slice is shorter than one round of U loads per thread (it would read
// nothing: read_slice has no tail loop, so that every timed load is one of U in flight).
// `stream` with a dynamic shared array that caps the blocks per SM (the array is unused).
template <Kind K, int U>
__global__ void stream_capped(const uint4 *d, unsigned slice, unsigned slices, unsigned *sink) {
  extern __shared__ unsigned pad[];
  unsigned sum = 0;
  read_slice<K, U>(d + (size_t)(blockIdx.x % slices) * slice, slice, sum);
  if (sum == 0x9e3779b9u) pad[0] = sum, sink[0] = pad[0];
}

// `stream` of load kind `kind` (CG or NA) with `u` (4, 8 or 16) loads in flight.
template <Kind K>
void launch_stream_of(int u, int grid, int threads, const uint4 *d, unsigned slice,
                      unsigned slices, unsigned *sink) {
  if (u == 4) stream<K, 4><<<grid, threads>>>(d, slice, slices, sink);
  else if (u == 8) stream<K, 8><<<grid, threads>>>(d, slice, slices, sink);
  else stream<K, 16><<<grid, threads>>>(d, slice, slices, sink);
}

void launch_stream(Kind kind, int u, int grid, int threads, const uint4 *d, unsigned slice,
                   unsigned slices, unsigned *sink) {
  if (kind == CG) launch_stream_of<CG>(u, grid, threads, d, slice, slices, sink);
  else launch_stream_of<NA>(u, grid, threads, d, slice, slices, sink);
}

template <class F> void timed(const char *name, double bytes, F launch, size_t slice_vectors = 0,
                              int threads = 0, int u = 0) {
  if (slice_vectors != 0 && slice_vectors < (size_t)threads * u) {
    printf("%-44s skipped: slice shorter than %d x %d vectors\n", name, u, threads);
    return;
  }
  cudaEvent_t a, b;
  CHECK(cudaEventCreate(&a));
  CHECK(cudaEventCreate(&b));
  launch();
  CHECK(cudaDeviceSynchronize());
  std::vector<float> ms;
  for (int r = 0; r < 11; ++r) {
    CHECK(cudaEventRecord(a));
    launch();
    CHECK(cudaEventRecord(b));
    CHECK(cudaEventSynchronize(b));
    float t;
    CHECK(cudaEventElapsedTime(&t, a, b));
    ms.push_back(t);
  }
  CHECK(cudaGetLastError());
  std::sort(ms.begin(), ms.end());
  printf("%-44s best %6.2f TB/s  median %6.2f TB/s  (%.3f ms)\n", name, bytes / ms[0] * 1e-9,
         bytes / ms[5] * 1e-9, ms[0]);
  CHECK(cudaEventDestroy(a));
  CHECK(cudaEventDestroy(b));
}

// How many blocks read a region at once: the resident blocks (2 of 1024 threads per SM) over
// the regions, at least 1. Where it is 1 every line is read by one block (private lines).
static double readers(int sms, size_t foot, size_t region) {
  return std::max(1.0, 2.0 * sms / (double)(foot / region));
}

int main(int argc, char **argv) {
  // `resident`: also gpubench's grid before d023e4d (as many blocks as are resident, each
  // looping over its slices), about 10 s more.
  const bool with_resident = argc > 1 && std::string(argv[1]) == "resident";
  int sms;
  CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  cudaDeviceProp prop;
  CHECK(cudaGetDeviceProperties(&prop, 0));
  printf("%s, %d SMs, L2 %d B\n", prop.name, sms, prop.l2CacheSize);
  const size_t max_bytes = 64ull << 20;
  double *A;
  uint4 *d;
  unsigned *sink;
  CHECK(cudaMalloc(&A, 1 << 20));
  CHECK(cudaMalloc(&d, max_bytes + (1 << 20)));
  CHECK(cudaMemset(d, 1, max_bytes + (1 << 20)));
  CHECK(cudaMalloc(&sink, 4));
  char name[160];
  const int blocks = 200000;
  for (int regions : {18, 30, 44, 60, 80}) {
    const size_t foot = (size_t)regions * 512 * 1024;
    printf("--- footprint %.1f MB\n", foot / 1e6);
    // The peer's kernel as it is (512 KiB regions), then with smaller regions over the same
    // footprint (N = 16, 8, 4: 128, 64, 32 KiB): more regions, fewer blocks reading each.
    snprintf(name, sizeof name, "peer N=64 512 KiB regions, %.1f readers", readers(sms, foot, 512 << 10));
    timed(name, 512.0 * 1024 * blocks,
          [&] { peer<32><<<blocks, 1024>>>(A, (const double *)d, regions); });
    snprintf(name, sizeof name, "peer N=16 128 KiB regions, %.1f readers", readers(sms, foot, 128 << 10));
    timed(name, 128.0 * 1024 * blocks,
          [&] { peer<8><<<blocks, 1024>>>(A, (const double *)d, regions * 4); });
    snprintf(name, sizeof name, "peer N=8 64 KiB regions, %.1f readers", readers(sms, foot, 64 << 10));
    timed(name, 64.0 * 1024 * blocks,
          [&] { peer<4><<<blocks, 1024>>>(A, (const double *)d, regions * 8); });
    snprintf(name, sizeof name, "peer N=4 32 KiB regions, %.1f readers", readers(sms, foot, 32 << 10));
    timed(name, 32.0 * 1024 * blocks,
          [&] { peer<2><<<blocks, 1024>>>(A, (const double *)d, regions * 16); });
    // The peer's shape with gpubench's 16-byte loads: many more blocks than are resident,
    // block b reading slice b % slices once, where the slices outnumber the resident blocks
    // (private lines).
    for (int threads : {512, 1024}) {
      for (int u : {4, 8, 16}) {
        const unsigned slice = u * threads;
        const unsigned slices = foot / 16 / slice;
        const int resident_blocks = sms * (2048 / threads);
        if (slices < (unsigned)resident_blocks) continue;
        const int grid = (int)std::min<size_t>(400000, (size_t)30e9 / (slice * 16));
        for (Kind kind : {CG, NA}) {
          snprintf(name, sizeof name, "stream %s U%d %4d slice %u KiB, %u slices",
                   kind == CG ? "cg" : "na", u, threads, slice * 16 / 1024, slices);
          timed(name, (double)grid * slice * 16,
                [&] { launch_stream(kind, u, grid, threads, d, slice, slices, sink); });
        }
      }
    }
    // Streaming at fewer blocks per SM (a shared array caps them), private lines only.
    int smem_per_sm;
    CHECK(cudaDeviceGetAttribute(&smem_per_sm, cudaDevAttrMaxSharedMemoryPerMultiprocessor, 0));
    CHECK(cudaFuncSetAttribute(stream_capped<CG, 4>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                               200 << 10));
    for (int threads : {128, 256, 512, 1024}) {
      for (int bps : {1, 2, 4, 8}) {
        if (threads * bps > 2048) continue;
        const unsigned slice = 4 * threads;
        const unsigned slices = foot / 16 / slice;
        if (slices < (unsigned)(sms * bps)) continue;
        const size_t smem = std::min<size_t>(200 << 10, smem_per_sm / bps - 2048);
        const int grid = (int)std::min<size_t>(400000, (size_t)30e9 / (slice * 16));
        snprintf(name, sizeof name, "stream cg U4 %4dx%d slice %u KiB, %u slices", threads, bps,
                 slice * 16 / 1024, slices);
        timed(name, (double)grid * slice * 16,
              [&] { stream_capped<CG, 4><<<grid, threads, smem>>>(d, slice, slices, sink); });
      }
    }
    if (!with_resident) continue;
    // gpubench's private lines: a resident grid, every block its own slices (slices >= grid),
    // passes enough for about 10 ms.
    const int passes = (int)std::max<size_t>(1, (size_t)100e9 / foot);
    for (int threads : {256, 512, 1024}) {
      for (int bps : {1, 2, 4, 8}) {
        if (threads * bps > 2048) continue;
        const int grid = sms * bps;
        for (int u : {4, 8}) {
          const unsigned slice = u * threads;
          const unsigned slices = foot / 16 / slice;
          if (slices < (unsigned)grid) continue;
          snprintf(name, sizeof name, "resident cg U%d %4dx%d slice %u KiB", u, threads, bps,
                   slice * 16 / 1024);
          auto run = [&] {
            if (u == 4) resident<CG, 4><<<grid, threads>>>(d, slice, slices, passes, sink);
            else resident<CG, 8><<<grid, threads>>>(d, slice, slices, passes, sink);
          };
          timed(name, (double)slices * slice * 16 * passes, run);
        }
      }
    }
  }
  return 0;
}
