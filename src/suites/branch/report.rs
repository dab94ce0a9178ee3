//! Files of `gpubench branch`: `branch.csv` (every thread's clause and start / end stamps per
//! order), `branch.json` (first path, clause order, serialisation, warp overlap) and
//! `branch.png` (per-lane timelines, as Wong et al.'s Figs 7–8).

use std::path::Path;

use anyhow::{Context, Result};
use plotters::prelude::*;
use serde::Serialize;

use super::analysis::{OrderReport, WARP_LANES};
use super::measure::OrderRun;
use crate::report::plot::{self, BLUE, FONT, RED};
use crate::report::run_dir::RunDir;

/// The figure's title, before the device.
pub const TITLE: &str = "Branch order";

/// One line of `branch.csv` (read back by [`read_runs`]).
#[derive(Debug, Serialize, serde::Deserialize)]
pub struct Row {
    pub order: String,
    pub thread: usize,
    pub warp: usize,
    pub lane: usize,
    pub clause: usize,
    pub start_cycles: i64,
    pub end_cycles: i64,
}

/// One clause order's entry in `branch.json` (keyed by the order's name): [`write`] writes
/// it, [`figures`] reads it.
#[derive(Debug, Serialize, serde::Deserialize)]
pub struct OrderSummary {
    pub order: [i32; WARP_LANES],
    /// `None` where no path of the order was stamped.
    pub report: Option<OrderReport>,
    /// `None` with a single warp.
    pub warp_overlap: Option<f64>,
    pub warps: u32,
}

/// `branch.json`: each clause order's summary by the order's name.
pub type BranchFile = std::collections::BTreeMap<String, OrderSummary>;

pub fn write(run: &RunDir, runs: &[OrderRun], summary: &BranchFile) -> Result<()> {
    run.write_csv(
        "branch.csv",
        runs.iter().flat_map(|r| {
            r.paths.iter().map(move |p| Row {
                order: r.name.to_string(),
                thread: p.thread,
                warp: p.warp,
                lane: p.lane,
                clause: p.clause,
                start_cycles: p.start_cycles,
                end_cycles: p.end_cycles,
            })
        }),
    )?;
    run.write_json("branch.json", summary)
}

pub fn draw(path: &Path, title: &str, runs: &[OrderRun]) -> Result<()> {
    plot::titled_plot!(path, plot::Design::panels((1800, 1000), runs.len()), title, |root| {
        let panels = plot::panels(&root, runs.len());
        for (panel, run) in panels.iter().zip(runs) {
            let origin = run.paths.iter().map(|p| p.start_cycles).min().unwrap_or(0);
            let end = run
                .paths
                .iter()
                .map(|p| p.end_cycles - origin)
                .max()
                .unwrap_or(1)
                .max(1) as f64;
            let rows = run.warps as usize * 32;
            let mut chart = plot::captioned_chart(panel, run.name, [15, 60, 60])
                .build_cartesian_2d(0.0..end * 1.02, -0.5..rows as f64 - 0.5)?;
            chart
                .configure_mesh()
                .disable_y_mesh()
                .x_desc("cycles")
                .y_desc(if run.warps > 1 {
                    "thread (warp 1 above 31)"
                } else {
                    "lane"
                })
                .axis_desc_style((FONT, plot::TICK_SIZE))
                .label_style((FONT, plot::TICK_SIZE))
                .x_labels(4)
                .x_label_formatter(&|v| format!("{v:.0}"))
                .y_label_formatter(&|v| format!("{v:.0}"))
                .draw()?;
            chart.draw_series(run.paths.iter().map(|p| {
                let y = p.thread as f64;
                let color = if p.warp == 0 { BLUE } else { RED };
                Rectangle::new(
                    [
                        ((p.start_cycles - origin) as f64, y - 0.4),
                        ((p.end_cycles - origin) as f64, y + 0.4),
                    ],
                    color.mix(0.7).filled(),
                )
            }))?;
        }
    })
    .context("drawing branch")
}

/// The summary's branch rows: the path-order verdict and warp overlap of each clause order.
pub fn figures(dir: &Path) -> Result<Vec<crate::report::figures::Figure>> {
    let orders: BranchFile = crate::report::saved::read_json(dir, "branch.json")?;
    let mut r = crate::report::figures::Rows::new("branch", "Branches", "branch.json");
    for (order, run) in &orders {
        r.text(
            &format!("path order ({order} clauses)"),
            run.report.as_ref().map(|r| r.verdict.as_str()),
        );
        r.push(
            &format!("warp overlap ({order})"),
            run.warp_overlap,
            "fraction",
            None,
        );
    }
    Ok(r.finish())
}

/// The runs of branch.csv, in the order `measure::orders` gives their names.
pub fn read_runs(dir: &Path, seed: u64) -> Result<Vec<super::measure::OrderRun>> {
    let rows = crate::report::saved::read_csv::<Row>(dir, "branch.csv")?;
    let mut runs = Vec::new();
    for (name, order, warps) in super::measure::orders(seed) {
        let paths: Vec<super::analysis::PathInterval> = rows
            .iter()
            .filter(|r| r.order == name)
            .map(|r| super::analysis::PathInterval {
                thread: r.thread,
                warp: r.warp,
                lane: r.lane,
                clause: r.clause,
                start_cycles: r.start_cycles,
                end_cycles: r.end_cycles,
            })
            .collect();
        if !paths.is_empty() {
            runs.push(super::measure::OrderRun {
                name,
                order,
                warps,
                paths,
            });
        }
    }
    Ok(runs)
}

#[cfg(test)]
mod read_back {
    #[test]
    fn the_committed_run_reads_back_its_four_orders() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("results/h100");
        assert_eq!(super::read_runs(&root.join("branch"), 1).unwrap().len(), 4);
    }
}
