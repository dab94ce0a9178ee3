//! Launchers of cuda/tma.cu: tensor maps encoded by the driver (`cuTensorMapEncodeTiled`) and
//! passed by value as a `__grid_constant__` parameter, the L2 warm-up read, the TMA and L2-load
//! chases, and the streaming TMA copy.

use cudarc::driver::DevicePtr;
use cudarc::driver::sys::{
    self, CUtensorMap, CUtensorMapDataType, CUtensorMapFloatOOBfill,
    CUtensorMapInterleave, CUtensorMapL2promotion, CUtensorMapSwizzle,
};

use std::time::Duration;

use cudarc::driver::{CudaFunction, CudaSlice, DeviceRepr, LaunchConfig, PushKernelArg};

use crate::error::GpuError;
use crate::gpu::launch::*;
use crate::gpu::{Gpu, driver_error};

/// A tensor map as the kernels take it: 128 opaque bytes, 64-byte aligned, passed by value.
#[repr(transparent)]
pub struct TensorMap(CUtensorMap);

// SAFETY: the kernels declare the parameter as a 64-byte-aligned struct of 128 bytes, which is
// what CUtensorMap is; the driver copies it by value at launch.
unsafe impl DeviceRepr for TensorMap {}

/// Encodes a tiled map of 32-bit words over `data`: `dims` (innermost first), rows
/// `row_bytes` apart (2-D only), boxes of `boxes` words.
pub fn tensor_map(
    gpu: &Gpu,
    data: &CudaSlice<u32>,
    dims: &[u64],
    row_bytes: Option<u64>,
    boxes: &[u32],
) -> Result<TensorMap, GpuError> {
    let strides: Vec<u64> = row_bytes.into_iter().collect();
    swizzled_map(gpu, data, dims, &strides, boxes, 0)
}

/// The shared-memory swizzle of a tensor map of `bytes` (0: none; 32, 64 or 128).
pub fn swizzle(bytes: u32) -> Option<CUtensorMapSwizzle> {
    match bytes {
        0 => Some(CUtensorMapSwizzle::CU_TENSOR_MAP_SWIZZLE_NONE),
        32 => Some(CUtensorMapSwizzle::CU_TENSOR_MAP_SWIZZLE_32B),
        64 => Some(CUtensorMapSwizzle::CU_TENSOR_MAP_SWIZZLE_64B),
        128 => Some(CUtensorMapSwizzle::CU_TENSOR_MAP_SWIZZLE_128B),
        _ => None,
    }
}

/// [`tensor_map`] of any rank: `strides` the bytes between consecutive indices of every
/// dimension but the innermost (one fewer than `dims`), and the shared-memory swizzle of
/// `swizzle_bytes` ([`swizzle`]).
pub fn swizzled_map(
    gpu: &Gpu,
    data: &CudaSlice<u32>,
    dims: &[u64],
    strides: &[u64],
    boxes: &[u32],
    swizzle_bytes: u32,
) -> Result<TensorMap, GpuError> {
    let refuse = |detail: String| GpuError::driver(
        format!("encoding a tensor map of {dims:?} words in boxes of {boxes:?}"),
        detail,
    );
    let swizzle = swizzle(swizzle_bytes)
        .ok_or_else(|| refuse(format!("no swizzle of {swizzle_bytes} bytes")))?;
    let words: u64 = dims.iter().product();
    if boxes.len() != dims.len() || strides.len() + 1 != dims.len() || words > data.len() as u64 {
        return Err(refuse(format!(
            "{} strides and {} words of data do not fit",
            strides.len(),
            data.len()
        )));
    }
    let stream = gpu.stream().clone();
    let (pointer, _sync) = data.device_ptr(&stream);
    let element_strides = vec![1_u32; dims.len()];
    // SAFETY: CUtensorMap is plain bytes that the driver fills.
    let mut map: CUtensorMap = unsafe { std::mem::zeroed() };
    stream
        .context()
        .bind_to_thread()
        .map_err(driver_error("binding the context"))?;
    // SAFETY: every array holds `dims.len()` entries (strides one fewer), the address is a live
    // allocation of at least the product of `dims` words (both checked above), and map is
    // 64-byte aligned.
    let status = unsafe {
        sys::cuTensorMapEncodeTiled(
            &mut map,
            CUtensorMapDataType::CU_TENSOR_MAP_DATA_TYPE_UINT32,
            dims.len() as u32,
            pointer as *mut std::ffi::c_void,
            dims.as_ptr(),
            strides.as_ptr(),
            boxes.as_ptr(),
            element_strides.as_ptr(),
            CUtensorMapInterleave::CU_TENSOR_MAP_INTERLEAVE_NONE,
            swizzle,
            CUtensorMapL2promotion::CU_TENSOR_MAP_L2_PROMOTION_NONE,
            CUtensorMapFloatOOBfill::CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE,
        )
    };
    if status != sys::CUresult::CUDA_SUCCESS {
        return Err(refuse(format!("{status:?}")));
    }
    Ok(TensorMap(map))
}

/// The chase's chain of `next.len()` tiles of `tile_words` words, filled on the device
/// (`tma_chain_fill`) from `next`, each tile's successor: the first word of tile t is
/// `next[t] * tile_words`, the others 0. One word per tile crosses the bus, not the footprint
/// (the default footprints' chains were 773 MiB of uploads, most of the suite's latency step).
///
/// Kernel signature: `(unsigned *data, const unsigned *next, unsigned long long words,
/// unsigned tile_words)`.
pub fn tma_chain(
    gpu: &mut Gpu,
    next: &[u32],
    tile_words: u32,
    sms: u32,
) -> Result<CudaSlice<u32>, GpuError> {
    let function = gpu.function("tma", "tma_chain_fill")?;
    let next = upload(gpu, next, "the TMA chain's successors")?;
    let words = next.len() as u64 * u64::from(tile_words);
    let mut data = zeros::<u32>(gpu, words as usize, "the TMA chain")?;
    let stream = gpu.stream().clone();
    let mut launch = stream.launch_builder(&function);
    launch
        .arg(&mut data)
        .arg(&next)
        .arg(&words)
        .arg(&tile_words);
    let config = line_of(sms * 4, 512);
    // SAFETY: the arguments match the signature above; the kernel writes w < words of `data`
    // and reads next[w / tile_words] < next.len().
    unsafe {
        launch_and_wait(
            gpu,
            "tma_chain_fill",
            launch,
            config,
            Duration::from_secs(10),
        )?
    };
    Ok(data)
}

/// The region `tma_l2_read` copies from: `words`, each its own index.
pub fn l2_read_region(gpu: &Gpu, words: &[u32]) -> Result<CudaSlice<u32>, GpuError> {
    upload(gpu, words, "the L2 read's region")
}

pub fn tma_zeros(gpu: &Gpu, words: usize) -> Result<CudaSlice<u32>, GpuError> {
    zeros(gpu, words, "the TMA tensor")
}

/// Reads all of `data` once with ld.global.cg from every SM (`tma_touch`).
///
/// Kernel signature: `(const unsigned *data, unsigned long long words, unsigned *sink)`.
pub fn tma_touch(gpu: &mut Gpu, data: &CudaSlice<u32>, sms: u32) -> Result<(), GpuError> {
    let function = gpu.function("tma", "tma_touch")?;
    let stream = gpu.stream().clone();
    let (blocks, threads) = (sms * 4, 512);
    let mut sink = zeros::<u32>(gpu, (blocks * threads) as usize, "the sink")?;
    let words = data.len() as u64;
    let mut launch = stream.launch_builder(&function);
    launch.arg(data).arg(&words).arg(&mut sink);
    let config = line_of(blocks, threads);
    // SAFETY: the arguments match the signature above; the kernel reads i < words and writes
    // one sink word per thread.
    unsafe { launch_and_wait(gpu, "tma_touch", launch, config, Duration::from_secs(10)) }
}

/// One thread chases the tiles of `data` from word `start`: `mode` 0 with 1-D TMA copies
/// through `map`, 1 with ld.global.cg. Returns (cycles of the timed steps, last index).
///
/// Kernel signature: `(TensorMap map, const unsigned *data, long long *out[3], unsigned start,
/// int warm, int steps, int mode)`; the chain's words and `start` index `data`, and `map`
/// covers all of it.
pub fn tma_latency(
    gpu: &mut Gpu,
    (map, data): (&TensorMap, &CudaSlice<u32>),
    start: u32,
    mode: u32,
    laps: Laps,
) -> Result<(i64, i64), GpuError> {
    let function = gpu.function("tma", "tma_latency")?;
    let stream = gpu.stream().clone();
    let mut out = zeros::<i64>(gpu, 3, "the chase result")?;
    let (warm, steps) = laps.ints()?;
    let mode = as_i32(mode, "the mode")?;
    let mut launch = stream.launch_builder(&function);
    launch
        .arg(map)
        .arg(data)
        .arg(&mut out)
        .arg(&start)
        .arg(&warm)
        .arg(&steps)
        .arg(&mode);
    // SAFETY: the arguments match the signature above; out holds three values.
    unsafe { launch_and_wait(gpu, "tma_latency", launch, one_block(32), laps.deadline) }?;
    let out = read(gpu, &out, "the chase result")?;
    if out[2] != 0 {
        return Err(GpuError::driver(
            "waiting for a TMA copy",
            "the copy never completed: the kernel's watchdog gave up after 2^31 cycles",
        ));
    }
    Ok((out[0], out[1]))
}

/// The streaming copy's shape: blocks, tiles per block, stages, box rows (of 64 words), the
/// tensor's tiles per row and in all, and the dynamic shared memory each block needs.
#[derive(Debug, Clone, Copy)]
pub struct StreamShape {
    pub blocks: u32,
    pub tiles: u32,
    pub stages: u32,
    pub box_rows: u32,
    pub tiles_per_row: u32,
    pub total_tiles: u32,
    pub shared_bytes: u32,
}

/// Runs `tma_bandwidth`; returns each block's clock64 before and after (equal where a copy
/// never completed) and the GPU milliseconds between events around the launch.
///
/// Kernel signature: `(TensorMap map, long long *stamps[2 * blocks], unsigned *sink[blocks],
/// int tiles, int stages, int box_rows, int tiles_per_row, int total_tiles)`.
pub fn tma_bandwidth(
    gpu: &mut Gpu,
    map: &TensorMap,
    shape: StreamShape,
) -> Result<(Vec<i64>, f64), GpuError> {
    let ints = [
        shape.tiles,
        shape.stages,
        shape.box_rows,
        shape.tiles_per_row,
        shape.total_tiles,
    ];
    // SAFETY: the ints are the rest of tma_bandwidth's signature above; stages x tile bytes
    // fit the dynamic shared memory (the caller sized it so) and stages is at most the
    // kernel's MAX_STAGES (checked by the experiment).
    unsafe { map_copies(gpu, "tma_bandwidth", map, (shape.blocks, shape.shared_bytes), &ints) }
}

/// Runs `entry`, whose signature is `(TensorMap map, long long *stamps[2 * blocks], unsigned
/// *sink[blocks], int ...)`, on `blocks` one-warp blocks with `shared_bytes` of dynamic shared
/// memory; returns each block's clock64 before and after and the GPU milliseconds between
/// events around the launch.
///
/// # Safety
///
/// `ints` must be the rest of `entry`'s arguments, and `shared_bytes` what they make a block
/// use.
unsafe fn map_copies(
    gpu: &mut Gpu,
    entry: &str,
    map: &TensorMap,
    (blocks, shared_bytes): (u32, u32),
    ints: &[u32],
) -> Result<(Vec<i64>, f64), GpuError> {
    let function = shared_function(gpu, entry, shared_bytes)?;
    let stream = gpu.stream().clone();
    let mut stamps = zeros::<i64>(gpu, 2 * blocks as usize, "the block stamps")?;
    let mut sink = zeros::<u32>(gpu, blocks as usize, "the sink")?;
    let ints = ints
        .iter()
        .map(|&v| as_i32(v, "a copy parameter"))
        .collect::<Result<Vec<i32>, GpuError>>()?;
    let ms = timed(gpu, entry, Duration::from_secs(30), || {
        let mut builder = stream.launch_builder(&function);
        builder.arg(map).arg(&mut stamps).arg(&mut sink);
        for value in &ints {
            builder.arg(value);
        }
        // SAFETY: the caller's contract above; stamps holds two per block and sink one.
        unsafe { launch(entry, builder, warp_blocks(blocks, shared_bytes)) }
    })?;
    Ok((read(gpu, &stamps, "the block stamps")?, ms))
}

/// `blocks` blocks of one warp, each with `shared_bytes` of dynamic shared memory.
fn warp_blocks(blocks: u32, shared_bytes: u32) -> LaunchConfig {
    LaunchConfig {
        shared_mem_bytes: shared_bytes,
        ..line_of(blocks, 32)
    }
}

/// `entry` of the tma module, allowed `bytes` of dynamic shared memory per block.
fn shared_function(gpu: &mut Gpu, entry: &str, bytes: u32) -> Result<CudaFunction, GpuError> {
    let function = gpu.function("tma", entry)?;
    allow_dynamic_shared(&function, bytes, &format!("giving {entry} its shared memory"))?;
    Ok(function)
}

/// One launch of `tma_l2_read`: `slices` slices of `slice_bytes` of the region, `passes` times,
/// `stages` copies in flight per block, lines private to one block or shared by all.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct L2ReadShape {
    pub blocks: u32,
    pub slice_bytes: u32,
    pub slices: u32,
    pub passes: u32,
    pub stages: u32,
    pub shared_lines: bool,
}

/// What one `tma_l2_read` launch gave: GPU milliseconds between events around it, the buffers
/// that did not hold the slice last copied into them, and the blocks whose copy never completed.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct L2ReadLaunch {
    pub ms: f64,
    pub stale_buffers: u32,
    pub stuck_blocks: u32,
}

/// Runs `tma_l2_read` over `data` (each word its own index, `slices` x `slice_bytes` long).
///
/// Kernel signature: `(const unsigned *data, unsigned *out[2], unsigned slice_bytes,
/// unsigned slices, int passes, int stages, int shared)`; one warp per block, `stages` x
/// `slice_bytes` of dynamic shared memory.
pub fn tma_l2_read(
    gpu: &mut Gpu,
    data: &CudaSlice<u32>,
    shape: L2ReadShape,
) -> Result<L2ReadLaunch, GpuError> {
    let shared_bytes = shape.stages * shape.slice_bytes;
    let function = shared_function(gpu, "tma_l2_read", shared_bytes)?;
    let stream = gpu.stream().clone();
    let mut out = zeros::<u32>(gpu, 2, "the copy check")?;
    let passes = as_i32(shape.passes, "passes")?;
    let stages = as_i32(shape.stages, "stages")?;
    let shared = i32::from(shape.shared_lines);
    let config = warp_blocks(shape.blocks, shared_bytes);
    let ms = timed(gpu, "tma_l2_read", Duration::from_secs(30), || {
        let mut builder = stream.launch_builder(&function);
        builder
            .arg(data)
            .arg(&mut out)
            .arg(&shape.slice_bytes)
            .arg(&shape.slices)
            .arg(&passes)
            .arg(&stages)
            .arg(&shared);
        // SAFETY: the arguments match the signature above; out holds two words; data holds
        // slices x slice_bytes (the caller allocated it so), stages is at most the kernel's
        // L2_READ_MAX_STAGES and stages x slice_bytes is the dynamic shared memory given.
        unsafe { launch("tma_l2_read", builder, config) }
    })?;
    let out = read(gpu, &out, "the copy check")?;
    Ok(L2ReadLaunch {
        ms,
        stale_buffers: out[0],
        stuck_blocks: out[1],
    })
}

/// One launch of `tma_dram_copy`: `blocks` blocks copy the source to the target in chunks of
/// `chunk_bytes`, `stages` shared buffers each, a buffer loaded again `lag` chunks after its
/// store.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DramCopyShape {
    pub blocks: u32,
    pub chunk_bytes: u32,
    pub stages: u32,
    pub lag: u32,
}

/// cuda/tma.cu's DRAM_COPY_MAX_STAGES, and the largest lag `stores_read_but` takes.
pub const DRAM_COPY_MAX_STAGES: u32 = 12;
pub const DRAM_COPY_MAX_LAG: u32 = 6;

/// What one `tma_dram_copy` launch gave: GPU milliseconds between events around it and the
/// blocks whose load never completed.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DramCopyLaunch {
    pub ms: f64,
    pub stuck_blocks: u32,
}

/// Runs `tma_dram_copy` from `source` to `target` (equal lengths, a whole number of chunks).
///
/// Kernel signature: `(const unsigned char *src, unsigned char *dst, unsigned chunk_bytes,
/// unsigned long long chunks, int stages, int lag, unsigned *stuck, unsigned long long
/// *ticket)`; one warp per block, `stages` x `chunk_bytes` of dynamic shared memory; the
/// blocks take the chunks in order from `ticket`, zeroed here before the launch.
pub fn tma_dram_copy(
    gpu: &mut Gpu,
    source: &CudaSlice<u32>,
    target: &mut CudaSlice<u32>,
    shape: DramCopyShape,
) -> Result<DramCopyLaunch, GpuError> {
    let bytes = 4 * source.len() as u64;
    let chunk = u64::from(shape.chunk_bytes);
    if target.len() != source.len()
        || chunk == 0
        || !bytes.is_multiple_of(chunk)
        || !(1..=DRAM_COPY_MAX_STAGES).contains(&shape.stages)
        || !(1..=DRAM_COPY_MAX_LAG.min(shape.stages - 1)).contains(&shape.lag)
    {
        return Err(GpuError::driver(
            "checking a tma_dram_copy launch",
            format!("{shape:?} does not fit arrays of {bytes} bytes"),
        ));
    }
    let shared_bytes = shape.stages * shape.chunk_bytes;
    let function = shared_function(gpu, "tma_dram_copy", shared_bytes)?;
    let stream = gpu.stream().clone();
    let mut stuck = zeros::<u32>(gpu, 1, "the copy's watchdog count")?;
    let mut ticket = zeros::<u64>(gpu, 1, "the copy's chunk ticket")?;
    let chunks = bytes / chunk;
    let stages = as_i32(shape.stages, "stages")?;
    let lag = as_i32(shape.lag, "the lag")?;
    let config = warp_blocks(shape.blocks, shared_bytes);
    let ms = timed(gpu, "tma_dram_copy", Duration::from_secs(30), || {
        let mut builder = stream.launch_builder(&function);
        builder
            .arg(source)
            .arg(&mut *target)
            .arg(&shape.chunk_bytes)
            .arg(&chunks)
            .arg(&stages)
            .arg(&lag)
            .arg(&mut stuck)
            .arg(&mut ticket);
        // SAFETY: the arguments match the signature above; source and target hold `chunks`
        // chunks of chunk_bytes each (checked above) and the kernel copies only chunks whose
        // ticket is below `chunks`, stages is at most the kernel's DRAM_COPY_MAX_STAGES, lag
        // at most 6 and below stages, and stages x chunk_bytes is the dynamic shared memory
        // given; `ticket` is one zeroed 64-bit word.
        unsafe { launch("tma_dram_copy", builder, config) }
    })?;
    let stuck = read(gpu, &stuck, "the copy's watchdog count")?;
    Ok(DramCopyLaunch {
        ms,
        stuck_blocks: stuck[0],
    })
}

/// One launch of `tma_tiles`: `blocks` blocks each copy `tiles` boxes of `boxes` words (x, y, z;
/// z is 1 at rank 2) through `stages` buffers, over a tensor of `grid` tiles (x, y, z).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TilesShape {
    pub blocks: u32,
    pub tiles: u32,
    pub stages: u32,
    pub rank: u32,
    pub boxes: [u32; 3],
    pub grid: [u32; 3],
}

/// cuda/tma.cu's TILES_MAX_STAGES.
pub const TILES_MAX_STAGES: u32 = 8;

impl TilesShape {
    pub fn tile_bytes(&self) -> u32 {
        4 * self.boxes.iter().product::<u32>()
    }

    /// The dynamic shared memory a block takes: its buffers and 1024 bytes to align them.
    pub fn shared_bytes(&self) -> u32 {
        self.stages * self.tile_bytes() + 1024
    }
}

/// Runs `tma_tiles` over `map` (a tensor of `shape.grid` tiles of `shape.boxes`); returns each
/// block's clock64 before and after (equal where a copy never completed) and the GPU
/// milliseconds between events around the launch.
///
/// Kernel signature: `(TensorMap map, long long *stamps[2 * blocks], unsigned *sink[blocks],
/// int tiles, int stages, int rank, int box_x, int box_y, int box_z, int tiles_x, int tiles_y,
/// int tiles_z)`; one warp per block.
pub fn tma_tiles(
    gpu: &mut Gpu,
    map: &TensorMap,
    shape: TilesShape,
) -> Result<(Vec<i64>, f64), GpuError> {
    if !(1..=TILES_MAX_STAGES).contains(&shape.stages)
        || !(2..=3).contains(&shape.rank)
        || (shape.rank == 2 && (shape.boxes[2] != 1 || shape.grid[2] != 1))
        || shape.grid.contains(&0)
    {
        return Err(GpuError::driver(
            "checking a tma_tiles launch",
            format!("{shape:?} is not a shape the kernel takes"),
        ));
    }
    let ints: Vec<u32> = [shape.tiles, shape.stages, shape.rank]
        .iter()
        .chain(&shape.boxes)
        .chain(&shape.grid)
        .copied()
        .collect();
    let sizes = (shape.blocks, shape.shared_bytes());
    // SAFETY: the ints are the rest of tma_tiles' signature above; stages (at most
    // TILES_MAX_STAGES, checked) x the tile's bytes and the alignment are the dynamic shared
    // memory given; the map's tensor holds the grid of tiles.
    unsafe { map_copies(gpu, "tma_tiles", map, sizes, &ints) }
}

/// One launch of `async_copy`: `blocks` blocks of [`ASYNC_THREADS`] threads each copy `steps`
/// chunks of `chunks` (16 bytes per thread), `depth` in flight, synchronously (`asynchronous`
/// false) or by cp.async.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AsyncShape {
    pub blocks: u32,
    pub chunks: u32,
    pub steps: u32,
    pub depth: u32,
    pub asynchronous: bool,
}

/// cuda/tma.cu's ASYNC_THREADS, and the depths `async_copy` takes.
pub const ASYNC_THREADS: u32 = 256;
pub const ASYNC_DEPTHS: [u32; 4] = [1, 2, 4, 8];

impl AsyncShape {
    pub fn chunk_bytes() -> u32 {
        ASYNC_THREADS * 16
    }

    pub fn shared_bytes(&self) -> u32 {
        self.depth * Self::chunk_bytes()
    }
}

/// Runs `async_copy` over `data` (at least `shape.chunks` chunks); returns thread 0's clock64
/// before and after in every block and the GPU milliseconds between events around the launch.
///
/// Kernel signature: `(const uint4 *src, unsigned chunks, long long *stamps[2 * blocks],
/// unsigned *sink[blocks * ASYNC_THREADS], int steps, int depth, int mode)`.
pub fn async_copy(
    gpu: &mut Gpu,
    data: &CudaSlice<u32>,
    shape: AsyncShape,
) -> Result<(Vec<i64>, f64), GpuError> {
    let enough = u64::from(shape.chunks) * u64::from(AsyncShape::chunk_bytes()) <= 4 * data.len() as u64;
    if !ASYNC_DEPTHS.contains(&shape.depth)
        || !shape.steps.is_multiple_of(shape.depth)
        || shape.chunks < shape.blocks
        || !enough
    {
        return Err(GpuError::driver(
            "checking an async_copy launch",
            format!("{shape:?} is not a shape the kernel takes over {} words", data.len()),
        ));
    }
    let function = shared_function(gpu, "async_copy", shape.shared_bytes())?;
    let stream = gpu.stream().clone();
    let mut stamps = zeros::<i64>(gpu, 2 * shape.blocks as usize, "the block stamps")?;
    let mut sink = zeros::<u32>(
        gpu,
        (shape.blocks * ASYNC_THREADS) as usize,
        "the sink",
    )?;
    let steps = as_i32(shape.steps, "steps")?;
    let depth = as_i32(shape.depth, "the depth")?;
    let mode = i32::from(shape.asynchronous);
    let config = LaunchConfig {
        shared_mem_bytes: shape.shared_bytes(),
        ..line_of(shape.blocks, ASYNC_THREADS)
    };
    let ms = timed(gpu, "async_copy", Duration::from_secs(30), || {
        let mut builder = stream.launch_builder(&function);
        builder
            .arg(data)
            .arg(&shape.chunks)
            .arg(&mut stamps)
            .arg(&mut sink)
            .arg(&steps)
            .arg(&depth)
            .arg(&mode);
        // SAFETY: the arguments match the signature above; data holds `chunks` chunks and
        // chunks >= blocks (checked: each block's chunk wraps once at most), stamps holds two
        // per block and sink one per thread; depth is one the kernel takes and divides steps,
        // and depth chunks are the dynamic shared memory given.
        unsafe { launch("async_copy", builder, config) }
    })?;
    Ok((read(gpu, &stamps, "the block stamps")?, ms))
}
