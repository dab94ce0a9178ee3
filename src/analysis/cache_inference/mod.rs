//! Cache geometry from a latency-against-footprint curve (Wong et al., "Inferring cache
//! characteristics from latency plots", Fig. 4).
//!
//! For an LRU, set-associative cache of size C, W bytes a way (C / ways) and lines of b bytes,
//! a chase at a stride s < b is flat while the footprint fits; past C the sets overflow one
//! after another, each adding a step to the latency, one step every b bytes of footprint; after
//! C + W every set has overflowed and the curve is flat again, at the next level.
//!
//! Method, on the points of the finest stride, in footprint order:
//! 1. Plateaus: maximal runs of points whose latencies stay within a tolerance and that span at
//!    least 25 % more footprint from first to last (the flat stretches between a rise's steps
//!    span far less). The tolerance is five times the first plateau's own noise (`noise`), so
//!    that the first misses end it however many points the sweep spent on the rise.
//! 2. Between consecutive plateaus lies a rise. Its size C is the last footprint of the lower
//!    plateau. Its steps are rises between neighbouring points above a jump threshold.
//! 3. When the steps are resolved (two or more, evenly spaced by at least two sweep steps), the
//!    spacing is the line size b, their count the number of sets S, W = S × b and the ways are
//!    C / W; C = S × b × ways is then checked. Otherwise W is the rise's width (to within a line)
//!    and line and sets are left null.
//! 4. Confidence starts at 1 and drops, with a note, for unresolved or uneven steps (replacement
//!    that is not LRU, hashed set indexing, sectors) and for a size that is not a whole number of
//!    ways.
//! 5. Then the rise, with both plateaus, is fitted with simulated caches
//!    (`analysis::cache_fit`) of every geometry within a quarter of that size. A fit within the
//!    noise whose geometry carries at least half the Akaike weight replaces the step reading
//!    (size, line, ways, sets; its weight is the confidence); a fit that cannot choose leaves the
//!    geometry open; no fit within the noise says which families were tried and how far each
//!    was. The step reading needs every step above the noise; the fit does not.
//!
//! The step reading wants a stride of at most a quarter line, so that steps are a minority of
//! the neighbour differences; a cache of at least 16 lines; and a first plateau of three points.
//! A level must also rise over the one below by the space's [`MinimumRise`].
//!
//! The slowest plateau is memory: its size is null. Latencies are plateau medians; at strides
//! below the line size a plateau above the first mixes one miss per line with hits, which the
//! level's note says.

use serde::{Deserialize, Serialize};

use super::cache_fit::{self, GeometryFit, SearchRange};
use super::stats;

pub mod capacity;
mod descending;
mod geometry;
mod levels;
mod noise;

pub use super::chase::ChasePoint;
pub use capacity::Capacity;

#[cfg(test)]
use geometry::{PREFETCH_NOTE, VICTIM_NOTE};
use geometry::{Prefetch, fit_geometry, prefetch_caveat};
pub use levels::plateau_ends;

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CacheLevel {
    pub latency_cycles: f64,
    pub size_bytes: Option<u64>,
    pub line_bytes: Option<u64>,
    /// Bytes one miss brings in, as the chase sees it: a line, or a line and the next where a
    /// next-line prefetcher fetches it, which an address-order chase cannot tell apart. Stated
    /// where the line is not (runs before this was: absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fetch_bytes: Option<u64>,
    pub way_bytes: Option<u64>,
    pub ways: Option<u64>,
    pub sets: Option<u64>,
    /// How likely what the level states is right: `raw_confidence` mapped through the
    /// calibration study's table for its `basis` (`analysis::confidence_map`).
    pub confidence: f64,
    /// The model's own weight (fit) or the step reading's heuristic, before calibration.
    pub raw_confidence: f64,
    /// How far `confidence` may be off on a family of caches the calibration study's table was
    /// not made from (`confidence_map::held_out_gap`; runs before this was: absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub held_out_gap: Option<f64>,
    /// What the statement rests on: "fit" (a model within the noise, some parameter
    /// identified), "open" (models within the noise, none identified), "misfit" (no model
    /// within the noise; the step reading stays) or "steps" (no model tried).
    pub basis: &'static str,
    pub notes: Vec<String>,
    /// Geometry parameters the fit could not tell apart, each with the values that fit within
    /// the noise ("ways: 3, 6 or 12"): not stated as figures.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unidentified: Vec<String>,
    /// The model fit of the rise (`analysis::cache_fit`), where one was made.
    pub fit: Option<GeometryFit>,
    /// How far the rise to the next level runs past `size_bytes` (its first miss), read off
    /// the curve with no model (runs before this was: absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rise: Option<RiseExtent>,
    /// The capacity the curve bounds whatever the geometry ([`Capacity`]; runs before this
    /// was: absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capacity: Option<Capacity>,
    /// The size is stated as the `capacity` interval at its coverage, not as a point
    /// (`capacity::state_interval`; runs before this was: absent, a point).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub size_is_interval: bool,
}

/// Where the latency climbs from a level's plateau to the next one's. A plain LRU cache
/// climbs over one way's bytes; a hashed set index, adaptive replacement or a victim store
/// stretch the climb, and a reader who wants "the size" may mean its start (the last
/// footprint that hits everywhere, `CacheLevel::size_bytes`) or where most of the extra
/// latency is paid: both are stated, from the curve alone.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct RiseExtent {
    /// The smallest footprint from which the latency stays at least half of the way up.
    pub half_bytes: u64,
    /// How well the sweep pins `half_bytes` down: from the point before the reading with the
    /// threshold two point-noise σ lower to the reading with it two σ higher.
    pub half_range_bytes: [u64; 2],
    /// The smallest footprint from which it stays at least nine tenths of the way up.
    pub ninety_bytes: u64,
    pub ninety_range_bytes: [u64; 2],
}

impl RiseExtent {
    /// The rise from the plateau ending at `lower_last` (latency `lower`) to the one starting
    /// at `upper_first` (latency `upper`), at point noise `sigma`: for each share, the point
    /// after the last one below it, so that one noisy point early in the rise does not end it.
    fn read(
        curve: &[ChasePoint],
        (lower_last, lower): (usize, f64),
        (upper_first, upper): (usize, f64),
        sigma: f64,
    ) -> Option<RiseExtent> {
        if upper <= lower || upper_first <= lower_last || upper_first >= curve.len() {
            return None;
        }
        let reached = |threshold: f64| {
            let last_below = (lower_last..=upper_first)
                .rev()
                .find(|&i| curve[i].cycles < threshold)
                .unwrap_or(lower_last);
            (last_below + 1).min(upper_first)
        };
        // The curve crosses between a reading's point and the one before it: the sweep's own
        // spacing bounds the reading from below, the noise on either side.
        let at = |share: f64| {
            let threshold = lower + share * (upper - lower);
            let low = reached(threshold - 2.0 * sigma) - 1;
            let high = reached(threshold + 2.0 * sigma);
            (
                curve[reached(threshold)].footprint_bytes,
                [curve[low].footprint_bytes, curve[high].footprint_bytes],
            )
        };
        let (half_bytes, half_range_bytes) = at(0.5);
        let (ninety_bytes, ninety_range_bytes) = at(0.9);
        Some(RiseExtent {
            half_bytes,
            half_range_bytes,
            ninety_bytes,
            ninety_range_bytes,
        })
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CacheReport {
    pub levels: Vec<CacheLevel>,
    /// The stride whose points the geometry was read from.
    pub stride_bytes: u64,
    pub jump_threshold_cycles: f64,
    /// The first plateau's tolerance: max(5σ, 0.25 cycles); higher plateaus also allow 10 % of
    /// their height above the fastest level.
    pub plateau_tolerance_cycles: f64,
    /// Why no level could be read, where none was.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

/// A plateau must span this ratio of footprints from its first to its last point.
const PLATEAU_SPAN: f64 = 1.25;

struct Plateau {
    first: usize,
    last: usize,
    latency: f64,
    /// The spread its points were allowed.
    tolerance: f64,
}

/// A plateau's latency: the median of its points, each weighted by the share of the log
/// footprint it stands for (half the log distance to each neighbour), so that the sweep's
/// dense sampling near a rise does not outvote the plateau itself. (An H100 texture chase
/// read its memory level at 305.6 cycles, the median of 60 points crowded into the 3 %
/// just past the L1, against 321 over the 13-fold footprint beyond; a second run read 321.8.)
fn plateau_latency(points: &[ChasePoint]) -> Option<f64> {
    let log = |k: usize| (points[k].footprint_bytes.max(1) as f64).ln();
    let last = points.len().checked_sub(1)?;
    let pairs: Vec<(f64, f64)> = (0..=last)
        .map(|k| {
            let left = if k > 0 { log(k) - log(k - 1) } else { 0.0 };
            let right = if k < last { log(k + 1) - log(k) } else { 0.0 };
            (points[k].cycles, (left + right) / 2.0)
        })
        .collect();
    stats::weighted_median(&pairs).or_else(|| {
        let values: Vec<f64> = points.iter().map(|p| p.cycles).collect();
        stats::median(&values)
    })
}

/// `tolerance` gives the allowed spread for a run starting at a latency.
///
/// One slow point between two that lie within the run is stepped over: a chase's misses only
/// grow with the footprint (the run after a first miss stays up), so a point that falls back
/// is a measurement's outlier (an interrupt, a clock change), not a cache's first miss. Read as
/// a miss it ended the plateau early: the calibration study's caches with a 40-cycle outlier
/// every 29th point were sized at the outlier, a quarter short, and no model fitted them.
fn plateaus(points: &[ChasePoint], tolerance: impl Fn(f64) -> f64) -> Vec<Plateau> {
    let mut found = Vec::new();
    let mut i = 0;
    while i < points.len() {
        let tolerance = tolerance(points[i].cycles);
        let (mut low, mut high) = (points[i].cycles, points[i].cycles);
        let within =
            |value: f64, low: f64, high: f64| value.max(high) - value.min(low) <= tolerance;
        let mut j = i;
        while j + 1 < points.len() {
            let next = points[j + 1].cycles;
            if !within(next, low, high) {
                let outlier = j > i
                    && next > high
                    && points
                        .get(j + 2)
                        .is_some_and(|after| within(after.cycles, low, high));
                if !outlier {
                    break;
                }
                j += 1;
                continue;
            }
            low = low.min(next);
            high = high.max(next);
            j += 1;
        }
        let span = points[j].footprint_bytes as f64 / points[i].footprint_bytes.max(1) as f64;
        if j >= i + 2 && span >= PLATEAU_SPAN {
            found.push(Plateau {
                first: i,
                last: j,
                tolerance,
                latency: plateau_latency(&points[i..=j]).unwrap_or(low),
            });
            i = j + 1;
        } else {
            i += 1;
        }
    }
    found
}

/// How much slower than the level below a plateau must be to count as a level of its own:
/// more than `relative` × the lower latency plus `absolute` cycles (and more than the noise).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MinimumRise {
    pub relative: f64,
    pub absolute: f64,
}

impl MinimumRise {
    /// Caches in front of memory: levels differ by tens of percent.
    pub const CACHES: MinimumRise = MinimumRise {
        relative: 0.05,
        absolute: 2.0,
    };

    /// A curve of unknown origin: any rise that stands clear of its own noise (the jump
    /// threshold, five times the noise) and of 5 % of the lower latency.
    pub const NOISE_ONLY: MinimumRise = MinimumRise {
        relative: 0.05,
        absolute: 0.0,
    };

    fn of(self, lower: f64) -> f64 {
        self.relative * lower + self.absolute
    }
}

/// Reads the cache levels from `points` with [`MinimumRise::CACHES`]; `None` without at least
/// three points of one stride.
pub fn infer(points: &[ChasePoint]) -> Option<CacheReport> {
    infer_with(points, MinimumRise::CACHES)
}

/// [`infer`] with the rise a level needs over the one below (instruction fetch and address
/// translation step by less than caches do).
pub fn infer_with(points: &[ChasePoint], minimum_rise: MinimumRise) -> Option<CacheReport> {
    read(points, None, minimum_rise)
}

/// [`infer_with`] where the same footprints were also chased in descending address order
/// (`descending`; at least those around each level's rise): the levels are read from the
/// ascending curve as by [`infer_with`]; the two rises' heights tell whether a next-line
/// prefetcher fetches two lines per ascending miss (`descending::prefetch_seen`), which an
/// ascending chase alone cannot.
pub fn infer_paired(
    ascending: &[ChasePoint],
    descending: &[ChasePoint],
    minimum_rise: MinimumRise,
) -> Option<CacheReport> {
    read(ascending, Some(descending), minimum_rise)
}

/// The points of the smallest stride, one per footprint, in footprint order.
fn one_stride(points: &[ChasePoint]) -> Option<(u64, Vec<ChasePoint>)> {
    let stride = points.iter().map(|p| p.stride_bytes).min()?;
    let mut curve: Vec<ChasePoint> = points
        .iter()
        .copied()
        .filter(|p| p.stride_bytes == stride)
        .collect();
    curve.sort_by_key(|p| p.footprint_bytes);
    curve.dedup_by_key(|p| p.footprint_bytes);
    Some((stride, curve))
}

fn read(
    points: &[ChasePoint],
    descending: Option<&[ChasePoint]>,
    minimum_rise: MinimumRise,
) -> Option<CacheReport> {
    let levels::Levels {
        stride,
        curve,
        noise,
        jump,
        tolerance,
        flats,
    } = levels::levels(points, minimum_rise)?;
    let sigma = noise.every;
    if flats.is_empty() {
        let first = curve[0].footprint_bytes;
        let last = curve[curve.len() - 1].footprint_bytes;
        return Some(CacheReport {
            levels: Vec::new(),
            stride_bytes: stride,
            jump_threshold_cycles: jump,
            plateau_tolerance_cycles: tolerance,
            notes: vec![format!(
                "no plateau: a level needs three points within {tolerance:.2} cycles spanning {PLATEAU_SPAN}x in footprint, and the sweep runs from {first} B to {last} B; sweep a wider range"
            )],
        });
    }
    let mut levels = Vec::new();
    for (k, plateau) in flats.iter().enumerate() {
        let Some(next) = flats.get(k + 1) else {
            // The slowest level spans every plateau merged into it (a drift of a few cycles
            // over the sweep): its latency is theirs together, not the first one's.
            let latency = plateau_latency(&curve[plateau.first..=plateau.last]);
            levels.push(CacheLevel {
                latency_cycles: latency.unwrap_or(plateau.latency),
                size_bytes: None,
                line_bytes: None,
                way_bytes: None,
                ways: None,
                sets: None,
                confidence: 1.0,
                raw_confidence: 1.0,
                held_out_gap: None,
                basis: "memory",
                notes: vec![
                    "the slowest level seen: memory, or a cache larger than the sweep".into(),
                ],
                unidentified: Vec::new(),
                fetch_bytes: None,
                fit: None,
                rise: None,
                capacity: None,
                size_is_interval: false,
            });
            break;
        };
        let mut level = rise(&curve, plateau, next, stride, jump);
        level.rise = RiseExtent::read(
            &curve,
            (plateau.last, plateau.latency),
            (next.first, next.latency),
            sigma / 2f64.sqrt(),
        );
        level.capacity = level
            .rise
            .as_ref()
            .and_then(|rise| Capacity::read(&curve, plateau.last, rise));
        let seen = descending.map(|down| {
            descending::prefetch_seen(&curve, down, plateau, next, stride, level.size_bytes)
        });
        let prefetch = seen.as_ref().map_or(Prefetch::Unknown, |(p, _)| *p);
        fit_geometry(
            &mut level,
            &curve,
            plateau,
            next,
            stride,
            sigma / 2f64.sqrt(),
            prefetch,
        );
        // A fit's statement already allows for the twins it could be (`cache_fit::Identified`);
        // a sectored line it states has none, whatever its size.
        if prefetch != Prefetch::Absent && !matches!(level.basis, "fit" | "open") {
            prefetch_caveat(&mut level, stride);
        }
        if let Some((prefetch, note)) = seen {
            descending::restate(&mut level, prefetch, note);
        }
        levels.push(level);
    }
    for level in &mut levels {
        capacity::state_interval(level);
        level.raw_confidence = level.confidence;
        level.confidence = super::confidence_map::calibrated(level.basis, level.confidence);
        level.held_out_gap = super::confidence_map::held_out_gap(level.basis);
    }
    // Plateaus above the first mix misses with hits when the stride is below the line size.
    if let Some(line) = levels
        .first()
        .and_then(|l| l.line_bytes.or(l.fetch_bytes))
        .filter(|&b| stride < b)
    {
        for level in levels.iter_mut().skip(1) {
            level.notes.push(format!(
                "latency measured at a {stride}-byte stride inside {line}-byte fetches: one load in {} pays this level's latency, the rest hit a faster level",
                line / stride
            ));
        }
    }
    Some(CacheReport {
        levels,
        stride_bytes: stride,
        jump_threshold_cycles: jump,
        plateau_tolerance_cycles: tolerance,
        notes: Vec::new(),
    })
}

/// The cache level whose plateau is `lower`, read from the rise up to `upper`.
fn rise(
    curve: &[ChasePoint],
    lower: &Plateau,
    upper: &Plateau,
    stride: u64,
    jump: f64,
) -> CacheLevel {
    let size = curve[lower.last].footprint_bytes;
    // A step is a rise between neighbours above the jump threshold. A set that overflows adds
    // ways + 1 missing lines; once every set has overflowed, each further line adds one, and
    // the average wobbles. Scaled by the footprint (the number of loads it is averaged over),
    // a step is at least twice any wobble: the rise's steps are the leading jumps that reach
    // half the first one's scaled height.
    // The upper plateau's tolerance may swallow the last small steps, so look across it too.
    let jumps_with_height: Vec<(usize, f64)> = (lower.last + 1..=upper.last)
        .filter(|&i| curve[i].cycles - curve[i - 1].cycles > jump)
        .map(|i| {
            (
                i,
                (curve[i].cycles - curve[i - 1].cycles) * curve[i].footprint_bytes as f64,
            )
        })
        .collect();
    let first_height = jumps_with_height.first().map_or(0.0, |j| j.1);
    let steps: Vec<usize> = jumps_with_height
        .iter()
        .take_while(|j| j.1 >= 0.5 * first_height)
        .map(|j| j.0)
        .collect();
    let margin = jump.max(0.05 * (upper.latency - lower.latency));
    let end_index = (lower.last + 1..=upper.first)
        .find(|&i| curve[i].cycles >= upper.latency - margin)
        .unwrap_or(upper.first)
        .max(steps.last().copied().unwrap_or(0));
    let end = curve[end_index].footprint_bytes;
    let jumps: Vec<u64> = steps.iter().map(|&i| curve[i].footprint_bytes).collect();
    let spacings: Vec<u64> = jumps.windows(2).map(|w| w[1] - w[0]).collect();
    let fine = (lower.last + 1..=end_index)
        .all(|i| curve[i].footprint_bytes - curve[i - 1].footprint_bytes == stride);
    let even = spacings.windows(2).all(|w| w[0] == w[1]);
    let mut notes = Vec::new();
    let mut confidence = 1.0;
    let resolved =
        fine && jumps.len() >= 2 && even && spacings.first().is_some_and(|&d| d >= 2 * stride);
    let (line, sets, way) = if resolved {
        let line = spacings[0];
        let sets = jumps.len() as u64;
        (Some(line), Some(sets), sets * line)
    } else {
        if !fine {
            notes.push(
                "the sweep is coarser than the stride across the rise: steps cannot be resolved"
                    .into(),
            );
            confidence *= 0.5;
        } else if jumps.len() >= 2 && !even {
            notes.push("the rise's steps are unevenly spaced: replacement is not LRU, sets are hashed, or lines are sectored".into());
            confidence *= 0.3;
        } else {
            notes.push("the rise shows no separate steps (one per set), so line size and sets stay unknown; a stride sweep or a finer stride would tell".into());
            confidence *= 0.5;
        }
        (None, None, end - size)
    };
    // Unresolved, the rise's width is the way size only to within a line: too short a rise
    // would give the ways by a wide margin, so none is given.
    let way = if !resolved && way < 8 * stride {
        notes.push(format!(
            "the rise spans only {way} B ({} sweep steps): too short to size a way",
            way / stride
        ));
        0
    } else {
        way
    };
    let ways = (way > 0)
        .then(|| (size as f64 / way as f64).round() as u64)
        .filter(|&w| w >= 1);
    if let (Some(ways), Some(line), Some(sets)) = (ways, line, sets) {
        if sets * line * ways != size {
            notes.push(format!(
                "sets × line × ways = {sets} × {line} × {ways} = {} B, not the {size} B the rise starts at",
                sets * line * ways
            ));
            confidence *= 0.5;
        }
    } else if let Some(whole) = ways {
        let ratio = size as f64 / way as f64;
        if (ratio - whole as f64).abs() > 0.1 {
            notes.push(format!(
                "size / way size = {ratio:.2}, not a whole number of ways, so no way count is given"
            ));
            confidence *= 0.5;
        }
    }
    // A way count that the size does not divide into is not a way count.
    let ways = ways
        .filter(|&w| line.is_some() || (size as f64 / way.max(1) as f64 - w as f64).abs() <= 0.1);
    // The sweep may jump over the edge: the size is then known only to within that gap.
    let gap = curve[lower.last + 1].footprint_bytes - size;
    if gap > 16 * stride {
        notes.push(format!(
            "the sweep has no point between {size} B and {} B: the size lies in that gap",
            size + gap
        ));
        confidence *= 0.5;
    }
    CacheLevel {
        latency_cycles: lower.latency,
        size_bytes: Some(size),
        line_bytes: line,
        way_bytes: (way > 0).then_some(way),
        ways,
        sets,
        confidence,
        raw_confidence: confidence,
        held_out_gap: None,
        basis: "steps",
        notes,
        unidentified: Vec::new(),
        fetch_bytes: None,
        fit: None,
        rise: None,
        capacity: None,
        size_is_interval: false,
    }
}

#[cfg(test)]
mod tests;
