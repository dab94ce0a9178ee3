//! Compiling PTX with the driver's linker, concurrently and with JIT options (cudarc's
//! `load_module` takes none): the register cap the register-file probe needs, the generated
//! kernels of the instruction space. Raw driver calls live here, behind a safe owner that
//! unloads a module when dropped.

use std::ffi::{CString, c_void};

use cudarc::driver::sys::{self, CUfunction_attribute, CUjit_option, cudaError_enum};

use super::Gpu;
use crate::error::GpuError;
use crate::kernels;

/// One kernel of one module, JIT-compiled with at most `max_registers` registers per thread.
pub struct CappedKernel {
    module: sys::CUmodule,
    function: sys::CUfunction,
    pub registers: i32,
    /// The driver's largest block for this kernel (CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK).
    pub max_threads_attribute: i32,
}

fn check(status: sys::CUresult, action: &str) -> Result<(), GpuError> {
    if status == cudaError_enum::CUDA_SUCCESS {
        Ok(())
    } else {
        Err(super::status_error(status, action))
    }
}

impl CappedKernel {
    /// Loads one capped kernel per cap in `caps`, in `caps` order, compiled concurrently
    /// (see [`compile_concurrently`]).
    pub fn load_many(
        gpu: &Gpu,
        module: &str,
        entry: &str,
        caps: &[u32],
    ) -> Result<Vec<CappedKernel>, GpuError> {
        let embedded = kernels::module(module).ok_or_else(|| {
            GpuError::driver(
                format!("looking up kernel module {module}"),
                "not embedded in this binary",
            )
        })?;
        let jobs: Vec<(&str, Option<u32>)> =
            caps.iter().map(|&cap| (embedded.ptx, Some(cap))).collect();
        let cubins = compile_concurrently(gpu, &jobs)?;
        caps.iter()
            .zip(&cubins)
            .map(|(&cap, cubin)| CappedKernel::load(gpu, module, entry, cap, cubin))
            .collect()
    }

    /// Loads `cubin` (cuda/`module`.cu compiled with at most `max_registers` registers).
    fn load(
        gpu: &Gpu,
        module: &str,
        entry: &str,
        max_registers: u32,
        cubin: &[u8],
    ) -> Result<CappedKernel, GpuError> {
        gpu.context
            .bind_to_thread()
            .map_err(super::driver_error("binding the context"))?;
        let name = CString::new(entry)
            .map_err(|_| GpuError::driver("naming a kernel", "the entry name holds a NUL byte"))?;
        let mut handle: sys::CUmodule = std::ptr::null_mut();
        // SAFETY: `cubin` is a complete image from cuLinkComplete that outlives the call;
        // `handle` receives the module.
        let status = gpu
            .spent
            .jit(|| unsafe { sys::cuModuleLoadData(&mut handle, cubin.as_ptr() as *const c_void) });
        check(
            status,
            &format!("loading cuda/{module}.cu compiled with at most {max_registers} registers"),
        )?;
        let mut kernel = CappedKernel {
            module: handle,
            function: std::ptr::null_mut(),
            registers: 0,
            max_threads_attribute: 0,
        };
        // SAFETY: the module was just loaded; `name` is NUL-terminated.
        check(
            unsafe { sys::cuModuleGetFunction(&mut kernel.function, kernel.module, name.as_ptr()) },
            "finding the register-probe kernel",
        )?;
        kernel.registers = kernel.attribute(CUfunction_attribute::CU_FUNC_ATTRIBUTE_NUM_REGS)?;
        kernel.max_threads_attribute =
            kernel.attribute(CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK)?;
        Ok(kernel)
    }

    fn attribute(&self, attribute: CUfunction_attribute) -> Result<i32, GpuError> {
        let mut value = 0;
        // SAFETY: `function` is a live function of a loaded module; one int is written.
        check(
            unsafe { sys::cuFuncGetAttribute(&mut value, attribute, self.function) },
            "reading a kernel attribute",
        )?;
        Ok(value)
    }

    /// Launches `regs_pressure(unsigned *out, unsigned seed)` with one block of `threads`
    /// threads; `Ok(false)` when the driver refuses it for lack of resources.
    pub fn launches(&self, gpu: &Gpu, threads: u32) -> Result<bool, GpuError> {
        let stream = gpu.stream();
        let mut out = stream
            .alloc_zeros::<u32>(threads as usize)
            .map_err(super::driver_error("allocating the probe's output"))?;
        let (pointer, _guard) = cudarc::driver::DevicePtrMut::device_ptr_mut(&mut out, stream);
        let mut pointer = pointer;
        let mut seed: u32 = 7;
        let mut parameters = [
            &mut pointer as *mut sys::CUdeviceptr as *mut c_void,
            &mut seed as *mut u32 as *mut c_void,
        ];
        // SAFETY: the kernel takes (unsigned *out, unsigned seed): a device pointer to
        // `threads` u32 values, one per thread of the single block, and a u32.
        let status = unsafe {
            sys::cuLaunchKernel(
                self.function,
                1,
                1,
                1,
                threads,
                1,
                1,
                0,
                stream.cu_stream(),
                parameters.as_mut_ptr(),
                std::ptr::null_mut(),
            )
        };
        match status {
            cudaError_enum::CUDA_SUCCESS => {}
            cudaError_enum::CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES
            | cudaError_enum::CUDA_ERROR_INVALID_VALUE => {
                return Ok(false);
            }
            other => check(other, "launching the register probe")?,
        }
        gpu.spent
            .gpu_wait(|| stream.synchronize())
            .map_err(super::driver_error("running the register probe"))?;
        Ok(true)
    }
}

/// Compiles each `(ptx, max_registers)` job to a cubin for the current device with the
/// driver's linker (cuLink*), on up to as many host threads as the machine has cores, in `jobs`
/// order. The driver serialises cuModuleLoadData of PTX but runs its linker concurrently:
/// 16 modules of 8192 instructions took 8.4 s on one thread and 0.8 s on 16 (H100 host, driver
/// 580). Loading the cubins afterwards compiles nothing. The JIT time counted is the batch's
/// wall time. Compiling is host work: under `gpubench all` the process steps aside meanwhile
/// ([`super::lease::host_work`]), so another suite may measure; nothing of the caller's may be
/// running on the GPU.
pub fn compile_concurrently(
    gpu: &Gpu,
    jobs: &[(&str, Option<u32>)],
) -> Result<Vec<Vec<u8>>, GpuError> {
    if jobs.is_empty() {
        return Ok(Vec::new());
    }
    super::lease::host_work(|| compile_here(gpu, jobs))
        .map_err(|e| GpuError::driver("stepping aside to compile", format!("{e:#}")))?
}

/// [`compile_concurrently`] without stepping aside, for a caller that already has.
pub fn compile_here(gpu: &Gpu, jobs: &[(&str, Option<u32>)]) -> Result<Vec<Vec<u8>>, GpuError> {
    gpu.spent
        .jit(|| link_on_threads(gpu, jobs))
        .into_iter()
        .collect()
}

/// [`link`] of every job, on up to as many threads as the host has cores (two fewer under
/// `gpubench all`), in `jobs` order.
fn link_on_threads(gpu: &Gpu, jobs: &[(&str, Option<u32>)]) -> Vec<Result<Vec<u8>, GpuError>> {
    // Under `gpubench all` another suite measures meanwhile: two cores stay free, for its host
    // work and for the driver's when the next suite creates its context, and the compiles
    // run at background priority.
    let under_all = super::lease::var(super::lease::LEASE_ENV).is_some();
    let cores = std::thread::available_parallelism().map_or(4, usize::from);
    let spare = if under_all { 2 } else { 0 };
    let threads = cores.saturating_sub(spare).min(jobs.len()).max(1);
    let next = std::sync::atomic::AtomicUsize::new(0);
    type Slot = std::sync::Mutex<Option<Result<Vec<u8>, GpuError>>>;
    let results: Vec<Slot> = jobs.iter().map(|_| Slot::new(None)).collect();
    std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| {
                if under_all {
                    super::lease::lower_priority();
                }
                loop {
                    let k = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    let Some(&(ptx, max_registers)) = jobs.get(k) else {
                        break;
                    };
                    let cubin = gpu
                        .context
                        .bind_to_thread()
                        .map_err(super::driver_error("binding the context"))
                        .and_then(|()| link(ptx, max_registers));
                    if let Ok(mut slot) = results[k].lock() {
                        *slot = Some(cubin);
                    }
                }
            });
        }
    });
    results
        .into_iter()
        .map(|slot| {
            slot.into_inner().ok().flatten().unwrap_or_else(|| {
                Err(GpuError::driver(
                    "JIT-compiling generated code",
                    "a compiling thread ended early",
                ))
            })
        })
        .collect()
}

/// One PTX text through the driver's linker: the cubin's bytes.
fn link(ptx: &str, max_registers: Option<u32>) -> Result<Vec<u8>, GpuError> {
    let image = CString::new(ptx).map_err(|_| {
        GpuError::driver("JIT-compiling generated code", "the PTX holds a NUL byte")
    })?;
    let mut options = [CUjit_option::CU_JIT_MAX_REGISTERS];
    // The driver reads an unsigned int option value from the pointer-sized slot itself.
    let mut values = [max_registers.unwrap_or(0) as usize as *mut c_void];
    let count = u32::from(max_registers.is_some());
    let mut state: sys::CUlinkState = std::ptr::null_mut();
    // SAFETY: zero or one option with its value slot; `state` receives the link state.
    check(
        unsafe {
            sys::cuLinkCreate_v2(count, options.as_mut_ptr(), values.as_mut_ptr(), &mut state)
        },
        "starting the driver's linker",
    )?;
    let name = c"generated";
    // SAFETY: `image` is NUL-terminated and outlives the call (its size counts the NUL); no
    // per-input options.
    let added = unsafe {
        sys::cuLinkAddData_v2(
            state,
            sys::CUjitInputType::CU_JIT_INPUT_PTX,
            image.as_ptr() as *mut c_void,
            image.as_bytes_with_nul().len(),
            name.as_ptr(),
            0,
            std::ptr::null_mut(),
            std::ptr::null_mut(),
        )
    };
    let mut cubin: *mut c_void = std::ptr::null_mut();
    let mut size = 0_usize;
    let completed = if added == cudaError_enum::CUDA_SUCCESS {
        // SAFETY: the state holds the PTX just added; the driver writes the image's address
        // and size, valid until cuLinkDestroy.
        unsafe { sys::cuLinkComplete(state, &mut cubin, &mut size) }
    } else {
        added
    };
    let bytes = (completed == cudaError_enum::CUDA_SUCCESS && !cubin.is_null()).then(|| {
        // SAFETY: `cubin` points at `size` bytes owned by the live link state.
        unsafe { std::slice::from_raw_parts(cubin as *const u8, size) }.to_vec()
    });
    // SAFETY: `state` came from cuLinkCreate and is destroyed once, after its image was copied.
    unsafe { sys::cuLinkDestroy(state) };
    check(completed, "JIT-compiling generated code")?;
    bytes.ok_or_else(|| {
        GpuError::driver(
            "JIT-compiling generated code",
            "the linker returned no image",
        )
    })
}

impl Drop for CappedKernel {
    fn drop(&mut self) {
        // SAFETY: the module was loaded by `load` and is unloaded once, here.
        unsafe {
            sys::cuModuleUnload(self.module);
        }
    }
}
