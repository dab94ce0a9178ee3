//! The divergence model's outputs: `model.json` (the [`ModelReport`]), `model.png` (single
//! loop: measured medians, the chosen model, detected steps) and `prediction.png` (double
//! loop: measured against predicted, and the residuals, as the paper's Figs 7–8).

use std::path::Path;

use anyhow::{Context, Result};
use plotters::prelude::*;

use crate::suites::divergence::model::{Level, ModelKind, ModelReport, Prediction};
use crate::report::plot::{self, BLUE, RED};

pub fn render_text(report: &ModelReport, bounds_source: &str) -> String {
    let mut text = format!("model: {}\n", report.verdict);
    text += &format!(
        "chosen by BIC among {} models ({} of {} stack shapes fitted a spill penalty of at least 0.5 cycles): {}{}\n",
        report.models_compared,
        report.models_compared - 1,
        report.stack_models_tried,
        match report.model {
            ModelKind::Linear => "linear (no spills)".to_string(),
            ModelKind::Stack => format!(
                "stack D={} K={}",
                report.stack_depth.unwrap_or(0),
                report.spill_chunk.unwrap_or(0)
            ),
        },
        match (&report.runner_up, report.delta_bic) {
            (Some(runner), Some(delta)) => format!(
                "; next best {} by ΔBIC {:.1} ({} evidence)",
                runner.label, delta, report.evidence
            ),
            _ => String::new(),
        }
    );
    text += &format!(
        "steps detected at M = {:?}; model steps at M = {:?} ({})\n",
        report.step_positions_m,
        report.model_step_positions_m,
        if report.steps_agree {
            "agree"
        } else {
            "DISAGREE"
        }
    );
    text += &format!(
        "fit residual RMS {:.2} cycles over {} single-loop levels; lane bounds from {}\n",
        report.residual_rms_cycles, report.single_loop_levels, bounds_source
    );
    if let Some(prediction) = &report.double_loop_prediction {
        text += &format!(
            "double loop predicted from the single-loop fit (anchored at M = {}): max |error| {:.1} cycles ({:.2}%), mean |error| {:.1} cycles over {} levels\n",
            prediction.anchor_m,
            prediction.max_abs_error_cycles,
            prediction.max_abs_error_percent,
            prediction.mean_abs_error_cycles,
            prediction.levels.len()
        );
    }
    text
}

const WIDTH: u32 = 1600;
const HEIGHT: u32 = 700;

fn integer_ticks(value: &f64) -> String {
    format!("{value:.0}")
}

/// The span of `values`, padded by 8 % of it (at least a cycle) each side.
pub(super) fn range(values: impl Iterator<Item = f64> + Clone) -> std::ops::Range<f64> {
    let low = values.clone().fold(f64::INFINITY, f64::min);
    let high = values.fold(f64::NEG_INFINITY, f64::max);
    let pad = ((high - low) * 0.08).max(1.0);
    (low - pad)..(high + pad)
}

/// `model.png`: single-loop medians, the model's curve, and the detected steps.
pub fn draw_model_plot(
    path: &Path,
    title: &str,
    levels: &[Level],
    curve: &[(u32, f64)],
    report: &ModelReport,
) -> Result<()> {
    plot::white_plot!(path, (WIDTH / 2 + 200, HEIGHT), |root| {
        let m_max = levels.iter().map(|l| l.m).max().unwrap_or(1).max(1) as f64;
        let y_range = range(
            levels
                .iter()
                .map(|l| l.cycles)
                .chain(curve.iter().map(|c| c.1)),
        );
        let mut chart = plot::framed_chart(&root, title, [20, 60, 100])
            .build_cartesian_2d(-0.5..m_max + 0.5, y_range.clone())?;
        plot::mesh(&mut chart, "divergent lanes M", "single-loop cycles (median)")
            .x_label_formatter(&integer_ticks)
            .y_label_formatter(&integer_ticks)
            .draw()?;
        for &m in &report.step_positions_m {
            let x = f64::from(m) - 0.5;
            chart.draw_series(std::iter::once(PathElement::new(
                vec![(x, y_range.start), (x, y_range.end)],
                BLACK.mix(0.35).stroke_width(2),
            )))?;
        }
        chart
            .draw_series(
                levels
                    .iter()
                    .map(|l| Circle::new((f64::from(l.m), l.cycles), 5, BLUE.filled())),
            )?
            .label("measured")
            .legend(|(x, y)| Circle::new((x + 10, y), 5, BLUE.filled()));
        let label = match report.model {
            ModelKind::Linear => format!(
                "linear: {:.1} cycles/branch",
                report.cost_per_divergence_cycles.estimate
            ),
            ModelKind::Stack => format!(
                "stack D={} K={}: {:.1}/branch + {:.1}/spill",
                report.stack_depth.unwrap_or(0),
                report.spill_chunk.unwrap_or(0),
                report.cost_per_divergence_cycles.estimate,
                report.spill_penalty_cycles.map_or(0.0, |p| p.estimate)
            ),
        };
        chart
            .draw_series(LineSeries::new(
                curve.iter().map(|&(m, c)| (f64::from(m), c)),
                RED.stroke_width(2),
            ))?
            .label(label)
            .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], RED.stroke_width(2)));
        plot::draw_legend(&mut chart, SeriesLabelPosition::UpperLeft)?;
    })
    .context("drawing model")
}

/// `prediction.png`: measured and predicted double-loop cycles, and their difference.
pub fn draw_prediction_plot(path: &Path, title: &str, prediction: &Prediction) -> Result<()> {
    plot::titled_plot!(path, plot::Design::panels((WIDTH, HEIGHT), 2), title, |root| {
        let panels = plot::panels(&root, 2);
        let levels = &prediction.levels;
        let m_max = levels.iter().map(|l| l.m).max().unwrap_or(1).max(1) as f64;
        let x_range = -0.5..m_max + 0.5;

        let mut chart = plot::captioned_chart(
            &panels[0],
            "double loop: measured and predicted",
            [20, 60, 110],
        )
        .build_cartesian_2d(
                x_range.clone(),
                range(
                    levels
                        .iter()
                        .flat_map(|l| [l.measured_cycles, l.predicted_cycles]),
                ),
            )?;
        plot::mesh(&mut chart, "divergent lanes M", "cycles")
            .x_label_formatter(&integer_ticks)
            .y_label_formatter(&integer_ticks)
            .draw()?;
        chart
            .draw_series(
                levels.iter().map(|l| {
                    Circle::new((f64::from(l.m), l.measured_cycles), 6, BLUE.filled())
                }),
            )?
            .label("measured")
            .legend(|(x, y)| Circle::new((x + 10, y), 6, BLUE.filled()));
        chart
            .draw_series(LineSeries::new(
                levels.iter().map(|l| (f64::from(l.m), l.predicted_cycles)),
                RED.stroke_width(2),
            ))?
            .label("predicted from the single loop")
            .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], RED.stroke_width(2)));
        plot::draw_legend(&mut chart, SeriesLabelPosition::UpperLeft)?;

        let residual_range = range(levels.iter().map(|l| l.residual_cycles).chain([0.0]));
        let mut residuals = plot::captioned_chart(&panels[1], "measured − predicted", [20, 60, 110])
            .build_cartesian_2d(x_range, residual_range)?;
        plot::mesh(&mut residuals, "divergent lanes M", "cycles")
            .x_label_formatter(&integer_ticks)
            .y_label_formatter(&|v| format!("{v:.1}"))
            .draw()?;
        residuals.draw_series(LineSeries::new(
            vec![(-0.5, 0.0), (m_max + 0.5, 0.0)],
            BLACK.mix(0.4),
        ))?;
        residuals.draw_series(levels.iter().map(|l| {
            let x = f64::from(l.m);
            Rectangle::new(
                [(x - 0.3, 0.0), (x + 0.3, l.residual_cycles)],
                BLUE.mix(0.7).filled(),
            )
        }))?;
        // Markers too, so residuals of exactly zero still show.
        residuals.draw_series(
            levels
                .iter()
                .map(|l| Circle::new((f64::from(l.m), l.residual_cycles), 4, BLUE.filled())),
        )?;
    })
    .context("drawing prediction")
}
