//! Files of `gpubench pipeline`: `pipeline.csv` (per operation: latency in cycles and
//! throughput in operations per clock per SM, laid out like Wong et al.'s Tables III–IV),
//! `pipeline_warps.csv` and `pipeline.png` (throughput and latency against warps, Fig. 6),
//! `pipeline.json` (both, with the saturation point).

use std::path::Path;

use anyhow::{Context, Result};
use plotters::prelude::*;
use serde::Serialize;

use super::plot::{self, BLUE, FONT, RED};
use super::run_dir::RunDir;
use crate::analysis::pipeline::WarpPoint;
use crate::experiments::pipeline::OperationResult;

#[derive(Debug, Serialize)]
struct Row<'a> {
    operation: &'a str,
    kind: &'a str,
    kernel: &'a str,
    latency_cycles: f64,
    throughput_ops_per_clock_per_sm: f64,
    note: &'a str,
}

pub fn write(
    run: &RunDir,
    results: &[OperationResult],
    sweep: &[WarpPoint],
    saturation: Option<u32>,
    swept: &str,
) -> Result<()> {
    run.write_csv(
        "pipeline.csv",
        results.iter().map(|r| Row {
            operation: r.operation.label,
            kind: r.operation.kind,
            kernel: r.operation.name,
            latency_cycles: r.latency_cycles,
            throughput_ops_per_clock_per_sm: r.ops_per_clock_per_sm,
            note: r.operation.note,
        }),
    )?;
    run.write_csv("pipeline_warps.csv", sweep)?;
    run.write_json(
        "pipeline.json",
        &serde_json::json!({
            "latency": "cycles per operation of one dependent chain, one warp",
            "throughput": "thread operations per clock on one SM: 1024 threads, four independent chains each",
            "operations": results.iter().map(|r| serde_json::json!({
                "kernel": r.operation.name, "operation": r.operation.label, "kind": r.operation.kind,
                "latency_cycles": r.latency_cycles, "ops_per_clock_per_sm": r.ops_per_clock_per_sm,
                "note": r.operation.note,
            })).collect::<Vec<_>>(),
            "warp_sweep": { "operation": swept, "points": sweep, "saturation_warps_95_percent": saturation },
        }),
    )
}

pub fn render_table(results: &[OperationResult]) -> String {
    let mut text = format!(
        "{:<12} {:<7} {:>10} {:>14}  {}\n",
        "operation", "type", "latency", "ops/clock/SM", "note"
    );
    for r in results {
        text += &format!(
            "{:<12} {:<7} {:>10.1} {:>14.1}  {}\n",
            r.operation.label,
            r.operation.kind,
            r.latency_cycles,
            r.ops_per_clock_per_sm,
            r.operation.note
        );
    }
    text
}

/// The figure's title, before the device.
pub fn title(swept: &crate::experiments::pipeline::Operation) -> String {
    format!("Pipeline: {} {} against warps", swept.kind, swept.label)
}

pub fn draw(path: &Path, title: &str, sweep: &[WarpPoint], saturation: Option<u32>) -> Result<()> {
    plot::ensure_font();
    plot::on_backend!(path, plot::Design::panels((1600, 700), 2), |root| {
        (|| -> Result<(), Box<dyn std::error::Error + '_>> {
            root.fill(&WHITE)?;
            let root = plot::titled(&root, title)?;
            let panels = plot::panels(&root, 2);
            let max_warps = sweep.iter().map(|p| p.warps).max().unwrap_or(1);
            let top = sweep.iter().map(|p| p.ops_per_clock).fold(1.0, f64::max) * 1.1;
            let mut throughput = ChartBuilder::on(&panels[0])
                .caption("throughput", (FONT, plot::LABEL_SIZE))
                .margin(20)
                .x_label_area_size(60)
                .y_label_area_size(90)
                .build_cartesian_2d(0..max_warps + 1, 0.0..top)?;
            throughput
                .configure_mesh()
                .x_desc("warps on the SM")
                .y_desc("operations per clock")
                .axis_desc_style((FONT, plot::LABEL_SIZE))
                .label_style((FONT, plot::TICK_SIZE))
                .draw()?;
            throughput.draw_series(LineSeries::new(
                sweep.iter().map(|p| (p.warps, p.ops_per_clock)),
                BLUE.stroke_width(2),
            ))?;
            throughput.draw_series(
                sweep
                    .iter()
                    .map(|p| Circle::new((p.warps, p.ops_per_clock), 4, BLUE.filled())),
            )?;
            if let Some(knee) = saturation {
                throughput.draw_series(std::iter::once(PathElement::new(
                    vec![(knee, 0.0), (knee, top)],
                    RED.stroke_width(2),
                )))?;
            }
            let latency_top = sweep.iter().map(|p| p.latency_cycles).fold(1.0, f64::max) * 1.1;
            let mut latency = ChartBuilder::on(&panels[1])
                .caption("latency seen by warp 0", (FONT, plot::LABEL_SIZE))
                .margin(20)
                .x_label_area_size(60)
                .y_label_area_size(90)
                .build_cartesian_2d(0..max_warps + 1, 0.0..latency_top)?;
            latency
                .configure_mesh()
                .x_desc("warps on the SM")
                .y_desc("cycles per dependent operation")
                .axis_desc_style((FONT, plot::LABEL_SIZE))
                .label_style((FONT, plot::TICK_SIZE))
                .draw()?;
            latency.draw_series(LineSeries::new(
                sweep.iter().map(|p| (p.warps, p.latency_cycles)),
                RED.stroke_width(2),
            ))?;
            latency.draw_series(
                sweep
                    .iter()
                    .map(|p| Circle::new((p.warps, p.latency_cycles), 4, RED.filled())),
            )?;
            root.present()?;
            Ok(())
        })()
        .map_err(|e| anyhow::anyhow!("{e}"))
    })
    .context("drawing pipeline")
}

/// The summary's pipeline rows: each operation's latency and throughput, and the warps that
/// reach 95 % of the fp32 fma throughput.
pub fn figures(dir: &Path) -> Result<Vec<super::figures::Figure>> {
    #[derive(serde::Deserialize)]
    struct Operation {
        kind: String,
        operation: String,
        latency_cycles: Option<f64>,
        ops_per_clock_per_sm: Option<f64>,
    }
    #[derive(serde::Deserialize)]
    struct Sweep {
        saturation_warps_95_percent: Option<f64>,
    }
    #[derive(serde::Deserialize)]
    struct File {
        operations: Vec<Operation>,
        warp_sweep: Option<Sweep>,
    }
    let pipeline: File = super::saved::read_json(dir, "pipeline.json")?;
    let mut r = super::figures::Rows::new("Pipeline", "pipeline.json");
    for op in &pipeline.operations {
        let label = format!("{} {}", op.kind, op.operation);
        r.push(
            &format!("{label} latency"),
            op.latency_cycles,
            "cycles",
            None,
        );
        r.push(
            &format!("{label} throughput"),
            op.ops_per_clock_per_sm,
            "ops/clock/SM",
            None,
        );
    }
    r.push(
        "warps to reach 95% of fp32 fma throughput",
        pipeline
            .warp_sweep
            .and_then(|s| s.saturation_warps_95_percent),
        "warps",
        None,
    );
    Ok(r.finish())
}
