//! A level's capacity read from the curve alone, with no model of sets, ways and lines.
//!
//! The size a geometry fit states inherits the fit's doubt: where no model fits (a hashed
//! index, a policy outside the fitted families: the L1 of every Hopper) it is left unresolved,
//! although the curve pins down where the first miss happens and where the misses reach half
//! and nine tenths of the way up, and each of those repeats run to run. Those three footprints
//! bound the capacity whatever the cache is:
//!
//! - no cache misses a cyclic chase that fits in it, whatever its policy, unless its index
//!   leaves some sets over-full (a hash): the largest footprint that hits throughout is at most
//!   the capacity, or above it only by as much as the first few misses hide in the noise (a
//!   random or re-reference-predicting set that overflows by one line misses rarely);
//! - once the footprint is well past the capacity nearly every load misses under every policy
//!   a cyclic chase meets, so the nine-tenths point is at or above it.
//!
//! The interval runs from the largest footprint that hits, widened downwards by [`WIDEN`] of the
//! rise's width (that hidden overshoot grows with how slowly the policy's misses rise), to the
//! nine-tenths point's upper reading. How often it covers the true size is measured by the
//! calibration study (`analysis::calibration`) per family of caches, each family held out in
//! turn; [`COVERAGE`] is the rate stated with it, the lowest any family gave.

use serde::{Deserialize, Serialize};

use super::{ChasePoint, RiseExtent};

/// How far below the largest footprint that hits the interval reaches, as a share of the
/// rise's width (from that footprint to the nine-tenths point): chosen by the calibration
/// study so that the interval covers the true size on its worst family.
pub const WIDEN: f64 = 0.5;

/// The share of true sizes the interval covered on the calibration study's worst family of
/// caches (`results/calibration/families`), each family's share measured with the table of
/// confidences made without it.
pub const COVERAGE: f64 = 0.95;

/// The basis of a level whose size is stated as its capacity interval ([`state_interval`]).
pub const INTERVAL_BASIS: &str = "capacity interval";

/// States `level`'s size as its capacity interval where no geometry stands behind a point: no
/// model fits the rise ("misfit"), the models within the noise identify nothing ("open"), the
/// best one replaces at random and so states no line or way, or a prefetcher was seen that no
/// prefetching model fits. Such a size was the plateau's end or a model's product of
/// unidentified factors, and its table could only be the study's mixture: on a family held out
/// of the study (random replacement, a victim buffer) it was within a line far less often than
/// stated (0.63 where 0.88 was stated). The interval's coverage holds on every family, so it is
/// the confidence stated, as it is for the capacity itself. A level that states a line, a way
/// count or the bytes a miss fetches (a fit), or whose size a prefetching model gives, keeps
/// its point.
pub(super) fn state_interval(level: &mut super::CacheLevel) {
    let geometry = level.line_bytes.is_some()
        || level.ways.is_some()
        || level.sets.is_some()
        || level.fetch_bytes.is_some();
    let point_basis = matches!(
        level.basis,
        "prefetch, both directions" | "steps" | "memory"
    );
    let Some(capacity) = level.capacity.filter(|_| level.size_bytes.is_some()) else {
        return;
    };
    if geometry || point_basis {
        return;
    }
    level.notes.push(format!(
        "size stated as the capacity interval, {}-{} B: the level was read on basis '{}', with no line or way count behind a point (the first miss was seen after {} B)",
        capacity.low_bytes, capacity.high_bytes, level.basis, capacity.hits_up_to_bytes
    ));
    level.size_is_interval = true;
    level.confidence = capacity.coverage;
    level.basis = INTERVAL_BASIS;
}

/// What the curve says of a level's capacity.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Capacity {
    /// The largest footprint at which every load still hits (the last point of the level's
    /// plateau).
    pub hits_up_to_bytes: u64,
    /// The first footprint swept past it, where misses were seen.
    pub first_miss_seen_bytes: u64,
    /// Where the latency stays at least half of the way up to the next level.
    pub half_bytes: u64,
    /// Where it stays at least nine tenths of the way up.
    pub ninety_bytes: u64,
    /// The interval stated for the capacity, and the share of true sizes such intervals
    /// covered on the study's worst family of caches.
    pub low_bytes: u64,
    pub high_bytes: u64,
    pub coverage: f64,
}

impl Capacity {
    /// Where the first miss lies: from the largest footprint with none to the first with one.
    pub fn first_miss(&self) -> std::ops::RangeInclusive<u64> {
        self.hits_up_to_bytes..=self.first_miss_seen_bytes
    }

    /// The capacity of the level whose plateau ends at point `lower_last` of `curve` and whose
    /// rise `rise` reads.
    pub fn read(curve: &[ChasePoint], lower_last: usize, rise: &RiseExtent) -> Option<Capacity> {
        let hits_up_to = curve.get(lower_last)?.footprint_bytes;
        let first_miss_seen = curve.get(lower_last + 1)?.footprint_bytes;
        let high = rise.ninety_range_bytes[1]
            .max(rise.ninety_bytes)
            .max(first_miss_seen);
        let width = high.saturating_sub(hits_up_to) as f64;
        let low = (hits_up_to as f64 - WIDEN * width).max(0.0).round() as u64;
        Some(Capacity {
            hits_up_to_bytes: hits_up_to,
            first_miss_seen_bytes: first_miss_seen,
            half_bytes: rise.half_bytes,
            ninety_bytes: rise.ninety_bytes,
            low_bytes: low,
            high_bytes: high,
            coverage: COVERAGE,
        })
    }

    /// Whether the interval holds `bytes`.
    pub fn covers(&self, bytes: u64) -> bool {
        (self.low_bytes..=self.high_bytes).contains(&bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::cache_model::{Geometry, Hierarchy, Quirks, Replacement};

    /// A cache of 4 KiB (16 sets of 4 lines of 64 B) chased at a 16 B stride up to three times
    /// its size, a point every line.
    const SIZE: u64 = 4096;

    fn curve(replacement: Replacement, quirks: Quirks) -> Vec<ChasePoint> {
        let h = Hierarchy::one_level(Geometry::new(SIZE, 64, 4), 30.0, 300.0);
        (1..=3 * SIZE / 64)
            .map(|k| k * 64)
            .map(|footprint| ChasePoint {
                footprint_bytes: footprint,
                stride_bytes: 16,
                cycles: crate::analysis::cache_model::chase_latency_quirky(
                    &h,
                    footprint,
                    16,
                    replacement,
                    quirks,
                    (16, 4),
                ),
            })
            .collect()
    }

    /// Under every policy of the model, with and without a hashed index, the interval read
    /// from a noiseless curve holds the true size, and starts no higher than it.
    #[test]
    fn the_interval_holds_the_size_under_every_policy() {
        for replacement in [
            Replacement::Lru,
            Replacement::Fifo,
            Replacement::TreePlru,
            Replacement::BitPlru,
            Replacement::Srrip,
            Replacement::Bip,
            Replacement::Random,
        ] {
            for hashed_index in [false, true] {
                let quirks = Quirks {
                    hashed_index,
                    ..Quirks::default()
                };
                let report = super::super::infer(&curve(replacement, quirks)).unwrap();
                let capacity = report.levels[0].capacity.unwrap();
                assert!(
                    capacity.covers(SIZE),
                    "{replacement:?} hashed {hashed_index}: {capacity:?}"
                );
                assert!(capacity.low_bytes <= capacity.hits_up_to_bytes);
                assert!(capacity.hits_up_to_bytes < capacity.first_miss_seen_bytes);
                assert!(capacity.half_bytes <= capacity.ninety_bytes);
            }
        }
    }
}
