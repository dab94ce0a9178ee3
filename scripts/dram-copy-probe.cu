// DRAM copy on an H100: SM kernels of several shapes against cudaMemcpy device to device
// (which launches no kernel: the copy engines). 2 GiB arrays; bytes counted = read + write;
// best of five launches between CUDA events. nvcc -O3 -arch=sm_90 -o copy scripts/dram-copy-probe.cu
#include <cstdio>
#include <cuda_runtime.h>
#include <cuda.h>
// DRAM copy variants: bytes moved = read + write.
template <int ILP, int MODE>
__global__ void copy(const int4 *__restrict__ src, int4 *__restrict__ dst, size_t n) {
  size_t stride = (size_t)gridDim.x * blockDim.x * ILP;
  for (size_t i = (size_t)blockIdx.x * blockDim.x * ILP + threadIdx.x; i < n; i += stride) {
    int4 v[ILP];
#pragma unroll
    for (int u = 0; u < ILP; ++u) {
      size_t j = i + (size_t)u * blockDim.x;
      if (MODE == 0) v[u] = src[j];
      else if (MODE == 1) v[u] = __ldcs(src + j);
      else v[u] = __ldlu(src + j);
    }
#pragma unroll
    for (int u = 0; u < ILP; ++u) {
      size_t j = i + (size_t)u * blockDim.x;
      if (MODE == 0) dst[j] = v[u];
      else __stcs(dst + j, v[u]);
    }
  }
}
template <int ILP, int MODE>
void run(const char *name, int4 *a, int4 *b, size_t n, int sms, int bps, int threads) {
  cudaEvent_t e0, e1; cudaEventCreate(&e0); cudaEventCreate(&e1);
  copy<ILP, MODE><<<sms * bps, threads>>>(a, b, n);
  float best = 1e9;
  for (int r = 0; r < 5; ++r) {
    cudaEventRecord(e0);
    copy<ILP, MODE><<<sms * bps, threads>>>(a, b, n);
    cudaEventRecord(e1); cudaEventSynchronize(e1);
    float ms; cudaEventElapsedTime(&ms, e0, e1); if (ms < best) best = ms;
  }
  printf("%-22s ilp %d blocks/SM %2d threads %4d: %.1f GB/s (read+write)\n", name, ILP, bps, threads, 2.0 * n * 16 / best / 1e6);
}

// Each block copies one contiguous segment of the arrays, its threads side by side.
template <int ILP, bool CS>
__global__ void segment(const int4 *__restrict__ src, int4 *__restrict__ dst, size_t n) {
  size_t per = (n + gridDim.x - 1) / gridDim.x;
  size_t begin = blockIdx.x * per, end = min(n, begin + per);
  for (size_t i = begin + threadIdx.x; i < end; i += (size_t)blockDim.x * ILP) {
    int4 v[ILP];
#pragma unroll
    for (int u = 0; u < ILP; ++u) { size_t j = i + (size_t)u * blockDim.x; if (j < end) v[u] = CS ? __ldcs(src + j) : src[j]; }
#pragma unroll
    for (int u = 0; u < ILP; ++u) { size_t j = i + (size_t)u * blockDim.x; if (j < end) { if (CS) __stcs(dst + j, v[u]); else dst[j] = v[u]; } }
  }
}
template <int ILP, bool CS>
void runseg(const char *name, int4 *a, int4 *b, size_t n, int sms, int bps, int threads) {
  cudaEvent_t e0, e1; cudaEventCreate(&e0); cudaEventCreate(&e1);
  segment<ILP, CS><<<sms * bps, threads>>>(a, b, n);
  float best = 1e9;
  for (int r = 0; r < 5; ++r) {
    cudaEventRecord(e0);
    segment<ILP, CS><<<sms * bps, threads>>>(a, b, n);
    cudaEventRecord(e1); cudaEventSynchronize(e1);
    float ms; cudaEventElapsedTime(&ms, e0, e1); if (ms < best) best = ms;
  }
  printf("%-22s ilp %d blocks/SM %2d threads %4d: %.1f GB/s (read+write)\n", name, ILP, bps, threads, 2.0 * n * 16 / best / 1e6);
}
int main(int argc, char **argv) {
  int sms; cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  int clk, bus; cudaDeviceGetAttribute(&clk, cudaDevAttrMemoryClockRate, 0); cudaDeviceGetAttribute(&bus, cudaDevAttrGlobalMemoryBusWidth, 0);
  printf("peak %.1f GB/s\n", 2.0 * clk * 1e3 * bus / 8 / 1e9);
  size_t bytes = 2ull << 30; size_t n = bytes / 16;
  int4 *a, *b; cudaMalloc(&a, bytes); cudaMalloc(&b, bytes); cudaMemset(a, 1, bytes); cudaMemset(b, 2, bytes);
  if (argc > 1) { cudaMemcpy(b, a, bytes, cudaMemcpyDeviceToDevice); cudaDeviceSynchronize(); return 0; }
  for (int bps : {1, 2, 4}) for (int t : {128, 256, 512, 1024}) {
    if (bps * t > 2048) continue;
    run<4, 0>("grid-stride", a, b, n, sms, bps, t);
    run<4, 1>("grid-stride ld/st.cs", a, b, n, sms, bps, t);
    run<8, 0>("grid-stride", a, b, n, sms, bps, t);
    run<8, 1>("grid-stride ld/st.cs", a, b, n, sms, bps, t);
    if (t <= 512) {
      run<16, 0>("grid-stride", a, b, n, sms, bps, t);
      run<16, 1>("grid-stride ld/st.cs", a, b, n, sms, bps, t);
    }
    runseg<8, true>("block segments ld/st.cs", a, b, n, sms, bps, t);
  }
  cudaEvent_t e0, e1; cudaEventCreate(&e0); cudaEventCreate(&e1);
  float best = 1e9;
  for (int r = 0; r < 5; ++r) { cudaEventRecord(e0); cudaMemcpy(b, a, bytes, cudaMemcpyDeviceToDevice); cudaEventRecord(e1); cudaEventSynchronize(e1); float ms; cudaEventElapsedTime(&ms, e0, e1); if (ms < best) best = ms; }
  printf("cudaMemcpy D2D: %.1f GB/s (read+write)\n", 2.0 * bytes / best / 1e6);
  printf("last error: %s\n", cudaGetErrorString(cudaGetLastError()));
}
