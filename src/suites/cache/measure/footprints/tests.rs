use super::*;
/// A two-level L2-like curve (a near and a far half, then memory) swept as the L2 is: the
/// bisections stop at 1/512 of the footprint, so each of the two edges (whose three
/// bisections share one path on a sharp step) takes several halvings fewer, and both
/// edges still come out within 1 % of the simulated sizes.
#[test]
fn a_coarser_bisection_keeps_both_edges_of_a_partitioned_cache() {
    let stride = 128;
    let (near, far) = (24_u64 << 20, 48_u64 << 20);
    let curve = |footprint: u64| -> f64 {
        if footprint <= near {
            280.0
        } else if footprint <= far {
            530.0
        } else {
            670.0
        }
    };
    let run = |relative_resolution: f64| {
        sweep_with(
            RiseThreshold::of(Space::L2),
            Grid {
                stride,
                relative_resolution,
            },
            256 << 10,
            128 << 20,
            4,
            &mut |f| Ok(curve(f)),
        )
        .unwrap()
    };
    let exact = run(0.0);
    let coarse = run(1.0 / 512.0);
    assert!(
        coarse.points.len() + 2 * 6 <= exact.points.len(),
        "{} points against {}",
        coarse.points.len(),
        exact.points.len()
    );
    let report = crate::analysis::cache_inference::infer(&coarse.points).unwrap();
    let sizes: Vec<u64> = report.levels.iter().filter_map(|l| l.size_bytes).collect();
    assert_eq!(sizes.len(), 2, "{sizes:?}");
    for (size, truth) in sizes.iter().zip([near, far]) {
        assert!(
            size.abs_diff(truth) * 100 <= truth,
            "{size} against {truth}"
        );
    }
}

/// A probe that prepares ahead sees the same points as one that does not, and every
/// footprint it measures was prepared first (none waits for its own compile).
#[test]
fn preparing_ahead_changes_no_point_and_leaves_nothing_unprepared() {
    struct Recording<F> {
        curve: F,
        prepared: std::collections::HashSet<u64>,
        batches: usize,
        unprepared: Vec<u64>,
    }
    impl<F: Fn(u64) -> f64> Probe for Recording<F> {
        fn measure(&mut self, footprint: u64) -> Result<f64> {
            if !self.prepared.contains(&footprint) {
                self.unprepared.push(footprint);
            }
            Ok((self.curve)(footprint))
        }
        fn prepare(&mut self, footprints: &[u64]) -> Result<()> {
            self.batches += 1;
            self.prepared.extend(footprints);
            Ok(())
        }
    }
    let curve = |f: u64| match f {
        0..=33_000 => 1.0,
        33_001..=40_000 => 1.0 + (f - 33_000) as f64 / 7000.0,
        40_001..=130_000 => 2.2,
        _ => 5.3,
    };
    let threshold = RiseThreshold::of(Space::Instruction);
    let plain = sweep(threshold, 64, 1024, 512 << 10, 4, |f| Ok(curve(f))).unwrap();
    let mut recording = Recording {
        curve,
        prepared: Default::default(),
        batches: 0,
        unprepared: vec![],
    };
    let grid = Grid {
        stride: 64,
        relative_resolution: 0.0,
    };
    let ahead = sweep_with(threshold, grid, 1024, 512 << 10, 4, &mut recording).unwrap();
    assert_eq!(plain.points, ahead.points);
    assert!(
        recording.unprepared.is_empty(),
        "{:?}",
        recording.unprepared
    );
    assert!(
        recording.batches * 2 < ahead.points.len(),
        "{} batches for {} points",
        recording.batches,
        ahead.points.len()
    );
}

/// Three rises, as the instruction space shows on Hopper, swept for a 16-core host: the
/// nine bisections advance side by side, so the compile batches are the coarse grid's, one
/// per two or three halvings of the longest bisection, and the fine points' together.
#[test]
fn the_rises_bisections_share_their_compile_batches() {
    #[derive(Default)]
    struct Batches {
        prepared: std::collections::HashSet<u64>,
        batches: usize,
        unprepared: usize,
    }
    impl Probe for Batches {
        fn measure(&mut self, footprint: u64) -> Result<f64> {
            self.unprepared += usize::from(!self.prepared.contains(&footprint));
            Ok(match footprint {
                0..=32_000 => 1.0,
                32_001..=40_000 => 1.0 + (footprint - 32_000) as f64 / 7000.0,
                40_001..=128_000 => 2.2,
                128_001..=150_000 => 2.2 + (footprint - 128_000) as f64 / 7000.0,
                150_001..=200_000 => 5.3,
                200_001..=220_000 => 5.3 + (footprint - 200_000) as f64 / 5000.0,
                _ => 9.3,
            })
        }
        fn prepare(&mut self, footprints: &[u64]) -> Result<()> {
            self.batches += 1;
            self.prepared.extend(footprints);
            Ok(())
        }
    }
    let mut probe = Batches::default();
    let grid = Grid {
        stride: 64,
        relative_resolution: 0.0,
    };
    let threshold = RiseThreshold::of(Space::Instruction);
    let result = sweep_on_cores(threshold, grid, (1024, 512 << 10), 4, &mut probe, 16).unwrap();
    assert_eq!(probe.unprepared, 0);
    // The widest bracket between coarse points here is under 2^10 strides: ten halvings.
    assert!(
        probe.batches <= 2 + 10 / 2,
        "{} batches for {} points",
        probe.batches,
        result.points.len()
    );
    let report =
        crate::analysis::cache_inference::infer_with(&result.points, threshold.minimum_rise())
            .unwrap();
    let sizes: Vec<u64> = report.levels.iter().filter_map(|l| l.size_bytes).collect();
    assert_eq!(sizes.len(), 3, "{sizes:?}");
    for (size, truth) in sizes.iter().zip([32_000_u64, 128_000, 200_000]) {
        assert!(size.abs_diff(truth) * 100 <= truth, "{sizes:?}");
    }
}

#[test]
fn bisection_midpoints_cover_every_path_of_the_next_steps() {
    let mut next = Vec::new();
    bisection_midpoints(0, 16, 3, &mut next);
    next.sort_unstable();
    assert_eq!(next, vec![2, 4, 6, 8, 10, 12, 14]);
    let mut short = Vec::new();
    bisection_midpoints(4, 5, 3, &mut short);
    assert!(short.is_empty());
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(16))]
    /// The adaptive sweep over a simulated LRU cache (no GPU) samples the start of the rise
    /// one stride at a time, so the inferred size is right to within one line (the first
    /// overflowing set of a large cache adds less than the plateau's tolerance), with under
    /// half the points of a linear scan (four coarse points a doubling come first). Lines of at least four strides, as the inference
    /// asks, and at most 64 sets, so each set's step (the miss penalty / sets) stands above
    /// the inference's 0.25-cycle plateau floor; with more sets the first few steps merge
    /// into the plateau and the size comes out a few lines long.
    #[test]
    fn the_adaptive_sweep_finds_a_simulated_cache_to_a_line(
        line_log in 7_u32..=8,
        sets_log in 2_u32..=6,
        ways in 1_u64..=16,
        hit in 20.0_f64..60.0,
        extra in 100.0_f64..500.0,
    ) {
        use crate::analysis::cache_model::{Geometry, Hierarchy, chase_latency};
        let line = 1_u64 << line_log;
        let geometry = Geometry::new((1 << sets_log) * ways * line, line, ways);
        let hierarchy = Hierarchy::one_level(geometry, hit, hit + extra);
        let stride = 32;
        let smallest = (geometry.size_bytes / 8).max(4 * stride).next_power_of_two();
        let largest = smallest << 6;
        let threshold = RiseThreshold::of(Space::Global);
        let result = sweep(threshold, stride, smallest, largest, 160, |footprint| {
            Ok(chase_latency(&hierarchy, footprint, stride))
        })
        .unwrap();
        let report = crate::analysis::cache_inference::infer(&result.points).unwrap();
        let size = report.levels[0].size_bytes.unwrap();
        proptest::prop_assert!(size.abs_diff(geometry.size_bytes) <= line, "{size} vs {geometry:?}");
        proptest::prop_assert!(result.launches < (largest / stride / 2) as usize, "{} launches", result.launches);
    }
}

/// The instruction space as `all --quick` sweeps it (a 256-byte stride, bisections to 1/16 of
/// the code size, two fine points per rise), replayed on the committed H200 curve for a
/// 16-core host: after the coarse grid, one batch of compiles serves every bisection step and
/// the fine points, so the suite asks for the GPU twice, and both capacities are found.
#[test]
fn the_quick_instruction_sweep_compiles_in_two_batches_on_the_h200_curve() {
    let csv = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/results/h200/all/cache-instruction/chase.csv"
    ))
    .unwrap();
    let curve: Vec<(u64, f64)> = csv
        .lines()
        .skip(1)
        .map(|line| {
            let fields: Vec<&str> = line.split(',').collect();
            (fields[0].parse().unwrap(), fields[2].parse().unwrap())
        })
        .collect();
    #[derive(Default)]
    struct Replay {
        curve: Vec<(u64, f64)>,
        prepared: std::collections::HashSet<u64>,
        batches: usize,
        unprepared: Vec<u64>,
    }
    impl Probe for Replay {
        fn measure(&mut self, footprint: u64) -> Result<f64> {
            if !self.prepared.contains(&footprint) {
                self.unprepared.push(footprint);
            }
            // Linear between the committed points.
            let i = self.curve.partition_point(|p| p.0 < footprint);
            let (a, b) = (self.curve[i.max(1) - 1], self.curve[i.min(self.curve.len() - 1)]);
            Ok(a.1 + (b.1 - a.1) * footprint.saturating_sub(a.0) as f64 / (b.0 - a.0).max(1) as f64)
        }
        fn prepare(&mut self, footprints: &[u64]) -> Result<()> {
            let new = footprints.iter().filter(|f| self.prepared.insert(**f)).count();
            self.batches += usize::from(new > 0);
            Ok(())
        }
    }
    let mut replay = Replay {
        curve,
        ..Default::default()
    };
    let grid = Grid {
        stride: 256,
        relative_resolution: 1.0 / 16.0,
    };
    let threshold = RiseThreshold::of(Space::Instruction);
    let result = sweep_on_cores(threshold, grid, (1024, 256 << 10), 2, &mut replay, 16).unwrap();
    assert!(replay.unprepared.is_empty(), "{:?}", replay.unprepared);
    assert_eq!(replay.batches, 2, "{} points", result.points.len());
    let report =
        crate::analysis::cache_inference::infer_with(&result.points, threshold.minimum_rise())
            .unwrap();
    let sizes: Vec<u64> = report.levels.iter().filter_map(|l| l.size_bytes).collect();
    assert_eq!(sizes.len(), 2, "{sizes:?}");
    // The full sweep's capacities (results/h200/all: 31.3 and 127 KiB) within the quick
    // resolution.
    for (size, full) in sizes.iter().zip([32_064_u64, 130_048]) {
        assert!(size.abs_diff(full) * 16 <= full, "{sizes:?}");
    }
}

#[test]
fn look_ahead_counts_a_shared_bracket_once_and_stops_at_the_halvings_needed() {
    // Three bisections on one bracket of 104 strides, to within 8: four halvings.
    assert_eq!(lookahead_depth(16, &[(100, 204, 8); 3]), 4);
    // To one stride, two brackets on 16 cores: 33 midpoints each would fill them four
    // times over: five halvings (31 midpoints) at once.
    assert_eq!(lookahead_depth(16, &[(0, 1024, 1), (2048, 4096, 1)]), 5);
    // Nine brackets of their own: three halvings (seven midpoints each).
    let nine: Vec<(u64, u64, u64)> = (0..9).map(|k| (k * 2000, k * 2000 + 1024, 1)).collect();
    assert_eq!(lookahead_depth(16, &nine), 3);
    // A bracket one halving from done is prepared one step ahead.
    assert_eq!(lookahead_depth(16, &[(0, 10, 5)]), 1);
}

/// A sweep that dies part way keeps every point it finished, in `chase.csv`'s columns (read
/// back by `analyze cache`'s loader); one that ends removes the file once it is written whole.
#[test]
fn a_sweep_keeps_its_points_as_it_measures_them() {
    let dir = tempfile::tempdir().unwrap();
    let curve = |footprint: u64| if footprint <= 32 << 10 { 40.0 } else { 270.0 };
    let sweep = |probe: &mut dyn Probe| {
        sweep_with(
            RiseThreshold::of(Space::Global),
            Grid {
                stride: 128,
                relative_resolution: 0.0,
            },
            4 << 10,
            1 << 20,
            4,
            probe,
        )
    };
    // Dies at its 12th point: the 11 before it are on disk, as measured.
    let mut measured = Vec::new();
    let mut dying = |footprint: u64| {
        anyhow::ensure!(measured.len() < 11, "the simulator stopped");
        measured.push((footprint, curve(footprint)));
        Ok(curve(footprint))
    };
    let mut so_far = SoFar::create(dir.path(), 128).unwrap();
    assert!(sweep(&mut so_far.keeping(&mut dying)).is_err());
    let kept = crate::suites::cache::measure::saved::load(&dir.path().join(SO_FAR)).unwrap();
    let kept: Vec<(u64, f64)> = kept
        .iter()
        .map(|p| {
            assert_eq!(p.stride_bytes, 128);
            (p.footprint_bytes, p.cycles)
        })
        .collect();
    assert_eq!(kept, measured);
    drop(so_far);

    // Dies at its first point: the file is there, with its header and no point.
    let mut so_far = SoFar::create(dir.path(), 128).unwrap();
    let mut stopped = |_: u64| -> anyhow::Result<f64> { anyhow::bail!("the simulator stopped") };
    assert!(sweep(&mut so_far.keeping(&mut stopped)).is_err());
    assert_eq!(
        std::fs::read_to_string(dir.path().join(SO_FAR)).unwrap(),
        "footprint_bytes,stride_bytes,cycles\n"
    );
    drop(so_far);

    // A whole sweep: the file held every point until the sweep was written, then goes.
    let mut so_far = SoFar::create(dir.path(), 128).unwrap();
    let whole = sweep(&mut so_far.keeping(&mut |f| Ok(curve(f)))).unwrap();
    let kept = crate::suites::cache::measure::saved::load(&dir.path().join(SO_FAR)).unwrap();
    assert_eq!(kept.len(), whole.points.len());
    so_far.finish().unwrap();
    assert!(!dir.path().join(SO_FAR).exists());
}
