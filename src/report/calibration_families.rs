//! The calibration study per held-out family (`analysis::calibration::families`):
//! `families.csv` (each family's reliability bins, stated through the table made without it),
//! `families.json` (per family its worst gap and its capacity intervals' coverage) and
//! `families.png` (one small reliability diagram per family).

use std::path::Path;

use anyhow::{Context, Result};
use plotters::prelude::*;

use super::plot::{self, BLUE, FONT, GREY};
use super::run_dir::RunDir;
use crate::analysis::calibration::families::{Family, MIN_BIN_ANSWERS};

#[derive(serde::Serialize)]
struct BinRow<'a> {
    family: &'a str,
    from: f64,
    to: f64,
    answers: usize,
    mean_confidence: Option<f64>,
    share_right: Option<f64>,
}

/// Writes `families.csv` and `families.json`.
pub fn write(run: &RunDir, families: &[Family]) -> Result<()> {
    let rows: Vec<BinRow> = families
        .iter()
        .flat_map(|f| {
            f.bins.iter().map(|b| BinRow {
                family: &f.family,
                from: b.from,
                to: b.to,
                answers: b.answers,
                mean_confidence: b.mean_confidence,
                share_right: b.share_right,
            })
        })
        .collect();
    run.write_csv("families.csv", &rows)?;
    let summary: Vec<serde_json::Value> = families
        .iter()
        .map(|f| {
            serde_json::json!({
                "family": f.family,
                "answers": f.answers(),
                "worst_gap": f.worst_gap,
                "basis_gaps": f.basis_gaps.iter().cloned().collect::<std::collections::BTreeMap<String, f64>>(),
                "capacity_intervals": f.capacity_intervals,
                "capacity_covered": f.capacity_covered,
                "capacity_coverage": f.coverage(),
            })
        })
        .collect();
    run.write_json(
        "families.json",
        &serde_json::json!({
            "method": format!("each family held out in turn: the confidence table made from every other family's answers, the held-out family's answers stated through it; worst_gap = the largest |mean stated confidence - share right| over bins of at least {MIN_BIN_ANSWERS} answers; capacity_coverage = the share of capacity intervals holding the true capacity"),
            "families": summary,
            "gaps_by_basis": crate::analysis::calibration::families::gaps_by_basis(families)
                .into_iter()
                .collect::<std::collections::BTreeMap<String, f64>>(),
        }),
    )
}

/// The per-family table as text: answers, worst gap, capacity coverage.
pub fn render(families: &[Family]) -> String {
    let mut text = format!(
        "{:<24} {:>8} {:>10} {:>10} {:>10}\n",
        "held-out family", "answers", "worst gap", "intervals", "coverage"
    );
    for f in families {
        let show = |v: Option<f64>| v.map_or("-".to_string(), |v| format!("{v:.3}"));
        text += &format!(
            "{:<24} {:>8} {:>10} {:>10} {:>10}\n",
            f.family,
            f.answers(),
            show(f.worst_gap),
            f.capacity_intervals,
            show(f.coverage())
        );
    }
    text
}

/// One reliability diagram per held-out family, four to a row: each bin's share right against
/// its mean stated confidence (bins of fewer than `MIN_BIN_ANSWERS` answers hollow), the
/// diagonal and its ±0.1 band.
pub fn draw(path: &Path, title: &str, families: &[Family]) -> Result<()> {
    let columns = 4;
    let rows = families.len().div_ceil(columns).max(1);
    let size = (1600, 60 + 380 * rows as u32);
    plot::titled_plot!(path, size, title, |root| {
        let panels = root.split_evenly((rows, columns));
        for (panel, family) in panels.iter().zip(families) {
            let coverage = family
                .coverage()
                .map_or(String::new(), |c| format!(", capacity {:.0} %", 100.0 * c));
            let mut chart = ChartBuilder::on(panel)
                .margin(12)
                .caption(
                    format!("{}{coverage}", family.family),
                    (FONT, plot::TICK_SIZE),
                )
                .x_label_area_size(30)
                .y_label_area_size(40)
                .build_cartesian_2d(0.0..1.0, 0.0..1.0)?;
            chart
                .configure_mesh()
                .x_labels(3)
                .y_labels(3)
                .label_style((FONT, plot::TICK_SIZE * 3 / 4))
                .draw()?;
            chart.draw_series(std::iter::once(Polygon::new(
                super::calibration::BAND.to_vec(),
                GREY.mix(0.2),
            )))?;
            chart.draw_series(LineSeries::new(
                vec![(0.0, 0.0), (1.0, 1.0)],
                GREY.stroke_width(1),
            ))?;
            for bin in &family.bins {
                let (Some(c), Some(s)) = (bin.mean_confidence, bin.share_right) else {
                    continue;
                };
                let style = if bin.answers >= MIN_BIN_ANSWERS {
                    BLUE.filled()
                } else {
                    BLUE.stroke_width(1)
                };
                chart.draw_series(std::iter::once(Circle::new((c, s), 5, style)))?;
            }
        }
    })
    .context("drawing the per-family reliability diagrams")
}

/// The families of the study in `dir`, from its `outcomes.csv` (`None`: a study made before
/// the families were recorded).
pub fn of_study(dir: &Path) -> Result<Option<Vec<Family>>> {
    Ok(of_answers(&super::calibration::answers(dir)?))
}

/// The families of a study's answers (`None`: a study made before the families were recorded).
pub fn of_answers(answers: &[super::calibration::Answer]) -> Option<Vec<Family>> {
    if answers.iter().any(|a| a.replacement.is_empty()) {
        return None;
    }
    let items: Vec<_> = answers.iter().map(|a| a.item()).collect();
    Some(crate::analysis::calibration::families::held_out(&items))
}

/// Writes the families' files and diagram into `run`, and prints their table.
pub fn write_and_draw(run: &RunDir, title: &str, families: &[Family]) -> Result<()> {
    write(run, families)?;
    let title = format!("{title}, each family held out");
    run.write_plot("families", |path| draw(path, &title, families))?;
    print!("{}", render(families));
    Ok(())
}
