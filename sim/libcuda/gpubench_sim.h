// gpubench's simulated CUDA device: the CUDA driver API that gpubench (through cudarc) calls,
// answered by GPGPU-Sim. Built by scripts/sim/build.sh as libcuda.so.1, linked against
// GPGPU-Sim's libcudart.so, whose internals (PTX loader, kernel registry, stream manager,
// performance model) do the work. The simulator reads gpgpusim.config from the working directory.
//
// Semantics, where they differ from a real driver:
//  - One device, one context (GPGPU-Sim's), the legacy default stream: every copy, memset and
//    launch returns only when the simulator has finished it. Streams exist as handles; waiting on
//    one or on an event has nothing left to wait for, and says so by synchronizing anyway.
//  - Events hold the simulated core cycle at which they were recorded (after all earlier work);
//    cuEventElapsedTime gives (end - start) / core clock (-gpgpu_clock_domains, first field).
//  - Modules are PTX text only. ptxas (from $PTXAS_CUDA_INSTALL_PATH, CUDA 11.8) supplies register
//    and shared-memory counts; it reads PTX ISA up to 7.8 and no .target above the configuration's
//    sm, so its copy says so where the module asks for more (see ptx_for_ptxas); GPGPU-Sim's own
//    parser gets the text unchanged.
//  - Dynamic shared memory (sharedMemBytes) is accepted but GPGPU-Sim does not model it: occupancy
//    comes from the kernel's static use only (said on stderr once).
//  - Freed memory is never handed out again (GPGPU-Sim's allocator only grows).
// Every other driver entry point that cudarc or libcudart.so names is defined by the generated
// unimplemented.cc and stops the process with the function's name.

#ifndef GPUBENCH_SIM_H
#define GPUBENCH_SIM_H
#define __CUDA_RUNTIME_API_H__
// clang-format off
#include "host_defines.h"
#include "builtin_types.h"
#include "driver_types.h"
#include "cuda_api.h"
// clang-format on
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "../src/abstract_hardware_model.h"
#include "../src/cuda-sim/cuda-sim.h"
#include "../src/cuda-sim/ptx_ir.h"
#include "../src/gpgpu-sim/gpu-sim.h"
#include "../src/gpgpusim_entrypoint.h"
#include "../src/stream_manager.h"
#include "cuda_api_object.h"
#include "gpgpu_context.h"

// Defined in GPGPU-Sim's libcuda/cuda_runtime_api.cc, declared in no header.
CUctx_st *GPGPUSim_Context(gpgpu_context *ctx);
CUresult CUDAAPI cuLaunchKernelInternal(CUfunction f, unsigned int gridDimX, unsigned int gridDimY,
                                        unsigned int gridDimZ, unsigned int blockDimX,
                                        unsigned int blockDimY, unsigned int blockDimZ,
                                        unsigned int sharedMemBytes, CUstream hStream,
                                        void **kernelParams, void **extra,
                                        gpgpu_context *gpgpu_ctx);
cudaError_t cudaMemcpyInternal(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind,
                               gpgpu_context *gpgpu_ctx);

namespace gpubench_sim {
[[noreturn]] void fail(const char *format, ...);
void note_once(bool *said, const char *text);
// Why the last refused call (a module GPGPU-Sim's parser stops on, a texture object, a link)
// was refused ("" before any): what cuGetErrorString says of CUDA_ERROR_INVALID_PTX and
// CUDA_ERROR_NOT_SUPPORTED.
const char *last_refusal();
extern bool g_initialized;

inline gpgpu_context *ctx() { return GPGPU_Context(); }
inline CUctx_st *context() { return GPGPUSim_Context(ctx()); }
inline gpgpu_sim *gpu() { return context()->get_device()->get_gpgpu(); }
inline void synchronize() { ctx()->synchronize(); }
// The device's global memory in bytes (cuDeviceTotalMem), from the configuration.
inline size_t total_memory() { return gpu()->get_prop()->totalGlobalMem; }
}  // namespace gpubench_sim
using namespace gpubench_sim;

#define REQUIRE_INIT() \
  if (!g_initialized) return CUDA_ERROR_NOT_INITIALIZED

#endif
