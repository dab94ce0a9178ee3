// How many independent accumulators a DFMA loop needs to reach its rate (the probe behind
// cuda/flops.cuh's FLOPS_CHAINS): per (accumulators, unroll, threads), one block per SM,
// FLOP per clock per SM (median over blocks). nvcc -O3 -arch=sm_90 -o dfma scripts/dfma-accumulators.cu
#include <cstdio>
#include <vector>
#include <algorithm>
template <int CHAINS, int UNROLL, int THREADS>
__global__ void k(long long *st, double *sink, int it) {
  const double m = 0.999 - 1e-6 * (it & 7);
  const double kk = threadIdx.x * 1e-3;
  double a[CHAINS];
#pragma unroll
  for (int c = 0; c < CHAINS; ++c) a[c] = threadIdx.x + c;
  __syncthreads();
  long long t0 = clock64();
#pragma unroll 1
  for (int i = 0; i < it; ++i) {
#pragma unroll
    for (int u = 0; u < UNROLL; ++u)
#pragma unroll
      for (int c = 0; c < CHAINS; ++c) a[c] = fma(a[c], m, kk);
  }
  __syncthreads();
  long long t1 = clock64();
  if (threadIdx.x == 0) { st[2 * blockIdx.x] = t0; st[2 * blockIdx.x + 1] = t1; }
  double s = 0;
#pragma unroll
  for (int c = 0; c < CHAINS; ++c) s += a[c];
  sink[blockIdx.x * blockDim.x + threadIdx.x] = s;
}
template <int C, int U, int T>
void run(int blocks) {
  long long *st; double *sink;
  cudaMalloc(&st, 2 * blocks * 8); cudaMalloc(&sink, blocks * T * 8);
  int it = 65536 / (C * U) * 8;
  for (int r = 0; r < 2; ++r) k<C, U, T><<<blocks, T>>>(st, sink, it);
  cudaDeviceSynchronize();
  std::vector<long long> h(2 * blocks);
  cudaMemcpy(h.data(), st, 16 * blocks, cudaMemcpyDeviceToHost);
  std::vector<double> r;
  for (int b = 0; b < blocks; ++b) r.push_back(2.0 * C * U * (double)it * T / (h[2 * b + 1] - h[2 * b]));
  std::sort(r.begin(), r.end());
  printf("chains %2d unroll %3d threads %4d blocks %3d: %.2f FLOP/clk/SM\n", C, U, T, blocks, r[r.size() / 2]);
}
int main() {
  run<8, 32, 1024>(132); run<4, 32, 1024>(132); run<4, 64, 1024>(132); run<2, 64, 1024>(132);
  run<16, 16, 1024>(132); run<8, 32, 512>(132); run<8, 32, 256>(132); run<4, 16, 1024>(132);
  run<1, 128, 1024>(132); run<8, 32, 768>(132);
}
