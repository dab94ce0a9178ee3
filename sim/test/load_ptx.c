/* Loads a PTX file into the simulated CUDA device (sim/libcuda) and looks up each .entry it
 * declares, to tell whether GPGPU-Sim's parser and ptxas 11.8 take it:
 *   sim-load-ptx FILE.ptx
 * Prints one line per kernel with its register count; GPGPU-Sim stops the process on a parse
 * error (its message names the line). Run where gpgpusim.config is, with env.sh sourced. */
#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: sim-load-ptx FILE.ptx\n");
    return 2;
  }
  FILE *f = fopen(argv[1], "rb");
  if (!f) {
    perror(argv[1]);
    return 2;
  }
  fseek(f, 0, SEEK_END);
  long size = ftell(f);
  rewind(f);
  char *text = calloc(size + 1, 1);
  if (fread(text, 1, size, f) != (size_t)size) return 2;
  fclose(f);

  CUdevice device;
  CUcontext context;
  CUmodule module;
  if (cuInit(0) || cuDeviceGet(&device, 0) || cuDevicePrimaryCtxRetain(&context, device) ||
      cuCtxSetCurrent(context) || cuModuleLoadData(&module, text)) {
    fprintf(stderr, "sim-load-ptx: loading %s failed\n", argv[1]);
    return 1;
  }
  int status = 0;
  for (char *p = strstr(text, ".entry "); p; p = strstr(p + 1, ".entry ")) {
    char name[512];
    if (sscanf(p + 7, " %511[A-Za-z0-9_$]", name) != 1) continue;
    CUfunction function;
    int regs = -1;
    if (cuModuleGetFunction(&function, module, name) ||
        cuFuncGetAttribute(&regs, CU_FUNC_ATTRIBUTE_NUM_REGS, function)) {
      printf("kernel %s: not found\n", name);
      status = 1;
    } else {
      printf("kernel %s: loaded, %d registers\n", name, regs);
    }
  }
  free(text);
  return status;
}
