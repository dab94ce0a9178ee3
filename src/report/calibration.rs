//! Files of `gpubench calibrate`: `outcomes.csv` (each simulated cache, what was stated and
//! whether it was right), `reliability.csv` and `reliability.png` (stated confidence against
//! the share right, per tenth), `calibration.json` (the study's settings and bins).

use std::path::Path;

use anyhow::{Context, Result};
use plotters::prelude::*;

use super::plot::{self, BLUE, FONT, GREY};
use super::run_dir::RunDir;
use crate::analysis::calibration::{Bin, Outcome};

/// One row of `outcomes.csv`: the case, then what was stated about it.
#[derive(serde::Serialize)]
struct Row<'a> {
    size_bytes: u64,
    line_bytes: u64,
    ways: u64,
    replacement: &'a str,
    hashed_index: bool,
    next_line_prefetch: bool,
    noise_cycles: f64,
    outliers: bool,
    coarse: bool,
    stride_bytes: u64,
    hit_cycles: f64,
    miss_cycles: f64,
    seed: u64,
    reading: &'a str,
    confidence: Option<f64>,
    raw_confidence: Option<f64>,
    basis: &'a str,
    stated_size_bytes: Option<u64>,
    stated_line_bytes: Option<u64>,
    stated_fetch_bytes: Option<u64>,
    stated_ways: Option<u64>,
    right: bool,
}

pub fn write(
    run: &RunDir,
    outcomes: &[Outcome],
    bins: &[Bin],
    settings: &serde_json::Value,
) -> Result<()> {
    run.write_csv(
        "outcomes.csv",
        outcomes.iter().map(|o| Row {
            size_bytes: o.case.size_bytes,
            line_bytes: o.case.line_bytes,
            ways: o.case.ways,
            replacement: o.case.replacement,
            hashed_index: o.case.hashed_index,
            next_line_prefetch: o.case.next_line_prefetch,
            noise_cycles: o.case.noise_cycles,
            outliers: o.case.outliers,
            coarse: o.case.coarse,
            stride_bytes: o.case.stride_bytes,
            hit_cycles: o.case.hit_cycles,
            miss_cycles: o.case.miss_cycles,
            seed: o.case.seed,
            reading: o.reading,
            confidence: o.confidence,
            raw_confidence: o.raw_confidence,
            basis: o.basis,
            stated_size_bytes: o.stated_size_bytes,
            stated_line_bytes: o.stated_line_bytes,
            stated_fetch_bytes: o.stated_fetch_bytes,
            stated_ways: o.stated_ways,
            right: o.right,
        }),
    )?;
    run.write_csv("reliability.csv", bins)?;
    let answered = outcomes.iter().filter(|o| o.confidence.is_some()).count();
    run.write_json(
        "calibration.json",
        &serde_json::json!({
            "settings": settings,
            "cases": outcomes.len(),
            "answered": answered,
            "right": outcomes.iter().filter(|o| o.right).count(),
            "bins": bins,
            "method": "each case a simulated cache (LRU, FIFO, tree-PLRU, random; hashed index 15 %, next-line prefetch 15 %; noise 0.02-1 cycle; outliers 20 %; coarse sweeps 20 %) swept as an ascending chase and as a descending one; each case read twice by cache_inference as a run is (the ascending chase alone, and both: reading); right = every stated line and way count true and the size within a line",
        }),
    )
}

/// The diagram's title.
pub fn title(cases: u64, seed: u64) -> String {
    format!("Cache-level confidence on {cases} simulated caches (seed {seed})")
}

pub fn render(bins: &[Bin]) -> String {
    let mut text = format!(
        "{:<12} {:>8} {:>16} {:>12}\n",
        "confidence", "answers", "mean confidence", "share right"
    );
    for b in bins {
        let f = |v: Option<f64>| v.map_or("-".to_string(), |v| format!("{v:.3}"));
        text += &format!(
            "{:<12} {:>8} {:>16} {:>12}\n",
            format!("{:.1}-{:.1}", b.from, b.to),
            b.answers,
            f(b.mean_confidence),
            f(b.share_right)
        );
    }
    text
}

/// The reliability diagram: each bin's share right against its mean stated confidence, the
/// diagonal where they agree, and the ±0.1 band the study allows.
pub fn draw(path: &Path, title: &str, bins: &[Bin]) -> Result<()> {
    plot::ensure_font();
    plot::on_backend!(path, (900, 800), |root| {
        (|| -> Result<(), Box<dyn std::error::Error + '_>> {
            root.fill(&WHITE)?;
            let root = plot::titled(&root, title)?;
            let mut chart = ChartBuilder::on(&root)
                .margin(20)
                .x_label_area_size(60)
                .y_label_area_size(80)
                .build_cartesian_2d(0.0..1.0, 0.0..1.0)?;
            chart
                .configure_mesh()
                .x_desc("stated confidence (bin mean)")
                .y_desc("share of answers right")
                .axis_desc_style((FONT, plot::LABEL_SIZE))
                .label_style((FONT, plot::TICK_SIZE))
                .draw()?;
            chart.draw_series(std::iter::once(Polygon::new(
                vec![
                    (0.0, 0.1),
                    (0.9, 1.0),
                    (1.0, 1.0),
                    (1.0, 0.9),
                    (0.1, 0.0),
                    (0.0, 0.0),
                ],
                GREY.mix(0.2),
            )))?;
            chart.draw_series(LineSeries::new(
                vec![(0.0, 0.0), (1.0, 1.0)],
                GREY.stroke_width(2),
            ))?;
            let points: Vec<(f64, f64, usize)> = bins
                .iter()
                .filter_map(|b| Some((b.mean_confidence?, b.share_right?, b.answers)))
                .collect();
            chart.draw_series(LineSeries::new(
                points.iter().map(|(c, s, _)| (*c, *s)),
                BLUE.stroke_width(2),
            ))?;
            for (c, s, n) in &points {
                chart.draw_series(std::iter::once(Circle::new((*c, *s), 6, BLUE.filled())))?;
                chart.draw_series(std::iter::once(Text::new(
                    format!("{n}"),
                    (*c, (*s - 0.04).max(0.01)),
                    (FONT, plot::TICK_SIZE),
                )))?;
            }
            root.present()?;
            Ok(())
        })()
        .map_err(|e| anyhow::anyhow!("{e}"))
    })
    .context("drawing the reliability diagram")
}
