//! Launchers of cuda/cache.cu and of generated straight-line PTX: every pointer chase, the
//! word-index and per-load chases, the TLB buffer, and the instruction-cache probe.

use std::time::Duration;

use cudarc::driver::{
    CudaFunction, CudaSlice, DeviceRepr, LaunchConfig, PushKernelArg, ValidAsZeroBits,
};

use crate::error::GpuError;
use crate::gpu::launch::*;
use crate::gpu::{Gpu, driver_error};

mod spaces;
pub mod storage;

pub use spaces::{chase_constant, chase_shared, chase_texture, chase_texture_stride};

/// Checks a chase chain of 32-bit word indices on the host (one pass), so every launch below
/// keeps its loads inside the buffer whoever built the chain: every word and every start must
/// index the chain, and with `pairs` the chain must be one of 8-byte elements (even indices,
/// odd words unused), as the 64-bit pointer chases read it.
fn check_chain(chain: &[u32], starts: &[u32], pairs: bool) -> Result<(), GpuError> {
    let len = chain.len();
    let bad = |detail: String| GpuError::driver("checking a chase chain", detail);
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
    laps: Laps,
) -> Result<Vec<(i64, i64)>, GpuError> {
    check_chain(chain, starts, true)?;
    let function = l1_preferring(gpu, entry)?;
    let absolute = gpu.function("cache", "absolute_pointers")?;
    let stream = gpu.stream().clone();
    let offsets: Vec<u64> = chain.iter().step_by(2).map(|&w| 4 * u64::from(w)).collect();
    let mut device_chain = upload(gpu, &offsets, "the chase chain")?;
    let device_starts = upload(gpu, starts, "the chase starts")?;
    let elements = offsets.len() as u64;
    let mut launch = stream.launch_builder(&absolute);
    launch.arg(&mut device_chain).arg(&elements);
    // SAFETY: the arguments match absolute_pointers' signature; it touches only i < n.
    unsafe {
        launch_and_wait(
            gpu,
            "absolute_pointers",
            launch,
            one_thread_per(elements)?,
            laps.deadline,
        )
    }?;
    // check_chain proved every offset (made an address inside the buffer by the launch
    // before, same stream) and every start lies inside the chain.
    let chains = (&device_chain, &device_starts);
    run_pointer_chase(gpu, (entry, &function), chains, starts.len(), laps)
}

/// One thread per element, in blocks of 256.
fn one_thread_per(elements: u64) -> Result<LaunchConfig, GpuError> {
    blocks_of_256(elements, 256)
}

/// One warp per element (cuda/cache.cu's CHAIN_ELEMENT: a warp's store touches one line), in
/// blocks of 256 threads.
fn one_warp_per(elements: u64) -> Result<LaunchConfig, GpuError> {
    blocks_of_256(elements, 256 / 32)
}

/// Blocks of 256 threads, each serving `per_block` of the `elements`.
fn blocks_of_256(elements: u64, per_block: u64) -> Result<LaunchConfig, GpuError> {
    let blocks = u32::try_from(elements.div_ceil(per_block)).map_err(|_| GpuError::driver(
        "building a pointer chain",
        format!("{elements} elements are too many"),
    ))?;
    Ok(line_of(blocks, 256))
}

/// Launches a pointer chase (`chase_global`, `chase_l2`, `chase_readonly`) over a device chain
/// whose every element holds the address of an element of the same buffer, from `threads`
/// word-index starts already on the device, and reads (cycles, final word index) per thread.
fn run_pointer_chase(
    gpu: &Gpu,
    (entry, function): (&str, &CudaFunction),
    (device_chain, device_starts): (&CudaSlice<u64>, &CudaSlice<u32>),
    threads: usize,
    laps: Laps,
) -> Result<Vec<(i64, i64)>, GpuError> {
    let mut out = zeros::<i64>(gpu, 2 * threads, "the chase result")?;
    let (warm, steps) = laps.ints()?;
    let stream = gpu.stream().clone();
    let mut launch = stream.launch_builder(function);
    launch
        .arg(device_chain)
        .arg(device_starts)
        .arg(&warm)
        .arg(&steps)
        .arg(&mut out);
    // SAFETY: the arguments match the chase kernels' signature; the caller's contract above
    // keeps every load inside the chain; `threads` starts, and `out` holds two per thread.
    let config = one_block(threads as u32);
    unsafe { launch_and_wait(gpu, entry, launch, config, laps.deadline) }?;
    let out = read(gpu, &out, "a chase result")?;
    Ok(out.chunks(2).map(|pair| (pair[0], pair[1])).collect())
}

/// [`chase`] over the address-order chain of `elements` elements `stride_bytes` apart (a
/// multiple of 8), built on the device by `stride_pointers`; `starts` are element numbers.
/// Returns (cycles, final word index) per thread, word indices as [`chase`] reports them.
///
/// Kernel signatures: `stride_pointers(unsigned long long *chain, unsigned long long elements,
/// unsigned long long stride_words)`; the chase kernels as in [`chase`].
pub fn chase_stride(
    gpu: &mut Gpu,
    entry: &str,
    (elements, stride_bytes): (u64, u64),
    starts: &[u64],
    laps: Laps,
) -> Result<Vec<(i64, i64)>, GpuError> {
    let function = l1_preferring(gpu, entry)?;
    let device_chain = stride_chain(gpu, elements, stride_bytes, laps.deadline)?;
    // Word indices (of 4 bytes) of the starts, as the kernel takes and reports them.
    let start_words: Vec<u32> = starts
        .iter()
        .map(|&e| {
            (e < elements)
                .then(|| e * stride_bytes / 4)
                .and_then(|w| u32::try_from(w).ok())
                .ok_or_else(|| GpuError::driver(
                    "building an address-order chain",
                    format!("start {e} is not one of the {elements} elements"),
                ))
        })
        .collect::<Result<_, _>>()?;
    let device_starts = upload(gpu, &start_words, "the chase starts")?;
    // Every element now holds the address of an element of the same buffer (the launch
    // before, same stream); every start is an element's word.
    let chains = (&device_chain, &device_starts);
    run_pointer_chase(gpu, (entry, &function), chains, starts.len(), laps)
}

/// The L2 chase over the address-order chain of [`chase_stride`] with the warm pass made by
/// a block of 1024 threads (`chase_l2_block_warmed`, cuda/cache.cu): thread 0 then makes
/// `steps` timed loads from element 0. Returns (cycles, final word index).
///
/// Kernel signature: `chase_l2_block_warmed(const unsigned long long *chain, unsigned long
/// long elements, unsigned long long stride_words, int steps, long long *out[2])`.
pub fn chase_l2_block_warmed(
    gpu: &mut Gpu,
    elements: u64,
    stride_bytes: u64,
    steps: u32,
    deadline: Duration,
) -> Result<(i64, i64), GpuError> {
    const ENTRY: &str = "chase_l2_block_warmed";
    let function = l1_preferring(gpu, ENTRY)?;
    let device_chain = stride_chain(gpu, elements, stride_bytes, deadline)?;
    let mut out = zeros::<i64>(gpu, 2, "the chase result")?;
    let steps = as_i32(steps, "the chase length")?;
    let stride_words = stride_bytes / 8;
    let stream = gpu.stream().clone();
    let mut launch = stream.launch_builder(&function);
    launch
        .arg(&device_chain)
        .arg(&elements)
        .arg(&stride_words)
        .arg(&steps)
        .arg(&mut out);
    // SAFETY: the arguments match chase_l2_block_warmed's signature; the warm reads elements
    // below `elements` only, and the chase follows the chain stride_chain built.
    unsafe { launch_and_wait(gpu, ENTRY, launch, one_block(1024), deadline) }?;
    let out = read(gpu, &out, "a chase result")?;
    Ok((out[0], out[1]))
}

/// The address-order chain of `elements` elements `stride_bytes` apart, built on the device
/// by `stride_pointers`.
fn stride_chain(
    gpu: &mut Gpu,
    elements: u64,
    stride_bytes: u64,
    deadline: Duration,
) -> Result<CudaSlice<u64>, GpuError> {
    chain_on_device(gpu, "stride_pointers", elements, stride_bytes, deadline)
}

/// An address-order chain built on the device by `kernel`, whose signature is `(T *chain,
/// unsigned long long elements, unsigned long long stride_words)` with words of T:
/// `stride_pointers` (addresses) or `stride_indices` (32-bit word indices). The host would
/// build and upload the whole footprint, gigabytes for the conflict experiment's widest
/// strides.
fn chain_on_device<T: DeviceRepr + ValidAsZeroBits>(
    gpu: &mut Gpu,
    kernel: &str,
    elements: u64,
    stride_bytes: u64,
    deadline: Duration,
) -> Result<CudaSlice<T>, GpuError> {
    let bad = |detail: String| GpuError::driver("building an address-order chain", detail);
    let word = std::mem::size_of::<T>() as u64;
    if elements == 0 || stride_bytes == 0 || !stride_bytes.is_multiple_of(word) {
        return Err(bad(format!(
            "{elements} elements {stride_bytes} B apart cannot be chased"
        )));
    }
    let stride_words = stride_bytes / word;
    let words = elements
        .checked_mul(stride_words)
        .and_then(|w| usize::try_from(w).ok())
        .ok_or_else(|| {
            bad(format!(
                "{elements} elements of {stride_bytes} B are too many"
            ))
        })?;
    let build = gpu.function("cache", kernel)?;
    let stream = gpu.stream().clone();
    let mut device_chain = zeros::<T>(gpu, words, "the chase chain")?;
    let mut launch = stream.launch_builder(&build);
    launch
        .arg(&mut device_chain)
        .arg(&elements)
        .arg(&stride_words);
    // SAFETY: the arguments match the kernel's signature; it writes word i * stride_words
    // for i < elements (warp i's first lane), all inside the `elements * stride_words` words
    // allocated.
    unsafe { launch_and_wait(gpu, kernel, launch, one_warp_per(elements)?, deadline) }?;
    Ok(device_chain)
}

/// Runs `chase_global_index` (cuda/cache.cu): the global chase with 32-bit word indices, one
/// thread from word 0. Returns (cycles of the timed loads, final word index).
///
/// Kernel signature: `(const unsigned *chain[len], int warm, int steps, long long *out[2])`.
pub fn chase_index(gpu: &mut Gpu, chain: &[u32], laps: Laps) -> Result<(i64, i64), GpuError> {
    let out = one_thread_chase(gpu, "chase_global_index", chain, laps, 1)?;
    Ok(out[0])
}

/// The most loads `per_load_*` records (its shared-memory arrays).
pub const PER_LOAD_LIMIT: u32 = 4096;

/// Runs `per_load_global`, `per_load_l2` or `per_load_readonly` (cuda/cache.cu): one thread,
/// `laps.warm` untimed loads, then `laps.steps` (at most [`PER_LOAD_LIMIT`]) each timed on its
/// own. Returns (cycles, index read) per load.
///
/// Kernel signature: `(const unsigned *chain[len], int warm, int loads,
/// long long *out[2 * loads])`.
pub fn chase_per_load(
    gpu: &mut Gpu,
    entry: &str,
    chain: &[u32],
    laps: Laps,
) -> Result<Vec<(i64, i64)>, GpuError> {
    let loads = laps.steps.min(PER_LOAD_LIMIT);
    let laps = Laps {
        steps: loads,
        ..laps
    };
    one_thread_chase(gpu, entry, chain, laps, loads)
}

/// One thread of `entry` over `chain` (32-bit word indices) with the kernel signature
/// `(const unsigned *chain[len], int warm, int count, long long *out[2 * pairs])`, `laps.steps`
/// the count; returns the `pairs` (value, index) pairs it wrote.
fn one_thread_chase(
    gpu: &mut Gpu,
    entry: &str,
    chain: &[u32],
    laps: Laps,
    pairs: u32,
) -> Result<Vec<(i64, i64)>, GpuError> {
    check_chain(chain, &[0], false)?;
    let function = l1_preferring(gpu, entry)?;
    let stream = gpu.stream().clone();
    let device_chain = upload(gpu, chain, "the chase chain")?;
    let mut out = zeros::<i64>(gpu, 2 * pairs as usize, "the chase result")?;
    let (warm, count) = laps.ints()?;
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
    unsafe { launch_and_wait(gpu, entry, launch, one_block(1), laps.deadline) }?;
    let out = read(gpu, &out, "a chase result")?;
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
        laps: Laps,
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
            return Err(GpuError::driver(
                "building a TLB chain",
                format!(
                    "{n} elements {stride} B apart do not fit the buffer, or the order names an element past them"
                ),
            ));
        }
        let init = gpu.function("cache", "tlb_chain_init")?;
        let chase = gpu.function("cache", "chase_tlb")?;
        let stream = gpu.stream().clone();
        let device_next = upload(gpu, next, "the TLB chain order")?;
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
        let config = LaunchConfig::for_num_elems(count);
        unsafe { launch_and_wait(gpu, "tlb_chain_init", launch, config, laps.deadline) }?;
        let mut out = zeros::<i64>(gpu, 2, "the chase result")?;
        let (warm, steps) = laps.ints()?;
        let mut launch = stream.launch_builder(&chase);
        launch
            .arg(&self.buffer)
            .arg(&stride)
            .arg(&warm)
            .arg(&steps)
            .arg(&mut out);
        // SAFETY: the arguments match chase_tlb's signature; every element holds the address
        // of an element inside the buffer, written by the init launch (same stream, so first).
        unsafe { launch_and_wait(gpu, "chase_tlb", launch, one_block(1), laps.deadline) }?;
        chase_result(gpu, &out)
    }
}

/// A finished chase's (cycles, final index).
fn chase_result(gpu: &Gpu, out: &CudaSlice<i64>) -> Result<(i64, i64), GpuError> {
    let result = read(gpu, out, "a chase result")?;
    Ok((result[0], result[1]))
}

/// Loads generated code (the instruction-cache space: a cubin compiled from its PTX, or the
/// PTX itself) and runs `entry` on one thread with `passes` passes over it; returns the cycles
/// of the last pass. The module is unloaded when this returns.
///
/// Kernel signature: `(unsigned long long *out[2], float m, unsigned passes)`.
pub fn straight_line(
    gpu: &Gpu,
    image: cudarc::nvrtc::Ptx,
    entry: &str,
    passes: u32,
    deadline: Duration,
) -> Result<i64, GpuError> {
    let module = gpu
        .spent
        .jit(|| gpu.context.load_module(image))
        .map_err(driver_error("loading generated straight-line code"))?;
    let function = module
        .load_function(entry)
        .map_err(driver_error("finding the generated kernel"))?;
    let stream = gpu.stream().clone();
    let mut out = zeros::<i64>(gpu, 2, "the straight-line result")?;
    // A multiplier just below one keeps the chains finite for any length.
    let multiplier = 0.999_f32;
    let mut launch = stream.launch_builder(&function);
    launch.arg(&mut out).arg(&multiplier).arg(&passes);
    // SAFETY: the arguments match the generated kernel's signature above; `out` holds 2.
    unsafe { launch_and_wait(gpu, entry, launch, one_block(1), deadline) }?;
    let result = read(gpu, &out, "a straight-line result")?;
    Ok(result[0])
}

