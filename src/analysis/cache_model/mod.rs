//! A simulated memory hierarchy for testing cache inference: inclusive levels of
//! set-associative caches in front of memory, walked by the same fixed-stride chase the GPU
//! runs (every address of the footprint at the stride, in order, twice: the first pass warms,
//! the second is averaged). Besides LRU, the calibration study (`analysis::calibration`) uses
//! replacement, indexing and prefetching the fitted families do not all contain: FIFO, random,
//! tree and bit pseudo-LRU, SRRIP, bimodal insertion, a hashed set index, a next-line
//! prefetcher, a victim buffer, sectored lines.

use std::collections::{HashMap, VecDeque};

mod sets;

pub use sets::{BitsPolicy, BitsSet, PlruSet};

use super::chase::ChasePoint;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Geometry {
    pub size_bytes: u64,
    pub line_bytes: u64,
    pub ways: u64,
}

impl Geometry {
    pub const fn new(size_bytes: u64, line_bytes: u64, ways: u64) -> Geometry {
        Geometry {
            size_bytes,
            line_bytes,
            ways,
        }
    }

    /// Wong et al.'s Fig. 4 cache: 384 B in 3 ways of 4 sets, 32-byte lines.
    pub const WONG_FIG_4: Geometry = Geometry::new(384, 32, 3);

    pub fn sets(&self) -> u64 {
        self.size_bytes / (self.line_bytes * self.ways)
    }

    pub fn way_bytes(&self) -> u64 {
        self.size_bytes / self.ways
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Hierarchy {
    /// Fastest first: each cache and the latency of a hit in it.
    pub levels: Vec<(Geometry, f64)>,
    pub memory_latency: f64,
    /// How much a miss's cost moves with the line that misses (its DRAM row, its partition):
    /// the standard deviation, in cycles, of a per-line offset to `memory_latency` that stays
    /// the same every time the line misses. 0: every miss costs the same.
    pub memory_spread_cycles: f64,
}

impl Hierarchy {
    /// One cache, hit in `hit` cycles, in front of memory.
    pub fn one_level(cache: Geometry, hit: f64, memory_latency: f64) -> Hierarchy {
        Hierarchy {
            levels: vec![(cache, hit)],
            memory_latency,
            memory_spread_cycles: 0.0,
        }
    }

    /// The cost of a miss to memory at `address`: the latency, and the line's own offset
    /// (a hash of its number, spread evenly with unit variance, times the spread).
    fn memory_cost(&self, address: u64) -> f64 {
        if self.memory_spread_cycles == 0.0 {
            return self.memory_latency;
        }
        let line = self.levels.first().map_or(1, |(g, _)| g.line_bytes.max(1));
        // SplitMix64's finaliser: neighbouring lines get unrelated offsets.
        let mut z = (address / line).wrapping_add(0x9e37_79b9_7f4a_7c15);
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^= z >> 31;
        let uniform = (z >> 11) as f64 / (1_u64 << 53) as f64;
        self.memory_latency + self.memory_spread_cycles * 3_f64.sqrt() * (2.0 * uniform - 1.0)
    }
}

/// Which resident line a full set gives up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Replacement {
    /// The least recently used.
    Lru,
    /// The longest resident (hits do not refresh a line).
    Fifo,
    /// A uniformly random one (a fixed-seed generator, so runs repeat).
    Random,
    /// Tree pseudo-LRU: a binary tree of bits per set points away from the most recently
    /// touched half at every level; the victim is where the bits lead (ways a power of two).
    TreePlru,
    /// Bit pseudo-LRU ([`BitsPolicy::BitPlru`]).
    BitPlru,
    /// Static re-reference interval prediction ([`BitsPolicy::Srrip`]).
    Srrip,
    /// Bimodal insertion (Qureshi et al., ISCA 2007): LRU order, but a filled line enters at
    /// the least recently used end, and only every 32nd at the most recent: what adaptive
    /// insertion switches to when a working set thrashes.
    Bip,
}

/// Every `BIP_EPSILON`th fill of a bimodal-insertion set enters as most recently used.
const BIP_EPSILON: u64 = 32;

/// Departures from a plain modulo-indexed, demand-filled cache.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Quirks {
    /// The set is the line number with its upper bits folded in, not the line modulo sets.
    pub hashed_index: bool,
    /// A miss also fills the next line.
    pub next_line_prefetch: bool,
    /// Lines of a fully associative LRU victim buffer that catches what the sets evict (a hit
    /// there is a hit, and the line moves back into its set); 0 for none.
    pub victim_lines: u64,
    /// Sectored lines: one tag per line, data fetched and valid per sector of this many bytes,
    /// so a resident line still misses on each sector it has not fetched.
    pub sector_bytes: Option<u64>,
}

struct Cache {
    geometry: Geometry,
    replacement: Replacement,
    quirks: Quirks,
    /// Per set, resident lines; under LRU the most recently used is at the back, under FIFO
    /// the newest.
    sets: Vec<VecDeque<u64>>,
    /// Per set, under tree pseudo-LRU.
    plru: Vec<PlruSet>,
    /// Per set, under bit pseudo-LRU or SRRIP.
    bits: Vec<BitsSet>,
    /// The victim buffer, most recently used at the back.
    victims: VecDeque<u64>,
    /// Per resident line of a sectored cache, the sectors it holds (a line's entry is
    /// overwritten when it is filled again, so an evicted line's stale entry does no harm).
    sectors: HashMap<u64, u64>,
    /// xorshift state for random replacement and bimodal insertion.
    state: u64,
    /// Fills so far, for bimodal insertion.
    fills: u64,
}

impl Cache {
    fn new(geometry: Geometry, replacement: Replacement, quirks: Quirks) -> Cache {
        let sets = geometry.sets().max(1) as usize;
        Cache {
            geometry,
            replacement,
            quirks,
            sets: vec![VecDeque::new(); sets],
            plru: vec![PlruSet::new(geometry.ways as usize); sets],
            bits: match replacement {
                Replacement::BitPlru => {
                    vec![BitsSet::new(BitsPolicy::BitPlru, geometry.ways as usize); sets]
                }
                Replacement::Srrip => {
                    vec![BitsSet::new(BitsPolicy::Srrip, geometry.ways as usize); sets]
                }
                _ => Vec::new(),
            },
            victims: VecDeque::new(),
            sectors: HashMap::new(),
            state: 0x9e37_79b9_7f4a_7c15,
            fills: 0,
        }
    }

    fn next_random(&mut self) -> u64 {
        self.state ^= self.state << 13;
        self.state ^= self.state >> 7;
        self.state ^= self.state << 17;
        self.state
    }

    fn set_of(&self, line: u64) -> usize {
        let sets = self.geometry.sets().max(1);
        if !self.quirks.hashed_index {
            return (line % sets) as usize;
        }
        // The line's upper bits, scrambled, folded into the index: XORed where the sets are a
        // power of two, added otherwise, so that within each aligned block of `sets` lines the
        // hash is a permutation of the sets, as a hardware index hash is. (An XOR taken modulo
        // a count that is no power of two is not: it sent some sets two lines of a block and
        // others none, a smaller cache in effect.)
        let fold = (line / sets).wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 40;
        let index = if sets.is_power_of_two() {
            line ^ fold
        } else {
            line % sets + fold % sets
        };
        (index % sets) as usize
    }

    /// Looks `address` up; on a miss the line is filled (and, with a next-line prefetcher,
    /// the line after it).
    fn access(&mut self, address: u64) -> bool {
        let line = address / self.geometry.line_bytes;
        let mut hit = self.access_line(line);
        if let Some(sector_bytes) = self.quirks.sector_bytes {
            let sector = 1_u64 << ((address % self.geometry.line_bytes) / sector_bytes.max(1));
            let held = self.sectors.entry(line).or_insert(0);
            if !hit {
                *held = 0;
            }
            hit = hit && *held & sector != 0;
            *held |= sector;
        }
        if !hit && self.quirks.next_line_prefetch {
            self.access_line(line + 1);
        }
        hit
    }

    /// Looks `line` up in its set and then the victim buffer; on a miss in both it is filled
    /// into its set, and what the set evicts goes to the victim buffer.
    fn access_line(&mut self, line: u64) -> bool {
        let (hit, evicted) = self.access_set(line);
        if self.quirks.victim_lines == 0 {
            return hit;
        }
        let from_victims = !hit
            && match self.victims.iter().position(|&l| l == line) {
                Some(position) => {
                    self.victims.remove(position);
                    true
                }
                None => false,
            };
        if let Some(evicted) = evicted {
            self.victims.push_back(evicted);
            if self.victims.len() as u64 > self.quirks.victim_lines {
                self.victims.pop_front();
            }
        }
        hit || from_victims
    }

    /// Looks `line` up in its set; on a miss it is filled, evicting one by the replacement
    /// policy, which is returned.
    fn access_set(&mut self, line: u64) -> (bool, Option<u64>) {
        let index = self.set_of(line);
        match self.replacement {
            Replacement::TreePlru => return self.plru[index].access(line),
            Replacement::BitPlru | Replacement::Srrip => return self.bits[index].access(line),
            _ => {}
        }
        // Drawn only when a random set evicts, so that runs repeat as they did before.
        let full = self.sets[index].len() as u64 >= self.geometry.ways;
        let random = if full && self.replacement == Replacement::Random {
            self.next_random()
        } else {
            0
        };
        let set = &mut self.sets[index];
        if let Some(position) = set.iter().position(|&l| l == line) {
            if matches!(self.replacement, Replacement::Lru | Replacement::Bip) {
                set.remove(position);
                set.push_back(line);
            }
            return (true, None);
        }
        let mut evicted = None;
        if full {
            let victim = match self.replacement {
                Replacement::Random => (random % set.len() as u64) as usize,
                _ => 0,
            };
            evicted = set.remove(victim);
        }
        self.fills += 1;
        if self.replacement == Replacement::Bip && !self.fills.is_multiple_of(BIP_EPSILON) {
            set.push_front(line);
        } else {
            set.push_back(line);
        }
        (false, evicted)
    }
}

/// Average cycles per load of a stride chase over `footprint_bytes` (LRU caches).
pub fn chase_latency(hierarchy: &Hierarchy, footprint_bytes: u64, stride_bytes: u64) -> f64 {
    chase_latency_with(
        hierarchy,
        footprint_bytes,
        stride_bytes,
        Replacement::Lru,
        1,
    )
}

/// [`chase_latency`] under `replacement`, averaged over `passes` passes after the warm one
/// (random replacement needs many to settle to its mean).
pub fn chase_latency_with(
    hierarchy: &Hierarchy,
    footprint_bytes: u64,
    stride_bytes: u64,
    replacement: Replacement,
    passes: u32,
) -> f64 {
    chase_latency_quirky(
        hierarchy,
        footprint_bytes,
        stride_bytes,
        replacement,
        Quirks::default(),
        (1, passes),
    )
}

/// [`chase_latency_with`] with `quirks`, after `passes.0` warm passes (random and tree-PLRU
/// sets take several to settle), averaged over `passes.1`.
pub fn chase_latency_quirky(
    hierarchy: &Hierarchy,
    footprint_bytes: u64,
    stride_bytes: u64,
    replacement: Replacement,
    quirks: Quirks,
    passes: (u32, u32),
) -> f64 {
    chase_latency_directed(
        hierarchy,
        footprint_bytes,
        stride_bytes,
        replacement,
        quirks,
        passes,
        Direction::Ascending,
    )
}

/// Which way a stride chase walks its footprint.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Direction {
    /// Address order (Wong et al.): a next-line prefetcher fetches what the walk loads next.
    #[default]
    Ascending,
    /// From the top address down: the line after a miss is the one just loaded, so a next-line
    /// prefetcher brings in nothing new.
    Descending,
}

/// [`chase_latency_quirky`] walking the footprint in `direction`.
pub fn chase_latency_directed(
    hierarchy: &Hierarchy,
    footprint_bytes: u64,
    stride_bytes: u64,
    replacement: Replacement,
    quirks: Quirks,
    (warm, passes): (u32, u32),
    direction: Direction,
) -> f64 {
    let mut caches: Vec<Cache> = hierarchy
        .levels
        .iter()
        .map(|(g, _)| Cache::new(*g, replacement, quirks))
        .collect();
    let mut addresses: Vec<u64> = (0..footprint_bytes.max(stride_bytes))
        .step_by(stride_bytes as usize)
        .collect();
    if direction == Direction::Descending {
        addresses.reverse();
    }
    let mut total = 0.0;
    for pass in 0..warm + passes {
        for &address in &addresses {
            let mut latency = hierarchy.memory_cost(address);
            let mut found = false;
            for (cache, (_, hit)) in caches.iter_mut().zip(&hierarchy.levels) {
                // Every level is looked up (and filled on a miss): the levels stay inclusive.
                let hit_here = cache.access(address);
                if hit_here && !found {
                    latency = *hit;
                    found = true;
                }
            }
            if pass >= warm {
                total += latency;
            }
        }
    }
    total / (addresses.len() as f64 * f64::from(passes))
}

/// The chase curve over every multiple of `stride_bytes` up to `up_to_bytes`, as a GPU sweep
/// at the finest step would give it.
pub fn sweep(hierarchy: &Hierarchy, stride_bytes: u64, up_to_bytes: u64) -> Vec<ChasePoint> {
    (1..=up_to_bytes / stride_bytes)
        .map(|k| k * stride_bytes)
        .map(|footprint| ChasePoint {
            footprint_bytes: footprint,
            stride_bytes,
            cycles: chase_latency(hierarchy, footprint, stride_bytes),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Wong et al.'s Fig. 4: 384 B, 3 ways, 4 sets of 32 B lines.
    #[test]
    fn the_papers_example_steps_once_per_set() {
        let cache = Geometry::WONG_FIG_4;
        let hierarchy = Hierarchy::one_level(cache, 10.0, 100.0);
        assert_eq!(chase_latency(&hierarchy, 384, 8), 10.0);
        let at = |n| chase_latency(&hierarchy, n, 8);
        assert!(at(392) > at(384), "the first set overflows past 384 B");
        assert!(at(424) > at(416), "then the next, one line later");
        // Past 512 B (the way size beyond the capacity) every line misses once per pass.
        assert!((at(544) - at(1024)).abs() < 1e-9);
        assert!((at(1024) - (100.0 + 3.0 * 10.0) / 4.0).abs() < 1e-9);
    }

    /// Once settled, a cyclic walk past a tree-PLRU set's ways misses every time, as under
    /// LRU (so the two fit alike); in the first passes after a cold start it does not. A
    /// prefetcher changes the curve; a hashed index only where the stride skips lines.
    #[test]
    fn quirks_change_the_chase() {
        let g = Geometry::new(2048, 64, 4);
        let h = Hierarchy::one_level(g, 0.0, 1.0);
        let at = |replacement, quirks| {
            chase_latency_quirky(&h, 2048 + 8 * 64, 64, replacement, quirks, (4, 4))
        };
        let plain = Quirks::default();
        let lru = at(Replacement::Lru, plain);
        assert_eq!(at(Replacement::TreePlru, plain), lru);
        let sixteen_ways = Hierarchy::one_level(Geometry::new(4096, 64, 16), 0.0, 1.0);
        let cold =
            |replacement| chase_latency_quirky(&sixteen_ways, 4296, 8, replacement, plain, (1, 8));
        assert!(cold(Replacement::TreePlru) < cold(Replacement::Lru));
        let prefetch = Quirks {
            next_line_prefetch: true,
            ..plain
        };
        assert!(at(Replacement::Lru, prefetch) != lru);
        // A hashed index permutes the sets within each aligned block of lines, so a walk line
        // by line fills them as the modulo index does; a walk of every other line, which the
        // modulo index keeps in half the sets, reaches the others.
        let hashed = Quirks {
            hashed_index: true,
            ..plain
        };
        assert_eq!(at(Replacement::Lru, hashed), lru);
        let six_sets = Hierarchy::one_level(Geometry::new(6 * 4 * 64, 64, 4), 0.0, 1.0);
        for footprint in (64..=3 * 1536).step_by(64) {
            let walk = |quirks| {
                chase_latency_quirky(&six_sets, footprint, 16, Replacement::Lru, quirks, (2, 2))
            };
            assert_eq!(walk(hashed), walk(plain), "{footprint} B over six sets");
        }
        let every_other =
            |quirks| chase_latency_quirky(&h, 2048 + 8 * 64, 128, Replacement::Lru, quirks, (1, 1));
        assert!(every_other(hashed) < every_other(plain));
    }

    /// A victim buffer of V lines catches the line each overflowing LRU set evicts, which is
    /// the one that set needs next: a chase fits until V sets overflow at once. Sectored lines
    /// miss once per sector, so past the size a walk at the sector's stride misses every load.
    /// Bimodal insertion keeps most of a set that a cyclic walk overflows, where LRU keeps none;
    /// bit pseudo-LRU and SRRIP fall between.
    #[test]
    fn victims_sectors_and_insertion_change_the_chase() {
        let h = Hierarchy::one_level(Geometry::WONG_FIG_4, 0.0, 1.0);
        let at = |footprint, replacement, quirks| {
            chase_latency_quirky(&h, footprint, 32, replacement, quirks, (4, 4))
        };
        let plain = Quirks::default();
        let victims = Quirks {
            victim_lines: 2,
            ..plain
        };
        assert!(at(384 + 32, Replacement::Lru, plain) > 0.0);
        assert_eq!(at(384 + 64, Replacement::Lru, victims), 0.0);
        assert!(at(384 + 96, Replacement::Lru, victims) > 0.0);
        let sectored = Quirks {
            sector_bytes: Some(8),
            ..plain
        };
        let walk = |footprint, quirks| {
            chase_latency_quirky(&h, footprint, 8, Replacement::Lru, quirks, (2, 2))
        };
        assert_eq!(walk(384, sectored), 0.0);
        assert_eq!(walk(4096, sectored), 1.0);
        assert_eq!(walk(4096, plain), 0.25);
        let lru = at(384 + 32, Replacement::Lru, plain);
        let bip = at(384 + 32, Replacement::Bip, plain);
        assert!(bip < lru, "{bip} against {lru}");
        for replacement in [Replacement::BitPlru, Replacement::Srrip] {
            assert_eq!(at(384, replacement, plain), 0.0, "{replacement:?}");
            assert!(at(4 * 384, replacement, plain) > 0.0, "{replacement:?}");
        }
    }

    /// A descending walk defeats a next-line prefetcher: the line after a miss is the one just
    /// loaded, so a prefetching cache chases as its plain self, but for the one line past the
    /// top that each pass's first miss prefetches (at most a line's worth of misses spread
    /// over the footprint). Without a prefetcher the two directions are the same, and far past
    /// the size the prefetcher halves the ascending walk's misses, whatever the set count.
    #[test]
    fn a_descending_chase_sees_through_a_next_line_prefetcher() {
        let prefetch = Quirks {
            next_line_prefetch: true,
            ..Quirks::default()
        };
        for (sets, ways, line) in [(4_u64, 4_u64, 64_u64), (5, 4, 64), (7, 3, 32)] {
            let geometry = Geometry::new(sets * ways * line, line, ways);
            let h = Hierarchy::one_level(geometry, 0.0, 1.0);
            let at = |footprint, quirks, direction| {
                chase_latency_directed(
                    &h,
                    footprint,
                    8,
                    Replacement::Lru,
                    quirks,
                    (2, 2),
                    direction,
                )
            };
            for footprint in (8..=3 * geometry.size_bytes).step_by(8) {
                let plain = at(footprint, Quirks::default(), Direction::Descending);
                assert_eq!(
                    plain,
                    at(footprint, Quirks::default(), Direction::Ascending),
                    "{geometry:?} at {footprint} B"
                );
                let fetching = at(footprint, prefetch, Direction::Descending);
                let one_line = line as f64 / footprint as f64;
                assert!(
                    (fetching - plain).abs() <= one_line + 1e-12,
                    "{geometry:?} at {footprint} B: {fetching} against {plain}"
                );
            }
            let far = 8 * geometry.size_bytes;
            assert_eq!(
                at(far, prefetch, Direction::Descending),
                2.0 * at(far, prefetch, Direction::Ascending),
                "{geometry:?}"
            );
        }
    }
}
