/* Stand-in for CUDA's cudaProfiler.h, which the PyPI CUDA 11.8 wheels do not ship.
 * GPGPU-Sim's libcuda/cuda_runtime_api.cc includes it and defines these three functions
 * itself; it needs only their declarations and the CUoutput_mode enum. Written for gpubench
 * (scripts/sim/build.sh); values as in CUDA's header. */
#ifndef GPUBENCH_SIM_CUDA_PROFILER_H
#define GPUBENCH_SIM_CUDA_PROFILER_H
#include <cuda.h>
#ifdef __cplusplus
extern "C" {
#endif
typedef enum CUoutput_mode_enum {
  CU_OUT_KEY_VALUE_PAIR = 0x00,
  CU_OUT_CSV = 0x01
} CUoutput_mode;
CUresult cuProfilerInitialize(const char *configFile, const char *outputFile,
                              CUoutput_mode outputMode);
CUresult cuProfilerStart(void);
CUresult cuProfilerStop(void);
#ifdef __cplusplus
}
#endif
#endif
