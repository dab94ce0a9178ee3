//! Two latencies in one set of timings: a fast and a slow group (two-means), whether they
//! stand apart, and over which aligned address blocks the class of an access stays the same.
//! Used by the L2 partition experiment (a line homed near or across) and the per-load chase (a
//! hit on one side or a miss behind it).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::stats;

/// The empty stretch between the fast group's 95th and the slow group's 5th percentile must be
/// at least this share of the wider group's 5-95 % width. Two-means cuts any one-peaked
/// distribution into two groups that touch (a stretch of a tenth of their width or less);
/// two latencies leave a gap (an H100's L2 partitions: 103 cycles against widths of 57 and 77).
pub const SEPARATION: f64 = 0.5;

/// Median with the 5th and 95th percentiles (the L2 partition experiment keeps them in
/// `cache.json`).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Spread {
    pub median: f64,
    pub p5: f64,
    pub p95: f64,
    pub n: usize,
}

impl Spread {
    pub fn of(values: &[f64]) -> Option<Spread> {
        let mut sorted: Vec<f64> = values.iter().copied().filter(|v| v.is_finite()).collect();
        if sorted.is_empty() {
            return None;
        }
        sorted.sort_by(f64::total_cmp);
        let at = |q: f64| sorted[((sorted.len() - 1) as f64 * q).round() as usize];
        Some(Spread {
            median: stats::median_of_sorted(&sorted),
            p5: at(0.05),
            p95: at(0.95),
            n: sorted.len(),
        })
    }
}

/// Two-means over `values` (one dimension): the midpoint between the two groups' means once
/// they settle, or `None` for fewer than two distinct values.
pub fn two_means_threshold(values: &[f64]) -> Option<f64> {
    let low = values.iter().copied().fold(f64::INFINITY, f64::min);
    let high = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    if high.partial_cmp(&low) != Some(std::cmp::Ordering::Greater) {
        return None;
    }
    let mut threshold = (low + high) / 2.0;
    for _ in 0..100 {
        let (mut below, mut above) = ((0.0, 0usize), (0.0, 0usize));
        for &v in values {
            if v <= threshold {
                below = (below.0 + v, below.1 + 1);
            } else {
                above = (above.0 + v, above.1 + 1);
            }
        }
        if below.1 == 0 || above.1 == 0 {
            break;
        }
        let next = (below.0 / below.1 as f64 + above.0 / above.1 as f64) / 2.0;
        if (next - threshold).abs() < 1e-9 {
            break;
        }
        threshold = next;
    }
    Some(threshold)
}

/// `values` cut in two at their two-means threshold.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Split {
    pub threshold: f64,
    /// Every value where the groups do not stand apart.
    pub fast: Option<Spread>,
    pub slow: Option<Spread>,
    /// Whether the groups are two latencies: an empty stretch between them ([`SEPARATION`]),
    /// medians at least `least_gap` apart, and at least `least_share` of the values in the
    /// slow group (a few stray slow values are not a second latency).
    pub apart: bool,
}

pub fn split(values: &[f64], least_gap: f64, least_share: f64) -> Option<Split> {
    let threshold = two_means_threshold(values)?;
    let (fast, slow): (Vec<f64>, Vec<f64>) = values.iter().partition(|&&v| v <= threshold);
    let slow_spread = Spread::of(&slow);
    let apart = match (Spread::of(&fast), slow_spread) {
        (Some(f), Some(s)) => {
            let width = (f.p95 - f.p5).max(s.p95 - s.p5);
            s.median - f.median >= least_gap
                && s.p5 - f.p95 >= SEPARATION * width
                && s.n as f64 >= least_share * values.len() as f64
        }
        _ => false,
    };
    Some(Split {
        threshold,
        fast: if apart {
            Spread::of(&fast)
        } else {
            Spread::of(values)
        },
        slow: slow_spread.filter(|_| apart),
        apart,
    })
}

/// Whether at least 95 % of the aligned blocks of `block` bytes hold one class (by majority,
/// allowing a tenth of a block's accesses to differ: a TLB miss or a late line). Blocks with
/// a single access say nothing and are left out; `false` where none is left. `samples`: (byte
/// address, slow).
pub fn blocks_hold_one_class(samples: &[(u64, bool)], block: u64) -> bool {
    let mut blocks: BTreeMap<u64, (usize, usize)> = BTreeMap::new();
    for &(address, slow) in samples {
        let entry = blocks.entry(address / block).or_default();
        entry.0 += usize::from(slow);
        entry.1 += 1;
    }
    let judged: Vec<&(usize, usize)> = blocks.values().filter(|b| b.1 >= 2).collect();
    let uniform = judged
        .iter()
        .filter(|(slow, n)| (*slow).max(n - slow) as f64 >= 0.9 * *n as f64)
        .count();
    !judged.is_empty() && uniform as f64 >= 0.95 * judged.len() as f64
}

/// The largest power-of-two block of bytes, from `smallest` up to `largest`, whose blocks
/// hold one class ([`blocks_hold_one_class`]); `None` where not even blocks of `smallest` do.
pub fn uniform_block_bytes(samples: &[(u64, bool)], smallest: u64, largest: u64) -> Option<u64> {
    let mut best = None;
    let mut block = smallest.max(1);
    while block <= largest && blocks_hold_one_class(samples, block) {
        best = Some(block);
        block *= 2;
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_peak_is_not_two_latencies_and_two_are() {
        let one: Vec<f64> = (0..1000).map(|i| 300.0 + f64::from(i % 31)).collect();
        let read = split(&one, 20.0, 0.02).unwrap();
        assert!(!read.apart);
        assert_eq!(read.fast.unwrap().n, 1000);
        let two: Vec<f64> = (0..1000)
            .map(|i| if i % 2 == 0 { 300.0 } else { 470.0 } + f64::from(i % 31))
            .collect();
        let read = split(&two, 20.0, 0.02).unwrap();
        assert!(read.apart);
        assert_eq!(read.slow.unwrap().n, 500);
        assert!((read.slow.unwrap().median - 485.0).abs() < 2.0);
    }

    #[test]
    fn blocks_are_as_large_as_the_runs_of_one_class() {
        // Classes alternate every 4 KiB, one access per 128 B, one odd access in a block.
        let samples: Vec<(u64, bool)> = (0..1024u64)
            .map(|j| (j * 128, (j / 32) % 2 == 1 || j == 5))
            .collect();
        assert_eq!(uniform_block_bytes(&samples, 256, 65536), Some(4096));
        let alternating: Vec<(u64, bool)> = (0..64u64).map(|j| (j * 128, j % 2 == 1)).collect();
        assert_eq!(uniform_block_bytes(&alternating, 256, 4096), None);
    }
}
