//! Loading a module with JIT options (cudarc's `load_module` takes none): the register cap
//! the register-file probe needs. Raw driver calls live here, behind a safe owner that unloads
//! the module when dropped.

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
        Err(GpuError::Driver {
            action: action.to_string(),
            detail: super::describe_status(status),
        })
    }
}

// SAFETY: the module and function handles are plain driver handles, valid on any thread that
// makes their context current (`load` and `launches` bind it first); nothing else is shared.
unsafe impl Send for CappedKernel {}

impl CappedKernel {
    /// Loads one capped kernel per cap in `caps`, JIT-compiling them on as many host threads
    /// as there are caps (the driver compiles modules of one context concurrently); in `caps`
    /// order. The JIT time counted is the wall time of the whole batch.
    pub fn load_many(
        gpu: &Gpu,
        module: &str,
        entry: &str,
        caps: &[u32],
    ) -> Result<Vec<CappedKernel>, GpuError> {
        gpu.spent.jit(|| {
            std::thread::scope(|scope| {
                let loads: Vec<_> = caps
                    .iter()
                    .map(|&cap| scope.spawn(move || CappedKernel::load(gpu, module, entry, cap)))
                    .collect();
                loads
                    .into_iter()
                    .map(|load| {
                        load.join().unwrap_or_else(|_| {
                            Err(GpuError::Driver {
                                action: format!("JIT-compiling cuda/{module}.cu"),
                                detail: "a compiling thread panicked".into(),
                            })
                        })
                    })
                    .collect()
            })
        })
    }

    fn load(
        gpu: &Gpu,
        module: &str,
        entry: &str,
        max_registers: u32,
    ) -> Result<CappedKernel, GpuError> {
        let embedded = kernels::module(module).ok_or_else(|| GpuError::Driver {
            action: format!("looking up kernel module {module}"),
            detail: "not embedded in this binary".into(),
        })?;
        gpu.context
            .bind_to_thread()
            .map_err(super::driver_error("binding the context"))?;
        let image = CString::new(embedded.ptx).map_err(|_| GpuError::Driver {
            action: format!("loading cuda/{module}.cu"),
            detail: "the PTX holds a NUL byte".into(),
        })?;
        let name = CString::new(entry).map_err(|_| GpuError::Driver {
            action: "naming a kernel".into(),
            detail: "the entry name holds a NUL byte".into(),
        })?;
        let mut options = [CUjit_option::CU_JIT_MAX_REGISTERS];
        // The driver reads an unsigned int option value from the pointer-sized slot itself.
        let mut values = [max_registers as usize as *mut c_void];
        let mut handle: sys::CUmodule = std::ptr::null_mut();
        // SAFETY: `image` is a NUL-terminated PTX string that outlives the call; one option
        // with its value slot; `handle` receives the module.
        let status = unsafe {
            sys::cuModuleLoadDataEx(
                &mut handle,
                image.as_ptr() as *const c_void,
                1,
                options.as_mut_ptr(),
                values.as_mut_ptr(),
            )
        };
        check(
            status,
            &format!("JIT-compiling cuda/{module}.cu with at most {max_registers} registers"),
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

impl Drop for CappedKernel {
    fn drop(&mut self) {
        // SAFETY: the module was loaded by `load` and is unloaded once, here.
        unsafe {
            sys::cuModuleUnload(self.module);
        }
    }
}
