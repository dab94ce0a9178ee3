//! The one seam between gpubench and the CUDA driver: opening a device, loading the embedded
//! PTX, launching and waiting with a deadline, and turning every driver failure into a
//! [`GpuError`] that says what to do. Typed launches (the only `unsafe`) are in [`launch`].

pub mod conditions;
pub mod connections;
pub mod health;
pub mod jit;
pub mod kept;
pub mod launch;
pub mod lease;
pub mod mechanisms;
pub mod prebuilt;
pub mod sass;
pub mod toolchain;

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use cudarc::driver::sys::{self, CUdevice_attribute, cudaError_enum};
use cudarc::driver::{CudaContext, CudaFunction, CudaModule, CudaStream, DriverError};
use cudarc::nvrtc::Ptx;
use serde::Serialize;

use crate::error::GpuError;
use crate::kernels;

/// What the driver reports about the device, for `info` and every run's metadata.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct DeviceProperties {
    pub ordinal: usize,
    pub name: String,
    pub compute_capability: String,
    pub multiprocessors: i32,
    pub l2_cache_bytes: i32,
    pub shared_memory_per_multiprocessor_bytes: i32,
    pub shared_memory_per_block_bytes: i32,
    pub shared_memory_per_block_optin_bytes: i32,
    pub registers_per_multiprocessor: i32,
    pub registers_per_block: i32,
    pub warp_size: i32,
    pub global_memory_bytes: usize,
    /// `CU_DEVICE_ATTRIBUTE_CLOCK_RATE`: the driver's nominal peak, not a measurement.
    pub nominal_sm_clock_mhz: f64,
    /// The CUDA version the driver supports, e.g. "13.0".
    pub driver_cuda_version: String,
    /// The kernel-module driver version from /proc/driver/nvidia/version, where readable.
    pub driver_version: Option<String>,
}

/// The shared-memory carveout the global-memory chases ask for by default: 0 % shared, the
/// most L1 (`--carveout` asks for others).
pub const CHASE_CARVEOUT_PERCENT: i32 = 0;

pub struct Gpu {
    pub(crate) context: Arc<CudaContext>,
    stream: Arc<CudaStream>,
    modules: HashMap<&'static str, Arc<CudaModule>>,
    /// How each loaded module reached the GPU: the driver's JIT, or a prebuilt cubin.
    pub loaded_from: std::collections::BTreeMap<&'static str, String>,
    /// The shared-memory carveout (percent) the cache chases ask the driver for.
    pub chase_carveout_percent: i32,
    /// The device is GPGPU-Sim behind gpubench's driver-API layer (sim/libcuda/, docs/simulator.md):
    /// its time is simulated, so probes sized in wall time are sized for it.
    pub simulated: bool,
    pub spent: TimeSpent,
    /// What [`conditions::at_start`] found before this process made its context, where it
    /// checked (a suite run on its own; under `all`, `all` checks once for every suite).
    pub conditions_at_start: Option<conditions::Conditions>,
}

/// Where a process's time with the GPU went, for `all`'s timing table: starting the driver
/// (cuInit, the context), JIT-compiling modules, and waiting for queued GPU work. What is left
/// of the wall time is host work. A process started ahead of its turn (see [`lease`]) counts
/// from its turn; the cuInit it made before is `driver_ahead`.
#[derive(Debug)]
pub struct TimeSpent {
    pub opened: Instant,
    pub driver_start: Duration,
    pub driver_ahead: Duration,
    /// From the context to the suite's own measurement ([`TimeSpent::note_setup_done`]).
    pub setup: Duration,
    jit_nanos: AtomicU64,
    gpu_wait_nanos: AtomicU64,
    /// The waits of [`Gpu::wait`] by the kernel each waited for: where the GPU time went.
    waits: std::sync::Mutex<std::collections::BTreeMap<String, KernelWait>>,
}

/// The waits for one kernel's queued work ([`Gpu::wait`]): how many, and their wall time
/// (what was queued before the kernel is in it too).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct KernelWait {
    pub kernel: String,
    pub waits: u32,
    pub seconds: f64,
}

impl TimeSpent {
    /// Notes that the suite's own measurement starts now: the time since the context is its
    /// setup.
    pub fn note_setup_done(&mut self) {
        self.setup = self.opened.elapsed().saturating_sub(self.driver_start);
    }

    /// Runs `f`, counting its wall time as JIT (a module load compiles its PTX).
    pub fn jit<T>(&self, f: impl FnOnce() -> T) -> T {
        let started = Instant::now();
        let value = f();
        add(&self.jit_nanos, started.elapsed());
        value
    }

    /// Runs `f`, counting its wall time as waiting for the GPU.
    pub fn gpu_wait<T>(&self, f: impl FnOnce() -> T) -> T {
        let started = Instant::now();
        let value = f();
        add(&self.gpu_wait_nanos, started.elapsed());
        value
    }

    pub fn jit_seconds(&self) -> f64 {
        self.jit_nanos.load(Ordering::Relaxed) as f64 / 1e9
    }

    /// The waits by kernel, the longest first.
    pub fn waits(&self) -> Vec<KernelWait> {
        let waits = self.waits.lock().unwrap_or_else(|e| e.into_inner());
        let mut all: Vec<KernelWait> = waits.values().cloned().collect();
        all.sort_by(|a, b| b.seconds.total_cmp(&a.seconds));
        all
    }

    /// Counts the time since `started` as waiting for the GPU, on `kernel`'s account.
    fn note_wait(&self, kernel: &str, started: Instant) {
        self.note_other_process_wait(kernel, started.elapsed());
    }

    /// Counts `took` as waiting for the GPU on `kernel`'s account where another process ran
    /// the kernel on this suite's turn (sync's probe processes): the GPU was busy with the
    /// suite's work though no wait of this process saw it.
    pub fn note_other_process_wait(&self, kernel: &str, took: Duration) {
        add(&self.gpu_wait_nanos, took);
        let mut waits = self.waits.lock().unwrap_or_else(|e| e.into_inner());
        let entry = waits.entry(kernel.to_string()).or_insert(KernelWait {
            kernel: kernel.to_string(),
            waits: 0,
            seconds: 0.0,
        });
        entry.waits += 1;
        entry.seconds += took.as_secs_f64();
    }

    pub fn gpu_wait_seconds(&self) -> f64 {
        self.gpu_wait_nanos.load(Ordering::Relaxed) as f64 / 1e9
    }

    /// Time this process waited for the GPU again after host work off it ([`lease::host_work`]).
    pub fn waiting_for_gpu_seconds(&self) -> f64 {
        lease::waited_after_host_work().as_secs_f64()
    }
}

fn add(total: &AtomicU64, took: Duration) {
    let nanos = u64::try_from(took.as_nanos()).unwrap_or(u64::MAX);
    total.fetch_add(nanos, Ordering::Relaxed);
}

/// "CUDA_ERROR_NAME: the driver's sentence", or the bare code where the driver cannot name it.
fn driver_detail(error: DriverError) -> String {
    describe_status(error.0)
}

pub(crate) fn describe_status(status: sys::CUresult) -> String {
    let error = DriverError(status);
    match (error.error_name(), error.error_string()) {
        (Ok(name), Ok(text)) => format!("{}: {}", name.to_string_lossy(), text.to_string_lossy()),
        (Ok(name), Err(_)) => name.to_string_lossy().into_owned(),
        _ => format!("{status:?}"),
    }
}

pub(crate) fn driver_error(action: &str) -> impl FnOnce(DriverError) -> GpuError + '_ {
    move |error| status_error(error.0, action)
}

/// The error of a driver call that returned `status` while doing `action`: the GPU lost, an
/// operation the device does not support (CUDA_ERROR_NOT_SUPPORTED: the simulated device's
/// texture objects and run-time linking, say), or a driver failure.
pub(crate) fn status_error(status: sys::CUresult, action: &str) -> GpuError {
    let (action, detail) = (action.to_string(), describe_status(status));
    if means_gpu_lost(status) {
        GpuError::Lost { action, detail }
    } else if status == cudaError_enum::CUDA_ERROR_NOT_SUPPORTED {
        GpuError::NotSupported { action, detail }
    } else {
        GpuError::driver(action, detail)
    }
}

/// Statuses that mean the device itself is gone or unavailable mid-run (fallen off the bus,
/// taken away, its driver torn down), not a fault of one kernel: nothing more can run on it.
/// CUDA_ERROR_UNKNOWN is not among them: the driver also returns it for faults a context
/// survives.
fn means_gpu_lost(status: sys::CUresult) -> bool {
    matches!(
        status,
        cudaError_enum::CUDA_ERROR_DEVICE_UNAVAILABLE
            | cudaError_enum::CUDA_ERROR_NO_DEVICE
            | cudaError_enum::CUDA_ERROR_DEINITIALIZED
    )
}

/// A device as the driver names it, without a context on it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct DeviceIdentity {
    pub index: usize,
    pub name: String,
    /// "GPU-xxxxxxxx-xxxx-…", as nvidia-smi prints it.
    pub uuid: String,
}

/// Loads and initialises the driver, checking first that a driver library exists at all
/// (cudarc panics when it has to load a missing libcuda).
fn start_driver() -> Result<(), GpuError> {
    // SAFETY: only tries to dlopen libcuda; no driver state is touched.
    if !unsafe { sys::is_culib_present() } {
        return Err(GpuError::NoDriver);
    }
    cudarc::driver::result::init().map_err(|e| match e.0 {
        cudaError_enum::CUDA_ERROR_NO_DEVICE => GpuError::NoDevice,
        _ => GpuError::DriverInit(driver_detail(e)),
    })
}

/// Fails as [`Gpu::open`] does where device `ordinal` is not among the `count` the driver sees.
fn check_ordinal(ordinal: usize, count: i32) -> Result<(), GpuError> {
    let count = usize::try_from(count).unwrap_or(0);
    if count == 0 {
        return Err(GpuError::NoDevice);
    }
    if ordinal >= count {
        return Err(GpuError::DeviceOutOfRange {
            requested: ordinal,
            count,
        });
    }
    Ok(())
}

/// Device `ordinal`'s compute capability ("9.0"), without a context: it fails as
/// [`Gpu::open`] would, but leaves the device to the processes that measure on it.
pub fn compute_capability(ordinal: usize) -> Result<String, GpuError> {
    let device = device_handle(ordinal)?;
    let attribute = |attribute| {
        // SAFETY: the device handle is valid after a successful cuDeviceGet.
        unsafe { cudarc::driver::result::device::get_attribute(device, attribute) }
            .map_err(driver_error("reading the compute capability"))
    };
    use CUdevice_attribute::*;
    Ok(format!(
        "{}.{}",
        attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)?,
        attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR)?
    ))
}

/// The UUID of device `ordinal`, read without creating a context (so that NVML lists no
/// process of gpubench's on it yet).
pub fn uuid_of(ordinal: usize) -> Result<String, GpuError> {
    device_uuid(device_handle(ordinal)?)
}

/// The driver's handle of device `ordinal`, with no context made; refused as [`Gpu::open`]
/// refuses an ordinal past the devices there are.
fn device_handle(ordinal: usize) -> Result<cudarc::driver::sys::CUdevice, GpuError> {
    start_driver()?;
    let count = CudaContext::device_count().map_err(driver_error("counting devices"))?;
    check_ordinal(ordinal, count)?;
    cudarc::driver::result::device::get(ordinal as i32).map_err(driver_error("finding the device"))
}

/// Every device the driver sees, in ordinal order.
pub fn devices() -> Result<Vec<DeviceIdentity>, GpuError> {
    start_driver()?;
    let count =
        cudarc::driver::result::device::get_count().map_err(driver_error("counting devices"))?;
    (0..count)
        .map(|ordinal| {
            let device = cudarc::driver::result::device::get(ordinal)
                .map_err(driver_error("finding a device"))?;
            let name = cudarc::driver::result::device::get_name(device)
                .map_err(driver_error("reading a device's name"))?;
            Ok(DeviceIdentity {
                index: ordinal as usize,
                name,
                uuid: device_uuid(device)?,
            })
        })
        .collect()
}

/// A device's UUID as nvidia-smi prints it.
fn device_uuid(device: sys::CUdevice) -> Result<String, GpuError> {
    let uuid = cudarc::driver::result::device::get_uuid(device)
        .map_err(driver_error("reading a device's UUID"))?;
    Ok(uuid_text(&uuid.bytes.map(|b| b as u8)))
}

/// 16 bytes as nvidia-smi prints a GPU's UUID.
fn uuid_text(bytes: &[u8; 16]) -> String {
    let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    format!(
        "GPU-{}-{}-{}-{}-{}",
        &hex[0..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..32]
    )
}

impl Gpu {
    /// Opens device `ordinal` ([`start_driver`] first).
    pub fn open(ordinal: usize) -> Result<Gpu, GpuError> {
        let mut started = Instant::now();
        start_driver()?;
        let count = CudaContext::device_count().map_err(driver_error("counting devices"))?;
        let mut driver_ahead = Duration::ZERO;
        let initialised = started.elapsed();
        if lease::take()?.is_some() {
            driver_ahead = initialised;
            started = Instant::now();
        }
        check_ordinal(ordinal, count)?;
        let context = CudaContext::new(ordinal).map_err(driver_error("creating a context"))?;
        kept::keep_for_later_suites(&context);
        let stream = context
            .new_stream()
            .map_err(driver_error("creating a stream"))?;
        lease::trace("context and stream");
        let simulated = is_simulator(
            &context
                .name()
                .map_err(driver_error("reading the device name"))?,
        );
        Ok(Gpu {
            context,
            stream,
            modules: HashMap::new(),
            loaded_from: std::collections::BTreeMap::new(),
            chase_carveout_percent: CHASE_CARVEOUT_PERCENT,
            simulated,
            conditions_at_start: None,
            spent: TimeSpent {
                opened: started,
                driver_start: started.elapsed(),
                driver_ahead,
                setup: Duration::ZERO,
                jit_nanos: AtomicU64::new(0),
                gpu_wait_nanos: AtomicU64::new(0),
                waits: Default::default(),
            },
        })
    }

    /// The device's UUID as nvidia-smi and NVML print it.
    pub fn uuid(&self) -> Result<String, GpuError> {
        device_uuid(self.context.cu_device())
    }

    pub fn stream(&self) -> &Arc<CudaStream> {
        &self.stream
    }

    /// Device memory free now, in bytes (what another allocation could still take).
    pub fn free_memory(&self) -> Result<u64, GpuError> {
        let (free, _) = self
            .context
            .mem_get_info()
            .map_err(driver_error("reading the free device memory"))?;
        Ok(free as u64)
    }

    /// The CUDA version the installed driver supports, as "major.minor".
    pub fn driver_cuda_version() -> Result<String, GpuError> {
        let mut version = 0;
        // SAFETY: cuDriverGetVersion writes one int through a valid pointer.
        let status = unsafe { sys::cuDriverGetVersion(&mut version) };
        if status != cudaError_enum::CUDA_SUCCESS {
            return Err(GpuError::DriverInit(format!(
                "cuDriverGetVersion: {status:?}"
            )));
        }
        Ok(format!("{}.{}", version / 1000, (version % 1000) / 10))
    }

    pub fn properties(&self) -> Result<DeviceProperties, GpuError> {
        let attribute = |attribute: CUdevice_attribute| {
            self.context
                .attribute(attribute)
                .map_err(driver_error("reading a device attribute"))
        };
        use CUdevice_attribute::*;
        let (major, minor) = self
            .context
            .compute_capability()
            .map_err(driver_error("reading the compute capability"))?;
        Ok(DeviceProperties {
            ordinal: self.context.ordinal(),
            name: self
                .context
                .name()
                .map_err(driver_error("reading the device name"))?,
            compute_capability: format!("{major}.{minor}"),
            multiprocessors: attribute(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)?,
            l2_cache_bytes: attribute(CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE)?,
            shared_memory_per_multiprocessor_bytes: attribute(
                CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR,
            )?,
            shared_memory_per_block_bytes: attribute(
                CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK,
            )?,
            shared_memory_per_block_optin_bytes: attribute(
                CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
            )?,
            registers_per_multiprocessor: attribute(
                CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR,
            )?,
            registers_per_block: attribute(CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK)?,
            warp_size: attribute(CU_DEVICE_ATTRIBUTE_WARP_SIZE)?,
            global_memory_bytes: self
                .context
                .total_mem()
                .map_err(driver_error("reading the memory size"))?,
            nominal_sm_clock_mhz: f64::from(attribute(CU_DEVICE_ATTRIBUTE_CLOCK_RATE)?) / 1000.0,
            driver_cuda_version: Gpu::driver_cuda_version()?,
            driver_version: kernel_module_version(),
        })
    }

    /// Loads `cuda/<name>.cu` (once) and returns `entry` from it.
    pub fn function(&mut self, module: &str, entry: &str) -> Result<CudaFunction, GpuError> {
        self.module(module)?
            .load_function(entry)
            .map_err(driver_error("finding a kernel entry point"))
    }

    /// Loads `cuda/<name>.cu` once and keeps it.
    pub fn module(&mut self, module: &str) -> Result<Arc<CudaModule>, GpuError> {
        let embedded = kernels::module(module).ok_or_else(|| {
            GpuError::driver(
                format!("looking up kernel module {module}"),
                "not embedded in this binary",
            )
        })?;
        if let Some(loaded) = self.modules.get(embedded.name) {
            return Ok(loaded.clone());
        }
        // A cubin `gpubench all` built ahead for this PTX loads without the driver's JIT.
        let prebuilt = prebuilt::find(embedded);
        let image = match &prebuilt {
            Some(found) => Ptx::from_binary(found.cubin.clone()),
            None => Ptx::from_src(embedded.ptx),
        };
        let loaded = self
            .spent
            .jit(|| self.context.load_module(image))
            .map_err(|e| match e.0 {
                // sim/libcuda refuses a module GPGPU-Sim's parser cannot take, and says why.
                cudaError_enum::CUDA_ERROR_INVALID_PTX if self.simulated => {
                    GpuError::SimulatorRefused {
                        module: module.to_string(),
                        detail: driver_detail(e),
                    }
                }
                cudaError_enum::CUDA_ERROR_UNSUPPORTED_PTX_VERSION => GpuError::PtxTooNew {
                    nvcc: kernels::NVCC_VERSION.to_string(),
                    driver_cuda: Gpu::driver_cuda_version().unwrap_or_else(|_| "unknown".into()),
                },
                _ => GpuError::PtxRejected {
                    module: module.to_string(),
                    detail: driver_detail(e),
                },
            })?;
        self.modules.insert(embedded.name, loaded.clone());
        self.loaded_from.insert(
            embedded.name,
            prebuilt.map_or_else(
                || "PTX compiled by the driver".to_string(),
                |found| format!("cubin prebuilt by gpubench all ({})", found.tools),
            ),
        );
        Ok(loaded)
    }

    /// Waits for all work queued on the stream, giving up after `deadline`. A kernel that
    /// overruns cannot be stopped from inside this process; the caller reports it and exits.
    pub fn wait(&self, kernel: &str, deadline: Duration) -> Result<(), GpuError> {
        let started = Instant::now();
        let waited = self.wait_untimed(kernel, deadline);
        self.spent.note_wait(kernel, started);
        waited
    }

    /// [`Gpu::wait`] for a kernel the host times: asleep for `quiet` (less than the kernel
    /// takes), then looking for its end without sleeping, so that the end is seen within
    /// microseconds (a sleep between looks adds up to 200 µs).
    pub fn wait_closely(
        &self,
        kernel: &str,
        quiet: Duration,
        deadline: Duration,
    ) -> Result<(), GpuError> {
        let started = Instant::now();
        let done = self
            .stream
            .record_event(None)
            .map_err(driver_error("recording an event"))?;
        std::thread::sleep(quiet);
        let waited = loop {
            match done.try_is_complete() {
                Ok(true) => break Ok(()),
                Ok(false) if started.elapsed() > deadline => {
                    break Err(GpuError::Timeout {
                        kernel: kernel.to_string(),
                        seconds: deadline.as_secs_f64(),
                    });
                }
                Ok(false) => std::hint::spin_loop(),
                Err(error) => break Err(driver_error("waiting for a kernel")(error)),
            }
        };
        self.spent.note_wait(kernel, started);
        waited
    }

    fn wait_untimed(&self, kernel: &str, deadline: Duration) -> Result<(), GpuError> {
        let done = self
            .stream
            .record_event(None)
            .map_err(driver_error("recording an event"))?;
        let started = Instant::now();
        loop {
            if done
                .try_is_complete()
                .map_err(driver_error("waiting for a kernel"))?
            {
                return Ok(());
            }
            if started.elapsed() > deadline {
                return Err(GpuError::Timeout {
                    kernel: kernel.to_string(),
                    seconds: deadline.as_secs_f64(),
                });
            }
            // Most waits are for launches of a millisecond or less (`all --quick` made about
            // 3000 of them on an H200), which a 200 µs sleep between looks overshoots by a
            // sixth or more: the first few milliseconds only yield between looks.
            if started.elapsed() < SPIN_BEFORE_SLEEP {
                std::thread::yield_now();
            } else {
                std::thread::sleep(Duration::from_micros(200));
            }
        }
    }
}

/// How long [`Gpu::wait`] looks for its kernel's end without sleeping between looks.
const SPIN_BEFORE_SLEEP: Duration = Duration::from_millis(5);

/// Whether a device name is the simulated device's: sim/libcuda names it after GPGPU-Sim's
/// version string ("GPGPU-Sim Simulator Version 4.2.0", then the configuration's name).
pub fn is_simulator(name: &str) -> bool {
    name.starts_with("GPGPU-Sim")
}

fn kernel_module_version() -> Option<String> {
    let text = std::fs::read_to_string("/proc/driver/nvidia/version").ok()?;
    parse_kernel_module_version(&text)
}

/// The first dotted number on the "NVRM version: ..." line (the proprietary and the open
/// kernel modules word that line differently).
fn parse_kernel_module_version(text: &str) -> Option<String> {
    let line = text.lines().find(|line| line.starts_with("NVRM version"))?;
    line.split_whitespace()
        .find(|word| word.contains('.') && word.chars().all(|c| c.is_ascii_digit() || c == '.'))
        .map(str::to_string)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_driver_version_line() {
        let open = "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.159.04  Release Build  (dvs-builder@U22)  Thu\nGCC version: gcc 12.3\n";
        assert_eq!(
            parse_kernel_module_version(open).as_deref(),
            Some("580.159.04")
        );
        let proprietary =
            "NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.54.15  Tue Mar  5 2024\n";
        assert_eq!(
            parse_kernel_module_version(proprietary).as_deref(),
            Some("550.54.15")
        );
        assert_eq!(parse_kernel_module_version("GCC version: 12.2\n"), None);
    }

    #[test]
    fn knows_the_simulated_device_by_its_name() {
        assert!(is_simulator(
            "GPGPU-Sim Simulator Version 4.2.0, SM7_QV100-1SM"
        ));
        assert!(!is_simulator("NVIDIA H200"));
        assert!(!is_simulator("NVIDIA GeForce RTX 3070 (GPGPU-Sim)"));
    }
}

#[cfg(test)]
mod identity_tests {
    #[test]
    fn uuids_print_as_nvidia_smi_prints_them() {
        let bytes = [
            0x4c, 0x9d, 0x09, 0xbc, 0x36, 0x35, 0xba, 0xc2, 0x86, 0x11, 0x78, 0x87, 0x68, 0xc2,
            0x9f, 0xbc,
        ];
        assert_eq!(
            super::uuid_text(&bytes),
            "GPU-4c9d09bc-3635-bac2-8611-788768c29fbc"
        );
    }
}
