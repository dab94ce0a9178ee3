use super::*;
use crate::analysis::divergence_patterns::Pattern;
use proptest::prelude::*;
use rand::{RngExt, SeedableRng, rngs::StdRng};

/// Cycles that the paper's model generates: base + cost·E + penalty·S on `shape`, with
/// uniform noise of the given half-width.
pub fn generated(
    program: &[Instruction],
    shape: StackShape,
    base: f64,
    cost: f64,
    penalty: f64,
    noise: f64,
    seed: u64,
) -> Vec<Level> {
    let mut rng = StdRng::seed_from_u64(seed);
    Pattern::Staircase
        .rows(32, 0)
        .into_iter()
        .map(|row| {
            let counts = stack_emulator::run(program, &row.bounds, shape, false)
                .unwrap()
                .counts;
            let jitter = noise * (2.0 * rng.random::<f64>() - 1.0);
            Level {
                m: row.m,
                bounds: row.bounds,
                cycles: base
                    + cost * counts.div_pushes as f64
                    + penalty * counts.spills as f64
                    + jitter,
            }
        })
        .collect()
}

const KEPLER: StackShape = StackShape {
    depth: Some(16),
    chunk: 4,
};

#[test]
fn recovers_the_kepler_stack_from_exact_data() {
    let levels = generated(
        &stack_emulator::single_loop(),
        KEPLER,
        1200.0,
        32.0,
        84.0,
        0.0,
        1,
    );
    let selection = fit_single_loop(&levels).unwrap();
    let chosen = &selection.chosen;
    assert_eq!(chosen.model, ModelKind::Stack);
    assert_eq!(
        (chosen.stack_depth, chosen.spill_chunk),
        (Some(16), Some(4))
    );
    assert!((chosen.cost_per_divergence_cycles.estimate - 32.0).abs() < 1e-6);
    assert!((chosen.spill_penalty_cycles.unwrap().estimate - 84.0).abs() < 1e-6);
    assert_eq!(selection.change_points_m, vec![16, 20, 24, 28]);
    assert!(selection.steps_agree);
    assert_eq!(selection.evidence, "very strong");
}

#[test]
fn recovers_the_kepler_stack_from_noisy_data() {
    let mut covered = 0;
    let trials = 200;
    for seed in 0..trials {
        let levels = generated(
            &stack_emulator::single_loop(),
            KEPLER,
            1200.0,
            32.0,
            84.0,
            3.0,
            seed,
        );
        let selection = fit_single_loop(&levels).unwrap();
        let chosen = &selection.chosen;
        assert_eq!(
            (chosen.stack_depth, chosen.spill_chunk),
            (Some(16), Some(4)),
            "seed {seed}"
        );
        let cost = chosen.cost_per_divergence_cycles;
        covered += usize::from(cost.ci95_low < 32.0 && 32.0 < cost.ci95_high);
        assert!((cost.estimate - 32.0).abs() < 1.0, "seed {seed}: {cost:?}");
        let penalty = chosen.spill_penalty_cycles.unwrap();
        assert!(
            (penalty.estimate - 84.0).abs() < 6.0,
            "seed {seed}: {penalty:?}"
        );
        assert!(
            selection.steps_agree,
            "seed {seed}: {:?}",
            selection.change_points_m
        );
    }
    // A 95 % interval should hold the true cost in about 190 of 200 trials; below 176
    // (4.6 binomial standard deviations) the interval is too narrow.
    assert!(
        covered >= 176,
        "the 95% interval held the true cost in {covered}/{trials}"
    );
}

#[test]
fn a_pure_line_is_linear_with_no_spill() {
    for noise in [0.0, 2.0] {
        let levels = generated(
            &stack_emulator::single_loop(),
            StackShape::UNBOUNDED,
            1065.0,
            13.0,
            0.0,
            noise,
            3,
        );
        let selection = fit_single_loop(&levels).unwrap();
        assert_eq!(selection.chosen.model, ModelKind::Linear, "noise {noise}");
        assert!(selection.chosen.spill_penalty_cycles.is_none());
        assert!(selection.change_points_m.is_empty(), "noise {noise}");
        assert!(selection.verdict.starts_with("no spill seen"));
        let cost = selection.chosen.cost_per_divergence_cycles;
        assert!((cost.estimate - 13.0).abs() < 0.2, "{cost:?}");
    }
}

#[test]
fn predicts_a_double_loop_generated_by_the_same_model() {
    for shape in [KEPLER, StackShape::UNBOUNDED] {
        let penalty = if shape == KEPLER { 84.0 } else { 0.0 };
        let single = generated(
            &stack_emulator::single_loop(),
            shape,
            1200.0,
            32.0,
            penalty,
            0.0,
            0,
        );
        let double = generated(
            &stack_emulator::double_loop(),
            shape,
            40_000.0,
            32.0,
            penalty,
            0.0,
            0,
        );
        let selection = fit_single_loop(&single).unwrap();
        let prediction = predict_double_loop(&selection.chosen, &double)
            .unwrap()
            .unwrap();
        assert_eq!(prediction.anchor_m, 0);
        assert!(
            prediction.max_abs_error_cycles < 1e-6,
            "{shape:?}: {prediction:?}"
        );
    }
}

#[test]
fn too_little_data_is_an_error_not_a_guess() {
    let levels = generated(
        &stack_emulator::single_loop(),
        KEPLER,
        0.0,
        1.0,
        0.0,
        0.0,
        0,
    );
    assert_eq!(
        fit_single_loop(&levels[..3]),
        Err(ModelError::TooFewLevels(3))
    );
    let flat: Vec<Level> = levels
        .iter()
        .map(|l| Level {
            bounds: [32; WARP_LANES],
            ..l.clone()
        })
        .collect();
    assert_eq!(
        fit_single_loop(&flat),
        Err(ModelError::NoDivergenceVariation)
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]
    /// Any stack that spills at least twice within the data, any cost and a clear penalty:
    /// the fit recovers D and K exactly, and the change points agree with them (for K ≥ 2
    /// and D ≥ 8, where steps are a minority of the increments; see `change_points`).
    #[test]
    fn recovers_random_stacks(
        depth in 8usize..=24,
        chunk in 2usize..=4,
        cost in 5.0f64..60.0,
        penalty in 40.0f64..300.0,
        seed in any::<u64>(),
    ) {
        let shape = StackShape { depth: Some(depth), chunk };
        prop_assume!(32 >= depth + 2 * chunk);
        let levels = generated(&stack_emulator::single_loop(), shape, 900.0, cost, penalty, 1.0, seed);
        let selection = fit_single_loop(&levels).unwrap();
        prop_assert_eq!(selection.chosen.stack_depth, Some(depth));
        prop_assert_eq!(selection.chosen.spill_chunk, Some(chunk));
        prop_assert!(selection.steps_agree);
    }
}
