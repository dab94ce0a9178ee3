//! The model fit (`analysis::cache_fit`) on chases swept as the GPU sweeps them
//! ([`super::sweep`]): simulated caches with noise and outliers, read back exactly.

use crate::analysis::cache_inference::{CacheLevel, ChasePoint};
use crate::analysis::cache_model::{Geometry, Hierarchy, chase_latency};

use super::{RiseThreshold, Space, sweep};

/// A simulated chase swept as the GPU is (the cache suite's sweep, four coarse points a
/// doubling, then the rise densely) with Gaussian noise of `sigma` cycles and, at every
/// `outlier_every`-th point, a 40-cycle outlier.
fn noisy_sweep(
    hierarchy: &Hierarchy,
    stride: u64,
    smallest: u64,
    largest: u64,
    sigma: f64,
    outlier_every: usize,
    seed: u64,
) -> Vec<ChasePoint> {
    use rand::{RngExt, SeedableRng, rngs::StdRng};
    let mut rng = StdRng::seed_from_u64(seed);
    let mut count = 0;
    let threshold = RiseThreshold::of(Space::Global);
    sweep(threshold, stride, smallest, largest, 1024, |footprint| {
        count += 1;
        // Box-Muller: two uniforms give one standard normal.
        let (u, v): (f64, f64) = (rng.random::<f64>().max(1e-12), rng.random());
        let normal = (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos();
        let outlier = if outlier_every > 0 && count % outlier_every == 0 {
            40.0
        } else {
            0.0
        };
        Ok(chase_latency(hierarchy, footprint, stride) + sigma * normal + outlier)
    })
    .unwrap()
    .points
}

/// The size within a line; a line or way count, where one is stated, exact (a parameter the
/// fit cannot tell apart is left unstated, and says so).
fn assert_level(level: &CacheLevel, g: Geometry) {
    let size = level.size_bytes.unwrap();
    assert!(
        size.abs_diff(g.size_bytes) <= g.line_bytes,
        "size {size} vs {g:?}: {level:?}"
    );
    assert!(
        level.line_bytes.is_none_or(|b| b == g.line_bytes),
        "{g:?}: {level:?}"
    );
    assert!(
        level.fetch_bytes.is_none_or(|b| b == g.line_bytes),
        "{g:?}: {level:?}"
    );
    assert!(level.ways.is_none_or(|w| w == g.ways), "{g:?}: {level:?}");
    for (stated, name) in [
        (level.line_bytes.or(level.fetch_bytes).is_some(), "line"),
        (level.ways.is_some(), "ways"),
    ] {
        assert!(
            stated || level.unidentified.iter().any(|u| u.starts_with(name)),
            "{name} neither stated nor said to be open: {level:?}"
        );
    }
}

/// [`assert_level`], and every parameter stated.
fn assert_identified(level: &CacheLevel, g: Geometry) {
    assert_level(level, g);
    // No prefetcher here: what one miss fetches is the line, stated as such where half of
    // it would be below the smallest line tried.
    assert_eq!(
        level.line_bytes.or(level.fetch_bytes),
        Some(g.line_bytes),
        "{g:?}: {level:?}"
    );
    assert_eq!(level.ways, Some(g.ways), "{g:?}: {level:?}");
}

#[test]
fn a_clean_curve_fits_one_geometry_with_high_confidence_and_outliers_do_not_move_it() {
    let g = Geometry::new(12 << 10, 64, 6);
    let hierarchy = Hierarchy::one_level(g, 30.0, 300.0);
    let clean = noisy_sweep(&hierarchy, 16, 2 << 10, 32 << 10, 0.0, 0, 1);
    let level = &crate::analysis::cache_inference::infer(&clean)
        .unwrap()
        .levels[0];
    assert_identified(level, g);
    assert!(level.raw_confidence > 0.99, "{level:?}");
    let noisy = noisy_sweep(&hierarchy, 16, 2 << 10, 32 << 10, 1.0, 37, 2);
    let level = &crate::analysis::cache_inference::infer(&noisy)
        .unwrap()
        .levels[0];
    assert_level(level, g);
}

/// A 6-way L1D as #76's GPGPU-Sim derivative configures it (64 sets x 6 ways x 128 B =
/// 49,152 B), chased at its line as the simulator's runs chase (`--stride 128 --fine-points
/// 16`), with no noise: the fit states the whole geometry, as it does for power-of-two way
/// counts (the candidates hold every way count to 64 and every set count). A simulated run
/// that states only the capacity interval got there from its data, not from the way count.
#[test]
fn a_six_way_cache_chased_at_its_line_states_line_ways_and_sets() {
    let g = Geometry::new(64 * 6 * 128, 128, 6);
    let hierarchy = Hierarchy::one_level(g, 24.14, 193.06);
    let threshold = RiseThreshold::of(Space::Global);
    let points = sweep(threshold, 128, 4096, 2 * g.size_bytes, 16, |footprint| {
        Ok(chase_latency(&hierarchy, footprint, 128))
    })
    .unwrap()
    .points;
    let level = &crate::analysis::cache_inference::infer(&points)
        .unwrap()
        .levels[0];
    assert_eq!(level.basis, "fit", "{level:?}");
    assert_eq!(level.size_bytes, Some(g.size_bytes), "{level:?}");
    assert_eq!(
        (level.line_bytes, level.ways, level.sets),
        (Some(128), Some(6), Some(64)),
        "{level:?}"
    );
    assert!(!level.size_is_interval, "{level:?}");
    assert!(level.confidence > 0.9, "{level:?}");
}

/// The tests that take many seconds unoptimised: the README's `cargo test` skips them,
/// `.ci/run` runs them as a step of their own.
mod slow {
    use super::*;

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig {
            // Fixed: 24 cases of seed 11 (PROPTEST_CASES, proptest's own variable, does not
            // override a config that names its cases; raise them here for a longer study).
            cases: 24,
            rng_seed: proptest::test_runner::RngSeed::Fixed(11),
            ..proptest::prelude::ProptestConfig::default()
        })]
        /// LRU caches of 1 to 64 KiB, 2 to 32 ways, 32- to 128-byte lines, swept at a quarter
        /// or an eighth of a line with up to 1 cycle of noise: line and ways exact, size within
        /// a line (the `analyze cache` path: `infer` on the points). Fixed seeds (raise
        /// the cases above for more). Over 600 random cases of this
        /// distribution 598 came out exact; the two others (noise near 1 cycle, 31 and 15 ways)
        /// said so, with confidence 0.001 and 0.78.
        #[test]
        #[ignore = "slow: `.ci/run` runs it (cargo test -- --ignored slow::)"]
        fn noisy_lru_caches_are_read_exactly(
            line_log in 5_u32..=7,
            ways in 2_u64..=32,
            sets in 1_u64..=64,
            eighth in proptest::bool::ANY,
            sigma in 0.0_f64..=1.0,
            hit in 20.0_f64..60.0,
            extra in 100.0_f64..500.0,
            seed in 0_u64..1000,
        ) {
            let line = 1_u64 << line_log;
            let g = Geometry::new(sets * ways * line, line, ways);
            proptest::prop_assume!((1 << 10..=64 << 10).contains(&g.size_bytes));
            let stride = if eighth { line / 8 } else { line / 4 };
            let smallest = (g.size_bytes / 8).next_power_of_two();
            let hierarchy = Hierarchy::one_level(g, hit, hit + extra);
            let points = noisy_sweep(&hierarchy, stride, smallest, smallest << 4, sigma, 0, seed);
            let report = crate::analysis::cache_inference::infer(&points).unwrap();
            assert_level(&report.levels[0], g);
        }
    }

    /// Two levels, each read exactly: an L1 in front of an L2 at least eight times larger.
    #[test]
    #[ignore = "slow: `.ci/run` runs it (cargo test -- --ignored slow::)"]
    fn two_level_hierarchies_are_read_level_by_level() {
        for (seed, (l1, l2)) in [
            ((2 << 10, 32, 4), (32 << 10, 64, 8)),
            ((4 << 10, 64, 2), (48 << 10, 128, 12)),
            ((1 << 10, 32, 8), (16 << 10, 32, 16)),
        ]
        .into_iter()
        .enumerate()
        {
            let g1 = Geometry::new(l1.0, l1.1, l1.2);
            let g2 = Geometry::new(l2.0, l2.1, l2.2);
            let hierarchy = Hierarchy {
                levels: vec![(g1, 25.0), (g2, 150.0)],
                memory_latency: 500.0,
                memory_spread_cycles: 0.0,
            };
            let points = noisy_sweep(&hierarchy, 8, 256, 256 << 10, 0.5, 0, seed as u64);
            let report = crate::analysis::cache_inference::infer(&points).unwrap();
            assert_eq!(report.levels.len(), 3, "{report:?}");
            assert_level(&report.levels[0], g1);
            assert_level(&report.levels[1], g2);
        }
    }
}
