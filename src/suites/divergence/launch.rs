//! Launchers of cuda/divergence.cu: the timed single and double loops and the push/pop split.

use std::time::Duration;

use cudarc::driver::PushKernelArg;

use crate::error::GpuError;
use crate::gpu::launch::*;
use crate::gpu::Gpu;

/// Per-sample, per-lane cycles of one divergence-loop launch, `samples × 32`, row-major.
#[derive(Debug, Clone, PartialEq)]
pub struct LoopTimings {
    /// clock64 difference around the timed loop (timer overhead included).
    pub cycles: Vec<i64>,
    /// Two back-to-back clock64 reads in the same lane and sample.
    pub overhead: Vec<i64>,
}

/// Runs `divergence_single` or `divergence_double` (cuda/divergence.cu) as one warp.
///
/// Kernel signature: `(const int *bounds[32], long long *cycles[samples*32],
/// long long *overhead[samples*32], int *sink[32], int samples, int preheat, int unroll)`.
pub fn divergence_loop(
    gpu: &mut Gpu,
    entry: &str,
    bounds: &[i32; WARP_LANES],
    samples: u32,
    preheat: u32,
    unroll: u32,
    deadline: Duration,
) -> Result<LoopTimings, GpuError> {
    let function = gpu.function("divergence", entry)?;
    let stream = gpu.stream().clone();
    let device_bounds = upload(gpu, bounds.as_slice(), "the lane bounds")?;
    let cells = samples as usize * WARP_LANES;
    let mut cycles = zeros::<i64>(gpu, cells, "the cycle buffer")?;
    let mut overhead = zeros::<i64>(gpu, cells, "the overhead buffer")?;
    let mut sink = zeros::<i32>(gpu, WARP_LANES, "the sink buffer")?;
    let (samples, preheat, unroll) = (
        as_i32(samples, "the samples")?,
        as_i32(preheat, "the preheat runs")?,
        as_i32(unroll, "the unrolled runs")?,
    );
    let mut launch = stream.launch_builder(&function);
    launch
        .arg(&device_bounds)
        .arg(&mut cycles)
        .arg(&mut overhead)
        .arg(&mut sink)
        .arg(&samples)
        .arg(&preheat)
        .arg(&unroll);
    // SAFETY: the arguments match the kernel signature above in order and type; `cycles` and
    // `overhead` hold samples*32 elements and `sink` 32, which is all one warp writes.
    unsafe { launch_and_wait(gpu, entry, launch, one_block(WARP_LANES as u32), deadline) }?;
    Ok(LoopTimings {
        cycles: read(gpu, &cycles, "divergence cycles")?,
        overhead: read(gpu, &overhead, "divergence timer overheads")?,
    })
}

/// Dynamic shared memory the split kernel needs for `stride` stamps per lane.
pub fn split_shared_bytes(stride: usize) -> usize {
    stride * WARP_LANES * std::mem::size_of::<i64>()
}

/// Runs `divergence_split` (cuda/divergence.cu) as one warp and returns its stamps,
/// `samples × 32 × stride` with `stride = max(bounds) + 2`, row-major.
///
/// Kernel signature: `(const int *bounds[32], long long *stamps[samples*32*stride],
/// int *sink[32], int samples, int preheat, int stride)`.
pub fn divergence_split(
    gpu: &mut Gpu,
    bounds: &[i32; WARP_LANES],
    samples: u32,
    preheat: u32,
    deadline: Duration,
) -> Result<(Vec<i64>, usize), GpuError> {
    let function = gpu.function("divergence", "divergence_split")?;
    let stream = gpu.stream().clone();
    let stride = bounds.iter().copied().max().unwrap_or(0).max(0) as usize + 2;
    let device_bounds = upload(gpu, bounds.as_slice(), "the lane bounds")?;
    let mut stamps = zeros::<i64>(
        gpu,
        samples as usize * WARP_LANES * stride,
        "the stamp buffer",
    )?;
    let mut sink = zeros::<i32>(gpu, WARP_LANES, "the sink buffer")?;
    let (samples, preheat) = (as_i32(samples, "the samples")?, as_i32(preheat, "the preheat runs")?);
    let stride_arg = as_i32(stride as u32, "the stamp stride")?;
    let mut launch = stream.launch_builder(&function);
    launch
        .arg(&device_bounds)
        .arg(&mut stamps)
        .arg(&mut sink)
        .arg(&samples)
        .arg(&preheat)
        .arg(&stride_arg);
    let mut config = one_block(WARP_LANES as u32);
    config.shared_mem_bytes =
        u32::try_from(split_shared_bytes(stride)).map_err(|_| GpuError::driver(
            "sizing the split kernel's shared memory",
            format!("{stride} stamps per lane is too many"),
        ))?;
    // SAFETY: the arguments match the kernel signature above in order and type; `stamps`
    // holds samples*32*stride elements and no lane writes past index stride-1 of its row,
    // because stride is the largest bound plus 2; the dynamic shared memory holds
    // stride*32 stamps, all the kernel indexes; `sink` holds 32.
    unsafe { launch_and_wait(gpu, "divergence_split", launch, config, deadline) }?;
    let stamps = read(gpu, &stamps, "the push/pop stamps")?;
    Ok((stamps, stride))
}
