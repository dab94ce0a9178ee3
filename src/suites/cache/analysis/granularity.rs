//! Fetch granularity from a stride sweep at a fixed footprint past a level's capacity: a cache's
//! line (or sector) size, a TLB's page size (Wong et al., "TLB"; the stride sweeps of their
//! cache section).
//!
//! With a footprint F beyond the capacity, every unit (line, page) the chase enters misses, and
//! consecutive loads within one unit share that miss. At stride s below the unit size P one
//! load in P / s misses, so cycles per load = hit + penalty × s / P: the latency rises with the
//! stride until s = P and is flat after. The unit is the first stride of that final plateau.
//! The reading is confident when the rise before it roughly doubles per doubling of the
//! stride, as the model says. A sectored cache fetches sectors, not lines: the knee is then the
//! sector size, and nothing in the curve tells the two apart.

use serde::{Deserialize, Serialize};

/// A stride sweep's knee: a fetch granularity, or a TLB's page size (`cache.json`'s
/// `fetch_granularity.estimate` and `tlb.page`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Granularity {
    pub bytes: u64,
    pub confidence: f64,
    pub notes: Vec<String>,
}

/// `points`: (stride in bytes, cycles per load), any order, strides distinct.
pub fn granularity(points: &[(u64, f64)]) -> Option<Granularity> {
    let mut points = points.to_vec();
    points.sort_by_key(|&(s, _)| s);
    if points.len() < 3 {
        return None;
    }
    let (_, low) = points[0];
    let high = points.iter().map(|&(_, y)| y).fold(f64::MIN, f64::max);
    let rise = high - low;
    if rise <= 0.0 {
        return None;
    }
    // The knee: the first stride within 10 % of the rise of the highest latency; the plateau
    // runs on from it while the points stay there. A curve that falls before the knee is not
    // the model's rise (on the H100, L2 misses at the smallest strides are one such confound):
    // nothing is read from it. A fall after the plateau is expected: at a fixed footprint, strides
    // past the unit leave fewer units than the level holds, so they hit again.
    let tolerance = 0.1 * rise;
    let first = points.iter().position(|&(_, y)| high - y <= tolerance)?;
    if first == 0 {
        return None; // flat or falling from the start: the strides never went below the unit.
    }
    if points[..=first]
        .windows(2)
        .any(|w| w[0].1 - w[1].1 > tolerance)
    {
        return None;
    }
    let mut end = first;
    while end + 1 < points.len() && (high - points[end + 1].1).abs() <= tolerance {
        end += 1;
    }
    let mut notes = Vec::new();
    let mut confidence: f64 = 1.0;
    if end == first {
        confidence *= 0.5;
        notes.push("only one stride is on the plateau: the unit may be larger".into());
    }
    if end + 1 < points.len() {
        notes.push(format!(
            "strides from {} B on fall back (too few units left at this footprint to miss); ignored",
            points[end + 1].0
        ));
    }
    // Below the unit, latency above the first point should about double per stride doubling.
    let excess: Vec<f64> = points[..first].iter().map(|&(_, y)| y - low).collect();
    let below = &points[..=first];
    let mut ratios = Vec::new();
    for pair in below.windows(2).skip(1) {
        let (a, b) = (pair[0].1 - low, pair[1].1 - low);
        let stride_ratio = pair[1].0 as f64 / pair[0].0 as f64;
        if a > 0.05 * rise {
            ratios.push((b / a) / stride_ratio);
        }
    }
    if ratios.iter().any(|r| !(0.6..=1.6).contains(r)) {
        confidence *= 0.6;
        notes.push(
            "the rise below the knee is not proportional to the stride (several unit sizes, or a second level)".into(),
        );
    }
    if excess.len() < 2 {
        confidence *= 0.7;
        notes.push("fewer than two strides below the knee".into());
    }
    Some(Granularity {
        bytes: points[first].0,
        confidence,
        notes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn model(page: u64, hit: f64, penalty: f64, strides: &[u64]) -> Vec<(u64, f64)> {
        strides
            .iter()
            .map(|&s| (s, hit + penalty * (s as f64 / page as f64).min(1.0)))
            .collect()
    }

    fn doublings(from: u64, count: u32) -> Vec<u64> {
        (0..count).map(|k| from << k).collect()
    }

    #[test]
    fn a_two_mib_page_is_read_from_a_stride_sweep() {
        let points = model(2 << 20, 300.0, 400.0, &doublings(4 << 10, 12));
        let page = granularity(&points).unwrap();
        assert_eq!(page.bytes, 2 << 20);
        assert_eq!(page.confidence, 1.0, "{:?}", page.notes);
    }

    #[test]
    fn a_flat_sweep_gives_no_page() {
        let points = model(4 << 10, 300.0, 400.0, &doublings(64 << 10, 6));
        assert_eq!(granularity(&points), None);
    }

    #[test]
    fn the_h100_l1_stride_sweep_reads_32_byte_sectors() {
        // results/h100/cache/global/strides.csv at 445 440 B: the widest stride leaves 1740
        // lines, which fit the L1 again.
        let points = [
            (4, 69.9),
            (8, 100.3),
            (16, 161.1),
            (32, 281.9),
            (64, 281.9),
            (128, 281.9),
            (256, 43.5),
        ];
        let found = granularity(&points).unwrap();
        assert_eq!(found.bytes, 32);
        assert_eq!(found.confidence, 1.0);
        assert!(
            found
                .notes
                .iter()
                .any(|n| n.contains("from 256 B on fall back")),
            "{:?}",
            found.notes
        );
    }

    #[test]
    fn a_curve_that_falls_gives_no_page() {
        // L2 misses at the smallest strides, then a bump: not a rise to a plateau.
        let points = [
            (4096, 505.0),
            (8192, 304.0),
            (16384, 294.7),
            (32768, 294.7),
            (65536, 307.0),
            (131072, 296.0),
        ];
        assert_eq!(granularity(&points), None);
    }

    #[test]
    fn a_page_at_the_largest_stride_is_only_a_lower_bound() {
        let points = model(1 << 20, 300.0, 400.0, &doublings(4 << 10, 9));
        let page = granularity(&points).unwrap();
        assert_eq!(page.bytes, 1 << 20);
        assert!(page.confidence <= 0.5);
    }

    proptest! {
        // Each case of the first simulates a chase of up to half a megabyte: 48 keep the
        // property checked at a few seconds of a debug build's test run.
        #![proptest_config(ProptestConfig::with_cases(48))]
        /// A simulated LRU cache chased at twice its size: the knee of the stride sweep is its
        /// line size. Strides leave at least 32 elements, more than the ways of a set: with
        /// fewer, large power-of-two strides fall into one set and fit (the curve drops).
        #[test]
        fn a_simulated_caches_line_is_the_knee(
            line_log in 5_u32..=7,
            sets_log in 4_u32..=7,
            ways in 8_u64..=16,
            hit in 20.0_f64..60.0,
            extra in 100.0_f64..500.0,
        ) {
            use crate::analysis::cache_model::{Geometry, Hierarchy, chase_latency};
            let line = 1_u64 << line_log;
            let geometry = Geometry::new((1 << sets_log) * ways * line, line, ways);
            let hierarchy = Hierarchy::one_level(geometry, hit, hit + extra);
            let footprint = 2 * geometry.size_bytes;
            let points: Vec<(u64, f64)> = (0..8)
                .map(|k| 4_u64 << k)
                .filter(|&s| footprint / s >= 32)
                .map(|s| (s, chase_latency(&hierarchy, footprint, s)))
                .collect();
            let found = granularity(&points);
            prop_assert_eq!(found.map(|g| g.bytes), Some(line), "{:?}", points);
        }

        #[test]
        fn pages_are_found_exactly_under_noise(
            page_log in 14_u32..22,
            hit in 100.0_f64..600.0,
            penalty in 100.0_f64..1000.0,
            noise in 0.0_f64..0.02,
            seed in any::<u64>(),
        ) {
            use rand::{RngExt, SeedableRng, rngs::StdRng};
            let mut rng = StdRng::seed_from_u64(seed);
            let page = 1_u64 << page_log;
            let mut points = model(page, hit, penalty, &doublings(4 << 10, 14));
            for p in &mut points {
                p.1 += penalty * noise * (rng.random::<f64>() - 0.5);
            }
            let estimate = granularity(&points).unwrap();
            prop_assert_eq!(estimate.bytes, page);
            prop_assert!(estimate.confidence > 0.5);
        }
    }
}
