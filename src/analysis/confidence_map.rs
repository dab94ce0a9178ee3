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
/// From `gpubench calibrate --seed 1 --cases 7000` on a two-H200 host's 32 cores (304 s;
/// `results/calibration/families-seed1`, made by 345ae83): caches of seven replacement policies
/// (LRU, FIFO, tree and bit pseudo-LRU, SRRIP, bimodal insertion, random), each with or without
/// a hashed index, a next-line prefetcher, a victim buffer, sectored lines or a miss cost that
/// moves with the line that misses; each case read twice: the ascending chase alone, and with
/// the descending one (the bases ending "both directions").
/// The table is the share right of the study's mixture, so it depends on that mixture (see
/// `analysis::calibration::draw`); [`HELD_OUT_GAP`] says how far it may be off on a family
/// the mixture does not hold. A size stated as its capacity interval has no row: it states the
/// interval's coverage (`cache_inference::capacity::state_interval`).
pub const TABLE: &[(&str, [f64; 12])] = &[
    (
        "fit",
        [
            0.217, 0.217, 0.217, 0.217, 0.217, 0.217, 0.231, 0.235, 0.265, 0.493, 0.698, 0.967,
        ],
    ),
    (
        "fit, both directions",
        [
            0.513, 0.513, 0.513, 0.513, 0.513, 0.513, 0.541, 0.541, 0.603, 0.735, 0.857, 0.976,
        ],
    ),
    (
        "open",
        [
            0.366, 0.366, 0.366, 0.366, 0.366, 0.366, 0.366, 0.366, 0.366, 0.366, 0.366, 0.366,
        ],
    ),
    (
        "open, both directions",
        [
            0.316, 0.316, 0.316, 0.333, 0.333, 0.333, 0.333, 0.333, 0.333, 0.333, 0.333, 0.333,
        ],
    ),
    (
        "prefetch, both directions",
        [
            0.167, 0.167, 0.167, 0.167, 0.333, 0.625, 0.636, 0.667, 0.667, 0.789, 0.789, 0.998,
        ],
    ),
];

/// Per basis, the largest distance the study found between the stated confidence and the
/// share right on a family of caches held out of the table (`analysis::calibration::families`;
/// bins of at least 200 answers): a confidence on basis "fit" is calibrated on the study's
/// mixture, and on a family held out of it may be 0.066 too high or too low; a capacity
/// interval's stated coverage, 0.05 (it covered more often than stated). Before sizes with no
/// geometry behind them were stated as intervals, these were 0.34 ("fit, both directions": a
/// victim buffer behind sets that fit is stated what plain caches earn) and 0.27 ("misfit": a
/// random cache's first misses hide in the noise). A basis missing here had no bin that large
/// on any held-out family.
pub const HELD_OUT_GAP: &[(&str, f64)] = &[
    ("capacity interval", 0.050),
    ("fit", 0.066),
    ("fit, both directions", 0.056),
    ("prefetch, both directions", 0.006),
];

/// How far a confidence stated on `basis` may be off on a family of caches the study's table
/// was not made from (`None`: the study has no such bin for it).
pub fn held_out_gap(basis: &str) -> Option<f64> {
    HELD_OUT_GAP
        .iter()
        .find(|(b, _)| *b == basis)
        .map(|(_, gap)| *gap)
}

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
