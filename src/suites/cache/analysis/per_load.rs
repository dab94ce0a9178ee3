//! Per-load latencies (fine-grained chase) summarised per footprint: the median, and the share
//! of loads slower than 1.5 × the smallest footprint's median, i.e. that missed the fastest
//! level. A share between 0 and 1 at one footprint is what an average hides: some loads hit,
//! some miss (partial overflow, non-LRU replacement, or the fixed-stride chain's pattern).
//!
//! Where the loads of a footprint fall into two latencies by address block ([`block_modes`]),
//! that is stated too: on an H100 past half the L2, whole 4 KiB blocks (the L2 partitions'
//! home blocks, the cache suite's `l2_partitions`) hit in the other partition while the rest go to DRAM.

use serde::{Deserialize, Serialize};

use crate::analysis::stats;
use crate::analysis::two_latencies;

/// One footprint's individually timed loads (`cache.json`'s `per_load`; fields in the order
/// the file has them).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FootprintLoads {
    /// Two latencies by aligned address block, where the loads show them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub block_modes: Option<BlockModes>,
    pub footprint_bytes: u64,
    pub loads: usize,
    pub max_cycles: f64,
    pub median_cycles: f64,
    pub min_cycles: f64,
    /// Loads above `slow_threshold_cycles`.
    pub slow_fraction: f64,
    pub slow_threshold_cycles: f64,
}

/// A footprint's loads in two latencies, each aligned block of `block_bytes` on one side.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct BlockModes {
    pub block_bytes: u64,
    /// Median of the loads in the fast blocks and in the slow ones.
    pub fast_cycles: f64,
    pub slow_cycles: f64,
    /// Share of the blocks on the slow side.
    pub slow_share: f64,
}

/// The largest aligned block size (a power of two times `stride_bytes`, from two loads a block
/// up to an eighth of the loads; small blocks' medians are noisy, so every size is tried) at
/// which [`modes_at`] finds two latencies. `loads`: (byte address, cycles) in any order.
pub fn block_modes(loads: &[(u64, f64)], stride_bytes: u64) -> Option<BlockModes> {
    let stride = stride_bytes.max(1);
    std::iter::successors(Some(2 * stride), |b| Some(b * 2))
        .take_while(|&block| block * 8 <= loads.len() as u64 * stride)
        .filter_map(|block| modes_at(loads, block))
        .last()
}

/// The loads in aligned blocks of `block` bytes, where the blocks' median latencies fall into
/// two groups that stand apart (`two_latencies::split`, each group a tenth of the blocks or
/// more) and the blocks hold one class each (`two_latencies::blocks_hold_one_class`).
fn modes_at(loads: &[(u64, f64)], block: u64) -> Option<BlockModes> {
    let mut blocks: std::collections::BTreeMap<u64, Vec<f64>> = Default::default();
    for &(address, cycles) in loads {
        blocks.entry(address / block).or_default().push(cycles);
    }
    let blocks: Vec<Vec<f64>> = blocks.into_values().filter(|b| b.len() >= 2).collect();
    let medians: Vec<f64> = blocks.iter().filter_map(|b| stats::median(b)).collect();
    let split = two_latencies::split(&medians, 20.0, 0.1)?;
    let slow_blocks = medians.iter().filter(|&&m| m > split.threshold).count();
    let enough_fast = (medians.len() - slow_blocks) as f64 >= 0.1 * medians.len() as f64;
    let classes: Vec<(u64, bool)> = loads
        .iter()
        .map(|&(address, cycles)| (address, cycles > split.threshold))
        .collect();
    if !(split.apart && enough_fast && two_latencies::blocks_hold_one_class(&classes, block)) {
        return None;
    }
    let side = |slow: bool| -> Vec<f64> {
        blocks
            .iter()
            .zip(&medians)
            .filter(|&(_, &m)| (m > split.threshold) == slow)
            .flat_map(|(b, _)| b.iter().copied())
            .collect()
    };
    Some(BlockModes {
        block_bytes: block,
        fast_cycles: stats::median(&side(false)).unwrap_or(f64::NAN),
        slow_cycles: stats::median(&side(true)).unwrap_or(f64::NAN),
        slow_share: slow_blocks as f64 / medians.len() as f64,
    })
}

/// `samples`: (footprint, byte address, cycles) of every load, any order; the chase's stride.
pub fn summarise(samples: &[(u64, u64, f64)], stride_bytes: u64) -> Vec<FootprintLoads> {
    let mut footprints: Vec<u64> = samples.iter().map(|&(f, _, _)| f).collect();
    footprints.sort_unstable();
    footprints.dedup();
    // (address, cycles) of one footprint's loads.
    let of = |footprint: u64| -> Vec<(u64, f64)> {
        samples
            .iter()
            .filter(|&&(f, _, _)| f == footprint)
            .map(|&(_, a, c)| (a, c))
            .collect()
    };
    let Some(&smallest) = footprints.first() else {
        return Vec::new();
    };
    let cycles_of = |loads: &[(u64, f64)]| -> Vec<f64> { loads.iter().map(|l| l.1).collect() };
    let threshold = 1.5 * stats::median(&cycles_of(&of(smallest))).unwrap_or(0.0);
    footprints
        .into_iter()
        .map(|footprint| {
            let loads = of(footprint);
            let cycles = cycles_of(&loads);
            let slow = cycles.iter().filter(|&&c| c > threshold).count();
            FootprintLoads {
                footprint_bytes: footprint,
                loads: cycles.len(),
                median_cycles: stats::median(&cycles).unwrap_or(f64::NAN),
                min_cycles: cycles.iter().copied().fold(f64::INFINITY, f64::min),
                max_cycles: cycles.iter().copied().fold(f64::NEG_INFINITY, f64::max),
                slow_fraction: slow as f64 / cycles.len() as f64,
                slow_threshold_cycles: threshold,
                block_modes: block_modes(&loads, stride_bytes),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hits_and_misses_are_counted_per_footprint() {
        let mut samples = vec![];
        samples.extend((0..100).map(|i| (1024, 8 * i, 40.0 + (i % 3) as f64)));
        // At 4 KiB a quarter of the loads miss.
        samples.extend((0..100).map(|i| (4096, 8 * i, if i % 4 == 0 { 300.0 } else { 41.0 })));
        let summary = summarise(&samples, 8);
        assert_eq!(summary.len(), 2);
        assert_eq!(summary[0].slow_fraction, 0.0);
        assert_eq!(summary[0].median_cycles, 41.0);
        assert_eq!(summary[1].slow_fraction, 0.25);
        assert_eq!(summary[1].max_cycles, 300.0);
        assert_eq!(summary[1].slow_threshold_cycles, 61.5);
        // One miss every four loads is no block pattern.
        assert_eq!(summary[1].block_modes, None);
    }

    /// The committed H100 per-load chase (`results/h100/l2-partitions/per-load/loads.csv`):
    /// up to 16 MiB every load hits; at 32 MiB whole 4 KiB blocks hit across the L2 while the
    /// others go to DRAM, half and half.
    #[test]
    fn the_h100_l2_chase_splits_by_4_kib_block_past_half_the_l2() {
        use crate::suites::cache::measure::per_load::LoadSample;
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/results/h100/l2-partitions/per-load/loads.csv"
        );
        let rows: Vec<LoadSample> = csv::Reader::from_path(path)
            .unwrap()
            .deserialize()
            .collect::<Result<_, _>>()
            .unwrap();
        // The chain's index counts 4-byte words.
        let samples: Vec<(u64, u64, f64)> = rows
            .iter()
            .map(|r| (r.footprint_bytes, 4 * r.index as u64, r.cycles as f64))
            .collect();
        let summary = summarise(&samples, rows[0].stride_bytes);
        for row in summary.iter().filter(|r| r.footprint_bytes <= 16 << 20) {
            assert_eq!(row.block_modes, None, "{row:?}");
        }
        let at_32 = summary
            .iter()
            .find(|r| r.footprint_bytes == 32 << 20)
            .unwrap()
            .block_modes
            .unwrap();
        assert_eq!(at_32.block_bytes, 4096, "{at_32:?}");
        assert!((at_32.slow_share - 0.5).abs() < 0.05, "{at_32:?}");
        assert!(
            at_32.fast_cycles > 450.0 && at_32.fast_cycles < 525.0,
            "{at_32:?}"
        );
        assert!(
            at_32.slow_cycles > 525.0 && at_32.slow_cycles < 650.0,
            "{at_32:?}"
        );
    }
}
