//! Profiler ranges: where a profiler is attached to this process (Nsight Compute in
//! application range replay), a range is reported as one result, the sum of every launch in
//! it, instead of one result for each launch.

use crate::error::GpuError;
use crate::gpu::{Gpu, driver_error};

/// Runs `f` as one profiler range (cuProfilerStart to cuProfilerStop), its queued work
/// finished inside the range. With no profiler attached the two calls do nothing.
pub fn profiled<T, E: From<GpuError>>(
    gpu: &mut Gpu,
    f: impl FnOnce(&mut Gpu) -> Result<T, E>,
) -> Result<T, E> {
    gpu.context
        .bind_to_thread()
        .map_err(driver_error("binding the context"))?;
    cudarc::driver::profiler_start().map_err(driver_error("starting a profiler range"))?;
    // Where the time of a range goes under a profiler (the steps in gpubench's trace): its
    // start (the profiler's set-up, on the first), its work, its stop (reading the counters).
    crate::harness::sharing::step_done("profiler range started");
    let value = f(gpu);
    gpu.stream()
        .synchronize()
        .map_err(driver_error("finishing a profiler range's work"))?;
    crate::harness::sharing::step_done("profiler range's work done");
    cudarc::driver::profiler_stop().map_err(driver_error("ending a profiler range"))?;
    value
}
