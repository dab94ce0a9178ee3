// gpubench's simulated CUDA device: memory, copies and memsets, streams, events and error
// names (see gpubench_sim.h).

#include <map>
#include <set>
#include <vector>

#include "gpubench_sim.h"

struct SimEvent {
  bool recorded;
  unsigned long long cycle;
};
struct SimStream {
  unsigned flags;
};

// Live allocations (address -> bytes, rounded to 256) and freed blocks (bytes -> addresses).
// GPGPU-Sim's gpu_malloc only grows its heap and never takes memory back; a long run (the
// conflict experiment allocates up to 256 MiB a point, hundreds of points) would walk the
// heap tens of GiB past the device's memory. Freed blocks are handed out again, best fit,
// and the heap is refused past the device's memory, as a real driver refuses it.
static std::map<CUdeviceptr, size_t> g_allocations;
static std::multimap<size_t, CUdeviceptr> g_free;
static size_t g_heap_bytes = 0;  // what gpu_malloc has handed out in all

// The simulated core cycle once all earlier work is done.
static unsigned long long cycles_now() {
  synchronize();
  return gpu()->gpu_tot_sim_cycle + gpu()->gpu_sim_cycle;
}

// An allocation starts at a multiple of its size rounded up to a power of two, up to 2 MiB (at
// least 256 B), as a real driver's large allocations start on its 2 MiB pages. A chain that
// starts there fills a cache whose set index is an XOR hash of the address bits (GPGPU-Sim's
// IPOLY L2) evenly at a power-of-two footprint; from wherever the heap happened to be, the
// committed L2 sweeps missed at 88 % of the configured L2 and hit at 96 % (docs/simulator.md).
static size_t alignment_for(size_t bytes) {
  size_t align = 256;
  while (align < bytes && align < (size_t(2) << 20)) align *= 2;
  return align;
}

static CUdeviceptr align_up(CUdeviceptr p, size_t align) { return (p + align - 1) / align * align; }

// Takes [start, start + bytes) out of the free block [block, block + size): what is left on
// either side stays free.
static void carve(CUdeviceptr block, size_t size, CUdeviceptr start, size_t bytes) {
  if (start > block) g_free.emplace(start - block, block);
  const CUdeviceptr end = start + bytes, block_end = block + size;
  if (block_end > end) g_free.emplace(block_end - end, end);
}

// The smallest free block that holds `bytes` from an `align`-aligned start, taken out of
// g_free; 0 where none does.
static CUdeviceptr reuse(size_t bytes, size_t align) {
  for (auto it = g_free.lower_bound(bytes); it != g_free.end(); ++it) {
    const size_t size = it->first;
    const CUdeviceptr block = it->second, start = align_up(block, align);
    if (start + bytes <= block + size) {
      g_free.erase(it);
      carve(block, size, start, bytes);
      return start;
    }
  }
  return 0;
}

// ---------------------------------------------------------------- memory
extern "C" CUresult CUDAAPI cuMemAlloc_v2(CUdeviceptr *dptr, size_t bytes) {
  REQUIRE_INIT();
  if (bytes == 0) return CUDA_ERROR_INVALID_VALUE;
  synchronize();
  const size_t rounded = (bytes + 255) / 256 * 256;
  const size_t align = alignment_for(rounded);
  CUdeviceptr p = reuse(rounded, align);
  if (p == 0) {
    // Enough for an aligned start anywhere in the new block; the slack stays free.
    const size_t size = rounded + align - 256;
    if (g_heap_bytes + size > total_memory()) return CUDA_ERROR_OUT_OF_MEMORY;
    const CUdeviceptr block = (CUdeviceptr)gpu()->gpu_malloc(size);
    g_heap_bytes += size;
    p = align_up(block, align);
    carve(block, size, p, rounded);
  }
  g_allocations.emplace(p, rounded);
  *dptr = p;
  return CUDA_SUCCESS;
}

extern "C" CUresult CUDAAPI cuMemFree_v2(CUdeviceptr dptr) {
  REQUIRE_INIT();
  auto live = g_allocations.find(dptr);
  if (live == g_allocations.end()) return CUDA_ERROR_INVALID_VALUE;
  g_free.emplace(live->second, live->first);
  g_allocations.erase(live);
  return CUDA_SUCCESS;
}

static CUresult copy(void *dst, const void *src, size_t bytes, cudaMemcpyKind kind) {
  REQUIRE_INIT();
  if (bytes == 0) return CUDA_SUCCESS;
  cudaMemcpyInternal(dst, src, bytes, kind, ctx());  // stream 0: done when it returns
  return CUDA_SUCCESS;
}
extern "C" CUresult CUDAAPI cuMemcpyHtoD_v2(CUdeviceptr dst, const void *src, size_t n) {
  return copy((void *)dst, src, n, cudaMemcpyHostToDevice);
}
extern "C" CUresult CUDAAPI cuMemcpyDtoH_v2(void *dst, CUdeviceptr src, size_t n) {
  return copy(dst, (const void *)src, n, cudaMemcpyDeviceToHost);
}
extern "C" CUresult CUDAAPI cuMemcpyDtoD_v2(CUdeviceptr dst, CUdeviceptr src, size_t n) {
  return copy((void *)dst, (const void *)src, n, cudaMemcpyDeviceToDevice);
}
extern "C" CUresult CUDAAPI cuMemcpyHtoDAsync_v2(CUdeviceptr dst, const void *src, size_t n,
                                                 CUstream) {
  return copy((void *)dst, src, n, cudaMemcpyHostToDevice);
}
extern "C" CUresult CUDAAPI cuMemcpyDtoHAsync_v2(void *dst, CUdeviceptr src, size_t n, CUstream) {
  return copy(dst, (const void *)src, n, cudaMemcpyDeviceToHost);
}
extern "C" CUresult CUDAAPI cuMemcpyDtoDAsync_v2(CUdeviceptr dst, CUdeviceptr src, size_t n,
                                                 CUstream) {
  return copy((void *)dst, (const void *)src, n, cudaMemcpyDeviceToDevice);
}

extern "C" CUresult CUDAAPI cuMemsetD8_v2(CUdeviceptr dst, unsigned char value, size_t n) {
  REQUIRE_INIT();
  synchronize();
  gpu()->gpu_memset(dst, value, n);
  return CUDA_SUCCESS;
}
extern "C" CUresult CUDAAPI cuMemsetD8Async(CUdeviceptr dst, unsigned char value, size_t n,
                                            CUstream) {
  return cuMemsetD8_v2(dst, value, n);
}
extern "C" CUresult CUDAAPI cuMemsetD32_v2(CUdeviceptr dst, unsigned int value, size_t n) {
  REQUIRE_INIT();
  if (dst % 4) return CUDA_ERROR_INVALID_VALUE;
  std::vector<unsigned int> words(n, value);
  return copy((void *)dst, words.data(), n * 4, cudaMemcpyHostToDevice);
}
extern "C" CUresult CUDAAPI cuMemsetD32Async(CUdeviceptr dst, unsigned int value, size_t n,
                                             CUstream) {
  return cuMemsetD32_v2(dst, value, n);
}

// ---------------------------------------------------------------- streams and events
extern "C" CUresult CUDAAPI cuStreamCreate(CUstream *stream, unsigned int flags) {
  REQUIRE_INIT();
  *stream = reinterpret_cast<CUstream>(new SimStream{flags});
  return CUDA_SUCCESS;
}
static CUresult stream_destroy(CUstream stream) {
  REQUIRE_INIT();
  synchronize();
  delete reinterpret_cast<SimStream *>(stream);
  return CUDA_SUCCESS;
}
extern "C" CUresult CUDAAPI cuStreamDestroy_v2(CUstream s) { return stream_destroy(s); }
extern "C" CUresult CUDAAPI cuStreamSynchronize(CUstream) {
  REQUIRE_INIT();
  synchronize();
  return CUDA_SUCCESS;
}
extern "C" CUresult CUDAAPI cuStreamQuery(CUstream) {
  REQUIRE_INIT();
  synchronize();  // every operation completed before its call returned
  return CUDA_SUCCESS;
}
extern "C" CUresult CUDAAPI cuStreamWaitEvent(CUstream, CUevent, unsigned int flags) {
  REQUIRE_INIT();
  if (flags != 0) return CUDA_ERROR_INVALID_VALUE;
  synchronize();  // the event's work is complete: nothing is queued behind it
  return CUDA_SUCCESS;
}

static SimEvent *event(CUevent e) { return reinterpret_cast<SimEvent *>(e); }
extern "C" CUresult CUDAAPI cuEventCreate(CUevent *e, unsigned int) {
  REQUIRE_INIT();
  *e = reinterpret_cast<CUevent>(new SimEvent{false, 0});
  return CUDA_SUCCESS;
}
extern "C" CUresult CUDAAPI cuEventRecord(CUevent e, CUstream) {
  REQUIRE_INIT();
  event(e)->cycle = cycles_now();
  event(e)->recorded = true;
  return CUDA_SUCCESS;
}
extern "C" CUresult CUDAAPI cuEventSynchronize(CUevent) {
  REQUIRE_INIT();
  return CUDA_SUCCESS;  // recorded events are complete when cuEventRecord returns
}
extern "C" CUresult CUDAAPI cuEventQuery(CUevent) {
  REQUIRE_INIT();
  return CUDA_SUCCESS;
}
static CUresult elapsed(float *ms, CUevent start, CUevent end) {
  REQUIRE_INIT();
  if (!event(start)->recorded || !event(end)->recorded) return CUDA_ERROR_INVALID_HANDLE;
  double cycles = (double)event(end)->cycle - (double)event(start)->cycle;
  *ms = (float)(cycles / gpu()->shader_clock());  // shader_clock() is in kHz
  return CUDA_SUCCESS;
}
extern "C" CUresult CUDAAPI cuEventElapsedTime(float *ms, CUevent s, CUevent e) {
  return elapsed(ms, s, e);
}
extern "C" CUresult CUDAAPI cuEventElapsedTime_v2(float *ms, CUevent s, CUevent e) {
  return elapsed(ms, s, e);
}
static CUresult event_destroy(CUevent e) {
  REQUIRE_INIT();
  delete event(e);
  return CUDA_SUCCESS;
}
extern "C" CUresult CUDAAPI cuEventDestroy_v2(CUevent e) { return event_destroy(e); }

// ---------------------------------------------------------------- errors
static const std::map<int, std::pair<const char *, const char *>> &errors() {
  static const std::map<int, std::pair<const char *, const char *>> table = {
      {CUDA_SUCCESS, {"CUDA_SUCCESS", "no error"}},
      {CUDA_ERROR_INVALID_VALUE, {"CUDA_ERROR_INVALID_VALUE", "invalid argument"}},
      {CUDA_ERROR_NOT_INITIALIZED, {"CUDA_ERROR_NOT_INITIALIZED", "initialization error"}},
      {CUDA_ERROR_INVALID_DEVICE, {"CUDA_ERROR_INVALID_DEVICE", "invalid device ordinal"}},
      {CUDA_ERROR_INVALID_CONTEXT, {"CUDA_ERROR_INVALID_CONTEXT", "invalid device context"}},
      {CUDA_ERROR_INVALID_HANDLE, {"CUDA_ERROR_INVALID_HANDLE", "invalid resource handle"}},
      {CUDA_ERROR_NOT_FOUND, {"CUDA_ERROR_NOT_FOUND", "named symbol not found"}},
      {CUDA_ERROR_INVALID_PTX, {"CUDA_ERROR_INVALID_PTX", "a PTX JIT compilation failed"}},
      {CUDA_ERROR_NOT_SUPPORTED, {"CUDA_ERROR_NOT_SUPPORTED", "operation not supported"}},
  };
  return table;
}
extern "C" CUresult CUDAAPI cuGetErrorName(CUresult error, const char **text) {
  auto it = errors().find(error);
  if (it == errors().end()) return CUDA_ERROR_INVALID_VALUE;
  *text = it->second.first;
  return CUDA_SUCCESS;
}
extern "C" CUresult CUDAAPI cuGetErrorString(CUresult error, const char **text) {
  auto it = errors().find(error);
  if (it == errors().end()) return CUDA_ERROR_INVALID_VALUE;
  // A module the simulator's parser refused, or a call it has no model for: the text says why.
  bool refused = error == CUDA_ERROR_INVALID_PTX || error == CUDA_ERROR_NOT_SUPPORTED;
  *text = refused && *last_refusal() ? last_refusal() : it->second.second;
  return CUDA_SUCCESS;
}
