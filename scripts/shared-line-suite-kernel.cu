// gpubench's own shared-line kernel (bw_read_device_shared from the committed
// cuda/ptx/bandwidth.ptx, PTX for compute_75 that the driver compiles for the GPU, as the suite
// loads it) beside the same pattern built by nvcc for sm_90 (scripts/shared-line-spread.cu):
// whether the suite's 17.0-17.6 TB/s fast mode on the H100 comes from its code or from its
// context. 12.5 MiB in 25 chunks of 512 KiB, 256 x 4 per SM, five timed launches after a warm
// one, from a region of its own and from the start of a 2 GiB buffer (the suite's).
//   nvcc -O3 -arch=sm_90 -o shared-line-suite-kernel scripts/shared-line-suite-kernel.cu -lcuda
//   ./shared-line-suite-kernel cuda/ptx/bandwidth.ptx PASSES
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <cuda.h>
#include <cuda_runtime.h>
#define CHECK(x) do { CUresult r = (x); if (r != CUDA_SUCCESS) { const char *s; cuGetErrorString(r, &s); fprintf(stderr, "%s: %s\n", #x, s); exit(1); } } while (0)
int main(int argc, char **argv) {
  if (argc != 3) { fprintf(stderr, "usage: %s BANDWIDTH_PTX PASSES\n", argv[0]); return 2; }
  cudaFree(0);
  CUmodule module; CHECK(cuModuleLoad(&module, argv[1]));
  CUfunction f; CHECK(cuModuleGetFunction(&f, module, "bw_read_device_shared"));
  int passes = atoi(argv[2]);
  int sms; cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  const size_t bytes = 13107200; unsigned chunk = 32768, chunks = 25;
  unsigned threads = 256, grid = sms * 4;
  unsigned *sink; cudaMalloc(&sink, 64);
  void *own; cudaMalloc(&own, bytes); cudaMemset(own, 0, bytes);
  void *big; cudaMalloc(&big, 2ull << 30); cudaMemset(big, 0, 2ull << 30);
  cudaEvent_t a, b; cudaEventCreate(&a); cudaEventCreate(&b);
  for (int round = 0; round < 2; ++round) {
    for (void *region : {own, big}) {
      CUdeviceptr p = (CUdeviceptr)region;
      void *args[] = {&p, &chunk, &chunks, &passes, &sink};
      CHECK(cuLaunchKernel(f, grid, 1, 1, threads, 1, 1, 0, 0, args, nullptr)); cudaDeviceSynchronize();
      std::vector<double> r;
      for (int k = 0; k < 5; ++k) {
        cudaEventRecord(a); CHECK(cuLaunchKernel(f, grid, 1, 1, threads, 1, 1, 0, 0, args, nullptr)); cudaEventRecord(b);
        cudaEventSynchronize(b); float ms; cudaEventElapsedTime(&ms, a, b);
        r.push_back((double)grid * chunk * 16 * passes / ms / 1e9);
      }
      std::sort(r.begin(), r.end());
      printf("round %d, %s: median %.2f TB/s (min %.2f, max %.2f)\n", round, region == own ? "own 12.5 MiB region" : "start of a 2 GiB buffer", r[2], r[0], r[4]);
    }
  }
  printf("%s\n", cudaGetErrorString(cudaGetLastError()));
}
