//! Files of a divergence run:
//! - `samples.csv`: kernel, pattern, m, sample, lane, cycles (timer overhead subtracted),
//!   raw_cycles (as read) — one row per sample and lane;
//! - `summary.csv`: per kernel and m, statistics of the warp cycles over samples (n, min,
//!   median, mean, max, stdev) and the lane bounds used;
//! - `fit.json`: the least-squares cost per divergent lane with its 95 % interval;
//! - `divergence.png`: median cycles against M per kernel, min–max band, fitted line.

use std::path::Path;

use anyhow::{Context, Result};
use plotters::prelude::*;
use serde::Serialize;

use super::analysis::{CostFit, LevelSummary};
use super::measure::LevelMeasurement;
use super::model_report;
use crate::suites::divergence::model::ModelReport;
use crate::analysis::linear_fit::Interval;
use crate::report::plot::{self, BLUE, RED};
use crate::report::run_dir::RunDir;

#[derive(Debug, Serialize)]
struct SampleRow<'a> {
    kernel: &'a str,
    pattern: &'a str,
    m: u32,
    sample: usize,
    lane: usize,
    cycles: i64,
    raw_cycles: i64,
}

pub fn write_samples(
    run: &RunDir,
    pattern: &str,
    measured: &[LevelMeasurement],
    timer_overhead_cycles: i64,
) -> Result<()> {
    let rows = measured.iter().flat_map(|level| {
        level
            .timings
            .cycles
            .iter()
            .enumerate()
            .map(move |(cell, &raw)| SampleRow {
                kernel: level.kernel.name(),
                pattern,
                m: level.row.m,
                sample: cell / 32,
                lane: cell % 32,
                cycles: raw - timer_overhead_cycles,
                raw_cycles: raw,
            })
    });
    run.write_csv("samples.csv", rows)
}

/// One line of `summary.csv` (read back by [`level_summaries`]).
#[derive(Debug, Serialize, serde::Deserialize)]
pub struct SummaryRow {
    pub kernel: String,
    pub pattern: String,
    pub m: u32,
    pub n: usize,
    pub min_cycles: f64,
    pub median_cycles: f64,
    pub mean_cycles: f64,
    pub max_cycles: f64,
    pub stdev_cycles: f64,
    /// The 32 lane bounds, space-separated, lane 0 first.
    pub bounds: String,
}

pub fn write_summary(
    run: &RunDir,
    pattern: &str,
    summaries: &[LevelSummary],
    measured: &[LevelMeasurement],
) -> Result<()> {
    let rows = summaries.iter().map(|summary| {
        let bounds = measured
            .iter()
            .find(|level| level.kernel.name() == summary.kernel && level.row.m == summary.m)
            .map(|level| {
                let text: Vec<String> = level.row.bounds.iter().map(i32::to_string).collect();
                text.join(" ")
            })
            .unwrap_or_default();
        SummaryRow {
            kernel: summary.kernel.clone(),
            pattern: pattern.to_string(),
            m: summary.m,
            n: summary.cycles.n,
            min_cycles: summary.cycles.min,
            median_cycles: summary.cycles.median,
            mean_cycles: summary.cycles.mean,
            max_cycles: summary.cycles.max,
            stdev_cycles: summary.cycles.stdev,
            bounds,
        }
    });
    run.write_csv("summary.csv", rows)
}

/// `fit.json`: each loop's least-squares cost per divergent lane. [`write_fit`] writes it;
/// [`figures`] and the suite's whole-pipeline unit test read it.
#[derive(Debug, Serialize, serde::Deserialize)]
pub struct FitFile {
    pub warp_cycles: String,
    pub timer_overhead_subtracted_cycles: i64,
    pub fits: Vec<CostFit>,
}

pub fn write_fit(run: &RunDir, timer_overhead_cycles: i64, fits: &[CostFit]) -> Result<()> {
    run.write_json(
        "fit.json",
        &FitFile {
            warp_cycles: "per sample, the largest lane's clock64 difference around the loop, less the timer overhead".into(),
            timer_overhead_subtracted_cycles: timer_overhead_cycles,
            fits: fits.to_vec(),
        },
    )
}

/// `model.json`: the stack model's report and where the lane bounds it was fitted on came
/// from. The live run and `gpubench analyze divergence --output` write it (`--json` prints
/// it); [`figures`] reads it.
#[derive(Debug, Serialize, serde::Deserialize)]
pub struct ModelFile {
    pub bounds_source: String,
    #[serde(flatten)]
    pub report: ModelReport,
}

/// The figures' title, before the device.
pub const TITLE: &str = "Loop divergence";

const WIDTH: u32 = 1600;
const HEIGHT: u32 = 700;

/// Draws `divergence.png` into `path`: one panel per kernel present in `summaries`.
pub fn draw_plot(
    path: &Path,
    title: &str,
    summaries: &[LevelSummary],
    fits: &[CostFit],
) -> Result<()> {
    plot::ensure_font();
    let mut kernels: Vec<&str> = summaries.iter().map(|s| s.kernel.as_str()).collect();
    kernels.dedup();
    let design = plot::Design::panels((WIDTH, HEIGHT), kernels.len());
    plot::on_backend!(path, design, |root| {
        draw(&root, title, summaries, fits).context("drawing divergence")?;
        root.present().context("writing divergence")
    })
}

fn draw<DB: DrawingBackend>(
    root: &DrawingArea<DB, plotters::coord::Shift>,
    title: &str,
    summaries: &[LevelSummary],
    fits: &[CostFit],
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    root.fill(&WHITE)?;
    let root = plot::titled(root, title)?;
    let mut kernels: Vec<&str> = summaries.iter().map(|s| s.kernel.as_str()).collect();
    kernels.dedup();
    let panels = plot::panels(&root, kernels.len());
    for (panel, kernel) in panels.iter().zip(kernels) {
        let points: Vec<&LevelSummary> = summaries.iter().filter(|s| s.kernel == kernel).collect();
        let m_max = points.iter().map(|s| s.m).max().unwrap_or(1).max(1) as f64;
        let y_range = model_report::range(points.iter().flat_map(|s| [s.cycles.min, s.cycles.max]));
        let mut chart = plot::captioned_chart(panel, format!("{kernel} loop"), [20, 60, 100])
            .build_cartesian_2d(-0.5..m_max + 0.5, y_range)?;
        plot::mesh(&mut chart, "divergent lanes M", "cycles (warp, overhead removed)")
            .light_line_style(WHITE.mix(0.0))
            .x_label_formatter(&|m| format!("{m:.0}"))
            .y_label_formatter(&|cycles| format!("{cycles:.0}"))
            .draw()?;
        let band: Vec<(f64, f64)> = points
            .iter()
            .map(|s| (f64::from(s.m), s.cycles.max))
            .chain(points.iter().rev().map(|s| (f64::from(s.m), s.cycles.min)))
            .collect();
        chart
            .draw_series(std::iter::once(Polygon::new(band, BLUE.mix(0.18))))?
            .label("min–max over samples")
            .legend(|(x, y)| {
                Rectangle::new([(x, y - 6), (x + 20, y + 6)], BLUE.mix(0.18).filled())
            });
        let medians: Vec<(f64, f64)> = points
            .iter()
            .map(|s| (f64::from(s.m), s.cycles.median))
            .collect();
        chart
            .draw_series(LineSeries::new(medians.clone(), BLUE.stroke_width(3)))?
            .label("median")
            .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], BLUE.stroke_width(3)));
        chart.draw_series(medians.iter().map(|&p| Circle::new(p, 4, BLUE.filled())))?;
        // A line is drawn only where it describes the curve (the summary's rule).
        if let Some(fit) = fits
            .iter()
            .find(|f| f.kernel == kernel && f.r_squared >= LINEAR_R_SQUARED)
        {
            let line =
                |m: f64| fit.intercept_cycles.estimate + fit.cycles_per_divergent_lane.estimate * m;
            let (from, to) = (f64::from(fit.m_min), f64::from(fit.m_max));
            chart
                .draw_series(LineSeries::new(
                    vec![(from, line(from)), (to, line(to))],
                    RED.stroke_width(2),
                ))?
                .label(format!(
                    "fit: {:.1} cycles/lane [{:.1}, {:.1}]",
                    fit.cycles_per_divergent_lane.estimate,
                    fit.cycles_per_divergent_lane.ci95_low,
                    fit.cycles_per_divergent_lane.ci95_high
                ))
                .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], RED.stroke_width(2)));
        }
        plot::draw_legend(&mut chart, SeriesLabelPosition::UpperLeft)?;
    }
    Ok(())
}

/// Below this R² a loop's time is not a straight line in M, and its fitted slope is not
/// reported as a cost per lane.
const LINEAR_R_SQUARED: f64 = 0.99;

/// The summary's divergence rows: the fitted cost per divergent lane of each loop whose time
/// is linear in M, the stack model's verdict and prediction error, and the push / pop split
/// where measured.
pub fn figures(dir: &Path) -> Result<Vec<crate::report::figures::Figure>> {
    use crate::report::figures::{Domain, EstimateView, Rows};
    use crate::report::saved::{read_json, read_json_optional};
    use super::split_report::SplitFile;
    // The rows take an interval as a view whose parts may be missing.
    let view = |interval: Option<&Interval>| {
        interval.map_or_else(EstimateView::default, |i| EstimateView {
            estimate: Some(i.estimate),
            ci95_low: Some(i.ci95_low),
            ci95_high: Some(i.ci95_high),
        })
    };
    let mut r = Rows::new("divergence", "Divergence", "fit.json");
    for fit in read_json::<FitFile>(dir, "fit.json")?.fits {
        // R² decides whether a fit is summarised: one no least-squares fit gives is damage.
        let r2 = fit.r_squared;
        if !(r2.is_finite() && r2 <= 1.0) {
            return Err(crate::error::UsageError::new(crate::report::domain::refusal(
                &dir.join("fit.json").display().to_string(),
                &format!(
                    "r_squared of the {} loop's fit is {r2}, but a least-squares R² is at most 1",
                    fit.kernel
                ),
            ))
            .into());
        }
        // A straight line through a curve (the double loop's increments shrink with M) is no
        // cost per lane; the stack model's prediction error below says how well it is explained.
        if r2 < LINEAR_R_SQUARED {
            continue;
        }
        r.estimate(
            &format!("{} loop: cost per divergent lane", fit.kernel),
            &view(Some(&fit.cycles_per_divergent_lane)),
            "cycles",
        );
    }
    if let Some(model) = read_json_optional::<ModelFile>(dir, "model.json")? {
        let model = model.report;
        r.from("model.json")
            .text("reconvergence-stack model", Some(&model.verdict));
        r.push(
            "double loop predicted from the single: max error",
            model
                .double_loop_prediction
                .map(|p| p.max_abs_error_percent),
            "%",
            None,
        );
        r.domain(Domain::RelativeError);
    }
    if let Some(split) = read_json_optional::<SplitFile>(dir, "split.json")? {
        r.from("split.json").estimate(
            "branch (push) per divergent lane",
            &view(split.branch_cycles_per_divergent_lane.as_ref()),
            "cycles",
        );
        r.estimate(
            "reconvergence (pop) per divergent lane",
            &view(split.reconvergence_cycles_per_divergent_lane.as_ref()),
            "cycles",
        );
    }
    Ok(r.finish())
}

/// The levels of a run's `summary.csv`, as the measurement handed them to the fit.
pub fn level_summaries(dir: &Path) -> Result<Vec<LevelSummary>> {
    Ok(
        crate::report::saved::read_csv::<SummaryRow>(dir, "summary.csv")?
            .into_iter()
            .map(|r| LevelSummary {
                kernel: r.kernel,
                m: r.m,
                cycles: crate::analysis::stats::Summary {
                    n: r.n,
                    min: r.min_cycles,
                    median: r.median_cycles,
                    mean: r.mean_cycles,
                    max: r.max_cycles,
                    stdev: r.stdev_cycles,
                },
            })
            .collect(),
    )
}

#[cfg(test)]
mod read_back {
    #[test]
    fn the_committed_run_reads_back_both_kernels_levels() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("results/h100");
        let summaries = super::level_summaries(&root.join("divergence")).unwrap();
        assert_eq!(summaries.len(), 64, "32 levels of two kernels");
    }
}
