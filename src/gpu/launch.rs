//! Every kernel launch gpubench makes, typed. This is the only module with `unsafe` launches:
//! each function states, in its `# Safety`-style comment, the argument order and types its
//! kernel in `cuda/` expects, and allocates every buffer at the size the kernel writes.

use std::time::Duration;

use cudarc::driver::{CudaFunction, CudaSlice, DeviceRepr, LaunchConfig, PushKernelArg};

use super::{Gpu, driver_error};
use crate::error::GpuError;

pub const WARP_LANES: usize = 32;

/// Per-sample, per-lane cycles of one divergence-loop launch, `samples × 32`, row-major.
#[derive(Debug, Clone, PartialEq)]
pub struct LoopTimings {
    /// clock64 difference around the timed loop (timer overhead included).
    pub cycles: Vec<i64>,
    /// Two back-to-back clock64 reads in the same lane and sample.
    pub overhead: Vec<i64>,
}

fn one_block(threads: u32) -> LaunchConfig {
    LaunchConfig {
        grid_dim: (1, 1, 1),
        block_dim: (threads, 1, 1),
        shared_mem_bytes: 0,
    }
}

fn as_i32(value: u32, what: &str) -> Result<i32, GpuError> {
    i32::try_from(value).map_err(|_| GpuError::Driver {
        action: format!("passing {what} to a kernel"),
        detail: format!("{value} does not fit a 32-bit int"),
    })
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
    let device_bounds = stream
        .clone_htod(bounds.as_slice())
        .map_err(driver_error("copying the lane bounds"))?;
    let cells = samples as usize * WARP_LANES;
    let mut cycles = stream
        .alloc_zeros::<i64>(cells)
        .map_err(driver_error("allocating the cycle buffer"))?;
    let mut overhead = stream
        .alloc_zeros::<i64>(cells)
        .map_err(driver_error("allocating the overhead buffer"))?;
    let mut sink = stream
        .alloc_zeros::<i32>(WARP_LANES)
        .map_err(driver_error("allocating the sink buffer"))?;
    let (samples, preheat, unroll) = (
        as_i32(samples, "--samples")?,
        as_i32(preheat, "--preheat")?,
        as_i32(unroll, "--unroll")?,
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
    unsafe { launch.launch(one_block(WARP_LANES as u32)) }
        .map_err(driver_error("launching the divergence kernel"))?;
    gpu.wait(entry, deadline)?;
    let read = |buffer| {
        stream
            .clone_dtoh(buffer)
            .map_err(driver_error("reading divergence results"))
    };
    Ok(LoopTimings {
        cycles: read(&cycles)?,
        overhead: read(&overhead)?,
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
    let device_bounds = stream
        .clone_htod(bounds.as_slice())
        .map_err(driver_error("copying the lane bounds"))?;
    let mut stamps = stream
        .alloc_zeros::<i64>(samples as usize * WARP_LANES * stride)
        .map_err(driver_error("allocating the stamp buffer"))?;
    let mut sink = stream
        .alloc_zeros::<i32>(WARP_LANES)
        .map_err(driver_error("allocating the sink buffer"))?;
    let (samples, preheat) = (as_i32(samples, "--samples")?, as_i32(preheat, "--preheat")?);
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
        u32::try_from(split_shared_bytes(stride)).map_err(|_| GpuError::Driver {
            action: "sizing the split kernel's shared memory".into(),
            detail: format!("{stride} stamps per lane is too many"),
        })?;
    // SAFETY: the arguments match the kernel signature above in order and type; `stamps`
    // holds samples*32*stride elements and no lane writes past index stride-1 of its row,
    // because stride is the largest bound plus 2; the dynamic shared memory holds
    // stride*32 stamps, all the kernel indexes; `sink` holds 32.
    unsafe { launch.launch(config) }
        .map_err(driver_error("launching the push/pop split kernel"))?;
    let stamps = wait_and_read(
        gpu,
        "divergence_split",
        deadline,
        &stamps,
        "reading the push/pop stamps",
    )?;
    Ok((stamps, stride))
}

/// Raw stamps of `clock_rate` (cuda/clock.cu): globaltimer and clock64 at start and end.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ClockStamps {
    pub start_ns: i64,
    pub start_cycles: i64,
    pub end_ns: i64,
    pub end_cycles: i64,
}

/// Runs `clock_rate` on one thread: it spins for `spin` of %globaltimer time.
///
/// Kernel signature: `(unsigned long long spin_ns, long long *out[4])`.
pub fn clock_rate(gpu: &mut Gpu, spin: Duration) -> Result<ClockStamps, GpuError> {
    let function = gpu.function("clock", "clock_rate")?;
    let stream = gpu.stream().clone();
    let mut out = stream
        .alloc_zeros::<i64>(4)
        .map_err(driver_error("allocating clock stamps"))?;
    let spin_ns = u64::try_from(spin.as_nanos()).unwrap_or(u64::MAX);
    let mut launch = stream.launch_builder(&function);
    launch.arg(&spin_ns).arg(&mut out);
    // SAFETY: argument order and types match the signature above; `out` holds 4 elements.
    unsafe { launch.launch(one_block(1)) }.map_err(driver_error("launching clock_rate"))?;
    let deadline = spin + Duration::from_secs(10);
    let stamps = wait_and_read(gpu, "clock_rate", deadline, &out, "reading clock stamps")?;
    Ok(ClockStamps {
        start_ns: stamps[0],
        start_cycles: stamps[1],
        end_ns: stamps[2],
        end_cycles: stamps[3],
    })
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
    let mut out = stream
        .alloc_zeros::<i64>(values_per_pair * pairs as usize)
        .map_err(driver_error("allocating timer samples"))?;
    let count = as_i32(pairs, "the pair count")?;
    let mut launch = stream.launch_builder(&function);
    launch.arg(&mut out).arg(&count);
    // SAFETY: both callers' kernels take (long long *out, int pairs) and write
    // values_per_pair * pairs elements, which `out` holds.
    unsafe { launch.launch(one_block(1)) }.map_err(driver_error(&format!("launching {entry}")))?;
    wait_and_read(
        gpu,
        entry,
        Duration::from_secs(10),
        &out,
        "reading timer samples",
    )
}

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
            return Err(GpuError::Driver {
                action: "choosing a shared-memory kernel".into(),
                detail: format!("no kernel loads {other}-byte elements"),
            });
        }
    };
    let function = gpu.function("shared", entry)?;
    let stream = gpu.stream().clone();
    let mut out = stream
        .alloc_zeros::<i64>(WARP_LANES)
        .map_err(driver_error("allocating shared-memory timings"))?;
    let mut sink = stream
        .alloc_zeros::<u32>(WARP_LANES)
        .map_err(driver_error("allocating the sink buffer"))?;
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
    unsafe { launch.launch(config) }.map_err(driver_error("launching the shared-memory kernel"))?;
    wait_and_read(
        gpu,
        entry,
        Duration::from_secs(10),
        &out,
        "reading shared-memory timings",
    )
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
    let mut out = stream
        .alloc_zeros::<i64>(blocks as usize * 6)
        .map_err(driver_error("allocating clock scope stamps"))?;
    let spin_ns = u64::try_from(spin.as_nanos()).unwrap_or(u64::MAX);
    let mut launch = stream.launch_builder(&function);
    launch.arg(&spin_ns).arg(&mut out);
    let config = LaunchConfig {
        grid_dim: (blocks, 1, 1),
        block_dim: (WARP_LANES as u32, 1, 1),
        shared_mem_bytes: 0,
    };
    // SAFETY: argument order and types match the signature above; `out` holds 6 per block.
    unsafe { launch.launch(config) }.map_err(driver_error("launching clock_scope"))?;
    wait_and_read(
        gpu,
        "clock_scope",
        spin * blocks + Duration::from_secs(10),
        &out,
        "reading clock scope stamps",
    )
}

/// Runs one probe of cuda/sync.cu as a single block of `threads` threads and returns its
/// `out` buffer (filled with -1 before the launch, so unwritten entries stay -1).
///
/// Kernel signatures, by entry:
/// - `sync_simt_spin`, `sync_two_warp_spin`: `(long long *out[out_len], long long budget)`
/// - `sync_divergent_syncthreads`, `sync_divergent_syncwarp`, `sync_syncwarp_exited`:
///   `(long long *out[out_len])`
/// - `sync_barrier_pairing`: `(long long *out[out_len], long long *scratch[128])`
pub fn sync_probe(
    gpu: &mut Gpu,
    entry: &str,
    threads: u32,
    out_len: usize,
    budget_cycles: i64,
    deadline: Duration,
) -> Result<Vec<i64>, GpuError> {
    let function = gpu.function("sync", entry)?;
    let stream = gpu.stream().clone();
    let mut out = stream
        .clone_htod(&vec![-1_i64; out_len])
        .map_err(driver_error("preparing the probe's output"))?;
    let mut scratch = stream
        .alloc_zeros::<i64>(128)
        .map_err(driver_error("allocating the probe's scratch buffer"))?;
    let mut launch = stream.launch_builder(&function);
    launch.arg(&mut out);
    match entry {
        "sync_simt_spin" | "sync_two_warp_spin" => {
            launch.arg(&budget_cycles);
        }
        "sync_barrier_pairing" => {
            launch.arg(&mut scratch);
        }
        _ => {}
    }
    // SAFETY: per entry, the arguments pushed above match the signatures listed in this
    // function's documentation; `out` holds out_len elements, which covers every index the
    // probes write for the thread counts the caller passes, and `scratch` holds 128.
    unsafe { launch.launch(one_block(threads)) }.map_err(driver_error("launching a sync probe"))?;
    wait_and_read(gpu, entry, deadline, &out, "reading a sync probe's output")
}

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
    let c = stream
        .clone_htod(order.as_slice())
        .map_err(driver_error("copying the clause order"))?;
    let mut stamps = stream
        .alloc_zeros::<i64>(threads as usize * 2)
        .map_err(driver_error("allocating branch stamps"))?;
    let mut sink = stream
        .alloc_zeros::<u32>(threads as usize)
        .map_err(driver_error("allocating the sink buffer"))?;
    let work = as_i32(work, "--work")?;
    let mut launch = stream.launch_builder(&function);
    launch.arg(&c).arg(&mut stamps).arg(&mut sink).arg(&work);
    // SAFETY: the arguments match the kernel signature above in order and type; stamps holds
    // two per thread and sink one per thread for the `threads` launched.
    unsafe { launch.launch(one_block(threads)) }.map_err(driver_error("launching branch_order"))?;
    wait_and_read(
        gpu,
        "branch_order",
        Duration::from_secs(10),
        &stamps,
        "reading branch stamps",
    )
}

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
    let mut stamps = stream
        .alloc_zeros::<i64>(2 * warps)
        .map_err(driver_error("allocating pipeline stamps"))?;
    let mut sink = stream
        .alloc_zeros::<u32>(threads as usize)
        .map_err(driver_error("allocating the sink buffer"))?;
    let iterations = as_i32(iterations, "--iterations")?;
    let seed: u32 = 3;
    let mut launch = stream.launch_builder(&function);
    launch
        .arg(&mut stamps)
        .arg(&mut sink)
        .arg(&iterations)
        .arg(&seed);
    // SAFETY: the arguments match the kernel signature above in order and type; stamps holds
    // two per warp and sink one per thread of the single block.
    unsafe { launch.launch(one_block(threads)) }
        .map_err(driver_error("launching a pipeline kernel"))?;
    wait_and_read(
        gpu,
        entry,
        Duration::from_secs(30),
        &stamps,
        "reading pipeline stamps",
    )
}

/// The shared-memory carveout the global-memory chases ask for by default: 0 % shared, the
/// most L1 (`--carveout` asks for others).
pub const CHASE_CARVEOUT_PERCENT: i32 = 0;

/// Checks a chase chain of 32-bit word indices on the host (one pass), so every launch below
/// keeps its loads inside the buffer whoever built the chain: every word and every start must
/// index the chain, and with `pairs` the chain must be one of 8-byte elements (even indices,
/// odd words unused), as the 64-bit pointer chases read it.
fn check_chain(chain: &[u32], starts: &[u32], pairs: bool) -> Result<(), GpuError> {
    let len = chain.len();
    let bad = |detail: String| GpuError::Driver {
        action: "checking a chase chain".into(),
        detail,
    };
    if len == 0 || (pairs && !len.is_multiple_of(2)) {
        return Err(bad(format!("a chain of {len} words cannot be chased")));
    }
    for (w, &next) in chain.iter().enumerate() {
        if next as usize >= len {
            return Err(bad(format!(
                "word {w} points at {next}, past the {len} words"
            )));
        }
        if pairs && (next % 2 != 0 || (w % 2 != 0 && next != 0)) {
            return Err(bad(format!(
                "word {w} holds {next}: a pointer chase needs 8-byte elements (a stride that is a multiple of 8)"
            )));
        }
    }
    if let Some(start) = starts
        .iter()
        .find(|&&s| s as usize >= len || (pairs && s % 2 != 0))
    {
        return Err(bad(format!("start {start} is not an element of the chain")));
    }
    Ok(())
}

/// Runs `chase_global`, `chase_l2` or `chase_readonly` (cuda/cache.cu), 64-bit pointer chases,
/// over `chain` (32-bit word indices, elements 8-byte aligned) on one block of `starts.len()`
/// threads, thread t starting at word `starts[t]`; returns each thread's (cycles of the timed
/// loads, final word index). The chain is uploaded as byte offsets and made absolute on the
/// device (`absolute_pointers`).
///
/// Kernel signatures: `absolute_pointers(unsigned long long *chain[n], unsigned long long n)`;
/// `(const unsigned long long *chain[len / 2], const unsigned *starts[threads], int warm,
/// int steps, long long *out[2 * threads])`.
pub fn chase(
    gpu: &mut Gpu,
    entry: &str,
    chain: &[u32],
    starts: &[u32],
    warm: u32,
    steps: u32,
    deadline: Duration,
) -> Result<Vec<(i64, i64)>, GpuError> {
    check_chain(chain, starts, true)?;
    let function = l1_preferring(gpu, entry)?;
    let absolute = gpu.function("cache", "absolute_pointers")?;
    let stream = gpu.stream().clone();
    let offsets: Vec<u64> = chain.iter().step_by(2).map(|&w| 4 * u64::from(w)).collect();
    let mut device_chain = stream
        .clone_htod(&offsets)
        .map_err(driver_error("copying the chase chain"))?;
    let device_starts = stream
        .clone_htod(starts)
        .map_err(driver_error("copying the chase starts"))?;
    let mut out = stream
        .alloc_zeros::<i64>(2 * starts.len())
        .map_err(driver_error("allocating the chase result"))?;
    let elements = offsets.len() as u64;
    let mut launch = stream.launch_builder(&absolute);
    launch.arg(&mut device_chain).arg(&elements);
    let blocks = elements.div_ceil(256);
    let blocks = u32::try_from(blocks).map_err(|_| GpuError::Driver {
        action: "building a pointer chain".into(),
        detail: format!("{elements} elements are too many"),
    })?;
    // SAFETY: the arguments match absolute_pointers' signature; it touches only i < n.
    unsafe {
        launch.launch(LaunchConfig {
            grid_dim: (blocks, 1, 1),
            block_dim: (256, 1, 1),
            shared_mem_bytes: 0,
        })
    }
    .map_err(driver_error("launching absolute_pointers"))?;
    let (warm, steps) = (
        as_i32(warm, "the warm-up length")?,
        as_i32(steps, "the chase length")?,
    );
    let mut launch = stream.launch_builder(&function);
    launch
        .arg(&device_chain)
        .arg(&device_starts)
        .arg(&warm)
        .arg(&steps)
        .arg(&mut out);
    // SAFETY: the arguments match the kernel signature above; check_chain proved every offset
    // (made an address inside the buffer by the launch before, same stream) and every start
    // lies inside the chain; there is one start per thread and `out` holds two per thread.
    unsafe { launch.launch(one_block(starts.len() as u32)) }
        .map_err(driver_error("launching a chase"))?;
    let out = wait_and_read(gpu, entry, deadline, &out, "reading a chase result")?;
    Ok(out.chunks(2).map(|pair| (pair[0], pair[1])).collect())
}

/// Runs `chase_global_index` (cuda/cache.cu): the global chase with 32-bit word indices, one
/// thread from word 0. Returns (cycles of the timed loads, final word index).
///
/// Kernel signature: `(const unsigned *chain[len], int warm, int steps, long long *out[2])`.
pub fn chase_index(
    gpu: &mut Gpu,
    chain: &[u32],
    warm: u32,
    steps: u32,
    deadline: Duration,
) -> Result<(i64, i64), GpuError> {
    let out = one_thread_chase(gpu, "chase_global_index", chain, warm, steps, 1, deadline)?;
    Ok(out[0])
}

/// The most loads `per_load_*` records (its shared-memory arrays).
pub const PER_LOAD_LIMIT: u32 = 4096;

/// Runs `per_load_global`, `per_load_l2` or `per_load_readonly` (cuda/cache.cu): one thread,
/// `warm` untimed loads, then `loads` (at most [`PER_LOAD_LIMIT`]) each timed on its own.
/// Returns (cycles, index read) per load.
///
/// Kernel signature: `(const unsigned *chain[len], int warm, int loads,
/// long long *out[2 * loads])`.
pub fn chase_per_load(
    gpu: &mut Gpu,
    entry: &str,
    chain: &[u32],
    warm: u32,
    loads: u32,
    deadline: Duration,
) -> Result<Vec<(i64, i64)>, GpuError> {
    let loads = loads.min(PER_LOAD_LIMIT);
    one_thread_chase(gpu, entry, chain, warm, loads, loads, deadline)
}

/// One thread of `entry` over `chain` (32-bit word indices) with the kernel signature
/// `(const unsigned *chain[len], int warm, int count, long long *out[2 * pairs])`; returns the
/// `pairs` (value, index) pairs it wrote.
fn one_thread_chase(
    gpu: &mut Gpu,
    entry: &str,
    chain: &[u32],
    warm: u32,
    count: u32,
    pairs: u32,
    deadline: Duration,
) -> Result<Vec<(i64, i64)>, GpuError> {
    check_chain(chain, &[0], false)?;
    let function = l1_preferring(gpu, entry)?;
    let stream = gpu.stream().clone();
    let device_chain = stream
        .clone_htod(chain)
        .map_err(driver_error("copying the chase chain"))?;
    let mut out = stream
        .alloc_zeros::<i64>(2 * pairs as usize)
        .map_err(driver_error("allocating the chase result"))?;
    let (warm, count) = (
        as_i32(warm, "the warm-up length")?,
        as_i32(count, "the chase length")?,
    );
    let mut launch = stream.launch_builder(&function);
    launch
        .arg(&device_chain)
        .arg(&warm)
        .arg(&count)
        .arg(&mut out);
    // SAFETY: the arguments match the kernel signature above; check_chain proved every index
    // in `chain` is below its length; the callers keep `count` within what the kernel writes
    // (per_load_* writes 2 × count values, at most PER_LOAD_LIMIT; chase_global_index 2) and
    // `out` holds 2 × pairs.
    unsafe { launch.launch(one_block(1)) }.map_err(driver_error("launching a chase"))?;
    let out = wait_and_read(gpu, entry, deadline, &out, "reading a chase result")?;
    Ok(out.chunks(2).map(|pair| (pair[0], pair[1])).collect())
}

/// The chase function `entry`, asked to favour L1 over shared memory (a preference the
/// driver may round).
fn l1_preferring(gpu: &mut Gpu, entry: &str) -> Result<CudaFunction, GpuError> {
    let function = gpu.function("cache", entry)?;
    function
        .set_attribute(
            cudarc::driver::sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT,
            gpu.chase_carveout_percent,
        )
        .map_err(driver_error("setting the chase's shared-memory carveout"))?;
    Ok(function)
}

/// One device buffer for TLB chases (cuda/cache.cu `tlb_chain_init`, `chase_tlb`), allocated
/// once at the sweep's largest footprint so every point chases the same virtual addresses.
pub struct TlbBuffer {
    buffer: CudaSlice<u8>,
}

impl TlbBuffer {
    pub fn new(gpu: &Gpu, bytes: u64) -> Result<TlbBuffer, GpuError> {
        let stream = gpu.stream().clone();
        // SAFETY: uninitialised device memory is only read where tlb_chain_init wrote first.
        let buffer = unsafe { stream.alloc::<u8>(bytes as usize) }.map_err(driver_error(
            "allocating the TLB buffer (pass a smaller --max-bytes)",
        ))?;
        Ok(TlbBuffer { buffer })
    }

    pub fn bytes(&self) -> u64 {
        self.buffer.len() as u64
    }

    /// Writes element i (at i × stride) = next[i], then chases from element 0. Returns
    /// (cycles of the timed loads, final element number).
    ///
    /// Kernel signatures: `tlb_chain_init(unsigned char *base, unsigned long long stride,
    /// const unsigned *next[n], unsigned n)`, `chase_tlb(const unsigned char *base,
    /// unsigned long long stride, int warm, int steps, long long *out[2])`.
    pub fn chase(
        &mut self,
        gpu: &mut Gpu,
        stride: u64,
        next: &[u32],
        warm: u32,
        steps: u32,
        deadline: Duration,
    ) -> Result<(i64, i64), GpuError> {
        let n = next.len() as u64;
        if n == 0
            || !stride.is_multiple_of(8)
            || (n - 1)
                .checked_mul(stride)
                .and_then(|end| end.checked_add(8))
                .is_none_or(|end| end > self.bytes())
            || next.iter().any(|&e| u64::from(e) >= n)
        {
            return Err(GpuError::Driver {
                action: "building a TLB chain".into(),
                detail: format!(
                    "{n} elements {stride} B apart do not fit the buffer, or the order names an element past them"
                ),
            });
        }
        let init = gpu.function("cache", "tlb_chain_init")?;
        let chase = gpu.function("cache", "chase_tlb")?;
        let stream = gpu.stream().clone();
        let device_next = stream
            .clone_htod(next)
            .map_err(driver_error("copying the TLB chain order"))?;
        let count = n as u32;
        let mut launch = stream.launch_builder(&init);
        launch
            .arg(&mut self.buffer)
            .arg(&stride)
            .arg(&device_next)
            .arg(&count);
        // SAFETY: the arguments match tlb_chain_init's signature; the check above keeps every
        // element written (i < n, at i × stride, 8 bytes) and every address it writes (of an
        // element next[i] < n) inside the buffer.
        unsafe { launch.launch(LaunchConfig::for_num_elems(count)) }
            .map_err(driver_error("launching tlb_chain_init"))?;
        let mut out = stream
            .alloc_zeros::<i64>(2)
            .map_err(driver_error("allocating the chase result"))?;
        let (warm, steps) = (
            as_i32(warm, "the warm-up length")?,
            as_i32(steps, "the chase length")?,
        );
        let mut launch = stream.launch_builder(&chase);
        launch
            .arg(&self.buffer)
            .arg(&stride)
            .arg(&warm)
            .arg(&steps)
            .arg(&mut out);
        // SAFETY: the arguments match chase_tlb's signature; every element holds the address
        // of an element inside the buffer, written by the init launch (same stream, so first).
        unsafe { launch.launch(one_block(1)) }.map_err(driver_error("launching a TLB chase"))?;
        chase_result(gpu, "chase_tlb", &out, deadline)
    }
}

/// Runs `chase_shared` (cuda/cache.cu): 256 threads copy `chain` (word indices, uploaded as
/// byte offsets) into dynamic shared memory as shared-window addresses, thread 0 chases it.
/// Returns (cycles of the timed loads, final word index).
///
/// Kernel signature: `(const unsigned *chain[words], int words, int warm, int steps,
/// long long *out[2])`, with words * 4 bytes of dynamic shared memory (at most 48 KiB).
pub fn chase_shared(
    gpu: &mut Gpu,
    chain: &[u32],
    warm: u32,
    steps: u32,
    deadline: Duration,
) -> Result<(i64, i64), GpuError> {
    check_chain(chain, &[0], false)?;
    let function = gpu.function("cache", "chase_shared")?;
    let stream = gpu.stream().clone();
    let offsets: Vec<u32> = chain.iter().map(|&w| 4 * w).collect();
    let device_chain = stream
        .clone_htod(&offsets)
        .map_err(driver_error("copying the chase chain"))?;
    let mut out = stream
        .alloc_zeros::<i64>(2)
        .map_err(driver_error("allocating the chase result"))?;
    let words = as_i32(chain.len() as u32, "the chain length")?;
    let (warm, steps) = (
        as_i32(warm, "the warm-up length")?,
        as_i32(steps, "the chase length")?,
    );
    let mut config = one_block(256);
    config.shared_mem_bytes = u32::try_from(chain.len() * 4).unwrap_or(u32::MAX);
    let mut launch = stream.launch_builder(&function);
    launch
        .arg(&device_chain)
        .arg(&words)
        .arg(&warm)
        .arg(&steps)
        .arg(&mut out);
    // SAFETY: the arguments match the kernel signature above; the dynamic shared memory holds
    // the `words` elements copied, check_chain proved every offset lies inside them, `out`
    // holds 2.
    unsafe { launch.launch(config) }.map_err(driver_error("launching a shared-memory chase"))?;
    chase_result(gpu, "chase_shared", &out, deadline)
}

/// Runs `chase_constant` (per-thread register index: LDC) or `chase_constant_uniform` (warp-
/// uniform index: ULDC) (cuda/cache.cu) on one thread after writing `chain` (word indices, at
/// most 16384 words) into the module's `__constant__ unsigned const_chain[16384]` as byte
/// offsets. Returns (cycles of the timed loads, final word index).
///
/// Kernel signature: `(const unsigned *starts[1], int warm, int steps, long long *out[2])`.
pub fn chase_constant(
    gpu: &mut Gpu,
    entry: &str,
    chain: &[u32],
    warm: u32,
    steps: u32,
    deadline: Duration,
) -> Result<(i64, i64), GpuError> {
    check_chain(chain, &[0], false)?;
    let module = gpu.module("cache")?;
    let function = gpu.function("cache", entry)?;
    let stream = gpu.stream().clone();
    let mut symbol = module
        .get_global("const_chain", &stream)
        .map_err(driver_error("finding const_chain"))?;
    let bytes: Vec<u8> = chain.iter().flat_map(|w| (4 * w).to_le_bytes()).collect();
    if bytes.len() > symbol.len() {
        return Err(GpuError::Driver {
            action: "writing the constant-memory chain".into(),
            detail: format!(
                "{} bytes do not fit the {}-byte array",
                bytes.len(),
                symbol.len()
            ),
        });
    }
    let mut target = symbol.slice_mut(..bytes.len());
    stream
        .memcpy_htod(&bytes, &mut target)
        .map_err(driver_error("writing the constant-memory chain"))?;
    let starts = stream
        .clone_htod(&[0_u32])
        .map_err(driver_error("copying the chase start"))?;
    let mut out = stream
        .alloc_zeros::<i64>(2)
        .map_err(driver_error("allocating the chase result"))?;
    let (warm, steps) = (
        as_i32(warm, "the warm-up length")?,
        as_i32(steps, "the chase length")?,
    );
    let mut launch = stream.launch_builder(&function);
    launch.arg(&starts).arg(&warm).arg(&steps).arg(&mut out);
    // SAFETY: the arguments match the kernel signature above; check_chain proved every offset
    // written to const_chain lies inside the chain, which fits the array; `out` holds 2.
    unsafe { launch.launch(one_block(1)) }
        .map_err(driver_error("launching a constant-memory chase"))?;
    chase_result(gpu, entry, &out, deadline)
}

/// Runs `chase_texture` (cuda/cache.cu) on one thread through a texture object over `chain`.
///
/// Kernel signature: `(unsigned long long texture, int warm, int steps, long long *out[2])`.
pub fn chase_texture(
    gpu: &mut Gpu,
    chain: &[u32],
    warm: u32,
    steps: u32,
    deadline: Duration,
) -> Result<(i64, i64), GpuError> {
    check_chain(chain, &[0], false)?;
    let function = gpu.function("cache", "chase_texture")?;
    let texture = super::texture::LinearTexture::new(gpu, chain)?;
    let stream = gpu.stream().clone();
    let mut out = stream
        .alloc_zeros::<i64>(2)
        .map_err(driver_error("allocating the chase result"))?;
    let handle = texture.handle();
    let (warm, steps) = (
        as_i32(warm, "the warm-up length")?,
        as_i32(steps, "the chase length")?,
    );
    let mut launch = stream.launch_builder(&function);
    launch.arg(&handle).arg(&warm).arg(&steps).arg(&mut out);
    // SAFETY: the arguments match the kernel signature above; the texture object stays alive
    // until after the wait below, every index in `chain` is below its length, `out` holds 2.
    unsafe { launch.launch(one_block(1)) }.map_err(driver_error("launching a texture chase"))?;
    let result = chase_result(gpu, "chase_texture", &out, deadline);
    drop(texture);
    result
}

/// Waits for a chase and returns its (cycles, final index).
fn chase_result(
    gpu: &Gpu,
    entry: &str,
    out: &CudaSlice<i64>,
    deadline: Duration,
) -> Result<(i64, i64), GpuError> {
    let result = wait_and_read(gpu, entry, deadline, out, "reading a chase result")?;
    Ok((result[0], result[1]))
}

/// Waits (up to `deadline`) for the kernel just launched, then copies `buffer` back.
fn wait_and_read<T: DeviceRepr>(
    gpu: &Gpu,
    entry: &str,
    deadline: Duration,
    buffer: &CudaSlice<T>,
    action: &str,
) -> Result<Vec<T>, GpuError> {
    gpu.wait(entry, deadline)?;
    gpu.stream()
        .clone_dtoh(buffer)
        .map_err(driver_error(action))
}

/// JIT-compiles generated PTX (the instruction-cache space) and runs `entry` on one thread
/// with `passes` passes over its code; returns the cycles of the last pass. The module is
/// unloaded when this returns.
///
/// Kernel signature: `(unsigned long long *out[2], float m, unsigned passes)`.
pub fn straight_line(
    gpu: &mut Gpu,
    ptx: String,
    entry: &str,
    passes: u32,
    deadline: Duration,
) -> Result<i64, GpuError> {
    let module = gpu
        .context
        .load_module(cudarc::nvrtc::Ptx::from_src(ptx))
        .map_err(driver_error("JIT-compiling generated straight-line code"))?;
    let function = module
        .load_function(entry)
        .map_err(driver_error("finding the generated kernel"))?;
    let stream = gpu.stream().clone();
    let mut out = stream
        .alloc_zeros::<i64>(2)
        .map_err(driver_error("allocating the straight-line result"))?;
    // A multiplier just below one keeps the chains finite for any length.
    let multiplier = 0.999_f32;
    let mut launch = stream.launch_builder(&function);
    launch.arg(&mut out).arg(&multiplier).arg(&passes);
    // SAFETY: the arguments match the generated kernel's signature above; `out` holds 2.
    unsafe { launch.launch(one_block(1)) }
        .map_err(driver_error("launching generated straight-line code"))?;
    let result = wait_and_read(gpu, entry, deadline, &out, "reading a straight-line result")?;
    Ok(result[0])
}
