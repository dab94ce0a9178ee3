//! The DRAM copy by the TMA's bulk copies (issue #32, item 2: DRAM copy at the limit, with
//! what bounds it). Of every SM kernel tried with fixed work per block
//! (scripts/dram-copy-probe.cu, scripts/dram-copy-layout-probe.cu: grid-stride loops of 4 to
//! 16 loads in flight, `.cs`, L2 eviction hints, destination offsets) the fastest moved the
//! data with bulk copies through shared memory, about 87 % of the theoretical peak on an H100;
//! with the chunks taken in order from an atomic ticket, 90.3-90.5 %
//! (scripts/dram-bulk-ticket-probe.cu), at or above the copy engines' 90.2 % on the same card.
//! This measures that mover.
//!
//! Method. Two arrays of 4 GiB (an eighth of free memory each where that is less), the source
//! holding a pattern; `tma_dram_copy` (cuda/tma.cu): thread 0 of every block takes chunks of
//! 8, 16 or 32 KiB in order from a ticket, loads each into one of 4, 6 or 8 shared buffers
//! (`cp.async.bulk`, an mbarrier each) and stores it back out to the same place
//! (`cp.async.bulk.global.shared::cta`), a buffer loaded again once its store has read it,
//! half the buffers' chunks being loaded and half stored at a time; one or two blocks per SM.
//! Every pattern that fits an SM is timed over two launches after a warm one; the fastest is
//! timed again over five, on a target cleared first, and three stretches of its target are
//! then compared with the source. Rates count the bytes read and written, over the GPU time
//! between events around a launch.

use anyhow::Result;
use cudarc::driver::CudaSlice;
use serde::Serialize;

use crate::analysis::stats::Summary;
use crate::experiments::copy_engines::array_bytes;
use crate::experiments::launch_size::shared_fits;
use crate::gpu::Gpu;
use super::launch::{self, DramCopyShape};

/// Chunk sizes, shared buffers per block (with the lag, half of them) and blocks per SM searched.
pub const CHUNK_KIB: [u32; 3] = [8, 16, 32];
pub const STAGES: [u32; 3] = [4, 6, 8];
pub const BLOCKS_PER_SM: [u32; 2] = [1, 2];
const SEARCH_LAUNCHES: usize = 2;
pub const FIGURE_LAUNCHES: usize = 5;

/// One pattern: chunk size, buffers per block, blocks per SM.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct CopyPattern {
    pub chunk_bytes: u32,
    pub stages: u32,
    pub blocks_per_sm: u32,
}

impl CopyPattern {
    /// Chunks whose stores may still be reading their buffer when it is wanted again.
    pub fn lag(&self) -> u32 {
        self.stages / 2
    }
}

/// One pattern as measured: GPU milliseconds of each timed launch, or why it did not run or
/// was not counted.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CopyReading {
    pub pattern: CopyPattern,
    pub event_ms: Option<Summary>,
    pub skipped: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DramBulkCopy {
    /// Bytes of each array; a launch reads and writes this many.
    pub array_bytes: u64,
    pub search: Vec<CopyReading>,
    /// The fastest pattern timed again, and what the check of its target found.
    pub figure: Option<CopyReading>,
    pub checked_words: u64,
    pub mismatched_words: u64,
}

/// Every pattern of the search, in order.
pub fn patterns() -> Vec<CopyPattern> {
    let mut out = Vec::new();
    for kib in CHUNK_KIB {
        for stages in STAGES {
            for blocks_per_sm in BLOCKS_PER_SM {
                out.push(CopyPattern {
                    chunk_bytes: kib << 10,
                    stages,
                    blocks_per_sm,
                });
            }
        }
    }
    out
}

/// Why `pattern` cannot run on an SM with `shared_per_sm` bytes of shared memory and at most
/// `shared_per_block` per block, if it cannot.
pub fn unfit(pattern: &CopyPattern, shared_per_sm: u32, shared_per_block: u32) -> Option<String> {
    let buffers = u64::from(pattern.stages) * u64::from(pattern.chunk_bytes);
    (!shared_fits(
        pattern.blocks_per_sm,
        buffers,
        u64::from(shared_per_sm),
        u64::from(shared_per_block),
    ))
    .then(|| {
        format!(
            "{} x {} buffers of {} bytes do not fit an SM's {shared_per_sm} bytes of shared memory",
            pattern.blocks_per_sm, pattern.stages, pattern.chunk_bytes
        )
    })
}

/// The search and the re-timed fastest pattern, or why nothing was measured.
pub fn measure(
    gpu: &mut Gpu,
    multiprocessors: u32,
    shared_per_sm: u32,
    shared_per_block: u32,
) -> Result<std::result::Result<DramBulkCopy, String>> {
    let free = gpu.free_memory()?;
    let Some(array) = array_bytes(free) else {
        return Ok(Err(format!(
            "not measured: {free} bytes of device memory free, too few for two arrays"
        )));
    };
    let words = usize::try_from(array / 4)?;
    let (source, mut target) = crate::gpu::launch::copy_engines::patterned_pair(gpu, words, "the bulk copy's arrays")?;
    let mut search = Vec::new();
    for pattern in patterns() {
        search.push(match unfit(&pattern, shared_per_sm, shared_per_block) {
            Some(why) => CopyReading {
                pattern,
                event_ms: None,
                skipped: Some(why),
            },
            None => time(
                gpu,
                &source,
                &mut target,
                multiprocessors,
                pattern,
                SEARCH_LAUNCHES,
            )?,
        });
    }
    let fastest = search
        .iter()
        .filter_map(|r| Some((r.event_ms?.median, r.pattern)))
        .min_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, p)| p);
    // The search's patterns all wrote the source's data: cleared, the target shows what the
    // figure's own launches wrote.
    crate::gpu::launch::copy_engines::clear(gpu, &mut target)?;
    let figure = match fastest {
        Some(pattern) => Some(time(
            gpu,
            &source,
            &mut target,
            multiprocessors,
            pattern,
            FIGURE_LAUNCHES,
        )?),
        None => None,
    };
    let (checked_words, mismatched_words) = crate::gpu::launch::copy_engines::check_copy(gpu, &target)?;
    Ok(Ok(DramBulkCopy {
        array_bytes: array,
        search,
        figure,
        checked_words,
        mismatched_words,
    }))
}

/// `pattern` over a warm launch and `launches` timed ones; a launch whose copies never
/// completed leaves the pattern without a rate.
fn time(
    gpu: &mut Gpu,
    source: &CudaSlice<u32>,
    target: &mut CudaSlice<u32>,
    multiprocessors: u32,
    pattern: CopyPattern,
    launches: usize,
) -> Result<CopyReading> {
    let shape = DramCopyShape {
        blocks: multiprocessors * pattern.blocks_per_sm,
        chunk_bytes: pattern.chunk_bytes,
        stages: pattern.stages,
        lag: pattern.lag(),
    };
    let mut ms = Vec::new();
    for i in 0..=launches {
        let launch = launch::tma_dram_copy(gpu, source, target, shape)?;
        if launch.stuck_blocks > 0 {
            return Ok(CopyReading {
                pattern,
                event_ms: None,
                skipped: Some(format!(
                    "{} blocks' copies never completed (the watchdog gave up)",
                    launch.stuck_blocks
                )),
            });
        }
        if i > 0 {
            ms.push(launch.ms);
        }
    }
    Ok(CopyReading {
        pattern,
        event_ms: Summary::of(&ms),
        skipped: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_search_keeps_what_an_h100_sm_holds() {
        // 233472 bytes of shared memory per SM, 232448 per block.
        let runnable: Vec<CopyPattern> = patterns()
            .into_iter()
            .filter(|p| unfit(p, 233_472, 232_448).is_none())
            .collect();
        assert_eq!(patterns().len(), 18);
        // 32 KiB x 8 = 256 KiB fits no block; 32 KiB x 6 fits one block an SM, not two.
        assert!(
            runnable
                .iter()
                .all(|p| p.stages * p.chunk_bytes <= 224 << 10)
        );
        assert!(runnable.contains(&CopyPattern {
            chunk_bytes: 32 << 10,
            stages: 6,
            blocks_per_sm: 1
        }));
        assert!(!runnable.contains(&CopyPattern {
            chunk_bytes: 32 << 10,
            stages: 6,
            blocks_per_sm: 2
        }));
        // 8 KiB: all six; 16 KiB: all but 8 buffers x 2 blocks; 32 KiB: 4 and 6 buffers, one block.
        assert_eq!(runnable.len(), 13);
        let why = unfit(
            &CopyPattern {
                chunk_bytes: 32 << 10,
                stages: 8,
                blocks_per_sm: 1,
            },
            233_472,
            232_448,
        );
        assert!(why.is_some_and(|w| w.contains("do not fit")));
    }

    #[test]
    fn the_kernel_is_built_and_takes_every_pattern() {
        let ptx = crate::kernels::module("tma").unwrap().ptx;
        assert!(ptx.contains(".entry tma_dram_copy("));
        let source = include_str!("../../../cuda/tma.cu");
        let max = launch::DRAM_COPY_MAX_STAGES;
        assert!(source.contains(&format!("#define DRAM_COPY_MAX_STAGES {max}\n")));
        // Every lag the search uses has its own wait (the instruction takes an immediate).
        for p in patterns() {
            assert!(p.stages <= max && p.lag() >= 1 && p.lag() < p.stages);
            assert!(p.lag() <= launch::DRAM_COPY_MAX_LAG);
            assert!(source.contains(&format!("cp.async.bulk.wait_group.read {};", p.lag())));
        }
    }

    #[test]
    fn half_the_buffers_wait_on_stores() {
        assert_eq!(
            patterns().iter().map(|p| p.lag()).collect::<Vec<_>>()[..6],
            [2, 2, 3, 3, 4, 4]
        );
    }
}
