// gpubench's simulated CUDA device: initialization, the device and its attributes, the context,
// modules, functions and launches. Memory, streams, events and error names are in
// gpubench_sim_memory.cc; what the layer is and how it differs from a driver, in gpubench_sim.h.

#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <fstream>
#include <regex>
#include <sstream>

#include "gpubench_sim.h"

extern "C" [[noreturn]] void gpubench_sim_unimplemented(const char *function) {
  fflush(stdout);
  fprintf(stderr,
          "gpubench-sim: %s is not implemented by the simulated CUDA device "
          "(sim/libcuda/); stopping\n",
          function);
  abort();
}

[[noreturn]] void gpubench_sim::fail(const char *format, ...) {
  fflush(stdout);
  va_list args;
  va_start(args, format);
  fprintf(stderr, "gpubench-sim: ");
  vfprintf(stderr, format, args);
  fprintf(stderr, "; stopping\n");
  va_end(args);
  abort();
}

void gpubench_sim::note_once(bool *said, const char *text) {
  if (!*said) fprintf(stderr, "gpubench-sim: %s\n", text);
  *said = true;
}

struct CUmod_st {
  unsigned handle;  // GPGPU-Sim's "fat cubin handle" for this module's symbol table
  symbol_table *symtab;
};
struct CUfunc_st {  // its address is the key ("hostFun") GPGPU-Sim registers the kernel under
  CUmod_st *module;
  std::string name;
  function_info *entry;
  int max_dynamic_shared_bytes;
};

bool gpubench_sim::g_initialized = false;
static CUcontext g_current = nullptr;


// GPGPU-Sim's cuda_api.h is CUDA 10.1's driver header; attributes CUDA 11 added, by value.
const int ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR = 106;
const int ATTRIBUTE_MEMORY_POOLS_SUPPORTED = 115;

// The last value of `option` in ./gpgpusim.config (GPGPU-Sim keeps some, such as the clock
// domains, private).
static std::string config_option(const char *option) {
  std::ifstream in("gpgpusim.config");
  std::string line, value;
  while (std::getline(in, line)) {
    std::istringstream words(line);
    std::string name;
    if (words >> name && name == option) std::getline(words >> std::ws, value);
  }
  return value;
}

static unsigned l2_bytes() {
  const memory_config *mem = gpu()->getMemoryConfig();
  const cache_config &l2 = mem->m_L2_config;
  return l2.get_num_lines() * l2.get_line_sz() * mem->m_n_mem_sub_partition;  // sets x ways x line
}

// ---------------------------------------------------------------- initialization and device
extern "C" CUresult CUDAAPI cuInit(unsigned int flags) {
  if (flags != 0) return CUDA_ERROR_INVALID_VALUE;
  if (!std::ifstream("gpgpusim.config"))
    fail("cuInit: no gpgpusim.config in the working directory (copy one from GPGPU-Sim's "
         "configs/tested-cfgs/ and run from there)");
  if (!getenv("PTXAS_CUDA_INSTALL_PATH"))
    fail("cuInit: PTXAS_CUDA_INSTALL_PATH is not set (scripts/sim/env.sh sets it)");
  context();  // reads the configuration and starts the simulator thread
  g_initialized = true;
  return CUDA_SUCCESS;
}

extern "C" CUresult CUDAAPI cuDriverGetVersion(int *version) {
  *version = CUDART_VERSION;  // the CUDA GPGPU-Sim was built against (11080)
  return CUDA_SUCCESS;
}

extern "C" CUresult CUDAAPI cuDeviceGetCount(int *count) {
  REQUIRE_INIT();
  *count = 1;
  return CUDA_SUCCESS;
}

extern "C" CUresult CUDAAPI cuDeviceGet(CUdevice *device, int ordinal) {
  REQUIRE_INIT();
  if (ordinal != 0) return CUDA_ERROR_INVALID_DEVICE;
  *device = 0;
  return CUDA_SUCCESS;
}

extern "C" CUresult CUDAAPI cuDeviceGetName(char *name, int len, CUdevice device) {
  REQUIRE_INIT();
  if (device != 0) return CUDA_ERROR_INVALID_DEVICE;
  const char *config = getenv("GPUBENCH_SIM_CONFIG_NAME");
  // g_gpgpusim_version_string reads "GPGPU-Sim Simulator Version 4.2.0".
  std::string version(g_gpgpusim_version_string);
  version.erase(version.find_last_not_of(" ") + 1);
  snprintf(name, len, "%s%s%s", version.c_str(), config ? ", " : "", config ? config : "");
  return CUDA_SUCCESS;
}

// The UUID names the configuration: two FNV-1a hashes of ./gpgpusim.config's bytes.
static CUresult device_uuid(CUuuid *uuid, CUdevice device) {
  REQUIRE_INIT();
  if (device != 0) return CUDA_ERROR_INVALID_DEVICE;
  std::ifstream in("gpgpusim.config", std::ios::binary);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  unsigned long long a = 14695981039346656037ull, b = 1099511628211ull * 31;
  for (unsigned char c : text) {
    a = (a ^ c) * 1099511628211ull;
    b = (b ^ c) * 1099511628211ull + 0x9e3779b97f4a7c15ull;
  }
  memcpy(uuid->bytes, &a, 8);
  memcpy(uuid->bytes + 8, &b, 8);
  return CUDA_SUCCESS;
}
extern "C" CUresult CUDAAPI cuDeviceGetUuid(CUuuid *uuid, CUdevice device) {
  return device_uuid(uuid, device);
}
extern "C" CUresult CUDAAPI cuDeviceGetUuid_v2(CUuuid *uuid, CUdevice device) {
  return device_uuid(uuid, device);
}

extern "C" CUresult CUDAAPI cuDeviceTotalMem_v2(size_t *bytes, CUdevice device) {
  REQUIRE_INIT();
  if (device != 0) return CUDA_ERROR_INVALID_DEVICE;
  *bytes = total_memory();
  return CUDA_SUCCESS;
}

extern "C" CUresult CUDAAPI cuDeviceComputeCapability(int *major, int *minor, CUdevice device) {
  REQUIRE_INIT();
  *major = gpu()->compute_capability_major();
  *minor = gpu()->compute_capability_minor();
  return CUDA_SUCCESS;
}

// Answered from the configuration GPGPU-Sim parsed; an attribute not listed stops the process.
extern "C" CUresult CUDAAPI cuDeviceGetAttribute(int *value, CUdevice_attribute attribute,
                                                 CUdevice device) {
  REQUIRE_INIT();
  if (device != 0) return CUDA_ERROR_INVALID_DEVICE;
  gpgpu_sim *g = gpu();
  const cudaDeviceProp *prop = g->get_prop();
  const shader_core_config *core = g->getShaderCoreConfig();
  const memory_config *mem = g->getMemoryConfig();
  switch ((int)attribute) {
    case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK: *value = prop->maxThreadsPerBlock; break;
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X: *value = prop->maxThreadsDim[0]; break;
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y: *value = prop->maxThreadsDim[1]; break;
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z: *value = prop->maxThreadsDim[2]; break;
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X: *value = prop->maxGridSize[0]; break;
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y: *value = prop->maxGridSize[1]; break;
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z: *value = prop->maxGridSize[2]; break;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK: *value = g->shared_mem_per_block(); break;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN:
      *value = g->shared_mem_size();  // a block may use all of the SM's (-gpgpu_shmem_size)
      break;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR:
      *value = g->shared_mem_size();
      break;
    case CU_DEVICE_ATTRIBUTE_WARP_SIZE: *value = g->wrp_size(); break;
    case CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK: *value = g->num_registers_per_block(); break;
    case CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR:
      *value = g->num_registers_per_core();
      break;
    case CU_DEVICE_ATTRIBUTE_CLOCK_RATE: *value = g->shader_clock(); break;  // kHz
    case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: *value = g->get_config().num_shader(); break;
    case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR: *value = g->threads_per_core(); break;
    case ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR: *value = core->max_cta_per_core; break;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: *value = g->compute_capability_major(); break;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: *value = g->compute_capability_minor(); break;
    case CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE: *value = l2_bytes(); break;
    case CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH:  // bits: channels x chips x bytes per chip
      *value = mem->m_n_mem * mem->gpu_n_mem_per_ctrlr * mem->busW * 8;
      break;
    case CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE: {  // kHz, the DRAM clock domain
      double core_mhz, icnt_mhz, l2_mhz, dram_mhz;
      std::string domains = config_option("-gpgpu_clock_domains");
      if (sscanf(domains.c_str(), "%lf:%lf:%lf:%lf", &core_mhz, &icnt_mhz, &l2_mhz, &dram_mhz) != 4)
        fail("cuDeviceGetAttribute: cannot read -gpgpu_clock_domains from gpgpusim.config");
      *value = (int)(dram_mhz * 1000);
      break;
    }
    case ATTRIBUTE_MEMORY_POOLS_SUPPORTED: *value = 0; break;  // no cuMemAllocAsync
    case CU_DEVICE_ATTRIBUTE_INTEGRATED: *value = 0; break;
    case CU_DEVICE_ATTRIBUTE_CONCURRENT_KERNELS: *value = 0; break;  // one stream at a time here
    default:
      fail("cuDeviceGetAttribute: attribute %d is not answered by the simulated device",
           (int)attribute);
  }
  return CUDA_SUCCESS;
}

// ---------------------------------------------------------------- contexts
extern "C" CUresult CUDAAPI cuDevicePrimaryCtxRetain(CUcontext *pctx, CUdevice device) {
  REQUIRE_INIT();
  if (device != 0) return CUDA_ERROR_INVALID_DEVICE;
  *pctx = context();
  return CUDA_SUCCESS;
}
static CUresult primary_release(CUdevice device) {
  REQUIRE_INIT();
  return device == 0 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_DEVICE;  // the context lives on
}
extern "C" CUresult CUDAAPI cuDevicePrimaryCtxRelease(CUdevice d) { return primary_release(d); }
extern "C" CUresult CUDAAPI cuDevicePrimaryCtxRelease_v2(CUdevice d) { return primary_release(d); }

extern "C" CUresult CUDAAPI cuCtxSetCurrent(CUcontext c) {
  REQUIRE_INIT();
  if (c != nullptr && c != context()) return CUDA_ERROR_INVALID_CONTEXT;
  g_current = c;
  return CUDA_SUCCESS;
}
extern "C" CUresult CUDAAPI cuCtxGetCurrent(CUcontext *c) {
  REQUIRE_INIT();
  *c = g_current;
  return CUDA_SUCCESS;
}
extern "C" CUresult CUDAAPI cuCtxGetDevice(CUdevice *device) {
  REQUIRE_INIT();
  if (!g_current) return CUDA_ERROR_INVALID_CONTEXT;
  *device = 0;
  return CUDA_SUCCESS;
}
extern "C" CUresult CUDAAPI cuCtxSynchronize(void) {
  REQUIRE_INIT();
  synchronize();
  return CUDA_SUCCESS;
}

// ---------------------------------------------------------------- modules and functions
// ptxas 11.8 (GPGPU-Sim's source of register and shared-memory counts, run for the
// configuration's sm_XY) reads PTX ISA up to 7.8 and refuses a .target above the sm it is given.
// Its copy of the module says .version 7.8 and the configuration's target where the text asks
// for more (said on stderr); GPGPU-Sim's parser, which executes the kernels, reads the original.
static std::string ptx_for_ptxas(const char *text, unsigned sm) {
  static const std::regex version(R"(\.version\s+(\d+)\.(\d+))");
  static const std::regex target(R"(\.target\s+sm_(\d+)[a-z]?)");
  std::string ptx(text);
  std::smatch m;
  if (std::regex_search(ptx, m, version)) {
    int major = std::stoi(m[1]), minor = std::stoi(m[2]);
    if (major > 7 || (major == 7 && minor > 8)) {
      fprintf(stderr, "gpubench-sim: ptxas 11.8 is given this module's .version %d.%d as 7.8\n",
              major, minor);
      ptx.replace(m.position(0), m.length(0), ".version 7.8");
    }
  }
  if (std::regex_search(ptx, m, target) && (unsigned)std::stoi(m[1]) > sm) {
    fprintf(stderr,
            "gpubench-sim: ptxas is given this module's .target sm_%s as sm_%u, the "
            "configuration's (register counts are for sm_%u)\n",
            m[1].str().c_str(), sm, sm);
    ptx.replace(m.position(0), m.length(0), ".target sm_" + std::to_string(sm));
  }
  return ptx;
}

static std::string g_last_refusal;
const char *gpubench_sim::last_refusal() { return g_last_refusal.c_str(); }

// What GPGPU-Sim cannot run, refused with `code` (CUDA_ERROR_NOT_SUPPORTED: what it has no
// model of) and the reason (what cuGetErrorString then says), so the caller can skip what needed
// it: not a silent success, and not a stop, since the rest of the run can go on.
static CUresult refuse(const char *function, const std::string &why,
                       CUresult code = CUDA_ERROR_NOT_SUPPORTED) {
  g_last_refusal = std::string(function) + ": " + why;
  fprintf(stderr, "gpubench-sim: %s\n", g_last_refusal.c_str());
  return code;
}

extern "C" CUresult CUDAAPI cuTexObjectCreate(CUtexObject *, const CUDA_RESOURCE_DESC *,
                                              const CUDA_TEXTURE_DESC *,
                                              const CUDA_RESOURCE_VIEW_DESC *) {
  REQUIRE_INIT();
  return refuse("cuTexObjectCreate",
                "GPGPU-Sim models no texture objects (its texture path takes references bound "
                "through the runtime API)");
}

extern "C" CUresult CUDAAPI cuLinkCreate_v2(unsigned int, CUjit_option *, void **, CUlinkState *) {
  REQUIRE_INIT();
  return refuse("cuLinkCreate_v2",
                "the simulated device loads PTX text only; it links no modules at run time");
}

// GPGPU-Sim's PTX parser and assembler stop the process (a syntax error, a failed assertion) on
// a construct they do not know (lop3, mma, %globaltimer without the patch, ...), so a module is
// parsed first in a child process: where the child does not come back with 0, the module is
// refused with CUDA_ERROR_INVALID_PTX and the parser's last words on stderr, and the caller may
// skip what needed it. The child shares the empty "_<handle>.ptx" (below) and prints into a pipe
// whose text is dropped when it parsed (the real parse prints the same again). The simulator's
// thread is idle here (every call before returned synchronized), so the child's one thread
// meets no lock held by another.
static bool parser_takes(gpgpu_context *c, const char *text, unsigned handle, std::string *why) {
  int out[2];
  if (pipe(out) != 0) fail("cuModuleLoadData: pipe: %s", strerror(errno));
  fflush(stdout);
  fflush(stderr);
  pid_t child = fork();
  if (child < 0) fail("cuModuleLoadData: fork: %s", strerror(errno));
  if (child == 0) {
    close(out[0]);
    dup2(out[1], STDOUT_FILENO);
    dup2(out[1], STDERR_FILENO);
    c->gpgpu_ptx_sim_load_ptx_from_string(text, handle);
    fflush(stdout);
    fflush(stderr);
    _exit(0);
  }
  close(out[1]);
  std::string said;
  char buffer[4096];
  for (ssize_t n; (n = read(out[0], buffer, sizeof buffer)) != 0;) {
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) break;
    said.append(buffer, n);
  }
  close(out[0]);
  int status = 0;
  while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return true;
  // The parser's complaint is in its last lines (the offending line and a caret, or an
  // assertion); keep the last three that are not blank.
  std::vector<std::string> lines;
  std::istringstream in(said);
  for (std::string line; std::getline(in, line);)
    if (line.find_first_not_of(" \t\r") != std::string::npos) lines.push_back(line);
  std::string tail;
  for (size_t i = lines.size() > 3 ? lines.size() - 3 : 0; i < lines.size(); i++)
    tail += (tail.empty() ? "" : " | ") + lines[i].substr(lines[i].find_first_not_of(" \t"));
  char how[64];
  if (WIFSIGNALED(status))
    snprintf(how, sizeof how, "stopped by signal %d", WTERMSIG(status));
  else
    snprintf(how, sizeof how, "exited with %d", WEXITSTATUS(status));
  *why = std::string("GPGPU-Sim's PTX parser ") + how + (tail.empty() ? "" : ": " + tail);
  return false;
}

extern "C" CUresult CUDAAPI cuModuleLoadData(CUmodule *module, const void *image) {
  REQUIRE_INIT();
  const char *text = static_cast<const char *>(image);
  if (memcmp(text, "\x7f" "ELF", 4) == 0 || strstr(text, ".entry") == nullptr)
    fail("cuModuleLoadData: only PTX text with at least one .entry is supported (got a cubin, "
         "fatbin or empty module)");
  static unsigned next_handle = 1;
  gpgpu_context *c = ctx();
  CUctx_st *cu = context();
  CUmod_st *mod = new CUmod_st{next_handle++, nullptr};
  {
    // GPGPU-Sim's init_parser first parses the file "_<handle>.ptx" (written only under
    // -save_embedded_ptx) and then fclose()s whatever its scanner read: with the file absent
    // flex reads stdin (blocking on a terminal) and the fclose closes stdin, so the next
    // module's parse stops the process ("input in flex scanner failed"). An empty file of
    // that name, removed after, gives it nothing to parse and its own stream to close.
    std::string empty = "_" + std::to_string(mod->handle) + ".ptx";
    if (std::ifstream(empty))
      fail("cuModuleLoadData: %s exists in the working directory; GPGPU-Sim would parse it",
           empty.c_str());
    if (!std::ofstream(empty)) fail("cuModuleLoadData: cannot write %s", empty.c_str());
    std::string why;
    if (!parser_takes(c, text, mod->handle, &why)) {
      std::remove(empty.c_str());
      delete mod;
      return refuse("cuModuleLoadData", why, CUDA_ERROR_INVALID_PTX);
    }
    mod->symtab = c->gpgpu_ptx_sim_load_ptx_from_string(text, mod->handle);
    std::remove(empty.c_str());
  }
  cu->add_binary(mod->symtab, mod->handle);
  unsigned sm = gpu()->compute_capability_major() * 10 + gpu()->compute_capability_minor();
  std::string for_ptxas = ptx_for_ptxas(text, sm);
  c->gpgpu_ptxinfo_load_from_string(for_ptxas.c_str(), mod->handle, sm, 0);
  c->api->load_static_globals(mod->symtab, STATIC_ALLOC_LIMIT, 0xFFFFFFFF, gpu());
  c->api->load_constants(mod->symtab, STATIC_ALLOC_LIMIT, gpu());
  *module = mod;
  return CUDA_SUCCESS;
}

extern "C" CUresult CUDAAPI cuModuleLoadDataEx(CUmodule *module, const void *image,
                                               unsigned int num_options, CUjit_option *,
                                               void **) {
  if (num_options != 0)
    fail("cuModuleLoadDataEx: JIT options (%u given) are not supported", num_options);
  return cuModuleLoadData(module, image);
}

extern "C" CUresult CUDAAPI cuModuleUnload(CUmodule module) {
  REQUIRE_INIT();
  // GPGPU-Sim keeps every parsed module; only our handle goes. Functions stay registered.
  delete module;
  return CUDA_SUCCESS;
}

extern "C" CUresult CUDAAPI cuModuleGetFunction(CUfunction *function, CUmodule module,
                                                const char *name) {
  REQUIRE_INIT();
  symbol *s = module->symtab->lookup(name);
  if (!s || !s->get_pc()) return CUDA_ERROR_NOT_FOUND;
  CUfunc_st *f = new CUfunc_st{module, name, s->get_pc(), 48 * 1024};
  context()->register_function(module->handle, reinterpret_cast<const char *>(f), name);
  *function = f;
  return CUDA_SUCCESS;
}

extern "C" CUresult CUDAAPI cuModuleGetGlobal_v2(CUdeviceptr *dptr, size_t *bytes,
                                                 CUmodule module, const char *name) {
  REQUIRE_INIT();
  symbol *s = module->symtab->lookup(name);
  if (!s || s->get_pc()) return CUDA_ERROR_NOT_FOUND;
  if (dptr) *dptr = s->get_address();
  if (bytes) *bytes = s->get_size_in_bytes();
  return CUDA_SUCCESS;
}

extern "C" CUresult CUDAAPI cuFuncGetAttribute(int *value, CUfunction_attribute attribute,
                                               CUfunction f) {
  REQUIRE_INIT();
  const gpgpu_ptx_sim_info *info = f->entry->get_kernel_info();
  switch (attribute) {
    case CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK: {
      int most = gpu()->get_prop()->maxThreadsPerBlock;
      if (info->maxthreads > 0) most = info->maxthreads;
      if (info->regs > 0) most = std::min(most, gpu()->num_registers_per_block() / info->regs / 32 * 32);
      *value = most;
      break;
    }
    case CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES: *value = info->smem; break;
    case CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES: *value = info->cmem; break;
    case CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES: *value = info->lmem; break;
    case CU_FUNC_ATTRIBUTE_NUM_REGS: *value = info->regs; break;
    case CU_FUNC_ATTRIBUTE_PTX_VERSION: *value = info->ptx_version; break;
    case CU_FUNC_ATTRIBUTE_BINARY_VERSION: *value = info->sm_target; break;
    case CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES: *value = f->max_dynamic_shared_bytes; break;
    default:
      fail("cuFuncGetAttribute: attribute %d is not answered by the simulated device",
           (int)attribute);
  }
  return CUDA_SUCCESS;
}

extern "C" CUresult CUDAAPI cuFuncSetAttribute(CUfunction f, CUfunction_attribute attribute,
                                               int value) {
  REQUIRE_INIT();
  static bool said_carveout = false;
  switch (attribute) {
    case CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES:
      if (value < 0 || f->entry->get_kernel_info()->smem + value > (unsigned)gpu()->shared_mem_size())
        return CUDA_ERROR_INVALID_VALUE;
      f->max_dynamic_shared_bytes = value;
      return CUDA_SUCCESS;
    case CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT:
      // A preference in CUDA too; GPGPU-Sim picks the split itself (-gpgpu_adaptive_cache_config,
      // -gpgpu_shmem_option).
      if (value < -1 || value > 100) return CUDA_ERROR_INVALID_VALUE;
      note_once(&said_carveout, "the shared-memory carveout preference is left to GPGPU-Sim's "
                                "-gpgpu_adaptive_cache_config / -gpgpu_shmem_option");
      return CUDA_SUCCESS;
    default:
      fail("cuFuncSetAttribute: attribute %d (value %d) is not supported by the simulated device",
           (int)attribute, value);
  }
}

extern "C" CUresult CUDAAPI cuLaunchKernel(CUfunction f, unsigned int grid_x, unsigned int grid_y,
                                           unsigned int grid_z, unsigned int block_x,
                                           unsigned int block_y, unsigned int block_z,
                                           unsigned int shared_bytes, CUstream, void **params,
                                           void **extra) {
  REQUIRE_INIT();
  static bool said_dynamic = false;
  if (extra != nullptr) fail("cuLaunchKernel: the `extra` argument list is not supported");
  if (grid_x * grid_y * grid_z == 0 || block_x * block_y * block_z == 0 ||
      block_x * block_y * block_z > (unsigned)gpu()->get_prop()->maxThreadsPerBlock)
    return CUDA_ERROR_INVALID_VALUE;
  if (shared_bytes > (unsigned)f->max_dynamic_shared_bytes) return CUDA_ERROR_INVALID_VALUE;
  if (shared_bytes > 0)
    note_once(&said_dynamic, "dynamic shared memory is accessible but GPGPU-Sim does not count "
                             "it towards occupancy");
  // Stream 0 in GPGPU-Sim: returns once the kernel has been simulated to completion.
  return cuLaunchKernelInternal(f, grid_x, grid_y, grid_z, block_x, block_y, block_z, shared_bytes,
                                nullptr, params, nullptr, ctx());
}
