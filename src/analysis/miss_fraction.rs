//! What each candidate cache of the model fit (`analysis::cache_fit`) predicts: the fraction
//! of a stride chase's loads that miss at each footprint.
//!
//! Misses of a cyclic chase in steady state, per set holding n of the lines the chase touches
//! in a W-way set: LRU and FIFO evict the line needed next, so every access of the set misses
//! once n > W and none does below (the two policies give the same curve; [`Policy::Lru`]
//! stands for both); random replacement misses a fraction p(n, W) of accesses, simulated per
//! (n, W) and remembered during a fit; a sectored line (a tag per line, data per sector)
//! misses once per sector touched where a whole line misses once. A next-line prefetcher
//! ([`Policy::LruNextLine`]) is counted in closed form too ([`prefetching_misses`]).

use serde::Serialize;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Policy {
    /// LRU, or FIFO: identical under a cyclic chase.
    Lru,
    Random,
    /// LRU or FIFO with a next-line prefetcher: each miss fills the line after it too. Tried
    /// only where a descending chase has shown the prefetcher (`cache_fit::fit_prefetching`).
    LruNextLine,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Candidate {
    pub sets: u64,
    pub ways: u64,
    pub line_bytes: u64,
    /// Sectors of a sectored line (data fetched per sector, one tag per line).
    pub sector_bytes: Option<u64>,
    pub policy: Policy,
}

impl Candidate {
    pub fn size_bytes(&self) -> u64 {
        self.sets * self.ways * self.line_bytes
    }

    pub(crate) fn family(&self) -> &'static str {
        match (self.policy, self.sector_bytes) {
            (Policy::Lru, None) => "LRU or FIFO",
            (Policy::Lru, Some(_)) => "LRU or FIFO, sectored lines",
            (Policy::Random, _) => "random replacement",
            (Policy::LruNextLine, _) => "LRU or FIFO, next-line prefetch",
        }
    }

    /// Same sets, ways and line: the geometry reported; the policy and sectors are how it
    /// behaves, and the confidence is the geometry's whatever they are.
    pub(crate) fn same_geometry(&self, other: &Candidate) -> bool {
        (self.sets, self.ways, self.line_bytes) == (other.sets, other.ways, other.line_bytes)
    }
}

/// Steady-state misses per access of a cyclic walk over n lines of one W-way set under random
/// replacement: simulated up to three times the ways (16 warm passes, then the misses of 256;
/// a fixed-seed xorshift picks each victim, so a fit repeats exactly), the mean-field fixed
/// point beyond.
pub(crate) fn random_miss_rate(n: u64, ways: u64) -> f64 {
    if n <= ways {
        return 0.0;
    }
    if let Some(rate) = simulated_rates().get(ways, n) {
        return rate;
    }
    // Remembered across fits: every fit of a process asks for the same few hundred pairs.
    static RATES: std::sync::OnceLock<
        std::sync::Mutex<std::collections::HashMap<(u64, u64), f64>>,
    > = std::sync::OnceLock::new();
    let rates = RATES.get_or_init(Default::default);
    if let Some(&rate) = rates
        .lock()
        .ok()
        .and_then(|m| m.get(&(n, ways)).copied())
        .as_ref()
    {
        return rate;
    }
    // Far past the ways nearly every access misses and the mean-field fixed point is close;
    // near them only a simulation is (the mean field is off by up to a sixth at n = W + 1).
    let rate = if n > 3 * ways {
        mean_field_random_rate(n, ways)
    } else {
        simulate_random_set(n, ways)
    };
    if let Ok(mut m) = rates.lock() {
        m.insert((n, ways), rate);
    }
    rate
}

/// The largest way count whose simulated rates are tabled ([`SimulatedRates`]): the model fit's
/// (`cache_fit`) candidates have at most this many.
const TABLED_WAYS: u64 = 64;

/// [`simulate_random_set`] for every W from 2 to [`TABLED_WAYS`] and n from W + 1 to 3W (every
/// pair a fit may simulate; about 4,000), computed once per process on all the host's cores.
/// A fit asks for a few hundred to thousands of them, each a 272-pass simulation; computed one
/// by one as asked, they were most of a cache space's inference (0.2-0.4 s, run while the GPU
/// waits for the side experiments it sizes). The values are the simulation's own.
struct SimulatedRates {
    /// Row W − 2: the rates for n = W + 1 ..= 3W.
    rows: Vec<Vec<f64>>,
}

impl SimulatedRates {
    fn compute() -> SimulatedRates {
        let ways: Vec<u64> = (2..=TABLED_WAYS).collect();
        let threads = std::thread::available_parallelism().map_or(1, usize::from);
        let mut rows = vec![Vec::new(); ways.len()];
        std::thread::scope(|scope| {
            // Interleaved rows, so each thread gets small and large way counts alike.
            let workers: Vec<_> = (0..threads)
                .map(|t| {
                    let ways = &ways;
                    scope.spawn(move || {
                        ways.iter()
                            .enumerate()
                            .skip(t)
                            .step_by(threads)
                            .map(|(i, &w)| {
                                (
                                    i,
                                    (w + 1..=3 * w).map(|n| simulate_random_set(n, w)).collect(),
                                )
                            })
                            .collect::<Vec<(usize, Vec<f64>)>>()
                    })
                })
                .collect();
            for worker in workers {
                for (i, row) in worker.join().expect("a rate simulation panicked") {
                    rows[i] = row;
                }
            }
        });
        SimulatedRates { rows }
    }

    /// The simulated rate of n lines in a W-way set, where tabled.
    fn get(&self, ways: u64, n: u64) -> Option<f64> {
        if ways < 2 || n <= ways || n > 3 * ways {
            return None;
        }
        let row = self.rows.get(usize::try_from(ways - 2).ok()?)?;
        row.get(usize::try_from(n - ways - 1).ok()?).copied()
    }
}

fn simulated_rates() -> &'static SimulatedRates {
    static TABLE: std::sync::OnceLock<SimulatedRates> = std::sync::OnceLock::new();
    TABLE.get_or_init(SimulatedRates::compute)
}

/// [`random_miss_rate`] where it is tabled (n ≤ 3W, W ≤ 64).
pub(crate) fn tabled_random_miss_rate(n: u64, ways: u64) -> Option<f64> {
    if n <= ways {
        return Some(0.0);
    }
    simulated_rates().get(ways, n)
}

/// Tables the simulated rates now, if not yet (a cache suite has it done on a thread of its own
/// before its turn on the GPU, so its inference finds them ready; threads it starts inherit
/// that thread's priority).
pub fn table_random_rates() {
    simulated_rates();
}

/// p = 1 − (1 − 1/W)^((n − 1)p): each of the n − 1 accesses between two uses of a line misses
/// with probability p and then evicts it with probability 1/W.
fn mean_field_random_rate(n: u64, ways: u64) -> f64 {
    let keep = 1.0 - 1.0 / ways as f64;
    let mut p: f64 = 1.0;
    for _ in 0..200 {
        let next = 1.0 - keep.powf((n - 1) as f64 * p);
        if (next - p).abs() < 1e-12 {
            break;
        }
        p = next;
    }
    p
}

fn simulate_random_set(n: u64, ways: u64) -> f64 {
    let (n, ways) = (n as usize, ways as usize);
    let mut resident: Vec<usize> = Vec::with_capacity(ways);
    let mut present = vec![false; n];
    let mut state: u64 = 0x2545_f491_4f6c_dd1d ^ (n as u64) << 32 ^ ways as u64;
    let mut misses = 0_u64;
    const WARM: usize = 16;
    const PASSES: usize = 256;
    for pass in 0..WARM + PASSES {
        for line in 0..n {
            if present[line] {
                continue;
            }
            if pass >= WARM {
                misses += 1;
            }
            present[line] = true;
            if resident.len() < ways {
                resident.push(line);
            } else {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                let victim = (state % ways as u64) as usize;
                present[resident[victim]] = false;
                resident[victim] = line;
            }
        }
    }
    misses as f64 / (PASSES * n) as f64
}

/// Misses per pass of a settled cyclic walk over lines 0..n, in order, of an LRU (or FIFO)
/// cache of `sets` × `ways` with a next-line prefetcher (each miss also fills the line after
/// it, as most recently used).
///
/// A set thrashes when more than `ways` distinct lines cycle through it; then each of its
/// lines misses unless the line before it just missed and prefetched it, so a run of
/// consecutive lines in thrashing sets misses every other line, starting with its first. The
/// walk's last line, when it misses, prefetches line n, past the footprint, into set n mod
/// sets; a set that held exactly `ways` lines then thrashes too, which holds whenever that
/// last line still misses with it thrashing (the state a cold cache settles into). Checked
/// against the simulator in the tests, for two sets or more (in a single set, LRU and FIFO
/// part ways at the size: the fit offers this family no single-set candidate).
pub fn prefetching_misses(sets: u64, ways: u64, n: u64) -> u64 {
    let (sets, ways) = (sets.max(1), ways.max(1));
    if n < sets * ways {
        return 0;
    }
    let (q, r) = (n / sets, n % sets);
    let count = |set: u64| q + u64::from(set < r);
    let walk = |phantom_set: Option<u64>| -> (u64, bool) {
        let (mut misses, mut run, mut last_missed) = (0, 0_u64, false);
        for line in 0..n {
            let set = line % sets;
            if count(set) > ways || Some(set) == phantom_set {
                last_missed = run % 2 == 0;
                misses += u64::from(last_missed);
                run += 1;
            } else {
                run = 0;
                last_missed = false;
            }
        }
        (misses, last_missed)
    };
    let past = n % sets;
    if count(past) == ways {
        let (misses, last_missed) = walk(Some(past));
        if last_missed {
            return misses;
        }
    }
    walk(None).0
}

fn gcd(mut a: u64, mut b: u64) -> u64 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// The fraction of loads that miss `c` in a chase of one load every `stride` bytes over
/// `footprint` bytes (addresses 0, stride, … below the footprint), in steady state.
pub fn miss_fraction(c: &Candidate, footprint: u64, stride: u64) -> f64 {
    miss_fraction_with(c, footprint, stride, &mut random_miss_rate)
}

/// [`miss_fraction`] with the random-replacement rate from `random` (a memo in [`fit`]). (Tree
/// pseudo-LRU needs no family of its own: once settled, a cyclic walk past its ways misses
/// every time, as under LRU; see the tests.)
pub(crate) fn miss_fraction_with(
    c: &Candidate,
    footprint: u64,
    stride: u64,
    random: &mut impl FnMut(u64, u64) -> f64,
) -> f64 {
    let loads = footprint.max(stride).div_ceil(stride);
    let b = c.line_bytes;
    // Units: the lines the chase touches, numbered so that unit u falls in set u mod sets_used.
    let (units, sets_used, per_unit, last_unit) = if stride < b {
        let units = ((loads - 1) * stride) / b + 1;
        let grain = c.sector_bytes.unwrap_or(b).max(stride);
        let per_unit = if c.sector_bytes.is_some() {
            b / grain
        } else {
            1
        };
        let last_loads = loads - (units - 1) * (b / stride);
        let last_unit = if c.sector_bytes.is_some() {
            (last_loads * stride).div_ceil(grain)
        } else {
            1
        };
        (units, c.sets, per_unit, last_unit)
    } else {
        let step = stride / b;
        (loads, c.sets / gcd(step, c.sets).max(1), 1, 1)
    };
    let sets_used = sets_used.max(1);
    if c.policy == Policy::LruNextLine && stride < b {
        return prefetching_misses(sets_used, c.ways, units) as f64 / loads as f64;
    }
    let (q, r) = (units / sets_used, units % sets_used);
    // Sets r.. hold q units, sets ..r hold q + 1; the last unit is in set (units − 1) mod sets.
    let last_in_big = r > 0;
    let misses = match c.policy {
        // At a stride of a line or more the walk never loads a prefetched line; the fit offers
        // the prefetching family below that stride only.
        Policy::Lru | Policy::LruNextLine => {
            let big = if q + 1 > c.ways { r * (q + 1) } else { 0 };
            let small = if q > c.ways { (sets_used - r) * q } else { 0 };
            let last_misses = if last_in_big {
                q + 1 > c.ways
            } else {
                q > c.ways
            };
            let mut m = (big + small) * per_unit;
            if last_misses {
                m -= per_unit - last_unit;
            }
            m as f64
        }
        Policy::Random => {
            r as f64 * (q + 1) as f64 * random(q + 1, c.ways)
                + (sets_used - r) as f64 * q as f64 * random(q, c.ways)
        }
    };
    misses / loads as f64
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::cache_model::{Geometry, Hierarchy, chase_latency};

    /// The closed-form miss fraction is the simulator's, for LRU at strides below and above
    /// the line and for sizes that are not powers of two.
    #[test]
    fn lru_miss_fractions_match_the_simulator() {
        for (sets, ways, line) in [(4, 3, 32), (8, 2, 64), (5, 4, 16), (16, 1, 32)] {
            let geometry = Geometry::new(sets * ways * line, line, ways);
            let hierarchy = Hierarchy::one_level(geometry, 0.0, 1.0);
            let candidate = Candidate {
                sets,
                ways,
                line_bytes: line,
                sector_bytes: None,
                policy: Policy::Lru,
            };
            for stride in [8, 16, 32, 64, 128] {
                for k in 1..=(3 * geometry.size_bytes / stride) {
                    let footprint = k * stride;
                    let simulated = chase_latency(&hierarchy, footprint, stride);
                    let closed = miss_fraction(&candidate, footprint, stride);
                    assert!(
                        (simulated - closed).abs() < 1e-12,
                        "{geometry:?} stride {stride} footprint {footprint}: {simulated} vs {closed}"
                    );
                }
            }
        }
    }

    /// LRU and FIFO give the same chase curve (a cyclic walk never hits a line that FIFO would
    /// keep and LRU evict), so one candidate family stands for both; random replacement's
    /// per-set rate agrees with the whole simulated cache within 0.04.
    #[test]
    fn fifo_equals_lru_and_the_random_rate_matches_a_simulation() {
        use crate::analysis::cache_model::{Replacement, chase_latency_with};
        for (sets, ways, line) in [(4_u64, 3_u64, 32_u64), (8, 4, 64), (2, 8, 16)] {
            let g = Geometry::new(sets * ways * line, line, ways);
            let hierarchy = Hierarchy::one_level(g, 0.0, 1.0);
            for k in 1..=(3 * g.size_bytes / 8) {
                let (lru, fifo) = (
                    chase_latency_with(&hierarchy, k * 8, 8, Replacement::Lru, 2),
                    chase_latency_with(&hierarchy, k * 8, 8, Replacement::Fifo, 2),
                );
                assert_eq!(lru, fifo, "{g:?} at {} B", k * 8);
            }
            let candidate = Candidate {
                sets,
                ways,
                line_bytes: line,
                sector_bytes: None,
                policy: Policy::Random,
            };
            for extra_lines in [1, ways / 2, ways, 2 * ways] {
                let footprint = g.size_bytes + extra_lines * sets * line;
                let simulated =
                    chase_latency_with(&hierarchy, footprint, line, Replacement::Random, 400);
                let closed = miss_fraction(&candidate, footprint, line);
                assert!(
                    (simulated - closed).abs() < 0.04,
                    "{g:?} at {footprint} B: simulated {simulated}, mean field {closed}"
                );
            }
        }
    }

    /// The closed-form count under a next-line prefetcher is the simulator's settled chase,
    /// LRU and FIFO alike, below, across and far past the rise, odd and even set counts.
    #[test]
    fn prefetching_misses_match_the_simulator() {
        use crate::analysis::cache_model::{Quirks, Replacement, chase_latency_quirky};
        let prefetch = Quirks {
            next_line_prefetch: true,
            ..Quirks::default()
        };
        for (sets, ways) in [
            (2, 3),
            (3, 1),
            (3, 5),
            (4, 4),
            (5, 3),
            (7, 2),
            (9, 15),
            (6, 7),
        ] {
            let line = 32;
            let g = Geometry::new(sets * ways * line, line, ways);
            let hierarchy = Hierarchy::one_level(g, 0.0, 1.0);
            let candidate = Candidate {
                sets,
                ways,
                line_bytes: line,
                sector_bytes: None,
                policy: Policy::LruNextLine,
            };
            for replacement in [Replacement::Lru, Replacement::Fifo] {
                // Every third 8-byte step: 24 B steps still reach every offset in a 32 B line.
                for k in (1..=(3 * g.size_bytes / 8 + 16)).step_by(3) {
                    let footprint = k * 8;
                    let simulated = chase_latency_quirky(
                        &hierarchy,
                        footprint,
                        8,
                        replacement,
                        prefetch,
                        (6, 2),
                    );
                    let closed = miss_fraction(&candidate, footprint, 8);
                    assert!(
                        (simulated - closed).abs() < 1e-12,
                        "{g:?} {replacement:?} at {footprint} B: {simulated} vs {closed}"
                    );
                }
            }
        }
        // Far past the size every other line misses; one line past it, the set it overfills
        // misses all its sixteen lines (their neighbours were resident: nothing to prefetch).
        assert_eq!(prefetching_misses(4, 4, 1000), 500);
        assert_eq!(prefetching_misses(9, 15, 135), 0);
        assert_eq!(prefetching_misses(9, 15, 136), 16);
    }

    #[test]
    fn the_tabled_rates_are_the_simulations_own() {
        let table = simulated_rates();
        for (ways, n) in [(2, 3), (2, 6), (4, 5), (17, 40), (64, 65), (64, 192)] {
            assert_eq!(
                table.get(ways, n),
                Some(simulate_random_set(n, ways)),
                "{ways} {n}"
            );
        }
        assert_eq!(table.get(64, 193), None);
        assert_eq!(table.get(65, 100), None);
        assert_eq!(table.get(4, 4), None);
        assert_eq!(
            table.rows.iter().map(Vec::len).sum::<usize>(),
            (2..=64).map(|w| 2 * w).sum::<usize>()
        );
    }

    #[test]
    fn random_replacement_misses_less_than_lru_past_the_capacity() {
        assert_eq!(random_miss_rate(4, 4), 0.0);
        let p = random_miss_rate(5, 4);
        assert!(p > 0.0 && p < 1.0, "{p}");
        assert!(random_miss_rate(40, 4) > 0.95);
    }

    #[test]
    fn sectored_lines_miss_once_per_sector() {
        let sectored = Candidate {
            sets: 2,
            ways: 2,
            line_bytes: 128,
            sector_bytes: Some(32),
            policy: Policy::Lru,
        };
        // Far past the capacity every sector misses once: one load in four at an 8-B stride.
        assert!((miss_fraction(&sectored, 4096, 8) - 0.25).abs() < 1e-12);
        let whole = Candidate {
            sector_bytes: None,
            ..sectored
        };
        assert!((miss_fraction(&whole, 4096, 8) - 1.0 / 16.0).abs() < 1e-12);
        assert_eq!(miss_fraction(&sectored, 512, 8), 0.0);
    }

    /// The fitted families' miss fractions are the simulated caches' steady state: a tree-PLRU
    /// cache's exactly LRU's (a settled cyclic walk past its ways misses every time, as LRU
    /// does), random replacement's within its pass-to-pass spread.
    #[test]
    fn plru_and_random_fractions_match_a_settled_simulation() {
        use crate::analysis::cache_model::{Quirks, Replacement, chase_latency_quirky};
        for (size, line, ways, replacement, policy, tolerance) in [
            (
                4096_u64,
                64_u64,
                16_u64,
                Replacement::TreePlru,
                Policy::Lru,
                1e-9,
            ),
            (6144, 32, 8, Replacement::TreePlru, Policy::Lru, 1e-9),
            (1024, 32, 4, Replacement::TreePlru, Policy::Lru, 1e-9),
            (14848, 64, 8, Replacement::Random, Policy::Random, 0.004),
        ] {
            let g = Geometry::new(size, line, ways);
            let hierarchy = Hierarchy::one_level(g, 0.0, 1.0);
            let candidate = Candidate {
                sets: size / line / ways,
                ways,
                line_bytes: line,
                sector_bytes: None,
                policy,
            };
            for k in [1.0, 1.05, 1.2, 1.6, 2.4] {
                let footprint = (size as f64 * k) as u64 / 8 * 8;
                let simulated = chase_latency_quirky(
                    &hierarchy,
                    footprint,
                    8,
                    replacement,
                    Quirks::default(),
                    (16, 8),
                );
                let model = miss_fraction(&candidate, footprint, 8);
                assert!(
                    (simulated - model).abs() <= tolerance,
                    "{g:?} {replacement:?} at {footprint} B: {simulated} vs {model}"
                );
            }
        }
    }
}
