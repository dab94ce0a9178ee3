//! A next-line prefetcher, seen by a chase in descending address order beside the ascending
//! one.
//!
//! An ascending chase cannot tell a cache of lines of L from one of lines of L/2 with a
//! next-line prefetcher (`cache_fit::prefetch_twin`), nor, where the set count is odd, a
//! prefetching cache from a plain one of the same geometry and half the miss penalty. Walking
//! down, the line after a miss is the one just loaded, so the prefetcher brings in nothing
//! the walk needs (`cache_model`'s tests): far past the size, every line misses once per pass
//! going down and every other line going up. So the ratio of the two rises (upper plateau
//! over lower, over the same footprints) is the number of lines one ascending miss fetches:
//! 1 rules the twins out and the ascending fit's line stands as the line; 2 reveals the
//! prefetcher, and then only the size is stated, from a fit among prefetching caches (the
//! prefetched line past the top of each descending pass also blurs the descending curve's
//! steps, so it is not fitted itself).

use super::geometry::Prefetch;
use super::*;

/// How far the ratio of the two rises may be from a whole number of lines per miss.
const RATIO_TOLERANCE: f64 = 0.2;

const PRESENT_NOTE: &str = "line, ways and sets: not stated: a next-line prefetcher (the descending chase rises twice as high as the ascending one) makes the ascending rise either its twin's (lines of twice the size, half the sets) or, with an odd set count, a plain cache's with half the miss penalty";

const UNMODELLED_NOTE: &str = "size: from a cache without a prefetcher, as no LRU or FIFO cache with one fits the rise (random replacement?); a prefetcher moves where the rise begins, so the size may be a few lines off";

/// What the descending points (within a quarter and four times the level's edge) say of a
/// prefetcher at the rise from `lower` to `upper` of `ascending`, and the note that says why;
/// `Unknown` where they do not cover both plateaus.
pub(super) fn prefetch_seen(
    ascending: &[ChasePoint],
    descending: &[ChasePoint],
    lower: &Plateau,
    upper: &Plateau,
    stride: u64,
    edge: Option<u64>,
) -> (Prefetch, String) {
    let unknown = |why: &str| (Prefetch::Unknown, format!("descending chase: {why}"));
    let Some(edge) = edge else {
        return unknown("no size to compare the rises at");
    };
    let Some((down_stride, down)) = one_stride(descending) else {
        return unknown("no points");
    };
    if down_stride != stride {
        return unknown("chased at another stride than the ascending curve");
    }
    let from = ascending[lower.first].footprint_bytes.max(edge / 4);
    let to = ascending[upper.last].footprint_bytes.min(4 * edge);
    let lower_end = ascending[lower.last].footprint_bytes;
    let upper_start = ascending[upper.first].footprint_bytes;
    let within = |curve: &[ChasePoint], a: u64, b: u64| -> Vec<ChasePoint> {
        curve
            .iter()
            .copied()
            .filter(|p| (a..=b).contains(&p.footprint_bytes))
            .collect()
    };
    let (down_low, down_high) = (
        within(&down, from, lower_end),
        within(&down, upper_start, to),
    );
    if down_low.len() < 2 || down_high.len() < 2 {
        return unknown(&format!(
            "fewer than two points on a plateau ({} B to {} B below the rise, {} B to {} B above)",
            from, lower_end, upper_start, to
        ));
    }
    let height = |low: &[ChasePoint], high: &[ChasePoint]| {
        plateau_latency(high)
            .zip(plateau_latency(low))
            .map(|(h, l)| h - l)
    };
    let (Some(up), Some(down)) = (
        height(
            &within(ascending, from, lower_end),
            &within(ascending, upper_start, to),
        ),
        height(&down_low, &down_high),
    ) else {
        return unknown("no plateau latency");
    };
    if up <= 0.0 {
        return unknown("the ascending rise has no height over these footprints");
    }
    let ratio = down / up;
    let per_miss = ratio.round();
    let whole =
        (1.0..=2.0).contains(&per_miss) && (ratio - per_miss).abs() <= RATIO_TOLERANCE * per_miss;
    match (whole, per_miss) {
        (true, 1.0) => (
            Prefetch::Absent,
            format!(
                "the descending and ascending chases rise alike ({down:.1} and {up:.1} cycles): one line per miss, no next-line prefetcher, so the fit's line is the line"
            ),
        ),
        (true, _) => (
            Prefetch::Present,
            format!(
                "the descending chase rises {ratio:.2} times as high as the ascending one ({down:.1} against {up:.1} cycles): each ascending miss brings in two lines, as a next-line prefetcher does"
            ),
        ),
        _ => unknown(&format!(
            "it rises {ratio:.2} times as high as the ascending one ({down:.1} against {up:.1} cycles), neither one nor two lines per miss; the ascending reading stands"
        )),
    }
}

/// Names the basis after the reading and, under a prefetcher, says what is not stated.
pub(super) fn restate(level: &mut CacheLevel, prefetch: Prefetch, note: String) {
    level.notes.push(note);
    // Whether the size comes from a cache with a next-line prefetcher (`fit_geometry` tries
    // them once the prefetcher is seen) or, where none of those fits, from a plain cache's.
    let prefetcher_fits = level
        .fit
        .as_ref()
        .is_some_and(|f| f.best.policy == cache_fit::Policy::LruNextLine);
    level.basis = match (prefetch, level.basis) {
        (Prefetch::Absent, "fit") => "fit, both directions",
        (Prefetch::Absent, "open") => "open, both directions",
        (Prefetch::Absent, "misfit") => "misfit, both directions",
        (Prefetch::Present, "fit") if prefetcher_fits => "prefetch, both directions",
        (Prefetch::Present, "fit") => "prefetch unmodelled, both directions",
        (Prefetch::Present, "misfit") => "misfit, both directions",
        (_, basis) => basis,
    };
    // `fit_geometry` stated the size alone (and so no way size); say why.
    match level.basis {
        "prefetch, both directions" => level.unidentified = vec![PRESENT_NOTE.into()],
        "prefetch unmodelled, both directions" => {
            level.unidentified = vec![PRESENT_NOTE.into(), UNMODELLED_NOTE.into()];
        }
        _ => {}
    }
}
