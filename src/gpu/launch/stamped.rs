//! Launcher of the kernels timed by block stamps: cuda/tensor.cu's mma.sync and wgmma latency
//! and throughput kernels (and cuda/tensor_shapes.cu's), and cuda/flops*.cu's peak FMA rates.

use super::*;

/// Runs `entry` of `module` as `blocks` blocks of `threads` and returns the `per_block` stamps
/// each block wrote (two for tensor.cu's kernels: start and end; four for flops.cu's).
///
/// Kernel signature: `(long long *stamps[per_block*blocks], float *sink[blocks*threads], int
/// iterations)`.
pub fn stamped_blocks(
    gpu: &mut Gpu,
    module: &str,
    entry: &str,
    blocks: u32,
    threads: u32,
    iterations: u32,
    per_block: usize,
) -> Result<Vec<i64>, GpuError> {
    let function = gpu.function(module, entry)?;
    let stream = gpu.stream().clone();
    let mut stamps = zeros::<i64>(gpu, per_block * blocks as usize, "block stamps")?;
    let mut sink = zeros::<f32>(gpu, (blocks * threads) as usize, "the sink buffer")?;
    let iterations = as_i32(iterations, "--iterations")?;
    let mut launch = stream.launch_builder(&function);
    launch.arg(&mut stamps).arg(&mut sink).arg(&iterations);
    let config = line_of(blocks, threads);
    // SAFETY: the arguments match the kernel signature above in order and type; stamps holds
    // per_block per block and sink one per thread of the grid; the wgmma kernels' shared tiles are
    // static.
    unsafe { launch_and_wait(gpu, entry, launch, config, Duration::from_secs(30)) }?;
    read(gpu, &stamps, "block stamps")
}
