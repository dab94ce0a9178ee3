//! Launchers of cuda/bandwidth.cu, each timed between two CUDA events around the launch
//! ([`super::timed`]) and waited for with a deadline. Every buffer is allocated once, at the
//! largest footprint, and every launch is checked against it on the host, so no argument
//! combination reads or writes past an allocation.

use std::time::Duration;

use cudarc::driver::{CudaFunction, CudaSlice, CudaStream, LaunchConfig, PushKernelArg};

use super::{Gpu, allow_dynamic_shared, driver_error, line_of, timed};
use crate::error::GpuError;

/// Bytes per access: one 16-byte vector per thread (`uint4`).
pub const VECTOR_BYTES: u64 = 16;
/// Independent accesses each thread keeps in flight (`UNROLL` in cuda/bandwidth.cu).
pub const UNROLL: u64 = 4;
/// The most bytes of a chunk of the shared-line read: 512 KiB, what gpu-benches' L2 kernel
/// gives each block (with whole slices, so every thread keeps its loads in flight).
pub const SHARED_CHUNK_BYTES: u64 = 512 << 10;

/// What one launch does, and where its footprint lives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kernel {
    /// `bw_read_device`: the grid reads one region through L2 (no L1 allocation).
    ReadDevice,
    /// `bw_read_device_strong`: the same with strong `.cg` loads.
    ReadDeviceStrong,
    /// `bw_read_device_shared`: strong loads of lines many SMs read at once (the region in
    /// chunks, each read by many blocks per pass).
    ReadDeviceShared,
    /// `bw_write_device`: the grid writes one region.
    WriteDevice,
    /// `bw_copy_device`: the grid copies a region onto another (footprint: both).
    CopyDevice,
    /// `bw_read_sm`: every block reads a region of its own through L1 (the footprint is what
    /// the blocks of one SM read together).
    ReadSm,
    /// `bw_shared_read` / `_write` / `_copy`: every block its own dynamic shared array.
    SharedRead,
    SharedWrite,
    SharedCopy,
}

impl Kernel {
    pub fn entry(self) -> &'static str {
        match self {
            Kernel::ReadDevice => "bw_read_device",
            Kernel::ReadDeviceStrong => "bw_read_device_strong",
            Kernel::ReadDeviceShared => "bw_read_device_shared",
            Kernel::WriteDevice => "bw_write_device",
            Kernel::CopyDevice => "bw_copy_device",
            Kernel::ReadSm => "bw_read_sm",
            Kernel::SharedRead => "bw_shared_read",
            Kernel::SharedWrite => "bw_shared_write",
            Kernel::SharedCopy => "bw_shared_copy",
        }
    }

    /// The 16-byte instructions its loop must compile to on sm_70 and later (checked against
    /// the SASS of every run).
    pub fn expected_accesses(self) -> &'static [&'static str] {
        match self {
            Kernel::ReadDevice => &["LDG.E.NA.128"],
            Kernel::ReadDeviceStrong | Kernel::ReadDeviceShared => &["LDG.E.128.STRONG.GPU"],
            Kernel::WriteDevice => &["STG.E.128"],
            Kernel::CopyDevice => &["LDG.E.NA.128", "STG.E.128"],
            Kernel::ReadSm => &["LDG.E.128"],
            Kernel::SharedRead => &["LDS.128"],
            Kernel::SharedWrite => &["STS.128"],
            Kernel::SharedCopy => &["LDS.128", "STS.128"],
        }
    }

    /// Whether the grid shares one device region (as slices) rather than each block having its
    /// own.
    pub fn device_wide(self) -> bool {
        matches!(
            self,
            Kernel::ReadDevice
                | Kernel::ReadDeviceStrong
                | Kernel::ReadDeviceShared
                | Kernel::WriteDevice
                | Kernel::CopyDevice
        )
    }

    /// Whether its slices may be handed out by a ticket ([`SliceOrder::Ticket`]): the
    /// device-wide kernels of private slices (the shared-line read has chunks of its own).
    pub fn takes_ticket(self) -> bool {
        matches!(
            self,
            Kernel::ReadDevice
                | Kernel::ReadDeviceStrong
                | Kernel::WriteDevice
                | Kernel::CopyDevice
        )
    }

    pub const ALL: [Kernel; 9] = [
        Kernel::ReadDevice,
        Kernel::ReadDeviceStrong,
        Kernel::ReadDeviceShared,
        Kernel::WriteDevice,
        Kernel::CopyDevice,
        Kernel::ReadSm,
        Kernel::SharedRead,
        Kernel::SharedWrite,
        Kernel::SharedCopy,
    ];
}

/// How a device-wide launch hands out its slices (`for_each_slice` in cuda/bandwidth.cu).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SliceOrder {
    /// Block b keeps slices b, b + grid, ... in every pass: a block's lines are its own.
    Fixed,
    /// The blocks take the slices of pass after pass in order from an atomic ticket.
    Ticket,
    /// Passes × slices blocks, block b reading slice b % slices once, so blocks retire and new
    /// ones start on free SMs (as gpu-benches' `gpu-l2-cache`); only where the slices
    /// outnumber the resident blocks ([`Launch::resolved_order`]).
    Stream,
}

impl SliceOrder {
    pub fn name(self) -> &'static str {
        match self {
            SliceOrder::Fixed => "fixed",
            SliceOrder::Ticket => "ticket",
            SliceOrder::Stream => "stream",
        }
    }
}

/// Threads per block and blocks per SM of a launch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Occupancy {
    pub threads: u32,
    pub blocks_per_sm: u32,
}

/// One launch's geometry and how many bytes it moves.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Launch {
    pub kernel: Kernel,
    pub occupancy: Occupancy,
    /// Bytes the measured level holds: the region (device), the region of each SM (SM), the
    /// array of each block (shared).
    pub footprint_bytes: u64,
    pub passes: u32,
    /// Ignored by the kernels that do not [`Kernel::takes_ticket`] (a launch of theirs with
    /// [`SliceOrder::Ticket`] is refused).
    pub order: SliceOrder,
}

/// The device buffers: `source` holds the largest device footprint (and every SM's region),
/// `target` the copy's destination; both start as zeros.
pub struct Buffers {
    source: CudaSlice<u32>,
    target: CudaSlice<u32>,
    sink: CudaSlice<u32>,
    /// One ticket counter per SM for `bw_read_sm`, zeroed before each of its launches.
    tickets: CudaSlice<u32>,
    /// The slice ticket of [`SliceOrder::Ticket`] launches, zeroed before each.
    slice_ticket: CudaSlice<u64>,
    source_bytes: u64,
    target_bytes: u64,
    multiprocessors: u32,
}

impl Buffers {
    /// Device memory [`Buffers::new`] takes for a source of `source_bytes`.
    pub fn total_bytes(source_bytes: u64) -> u64 {
        source_bytes + source_bytes / 2
    }

    pub fn new(gpu: &Gpu, source_bytes: u64, multiprocessors: u32) -> Result<Buffers, GpuError> {
        let alloc = |bytes: u64, what: &str| {
            let words = usize::try_from(bytes / 4).unwrap_or(usize::MAX);
            super::zeros::<u32>(gpu, words, what)
        };
        let target_bytes = Buffers::total_bytes(source_bytes) - source_bytes;
        Ok(Buffers {
            source: alloc(source_bytes, "the bandwidth source buffer")?,
            target: alloc(target_bytes, "the bandwidth copy target")?,
            sink: alloc(64, "the sink")?,
            tickets: alloc(4 * u64::from(multiprocessors), "the SM tickets")?,
            slice_ticket: super::zeros::<u64>(gpu, 1, "the slice ticket")?,
            source_bytes,
            target_bytes,
            multiprocessors,
        })
    }
}

impl Buffers {
    /// The source's words (`target` false) or the copy target's, read back: what a check of
    /// the kernels' coverage compares.
    pub fn read_back(&self, gpu: &Gpu, target: bool) -> Result<Vec<u32>, GpuError> {
        if target {
            super::read(gpu, &self.target, "the bandwidth copy target")
        } else {
            super::read(gpu, &self.source, "the bandwidth source buffer")
        }
    }
}

impl Launch {
    /// Vectors each block (shared, SM) or the grid (device) touches per pass, after rounding
    /// the footprint down to whole slices of `UNROLL × threads` vectors.
    fn slice_vectors(&self) -> u64 {
        UNROLL * u64::from(self.occupancy.threads)
    }

    /// Blocks launched: SMs × blocks per SM, but for a device region never more blocks than
    /// slices, so every slice is read by exactly one block per pass (blocks sharing a slice
    /// would be served by each other's fetches, not by the level measured).
    /// In [`SliceOrder::Stream`], passes × slices blocks (at most `i32::MAX`).
    pub fn grid(&self, multiprocessors: u32) -> u32 {
        let full = multiprocessors * self.occupancy.blocks_per_sm;
        if self.order == SliceOrder::Stream && self.kernel.takes_ticket() {
            let blocks = self.device_slices().1 * u64::from(self.passes);
            u32::try_from(blocks.min(i32::MAX as u64)).unwrap_or(u32::MAX)
        } else if self.kernel == Kernel::ReadDeviceShared {
            // Sharing is the point: every resident block reads, however few the chunks.
            full
        } else if self.kernel.device_wide() {
            u32::try_from(self.device_slices().1).map_or(full, |slices| full.min(slices))
        } else {
            full
        }
    }

    /// The order this launch can keep: [`SliceOrder::Stream`] only where the slices are at
    /// least the resident blocks (else two of them would read one slice at once, served by
    /// each other's fetches), else [`SliceOrder::Fixed`]; the others as asked.
    pub fn resolved_order(&self, multiprocessors: u32) -> SliceOrder {
        let resident = u64::from(multiprocessors) * u64::from(self.occupancy.blocks_per_sm);
        if self.order == SliceOrder::Stream
            && (!self.kernel.takes_ticket() || self.device_slices().1 < resident)
        {
            SliceOrder::Fixed
        } else {
            self.order
        }
    }

    /// (vectors per slice, slices) of a device launch: the region in whole slices; for the
    /// shared-line read, (vectors per chunk, chunks): chunks of whole slices, at most
    /// [`SHARED_CHUNK_BYTES`] each.
    fn device_slices(&self) -> (u64, u64) {
        let slice = self.slice_vectors();
        let region = self.footprint_bytes / self.copies() / VECTOR_BYTES;
        let slices = (region / slice).max(1);
        if self.kernel == Kernel::ReadDeviceShared {
            let per_chunk = (SHARED_CHUNK_BYTES / VECTOR_BYTES / slice).clamp(1, slices);
            return (slice * per_chunk, slices / per_chunk);
        }
        (slice, slices)
    }

    /// 2 for a device copy, whose footprint is its source and its target; 1 otherwise.
    fn copies(&self) -> u64 {
        if self.kernel == Kernel::CopyDevice {
            2
        } else {
            1
        }
    }

    /// Bytes one block reads plus writes per pass, for the kernels where each block has its own
    /// region or array.
    fn block_bytes(&self) -> u64 {
        match self.kernel {
            Kernel::ReadSm => self.sm_region_vectors() * VECTOR_BYTES,
            Kernel::SharedCopy => self.footprint_bytes / (2 * VECTOR_BYTES) * 2 * VECTOR_BYTES,
            _ => self.footprint_bytes / VECTOR_BYTES * VECTOR_BYTES,
        }
    }

    /// Bytes one launch reads plus writes, as the kernel's loops count them.
    pub fn bytes_moved(&self, multiprocessors: u32) -> u64 {
        let passes = u64::from(self.passes);
        if self.kernel == Kernel::ReadDeviceShared {
            let (chunk, _) = self.device_slices();
            chunk * VECTOR_BYTES * u64::from(self.grid(multiprocessors)) * passes
        } else if self.kernel.device_wide() {
            self.covered_bytes() * passes
        } else {
            self.block_bytes() * u64::from(self.grid(multiprocessors)) * passes
        }
    }

    /// The footprint that launch actually covers (rounded to whole slices / vectors).
    pub fn covered_bytes(&self) -> u64 {
        if self.kernel.device_wide() {
            let (slice, slices) = self.device_slices();
            self.copies() * slice * slices * VECTOR_BYTES
        } else if self.kernel == Kernel::ReadSm {
            self.block_bytes() * u64::from(self.occupancy.blocks_per_sm)
        } else {
            self.footprint_bytes / VECTOR_BYTES * VECTOR_BYTES
        }
    }

    /// Vectors in each block's own region of an SM footprint (at least one).
    fn sm_region_vectors(&self) -> u64 {
        (self.footprint_bytes / VECTOR_BYTES / u64::from(self.occupancy.blocks_per_sm)).max(1)
    }
}

fn as_u32(value: u64, what: &str) -> Result<u32, GpuError> {
    u32::try_from(value).map_err(|_| {
        GpuError::driver(
            format!("passing {what} to a bandwidth kernel"),
            format!("{value} does not fit 32 bits"),
        )
    })
}

fn too_big(what: &str, needed: u64, have: u64) -> GpuError {
    GpuError::driver(
        format!("checking a bandwidth launch's {what}"),
        format!("it needs {needed} bytes, the buffer holds {have}"),
    )
}

/// Runs `launch` once and returns its GPU time in seconds (between events around the launch).
pub fn run(
    gpu: &mut Gpu,
    buffers: &mut Buffers,
    launch: &Launch,
    deadline: Duration,
) -> Result<f64, GpuError> {
    let entry = launch.kernel.entry();
    let function = gpu.function("bandwidth", entry)?;
    let stream = gpu.stream().clone();
    let sms = buffers.multiprocessors;
    let grid = launch.grid(sms);
    let config = line_of(grid, launch.occupancy.threads);
    let streams = launch.order == SliceOrder::Stream;
    let whole_grid = u64::from(grid) == launch.device_slices().1 * u64::from(launch.passes);
    if streams && (launch.resolved_order(sms) != SliceOrder::Stream || !whole_grid) {
        return Err(GpuError::driver(
            format!("launching {entry}"),
            "its slices cannot stream: fewer slices than resident blocks, or more \
                     blocks than one launch takes",
        ));
    }
    // Streaming, every block reads one slice once: the passes are in the grid.
    let passes = if streams {
        1
    } else {
        i32::try_from(launch.passes).unwrap_or(i32::MAX)
    };
    let by_ticket = launch.order == SliceOrder::Ticket;
    if by_ticket && !launch.kernel.takes_ticket() {
        return Err(GpuError::driver(
            format!("launching {entry}"),
            "it cannot hand out its slices by ticket",
        ));
    }
    // Before the start event: the zeroing is not part of the timed launch.
    if launch.kernel == Kernel::ReadSm {
        stream
            .memset_zeros(&mut buffers.tickets)
            .map_err(driver_error("zeroing the SM tickets"))?;
    }
    if by_ticket {
        stream
            .memset_zeros(&mut buffers.slice_ticket)
            .map_err(driver_error("zeroing the slice ticket"))?;
    }
    let mut enqueue = Enqueue {
        entry,
        function: &function,
        stream: &stream,
        launch,
        config,
        passes,
        by_ticket,
        sms,
    };
    let ms = timed(gpu, entry, deadline, || {
        // Each kind checks the launch against the buffers before the kernel sees it.
        match launch.kernel {
            Kernel::ReadDevice
            | Kernel::ReadDeviceStrong
            | Kernel::ReadDeviceShared
            | Kernel::WriteDevice
            | Kernel::CopyDevice => enqueue.device(buffers),
            Kernel::ReadSm => enqueue.sm(buffers),
            Kernel::SharedRead | Kernel::SharedWrite | Kernel::SharedCopy => {
                enqueue.shared(buffers)
            }
        }
    })?;
    Ok(ms / 1e3)
}

/// One launch of [`run`], its order and passes checked: what each kind of kernel needs to put
/// its launch on the stream (inside [`run`]'s timing events), one method per kind.
struct Enqueue<'a> {
    entry: &'a str,
    function: &'a CudaFunction,
    stream: &'a CudaStream,
    launch: &'a Launch,
    config: LaunchConfig,
    passes: i32,
    by_ticket: bool,
    sms: u32,
}

impl Enqueue<'_> {
    /// The device-wide reads, write and copy: slices of one region, checked to fit the
    /// buffer each reads or writes.
    fn device(&self, buffers: &mut Buffers) -> Result<(), GpuError> {
        let (slice, slices) = self.launch.device_slices();
        let region = slice * slices * VECTOR_BYTES;
        let (limit, buffer) = if self.launch.kernel == Kernel::CopyDevice {
            (buffers.target_bytes, "copy target")
        } else {
            (buffers.source_bytes, "source")
        };
        if region > limit {
            return Err(too_big(buffer, region, limit));
        }
        let (slice, slices) = (as_u32(slice, "a slice")?, as_u32(slices, "the slices")?);
        // A null pointer for fixed slices.
        let no_ticket: u64 = 0;
        let mut builder = self.stream.launch_builder(self.function);
        match self.launch.kernel {
            Kernel::ReadDevice | Kernel::ReadDeviceStrong | Kernel::ReadDeviceShared => {
                builder
                    .arg(&buffers.source)
                    .arg(&slice)
                    .arg(&slices)
                    .arg(&self.passes)
                    .arg(&mut buffers.sink);
            }
            Kernel::WriteDevice => {
                builder
                    .arg(&mut buffers.source)
                    .arg(&slice)
                    .arg(&slices)
                    .arg(&self.passes);
            }
            _ => {
                builder
                    .arg(&buffers.source)
                    .arg(&mut buffers.target)
                    .arg(&slice)
                    .arg(&slices)
                    .arg(&self.passes);
            }
        }
        if self.launch.kernel.takes_ticket() {
            if self.by_ticket {
                builder.arg(&mut buffers.slice_ticket);
            } else {
                builder.arg(&no_ticket);
            }
        }
        // SAFETY: (const uint4 *, unsigned, unsigned, int, unsigned *) for the reads
        // (the shared-line read's chunks are whole slices of the same region),
        // (uint4 *, unsigned, unsigned, int) for the write, (const uint4 *, uint4 *,
        // unsigned, unsigned, int) for the copy, each but the shared-line read then an
        // `unsigned long long *ticket` (null, or the one-word slice ticket), as
        // cuda/bandwidth.cu declares them; the kernels index slices × slice vectors,
        // which the check above keeps inside the buffer each reads or writes (the
        // copy's source is the larger buffer); `sink` holds 64 bytes and they write
        // its first word.
        unsafe { super::launch(self.entry, builder, self.config) }
    }

    /// The L1 read: every block its own region of the source, checked to fit it.
    fn sm(&self, buffers: &mut Buffers) -> Result<(), GpuError> {
        let count = self.launch.sm_region_vectors();
        let blocks = self.launch.occupancy.blocks_per_sm;
        let needed = count * VECTOR_BYTES * u64::from(self.sms) * u64::from(blocks);
        if needed > buffers.source_bytes {
            return Err(too_big("SM regions", needed, buffers.source_bytes));
        }
        let count = as_u32(count, "the region")?;
        let mut builder = self.stream.launch_builder(self.function);
        builder
            .arg(&buffers.source)
            .arg(&count)
            .arg(&self.sms)
            .arg(&blocks)
            .arg(&mut buffers.tickets)
            .arg(&self.passes)
            .arg(&mut buffers.sink);
        // SAFETY: (const uint4 *, unsigned, unsigned, unsigned, unsigned *, int,
        // unsigned *) as bw_read_sm declares them; it reads region (smid % sms) ×
        // blocks + ticket % blocks of `count` vectors, all inside the source as checked
        // above; `tickets` holds one counter per SM and `sink` 64 bytes.
        unsafe { super::launch(self.entry, builder, self.config) }
    }

    /// The shared-memory kernels: the dynamic shared array allowed and sized to the footprint.
    fn shared(&mut self, buffers: &mut Buffers) -> Result<(), GpuError> {
        let count = self.launch.footprint_bytes / VECTOR_BYTES;
        let bytes = as_u32(count * VECTOR_BYTES, "the shared array")?;
        allow_dynamic_shared(self.function, bytes, "allowing the shared array's size")?;
        self.config.shared_mem_bytes = bytes;
        let count = as_u32(count, "the shared array")?;
        let mut builder = self.stream.launch_builder(self.function);
        builder.arg(&count).arg(&self.passes).arg(&mut buffers.sink);
        // SAFETY: (unsigned, int, unsigned *) as the shared kernels declare them; they
        // index only their dynamic array of `count` vectors, which the launch gives
        // them; `sink` holds 64 bytes.
        unsafe { super::launch(self.entry, builder, self.config) }
    }
}

/// What the bandwidth suite reads from the driver beyond [`super::DeviceProperties`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MemoryAttributes {
    pub memory_clock_khz: i32,
    pub bus_width_bits: i32,
    pub max_threads_per_sm: i32,
    pub max_blocks_per_sm: i32,
}

impl MemoryAttributes {
    /// The DRAM's theoretical peak, 2 x memory clock x bus width, in bytes per second.
    pub fn dram_peak_bytes_per_second(&self) -> f64 {
        2.0 * f64::from(self.memory_clock_khz) * 1e3 * f64::from(self.bus_width_bits) / 8.0
    }
}

pub fn memory_attributes(gpu: &Gpu) -> Result<MemoryAttributes, GpuError> {
    use cudarc::driver::sys::CUdevice_attribute::*;
    let read = |attribute| {
        gpu.context
            .attribute(attribute)
            .map_err(driver_error("reading a memory attribute"))
    };
    Ok(MemoryAttributes {
        memory_clock_khz: read(CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE)?,
        bus_width_bits: read(CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH)?,
        max_threads_per_sm: read(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR)?,
        max_blocks_per_sm: read(CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR)?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn launch(kernel: Kernel, threads: u32, blocks_per_sm: u32, footprint: u64) -> Launch {
        Launch {
            kernel,
            occupancy: Occupancy {
                threads,
                blocks_per_sm,
            },
            footprint_bytes: footprint,
            passes: 3,
            order: SliceOrder::Fixed,
        }
    }

    #[test]
    fn device_launches_read_every_slice_once_per_pass_with_no_shared_slices() {
        // 256 threads: slices of 4 × 256 vectors = 16 KiB; 1 MiB is 64 slices.
        let small = launch(Kernel::ReadDevice, 256, 8, 1 << 20);
        assert_eq!(small.grid(132), 64);
        assert_eq!(small.bytes_moved(132), 3 << 20);
        assert_eq!(small.covered_bytes(), 1 << 20);
        let large = launch(Kernel::ReadDevice, 256, 8, 1 << 30);
        assert_eq!(large.grid(132), 1056);
        assert_eq!(large.bytes_moved(132), 3 << 30);
        // A copy's footprint is both buffers; it reads and writes each byte of one.
        let copy = launch(Kernel::CopyDevice, 256, 8, 1 << 30);
        assert_eq!(copy.covered_bytes(), 1 << 30);
        assert_eq!(copy.bytes_moved(132), 3 << 30);
    }

    #[test]
    fn streamed_slices_put_the_passes_in_the_grid_only_where_no_two_resident_blocks_share_one() {
        // 512 threads: 32 KiB slices; 24 MiB is 768 slices, more than 132 × 4 resident blocks.
        let mut read = launch(Kernel::ReadDeviceStrong, 512, 4, 24 << 20);
        read.order = SliceOrder::Stream;
        assert_eq!(read.resolved_order(132), SliceOrder::Stream);
        assert_eq!(read.grid(132), 768 * 3);
        // The same bytes as three passes of fixed slices.
        assert_eq!(read.bytes_moved(132), 3 * (24 << 20));
        // 15 MiB is 480 slices, fewer than the 528 resident blocks: fixed slices instead.
        read.footprint_bytes = 15 << 20;
        assert_eq!(read.resolved_order(132), SliceOrder::Fixed);
        // 2 blocks per SM (264 resident) stream there.
        read.occupancy.blocks_per_sm = 2;
        assert_eq!(read.resolved_order(132), SliceOrder::Stream);
        // The shared-line read never streams (its chunks are read by many blocks on purpose).
        let mut shared = launch(Kernel::ReadDeviceShared, 512, 2, 24 << 20);
        shared.order = SliceOrder::Stream;
        assert_eq!(shared.resolved_order(132), SliceOrder::Fixed);
    }

    #[test]
    fn shared_line_reads_cut_the_region_in_chunks_every_resident_block_reads() {
        // 512 threads: slices of 32 KiB, chunks of 16 slices (512 KiB); 9 MiB is 18 chunks,
        // and all 4 × 132 resident blocks read one each pass, about 29 blocks a chunk.
        let shared = launch(Kernel::ReadDeviceShared, 512, 4, 9 << 20);
        assert_eq!(shared.device_slices(), (16 * 4 * 512, 18));
        assert_eq!(shared.grid(132), 528);
        assert_eq!(shared.covered_bytes(), 9 << 20);
        assert_eq!(shared.bytes_moved(132), 528 * (512 << 10) * 3);
        // A region smaller than a chunk is one chunk of its whole slices, read by every block.
        let small = launch(Kernel::ReadDeviceShared, 512, 4, 100 << 10);
        assert_eq!(small.device_slices(), (3 * 4 * 512, 1));
        assert_eq!(small.covered_bytes(), 96 << 10);
        assert_eq!(small.bytes_moved(132), 528 * (96 << 10) * 3);
    }

    #[test]
    fn sm_launches_split_the_footprint_among_an_sms_blocks() {
        let sm = launch(Kernel::ReadSm, 512, 2, 256 << 10);
        assert_eq!(sm.covered_bytes(), 256 << 10);
        // Every block reads its 128 KiB region three times.
        assert_eq!(sm.bytes_moved(132), 3 * (128 << 10) * 264);
        let shared = launch(Kernel::SharedCopy, 128, 4, 32 << 10);
        assert_eq!(shared.bytes_moved(132), 3 * (32 << 10) * 528);
    }
}
