//! The steps every launcher shares, and the launchers two or more suites (or a suite and a
//! suite-agnostic command) share, one file per kernel family (`cuda/<family>.cu`):
//! `bandwidth` (bandwidth, TMA), `dsm` (dsm, sm-map), `stamped` (flops, tensor),
//! `copy_engines` (bandwidth, TMA; copies that launch no kernel, timed the same way) and
//! `clock` (the clock probes of `experiments::clock`). A launcher one suite alone uses lives in
//! that suite's folder (`suites/<name>/launch.rs`), built from the public steps here: [`zeros`]
//! and [`upload`] (allocate), [`line_of`] and [`one_block`] (a one-dimensional grid),
//! [`allow_dynamic_shared`] (more than 48 KiB of shared memory), [`launch_and_wait`] (launch,
//! then wait with a deadline), [`timed`] (launches between two events), [`read`] (copy back)
//! and [`dsm::launch_cluster`] (thread-block clusters). Callers name the submodule
//! (`launch::dsm::dsm_latency`): nothing is glob re-exported, so who uses which launcher
//! shows. Every launcher, here or in a suite's folder, states in its `# Safety`-style comment
//! the argument order and types its kernel expects, and allocates every buffer at the size the
//! kernel writes.

use std::time::Duration;

use cudarc::driver::sys::{CUevent_flags, CUfunction_attribute};
use cudarc::driver::{
    CudaFunction, CudaSlice, DeviceRepr, LaunchArgs, LaunchConfig, PushKernelArg, ValidAsZeroBits,
};

use super::{Gpu, driver_error};
use crate::error::GpuError;

pub const WARP_LANES: usize = 32;

pub mod bandwidth;
pub mod clock;
pub mod copy_engines;
pub mod dsm;
pub mod stamped;

/// One block of `threads` threads.
pub fn one_block(threads: u32) -> LaunchConfig {
    line_of(1, threads)
}

/// A one-dimensional grid: `blocks` blocks of `threads` threads, no dynamic shared memory
/// (a launch that needs some sets `shared_mem_bytes` over this).
pub fn line_of(blocks: u32, threads: u32) -> LaunchConfig {
    LaunchConfig {
        grid_dim: (blocks, 1, 1),
        block_dim: (threads, 1, 1),
        shared_mem_bytes: 0,
    }
}

/// Lets `function` take `bytes` of dynamic shared memory (above the default 48 KiB a launch
/// needs this first); `action` names the step in the driver's error.
pub fn allow_dynamic_shared(
    function: &CudaFunction,
    bytes: u32,
    action: &str,
) -> Result<(), GpuError> {
    function
        .set_attribute(
            CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
            i32::try_from(bytes).unwrap_or(i32::MAX),
        )
        .map_err(driver_error(action))
}

pub fn as_i32(value: u32, what: &str) -> Result<i32, GpuError> {
    i32::try_from(value).map_err(|_| {
        GpuError::driver(
            format!("passing {what} to a kernel"),
            format!("{value} does not fit a 32-bit int"),
        )
    })
}

/// How long a chase runs (the cache, atomics and TMA chases): `warm` untimed loads, then
/// `steps` timed ones, within `deadline`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Laps {
    pub warm: u32,
    pub steps: u32,
    pub deadline: Duration,
}

impl Laps {
    /// Every load of the chase, untimed and timed: where it ends.
    pub fn loads(self) -> u64 {
        u64::from(self.warm) + u64::from(self.steps)
    }

    /// The untimed and timed lengths as the kernels' `int` arguments.
    pub fn ints(self) -> Result<(i32, i32), GpuError> {
        Ok((
            as_i32(self.warm, "the warm-up length")?,
            as_i32(self.steps, "the chase length")?,
        ))
    }
}

/// `n` zeros on the device; `what` names the buffer in an error.
pub fn zeros<T: DeviceRepr + ValidAsZeroBits>(
    gpu: &Gpu,
    n: usize,
    what: &str,
) -> Result<CudaSlice<T>, GpuError> {
    gpu.stream()
        .alloc_zeros::<T>(n)
        .map_err(driver_error(&format!("allocating {what}")))
}

/// `data` copied to the device; `what` names it in an error.
pub fn upload<T: DeviceRepr>(gpu: &Gpu, data: &[T], what: &str) -> Result<CudaSlice<T>, GpuError> {
    gpu.stream()
        .clone_htod(data)
        .map_err(driver_error(&format!("copying {what}")))
}

/// `buffer` copied back; `what` names it in an error.
pub fn read<T: DeviceRepr>(
    gpu: &Gpu,
    buffer: &CudaSlice<T>,
    what: &str,
) -> Result<Vec<T>, GpuError> {
    gpu.stream()
        .clone_dtoh(buffer)
        .map_err(driver_error(&format!("reading {what}")))
}

/// Queues `entry` with the arguments pushed on `builder` and `config`.
///
/// # Safety
///
/// The arguments on `builder` must match `entry`'s signature in order and type, and every
/// buffer among them must hold every element the kernel indexes when launched with `config`.
pub unsafe fn launch(
    entry: &str,
    mut builder: LaunchArgs,
    config: LaunchConfig,
) -> Result<(), GpuError> {
    // SAFETY: the caller's contract above.
    unsafe { builder.launch(config) }
        .map(|_| ())
        .map_err(driver_error(&format!("launching {entry}")))
}

/// [`launch`], then waits for the kernel, giving up after `deadline` (a kernel that overruns
/// is reported, never waited for forever).
///
/// # Safety
///
/// As for [`launch`].
pub unsafe fn launch_and_wait(
    gpu: &Gpu,
    entry: &str,
    builder: LaunchArgs,
    config: LaunchConfig,
    deadline: Duration,
) -> Result<(), GpuError> {
    // SAFETY: the caller's contract above.
    unsafe { launch(entry, builder, config) }?;
    gpu.wait(entry, deadline)
}

/// Runs `enqueue` (which queues launches on the stream) between two timing events, waits up to
/// `deadline`, and returns the GPU milliseconds between the events.
pub fn timed(
    gpu: &Gpu,
    entry: &str,
    deadline: Duration,
    enqueue: impl FnOnce() -> Result<(), GpuError>,
) -> Result<f64, GpuError> {
    let stream = gpu.stream();
    let event = || {
        stream
            .record_event(Some(CUevent_flags::CU_EVENT_DEFAULT))
            .map_err(driver_error("recording a timing event"))
    };
    let start = event()?;
    enqueue()?;
    let stop = event()?;
    gpu.wait(entry, deadline)?;
    let ms = start
        .elapsed_ms(&stop)
        .map_err(driver_error("reading a timing event"))?;
    Ok(f64::from(ms))
}
