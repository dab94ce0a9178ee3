//! Launchers of cuda/atomics.cu: the atomic pointer chases (latency) and the atomic storms
//! (throughput), for 32- and 64-bit words.

use std::time::Duration;

use cudarc::driver::{CudaSlice, DeviceRepr, PushKernelArg, ValidAsZeroBits};

use crate::error::GpuError;
use crate::gpu::launch::*;
use crate::gpu::Gpu;

/// The word types the kernels come in.
pub trait AtomicWord: DeviceRepr + ValidAsZeroBits + Copy + Unpin + Default + 'static {}
impl AtomicWord for u32 {}
impl AtomicWord for u64 {}

/// `words` copied to the device, for a chase chain that several kernels share.
pub fn upload_words<T: AtomicWord>(gpu: &Gpu, words: &[T]) -> Result<CudaSlice<T>, GpuError> {
    upload(gpu, words, "the atomic chase chain")
}

/// Runs `entry` (`atomic_global_*_lat`), one thread chasing `chain` from index `start` with
/// `value`; returns (cycles of the `laps.steps` timed steps, the last index).
///
/// Kernel signature: `(T *chain, long long *out[2], T value, T start, int warm, int steps)`.
/// `start` and every index in `chain` index `chain` (the caller built it so), and `value`
/// leaves each word as it was.
pub fn atomic_global_latency<T: AtomicWord>(
    gpu: &mut Gpu,
    entry: &str,
    chain: &CudaSlice<T>,
    (value, start): (T, T),
    laps: Laps,
) -> Result<(i64, i64), GpuError> {
    let function = gpu.function("atomics", entry)?;
    let stream = gpu.stream().clone();
    let mut out = zeros::<i64>(gpu, 2, "the chase result")?;
    let (warm, steps) = laps.ints()?;
    let mut launch = stream.launch_builder(&function);
    launch
        .arg(chain)
        .arg(&mut out)
        .arg(&value)
        .arg(&start)
        .arg(&warm)
        .arg(&steps);
    // SAFETY: the arguments match the signature above; out holds two words; the chain's words
    // index the chain and the atomics leave them unchanged.
    unsafe { launch_and_wait(gpu, entry, launch, one_block(32), laps.deadline) }?;
    let out = read(gpu, &out, "the chase result")?;
    Ok((out[0], out[1]))
}

/// Runs `entry` (`atomic_shared_*_lat`): the block builds a ring of 1024 words `stride` apart
/// in shared memory and one thread chases it; returns (cycles of the timed steps, last index).
///
/// Kernel signature: `(long long *out[2], T value, int stride, int warm, int steps)`.
pub fn atomic_shared_latency<T: AtomicWord>(
    gpu: &mut Gpu,
    entry: &str,
    value: T,
    stride: u32,
    warm: u32,
    steps: u32,
) -> Result<(i64, i64), GpuError> {
    let function = gpu.function("atomics", entry)?;
    let stream = gpu.stream().clone();
    let mut out = zeros::<i64>(gpu, 2, "the chase result")?;
    let stride = as_i32(stride, "the ring stride")?;
    let (warm, steps) = (as_i32(warm, "warm steps")?, as_i32(steps, "steps")?);
    let mut launch = stream.launch_builder(&function);
    launch
        .arg(&mut out)
        .arg(&value)
        .arg(&stride)
        .arg(&warm)
        .arg(&steps);
    // SAFETY: the arguments match the signature above; the ring is the kernel's own static
    // shared array, indexed modulo its size.
    unsafe { launch_and_wait(gpu, entry, launch, one_block(256), Duration::from_secs(10)) }?;
    let out = read(gpu, &out, "the chase result")?;
    Ok((out[0], out[1]))
}

/// Bytes between two placements of a global storm's words: a large page apart, so each
/// placement lies on other physical pages, whose addresses choose the L2 slices it contends on.
pub const PLACEMENT_BYTES: usize = 2 << 20;

/// Runs `entry` (`atomic_<space>_*_thr`) as `blocks` blocks of `threads` (at most 1024) and
/// returns the GPU milliseconds between events around the launch. Global kernels get `data`
/// (one word per thread of the grid, zeroed here, `placement` × [`PLACEMENT_BYTES`] into a
/// buffer of their own); shared ones use their block's own words.
///
/// Kernel signatures: global `(T *data, T *sink, T value, int pattern, int iterations)`,
/// shared `(T *sink, T value, int pattern, int iterations)`; sink holds one word per thread.
#[allow(clippy::too_many_arguments)]
pub fn atomic_throughput<T: AtomicWord>(
    gpu: &mut Gpu,
    entry: &str,
    global: bool,
    blocks: u32,
    threads: u32,
    value: T,
    pattern: u32,
    iterations: u32,
    placement: usize,
) -> Result<f64, GpuError> {
    if threads > 1024 || !threads.is_multiple_of(32) {
        return Err(GpuError::driver(format!("launching {entry}"), format!(
                "{threads} threads: the kernels index 1024 words per block in whole warps"
            )));
    }
    let function = gpu.function("atomics", entry)?;
    let stream = gpu.stream().clone();
    let n = (blocks * threads) as usize;
    let skip = placement * PLACEMENT_BYTES / size_of::<T>();
    let mut buffer = zeros::<T>(gpu, skip + n, "the atomic words")?;
    let mut data = buffer.slice_mut(skip..);
    let mut sink = zeros::<T>(gpu, n, "the sink")?;
    let pattern = as_i32(pattern, "the pattern")?;
    let iterations = as_i32(iterations, "iterations")?;
    let config = line_of(blocks, threads);
    timed(gpu, entry, Duration::from_secs(30), || {
        let mut builder = stream.launch_builder(&function);
        if global {
            builder.arg(&mut data);
        }
        builder
            .arg(&mut sink)
            .arg(&value)
            .arg(&pattern)
            .arg(&iterations);
        // SAFETY: the arguments match the signatures above; data and sink hold one word per
        // thread of the grid, the most any pattern indexes (pattern 2 indexes 32 words per
        // warp, as many as the warp's threads).
        unsafe { launch(entry, builder, config) }
    })
}
