//! Launchers of cuda/shared.cu: strided shared-memory loads.

use std::time::Duration;

use cudarc::driver::PushKernelArg;

use crate::error::GpuError;
use crate::gpu::launch::*;
use crate::gpu::Gpu;

/// Runs `shared_stride_{4,8,16}` (cuda/shared.cu) as one warp: each lane times `iterations`
/// dependent shared loads at element index lane * stride. Returns each lane's cycles.
///
/// Kernel signature: `(long long *out[32], unsigned *sink[32], int stride, int iterations)`,
/// with `32 * stride * element_bytes` bytes of dynamic shared memory.
pub fn shared_stride(
    gpu: &mut Gpu,
    element_bytes: u32,
    stride: u32,
    iterations: u32,
) -> Result<Vec<i64>, GpuError> {
    let entry = match element_bytes {
        4 => "shared_stride_4",
        8 => "shared_stride_8",
        16 => "shared_stride_16",
        other => {
            return Err(GpuError::driver(
                "choosing a shared-memory kernel",
                format!("no kernel loads {other}-byte elements"),
            ));
        }
    };
    let function = gpu.function("shared", entry)?;
    let stream = gpu.stream().clone();
    let mut out = zeros::<i64>(gpu, WARP_LANES, "shared-memory timings")?;
    let mut sink = zeros::<u32>(gpu, WARP_LANES, "the sink buffer")?;
    let (stride_arg, iterations_arg) = (
        as_i32(stride, "the stride")?,
        as_i32(iterations, "the iteration count")?,
    );
    let mut config = one_block(WARP_LANES as u32);
    config.shared_mem_bytes = WARP_LANES as u32 * stride * element_bytes;
    let mut launch = stream.launch_builder(&function);
    launch
        .arg(&mut out)
        .arg(&mut sink)
        .arg(&stride_arg)
        .arg(&iterations_arg);
    // SAFETY: the arguments match the kernel signature above in order and type; the dynamic
    // shared memory holds the 32 * stride elements the kernel indexes; out and sink hold 32.
    unsafe { launch_and_wait(gpu, entry, launch, config, Duration::from_secs(10)) }?;
    read(gpu, &out, "shared-memory timings")
}
