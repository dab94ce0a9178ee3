//! Files of `gpubench pipeline`: `pipeline.csv` (per operation: latency in cycles and
//! throughput in operations per clock per SM, laid out like Wong et al.'s Tables III–IV),
//! `pipeline_warps.csv` and `pipeline.png` (throughput and latency against warps, Fig. 6),
//! `pipeline.json` (both, with the saturation point), `instructions.csv` (per SASS
//! instruction: latency with its range over repeats, throughput, the SASS counted and how the
//! figure was obtained) and `pipeline.sass` (every kernel, the timed regions marked).

use std::path::Path;

use anyhow::{Context, Result};
use plotters::prelude::*;
use serde::Serialize;

use super::analysis::WarpPoint;
use super::chains::{Chains, Instruction};
use super::measure::OperationResult;
use crate::suites::pipeline::instruction_latency::InstructionLatency;
use crate::report::plot::{self, BLUE, RED};
use crate::report::run_dir::RunDir;

#[derive(Debug, Serialize)]
struct Row<'a> {
    operation: &'a str,
    kind: &'a str,
    kernel: &'a str,
    latency_cycles: f64,
    throughput_ops_per_clock_per_sm: f64,
    note: &'a str,
    /// The SASS of the timed loop, static counts per trip.
    timed_sass: &'a str,
}

/// One row of `instructions.csv` and of `pipeline.json`'s `instructions`.
#[derive(Debug, Clone, Serialize, serde::Deserialize)]
pub struct InstructionRow {
    pub instruction: String,
    pub ptx: String,
    /// The measured instructions the long chain has beyond the short one.
    pub sass: String,
    /// Other instructions there, subtracted at their own latency.
    pub companions: String,
    pub latency_cycles: Option<f64>,
    pub latency_min: Option<f64>,
    pub latency_max: Option<f64>,
    pub throughput_per_clock_per_sm: Option<f64>,
    pub method: String,
    pub kernels: String,
}

pub fn instruction_rows(read: &[(Instruction, InstructionLatency)]) -> Vec<InstructionRow> {
    read.iter()
        .map(|(instruction, reading)| InstructionRow {
            instruction: instruction.sass[0].to_string(),
            ptx: instruction.ptx.to_string(),
            sass: reading.sass.clone(),
            companions: reading.companions.clone(),
            latency_cycles: reading.latency_cycles,
            latency_min: reading.latency_min,
            latency_max: reading.latency_max,
            throughput_per_clock_per_sm: reading.throughput_per_clock_per_sm,
            method: reading.method.clone(),
            kernels: instruction.entries(Chains::Latency).join(" and "),
        })
        .collect()
}

/// What one run measured, for its files.
pub struct Measured<'a> {
    pub operations: &'a [OperationResult],
    /// Per operation, the SASS of its timed loop (`None` without SASS).
    pub operations_sass: &'a [Option<String>],
    pub instructions: &'a [InstructionRow],
    /// How the SASS was made, or why there is none.
    pub sass_status: &'a str,
    pub sweep: &'a [WarpPoint],
    pub saturation: Option<u32>,
    pub swept: &'a str,
}

pub fn write(run: &RunDir, m: &Measured) -> Result<()> {
    let sass_of = |i: usize| m.operations_sass.get(i).cloned().flatten();
    run.write_csv(
        "pipeline.csv",
        m.operations.iter().enumerate().map(|(i, r)| Row {
            operation: r.operation.label,
            kind: r.operation.kind,
            kernel: r.operation.name,
            latency_cycles: r.latency_cycles,
            throughput_ops_per_clock_per_sm: r.ops_per_clock_per_sm,
            note: r.operation.note,
            timed_sass: m
                .operations_sass
                .get(i)
                .and_then(Option::as_deref)
                .unwrap_or(""),
        }),
    )?;
    run.write_csv("instructions.csv", m.instructions)?;
    run.write_csv("pipeline_warps.csv", m.sweep)?;
    run.write_json(
        "pipeline.json",
        &PipelineFile {
            instructions: m.instructions.to_vec(),
            instructions_method: Some("per SASS instruction: one warp runs chains of 32 and 128 dependent steps per loop trip; latency = (cycles of the long chain - cycles of the short one) / the instructions the SASS shows the long loop has beyond the short one, other instructions of a step subtracted at their own measured latency; throughput the same with 1024 threads of four chains of 16 and 32 steps, thread instructions per clock on one SM".into()),
            latency: "cycles per PTX operation of one dependent chain, one warp, loop included".into(),
            operations: m
                .operations
                .iter()
                .enumerate()
                .map(|(i, r)| OperationRecord {
                    kernel: r.operation.name.into(),
                    kind: r.operation.kind.into(),
                    latency_cycles: r.latency_cycles,
                    note: r.operation.note.into(),
                    operation: r.operation.label.into(),
                    ops_per_clock_per_sm: r.ops_per_clock_per_sm,
                    timed_sass: sass_of(i),
                })
                .collect(),
            sass: Some(m.sass_status.into()),
            throughput: "thread operations per clock on one SM: 1024 threads, four independent chains each".into(),
            warp_sweep: WarpSweep {
                operation: m.swept.into(),
                points: m.sweep.to_vec(),
                saturation_warps_95_percent: m.saturation,
            },
        },
    )
}

/// `pipeline.json`: every PTX operation's chain figures, the per-SASS-instruction table and
/// the warp sweep. [`write`] writes it; [`figures`] reads it.
#[derive(Debug, Serialize, serde::Deserialize)]
pub struct PipelineFile {
    /// Runs from before the per-instruction table lack it, its method and `sass`.
    #[serde(default)]
    pub instructions: Vec<InstructionRow>,
    pub instructions_method: Option<String>,
    pub latency: String,
    pub operations: Vec<OperationRecord>,
    /// How the SASS was made, or why there is none.
    pub sass: Option<String>,
    pub throughput: String,
    pub warp_sweep: WarpSweep,
}

/// One PTX operation's chain figures in `pipeline.json`.
#[derive(Debug, Serialize, serde::Deserialize)]
pub struct OperationRecord {
    pub kernel: String,
    pub kind: String,
    pub latency_cycles: f64,
    #[serde(default)]
    pub note: String,
    pub operation: String,
    pub ops_per_clock_per_sm: f64,
    /// The SASS of the timed loop (`null` without SASS; runs from before it lack it).
    pub timed_sass: Option<String>,
}

/// `pipeline.json`'s warp sweep of one operation.
#[derive(Debug, Serialize, serde::Deserialize)]
pub struct WarpSweep {
    pub operation: String,
    pub points: Vec<WarpPoint>,
    pub saturation_warps_95_percent: Option<u32>,
}

/// The per-instruction table as the terminal shows it.
pub fn render_instructions(rows: &[InstructionRow]) -> String {
    let mut text = format!(
        "{:<10} {:>9} {:>15} {:>14}  {}\n",
        "SASS", "latency", "range", "instr/clk/SM", "chain step"
    );
    for r in rows {
        let number = |v: Option<f64>, width: usize| {
            v.map_or(format!("{:>width$}", "-"), |v| format!("{v:>width$.2}"))
        };
        let range = match (r.latency_min, r.latency_max) {
            (Some(l), Some(h)) => format!("{l:.2}-{h:.2}"),
            _ => "-".into(),
        };
        let step = if r.latency_cycles.is_none() {
            r.method.clone()
        } else if r.companions.is_empty() {
            r.sass.clone()
        } else {
            format!("{} + {} (subtracted)", r.sass, r.companions)
        };
        text += &format!(
            "{:<10} {} {:>15} {}  {}\n",
            r.instruction,
            number(r.latency_cycles, 9),
            range,
            number(r.throughput_per_clock_per_sm, 14),
            step
        );
    }
    text
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
pub fn title(swept: &super::measure::Operation) -> String {
    format!("Pipeline: {} {} against warps", swept.kind, swept.label)
}

pub fn draw(path: &Path, title: &str, sweep: &[WarpPoint], saturation: Option<u32>) -> Result<()> {
    plot::titled_plot!(path, plot::Design::panels((1600, 700), 2), title, |root| {
        let panels = plot::panels(&root, 2);
        let max_warps = sweep.iter().map(|p| p.warps).max().unwrap_or(1);
        let top = sweep.iter().map(|p| p.ops_per_clock).fold(1.0, f64::max) * 1.1;
        let mut throughput = plot::captioned_chart(&panels[0], "throughput", [20, 60, 90])
            .build_cartesian_2d(0..max_warps + 1, 0.0..top)?;
        plot::mesh(&mut throughput, "warps on the SM", "operations per clock")
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
        let mut latency = plot::captioned_chart(&panels[1], "latency seen by warp 0", [20, 60, 90])
            .build_cartesian_2d(0..max_warps + 1, 0.0..latency_top)?;
        plot::mesh(&mut latency, "warps on the SM", "cycles per dependent operation")
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
    })
    .context("drawing pipeline")
}

/// The most SASS instructions an SM issues per clock, counted per thread: four schedulers,
/// one warp instruction of 32 threads each per clock (compute capability 7.0 on).
fn issue_ceiling() -> crate::report::ceilings::Ceiling {
    crate::report::ceilings::Ceiling {
        value: crate::report::ceilings::SM_THREAD_OPS_PER_CLOCK,
        made_of: "4 schedulers × one warp instruction of 32 threads per SM per clock".into(),
    }
}

/// The most PTX operations an SM completes per clock, counted per thread: two per thread
/// instruction (a packed pair, half2's two FMAs; or a pair ptxas fuses, two add.u32 in one
/// IADD3: 241 per clock on an H100) at the issue ceiling.
fn ptx_ceiling() -> crate::report::ceilings::Ceiling {
    crate::report::ceilings::Ceiling {
        value: 2.0 * crate::report::ceilings::SM_THREAD_OPS_PER_CLOCK,
        made_of: "two PTX operations per thread instruction (a packed or fused pair) × 4 schedulers × 32 threads per SM per clock".into(),
    }
}

/// The summary's pipeline rows: latency and throughput per SASS instruction (where the run
/// measured them), each PTX operation's chain figures named as such, and the warps that reach
/// 95 % of the fp32 fma throughput.
pub fn figures(dir: &Path) -> Result<Vec<crate::report::figures::Figure>> {
    let pipeline: PipelineFile = crate::report::saved::read_json(dir, "pipeline.json")?;
    let mut r = crate::report::figures::Rows::new("pipeline", "Pipeline", "pipeline.json");
    for row in &pipeline.instructions {
        let name = if row.companions.is_empty() {
            row.instruction.clone()
        } else {
            format!("{} ({} subtracted)", row.instruction, row.companions)
        };
        let range = row
            .latency_min
            .zip(row.latency_max)
            .map(|(low, high)| (low, high, "min-max over repeats"));
        let key = |what| {
            crate::report::keys::Known::Sass {
                opcode: &row.instruction,
                what,
            }
            .key()
        };
        r.key(key(crate::report::keys::LATENCY)).push(
            &format!("{name} latency"),
            row.latency_cycles,
            "cycles",
            range,
        );
        let throughput = format!("{} throughput", row.instruction);
        r.key(key(crate::report::keys::THROUGHPUT)).push(
            &throughput,
            row.throughput_per_clock_per_sm,
            "instructions/clock/SM",
            None,
        );
        r.at_most(Some(&issue_ceiling()));
    }
    // Runs from before the per-instruction table named these rows by the operation alone.
    let chain = |op: &OperationRecord| {
        if pipeline.instructions.is_empty() {
            format!("{} {}", op.kind, op.operation)
        } else if op.note.is_empty() {
            format!("{} {} (PTX, chain and loop)", op.kind, op.operation)
        } else {
            format!(
                "{} {} (PTX, {}; chain and loop)",
                op.kind, op.operation, op.note
            )
        }
    };
    for op in &pipeline.operations {
        let label = chain(op);
        let operation = format!("{} {}", op.kind, op.operation);
        let key = |what| crate::report::keys::Known::Ptx {
            operation: &operation,
            what,
        }
        .key();
        r.key(key(crate::report::keys::LATENCY)).push(
            &format!("{label} latency"),
            Some(op.latency_cycles),
            "cycles",
            None,
        );
        let throughput = format!("{label} throughput");
        r.key(key(crate::report::keys::THROUGHPUT)).push(
            &throughput,
            Some(op.ops_per_clock_per_sm),
            "ops/clock/SM",
            None,
        );
        r.at_most(Some(&ptx_ceiling()));
    }
    r.push(
        "warps to reach 95% of fp32 fma throughput",
        pipeline
            .warp_sweep
            .saturation_warps_95_percent
            .map(f64::from),
        "warps",
        None,
    );
    Ok(r.finish())
}
