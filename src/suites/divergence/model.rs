//! The synchronization-stack model fitted to measured loop cycles (Białas & Strzelecki,
//! section IV).
//!
//! Model: `cycles(M) = a + c·E(M) + p·S(M)`, where `E` is the number of divergent branches and
//! `S` the number of stack spills (each refilled later) that the emulator counts for the lane
//! bounds of level M, on a stack of `D` on-chip entries spilled `K` at a time.
//!
//! - **Fit**: the linear model (no spills: `p = 0`) and every stack model with D in
//!   2..=32 and K in 1..=8 whose spill counts differ from zero over the data are fitted by least
//!   squares to the single-loop medians; the one with the lowest BIC wins. BIC counts a, c for
//!   the linear model and a, c, p, D, K for a stack model, and floors the residual variance at
//!   1 cycle² (the counter ticks in whole cycles; misfits below that are not evidence).
//! - **Steps**: independently of the fit, level shifts are found as outlying rises between
//!   consecutive levels (differencing, then a 5σ robust threshold), and compared with the
//!   steps the chosen model implies.
//! - **Prediction**: with a, c, p, D, K from the single loop, the double loop's cycles are
//!   predicted from its own event counts, anchored at its lowest measured level.

use serde::Serialize;

use crate::analysis::linear_fit::{self, Interval};
use crate::analysis::stack_emulator::{self, Instruction, StackOp, StackShape, WARP_LANES};

/// Residual variance below which two models count as equally good (cycles²).
const VARIANCE_FLOOR: f64 = 1.0;
/// The smallest spill penalty (cycles) a stack model may claim.
const MIN_SPILL_PENALTY: f64 = 0.5;
pub const DEPTHS: std::ops::RangeInclusive<usize> = 2..=32;
pub const CHUNKS: std::ops::RangeInclusive<usize> = 1..=8;

/// One divergence level: the lane bounds and the cycles measured there (a median).
#[derive(Debug, Clone, PartialEq)]
pub struct Level {
    pub m: u32,
    pub bounds: [i32; WARP_LANES],
    pub cycles: f64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ModelKind {
    Linear,
    Stack,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ModelFit {
    pub model: ModelKind,
    pub stack_depth: Option<usize>,
    pub spill_chunk: Option<usize>,
    pub intercept_cycles: Interval,
    pub cost_per_divergence_cycles: Interval,
    pub spill_penalty_cycles: Option<Interval>,
    pub residual_rms_cycles: f64,
    pub bic: f64,
    /// Levels where the model's spill count rises.
    pub model_step_positions_m: Vec<u32>,
}

impl ModelFit {
    pub fn shape(&self) -> StackShape {
        shape_of(self.stack_depth, self.spill_chunk)
    }

    pub fn label(&self) -> String {
        match (self.stack_depth, self.spill_chunk) {
            (Some(depth), Some(chunk)) => format!("stack D={depth} K={chunk}"),
            _ => "linear".to_string(),
        }
    }
}

/// The stack a fitted depth and chunk describe; unbounded for the linear model.
fn shape_of(depth: Option<usize>, chunk: Option<usize>) -> StackShape {
    match (depth, chunk) {
        (Some(depth), Some(chunk)) => StackShape {
            depth: Some(depth),
            chunk,
        },
        _ => StackShape::UNBOUNDED,
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
pub struct Competitor {
    pub label: String,
    pub bic: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Selection {
    pub chosen: ModelFit,
    /// The best model whose spill pattern differs from the chosen one.
    pub runner_up: Option<Competitor>,
    /// BIC(runner-up) − BIC(chosen): above 10 is very strong evidence (Kass & Raftery).
    pub delta_bic: Option<f64>,
    pub evidence: &'static str,
    /// The linear model plus every admissible stack model.
    pub models_compared: usize,
    /// Stack shapes that spill somewhere in the data (admissible or not).
    pub stack_models_tried: usize,
    pub change_points_m: Vec<u32>,
    pub noise_cycles: f64,
    pub steps_agree: bool,
    pub verdict: String,
}

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ModelError {
    #[error("the single-loop data have {0} levels; the model needs at least 4 (measure M = 0..31)")]
    TooFewLevels(usize),
    #[error(
        "the divergence counts do not vary across the levels, so no cost per branch can be fitted; use a pattern whose levels differ (e.g. staircase)"
    )]
    NoDivergenceVariation,
    #[error("emulating the loop failed: {0}")]
    Emulator(#[from] stack_emulator::EmulatorError),
}

/// Divergent branches per level, and each level's push/pop sequence for spill counting.
fn events(
    program: &[Instruction],
    levels: &[Level],
) -> Result<(Vec<f64>, Vec<Vec<StackOp>>), ModelError> {
    let mut divergences = Vec::with_capacity(levels.len());
    let mut sequences = Vec::with_capacity(levels.len());
    for level in levels {
        let run = stack_emulator::run(program, &level.bounds, StackShape::UNBOUNDED, false)?;
        divergences.push(run.counts.div_pushes as f64);
        sequences.push(run.stack_ops);
    }
    Ok((divergences, sequences))
}

fn spills(sequences: &[Vec<StackOp>], shape: StackShape) -> Vec<f64> {
    sequences
        .iter()
        .map(|ops| stack_emulator::spills_for(ops, shape).0 as f64)
        .collect()
}

fn bic(rss: f64, n: usize, parameters: usize) -> f64 {
    let n_f = n as f64;
    n_f * (rss / n_f).max(VARIANCE_FLOOR).ln() + parameters as f64 * n_f.ln()
}

fn steps_of(levels: &[Level], spills: &[f64]) -> Vec<u32> {
    spills
        .windows(2)
        .zip(&levels[1..])
        .filter(|(pair, _)| pair[1] > pair[0])
        .map(|(_, level)| level.m)
        .collect()
}

fn evidence(delta_bic: Option<f64>) -> &'static str {
    match delta_bic {
        None => "no competing model",
        Some(d) if d > 10.0 => "very strong",
        Some(d) if d > 6.0 => "strong",
        Some(d) if d > 2.0 => "positive",
        Some(_) => "weak",
    }
}

/// Chooses and fits the model on single-loop levels (any order; sorted by m here).
pub fn fit_single_loop(levels: &[Level]) -> Result<Selection, ModelError> {
    let mut levels = levels.to_vec();
    levels.sort_by_key(|level| level.m);
    let n = levels.len();
    if n < 4 {
        return Err(ModelError::TooFewLevels(n));
    }
    let program = stack_emulator::single_loop();
    let y: Vec<f64> = levels.iter().map(|level| level.cycles).collect();
    let ones = vec![1.0; n];
    let (divergences, sequences) = events(&program, &levels)?;
    let linear = linear_fit::fit_multiple(&[ones.clone(), divergences.clone()], &y)
        .ok_or(ModelError::NoDivergenceVariation)?;

    struct Candidate {
        fit: ModelFit,
        spills: Vec<f64>,
    }
    let as_fit = |fit: &linear_fit::MultipleFit, shape: Option<StackShape>, spills: &[f64]| {
        let parameters = if shape.is_some() { 5 } else { 2 };
        ModelFit {
            model: if shape.is_some() {
                ModelKind::Stack
            } else {
                ModelKind::Linear
            },
            stack_depth: shape.and_then(|s| s.depth),
            spill_chunk: shape.map(|s| s.chunk),
            intercept_cycles: fit.coefficients[0],
            cost_per_divergence_cycles: fit.coefficients[1],
            spill_penalty_cycles: fit.coefficients.get(2).copied(),
            residual_rms_cycles: (fit.residual_sum_of_squares / n as f64).sqrt(),
            bic: bic(fit.residual_sum_of_squares, n, parameters),
            model_step_positions_m: steps_of(&levels, spills),
        }
    };
    let mut stack_models_tried = 0;
    let mut candidates = vec![Candidate {
        fit: as_fit(&linear, None, &vec![0.0; n]),
        spills: vec![0.0; n],
    }];
    for depth in DEPTHS {
        for chunk in CHUNKS.filter(|&chunk| chunk <= depth) {
            let shape = StackShape {
                depth: Some(depth),
                chunk,
            };
            let spills = spills(&sequences, shape);
            if spills.iter().all(|&s| s == 0.0) {
                continue; // identical to the linear model on these data
            }
            stack_models_tried += 1;
            let Some(fit) =
                linear_fit::fit_multiple(&[ones.clone(), divergences.clone(), spills.clone()], &y)
            else {
                continue;
            };
            // A spill that saves time is not a spill, and one under half a cycle cannot be
            // resolved by a counter that ticks in whole cycles: such fits are fitting noise.
            if fit.coefficients[2].estimate < MIN_SPILL_PENALTY {
                continue;
            }
            candidates.push(Candidate {
                fit: as_fit(&fit, Some(shape), &spills),
                spills,
            });
        }
    }
    // Strictly lower BIC wins, so among models with identical spill counts the smallest D
    // (then K) is kept.
    let best = candidates
        .iter()
        .enumerate()
        .min_by(|a, b| a.1.fit.bic.total_cmp(&b.1.fit.bic).then(a.0.cmp(&b.0)))
        .map(|(index, _)| index)
        .expect("the linear model is always a candidate");
    let runner_up = candidates
        .iter()
        .filter(|c| c.spills != candidates[best].spills)
        .min_by(|a, b| a.fit.bic.total_cmp(&b.fit.bic))
        .map(|c| Competitor {
            label: c.fit.label(),
            bic: c.fit.bic,
        });
    let models_compared = candidates.len();
    let chosen = candidates.swap_remove(best).fit;
    let delta_bic = runner_up.as_ref().map(|r| r.bic - chosen.bic);

    let (change_points_m, noise_cycles) = change_points(&levels, &divergences);
    let steps_agree = change_points_m == chosen.model_step_positions_m;
    let verdict = verdict(&chosen, &change_points_m, steps_agree);
    Ok(Selection {
        models_compared,
        stack_models_tried,
        chosen,
        runner_up,
        delta_bic,
        evidence: evidence(delta_bic),
        change_points_m,
        noise_cycles,
        steps_agree,
        verdict,
    })
}

fn verdict(chosen: &ModelFit, change_points: &[u32], agree: bool) -> String {
    let cost = chosen.cost_per_divergence_cycles;
    let mut text = match (chosen.model, chosen.spill_penalty_cycles) {
        (ModelKind::Stack, Some(penalty)) => format!(
            "a stack of {} on-chip entries spilled {} at a time: {:.1} cycles per divergent branch (95% CI {:.1} to {:.1}) plus {:.1} per spill and refill (95% CI {:.1} to {:.1})",
            chosen.stack_depth.unwrap_or(0),
            chosen.spill_chunk.unwrap_or(0),
            cost.estimate,
            cost.ci95_low,
            cost.ci95_high,
            penalty.estimate,
            penalty.ci95_low,
            penalty.ci95_high
        ),
        _ => format!(
            "no spill seen: {:.1} cycles per divergent branch (95% CI {:.1} to {:.1}) and no steps that a finite stack would explain",
            cost.estimate, cost.ci95_low, cost.ci95_high
        ),
    };
    if !agree {
        text += &format!(
            "; change-point detection found steps at M = {change_points:?}, the model at M = {:?}, so treat the stack parameters with caution",
            chosen.model_step_positions_m
        );
    }
    text
}

/// Level shifts found without any stack model. Between consecutive levels the cycles should
/// rise by ĉ per added divergent branch, ĉ being the median such rise; a level shift shows as
/// an excess rise there. With σ_d the robust spread of the excesses (1.4826 × MAD, at least
/// √2 cycles: two readings of a counter that ticks in whole cycles), a level starts a step
/// when its excess is above 5σ_d. Differencing keeps the noise of one level from leaking into
/// the others. It assumes steps are a minority of the increments (true for any stack that
/// spills in chunks of 2 or more past 8 entries); otherwise the cross-check disagrees and the
/// verdict says so. Returns the levels (m) that start a step, and σ_d / √2 (per level).
fn change_points(levels: &[Level], divergences: &[f64]) -> (Vec<u32>, f64) {
    let rises: Vec<(u32, f64, f64)> = levels
        .windows(2)
        .zip(divergences.windows(2))
        .map(|(l, e)| (l[1].m, l[1].cycles - l[0].cycles, e[1] - e[0]))
        .collect();
    let per_branch: Vec<f64> = rises
        .iter()
        .filter(|(_, _, branches)| *branches != 0.0)
        .map(|(_, rise, branches)| rise / branches)
        .collect();
    let cost = crate::analysis::stats::median(&per_branch).unwrap_or(0.0);
    let excess: Vec<f64> = rises
        .iter()
        .map(|(_, rise, branches)| rise - cost * branches)
        .collect();
    let center = crate::analysis::stats::median(&excess).unwrap_or(0.0);
    let deviations: Vec<f64> = excess.iter().map(|x| (x - center).abs()).collect();
    let spread =
        (1.4826 * crate::analysis::stats::median(&deviations).unwrap_or(0.0)).max(std::f64::consts::SQRT_2);
    let starts = rises
        .iter()
        .zip(&excess)
        .filter(|(_, x)| **x - center > 5.0 * spread)
        .map(|((m, _, _), _)| *m)
        .collect();
    (starts, spread / std::f64::consts::SQRT_2)
}

#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
pub struct PredictedLevel {
    pub m: u32,
    pub measured_cycles: f64,
    pub predicted_cycles: f64,
    pub residual_cycles: f64,
    pub divergences: usize,
    pub spills: usize,
}

#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
pub struct Prediction {
    /// The level whose measured cycles anchor the prediction (its residual is 0 by design).
    pub anchor_m: u32,
    pub levels: Vec<PredictedLevel>,
    pub max_abs_error_cycles: f64,
    pub mean_abs_error_cycles: f64,
    /// Largest |residual| / measured, in percent.
    pub max_abs_error_percent: f64,
}

/// Predicts the double loop from the single-loop fit: anchor + c·ΔE + p·ΔS.
pub fn predict_double_loop(
    fit: &ModelFit,
    levels: &[Level],
) -> Result<Option<Prediction>, ModelError> {
    let mut levels = levels.to_vec();
    levels.sort_by_key(|level| level.m);
    let Some(anchor) = levels.first().cloned() else {
        return Ok(None);
    };
    let program = stack_emulator::double_loop();
    let shape = fit.shape();
    let counts: Vec<_> = levels
        .iter()
        .map(|level| stack_emulator::run(&program, &level.bounds, shape, false).map(|r| r.counts))
        .collect::<Result<_, _>>()?;
    let cost = fit.cost_per_divergence_cycles.estimate;
    let penalty = fit.spill_penalty_cycles.map_or(0.0, |p| p.estimate);
    let (e0, s0) = (counts[0].div_pushes as f64, counts[0].spills as f64);
    let predicted: Vec<PredictedLevel> = levels
        .iter()
        .zip(&counts)
        .map(|(level, c)| {
            let predicted = anchor.cycles
                + cost * (c.div_pushes as f64 - e0)
                + penalty * (c.spills as f64 - s0);
            PredictedLevel {
                m: level.m,
                measured_cycles: level.cycles,
                predicted_cycles: predicted,
                residual_cycles: level.cycles - predicted,
                divergences: c.div_pushes,
                spills: c.spills,
            }
        })
        .collect();
    let errors: Vec<f64> = predicted.iter().map(|p| p.residual_cycles.abs()).collect();
    let percent = predicted
        .iter()
        .filter(|p| p.measured_cycles != 0.0)
        .map(|p| 100.0 * p.residual_cycles.abs() / p.measured_cycles.abs())
        .fold(0.0, f64::max);
    Ok(Some(Prediction {
        anchor_m: anchor.m,
        max_abs_error_cycles: errors.iter().copied().fold(0.0, f64::max),
        mean_abs_error_cycles: errors.iter().sum::<f64>() / errors.len() as f64,
        max_abs_error_percent: percent,
        levels: predicted,
    }))
}

/// Everything the model analysis concludes, in the shape `gpubench analyze divergence --json`
/// prints and `model.json` stores.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
pub struct ModelReport {
    pub model: ModelKind,
    pub cost_per_divergence_cycles: Interval,
    pub intercept_cycles: Interval,
    pub stack_depth: Option<usize>,
    pub spill_chunk: Option<usize>,
    pub spill_penalty_cycles: Option<Interval>,
    /// Levels where a step starts, found by change-point detection (no model involved).
    pub step_positions_m: Vec<u32>,
    /// Levels where the chosen model's spill count rises.
    pub model_step_positions_m: Vec<u32>,
    pub steps_agree: bool,
    pub residual_rms_cycles: f64,
    pub noise_cycles: f64,
    pub bic: f64,
    pub runner_up: Option<Competitor>,
    pub delta_bic: Option<f64>,
    pub evidence: String,
    pub models_compared: usize,
    pub stack_models_tried: usize,
    pub verdict: String,
    pub single_loop_levels: usize,
    pub double_loop_prediction: Option<Prediction>,
}

/// Fits the single loop and, when double-loop levels are given, predicts them.
pub fn analyze(single: &[Level], double: &[Level]) -> Result<ModelReport, ModelError> {
    let selection = fit_single_loop(single)?;
    let prediction = predict_double_loop(&selection.chosen, double)?;
    let Selection {
        chosen,
        runner_up,
        delta_bic,
        evidence,
        models_compared,
        stack_models_tried,
        change_points_m,
        noise_cycles,
        steps_agree,
        verdict,
    } = selection;
    Ok(ModelReport {
        model: chosen.model,
        cost_per_divergence_cycles: chosen.cost_per_divergence_cycles,
        intercept_cycles: chosen.intercept_cycles,
        stack_depth: chosen.stack_depth,
        spill_chunk: chosen.spill_chunk,
        spill_penalty_cycles: chosen.spill_penalty_cycles,
        step_positions_m: change_points_m,
        model_step_positions_m: chosen.model_step_positions_m,
        steps_agree,
        residual_rms_cycles: chosen.residual_rms_cycles,
        noise_cycles,
        bic: chosen.bic,
        runner_up,
        delta_bic,
        evidence: evidence.into(),
        models_compared,
        stack_models_tried,
        verdict,
        single_loop_levels: single.len(),
        double_loop_prediction: prediction,
    })
}

impl ModelReport {
    /// The single-loop cycles the chosen model gives for `levels`.
    pub fn single_loop_curve(&self, levels: &[Level]) -> Result<Vec<(u32, f64)>, ModelError> {
        let shape = shape_of(self.stack_depth, self.spill_chunk);
        let program = stack_emulator::single_loop();
        levels
            .iter()
            .map(|level| {
                let counts = stack_emulator::run(&program, &level.bounds, shape, false)?.counts;
                Ok((
                    level.m,
                    self.intercept_cycles.estimate
                        + self.cost_per_divergence_cycles.estimate * counts.div_pushes as f64
                        + self.spill_penalty_cycles.map_or(0.0, |p| p.estimate)
                            * counts.spills as f64,
                ))
            })
            .collect()
    }
}

#[cfg(test)]
pub mod tests;
