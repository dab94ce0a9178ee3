//! Launchers of cuda/branch.cu: the 32-way branch-order probe.

use std::time::Duration;

use cudarc::driver::PushKernelArg;

use crate::error::GpuError;
use crate::gpu::launch::*;
use crate::gpu::Gpu;

/// Runs `branch_order` (cuda/branch.cu) as one block of `threads` (32 or 64) threads; lane l
/// takes the clause k with c[k] == l. Returns start and end stamps per thread.
///
/// Kernel signature: `(const int *c[32], long long *stamps[threads*2], unsigned *sink[threads],
/// int work)`.
pub fn branch_order(
    gpu: &mut Gpu,
    order: &[i32; WARP_LANES],
    threads: u32,
    work: u32,
) -> Result<Vec<i64>, GpuError> {
    let function = gpu.function("branch", "branch_order")?;
    let stream = gpu.stream().clone();
    let c = upload(gpu, order.as_slice(), "the clause order")?;
    let mut stamps = zeros::<i64>(gpu, threads as usize * 2, "branch stamps")?;
    let mut sink = zeros::<u32>(gpu, threads as usize, "the sink buffer")?;
    let work = as_i32(work, "the work per path")?;
    let mut launch = stream.launch_builder(&function);
    launch.arg(&c).arg(&mut stamps).arg(&mut sink).arg(&work);
    // SAFETY: the arguments match the kernel signature above in order and type; stamps holds
    // two per thread and sink one per thread for the `threads` launched.
    unsafe {
        launch_and_wait(
            gpu,
            "branch_order",
            launch,
            one_block(threads),
            Duration::from_secs(10),
        )
    }?;
    read(gpu, &stamps, "branch stamps")
}
