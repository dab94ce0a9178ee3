//! Ways and way size from a conflict experiment: N addresses S bytes apart, chased cyclically,
//! and for each stride S the largest N whose chase still hits (Wong et al. read associativity
//! from the same kind of fixed-stride sweep; this asks the question per stride directly).
//!
//! Under a plain set index (set = line number mod sets) addresses S apart share S / line
//! times fewer sets as S doubles, so N halves with every doubling (N × S stays the capacity)
//! until S reaches the way size (sets × line); from there on all N addresses fall in one set
//! and N is the number of ways. A hashed index spreads power-of-two strides over many sets,
//! and a fully associative cache has no sets: then N does not fall to a small constant, which
//! is reported as the finding rather than a way count.

use std::ops::RangeInclusive;

use serde::Serialize;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct ConflictPoint {
    pub stride_bytes: u64,
    /// The largest N whose chase still hits.
    pub max_hitting: u64,
    /// Every N tried hit: the count is only a lower bound.
    pub at_least: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
pub struct ConflictReport {
    pub ways: Option<u64>,
    pub way_bytes: Option<u64>,
    pub sets: Option<u64>,
    /// "plain set index", or what the data says instead.
    pub verdict: String,
    pub notes: Vec<String>,
}

/// More ways than this is not read as a set-associative cache.
const MAX_PLAIN_WAYS: u64 = 64;

/// Reads `points` (any order); `line_bytes` turns the way size into a set count, and strides
/// below it are left out (addresses that share a line conflict with nothing). `chase_capacity`
/// is where the pointer chase of the same level saw its first miss (from the largest footprint
/// with none to the first with one): more than [`MAX_PLAIN_WAYS`] ways are read only where
/// ways x way size lands there, within a way size.
pub fn analyse(
    points: &[ConflictPoint],
    line_bytes: Option<u64>,
    chase_capacity: Option<RangeInclusive<u64>>,
) -> ConflictReport {
    let mut points: Vec<ConflictPoint> = points
        .iter()
        .copied()
        .filter(|p| line_bytes.is_none_or(|b| p.stride_bytes >= b))
        .collect();
    points.sort_by_key(|p| p.stride_bytes);
    points.dedup_by_key(|p| p.stride_bytes);
    let mut notes = Vec::new();
    let bounds: Vec<String> = points
        .iter()
        .filter(|p| p.at_least)
        .map(|p| format!("{} B: N >= {}", p.stride_bytes, p.max_hitting))
        .collect();
    if !bounds.is_empty() {
        notes.push(format!(
            "every N tried hit at {} (the limit of the space or of 256 MiB)",
            bounds.join(", ")
        ));
    }
    let exact: Vec<ConflictPoint> = points.iter().copied().filter(|p| !p.at_least).collect();
    if let Some(report) = same_count_at_every_stride(&points, &exact, &mut notes) {
        return report;
    }
    if exact.len() < 3 {
        return too_few_strides(&points, notes);
    }
    let plateau = Plateau::of(&exact);
    if let Some(report) = not_a_plain_index(&points, &exact, plateau, &mut notes) {
        return report;
    }
    read_ways(&exact, plateau, line_bytes, chase_capacity, notes)
}

/// A report that reads no ways: the `verdict` says what the data shows instead.
fn unknown(verdict: String, notes: Vec<String>) -> ConflictReport {
    ConflictReport {
        ways: None,
        way_bytes: None,
        sets: None,
        verdict,
        notes,
    }
}

/// The verdict where the same large N holds at every stride with a miss, and no lower bound
/// lies above it: addresses at power-of-two strides never conflict.
fn same_count_at_every_stride(
    points: &[ConflictPoint],
    exact: &[ConflictPoint],
    notes: &mut Vec<String>,
) -> Option<ConflictReport> {
    let last = exact.last().map(|p| p.max_hitting)?;
    if !(last > MAX_PLAIN_WAYS
        && exact
            .iter()
            .all(|p| p.max_hitting.abs_diff(last) as f64 <= 0.1 * last as f64)
        && points
            .iter()
            .all(|p| p.max_hitting as f64 <= 1.1 * last as f64 + 1.0))
    {
        return None;
    }
    notes.push(format!(
        "N = {last} (within a tenth) at every stride from {} B to {} B with a miss",
        exact[0].stride_bytes,
        exact[exact.len() - 1].stride_bytes
    ));
    Some(unknown(
        format!(
            "about {last} addresses hit at every power-of-two stride: no set conflicts (a hashed set index, or a fully associative cache of about {last} lines)"
        ),
        std::mem::take(notes),
    ))
}

/// The verdict with fewer than three strides with a miss: lower bounds alone can still rule
/// a small way count out; otherwise there is too little to read ways.
fn too_few_strides(points: &[ConflictPoint], mut notes: Vec<String>) -> ConflictReport {
    if let (Some(first), Some(last)) = (points.first(), points.last())
        && last.max_hitting as f64 >= 0.5 * first.max_hitting as f64
        && last.max_hitting > 16
    {
        return unknown(
            format!(
                "N stays at {} or more from {} B to {} B strides: no set conflicts at power-of-two strides (a hashed set index, or a fully associative cache)",
                last.max_hitting, first.stride_bytes, last.stride_bytes
            ),
            notes,
        );
    }
    notes.push("the experiment needs three strides with a miss or more".into());
    unknown("too few strides to read ways".into(), notes)
}

/// The plateau at the largest strides: every stride from which N no longer changes (by more
/// than a tenth, for the large counts of a cache without set conflicts).
#[derive(Debug, Clone, Copy)]
struct Plateau {
    /// The largest stride with a miss.
    last_point: ConflictPoint,
    /// Its N: the settled count.
    last: u64,
    /// The index in the exact points where N settles.
    settled_from: usize,
    /// How many strides it stays settled over.
    settled: usize,
}

impl Plateau {
    /// The plateau of `exact` (three points or more, by stride).
    fn of(exact: &[ConflictPoint]) -> Plateau {
        let last_point = exact[exact.len() - 1];
        let last = last_point.max_hitting;
        let same = |n: u64| n.abs_diff(last) as f64 <= 0.1 * last as f64;
        let settled_from = exact
            .iter()
            .rposition(|p| !same(p.max_hitting))
            .map_or(0, |i| i + 1);
        Plateau {
            last_point,
            last,
            settled_from,
            settled: exact.len() - settled_from,
        }
    }
}

/// The verdicts that read no ways once the plateau is known: a larger stride holding more
/// addresses than the settled count, a plateau still moving at the largest stride, no hit at
/// all, or N that does not halve with each doubling below the way size.
fn not_a_plain_index(
    points: &[ConflictPoint],
    exact: &[ConflictPoint],
    plateau: Plateau,
    notes: &mut Vec<String>,
) -> Option<ConflictReport> {
    let Plateau {
        last_point,
        last,
        settled_from,
        settled,
    } = plateau;
    let first = exact[0];
    // A larger stride that held more addresses than the settled count rules a plain index out.
    let beyond = points.iter().find(|p| {
        p.stride_bytes > exact[settled_from].stride_bytes
            && p.max_hitting as f64 > 1.1 * last as f64 + 1.0
    });
    if let Some(beyond) = beyond {
        notes.push(format!(
            "N settles near {last} from {} B but reaches {}{} at {} B",
            exact[settled_from].stride_bytes,
            if beyond.at_least { "at least " } else { "" },
            beyond.max_hitting,
            beyond.stride_bytes
        ));
        return Some(unknown(
            "N does not settle at a way count as the stride grows: not a plain modulo set index (hashed, or a mixture of structures)".into(),
            std::mem::take(notes),
        ));
    }
    if settled < 2 {
        notes.push(format!(
            "N = {} at {} B, the largest stride with a miss; try larger strides",
            last, last_point.stride_bytes
        ));
        return Some(unknown(
            "N still changes at the largest stride: the way size lies past the strides tried"
                .into(),
            std::mem::take(notes),
        ));
    }
    if last == 0 {
        return Some(unknown(
            "no stride hits even with one address at the largest strides".into(),
            std::mem::take(notes),
        ));
    }
    // Below the way size a plain index keeps N × S at the capacity; check the halving.
    let halving = exact[..settled_from]
        .windows(2)
        .filter(|w| w[1].stride_bytes == 2 * w[0].stride_bytes)
        .all(|w| {
            let ratio = w[0].max_hitting as f64 / w[1].max_hitting.max(1) as f64;
            (1.6..=2.5).contains(&ratio)
        });
    if first.max_hitting < 2 * last || !halving {
        let verdict = if first.max_hitting < 2 * last {
            format!(
                "N stays near {last} at every stride from {} B to {} B: no set conflicts at power-of-two strides (a hashed set index, or a fully associative cache)",
                first.stride_bytes, last_point.stride_bytes
            )
        } else {
            "N does not halve with each doubling of the stride before it settles: not a plain modulo set index".to_string()
        };
        notes.push(format!(
            "N at the smallest stride ({} B): {}; at the largest with a miss: {last}",
            first.stride_bytes, first.max_hitting
        ));
        return Some(unknown(verdict, std::mem::take(notes)));
    }
    None
}

/// The ways and way size of a plain index: the settled count at the stride where N settles,
/// more than [`MAX_PLAIN_WAYS`] of them only where the whole pattern backs them.
fn read_ways(
    exact: &[ConflictPoint],
    plateau: Plateau,
    line_bytes: Option<u64>,
    chase_capacity: Option<RangeInclusive<u64>>,
    mut notes: Vec<String>,
) -> ConflictReport {
    let Plateau {
        last,
        settled_from,
        settled,
        ..
    } = plateau;
    let first = exact[0];
    let way = exact[settled_from].stride_bytes;
    // Many ways are read only where the whole pattern of a plain index is there: N halving
    // through two doublings or more, settling over three strides or more, and N x S at the
    // smallest stride the settled count's capacity (GPGPU-Sim's Volta L1D: 4 sets x 256 ways
    // of 128 B, N = 1024 at 128 B, 256 from 512 B on). A hashed index or a structure that is
    // not a cache rarely draws that; a lone plateau of a large N is not read as ways.
    let doublings = exact[..=settled_from]
        .windows(2)
        .filter(|w| w[1].stride_bytes == 2 * w[0].stride_bytes)
        .count();
    let first_capacity = first.max_hitting as f64 * first.stride_bytes as f64;
    let settled_capacity = last as f64 * way as f64;
    let chase_agrees = chase_capacity.as_ref().is_some_and(|seen| {
        let ways_bytes = last * way;
        ways_bytes + way >= *seen.start() && ways_bytes <= seen.end() + way
    });
    let whole_pattern = doublings >= 2
        && settled >= 3
        && (first_capacity / settled_capacity - 1.0).abs() <= 0.1
        && chase_agrees;
    if last > MAX_PLAIN_WAYS && !whole_pattern {
        notes.push(format!(
            "N halves up to {way} B and then stays near {last}; a plain index would need {last} ways, and the pattern that would back so many (two halvings, three settled strides, the same capacity at both ends and at the chase's first miss) is not all there"
        ));
        return unknown(
            format!(
                "N settles at {last} addresses from a {way}-byte stride: more than any plausible way count, so no plain set-associative reading (a hashed index, or a structure of {last} entries of {way} B)"
            ),
            notes,
        );
    }
    let sets = line_bytes
        .filter(|&b| b > 0 && way.is_multiple_of(b))
        .map(|b| way / b);
    if line_bytes.is_none() {
        notes.push("no line size known, so no set count".into());
    }
    if last > MAX_PLAIN_WAYS {
        notes.push(format!(
            "{last} ways is more than {MAX_PLAIN_WAYS}: read because N halves through {doublings} doublings to {way} B, stays at {last} over {settled} strides, and N x S is {} B at {} B and {} B at {way} B, where the chase saw its first miss",
            first_capacity as u64, first.stride_bytes, settled_capacity as u64
        ));
    }
    ConflictReport {
        ways: Some(last),
        way_bytes: Some(way),
        sets,
        verdict: "plain set index".into(),
        notes,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::cache_model::{Geometry, Hierarchy, chase_latency};

    /// The largest N at stride S for which the simulated cache still hits every load (N tried
    /// past twice the ways, so a settled count is never the ceiling of the search).
    fn simulated(geometry: Geometry, strides: &[u64]) -> Vec<ConflictPoint> {
        let hierarchy = Hierarchy::one_level(geometry, 10.0, 100.0);
        strides
            .iter()
            .map(|&s| {
                let max_hitting = (1..=(4 * geometry.size_bytes / s)
                    .max(64)
                    .max(2 * geometry.ways + 2))
                    .take_while(|&n| chase_latency(&hierarchy, n * s, s) < 11.0)
                    .last()
                    .unwrap_or(0);
                ConflictPoint {
                    stride_bytes: s,
                    max_hitting,
                    at_least: false,
                }
            })
            .collect()
    }

    #[test]
    fn reads_ways_and_way_size_of_plain_lru_caches() {
        for (size, line, ways) in [(2048, 64, 4), (8192, 32, 8), (4096, 128, 2), (3072, 64, 3)] {
            let geometry = Geometry::new(size, line, ways);
            let strides: Vec<u64> = (0..8).map(|k| line << k).collect();
            let report = analyse(&simulated(geometry, &strides), Some(line), None);
            assert_eq!(report.verdict, "plain set index", "{geometry:?} {report:?}");
            assert_eq!(report.ways, Some(ways), "{geometry:?}");
            assert_eq!(report.way_bytes, Some(geometry.way_bytes()), "{geometry:?}");
            assert_eq!(report.sets, Some(geometry.sets()));
        }
    }

    #[test]
    fn a_flat_n_is_reported_as_no_set_conflicts() {
        let points: Vec<ConflictPoint> = (0..8)
            .map(|k| ConflictPoint {
                stride_bytes: 128 << k,
                max_hitting: 1700 + (k % 2) * 20,
                at_least: false,
            })
            .collect();
        let report = analyse(&points, Some(128), None);
        assert_eq!(report.ways, None);
        assert!(report.verdict.contains("hashed"), "{report:?}");
    }

    #[test]
    fn a_way_size_past_the_strides_is_said() {
        let geometry = Geometry::new(16384, 64, 2);
        let report = analyse(&simulated(geometry, &[64, 128, 256, 512]), Some(64), None);
        assert_eq!(report.ways, None);
        assert!(report.verdict.contains("past the strides"), "{report:?}");
    }

    /// GPGPU-Sim's SM7_QV100 L1D (4 sets x 256 ways x 128 B) as its simulated run measured it
    /// (results/sim/SM7_QV100-1SM/global): the whole plain-index pattern, so 256 ways are read;
    /// the same plateau without the halvings before it is not.
    #[test]
    fn many_ways_are_read_only_with_the_whole_plain_index_pattern() {
        let geometry = Geometry::new(131072, 128, 256);
        let strides: Vec<u64> = (0..8).map(|k| 128 << k).collect();
        let measured = simulated(geometry, &strides);
        let chase = Some(131072..=131072 + 128);
        let report = analyse(&measured, Some(128), chase.clone());
        assert_eq!(report.verdict, "plain set index", "{report:?}");
        assert_eq!(report.ways, Some(256));
        assert_eq!(report.way_bytes, Some(512));
        assert_eq!(report.sets, Some(4));
        // Only one halving before the plateau: not enough to back 256 ways.
        let report = analyse(&measured[1..], Some(128), chase.clone());
        assert_eq!(report.ways, None, "{report:?}");
        // The plateau's capacity disagreeing with the smallest stride's: not read either.
        let mut skewed = measured.clone();
        skewed[0].max_hitting = 1200;
        skewed[1].max_hitting = 600;
        let report = analyse(&skewed, Some(128), chase.clone());
        assert_eq!(report.ways, None, "{report:?}");
        // The chase's first miss elsewhere (the H200 texture path: 452 x 512 B against a
        // first miss at 218 KiB), or not known: not read.
        for elsewhere in [Some(120_000..=121_000), None] {
            let report = analyse(&measured, Some(128), elsewhere);
            assert_eq!(report.ways, None, "{report:?}");
        }
    }

    /// The H100 L1's pattern: N is the line count at 128 and 256 B, and every N tried hits at
    /// larger strides; a way count of 1800 must not be read from the two exact points.
    #[test]
    fn lower_bounds_past_the_settled_count_rule_a_plain_index_out() {
        let mut points = vec![
            ConflictPoint {
                stride_bytes: 32,
                max_hitting: 7200,
                at_least: false,
            },
            ConflictPoint {
                stride_bytes: 64,
                max_hitting: 3600,
                at_least: false,
            },
            ConflictPoint {
                stride_bytes: 128,
                max_hitting: 1805,
                at_least: false,
            },
            ConflictPoint {
                stride_bytes: 256,
                max_hitting: 1812,
                at_least: false,
            },
        ];
        points.extend((9..=22).map(|k| ConflictPoint {
            stride_bytes: 1 << k,
            max_hitting: (256 << 20 >> k).min(1126),
            at_least: true,
        }));
        let report = analyse(&points, Some(128), None);
        assert_eq!(report.ways, None, "{report:?}");
        assert!(
            report.verdict.contains("not a plain") || report.verdict.contains("no set conflicts"),
            "{report:?}"
        );
    }
}
