//! Does a cache level's confidence mean what it says? A simulation study: caches drawn from
//! families wider than the fitted one (LRU, FIFO, tree and bit pseudo-LRU, SRRIP, bimodal
//! insertion and random replacement; a hashed set index; a next-line prefetcher; a victim
//! buffer; sectored lines; a miss cost that moves with the line that misses; Gaussian noise
//! of the size real runs leave; 40-cycle outliers; sweeps coarser than the rise), each swept
//! as a chase and read by `cache_inference` as a run is. An answer is right when every
//! geometry parameter it states (line, ways, bytes fetched per miss) is the true one and its
//! size is within a line of the true capacity (what a chase can use: the sets' bytes and the
//! victim buffer's), or, where it states the size as the
//! capacity interval (no geometry behind a point), the interval holds that capacity. Among
//! answers stated with confidence in [p, p + 0.1), the share right should be about p, on every
//! family, also one the table was made without ([`families`]); and the capacity interval
//! (`cache_inference::Capacity`) should hold the true capacity at the rate it states.

use rand::{Rng, RngExt, SeedableRng, rngs::StdRng};
use serde::Serialize;

use super::cache_inference::{self, ChasePoint, MinimumRise};

pub mod families;
use super::cache_model::{
    Direction, Geometry, Hierarchy, Quirks, Replacement, chase_latency_directed,
};

/// One simulated cache and how it is swept.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Case {
    pub size_bytes: u64,
    pub line_bytes: u64,
    pub ways: u64,
    pub replacement: &'static str,
    pub hashed_index: bool,
    pub next_line_prefetch: bool,
    /// Lines of a victim buffer behind the sets (0: none).
    pub victim_lines: u64,
    /// The sector of a sectored line, where lines are sectored.
    pub sector_bytes: Option<u64>,
    /// Noise of one point, cycles (standard deviation).
    pub noise_cycles: f64,
    /// Every 29th point 40 cycles slow.
    pub outliers: bool,
    /// Footprints across the rise every four lines instead of every stride.
    pub coarse: bool,
    pub stride_bytes: u64,
    pub hit_cycles: f64,
    pub miss_cycles: f64,
    /// How much a miss's cost moves with the line that misses (cycles, the standard deviation
    /// of a per-line offset; 0: none): the mean over the lines that miss then moves along the
    /// rise with which lines they are, however quiet the points (GPGPU-Sim's DRAM does this).
    pub miss_spread_cycles: f64,
    pub seed: u64,
}

/// What the inference said about one case, and whether it was right.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Outcome {
    pub case: Case,
    /// "ascending" (an address-order chase alone) or "both directions" (with a descending
    /// chase over the same footprints).
    pub reading: &'static str,
    /// `None` when no level with a size was read.
    pub confidence: Option<f64>,
    /// Before the calibration table, and what the level rests on.
    pub raw_confidence: Option<f64>,
    pub basis: &'static str,
    pub stated_size_bytes: Option<u64>,
    pub stated_line_bytes: Option<u64>,
    pub stated_fetch_bytes: Option<u64>,
    pub stated_ways: Option<u64>,
    pub right: bool,
    /// The capacity read from the curve with no model, where the level has a rise.
    pub capacity: Option<cache_inference::Capacity>,
}

impl Case {
    /// The bytes a chase can keep: the sets', and the victim buffer's.
    pub fn capacity_bytes(&self) -> u64 {
        self.size_bytes + self.victim_lines * self.line_bytes
    }

    /// What one miss brings in as the chase sees it: a sector of a sectored line, else the
    /// line, and the next one too under a next-line prefetcher.
    pub fn fetch_bytes(&self) -> u64 {
        self.sector_bytes
            .unwrap_or(self.line_bytes * if self.next_line_prefetch { 2 } else { 1 })
    }
}

impl Outcome {
    /// Whether the capacity interval held the true capacity (`None`: no interval stated).
    pub fn capacity_covered(&self) -> Option<bool> {
        self.capacity.map(|c| c.covers(self.case.capacity_bytes()))
    }
}

/// One bin of the reliability diagram.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
pub struct Bin {
    pub from: f64,
    pub to: f64,
    pub answers: usize,
    pub mean_confidence: Option<f64>,
    pub share_right: Option<f64>,
}

pub const REPLACEMENTS: [(Replacement, &str); 7] = [
    (Replacement::Lru, "lru"),
    (Replacement::Fifo, "fifo"),
    (Replacement::TreePlru, "tree-plru"),
    (Replacement::Random, "random"),
    (Replacement::BitPlru, "bit-plru"),
    (Replacement::Srrip, "srrip"),
    (Replacement::Bip, "bip"),
];

/// Draws case `index` of the study seeded `seed` (the same pair gives the same case).
pub fn draw(seed: u64, index: u64) -> Case {
    let mut rng = StdRng::seed_from_u64(seed ^ index.wrapping_mul(0x9e37_79b9_7f4a_7c15));
    let (replacement, name) = REPLACEMENTS[rng.random_range(0..REPLACEMENTS.len())];
    let line_bytes = 1_u64 << rng.random_range(5..=7_u32);
    let ways = if replacement == Replacement::TreePlru {
        1_u64 << rng.random_range(2..=4_u32)
    } else {
        rng.random_range(2..=16_u64)
    };
    // 1 to 16 KiB: small enough to simulate thousands of sweeps, large enough for 8+ sets.
    let sets = loop {
        let sets = rng.random_range(2..=64_u64);
        let size = sets * ways * line_bytes;
        if (1 << 10..=16 << 10).contains(&size) {
            break sets;
        }
        if ways * line_bytes * 2 > 16 << 10 {
            break 2;
        }
    };
    let hit_cycles = rng.random_range(20.0..60.0);
    let hashed_index = rng.random_bool(0.15);
    let next_line_prefetch = rng.random_bool(0.15);
    // Victim buffers of 2 to 16 lines; sectors of 32 B in lines of 64 or 128 (a prefetcher
    // of whole lines and sectors fetched one at a time are not drawn together).
    let victim_lines = if rng.random_bool(0.15) {
        rng.random_range(2..=16_u64)
    } else {
        0
    };
    let sector_bytes =
        (!next_line_prefetch && line_bytes >= 64 && rng.random_bool(0.15)).then_some(32);
    let mut case = Case {
        size_bytes: sets * ways * line_bytes,
        line_bytes,
        ways,
        replacement: name,
        hashed_index,
        next_line_prefetch,
        victim_lines,
        sector_bytes,
        // Real runs' fits leave 0.02 (instruction fetch) to about 1 cycle (L1 chases) RMS.
        noise_cycles: 10_f64.powf(rng.random_range(-1.7..0.0)),
        outliers: rng.random_bool(0.2),
        coarse: rng.random_bool(0.2),
        stride_bytes: line_bytes / if rng.random_bool(0.5) { 4 } else { 8 },
        hit_cycles,
        miss_cycles: hit_cycles + rng.random_range(100.0..500.0),
        miss_spread_cycles: 0.0,
        seed: rng.random(),
    };
    // Drawn last, so that the other cases of a seed are the ones studies before it drew. A
    // per-line spread of 2 % to 25 % of the rise (GPGPU-Sim's 6-way L1D: about 10 %, as its
    // residuals over the rise imply).
    if rng.random_bool(0.15) {
        case.miss_spread_cycles =
            (case.miss_cycles - case.hit_cycles) * 10_f64.powf(rng.random_range(-1.7..-0.6));
    }
    case
}

fn normal(rng: &mut impl Rng) -> f64 {
    let (u, v): (f64, f64) = (rng.random::<f64>().max(1e-12), rng.random());
    (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
}

/// The ascending chase curve of `case` (see [`sweep_directed`]).
pub fn sweep(case: &Case) -> Vec<ChasePoint> {
    sweep_directed(case, Direction::Ascending)
}

/// The chase curve of `case` walked in `direction`: eight points a doubling from an eighth of the size to half of
/// it, then evenly (every four lines when coarse) to two and a half times the size, then eight
/// a doubling to eight times it.
pub fn sweep_directed(case: &Case, direction: Direction) -> Vec<ChasePoint> {
    let replacement = REPLACEMENTS
        .iter()
        .find(|(_, name)| *name == case.replacement)
        .map_or(Replacement::Lru, |(r, _)| *r);
    let geometry = Geometry::new(case.size_bytes, case.line_bytes, case.ways);
    let hierarchy = Hierarchy {
        memory_spread_cycles: case.miss_spread_cycles,
        ..Hierarchy::one_level(geometry, case.hit_cycles, case.miss_cycles)
    };
    let quirks = Quirks {
        hashed_index: case.hashed_index,
        next_line_prefetch: case.next_line_prefetch,
        victim_lines: case.victim_lines,
        sector_bytes: case.sector_bytes,
    };
    let stride = case.stride_bytes;
    let on_stride = |f: f64| ((f / stride as f64).round() as u64).max(1) * stride;
    let mut footprints: Vec<u64> = Vec::new();
    let size = case.capacity_bytes() as f64;
    let doubling = |from: f64, to: f64, out: &mut Vec<u64>| {
        let mut f = from;
        while f < to {
            out.push(on_stride(f));
            f *= 2_f64.powf(1.0 / 8.0);
        }
    };
    doubling(size / 8.0, size / 2.0, &mut footprints);
    // At most 384 points across the rise, as the GPU's sweep bisects only where the curve
    // moves: finer than a stride for the smaller caches, about a line for the larger.
    let fine = stride.max((2 * case.capacity_bytes() / 384).div_ceil(stride) * stride);
    let grain = if case.coarse {
        4 * case.line_bytes
    } else {
        fine
    };
    let mut f = on_stride(size / 2.0);
    while (f as f64) < 2.5 * size {
        footprints.push(f);
        f += grain;
    }
    doubling(2.5 * size, 8.0 * size, &mut footprints);
    footprints.sort_unstable();
    footprints.dedup();
    // Random, tree-PLRU and prefetching sets settle over several passes; the fitted models
    // are their steady state, as a chase that warms long enough measures it.
    let passes = match replacement {
        Replacement::Random => (16, 8),
        Replacement::TreePlru | Replacement::BitPlru | Replacement::Srrip | Replacement::Bip => {
            (16, 2)
        }
        _ if case.next_line_prefetch => (6, 1),
        _ => (1, 1),
    };
    let mut rng = StdRng::seed_from_u64(case.seed);
    footprints
        .into_iter()
        .enumerate()
        .map(|(i, footprint)| {
            let clean = chase_latency_directed(
                &hierarchy,
                footprint,
                stride,
                replacement,
                quirks,
                passes,
                direction,
            );
            let outlier = if case.outliers && i % 29 == 28 {
                40.0
            } else {
                0.0
            };
            ChasePoint {
                footprint_bytes: footprint,
                stride_bytes: stride,
                cycles: clean + case.noise_cycles * normal(&mut rng) + outlier,
            }
        })
        .collect()
}

/// Sweeps `case` up and down, reads its first level from the ascending chase alone and from
/// both, and judges each answer.
pub fn judge(case: Case) -> [Outcome; 2] {
    let up = sweep(&case);
    let down = sweep_directed(&case, Direction::Descending);
    let ascending = cache_inference::infer_with(&up, MinimumRise::CACHES);
    let paired = cache_inference::infer_paired(&up, &down, MinimumRise::CACHES);
    [
        judge_report(case, "ascending", ascending),
        judge_report(case, "both directions", paired),
    ]
}

fn judge_report(
    case: Case,
    reading: &'static str,
    report: Option<cache_inference::CacheReport>,
) -> Outcome {
    let level = report
        .and_then(|report| report.levels.into_iter().next())
        .filter(|level| level.size_bytes.is_some());
    let Some(level) = level else {
        return Outcome {
            case,
            reading,
            confidence: None,
            raw_confidence: None,
            basis: "none",
            stated_size_bytes: None,
            stated_line_bytes: None,
            stated_fetch_bytes: None,
            stated_ways: None,
            right: false,
            capacity: None,
        };
    };
    // A size stated as the capacity interval is right when the interval holds the capacity.
    let size_right = match (level.size_is_interval, level.capacity) {
        (true, Some(capacity)) => capacity.covers(case.capacity_bytes()),
        _ => level
            .size_bytes
            .is_some_and(|s| s.abs_diff(case.capacity_bytes()) <= case.line_bytes),
    };
    let right = size_right
        && level.line_bytes.is_none_or(|b| b == case.line_bytes)
        && level.fetch_bytes.is_none_or(|b| b == case.fetch_bytes())
        && level.ways.is_none_or(|w| w == case.ways);
    Outcome {
        case,
        reading,
        confidence: Some(level.confidence),
        raw_confidence: Some(level.raw_confidence),
        basis: level.basis,
        stated_size_bytes: level.size_bytes,
        stated_line_bytes: level.line_bytes,
        stated_fetch_bytes: level.fetch_bytes,
        stated_ways: level.ways,
        right,
        capacity: level.capacity,
    }
}

/// Cases `first..first + cases` of the study seeded `seed`, judged on `threads` threads (in
/// case order, each case's two readings together). A study split into shards by `first` and
/// merged is the study run at once.
pub fn study(seed: u64, first: u64, cases: u64, threads: usize) -> Vec<Outcome> {
    study_telling(seed, first, cases, threads, &|| {})
}

/// [`study`], calling `judged` after each case (from the worker threads): what a progress bar
/// counts.
pub fn study_telling(
    seed: u64,
    first: u64,
    cases: u64,
    threads: usize,
    judged: &(dyn Fn() + Sync),
) -> Vec<Outcome> {
    let threads = threads.max(1) as u64;
    let end = first + cases;
    let mut outcomes: Vec<(u64, Outcome)> = crate::analysis::in_parallel(0..threads, |t| {
        (first + t..end)
            .step_by(threads as usize)
            .flat_map(|i| {
                let outcomes = judge(draw(seed, i)).map(|o| (i, o));
                judged();
                outcomes
            })
            .collect()
    });
    outcomes.sort_by_key(|(i, o)| (*i, o.reading));
    outcomes.into_iter().map(|(_, o)| o).collect()
}

/// The reliability diagram: ten bins of stated confidence, each with its answers' mean
/// confidence and the share of them that were right.
pub fn reliability(outcomes: &[Outcome]) -> Vec<Bin> {
    reliability_of(outcomes.iter().map(|o| (o.confidence, o.right)))
}

/// [`reliability`] from each answer's stated confidence (`None`: nothing stated) and whether
/// it was right, as `outcomes.csv` keeps them.
pub fn reliability_of(answers: impl IntoIterator<Item = (Option<f64>, bool)>) -> Vec<Bin> {
    let stated: Vec<(f64, bool)> = answers
        .into_iter()
        .filter_map(|(c, right)| c.map(|c| (c, right)))
        .collect();
    (0..10)
        .map(|k| {
            let (from, to) = (f64::from(k) / 10.0, f64::from(k + 1) / 10.0);
            let inside: Vec<(f64, bool)> = stated
                .iter()
                .copied()
                .filter(|(c, _)| *c >= from && (*c < to || (k == 9 && *c <= 1.0)))
                .collect();
            let n = inside.len();
            let mean = |f: &dyn Fn(&(f64, bool)) -> f64| {
                (n > 0).then(|| inside.iter().map(f).sum::<f64>() / n as f64)
            };
            Bin {
                from,
                to,
                answers: n,
                mean_confidence: mean(&|(c, _)| *c),
                share_right: mean(&|(_, r)| f64::from(u8::from(*r))),
            }
        })
        .collect()
}

/// The calibration table from `outcomes` (raw confidences): per basis and raw bin of
/// `confidence_map::EDGES`, the share right made non-decreasing across bins by pooling
/// adjacent violators weighted by their answers, each pooled block's share taken with one right
/// and one wrong answer added (so a block of few answers stays near a half; added once per
/// block, not per bin, or a basis of many sparse bins is pulled towards a half by each of
/// them); an empty bin takes its lower neighbour's value. Sizes stated as a capacity interval
/// are left out: they state the interval's own coverage.
pub fn fit_map(outcomes: &[Outcome]) -> Vec<(String, [f64; 12])> {
    fit_map_of(
        outcomes
            .iter()
            .map(|o| (o.basis, o.raw_confidence, o.right)),
    )
}

/// [`fit_map`] from each answer's basis, raw confidence and whether it was right.
pub fn fit_map_of<'a>(
    answers: impl IntoIterator<Item = (&'a str, Option<f64>, bool)>,
) -> Vec<(String, [f64; 12])> {
    use super::confidence_map::{EDGES, bin};
    let mut counts: std::collections::BTreeMap<&str, [(usize, usize); EDGES.len()]> =
        std::collections::BTreeMap::new();
    for (basis, raw, right) in answers {
        // A size stated as its capacity interval states the interval's coverage on the worst
        // family (`Capacity::coverage`), as the capacity row does; the mixture's share would
        // be another number for the same interval.
        if basis == cache_inference::capacity::INTERVAL_BASIS {
            continue;
        }
        if let Some(raw) = raw {
            let c = &mut counts.entry(basis).or_default()[bin(raw)];
            c.0 += 1;
            c.1 += usize::from(right);
        }
    }
    let share = |right: usize, n: usize| (right + 1) as f64 / (n + 2) as f64;
    counts
        .into_iter()
        .map(|(basis, counts)| {
            // Pool adjacent violators over the non-empty bins: (answers, right, bins).
            let mut blocks: Vec<(usize, usize, Vec<usize>)> = Vec::new();
            for (k, &(n, right)) in counts.iter().enumerate() {
                if n == 0 {
                    continue;
                }
                blocks.push((n, right, vec![k]));
                while blocks.len() > 1 {
                    let last = &blocks[blocks.len() - 1];
                    let before = &blocks[blocks.len() - 2];
                    if share(before.1, before.0) <= share(last.1, last.0) {
                        break;
                    }
                    let last = blocks.pop().expect("two blocks");
                    let before = blocks.last_mut().expect("two blocks");
                    before.0 += last.0;
                    before.1 += last.1;
                    before.2.extend(last.2);
                }
            }
            let mut values = [f64::NAN; EDGES.len()];
            for (n, right, members) in &blocks {
                for &k in members {
                    values[k] = share(*right, *n);
                }
            }
            let mut previous = blocks.first().map_or(0.5, |b| share(b.1, b.0));
            for v in &mut values {
                if v.is_nan() {
                    *v = previous;
                }
                previous = *v;
            }
            (basis.to_string(), values)
        })
        .collect()
}

/// [`fit_map`]'s table as the Rust text of `confidence_map::TABLE`.
pub fn map_as_rust(table: &[(String, [f64; 12])]) -> String {
    let mut text = String::from("pub const TABLE: &[(&str, [f64; 12])] = &[\n");
    for (basis, values) in table {
        let values: Vec<String> = values.iter().map(|v| format!("{v:.3}")).collect();
        text += &format!("    (\"{basis}\", [{}]),\n", values.join(", "));
    }
    text + "];\n"
}

#[cfg(test)]
mod tests;
