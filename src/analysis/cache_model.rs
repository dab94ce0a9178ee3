//! A simulated memory hierarchy for testing cache inference: inclusive levels of
//! set-associative LRU caches in front of memory, walked by the same fixed-stride chase the
//! GPU runs (every address of the footprint at the stride, in order, twice: the first pass
//! warms, the second is averaged).

use std::collections::VecDeque;

use super::cache_inference::ChasePoint;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Geometry {
    pub size_bytes: u64,
    pub line_bytes: u64,
    pub ways: u64,
}

impl Geometry {
    /// Wong et al.'s Fig. 4 cache: 384 B in 3 ways of 4 sets, 32-byte lines.
    pub const WONG_FIG_4: Geometry = Geometry {
        size_bytes: 384,
        line_bytes: 32,
        ways: 3,
    };

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
}

impl Hierarchy {
    /// One cache, hit in `hit` cycles, in front of memory.
    pub fn one_level(cache: Geometry, hit: f64, memory_latency: f64) -> Hierarchy {
        Hierarchy {
            levels: vec![(cache, hit)],
            memory_latency,
        }
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
}

struct Cache {
    geometry: Geometry,
    replacement: Replacement,
    /// Per set, resident lines; under LRU the most recently used is at the back, under FIFO
    /// the newest.
    sets: Vec<VecDeque<u64>>,
    /// xorshift state for random replacement.
    state: u64,
}

impl Cache {
    fn new(geometry: Geometry, replacement: Replacement) -> Cache {
        Cache {
            geometry,
            replacement,
            sets: vec![VecDeque::new(); geometry.sets().max(1) as usize],
            state: 0x9e37_79b9_7f4a_7c15,
        }
    }

    /// Looks `address` up; on a miss the line is filled, evicting one by the replacement policy.
    fn access(&mut self, address: u64) -> bool {
        let line = address / self.geometry.line_bytes;
        let set = &mut self.sets[(line % self.geometry.sets().max(1)) as usize];
        if let Some(position) = set.iter().position(|&l| l == line) {
            if self.replacement == Replacement::Lru {
                set.remove(position);
                set.push_back(line);
            }
            return true;
        }
        if set.len() as u64 >= self.geometry.ways {
            let victim = match self.replacement {
                Replacement::Lru | Replacement::Fifo => 0,
                Replacement::Random => {
                    self.state ^= self.state << 13;
                    self.state ^= self.state >> 7;
                    self.state ^= self.state << 17;
                    (self.state % set.len() as u64) as usize
                }
            };
            set.remove(victim);
        }
        set.push_back(line);
        false
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
    let mut caches: Vec<Cache> = hierarchy
        .levels
        .iter()
        .map(|(g, _)| Cache::new(*g, replacement))
        .collect();
    let addresses: Vec<u64> = (0..footprint_bytes.max(stride_bytes))
        .step_by(stride_bytes as usize)
        .collect();
    let mut total = 0.0;
    for pass in 0..=passes {
        for &address in &addresses {
            let mut latency = hierarchy.memory_latency;
            let mut found = false;
            for (cache, (_, hit)) in caches.iter_mut().zip(&hierarchy.levels) {
                // Every level is looked up (and filled on a miss): the levels stay inclusive.
                let hit_here = cache.access(address);
                if hit_here && !found {
                    latency = *hit;
                    found = true;
                }
            }
            if pass > 0 {
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
}
