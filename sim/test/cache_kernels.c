/* Runs gpubench's own pointer-chase kernels (cuda/ptx/cache.ptx, as committed) on the simulated
 * device: stride_pointers builds an address-order ring on the device, then chase_global
 * (ld.global) and chase_l2 (ld.global.cg) each chase it from element 0 with one thread.
 *   sim-cache-kernels [ELEMENTS] [STRIDE_BYTES] [STEPS]     (defaults 16 128 64)
 * Prints cycles per timed load and whether the final index is the one the ring implies.
 * CACHE_PTX (build.sh passes cuda/ptx/cache.ptx's path) names the module. */
#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>

#ifndef CACHE_PTX
#error "build with -DCACHE_PTX='\"path/to/cuda/ptx/cache.ptx\"'"
#endif

static void check(CUresult r, const char *what) {
  if (r != CUDA_SUCCESS) {
    fprintf(stderr, "sim-cache-kernels: %s failed (%d)\n", what, (int)r);
    exit(1);
  }
}
#define CHECK(call) check((call), #call)

static char *read_file(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    perror(path);
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

int main(int argc, char **argv) {
  unsigned long long elements = argc > 1 ? strtoull(argv[1], 0, 10) : 16;
  unsigned long long stride = argc > 2 ? strtoull(argv[2], 0, 10) : 128;
  int steps = argc > 3 ? atoi(argv[3]) : 64;
  if (elements == 0 || stride < 8 || stride % 8 || steps <= 0 || steps % 16) {
    fprintf(stderr, "usage: sim-cache-kernels [ELEMENTS] [STRIDE_BYTES] [STEPS, a multiple of 16]\n");
    return 2;
  }
  CUdevice device;
  CUcontext context;
  CUmodule module;
  CHECK(cuInit(0));
  CHECK(cuDeviceGet(&device, 0));
  CHECK(cuDevicePrimaryCtxRetain(&context, device));
  CHECK(cuCtxSetCurrent(context));
  char *ptx = read_file(CACHE_PTX);
  CHECK(cuModuleLoadData(&module, ptx));
  CUfunction build, chases[2];
  const char *names[2] = {"chase_global", "chase_l2"};
  CHECK(cuModuleGetFunction(&build, module, "stride_pointers"));
  for (int k = 0; k < 2; k++) CHECK(cuModuleGetFunction(&chases[k], module, names[k]));

  unsigned long long stride_words = stride / 8;
  CUdeviceptr chain, starts, out;
  CHECK(cuMemAlloc(&chain, elements * stride));
  CHECK(cuMemAlloc(&starts, 4));
  CHECK(cuMemAlloc(&out, 16));
  CHECK(cuMemsetD8(starts, 0, 4));
  void *build_args[] = {&chain, &elements, &stride_words};
  unsigned blocks = (unsigned)((elements + 255) / 256);
  CHECK(cuLaunchKernel(build, blocks, 1, 1, 256, 1, 1, 0, 0, build_args, NULL));

  int warm = (int)elements;
  int status = 0;
  for (int k = 0; k < 2; k++) {
    void *args[] = {&chain, &starts, &warm, &steps, &out};
    CHECK(cuLaunchKernel(chases[k], 1, 1, 1, 1, 1, 1, 0, 0, args, NULL));
    long long result[2];
    CHECK(cuMemcpyDtoH(result, out, sizeof result));
    long long expected = (long long)(((unsigned long long)warm + steps) % elements * stride / 4);
    printf("%s: %llu elements x %llu B, %d warm + %d timed loads: %lld cycles, %.1f per load; "
           "final index %s\n",
           names[k], elements, stride, warm, steps, result[0], (double)result[0] / steps,
           result[1] == expected ? "right" : "WRONG");
    if (result[1] != expected) status = 1;
  }
  free(ptx);
  return status;
}
