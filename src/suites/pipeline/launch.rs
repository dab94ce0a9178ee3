//! Launchers of cuda/pipeline.cu: latency and throughput loops.

use std::time::Duration;

use cudarc::driver::PushKernelArg;

use crate::error::GpuError;
use crate::gpu::launch::*;
use crate::gpu::Gpu;

/// Runs `lat_NAME` or `thr_NAME` (cuda/pipeline.cu) as one block of `threads` threads and
/// returns lane 0's start and end stamps of every warp.
///
/// Kernel signature: `(long long *stamps[2*warps], unsigned *sink[threads], int iterations,
/// unsigned seed)`; integer chains take their operands from `seed`, which is 3.
pub fn pipeline(
    gpu: &mut Gpu,
    entry: &str,
    threads: u32,
    iterations: u32,
) -> Result<Vec<i64>, GpuError> {
    let function = gpu.function("pipeline", entry)?;
    let stream = gpu.stream().clone();
    let warps = threads.div_ceil(WARP_LANES as u32) as usize;
    let mut stamps = zeros::<i64>(gpu, 2 * warps, "pipeline stamps")?;
    let mut sink = zeros::<u32>(gpu, threads as usize, "the sink buffer")?;
    let iterations = as_i32(iterations, "the iterations")?;
    let seed: u32 = 3;
    let mut launch = stream.launch_builder(&function);
    launch
        .arg(&mut stamps)
        .arg(&mut sink)
        .arg(&iterations)
        .arg(&seed);
    // SAFETY: the arguments match the kernel signature above in order and type; stamps holds
    // two per warp and sink one per thread of the single block.
    unsafe {
        launch_and_wait(
            gpu,
            entry,
            launch,
            one_block(threads),
            Duration::from_secs(30),
        )
    }?;
    read(gpu, &stamps, "pipeline stamps")
}
