//! The L2 read by the TMA's bulk copies (issue #32, item 1: the highest rate the L2 delivers,
//! with the pattern that reaches it). Hopper's non-tensor `cp.async.bulk` moves a whole slice
//! of global memory into shared memory per instruction, so one thread per block keeps many
//! kilobytes in flight without any load instruction of the SM's own.
//!
//! Method. A region a quarter of the L2's size (12.5 MiB on an H100: it stays in the L2),
//! each word holding its own index, is read `passes` times per launch by `tma_l2_read`
//! (cuda/tma.cu): thread 0 of every block copies slices of 4, 16 or 32 KiB into 2-12 shared
//! buffers, each completing on its own mbarrier, with 1-8 blocks per SM. Two patterns: lines
//! private to one block (each slice copied by one block per pass, the bandwidth suite's `l2
//! read` pattern, what a streaming kernel sees) and lines shared by every SM (every block
//! copies every slice, each from its own first slice on). Every launch checks that each
//! buffer holds the first and last word of the slice copied last into it (a pattern that fails
//! is listed without a rate, with the reason). Every pattern whose buffers fit an SM is
//! searched (launches calibrated to run at least 3 ms, 1 ms in `all --quick`: `tma
//! --search-ms`; two timed); the fastest of each kind of line is then timed again over five
//! launches of at least 8 ms each (the search's maximum would otherwise be the luckiest of
//! many), and that is the figure.
//! Rates are bytes copied into shared memory over the GPU time between events around a launch.

use anyhow::{Result, bail};
use serde::Serialize;

use crate::analysis::stats::Summary;
use crate::experiments::launch_size::{calibrated_passes, shared_fits};
use crate::gpu::Gpu;
use super::launch::{self, L2ReadShape};

/// Slice sizes, copies in flight per block and blocks per SM searched (every combination whose
/// buffers fit; scripts/l2-bulk-read-probe.cu searched the same on an H100).
pub const SLICE_KIB: [u32; 3] = [4, 16, 32];
pub const STAGES: [u32; 4] = [2, 4, 8, 12];
pub const BLOCKS_PER_SM: [u32; 4] = [1, 2, 4, 8];
/// cuda/tma.cu's L2_READ_MAX_STAGES.
pub const MAX_STAGES: u32 = 16;
const _: () = assert!(STAGES[STAGES.len() - 1] <= MAX_STAGES);

const SEARCH_LAUNCHES: usize = 2;
pub const HEADLINE_SECONDS: f64 = 0.008;
pub const HEADLINE_LAUNCHES: usize = 5;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Lines {
    /// Each slice copied by one block per pass.
    Private,
    /// Every block copies every slice.
    Shared,
}

impl Lines {
    pub const ALL: [Lines; 2] = [Lines::Private, Lines::Shared];

    pub fn name(self) -> &'static str {
        match self {
            Lines::Private => "private",
            Lines::Shared => "shared",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Pattern {
    pub lines: Lines,
    pub slice_bytes: u32,
    pub stages: u32,
    pub blocks_per_sm: u32,
}

/// One pattern as measured: the launches' passes and bytes, the GPU milliseconds of each timed
/// launch (median and range), or why it did not run or was not counted.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Reading {
    pub pattern: Pattern,
    pub passes: u32,
    pub bytes_per_launch: f64,
    pub event_ms: Option<Summary>,
    pub skipped: Option<String>,
}

impl Reading {
    /// Bytes per second of the median launch.
    pub fn median_rate(&self) -> Option<f64> {
        self.event_ms
            .map(|ms| self.bytes_per_launch / (ms.median * 1e-3))
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct L2BulkRead {
    pub footprint_bytes: u64,
    pub search: Vec<Reading>,
    /// The fastest pattern of each kind of line, timed again: the figures.
    pub best: Vec<Reading>,
}

/// What an SM offers the blocks (bytes of shared memory per SM and per block, at most).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SmLimits {
    pub multiprocessors: u32,
    pub shared_per_sm: u32,
    pub shared_per_block: u32,
    pub max_blocks_per_sm: u32,
}

/// The region read: a quarter of the L2, in whole 32 KiB slices (at least one).
pub fn footprint(l2_bytes: u64) -> u64 {
    let largest = u64::from(SLICE_KIB[SLICE_KIB.len() - 1]) << 10;
    (l2_bytes / 4 / largest).max(1) * largest
}

/// Every pattern of the search, in order.
pub fn patterns() -> Vec<Pattern> {
    let mut out = Vec::new();
    for lines in Lines::ALL {
        for kib in SLICE_KIB {
            for stages in STAGES {
                for blocks_per_sm in BLOCKS_PER_SM {
                    out.push(Pattern {
                        lines,
                        slice_bytes: kib << 10,
                        stages,
                        blocks_per_sm,
                    });
                }
            }
        }
    }
    out
}

/// Why `pattern` cannot run on an SM of `limits` over `footprint` bytes, if it cannot.
pub fn unfit(pattern: &Pattern, limits: &SmLimits, footprint: u64) -> Option<String> {
    let Pattern {
        slice_bytes,
        stages,
        blocks_per_sm,
        ..
    } = *pattern;
    let buffers = u64::from(stages) * u64::from(slice_bytes);
    if !shared_fits(
        blocks_per_sm,
        buffers,
        u64::from(limits.shared_per_sm),
        u64::from(limits.shared_per_block),
    ) {
        return Some(format!(
            "{blocks_per_sm} x {stages} buffers of {slice_bytes} bytes do not fit an SM's {} bytes of shared memory",
            limits.shared_per_sm
        ));
    }
    if blocks_per_sm > limits.max_blocks_per_sm {
        return Some(format!(
            "an SM holds at most {} blocks",
            limits.max_blocks_per_sm
        ));
    }
    let slices = footprint / u64::from(slice_bytes);
    let blocks = u64::from(limits.multiprocessors) * u64::from(blocks_per_sm);
    if pattern.lines == Lines::Private && slices < blocks {
        return Some(format!(
            "{slices} slices leave some of the {blocks} blocks without a private one"
        ));
    }
    None
}

/// Bytes one launch copies: private lines, each slice once per pass; shared, every block
/// every slice.
pub fn bytes_per_launch(pattern: &Pattern, blocks: u32, slices: u32, passes: u32) -> f64 {
    let per_pass = f64::from(slices) * f64::from(pattern.slice_bytes);
    let readers = match pattern.lines {
        Lines::Private => 1.0,
        Lines::Shared => f64::from(blocks),
    };
    per_pass * readers * f64::from(passes)
}

/// The search and the re-timed best of each kind of line, over a region of `footprint` bytes.
/// Every pattern searched with launches of at least `search_seconds`, then the fastest of
/// each kind of line timed for the figure.
pub fn measure(
    gpu: &mut Gpu,
    limits: SmLimits,
    footprint: u64,
    search_seconds: f64,
) -> Result<L2BulkRead> {
    let words: Vec<u32> = (0..(footprint / 4) as u32).collect();
    let data = launch::l2_read_region(gpu, &words)?;
    let mut search = Vec::new();
    for pattern in patterns() {
        search.push(match unfit(&pattern, &limits, footprint) {
            Some(why) => Reading {
                pattern,
                passes: 0,
                bytes_per_launch: 0.0,
                event_ms: None,
                skipped: Some(why),
            },
            None => read(
                gpu,
                &data,
                &limits,
                footprint,
                pattern,
                search_seconds,
                SEARCH_LAUNCHES,
            )?,
        });
    }
    let mut best = Vec::new();
    for lines in Lines::ALL {
        let fastest = search
            .iter()
            .filter(|r| r.pattern.lines == lines)
            .filter_map(|r| Some((r.median_rate()?, r.pattern)))
            .max_by(|a, b| a.0.total_cmp(&b.0));
        if let Some((_, pattern)) = fastest {
            best.push(read(
                gpu,
                &data,
                &limits,
                footprint,
                pattern,
                HEADLINE_SECONDS,
                HEADLINE_LAUNCHES,
            )?);
        }
    }
    Ok(L2BulkRead {
        footprint_bytes: footprint,
        search,
        best,
    })
}

/// `pattern` calibrated to launches of at least `min_seconds`, then `launches` timed.
fn read(
    gpu: &mut Gpu,
    data: &cudarc::driver::CudaSlice<u32>,
    limits: &SmLimits,
    footprint: u64,
    pattern: Pattern,
    min_seconds: f64,
    launches: usize,
) -> Result<Reading> {
    let blocks = limits.multiprocessors * pattern.blocks_per_sm;
    let slices = (footprint / u64::from(pattern.slice_bytes)) as u32;
    let mut shape = L2ReadShape {
        blocks,
        slice_bytes: pattern.slice_bytes,
        slices,
        passes: 1,
        stages: pattern.stages,
        shared_lines: pattern.lines == Lines::Shared,
    };
    // Wrong data in a buffer leaves this pattern without a rate (and the run goes on, its
    // other results kept); copies that never complete mean a device in trouble, and stop it.
    let mut stale = 0_u32;
    let mut once = |gpu: &mut Gpu, shape: L2ReadShape| -> Result<f64> {
        let out = launch::tma_l2_read(gpu, data, shape)?;
        if out.stuck_blocks > 0 {
            bail!(
                "{} blocks' bulk copies of {} bytes never completed (the kernel's watchdog gave up)",
                out.stuck_blocks,
                shape.slice_bytes
            );
        }
        stale += out.stale_buffers;
        if out.ms.is_nan() || out.ms <= 0.0 {
            bail!("a tma_l2_read launch reported no GPU time");
        }
        Ok(out.ms * 1e-3)
    };
    shape.passes = calibrated_passes(min_seconds, 1e6, |passes| {
        once(gpu, L2ReadShape { passes, ..shape })
    })?;
    let mut ms = Vec::with_capacity(launches);
    for _ in 0..launches {
        ms.push(once(gpu, shape)? * 1e3);
    }
    let wrong = (stale > 0).then(|| {
        format!(
            "not counted: {stale} shared buffers did not hold the slice last copied into them (the copies delivered wrong data)"
        )
    });
    Ok(Reading {
        pattern,
        passes: shape.passes,
        bytes_per_launch: bytes_per_launch(&pattern, blocks, slices, shape.passes),
        event_ms: if wrong.is_some() {
            None
        } else {
            Summary::of(&ms)
        },
        skipped: wrong,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const H100: SmLimits = SmLimits {
        multiprocessors: 132,
        shared_per_sm: 233_472,
        shared_per_block: 232_448,
        max_blocks_per_sm: 32,
    };

    #[test]
    fn the_region_is_a_quarter_of_the_l2_in_whole_largest_slices() {
        assert_eq!(footprint(50 << 20), 12_800 << 10);
        assert_eq!(footprint(60 << 20), 15 << 20);
        assert_eq!(footprint(1 << 10), 32 << 10);
        assert_eq!(footprint(50 << 20) % (32 << 10), 0);
    }

    #[test]
    fn the_patterns_that_fit_an_h100_are_those_the_probe_ran() {
        let f = footprint(50 << 20);
        let fits: Vec<Pattern> = patterns()
            .into_iter()
            .filter(|p| unfit(p, &H100, f).is_none())
            .collect();
        // The probe's 24 configurations per kind of line (scripts/l2-bulk-read-probe.cu).
        assert_eq!(fits.len(), 48);
        let has = |lines, kib: u32, stages, blocks_per_sm| {
            fits.contains(&Pattern {
                lines,
                slice_bytes: kib << 10,
                stages,
                blocks_per_sm,
            })
        };
        assert!(has(Lines::Shared, 4, 8, 4));
        assert!(has(Lines::Shared, 16, 12, 1));
        assert!(!has(Lines::Shared, 16, 12, 2));
        assert!(!has(Lines::Private, 32, 8, 1));
        // 12 x 16 KiB = 192 KiB fits one block; 8 blocks of 4 x 4 KiB each with the reserve fit.
        assert!(has(Lines::Private, 4, 4, 8));
    }

    #[test]
    fn private_lines_need_a_slice_for_every_block() {
        let small = 64 << 10;
        let p = Pattern {
            lines: Lines::Private,
            slice_bytes: 4 << 10,
            stages: 2,
            blocks_per_sm: 1,
        };
        assert!(
            unfit(&p, &H100, small)
                .unwrap()
                .contains("without a private one")
        );
        let shared = Pattern {
            lines: Lines::Shared,
            ..p
        };
        assert_eq!(unfit(&shared, &H100, small), None);
    }

    #[test]
    fn shared_lines_count_every_blocks_copy() {
        let p = Pattern {
            lines: Lines::Shared,
            slice_bytes: 4096,
            stages: 8,
            blocks_per_sm: 4,
        };
        assert_eq!(
            bytes_per_launch(&p, 528, 3200, 20),
            4096.0 * 3200.0 * 528.0 * 20.0
        );
        let private = Pattern {
            lines: Lines::Private,
            ..p
        };
        assert_eq!(
            bytes_per_launch(&private, 528, 3200, 20),
            4096.0 * 3200.0 * 20.0
        );
    }

    #[test]
    fn the_kernel_is_built_and_its_stage_limit_is_the_hosts() {
        let ptx = crate::kernels::module("tma").unwrap().ptx;
        assert!(ptx.contains(".entry tma_l2_read("));
        let source = include_str!("../../../cuda/tma.cu");
        assert!(source.contains(&format!("#define L2_READ_MAX_STAGES {MAX_STAGES}\n")));
    }
}
