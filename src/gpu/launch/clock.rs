//! Launchers of cuda/clock.cu: the SM clock, timer overheads and the counter-scope probe.

use super::*;

/// Raw stamps of `clock_rate` (cuda/clock.cu): globaltimer and clock64 at start and end.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ClockStamps {
    pub start_ns: i64,
    pub start_cycles: i64,
    pub end_ns: i64,
    pub end_cycles: i64,
}

/// Runs `clock_rate` on one thread: it spins for `spin` of %globaltimer time. With its stamps,
/// the host's monotonic clock from just before the launch to when the host sees the kernel
/// end, waiting asleep or, `closely`, looking without sleeping ([`Gpu::wait_closely`]): the
/// kernel's span on the host, plus a launch and a look that the caller cancels by taking the
/// difference of two spans.
///
/// Kernel signature: `(unsigned long long spin_ns, long long *out[4])`.
pub fn clock_rate(
    gpu: &mut Gpu,
    spin: Duration,
    closely: bool,
) -> Result<(ClockStamps, Duration), GpuError> {
    let function = gpu.function("clock", "clock_rate")?;
    let stream = gpu.stream().clone();
    let mut out = zeros::<i64>(gpu, 4, "clock stamps")?;
    let spin_ns = u64::try_from(spin.as_nanos()).unwrap_or(u64::MAX);
    let mut builder = stream.launch_builder(&function);
    builder.arg(&spin_ns).arg(&mut out);
    let deadline = spin + Duration::from_secs(10);
    // Closely: asleep for all but the last 2 ms of the spin, then looking without sleeping.
    let quiet = spin.saturating_sub(Duration::from_millis(2));
    let started = std::time::Instant::now();
    // SAFETY: argument order and types match the signature above; `out` holds 4 elements.
    unsafe { launch("clock_rate", builder, one_block(1)) }?;
    if closely {
        gpu.wait_closely("clock_rate", quiet, deadline)?;
    } else {
        gpu.wait("clock_rate", deadline)?;
    }
    let host = started.elapsed();
    let stamps = read(gpu, &out, "clock stamps")?;
    Ok((
        ClockStamps {
            start_ns: stamps[0],
            start_cycles: stamps[1],
            end_ns: stamps[2],
            end_cycles: stamps[3],
        },
        host,
    ))
}

/// Runs `clock_overhead` on one thread: `pairs` back-to-back clock64 differences.
///
/// Kernel signature: `(long long *out[pairs], int pairs)`.
pub fn clock_overhead(gpu: &mut Gpu, pairs: u32) -> Result<Vec<i64>, GpuError> {
    timer_pairs(gpu, "clock_overhead", 1, pairs)
}

/// Runs a one-thread timer kernel of cuda/clock.cu whose signature is
/// `(long long *out[values_per_pair * pairs], int pairs)`, and returns `out`.
fn timer_pairs(
    gpu: &mut Gpu,
    entry: &str,
    values_per_pair: usize,
    pairs: u32,
) -> Result<Vec<i64>, GpuError> {
    let function = gpu.function("clock", entry)?;
    let stream = gpu.stream().clone();
    let mut out = zeros::<i64>(gpu, values_per_pair * pairs as usize, "timer samples")?;
    let count = as_i32(pairs, "the pair count")?;
    let mut launch = stream.launch_builder(&function);
    launch.arg(&mut out).arg(&count);
    // SAFETY: both callers' kernels take (long long *out, int pairs) and write
    // values_per_pair * pairs elements, which `out` holds.
    unsafe { launch_and_wait(gpu, entry, launch, one_block(1), Duration::from_secs(10)) }?;
    read(gpu, &out, "timer samples")
}

/// Runs `timer_overheads` (cuda/clock.cu) on one thread: `pairs` back-to-back differences of
/// clock64, clock and %globaltimer (ns), in that order.
///
/// Kernel signature: `(long long *out[3*pairs], int pairs)`.
pub fn timer_overheads(gpu: &mut Gpu, pairs: u32) -> Result<Vec<i64>, GpuError> {
    timer_pairs(gpu, "timer_overheads", 3, pairs)
}

/// Runs `clock_scope` (cuda/clock.cu) with `blocks` blocks of 32 threads; returns six values
/// per block: smid, clock64 start, globaltimer start, clock64 end, globaltimer end, 0.
///
/// Kernel signature: `(unsigned long long spin_ns, long long *out[blocks*6])`.
pub fn clock_scope(gpu: &mut Gpu, blocks: u32, spin: Duration) -> Result<Vec<i64>, GpuError> {
    let function = gpu.function("clock", "clock_scope")?;
    let stream = gpu.stream().clone();
    let mut out = zeros::<i64>(gpu, blocks as usize * 6, "clock scope stamps")?;
    let spin_ns = u64::try_from(spin.as_nanos()).unwrap_or(u64::MAX);
    let mut launch = stream.launch_builder(&function);
    launch.arg(&spin_ns).arg(&mut out);
    let config = line_of(blocks, WARP_LANES as u32);
    // SAFETY: argument order and types match the signature above; `out` holds 6 per block.
    unsafe {
        launch_and_wait(
            gpu,
            "clock_scope",
            launch,
            config,
            spin * blocks + Duration::from_secs(10),
        )
    }?;
    read(gpu, &out, "clock scope stamps")
}
