//! Distributed shared memory from the `dsm` suite's stamps: cycles per load of a chase into each
//! block of a cluster against a chase in local shared memory, whether the remote latency grows
//! with the cluster size (a least-squares line with its 95 % interval), and bytes per clock of
//! the read patterns per SM and over the GPU.

use serde::Serialize;

use crate::analysis::linear_fit::{self, Interval};
use crate::analysis::stats::{Summary, per_clock_of_blocks};

/// One cluster size's chase: into the other blocks (median and range over ranks 1..n), into
/// block 0's own memory through the cluster window, and through plain ld.shared.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ClusterLatency {
    pub cluster: u32,
    pub remote: Summary,
    pub own_through_window: f64,
    pub local: f64,
    /// Every block of the cluster ran on an SM of its own (from their %smid).
    pub distinct_sms: bool,
}

/// `cycles` holds the timed cycles of the chase into each rank, then the local chase; `smids`
/// the SM each rank ran on. `None` for a cluster of one block or missing cycles.
pub fn cluster_latency(cycles: &[i64], smids: &[u32], steps: u32) -> Option<ClusterLatency> {
    let n = smids.len();
    if n < 2 || cycles.len() < n + 1 || steps == 0 {
        return None;
    }
    let per_load = |c: i64| (c > 0).then(|| c as f64 / f64::from(steps));
    let remote: Option<Vec<f64>> = cycles[1..n].iter().map(|&c| per_load(c)).collect();
    let mut seen = smids.to_vec();
    seen.sort_unstable();
    seen.dedup();
    Some(ClusterLatency {
        cluster: n as u32,
        remote: Summary::of(&remote?)?,
        own_through_window: per_load(cycles[0])?,
        local: per_load(cycles[n])?,
        distinct_sms: seen.len() == n,
    })
}

/// Cycles a remote load gains per block of cluster size: the slope of the median remote
/// latency against the size over `(cluster size, median cycles)`, with its 95 % interval
/// (`None` below three sizes).
pub fn growth_per_block(medians: &[(u32, f64)]) -> Option<Interval> {
    let x: Vec<f64> = medians.iter().map(|&(size, _)| f64::from(size)).collect();
    let y: Vec<f64> = medians.iter().map(|&(_, cycles)| cycles).collect();
    linear_fit::fit(&x, &y).map(|f| f.slope)
}

/// Bytes per clock of a read pattern: per block (on its own SM; median and range) and summed
/// over the blocks, which all ran at once (the grid held no more clusters than fit).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PatternRate {
    pub per_sm: Summary,
    pub gpu_bytes_per_clock: f64,
}

pub fn pattern_rate(stamps: &[i64], bytes_per_block: f64) -> Option<PatternRate> {
    let rates = per_clock_of_blocks(stamps, bytes_per_block)?;
    Some(PatternRate {
        per_sm: Summary::of(&rates)?,
        gpu_bytes_per_clock: rates.iter().sum(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cluster_chase_gives_remote_own_and_local_cycles_per_load() {
        // Four blocks on four SMs: own 190, remote 200/210/220, local 30 cycles per load.
        let steps = 1000;
        let cycles = [190_000, 200_000, 210_000, 220_000, 30_000];
        let l = cluster_latency(&cycles, &[0, 2, 4, 6], steps).unwrap();
        assert_eq!(l.cluster, 4);
        assert_eq!(l.remote.median, 210.0);
        assert_eq!((l.remote.min, l.remote.max), (200.0, 220.0));
        assert_eq!((l.own_through_window, l.local), (190.0, 30.0));
        assert!(l.distinct_sms);
        // Two blocks on one SM are seen; a missing chase spoils the size.
        assert!(
            !cluster_latency(&cycles, &[0, 2, 2, 6], steps)
                .unwrap()
                .distinct_sms
        );
        assert!(cluster_latency(&[190_000, 0, 1, 1, 1], &[0, 1, 2, 3], steps).is_none());
        assert!(cluster_latency(&cycles[..1], &[0], steps).is_none());
    }

    #[test]
    fn the_growth_with_cluster_size_is_the_slope_of_the_medians() {
        // A simulated network: 180 cycles plus 2 per block of cluster size.
        let sizes: Vec<(u32, f64)> = (2..=16)
            .map(|n: u32| {
                let mut cycles: Vec<i64> = (0..n).map(|_| (180 + 2 * n as i64) * 100).collect();
                cycles.push(3300);
                let smids: Vec<u32> = (0..n).collect();
                let l = cluster_latency(&cycles, &smids, 100).unwrap();
                (l.cluster, l.remote.median)
            })
            .collect();
        let slope = growth_per_block(&sizes).unwrap();
        assert!((slope.estimate - 2.0).abs() < 1e-9);
        assert!(slope.ci95_low <= 2.0 && 2.0 <= slope.ci95_high);
        assert!(growth_per_block(&sizes[..2]).is_none());
    }

    #[test]
    fn pattern_rates_are_per_block_and_summed() {
        let stamps = [0, 1000, 10, 1010, 0, 2000];
        let r = pattern_rate(&stamps, 64_000.0).unwrap();
        assert_eq!(r.per_sm.median, 64.0);
        assert_eq!(r.per_sm.min, 32.0);
        assert_eq!(r.gpu_bytes_per_clock, 160.0);
        assert!(pattern_rate(&[0, 1000, 5, 5], 64_000.0).is_none());
    }
}
