//! What the candidates within the noise agree on: the parameters a fit states, and the twins
//! an address-order chase cannot tell from them (a next-line prefetcher's, an odd set count's,
//! sets behind a victim buffer).

use serde::Serialize;

use super::{Candidate, LINES, Policy};

/// Each geometry parameter, where every candidate within Δ ≤ 2 of the best has the same value
/// (`None` where they differ), and the values they span.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Identified {
    pub line_bytes: Option<u64>,
    pub ways: Option<u64>,
    pub sets: Option<u64>,
    /// Distinct values among those candidates, each list sorted (at most 8 kept).
    pub line_values: Vec<u64>,
    pub way_values: Vec<u64>,
    pub set_values: Vec<u64>,
    pub size_min_bytes: u64,
    pub size_max_bytes: u64,
    /// Whether the ties include a candidate's [`prefetch_twin`].
    pub prefetch_ties: bool,
    /// The line every candidate within Δ ≤ 2 has, before the twins: the bytes one miss
    /// fetches, line or line and prefetch.
    pub fetch_bytes: Option<u64>,
    /// Whether line, ways and sets are left unstated because the best candidate replaces at
    /// random: its rise is smooth, with no step per set to place the line and the ways by
    /// (the calibration study's random caches were given a wrong way count about half the
    /// time at full weight, and a wrong line in one case of ten once the ways were dropped).
    #[serde(default)]
    pub random_replacement: bool,
    /// Whether ways and sets are left open because a tie holds all its lines in one set: S
    /// sets of W ways behind a victim buffer of V ≥ S − 1 lines can chase like one set of
    /// SW + V ways (no line misses until the sets and the buffer are full, then every line
    /// does; the calibration study's LRU cache of 6 sets × 16 ways behind 10 lines hits up to
    /// 106 lines and misses every line at 107).
    #[serde(default)]
    pub victim_ties: bool,
}

/// The cache an address-order chase cannot tell from `c`: lines of half the size, twice the
/// sets, the same ways, and a next-line prefetcher. Each miss fills the line and the next, in
/// neighbouring sets that fill and evict in step, so the walk sees pairs of lines behave as
/// one line of `c` (checked against the simulator in the tests). `None` where the half line
/// would be below the stride or the smallest line tried, or `c` is sectored.
pub fn prefetch_twin(c: &Candidate, stride_bytes: u64) -> Option<Candidate> {
    let half = c.line_bytes / 2;
    (c.sector_bytes.is_none() && half >= stride_bytes.max(LINES[0])).then_some(Candidate {
        sets: 2 * c.sets,
        line_bytes: half,
        ..*c
    })
}

impl Identified {
    pub(super) fn of(close: &[Candidate]) -> Identified {
        let values = |f: &dyn Fn(&Candidate) -> u64| {
            let mut v: Vec<u64> = close.iter().map(f).collect();
            v.sort_unstable();
            v.dedup();
            v
        };
        let lines = values(&|c| c.line_bytes);
        let ways = values(&|c| c.ways);
        let sets = values(&|c| c.sets);
        let sizes = values(&|c| c.size_bytes());
        let only = |v: &[u64]| (v.len() == 1).then(|| v[0]);
        let keep = |mut v: Vec<u64>| {
            v.truncate(8);
            v
        };
        let victim_ties = close
            .iter()
            .any(|c| c.sets == 1 && c.ways >= 3 && c.policy != Policy::Random);
        Identified {
            line_bytes: only(&lines),
            ways: only(&ways).filter(|_| !victim_ties),
            sets: only(&sets).filter(|_| !victim_ties),
            line_values: keep(lines),
            way_values: keep(ways),
            set_values: keep(sets),
            size_min_bytes: sizes.first().copied().unwrap_or(0),
            size_max_bytes: sizes.last().copied().unwrap_or(0),
            prefetch_ties: false,
            fetch_bytes: None,
            random_replacement: false,
            victim_ties,
        }
    }

    /// Under random replacement only the size is stated.
    pub(super) fn without_random_geometry(self, best: &Candidate) -> Identified {
        if best.policy != Policy::Random {
            return self;
        }
        Identified {
            line_bytes: None,
            ways: None,
            sets: None,
            fetch_bytes: None,
            random_replacement: true,
            ..self
        }
    }

    /// [`Identified::of`] `close` and each one's [`prefetch_twin`], which an address-order
    /// chase cannot tell from it; the line `close` agree on is what one miss fetches.
    pub(super) fn with_prefetch_twins(close: &[Candidate], stride_bytes: u64) -> Identified {
        let twins: Vec<Candidate> = close
            .iter()
            .filter_map(|c| prefetch_twin(c, stride_bytes))
            .collect();
        // With an odd set count a cache with a next-line prefetcher chases like the plain one
        // of its own geometry at half the miss penalty (which no chase pins): one miss may
        // fetch the line or two.
        let odd = close
            .iter()
            .any(|c| c.sector_bytes.is_none() && c.policy == Policy::Lru && c.sets % 2 == 1);
        let fetch_bytes = fetch_of(close).filter(|_| !odd);
        let all: Vec<Candidate> = close.iter().chain(&twins).copied().collect();
        Identified {
            prefetch_ties: !twins.is_empty() || odd,
            fetch_bytes,
            ..Identified::of(&all)
        }
    }

    /// Whether `c` agrees with every identified parameter.
    pub(super) fn admits(&self, c: &Candidate) -> bool {
        self.line_bytes.is_none_or(|b| b == c.line_bytes)
            && self.ways.is_none_or(|w| w == c.ways)
            && self.sets.is_none_or(|s| s == c.sets)
    }
}

/// The bytes one miss fetches where every candidate of `close` fetches the same: a sector of a
/// sectored line, else the line. (Taking the line of a sectored candidate stated 64 or 128 B
/// where the miss brings in 32: wrong in 211 of the calibration study's sectored answers.)
pub(super) fn fetch_of(close: &[Candidate]) -> Option<u64> {
    let first = close.first()?;
    let fetch = |c: &Candidate| c.sector_bytes.unwrap_or(c.line_bytes);
    close
        .iter()
        .all(|c| fetch(c) == fetch(first))
        .then(|| fetch(first))
}
