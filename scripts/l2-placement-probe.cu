// L2 read bandwidth by where the lines are homed (issue #32: "footprints placed in the near or
// the far L2 partition"). The H100's L2 has two partitions of 66 SMs each; a line's home
// alternates between them by aligned 4 KiB blocks (results/h100/l2-partitions). This probe
//  1. has one block (on SM W) read a region just pushed out of the L2 (ld.global.cg), so that
//     every line sits in its home partition and, if homed across W, as a copy on W's side;
//  2. has the first block on every SM time the first touch of one line in each of 16 blocks:
//     from W's side all are near, from across about half are far, so a quarter or more far
//     puts the SM across (the cut: midpoint of the 10th and 90th percentiles of all touches);
//  3. has one SM across W time the first touch of another line of every block: far means homed
//     on W's side;
//  4. reads the region, flushed again, many times from four 256-thread blocks per SM (the
//     first four each SM receives, each its own share of the SM's blocks; every load reads a
//     whole 4 KiB block, 4 in flight per thread, as the bandwidth suite's L2 read does), each SM its own list of 4 KiB blocks (private lines), in three
//     placements: "own side" (each SM reads only blocks homed in its own partition) and
//     "other side" (only blocks homed across), each either as runs (an SM takes consecutive
//     homes of its side in address order) or dealt (home i to SM i mod 66); "runs" (SM k the
//     k-th stretch of the region) and "interleaved" (block k to SM k mod 132), with weak loads (ld.global.L1::no_allocate, which leave
//     a copy on the reader's side) and strong ones (ld.global.cg).
// Bytes = the region × passes; best of five launches after a warm one, timed with events. The
// region is flushed (256 MiB read) before steps 1 and 4.
//   nvcc -O3 -arch=sm_90 -o placement scripts/l2-placement-probe.cu && ./placement 3168 && ./placement 4224 (blocks of 4 KiB, at least 16 per SM for the side probe)
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <cuda_runtime.h>

#define BLOCK_WORDS 1024 // 4 KiB
#define BLOCK_VECTORS 256

__device__ __forceinline__ unsigned smid() { unsigned r; asm volatile("mov.u32 %0, %%smid;" : "=r"(r)); return r; }
__device__ __forceinline__ unsigned ld_cg(const unsigned *p) {
  unsigned v; asm volatile("ld.global.cg.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory"); return v;
}
__device__ __forceinline__ uint4 ld_v4(const uint4 *p, bool strong) {
  uint4 v;
  if (strong) asm volatile("ld.global.cg.v4.u32 {%0,%1,%2,%3}, [%4];" : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p));
  else asm volatile("ld.global.L1::no_allocate.v4.u32 {%0,%1,%2,%3}, [%4];" : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p));
  return v;
}

__global__ void flush(const uint4 *f, size_t n, unsigned *sink) {
  unsigned acc = 0;
  for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) { const uint4 v = ld_v4(f + i, false); acc ^= v.x ^ v.y ^ v.z ^ v.w; }
  if (acc == 0x9e3779b9u) *sink = acc;
}

// One timed first touch: the clock, the load, a volatile shared store that waits for it, the clock.
__device__ __forceinline__ unsigned first_touch(const unsigned *p) {
  __shared__ unsigned held;
  volatile unsigned *hold = &held;
  const long long start = clock64();
  const unsigned v = ld_cg(p);
  *hold = v;
  return (unsigned)(clock64() - start);
}

// One block (on SM W) reads every line of the region with ld.global.cg: each line then sits in
// its home partition, and lines homed across W also as a copy on W's side.
__global__ void warm(const unsigned *region, unsigned lines, unsigned *who, unsigned *sink) {
  if (threadIdx.x == 0) *who = smid();
  unsigned acc = 0;
  for (unsigned j = threadIdx.x; j < lines; j += blockDim.x) acc += ld_cg(region + (size_t)j * 32);
  if (acc == 0x9e3779b9u) *sink = acc;
}

// The first block on each SM times the first touch of line `line` of each of its SIDE_PROBES
// blocks (SM s takes blocks s, s + sms, ...): from W's side every line is near (a copy or the
// home); from across, the lines homed on W's side are far.
#define SIDE_PROBES 16
__global__ void time_sms(const unsigned *region, unsigned line, int sms, int *claimed, unsigned *out) {
  if (threadIdx.x != 0) return;
  const unsigned s = smid();
  if (atomicCAS(&claimed[s], 0, 1) != 0) return;
  for (int k = 0; k < SIDE_PROBES; ++k) out[s * SIDE_PROBES + k] = first_touch(region + (size_t)(s + k * sms) * BLOCK_WORDS + line * 32);
}

// The first block on SM `probe` (across W) times the first touch of line `line` of every block:
// far = homed on W's side, near = homed on the probe's.
__global__ void time_blocks(const unsigned *region, unsigned blocks, unsigned line, unsigned probe, int *claimed, unsigned *out) {
  if (threadIdx.x != 0 || smid() != probe || atomicCAS(claimed, 0, 1) != 0) return;
  for (unsigned b = 0; b < blocks; ++b) out[b] = first_touch(region + (size_t)b * BLOCK_WORDS + line * 32);
}

// The first WORKERS blocks on each SM read that SM's list of 4 KiB blocks `passes` times, in the
// suite's manner: worker t takes entries t, t + WORKERS, ... of the list (its own lines), and
// each of its loads reads one whole 4 KiB block (256 threads × 16 B), 4 loads in flight per
// thread on 4 consecutive entries (modulo the worker's count), 64 KiB per SM in flight.
#define WORKERS 4
#define THREADS 256
#define MAX_LIST 2048
__global__ void read_lists(const uint4 *region, const unsigned *lists, const unsigned *first, int passes, bool strong,
                           int *claimed, unsigned *sink, long long *clocks) {
  __shared__ int ticket;
  __shared__ unsigned sm, list[MAX_LIST];
  if (threadIdx.x == 0) { sm = smid(); ticket = atomicAdd(&claimed[sm], 1); }
  __syncthreads();
  if (ticket >= WORKERS) return;
  const unsigned begin = first[sm], all = min(first[sm + 1] - begin, (unsigned)MAX_LIST);
  unsigned count = 0;
  for (unsigned j = ticket; j < all; j += WORKERS) {
    if (threadIdx.x == 0) list[count] = lists[begin + j];
    ++count;
  }
  __syncthreads();
  long long c0 = clock64(), g0;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(g0));
  const unsigned total = count * (unsigned)passes;
  unsigned acc = 0, at = 0;
  for (unsigned i = 0; i + 4 <= total; i += 4) {
    uint4 x[4];
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      const unsigned e = at + k < count ? at + k : at + k - count;
      x[k] = ld_v4(region + (size_t)list[e] * BLOCK_VECTORS + threadIdx.x, strong);
    }
    at = at + 4 < count ? at + 4 : at + 4 - count;
#pragma unroll
    for (int k = 0; k < 4; ++k) acc ^= x[k].x ^ x[k].y ^ x[k].z ^ x[k].w; // every word: a word left unused lets ptxas split the load
  }
  if (acc == 0x9e3779b9u) *sink = acc;
  if (threadIdx.x == 0 && ticket == 0 && sm == 0) {
    long long g1; asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(g1));
    clocks[0] = clock64() - c0; clocks[1] = g1 - g0;
  }
}

int main(int argc, char **argv) {
  // The region in 4 KiB blocks: 3168 = 2 sides x 66 SMs x 4 workers x 6 (12.375 MiB), so that
  // every worker of every placement reads the same number of blocks where the homes split evenly.
  const unsigned blocks = argc > 1 ? (unsigned)atoi(argv[1]) : 3168;
  const double mib = blocks / 256.0;
  int sms; cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  const size_t flush_bytes = 256ull << 20;
  unsigned *region, *out, *ref, *sink, *dlists, *dfirst; uint4 *f; int *claimed;
  if (blocks < (unsigned)sms * SIDE_PROBES) { printf("the region must hold at least %d blocks of 4 KiB\n", sms * SIDE_PROBES); return 2; }
  cudaMalloc(&region, (size_t)blocks * BLOCK_WORDS * 4); cudaMalloc(&f, flush_bytes);
  cudaMalloc(&out, 4 * std::max<size_t>(blocks, 1024)); cudaMalloc(&ref, 4); cudaMalloc(&sink, 4);
  cudaMalloc(&claimed, 4 * 1024); cudaMalloc(&dlists, 4 * blocks); cudaMalloc(&dfirst, 4 * 1025);
  cudaMemset(region, 1, (size_t)blocks * BLOCK_WORDS * 4); cudaMemset(f, 2, flush_bytes);
  auto flush_l2 = [&] { flush<<<sms * 4, 512>>>(f, flush_bytes / 16, sink); };

  auto cut_of = [](std::vector<unsigned> v) {
    std::sort(v.begin(), v.end());
    return (v[v.size() / 10] + v[v.size() * 9 / 10]) / 2;
  };
  flush_l2();
  warm<<<1, 1024>>>(region, blocks * 32, ref, sink);
  unsigned w; cudaMemcpy(&w, ref, 4, cudaMemcpyDeviceToHost);
  cudaMemset(claimed, 0, 4 * 1024);
  cudaMemset(out, 0, 4 * std::max<size_t>(blocks, 1024));
  time_sms<<<1024, 32>>>(region, 0, sms, claimed, out);
  std::vector<unsigned> ts(sms * SIDE_PROBES); cudaMemcpy(ts.data(), out, 4 * ts.size(), cudaMemcpyDeviceToHost);
  const unsigned sm_cut = cut_of(ts);
  std::vector<int> same, across;
  for (int s = 0; s < sms; ++s) {
    int slow = 0;
    for (int k = 0; k < SIDE_PROBES; ++k) slow += ts[s * SIDE_PROBES + k] >= sm_cut;
    if (ts[s * SIDE_PROBES] == 0) { printf("SM %d got no block in the side probe\n", s); return 1; }
    (slow * 4 >= SIDE_PROBES ? across : same).push_back(s);
  }
  printf("region %.3f MiB, %u blocks of 4 KiB; warmed from SM %u; side probe cut %u cycles\n", mib, blocks, w, sm_cut);
  printf("SMs on SM %u's side: %zu, across: %zu; SM %u's side:", w, same.size(), across.size(), w);
  for (int s : same) printf(" %d", s);
  printf("\n");
  if (across.empty()) { printf("no SM across\n"); return 1; }
  const unsigned probe = across[0];
  cudaMemset(claimed, 0, 4);
  time_blocks<<<1024, 32>>>(region, blocks, 5, probe, claimed, out);
  std::vector<unsigned> t(blocks);
  cudaMemcpy(t.data(), out, 4 * blocks, cudaMemcpyDeviceToHost);
  const unsigned cut = cut_of(t);
  // far from the probe = homed on W's side (`near` below means near to W's side).
  std::vector<unsigned> near, far;
  for (unsigned b = 0; b < blocks; ++b) (t[b] >= cut ? near : far).push_back(b);
  auto median_of = [&](const std::vector<unsigned> &idx) { std::vector<unsigned> v; for (unsigned b : idx) v.push_back(t[b]); std::sort(v.begin(), v.end()); return v.empty() ? 0u : v[v.size() / 2]; };
  auto between = [&](unsigned lo, unsigned hi) { int n = 0; for (unsigned x : t) n += x > lo && x < hi; return n; };
  printf("from SM %u: cut %u cycles; %zu blocks homed on SM %u's side (median %u), %zu on SM %u's (median %u); %d blocks within 40 cycles of the cut\n",
         probe, cut, near.size(), w, median_of(near), far.size(), probe, median_of(far), between(cut - 40, cut + 40));
  if (near.size() < (size_t)sms || far.size() < (size_t)sms) { printf("too few blocks of one kind\n"); return 1; }
  flush_l2();

  // Lists: per SM, the blocks it reads. `own`: an SM reads blocks homed on its side; `other`:
  // homed across; `interleaved`: block k to SM k mod sms.
  auto build = [&](int pattern, std::vector<unsigned> &lists, std::vector<unsigned> &first) {
    std::vector<std::vector<unsigned>> per(sms);
    // 0, 1: own / other side, each SM a run of its side's homes in address order; 2: block k to
    // SM k mod sms; 3: SM k the k-th run of blocks in address order; 4, 5: as 0 and 1, but
    // home i to SM i mod (the side's SMs).
    if (pattern == 2) {
      for (unsigned b = 0; b < blocks; ++b) per[b % sms].push_back(b);
    } else if (pattern == 3) {
      for (unsigned b = 0; b < blocks; ++b) per[(size_t)b * sms / blocks].push_back(b);
    } else {
      for (int group = 0; group < 2; ++group) {
        const std::vector<int> &members = group == 0 ? same : across;
        // Homed on W's side: `near`; the SMs of group 0 are on that side.
        const bool own = pattern == 0 || pattern == 4;
        const std::vector<unsigned> &homes = (group == 0) == own ? near : far;
        for (size_t i = 0; i < homes.size(); ++i) {
          const size_t m = pattern < 4 ? i * members.size() / homes.size() : i % members.size();
          per[members[m]].push_back(homes[i]);
        }
      }
    }
    lists.clear(); first.assign(1, 0);
    for (int s = 0; s < sms; ++s) { lists.insert(lists.end(), per[s].begin(), per[s].end()); first.push_back(lists.size()); }
  };
  const char *names[] = {"own side, runs", "other side, runs", "interleaved", "runs", "own side, dealt", "other side, dealt"};
  long long *dclocks; cudaMalloc(&dclocks, 16);
  {
    // About a second of reading first, so that the SM clock has left idle before anything is timed.
    std::vector<unsigned> lists(blocks), first(sms + 1);
    for (unsigned b = 0; b < blocks; ++b) lists[b] = b;
    for (int s2 = 0; s2 <= sms; ++s2) first[s2] = (unsigned)((size_t)blocks * s2 / sms);
    cudaMemcpy(dlists, lists.data(), 4 * blocks, cudaMemcpyHostToDevice);
    cudaMemcpy(dfirst, first.data(), 4 * (sms + 1), cudaMemcpyHostToDevice);
    for (int r = 0; r < 100; ++r) {
      cudaMemset(claimed, 0, 4 * 1024);
      read_lists<<<sms * 2 * WORKERS, THREADS>>>((const uint4 *)region, dlists, dfirst, (int)(24000 / mib) / 4 * 4, false, claimed, sink, dclocks);
    }
    cudaDeviceSynchronize();
  }
  cudaEvent_t e0, e1; cudaEventCreate(&e0); cudaEventCreate(&e1);
  const int passes = std::max(4, (int)(24000 / mib) / 4 * 4);
  for (int strong = 0; strong < 2; ++strong)
    for (int pattern = 0; pattern < 6; ++pattern) {
      std::vector<unsigned> lists, first;
      build(pattern, lists, first);
      cudaMemcpy(dlists, lists.data(), 4 * lists.size(), cudaMemcpyHostToDevice);
      cudaMemcpy(dfirst, first.data(), 4 * first.size(), cudaMemcpyHostToDevice);
      float best = 1e9; int missing = 0;
      for (int r = 0; r < 6; ++r) {
        cudaMemset(claimed, 0, 4 * 1024);
        cudaEventRecord(e0);
        read_lists<<<sms * 2 * WORKERS, THREADS>>>((const uint4 *)region, dlists, dfirst, passes, strong, claimed, sink, dclocks);
        cudaEventRecord(e1); cudaEventSynchronize(e1);
        float ms; cudaEventElapsedTime(&ms, e0, e1); if (r > 0 && ms < best) best = ms;
        std::vector<int> c(sms); cudaMemcpy(c.data(), claimed, 4 * sms, cudaMemcpyDeviceToHost);
        for (int s = 0; s < sms; ++s) missing += c[s] < WORKERS;
      }
      const double bytes = (double)lists.size() * 4096 * passes;
      long long cl[2]; cudaMemcpy(cl, dclocks, 16, cudaMemcpyDeviceToHost);
      printf("SM 0 at %.0f MHz in the last launch; ", 1e3 * cl[0] / cl[1]);
      printf("%-6s loads, %-17s: %7.1f GB/s  (%d passes, %.3f MiB; SMs with fewer than 4 readers: %d)\n",
             strong ? "strong" : "weak", names[pattern], bytes / (best * 1e-3) / 1e9, passes, mib, missing);
    }
  printf("last error: %s\n", cudaGetErrorString(cudaGetLastError()));
}
