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
/// From `gpubench calibrate --cases 6000 --seed 1` (on the H100 host's 16 cores, 228 s; each
/// case read twice: the ascending chase alone, and with the descending one, the bases ending
/// "both directions"). At a raw weight of 0.999 or more, an answer from both directions was
/// right 99.1 % of the time, from the ascending chase alone 94.8 % (its prefetching caches'
/// line is its twin's); a revealed prefetcher's size, from a fit among prefetching caches,
/// 99.0 %, and 54 % where none of those fits (random replacement) and a plain cache's size
/// stands. The table is the share right of the study's mixture, so it depends on that
/// mixture (see `analysis::calibration::draw`).
pub const TABLE: &[(&str, [f64; 12])] = &[
    (
        "fit",
        [
            0.348, 0.348, 0.348, 0.348, 0.348, 0.348, 0.437, 0.437, 0.500, 0.604, 0.705, 0.948,
        ],
    ),
    (
        "fit, both directions",
        [
            0.600, 0.621, 0.621, 0.621, 0.621, 0.621, 0.764, 0.764, 0.784, 0.886, 0.940, 0.991,
        ],
    ),
    (
        "misfit",
        [
            0.123, 0.123, 0.123, 0.123, 0.123, 0.123, 0.123, 0.123, 0.123, 0.123, 0.123, 0.123,
        ],
    ),
    (
        "misfit, both directions",
        [
            0.180, 0.180, 0.180, 0.180, 0.180, 0.180, 0.180, 0.180, 0.180, 0.180, 0.180, 0.180,
        ],
    ),
    (
        "open",
        [
            0.403, 0.403, 0.403, 0.403, 0.403, 0.403, 0.403, 0.403, 0.403, 0.403, 0.403, 0.403,
        ],
    ),
    (
        "open, both directions",
        [
            0.406, 0.406, 0.406, 0.406, 0.406, 0.406, 0.406, 0.406, 0.406, 0.406, 0.406, 0.406,
        ],
    ),
    (
        "prefetch unmodelled, both directions",
        [
            0.213, 0.213, 0.213, 0.213, 0.213, 0.213, 0.213, 0.213, 0.316, 0.316, 0.316, 0.542,
        ],
    ),
    (
        "prefetch, both directions",
        [
            0.333, 0.333, 0.462, 0.462, 0.462, 0.462, 0.700, 0.704, 0.704, 0.704, 0.704, 0.990,
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
