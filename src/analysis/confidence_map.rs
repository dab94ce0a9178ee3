//! What a cache level's confidence means: the share of right answers, among the calibration
//! study's simulated caches (`analysis::calibration`, `gpubench calibrate`), that were read on
//! the same basis with a raw confidence in the same bin. The table below is written by
//! `gpubench calibrate` (its `confidence_map.rs.txt`) from a study with a seed of its own; the
//! committed reliability diagram checks it on a study with another seed.

/// Upper edges of the raw-confidence bins (the last bin ends at 1 inclusive).
pub const EDGES: [f64; 12] = [
    0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.99, 0.999, 1.0,
];

/// The bin of a raw confidence.
pub fn bin(raw: f64) -> usize {
    EDGES
        .iter()
        .position(|&edge| raw < edge)
        .unwrap_or(EDGES.len() - 1)
}

/// Per basis, the calibrated confidence of each raw bin.
/// From `gpubench calibrate --seed 1`, 20 000 cases run as two shards of 10 000 on the H100
/// host's 16 cores (416 and 443 s) and joined by `--merge` (`results/calibration/table-seed1`);
/// each case read twice: the ascending chase alone, and with the descending one (the bases
/// ending "both directions"). At a raw weight of 0.999 or more, an answer from both directions
/// was right 99.2 % of the time, from the ascending chase alone 94.9 % (its prefetching
/// caches' line is its twin's); a revealed prefetcher's size, from a fit among prefetching
/// caches, 99.0 %, and 62 % where none of those fits (random replacement) and a plain
/// cache's size stands. The table is the share right of the study's mixture, so it depends on
/// that mixture (see `analysis::calibration::draw`).
pub const TABLE: &[(&str, [f64; 12])] = &[
    (
        "fit",
        [
            0.341, 0.341, 0.401, 0.401, 0.401, 0.401, 0.484, 0.484, 0.527, 0.628, 0.688, 0.949,
        ],
    ),
    (
        "fit, both directions",
        [
            0.700, 0.709, 0.709, 0.709, 0.709, 0.709, 0.799, 0.800, 0.800, 0.890, 0.916, 0.992,
        ],
    ),
    (
        "misfit",
        [
            0.122, 0.122, 0.122, 0.122, 0.122, 0.122, 0.122, 0.122, 0.122, 0.122, 0.122, 0.122,
        ],
    ),
    (
        "misfit, both directions",
        [
            0.177, 0.177, 0.177, 0.177, 0.177, 0.177, 0.177, 0.177, 0.177, 0.177, 0.177, 0.177,
        ],
    ),
    (
        "open",
        [
            0.342, 0.342, 0.342, 0.342, 0.342, 0.342, 0.342, 0.342, 0.342, 0.342, 0.342, 0.342,
        ],
    ),
    (
        "open, both directions",
        [
            0.303, 0.303, 0.303, 0.303, 0.333, 0.333, 0.333, 0.333, 0.333, 0.333, 0.333, 0.333,
        ],
    ),
    (
        "prefetch unmodelled, both directions",
        [
            0.116, 0.116, 0.116, 0.116, 0.116, 0.127, 0.127, 0.127, 0.182, 0.182, 0.368, 0.614,
        ],
    ),
    (
        "prefetch, both directions",
        [
            0.222, 0.222, 0.222, 0.500, 0.500, 0.611, 0.789, 0.789, 0.789, 0.789, 0.857, 0.989,
        ],
    ),
];

/// `raw` calibrated for a level read on `basis`; unchanged where the study has no table for
/// that basis (the slowest level, memory, states no geometry).
pub fn calibrated(basis: &str, raw: f64) -> f64 {
    TABLE
        .iter()
        .find(|(b, _)| *b == basis)
        .map_or(raw, |(_, values)| values[bin(raw)])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bins_cover_zero_to_one() {
        assert_eq!(bin(0.0), 0);
        assert_eq!(bin(0.95), 9);
        assert_eq!(bin(0.9995), 11);
        assert_eq!(bin(1.0), 11);
        for (_, values) in TABLE {
            assert!(values.windows(2).all(|w| w[0] <= w[1]), "{values:?}");
            assert!(values.iter().all(|v| (0.0..=1.0).contains(v)));
        }
        assert_eq!(calibrated("memory", 1.0), 1.0);
    }
}
