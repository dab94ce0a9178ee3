//! Tile shapes and asynchronous copies (issue #74, after Luo et al.'s extended Hopper study,
//! arXiv 2501.12084, its TMA and asynchronous-copy sections): what the shape of a TMA box,
//! its shared-memory swizzle and its rank cost, and what `cp.async` (LDGSTS) gains over loads
//! through registers, each from a region that stays in the L2 and from DRAM.
//!
//! Tile shapes (`tma_tiles`): thread 0 of each of two blocks per SM copies 4 KiB boxes of a
//! tensor of 32-bit words with 16 KiB rows, eight in flight per block on their own mbarriers,
//! block after block walking consecutive tiles. The boxes run from 16 bytes wide x 256 rows to
//! 1 KiB x 4 rows, three of them again with the swizzle of their width (32, 64 and 128 bytes,
//! the layouts wgmma reads), and two 3-D boxes beside the 2-D box of the same row width and
//! rows. Asynchronous copies (`async_copy`): every thread of two blocks of 256 per SM copies 16
//! bytes of each 4 KiB chunk into shared memory, `depth` chunks in flight: synchronously
//! (`ld.global.cg` into registers, `st.shared`, a barrier) or by `cp.async.cg` with a commit
//! group per chunk; beside them the TMA copy of a 4 KiB 2-D box (256 bytes x 16 rows) with
//! `depth` stages. Depth 1, 2, 4 and 8 put 8 to 64 KiB in flight per SM in every method.
//!
//! Every configuration is launched once untimed (the L2 region read into the L2, the clocks up;
//! from DRAM one tile per block, so the L2 holds almost none of what the timed launches read)
//! and timed by events around each of three launches: bytes over the median launch's time,
//! with the slowest's and fastest's.

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};

use super::launch::{self, ASYNC_DEPTHS, AsyncShape, TILES_MAX_STAGES, TilesShape};
use crate::analysis::stats::{Summary, per_clock_of_blocks};
use crate::experiments::launch_size::shared_fits;
use crate::gpu::Gpu;

/// Blocks per SM of every configuration, and the bytes of every tile and chunk.
pub const BLOCKS_PER_SM: u32 = 2;
pub const TILE_BYTES: u32 = 4096;
/// Copies in flight per block in the tile-shape stream.
pub const SHAPE_STAGES: u32 = TILES_MAX_STAGES;
/// Words per row of the tensors (16 KiB), and rows per plane of their 3-D view.
pub const ROW_WORDS: u32 = 4096;
pub const PLANE_ROWS: u32 = 16;
/// The DRAM tensor (1 GiB, far past any L2); the L2 region is its first part.
pub const DRAM_BYTES: u64 = 1 << 30;
/// The L2 region's bytes are a whole number of these (whole tiles of every shape).
const REGION_GRAIN: u64 = 4 << 20;
const TIMED: usize = 3;

/// Where the copied bytes come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    L2,
    Dram,
}

impl Source {
    pub const ALL: [Source; 2] = [Source::L2, Source::Dram];

    /// The name the files give it.
    pub fn name(self) -> &'static str {
        match self {
            Source::L2 => "l2",
            Source::Dram => "dram",
        }
    }

    /// The region copied from: a quarter of the L2 in whole 4 MiB (at least 4, at most 16
    /// MiB), or the whole DRAM tensor.
    pub fn bytes(self, l2_bytes: u64) -> u64 {
        match self {
            Source::L2 => (l2_bytes / 4 / REGION_GRAIN).clamp(1, 4) * REGION_GRAIN,
            Source::Dram => DRAM_BYTES,
        }
    }
}

/// A TMA box: words along x, y and z (z 1 at rank 2), and its swizzle in bytes (0: none).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TileShape {
    pub rank: u32,
    pub boxes: [u32; 3],
    pub swizzle: u32,
}

const fn flat(x: u32, y: u32, swizzle: u32) -> TileShape {
    TileShape {
        rank: 2,
        boxes: [x, y, 1],
        swizzle,
    }
}

/// Every box streamed: 4 KiB each.
pub const TILE_SHAPES: [TileShape; 11] = [
    flat(4, 256, 0),
    flat(8, 128, 0),
    flat(8, 128, 32),
    flat(16, 64, 0),
    flat(16, 64, 64),
    flat(32, 32, 0),
    flat(32, 32, 128),
    flat(64, 16, 0),
    TileShape {
        rank: 3,
        boxes: [64, 4, 4],
        swizzle: 0,
    },
    TileShape {
        rank: 3,
        boxes: [16, 16, 4],
        swizzle: 0,
    },
    flat(256, 4, 0),
];

/// The 2-D box the TMA copies in the comparison with cp.async: 256 bytes x 16 rows.
pub const COMPARED_BOX: TileShape = flat(64, 16, 0);

impl TileShape {
    pub fn inner_bytes(&self) -> u32 {
        4 * self.boxes[0]
    }

    /// The tensor's dimensions (words, innermost first) over `bytes` at this rank, and the
    /// bytes between consecutive indices of the outer ones.
    pub fn tensor(&self, bytes: u64) -> (Vec<u64>, Vec<u64>) {
        let rows = bytes / 4 / u64::from(ROW_WORDS);
        let row = u64::from(ROW_WORDS) * 4;
        if self.rank == 3 {
            let rows_per_plane = u64::from(PLANE_ROWS);
            (
                vec![u64::from(ROW_WORDS), rows_per_plane, rows / rows_per_plane],
                vec![row, row * rows_per_plane],
            )
        } else {
            (vec![u64::from(ROW_WORDS), rows], vec![row])
        }
    }

    /// The tiles along each dimension of the tensor over `bytes`.
    pub fn grid(&self, bytes: u64) -> [u32; 3] {
        let (dims, _) = self.tensor(bytes);
        let mut grid = [1; 3];
        for (g, (d, b)) in grid.iter_mut().zip(dims.iter().zip(self.boxes)) {
            *g = (d / u64::from(b)) as u32;
        }
        grid
    }
}

/// The copying methods compared at each depth.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Method {
    /// ld.global.cg into registers, st.shared, a barrier.
    Sync,
    /// cp.async.cg, a commit group per chunk.
    CpAsync,
    /// The TMA copy of [`COMPARED_BOX`], `depth` stages.
    Tma,
}

impl Method {
    pub const ALL: [Method; 3] = [Method::Sync, Method::CpAsync, Method::Tma];

    pub fn name(self) -> &'static str {
        match self {
            Method::Sync => "ld.global.cg + st.shared",
            Method::CpAsync => "cp.async.cg",
            Method::Tma => "TMA 2-D box",
        }
    }
}

/// One configuration from one source, as `tma-shapes.csv` holds it: a TMA box of the shape
/// experiment ("boxes"), or a method at a depth of the comparison ("copies"). A cp.async or
/// synchronous chunk is a 1-D "box" of 1024 words.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Row {
    pub experiment: String,
    pub source: String,
    pub source_bytes: u64,
    pub method: String,
    pub rank: u32,
    pub box_x_words: u32,
    pub box_y: u32,
    pub box_z: u32,
    pub swizzle_bytes: u32,
    /// Copies in flight per block, and bytes in flight per SM.
    pub depth: u32,
    pub bytes_in_flight_per_sm: u32,
    pub threads_per_block: u32,
    pub blocks_per_sm: u32,
    pub launches: usize,
    pub bytes_per_launch: Option<f64>,
    pub gb_per_s: Option<f64>,
    pub gb_per_s_min: Option<f64>,
    pub gb_per_s_max: Option<f64>,
    pub bytes_per_clock_per_sm: Option<f64>,
    pub skipped: Option<String>,
}

pub const BOXES: &str = "boxes";
pub const COPIES: &str = "copies";

impl Row {
    /// The row of `method` copying `shape` (`depth` in flight per block) from `source` on
    /// `device`: the bytes of each launch over the GPU time between events around it (the
    /// median launch's, the slowest's and the fastest's), and the median per SM and clock at
    /// the SM clock measured before the suite; or why it did not run.
    pub fn new(
        experiment: &str,
        source: Source,
        device: Device,
        method: Method,
        shape: TileShape,
        depth: u32,
        timing: Timing,
    ) -> Row {
        let (bytes, event_ms, skipped) = match timing {
            Timing::Ran { bytes, event_ms } => (Some(bytes), event_ms, None),
            Timing::Skipped(why) => (None, Vec::new(), Some(why)),
        };
        let summary = Summary::of(&event_ms);
        let gbs = |ms: f64| bytes.map(|b| b / (ms * 1e-3) / 1e9);
        let Device { sms, mhz, .. } = device;
        Row {
            experiment: experiment.into(),
            source: source.name().into(),
            source_bytes: source.bytes(device.l2_bytes),
            method: method.name().into(),
            rank: shape.rank,
            box_x_words: shape.boxes[0],
            box_y: shape.boxes[1],
            box_z: shape.boxes[2],
            swizzle_bytes: shape.swizzle,
            depth,
            bytes_in_flight_per_sm: depth * TILE_BYTES * BLOCKS_PER_SM,
            threads_per_block: if method == Method::Tma {
                32
            } else {
                launch::ASYNC_THREADS
            },
            blocks_per_sm: BLOCKS_PER_SM,
            launches: event_ms.len(),
            bytes_per_launch: bytes,
            gb_per_s: summary.and_then(|m| gbs(m.median)),
            gb_per_s_min: summary.and_then(|m| gbs(m.max)),
            gb_per_s_max: summary.and_then(|m| gbs(m.min)),
            bytes_per_clock_per_sm: summary
                .filter(|_| mhz > 0.0 && sms > 0)
                .and_then(|m| gbs(m.median))
                .map(|g| g * 1e9 / (mhz * 1e6) / f64::from(sms)),
            skipped,
        }
    }
}

/// The chunk of the synchronous and cp.async copies as a box: 1024 words.
pub const CHUNK: TileShape = TileShape {
    rank: 1,
    boxes: [TILE_BYTES / 4, 1, 1],
    swizzle: 0,
};

/// What a configuration's timed launches gave: the bytes of each and the GPU milliseconds
/// between events around each; or why it did not run.
#[derive(Debug, Clone, PartialEq)]
pub enum Timing {
    Ran { bytes: f64, event_ms: Vec<f64> },
    Skipped(String),
}

/// Both experiments' rows, in the order measured.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Shapes {
    pub rows: Vec<Row>,
}

/// What the experiments need of the device.
#[derive(Debug, Clone, Copy)]
pub struct Device {
    pub sms: u32,
    pub mhz: f64,
    pub shared_per_sm: u32,
    pub shared_per_block: u32,
    pub l2_bytes: u64,
}

/// Both experiments, each configuration reading about `bytes_per_launch` per launch.
pub fn measure(gpu: &mut Gpu, device: Device, bytes_per_launch: u64) -> Result<Shapes> {
    let data = launch::tma_zeros(gpu, (DRAM_BYTES / 4) as usize)?;
    let mut rows = Vec::new();
    for source in Source::ALL {
        for shape in TILE_SHAPES {
            let rate = tiles_rate(gpu, &data, device, source, shape, SHAPE_STAGES, bytes_per_launch)?;
            rows.push(Row::new(BOXES, source, device, Method::Tma, shape, SHAPE_STAGES, rate));
        }
        for depth in ASYNC_DEPTHS {
            for method in Method::ALL {
                let (shape, rate) = match method {
                    Method::Tma => (
                        COMPARED_BOX,
                        tiles_rate(gpu, &data, device, source, COMPARED_BOX, depth, bytes_per_launch)?,
                    ),
                    _ => (
                        CHUNK,
                        copy_rate(gpu, &data, device, source, method, depth, bytes_per_launch)?,
                    ),
                };
                rows.push(Row::new(COPIES, source, device, method, shape, depth, rate));
            }
        }
    }
    Ok(Shapes { rows })
}

/// The units (tiles or chunks) each block copies per launch: `bytes_per_launch` over the grid,
/// a whole number of `multiple`, at least one `multiple`.
fn units_per_block(bytes_per_launch: u64, blocks: u32, multiple: u32) -> u32 {
    let units = bytes_per_launch / u64::from(TILE_BYTES) / u64::from(blocks.max(1));
    let multiple = u64::from(multiple.max(1));
    ((units / multiple).max(1) * multiple).min(u64::from(u32::MAX / 2)) as u32
}

/// The first launch, untimed: the whole launch where the region stays in the L2 (it brings
/// the region there), one round of copies per block from DRAM.
fn warm_units(source: Source, units: u32, depth: u32) -> u32 {
    match source {
        Source::L2 => units,
        Source::Dram => depth.min(units),
    }
}

/// A TMA stream of `shape`'s boxes, `stages` in flight per block.
fn tiles_rate(
    gpu: &mut Gpu,
    data: &cudarc::driver::CudaSlice<u32>,
    device: Device,
    source: Source,
    shape: TileShape,
    stages: u32,
    bytes_per_launch: u64,
) -> Result<Timing> {
    let region = source.bytes(device.l2_bytes);
    let (dims, strides) = shape.tensor(region);
    let blocks = device.sms * BLOCKS_PER_SM;
    let tiles = units_per_block(bytes_per_launch, blocks, stages);
    let launch_shape = TilesShape {
        blocks,
        tiles,
        stages,
        rank: shape.rank,
        boxes: shape.boxes,
        grid: shape.grid(region),
    };
    let map = launch::swizzled_map(gpu, data, &dims, &strides, &shape.boxes[..shape.rank as usize], shape.swizzle)?;
    let bytes = f64::from(blocks) * f64::from(tiles) * f64::from(TILE_BYTES);
    let what = || format!("a TMA copy of {:?}-word boxes never completed", shape.boxes);
    time_launches(device, launch_shape.shared_bytes(), bytes, what, |warm| {
        let tiles = if warm { warm_units(source, tiles, stages) } else { tiles };
        Ok(launch::tma_tiles(gpu, &map, TilesShape { tiles, ..launch_shape })?)
    })
}

/// `async_copy` by `method` (synchronous or cp.async), `depth` chunks in flight per block.
fn copy_rate(
    gpu: &mut Gpu,
    data: &cudarc::driver::CudaSlice<u32>,
    device: Device,
    source: Source,
    method: Method,
    depth: u32,
    bytes_per_launch: u64,
) -> Result<Timing> {
    let blocks = device.sms * BLOCKS_PER_SM;
    let steps = units_per_block(bytes_per_launch, blocks, depth);
    let shape = AsyncShape {
        blocks,
        chunks: (source.bytes(device.l2_bytes) / u64::from(AsyncShape::chunk_bytes())) as u32,
        steps,
        depth,
        asynchronous: method == Method::CpAsync,
    };
    let bytes = f64::from(blocks) * f64::from(steps) * f64::from(AsyncShape::chunk_bytes());
    let what = || format!("an async_copy launch of {shape:?} reported no span");
    time_launches(device, shape.shared_bytes(), bytes, what, |warm| {
        let steps = if warm { warm_units(source, steps, depth) } else { steps };
        Ok(launch::async_copy(gpu, data, AsyncShape { steps, ..shape })?)
    })
}

/// One configuration of `bytes` per launch: skipped where its `shared` bytes per block do not
/// fit; else `launch(true)` once untimed ([`warm_units`]), then `launch(false)` [`TIMED`]
/// times, each returning every block's stamps and its event milliseconds; a launch with a
/// block that reported no span fails with `what`.
fn time_launches(
    device: Device,
    shared: u32,
    bytes: f64,
    what: impl Fn() -> String,
    mut launch: impl FnMut(bool) -> Result<(Vec<i64>, f64)>,
) -> Result<Timing> {
    if !fits(device, shared) {
        return Ok(Timing::Skipped(format!(
            "{BLOCKS_PER_SM} blocks of {shared} bytes of shared memory do not fit an SM's {}",
            device.shared_per_sm
        )));
    }
    launch(true)?;
    let mut event_ms = Vec::new();
    for _ in 0..TIMED {
        let (stamps, ms) = launch(false)?;
        per_clock_of_blocks(&stamps, 1.0).with_context(&what)?;
        event_ms.push(ms);
    }
    Ok(Timing::Ran { bytes, event_ms })
}

fn fits(device: Device, shared: u32) -> bool {
    shared_fits(
        BLOCKS_PER_SM,
        u64::from(shared),
        u64::from(device.shared_per_sm),
        u64::from(device.shared_per_block),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_box_is_one_the_driver_encodes_over_both_regions() {
        // cuTensorMapEncodeTiled: each box dimension at most 256, the inner one a multiple of
        // 16 bytes and, swizzled, at most the swizzle's span; the tensor a whole number of
        // boxes in every dimension (no box reads past the end and fills).
        let regions = [
            Source::L2.bytes(50 << 20),
            Source::L2.bytes(60 << 20),
            Source::L2.bytes(4 << 20),
            Source::Dram.bytes(0),
        ];
        assert_eq!(regions[..3], [12 << 20, 12 << 20, 4 << 20]);
        for shape in TILE_SHAPES.iter().chain([&COMPARED_BOX]) {
            assert_eq!(4 * shape.boxes.iter().product::<u32>(), TILE_BYTES, "{shape:?}");
            assert!(shape.boxes.iter().all(|&b| (1..=256).contains(&b)));
            assert_eq!(shape.inner_bytes() % 16, 0);
            if shape.swizzle > 0 {
                assert!(shape.inner_bytes() <= shape.swizzle, "{shape:?}");
                assert!(launch::swizzle(shape.swizzle).is_some());
            }
            for bytes in regions {
                let (dims, strides) = shape.tensor(bytes);
                assert_eq!(dims.len(), shape.rank as usize);
                assert_eq!(strides.len() + 1, dims.len());
                assert_eq!(dims.iter().product::<u64>() * 4, bytes);
                let grid = shape.grid(bytes);
                for (d, (g, b)) in dims.iter().zip(grid.iter().zip(shape.boxes)) {
                    assert_eq!(u64::from(*g) * u64::from(b), *d, "{shape:?} over {bytes}");
                }
            }
        }
        // The 3-D boxes sit beside 2-D boxes of the same row width and rows.
        for three in TILE_SHAPES.iter().filter(|s| s.rank == 3) {
            let rows = three.boxes[1] * three.boxes[2];
            assert!(TILE_SHAPES.iter().any(|s| s.rank == 2
                && s.swizzle == 0
                && s.boxes[0] == three.boxes[0]
                && s.boxes[1] == rows));
        }
    }

    #[test]
    fn a_rate_is_the_bytes_over_the_median_launch_with_the_slowest_and_fastest() {
        let device = |mhz: f64| Device {
            sms: 100,
            mhz,
            shared_per_sm: 0,
            shared_per_block: 0,
            l2_bytes: 50 << 20,
        };
        let row = |event_ms: &[f64], mhz: f64| {
            let timing = Timing::Ran {
                bytes: 1e9,
                event_ms: event_ms.to_vec(),
            };
            Row::new(COPIES, Source::L2, device(mhz), Method::CpAsync, CHUNK, 2, timing)
        };
        let rate = row(&[0.5, 0.25, 1.0], 1000.0);
        assert_eq!(rate.launches, 3);
        assert_eq!(rate.gb_per_s, Some(2000.0));
        assert_eq!(rate.gb_per_s_min, Some(1000.0));
        assert_eq!(rate.gb_per_s_max, Some(4000.0));
        // 2 TB/s over 100 SMs at 1 GHz.
        assert_eq!(rate.bytes_per_clock_per_sm, Some(20.0));
        assert_eq!((rate.source_bytes, rate.bytes_in_flight_per_sm), (12 << 20, 16384));
        assert_eq!(row(&[], 1000.0).gb_per_s, None);
        assert_eq!(row(&[1.0], 0.0).bytes_per_clock_per_sm, None);
        let skipped = Row::new(
            BOXES,
            Source::Dram,
            device(1000.0),
            Method::Tma,
            COMPARED_BOX,
            8,
            Timing::Skipped("do not fit".into()),
        );
        assert_eq!((skipped.gb_per_s, skipped.launches), (None, 0));
        assert_eq!(skipped.skipped.as_deref(), Some("do not fit"));
    }

    #[test]
    fn each_block_copies_whole_rounds_and_the_first_launch_warms_what_it_should() {
        // 1 GiB over 264 blocks of 4 KiB units: 992 each, a multiple of 8.
        assert_eq!(units_per_block(1 << 30, 264, 8), 992);
        assert_eq!(units_per_block(1 << 30, 264, 1), 992);
        // Too little for one round still copies one.
        assert_eq!(units_per_block(4096, 264, 8), 8);
        assert_eq!(warm_units(Source::L2, 992, 8), 992);
        assert_eq!(warm_units(Source::Dram, 992, 8), 8);
        assert_eq!(warm_units(Source::Dram, 4, 8), 4);
    }

    #[test]
    fn the_kernels_and_their_constants_are_the_hosts() {
        let ptx = crate::kernels::module("tma").unwrap().ptx;
        for entry in ["tma_tiles", "async_copy"] {
            assert!(ptx.contains(&format!(".entry {entry}(")), "{entry}");
        }
        let source = include_str!("../../../cuda/tma.cu");
        for (name, value) in [
            ("TILES_MAX_STAGES", TILES_MAX_STAGES),
            ("ASYNC_THREADS", launch::ASYNC_THREADS),
        ] {
            assert!(source.contains(&format!("#define {name} {value}\n")), "{name}");
        }
        assert_eq!(AsyncShape::chunk_bytes(), TILE_BYTES);
        // Each depth is a case of the kernel's switch, in both modes.
        for depth in ASYNC_DEPTHS {
            for mode in [0, 1] {
                assert!(source.contains(&format!("case {}:", mode * 16 + depth)), "{depth}");
            }
        }
    }
}
