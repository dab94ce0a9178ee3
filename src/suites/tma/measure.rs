//! The Tensor Memory Accelerator (cuda/tma.cu), for issue #17 after Luo et al. 2024
//! ("Benchmarking and Dissecting the Nvidia Hopper GPU Architecture", the TMA section) with
//! Wong et al.'s pointer chase. Latency: at every footprint one thread follows a random chain of
//! 128-byte tiles, each copied into shared memory by a 1-D `cp.async.bulk.tensor` that completes
//! on an mbarrier (the next tile's index is the copied tile's first word), and the same chain
//! with ld.global.cg; before each chase every SM reads the whole footprint once, so a chain that
//! fits the L2 is there. Bandwidth: thread 0 of every block streams 2-D tiles of a 1 GiB tensor,
//! each tile once, through `STAGES` shared buffers, for tile sizes from 1 to 32 KiB and 1, 2 or
//! 4 blocks per SM, timed by events around each of three launches (median and range).

use std::time::Duration;

use anyhow::{Context, Result};
use serde::Serialize;

use crate::analysis::stats::{Summary, per_clock_of_blocks};
use crate::experiments::ahead::Ahead;
use crate::experiments::chain::{Order, successors};
use crate::experiments::launch_size::shared_fits;
use crate::gpu::Gpu;
use crate::gpu::launch::Laps;
use super::launch::{self, StreamShape};
use super::report::LatencyRow;

/// cuda/tma.cu's tile of the chase (words) and the columns of a streamed box (words).
pub const TILE_WORDS: u32 = 32;
pub const BOX_COLUMNS: u32 = 64;
pub const MAX_STAGES: u32 = 8;
/// Copies each streaming block keeps in flight (each stage has one of the kernel's barriers).
pub const STAGES: u32 = 4;
const _: () = assert!(STAGES <= MAX_STAGES);
/// Timed steps of a chase, and the untimed ones before them.
pub const STEPS: u32 = 2048;
pub const WARM: u32 = 256;
/// The streamed tensor: 16384 words (64 KiB) per row, 16384 rows: 1 GiB, far past any L2.
pub const STREAM_COLUMNS: u32 = 16384;
pub const STREAM_ROWS: u32 = 16384;
/// Timed launches per streaming configuration (each reads the 1 GiB tensor once, a third of a
/// millisecond): a single launch read 9 % low in one `all` of six on an H100.
const TIMED_STREAMS: usize = 3;

/// Box rows of the streamed tiles (64 words wide): 1, 4, 16 and 32 KiB.
pub const BOX_ROWS: [u32; 4] = [4, 16, 64, 128];
pub const BLOCKS_PER_SM: [u32; 3] = [1, 2, 4];

#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Stream {
    pub tile_bytes: u32,
    pub blocks_per_sm: u32,
    pub stages: u32,
    /// Bytes per clock of each block's span: median and range.
    pub per_block: Option<Summary>,
    /// Bytes all blocks copied in one launch, and the GPU milliseconds between events around
    /// each timed launch: median and range.
    pub bytes: Option<f64>,
    pub event_ms: Option<Summary>,
    /// Why it did not run (its buffers do not fit an SM's shared memory).
    pub skipped: Option<String>,
}

/// The random tile chain of every footprint, in order, in compact form (each tile's successor,
/// [`successors`]; the device expands it), built on a host thread from now on (call it before
/// the GPU is open, so the first are built while the process waits for the GPU).
pub fn start_chains(footprints: &[u64]) -> Ahead<(Vec<u32>, Vec<usize>)> {
    let tile_bytes = u64::from(TILE_WORDS) * 4;
    let jobs = footprints
        .iter()
        .map(|&footprint| {
            move || {
                let tiles = (footprint / tile_bytes) as usize;
                successors(tiles, Order::Random(0x7a11 ^ footprint))
            }
        })
        .collect();
    Ahead::start(jobs, chains_kept_ahead(footprints))
}

/// The footprints whose chains may wait built at once (a compact chain holds 12 bytes of host
/// memory per 128-byte tile: 192 MiB here).
const AHEAD_BYTES: u64 = 2 << 30;

/// How many finished chains may wait: as many as [`AHEAD_BYTES`] holds of the largest (at
/// least one). The default footprints' chains (773 MiB of footprints) are then all built
/// before the GPU was the suite's: built one or two ahead, the chases had waited for them.
fn chains_kept_ahead(footprints: &[u64]) -> usize {
    let mut largest = footprints.to_vec();
    largest.sort_unstable_by(|a, b| b.cmp(a));
    let mut held = 0;
    let kept = largest
        .iter()
        .take_while(|&&f| {
            held += f;
            held <= AHEAD_BYTES
        })
        .count();
    kept.max(1)
}

/// Chases at every footprint (bytes, multiples of the 128-byte tile), on `chains` from
/// [`start_chains`] of the same footprints: `tma-latency.csv`'s rows.
pub fn latency(
    gpu: &mut Gpu,
    footprints: &[u64],
    chains: Ahead<(Vec<u32>, Vec<usize>)>,
    sms: u32,
) -> Result<Vec<LatencyRow>> {
    let mut rows = Vec::new();
    for &footprint in footprints {
        let (next, visit) = chains.next()?;
        let data = launch::tma_chain(gpu, &next, TILE_WORDS, sms)?;
        let map = launch::tensor_map(gpu, &data, &[data.len() as u64], None, &[TILE_WORDS])?;
        let laps = Laps {
            warm: WARM,
            steps: STEPS,
            deadline: Duration::from_secs(10),
        };
        let n = visit.len();
        let mut cycles = [0.0; 2];
        for (mode, out) in cycles.iter_mut().enumerate() {
            // The two chases start half the chain apart: where it is longer than both, neither
            // walks tiles the other left behind.
            let start = (visit[(mode * n / 2) % n] as u64 * u64::from(TILE_WORDS)) as u32;
            launch::tma_touch(gpu, &data, sms)?;
            let (c, _) = launch::tma_latency(gpu, (&map, &data), start, mode as u32, laps)?;
            anyhow::ensure!(
                c > 0,
                "the TMA chase at {footprint} bytes returned no cycles"
            );
            *out = c as f64 / f64::from(STEPS);
        }
        rows.push(LatencyRow {
            footprint_bytes: footprint,
            tma_cycles: cycles[0],
            load_cycles: cycles[1],
            tma_over_load_cycles: cycles[0] - cycles[1],
        });
    }
    Ok(rows)
}

/// Streams the 256 MiB tensor for every tile size and blocks per SM whose buffers fit.
pub fn bandwidth(
    gpu: &mut Gpu,
    sms: u32,
    shared_per_sm: u32,
    shared_per_block: u32,
    bytes_per_config: u64,
) -> Result<Vec<Stream>> {
    let words = STREAM_COLUMNS as usize * STREAM_ROWS as usize;
    let data = launch::tma_zeros(gpu, words)?;
    let mut streams = Vec::new();
    for box_rows in BOX_ROWS {
        let tile_bytes = BOX_COLUMNS * 4 * box_rows;
        let map = launch::tensor_map(
            gpu,
            &data,
            &[u64::from(STREAM_COLUMNS), u64::from(STREAM_ROWS)],
            Some(u64::from(STREAM_COLUMNS) * 4),
            &[BOX_COLUMNS, box_rows],
        )?;
        for blocks_per_sm in BLOCKS_PER_SM {
            let shared = STAGES * tile_bytes;
            if !shared_fits(
                blocks_per_sm,
                u64::from(shared),
                u64::from(shared_per_sm),
                u64::from(shared_per_block),
            ) {
                streams.push(Stream {
                    tile_bytes,
                    blocks_per_sm,
                    stages: STAGES,
                    skipped: Some(format!(
                        "{blocks_per_sm} x {STAGES} buffers of {tile_bytes} bytes do not fit an SM's {shared_per_sm} bytes of shared memory"
                    )),
                    ..Stream::default()
                });
                continue;
            }
            let blocks = sms * blocks_per_sm;
            let tiles = (bytes_per_config / u64::from(tile_bytes) / u64::from(blocks))
                .max(u64::from(STAGES)) as u32;
            let shape = StreamShape {
                blocks,
                tiles,
                stages: STAGES,
                box_rows,
                tiles_per_row: STREAM_COLUMNS / BOX_COLUMNS,
                total_tiles: (STREAM_COLUMNS / BOX_COLUMNS) * (STREAM_ROWS / box_rows),
                shared_bytes: shared,
            };
            // The first launch is untimed (clocks up, code in the caches) and copies one tile
            // per block, so the L2 holds almost none of what the timed ones read.
            launch::tma_bandwidth(gpu, &map, StreamShape { tiles: 1, ..shape })?;
            let mut rates = Vec::new();
            let mut event_ms = Vec::new();
            for _ in 0..TIMED_STREAMS {
                let (stamps, ms) = launch::tma_bandwidth(gpu, &map, shape)?;
                rates.extend(
                    per_clock_of_blocks(&stamps, f64::from(tiles) * f64::from(tile_bytes))
                        .with_context(|| {
                            format!("a TMA copy of {tile_bytes}-byte tiles never completed (or a block returned no span)")
                        })?,
                );
                event_ms.push(ms);
            }
            streams.push(Stream {
                tile_bytes,
                blocks_per_sm,
                stages: STAGES,
                per_block: Summary::of(&rates),
                bytes: Some(f64::from(blocks) * f64::from(tiles) * f64::from(tile_bytes)),
                event_ms: Summary::of(&event_ms),
                skipped: None,
            });
        }
    }
    Ok(streams)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chains_are_built_ahead_within_two_gibibytes() {
        let mib = |m: &[u64]| m.iter().map(|x| x << 20).collect::<Vec<u64>>();
        // The default footprints: every chain (1 GiB in all).
        let defaults = mib(&[1, 1, 4, 8, 16, 24, 32, 40, 48, 56, 64, 96, 128, 256]);
        assert_eq!(chains_kept_ahead(&defaults), defaults.len());
        // Four of 1 GiB: two.
        assert_eq!(chains_kept_ahead(&mib(&[1024, 1024, 1024, 1024])), 2);
        // One larger than the budget still waits alone.
        assert_eq!(chains_kept_ahead(&mib(&[4096])), 1);
    }

    #[test]
    fn the_kernels_and_their_constants_are_the_hosts() {
        let ptx = crate::kernels::module("tma").unwrap().ptx;
        for entry in ["tma_chain_fill", "tma_touch", "tma_latency", "tma_bandwidth"] {
            assert!(ptx.contains(&format!(".entry {entry}(")), "{entry}");
        }
        let source = include_str!("../../../cuda/tma.cu");
        for (name, value) in [
            ("TILE_WORDS", TILE_WORDS),
            ("BOX_COLUMNS", BOX_COLUMNS),
            ("MAX_STAGES", MAX_STAGES),
        ] {
            assert!(
                source.contains(&format!("#define {name} {value}\n")),
                "{name}"
            );
        }
        // Every box is a whole number of rows of the tensor and at most 256 wide or high, as
        // cuTensorMapEncodeTiled requires.
        for rows in BOX_ROWS {
            assert_eq!(STREAM_ROWS % rows, 0);
            assert!(rows <= 256 && BOX_COLUMNS <= 256 && TILE_WORDS <= 256);
        }
    }
}
