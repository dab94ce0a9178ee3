// The HIP runtime names MT4G calls, on the CUDA runtime: what hipcc's NVIDIA platform does
// with ROCm's headers, for this subset only, so that scripts/peers.sh can build MT4G with nvcc
// alone (no ROCm, no hipcc). Each name maps one to one onto its CUDA twin; the one exception is
// hipDeviceProp_t, whose clock fields CUDA 13 dropped from cudaDeviceProp and which are filled
// here from the device attributes that still carry them.
#pragma once
#include <cstdint>
#include <cuda_runtime.h>

#ifndef __HIP_PLATFORM_NVIDIA__
#define __HIP_PLATFORM_NVIDIA__ 1
#endif

typedef cudaError_t hipError_t;
typedef cudaStream_t hipStream_t;
typedef cudaEvent_t hipEvent_t;
typedef cudaFuncCache hipFuncCache_t;
typedef cudaTextureObject_t hipTextureObject_t;
typedef cudaTextureDesc hipTextureDesc;
typedef cudaResourceDesc hipResourceDesc;

#define hipSuccess cudaSuccess
#define hipFuncCachePreferL1 cudaFuncCachePreferL1
#define hipFuncCachePreferShared cudaFuncCachePreferShared
#define hipFuncCachePreferEqual cudaFuncCachePreferEqual
#define hipMemcpyHostToDevice cudaMemcpyHostToDevice
#define hipMemcpyDeviceToHost cudaMemcpyDeviceToHost
#define hipAddressModeClamp cudaAddressModeClamp
#define hipFilterModePoint cudaFilterModePoint
#define hipReadModeElementType cudaReadModeElementType
#define hipResourceTypeLinear cudaResourceTypeLinear
#define hipDeviceAttributeMultiprocessorCount cudaDevAttrMultiProcessorCount
#define hipDeviceAttributeWarpSize cudaDevAttrWarpSize
#define hipDeviceAttributeMaxThreadsPerBlock cudaDevAttrMaxThreadsPerBlock
#define hipDeviceAttributeCooperativeLaunch cudaDevAttrCooperativeLaunch
#define hipDeviceAttributeClockRate cudaDevAttrClockRate

#define hipGetErrorString cudaGetErrorString
#define hipGetDevice cudaGetDevice
#define hipSetDevice cudaSetDevice
#define hipDeviceReset cudaDeviceReset
#define hipDeviceSynchronize cudaDeviceSynchronize
#define hipDeviceGetAttribute cudaDeviceGetAttribute
#define hipDeviceSetCacheConfig cudaDeviceSetCacheConfig
#define hipDriverGetVersion cudaDriverGetVersion
#define hipRuntimeGetVersion cudaRuntimeGetVersion
#define hipMalloc cudaMalloc
#define hipFree cudaFree
#define hipMemset cudaMemset
#define hipMemcpy cudaMemcpy
#define hipStreamCreate cudaStreamCreate
#define hipStreamDestroy cudaStreamDestroy
#define hipStreamSynchronize cudaStreamSynchronize
#define hipEventCreate cudaEventCreate
#define hipEventRecord cudaEventRecord
#define hipEventSynchronize cudaEventSynchronize
#define hipEventElapsedTime cudaEventElapsedTime
#define hipOccupancyMaxActiveBlocksPerMultiprocessor cudaOccupancyMaxActiveBlocksPerMultiprocessor
#define hipCreateTextureObject cudaCreateTextureObject
#define hipCreateChannelDesc cudaCreateChannelDesc

struct hipDeviceProp_t : cudaDeviceProp {
    int clockRate;        // kHz
    int memoryClockRate;  // kHz
    int asicRevision;     // AMD's; 0 here, as on HIP's NVIDIA platform
};

inline hipError_t hipGetDeviceProperties(hipDeviceProp_t* prop, int device) {
    hipError_t status = cudaGetDeviceProperties(prop, device);
    if (status != cudaSuccess) return status;
    prop->asicRevision = 0;
    status = cudaDeviceGetAttribute(&prop->clockRate, cudaDevAttrClockRate, device);
    if (status != cudaSuccess) return status;
    return cudaDeviceGetAttribute(&prop->memoryClockRate, cudaDevAttrMemoryClockRate, device);
}
