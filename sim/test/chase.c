/* Smoke test of gpubench's simulated CUDA device (sim/libcuda): loads a PTX module through the
 * driver API, launches a one-thread pointer chase timed with %clock64, and a many-thread kernel,
 * and prints simulated cycles, event times and the host seconds each launch took.
 *
 *   sim-chase [RING_LINES] [STRIDE_BYTES] [BLOCKS] [THREADS]      (defaults 16 128 80 256)
 *
 * Run it in a directory holding gpgpusim.config, with scripts/sim/env.sh sourced
 * (scripts/sim/smoke.sh does both). */
#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void check(CUresult r, const char *what) {
  if (r != CUDA_SUCCESS) {
    const char *name = "?";
    cuGetErrorName(r, &name);
    fprintf(stderr, "sim-chase: %s failed: %s (%d)\n", what, name, (int)r);
    exit(1);
  }
}
#define CHECK(call) check((call), #call)

/* CHASE_PTX (sim/test/chase.ptx; build.sh passes its path) holds two kernels.
 * chase(ring, out, steps): two passes of `steps` dependent loads each from ring[0];
 * out[0] = cycles of the first pass, out[1] = of the second, out[2] = the last pointer.
 * The closing %clock64 reads are predicated on the chased pointer, so they wait for the last
 * load. fill(out, n): every thread adds its global index into out[tid % n] 64 times. */
#ifndef CHASE_PTX
#error "build with -DCHASE_PTX='\"path/to/sim/test/chase.ptx\"'"
#endif

static char *read_ptx(void) {
  FILE *f = fopen(CHASE_PTX, "rb");
  if (!f) {
    perror(CHASE_PTX);
    exit(2);
  }
  fseek(f, 0, SEEK_END);
  long size = ftell(f);
  rewind(f);
  char *text = calloc(size + 1, 1);
  if (fread(text, 1, size, f) != (size_t)size) exit(2);
  fclose(f);
  return text;
}

static double now_seconds(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

int main(int argc, char **argv) {
  unsigned lines = argc > 1 ? (unsigned)atoi(argv[1]) : 16;
  unsigned stride = argc > 2 ? (unsigned)atoi(argv[2]) : 128;
  unsigned blocks = argc > 3 ? (unsigned)atoi(argv[3]) : 80;
  unsigned threads = argc > 4 ? (unsigned)atoi(argv[4]) : 256;
  if (lines == 0 || stride < 8 || stride % 8 || blocks == 0 || threads == 0) {
    fprintf(stderr, "usage: sim-chase [RING_LINES] [STRIDE_BYTES] [BLOCKS] [THREADS]\n");
    return 2;
  }

  CHECK(cuInit(0));
  int driver = 0, sms = 0, clock_khz = 0, l2 = 0, major = 0, minor = 0;
  CHECK(cuDriverGetVersion(&driver));
  CUdevice device;
  CHECK(cuDeviceGet(&device, 0));
  char name[256];
  CHECK(cuDeviceGetName(name, sizeof name, device));
  CHECK(cuDeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, device));
  CHECK(cuDeviceGetAttribute(&clock_khz, CU_DEVICE_ATTRIBUTE_CLOCK_RATE, device));
  CHECK(cuDeviceGetAttribute(&l2, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, device));
  CHECK(cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, device));
  CHECK(cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, device));
  printf("device: %s, driver %d, sm_%d%d, %d SMs, %d kHz, L2 %d bytes\n", name, driver, major,
         minor, sms, clock_khz, l2);

  CUcontext context;
  CHECK(cuDevicePrimaryCtxRetain(&context, device));
  CHECK(cuCtxSetCurrent(context));
  CUmodule module;
  char *ptx = read_ptx();
  CHECK(cuModuleLoadData(&module, ptx));
  CUfunction chase, fill;
  CHECK(cuModuleGetFunction(&chase, module, "chase"));
  CHECK(cuModuleGetFunction(&fill, module, "fill"));
  int regs = 0;
  CHECK(cuFuncGetAttribute(&regs, CU_FUNC_ATTRIBUTE_NUM_REGS, chase));
  printf("chase: %d registers (ptxas)\n", regs);

  /* The ring: `lines` 64-bit pointers `stride` bytes apart, each to the next, the last to the first. */
  size_t ring_bytes = (size_t)lines * stride;
  CUdeviceptr ring, out;
  CHECK(cuMemAlloc(&ring, ring_bytes));
  CHECK(cuMemAlloc(&out, 4096));
  CHECK(cuMemsetD8(out, 0, 4096));
  unsigned long long *host = calloc(ring_bytes / 8, 8);
  for (unsigned i = 0; i < lines; i++)
    host[(size_t)i * stride / 8] = ring + (size_t)((i + 1) % lines) * stride;
  CHECK(cuMemcpyHtoD(ring, host, ring_bytes));

  CUevent start, stop;
  CHECK(cuEventCreate(&start, 0));
  CHECK(cuEventCreate(&stop, 0));
  unsigned steps = lines;
  void *chase_args[] = {&ring, &out, &steps};
  CHECK(cuEventRecord(start, 0));
  double t0 = now_seconds();
  CHECK(cuLaunchKernel(chase, 1, 1, 1, 1, 1, 1, 0, 0, chase_args, NULL));
  double chase_seconds = now_seconds() - t0;
  CHECK(cuEventRecord(stop, 0));
  float chase_ms = 0;
  CHECK(cuEventElapsedTime(&chase_ms, start, stop));
  unsigned long long result[3];
  CHECK(cuMemcpyDtoH(result, out, sizeof result));
  unsigned long long expected_last = ring; /* 2 * lines steps from ring[0] end at ring[0] */
  printf("chase: %u lines x %u B: first pass %llu cycles (%.1f per load), second pass %llu "
         "cycles (%.1f per load); last pointer %s\n",
         lines, stride, result[0], (double)result[0] / steps, result[1],
         (double)result[1] / steps, result[2] == expected_last ? "right" : "WRONG");
  double chase_cycles = chase_ms * (double)clock_khz;
  printf("chase: event time %.6f ms = %.0f cycles; host %.2f s\n", chase_ms, chase_cycles,
         chase_seconds);

  unsigned n = 1024;
  CHECK(cuMemsetD32(out, 0, n));
  void *fill_args[] = {&out, &n};
  CHECK(cuEventRecord(start, 0));
  t0 = now_seconds();
  CHECK(cuLaunchKernel(fill, blocks, 1, 1, threads, 1, 1, 0, 0, fill_args, NULL));
  double fill_seconds = now_seconds() - t0;
  CHECK(cuEventRecord(stop, 0));
  float fill_ms = 0;
  CHECK(cuEventElapsedTime(&fill_ms, start, stop));
  unsigned *sums = calloc(n, 4);
  CHECK(cuMemcpyDtoH(sums, out, (size_t)n * 4));
  /* Threads sharing a slot race (load, add, store): the sum is printed, not checked. */
  unsigned long long total = 0;
  for (unsigned i = 0; i < n; i++) total += sums[i];
  double fill_cycles = fill_ms * (double)clock_khz;
  printf("fill: %u blocks x %u threads: event time %.6f ms = %.0f cycles; host %.2f s; "
         "%.0f simulated cycles per host second; sum of slots %llu\n",
         blocks, threads, fill_ms, fill_cycles, fill_seconds, fill_cycles / fill_seconds, total);

  CHECK(cuEventDestroy(start));
  CHECK(cuEventDestroy(stop));
  CHECK(cuMemFree(ring));
  CHECK(cuMemFree(out));
  CHECK(cuModuleUnload(module));
  CHECK(cuDevicePrimaryCtxRelease(device));
  free(host);
  free(sums);
  free(ptx);
  return result[2] == expected_last ? 0 : 1;
}
