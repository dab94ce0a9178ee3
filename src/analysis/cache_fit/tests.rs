use super::*;
use crate::analysis::cache_model::{Geometry, Hierarchy};

/// The tests that take many seconds unoptimised: the README's `cargo test` skips them,
/// `.ci/run` runs them as a step of their own.
mod slow {
    use super::*;

    /// A next-line prefetcher's cache and its twin (lines twice as long, half the sets) give
    /// an address-order chase the same curve, under every replacement that is not random.
    #[test]
    #[ignore = "slow: `.ci/run` runs it (cargo test -- --ignored slow::)"]
    fn a_prefetcher_and_its_twin_chase_alike() {
        use crate::analysis::cache_model::{Quirks, Replacement, chase_latency_quirky};
        for (sets, ways, line) in [(4, 4, 64), (8, 2, 128), (16, 8, 64), (6, 3, 64)] {
            let seen = Candidate {
                sets,
                ways,
                line_bytes: line,
                sector_bytes: None,
                policy: Policy::Lru,
            };
            let twin = prefetch_twin(&seen, 8).unwrap();
            assert_eq!(
                (twin.line_bytes, twin.sets, twin.ways),
                (line / 2, 2 * sets, ways)
            );
            assert_eq!(twin.size_bytes(), seen.size_bytes());
            let one_level = |c: &Candidate| {
                Hierarchy::one_level(
                    Geometry::new(c.size_bytes(), c.line_bytes, c.ways),
                    0.0,
                    1.0,
                )
            };
            let prefetch = Quirks {
                next_line_prefetch: true,
                ..Quirks::default()
            };
            for replacement in [Replacement::Lru, Replacement::Fifo, Replacement::TreePlru] {
                if replacement == Replacement::TreePlru && !ways.is_power_of_two() {
                    continue;
                }
                for footprint in (8..=3 * seen.size_bytes()).step_by(8) {
                    let plain = chase_latency_quirky(
                        &one_level(&seen),
                        footprint,
                        8,
                        replacement,
                        Quirks::default(),
                        (4, 2),
                    );
                    let fetching = chase_latency_quirky(
                        &one_level(&twin),
                        footprint,
                        8,
                        replacement,
                        prefetch,
                        (4, 2),
                    );
                    assert_eq!(plain, fetching, "{seen:?} {replacement:?} at {footprint} B");
                }
            }
        }
        let smallest = Candidate {
            sets: 4,
            ways: 2,
            line_bytes: 32,
            sector_bytes: None,
            policy: Policy::Lru,
        };
        assert!(
            prefetch_twin(&smallest, 32).is_none(),
            "half a line below the stride"
        );
        assert!(prefetch_twin(&smallest, 8).is_some());
    }
}
