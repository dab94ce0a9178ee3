//! Per-load latencies (fine-grained chase) summarised per footprint: the median, and the share
//! of loads slower than 1.5 × the smallest footprint's median, i.e. that missed the fastest
//! level. A share between 0 and 1 at one footprint is what an average hides: some loads hit,
//! some miss (partial overflow, non-LRU replacement, or the fixed-stride chain's pattern).

use serde::Serialize;

use super::stats;

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FootprintLoads {
    pub footprint_bytes: u64,
    pub loads: usize,
    pub median_cycles: f64,
    pub min_cycles: f64,
    pub max_cycles: f64,
    /// Loads above `slow_threshold_cycles`.
    pub slow_fraction: f64,
    pub slow_threshold_cycles: f64,
}

/// `samples`: (footprint, cycles) of every load, any order.
pub fn summarise(samples: &[(u64, f64)]) -> Vec<FootprintLoads> {
    let mut footprints: Vec<u64> = samples.iter().map(|&(f, _)| f).collect();
    footprints.sort_unstable();
    footprints.dedup();
    let of = |footprint: u64| -> Vec<f64> {
        samples
            .iter()
            .filter(|&&(f, _)| f == footprint)
            .map(|&(_, c)| c)
            .collect()
    };
    let Some(&smallest) = footprints.first() else {
        return Vec::new();
    };
    let threshold = 1.5 * stats::median(&of(smallest)).unwrap_or(0.0);
    footprints
        .into_iter()
        .map(|footprint| {
            let cycles = of(footprint);
            let slow = cycles.iter().filter(|&&c| c > threshold).count();
            FootprintLoads {
                footprint_bytes: footprint,
                loads: cycles.len(),
                median_cycles: stats::median(&cycles).unwrap_or(f64::NAN),
                min_cycles: cycles.iter().copied().fold(f64::INFINITY, f64::min),
                max_cycles: cycles.iter().copied().fold(f64::NEG_INFINITY, f64::max),
                slow_fraction: slow as f64 / cycles.len() as f64,
                slow_threshold_cycles: threshold,
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
        samples.extend((0..100).map(|i| (1024, 40.0 + (i % 3) as f64)));
        // At 4 KiB a quarter of the loads miss.
        samples.extend((0..100).map(|i| (4096, if i % 4 == 0 { 300.0 } else { 41.0 })));
        let summary = summarise(&samples);
        assert_eq!(summary.len(), 2);
        assert_eq!(summary[0].slow_fraction, 0.0);
        assert_eq!(summary[0].median_cycles, 41.0);
        assert_eq!(summary[1].slow_fraction, 0.25);
        assert_eq!(summary[1].max_cycles, 300.0);
        assert_eq!(summary[1].slow_threshold_cycles, 61.5);
    }
}
