// Which L2 partition holds a line, seen from each SM: the first touch of L2-resident lines.
//
// gpubench's one-thread `.cg` chase reads 284 cycles up to about 24 MiB and 533 past it on an
// H100 (the driver's L2 is 50 MiB), which the docs call the near and the far L2. This probe asks
// what a single line costs the first time an SM reads it: one block on a "warm" SM reads a fresh
// 256 KiB region (2048 lines of 128 B) so that every line sits in the L2; one thread of a block on
// a "probe" SM then walks the region once in address order (pass 0, first touch) and again
// (pass 1), timing each load by itself (clock, load, a shared store that waits for the value,
// clock: the window also holds the store's issue). Every probe gets its own fresh region, so no
// earlier probe's reads have touched its lines. Sweep 0 warms from SM 0 and probes from every SM;
// sweep 1 warms from the SM that sweep 0 found slowest on first touch.
//   nvcc -O3 -arch=sm_90 -o l2-partition-probe scripts/l2-partition-probe.cu
//   ./l2-partition-probe lines.csv > summary.txt
// lines.csv: sweep,warm_sm,probe_sm,pass,line,cycles (line = index in its region, 128 B apart).
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <vector>
#include <cuda_runtime.h>

#define CHECK(x)                                                                                   \
  do {                                                                                             \
    cudaError_t e = (x);                                                                           \
    if (e != cudaSuccess) {                                                                        \
      fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e));                                      \
      return 1;                                                                                    \
    }                                                                                              \
  } while (0)

__device__ __forceinline__ unsigned smid() {
  unsigned r;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(r));
  return r;
}
__device__ __forceinline__ unsigned ld_cg(const unsigned *p) {
  unsigned v;
  asm volatile("ld.global.cg.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
}
__device__ __forceinline__ long long clock_now() {
  long long t;
  asm volatile("mov.u64 %0, %%clock64;" : "=l"(t)::"memory");
  return t;
}
// One block on SM `target` claims the work; every other block leaves at once.
__device__ __forceinline__ bool claim(unsigned target, int *flag) {
  return smid() == target && atomicCAS(flag, 0, 1) == 0;
}

__global__ void warm(const unsigned *region, unsigned lines, unsigned target, int *flag, unsigned *sink) {
  __shared__ int mine;
  if (threadIdx.x == 0) mine = claim(target, flag);
  __syncthreads();
  if (!mine) return;
  unsigned acc = 0;
  for (unsigned j = threadIdx.x; j < lines; j += blockDim.x) acc += ld_cg(region + j * 32);
  if (acc == 0xdeadbeefu) *sink = acc;
}

// Each line's first word holds the word index of the next line (the last line's: 0), so each
// load's address waits for the one before as well.
__global__ void probe(const unsigned *region, unsigned lines, unsigned passes, unsigned target, int *flag,
                      unsigned *out) {
  __shared__ unsigned held;
  if (threadIdx.x != 0 || !claim(target, flag)) return;
  volatile unsigned *hold = &held;
  for (unsigned p = 0; p < passes; ++p) {
    unsigned cur = 0;
#pragma unroll 1
    for (unsigned j = 0; j < lines; ++j) {
      const long long t0 = clock_now();
      const unsigned next = ld_cg(region + cur);
      *hold = next;
      const long long t1 = clock_now();
      out[p * lines + j] = (unsigned)(t1 - t0);
      cur = next;
    }
  }
}

int main(int argc, char **argv) {
  const unsigned lines = 2048, words = lines * 32, passes = 2, sweeps = 2;
  int sms;
  CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  const size_t regions = (size_t)sms * sweeps;
  unsigned *d, *out, *sink;
  int *flags;
  CHECK(cudaMalloc(&d, regions * words * 4));
  CHECK(cudaMalloc(&out, regions * passes * lines * 4));
  CHECK(cudaMalloc(&flags, regions * 2 * sizeof(int)));
  CHECK(cudaMalloc(&sink, 4));
  CHECK(cudaMemset(flags, 0, regions * 2 * sizeof(int)));
  std::vector<unsigned> chain((size_t)regions * words, 0);
  for (size_t r = 0; r < regions; ++r)
    for (unsigned j = 0; j < lines; ++j) chain[r * words + j * 32] = ((j + 1) % lines) * 32;
  CHECK(cudaMemcpy(d, chain.data(), chain.size() * 4, cudaMemcpyHostToDevice));
  printf("regions of %u lines from %p; %d SMs\n", lines, (void *)d, sms);
  std::vector<unsigned> host((size_t)regions * passes * lines);
  std::vector<int> claimed(regions * 2);
  FILE *csv = fopen(argc > 1 ? argv[1] : "lines.csv", "w");
  fprintf(csv, "sweep,warm_sm,probe_sm,pass,line,cycles\n");
  unsigned warm_sm = 0;
  for (unsigned sweep = 0; sweep < sweeps; ++sweep) {
    for (int s = 0; s < sms; ++s) {
      const size_t r = (size_t)sweep * sms + s;
      const unsigned *region = d + r * words;
      warm<<<1024, 32>>>(region, lines, warm_sm, flags + 2 * r, sink);
      probe<<<1024, 32>>>(region, lines, passes, s, flags + 2 * r + 1, out + r * passes * lines);
    }
    CHECK(cudaDeviceSynchronize());
    CHECK(cudaMemcpy(host.data(), out, host.size() * 4, cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(claimed.data(), flags, claimed.size() * sizeof(int), cudaMemcpyDeviceToHost));
    // Near and far: the lowest first-touch median over SMs, and 100 cycles above it.
    std::vector<double> medians(sms);
    for (int s = 0; s < sms; ++s) {
      const size_t r = (size_t)sweep * sms + s;
      std::vector<unsigned> v(host.begin() + r * passes * lines, host.begin() + r * passes * lines + lines);
      std::nth_element(v.begin(), v.begin() + lines / 2, v.end());
      medians[s] = v[lines / 2];
    }
    const double fastest = *std::min_element(medians.begin(), medians.end());
    printf("sweep %u: warm SM %u; fastest first-touch median %.0f cycles\n", sweep, warm_sm, fastest);
    printf("probe_sm claimed(warm,probe) pass0_median pass0_far_share pass1_median pass0_min pass0_max\n");
    int slowest = 0;
    double slowest_share = -1;
    for (int s = 0; s < sms; ++s) {
      const size_t r = (size_t)sweep * sms + s;
      const unsigned *p0 = host.data() + r * passes * lines, *p1 = p0 + lines;
      unsigned far = 0, lo = ~0u, hi = 0;
      for (unsigned j = 0; j < lines; ++j) {
        far += p0[j] > fastest + 100;
        lo = std::min(lo, p0[j]);
        hi = std::max(hi, p0[j]);
        for (unsigned p = 0; p < passes; ++p)
          fprintf(csv, "%u,%u,%d,%u,%u,%u\n", sweep, warm_sm, s, p, j, p0[p * lines + j]);
      }
      std::vector<unsigned> v1(p1, p1 + lines);
      std::nth_element(v1.begin(), v1.begin() + lines / 2, v1.end());
      const double share = (double)far / lines;
      printf("%d %d,%d %.0f %.3f %u %u %u\n", s, claimed[2 * r], claimed[2 * r + 1], medians[s], share,
             v1[lines / 2], lo, hi);
      if (share > slowest_share && s != (int)warm_sm) slowest_share = share, slowest = s;
    }
    warm_sm = slowest;
  }
  fclose(csv);
  return 0;
}
