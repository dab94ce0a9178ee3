//! Outputs of `gpubench emulate`: `counts.csv` (per level: pushes, pops, spills, refills,
//! instructions executed, maximum depth), `trace.csv` (every step of the drawn level),
//! `stack.png` (stack depth against instructions executed, the paper's Figs 4–5) and
//! `mask.png` (lanes × steps, active or not, as in Schreiner's execution-mask pictures).

use std::path::Path;

use anyhow::{Context, Result};
use plotters::prelude::*;
use serde::Serialize;

use super::plot::{self, BLUE, RED};
use super::run_dir::RunDir;
use crate::analysis::stack_emulator::{StackCounts, Step, WARP_LANES};

#[derive(Debug, Serialize)]
struct CountsRow {
    m: u32,
    sync_pushes: usize,
    div_pushes: usize,
    pops: usize,
    spills: usize,
    refills: usize,
    instructions: usize,
    max_depth: usize,
}

pub fn write_counts(run: &RunDir, counts: &[(u32, StackCounts)]) -> Result<()> {
    run.write_csv(
        "counts.csv",
        counts.iter().map(|(m, c)| CountsRow {
            m: *m,
            sync_pushes: c.sync_pushes,
            div_pushes: c.div_pushes,
            pops: c.pops,
            spills: c.spills,
            refills: c.refills,
            instructions: c.instructions,
            max_depth: c.max_depth,
        }),
    )
}

#[derive(Debug, Serialize)]
struct TraceRow<'a> {
    step: usize,
    pc: usize,
    instruction: &'a str,
    active_mask: String,
    active_lanes: u32,
    depth: usize,
    on_chip_depth: usize,
    event: &'a str,
}

pub fn write_trace(run: &RunDir, steps: &[Step]) -> Result<()> {
    run.write_csv(
        "trace.csv",
        steps.iter().map(|s| TraceRow {
            step: s.step,
            pc: s.pc,
            instruction: &s.instruction,
            active_mask: format!("0x{:08x}", s.active_mask),
            active_lanes: s.active_mask.count_ones(),
            depth: s.depth,
            on_chip_depth: s.on_chip_depth,
            event: &s.event,
        }),
    )
}

/// `stack.png`: total and on-chip depth after every executed instruction.
pub fn draw_stack(path: &Path, title: &str, steps: &[Step]) -> Result<()> {
    plot::white_plot!(path, (1200, 600), |root| {
        let max_depth = steps.iter().map(|s| s.depth).max().unwrap_or(1).max(1);
        let mut chart = plot::framed_chart(&root, title, [20, 60, 80])
            .build_cartesian_2d(0..steps.len().max(1), 0..max_depth + 1)?;
        plot::mesh(&mut chart, "instructions executed", "stack depth (tokens)").draw()?;
        chart
            .draw_series(LineSeries::new(
                steps.iter().enumerate().map(|(i, s)| (i + 1, s.depth)),
                BLUE.stroke_width(2),
            ))?
            .label("whole stack")
            .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], BLUE.stroke_width(2)));
        if steps.iter().any(|s| s.on_chip_depth != s.depth) {
            chart
                .draw_series(LineSeries::new(
                    steps
                        .iter()
                        .enumerate()
                        .map(|(i, s)| (i + 1, s.on_chip_depth)),
                    RED.stroke_width(2),
                ))?
                .label("on chip")
                .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], RED.stroke_width(2)));
        }
        plot::draw_legend(&mut chart, SeriesLabelPosition::UpperLeft)?;
    })
    .context("writing stack")
}

/// `mask.png`: one column per executed instruction, one row per lane, dark where the lane
/// executed it.
pub fn draw_mask(path: &Path, title: &str, steps: &[Step]) -> Result<()> {
    let width = (steps.len() as u32 * 6).clamp(900, 2400) + 120;
    plot::white_plot!(path, (width, 640), |root| {
        let mut chart = plot::framed_chart(&root, title, [20, 60, 80])
            .build_cartesian_2d(0..steps.len().max(1), 0..WARP_LANES)?;
        plot::mesh(&mut chart, "instructions executed", "lane")
            .disable_mesh()
            .draw()?;
        let cells = steps.iter().enumerate().flat_map(|(i, s)| {
            (0..WARP_LANES)
                .filter(move |lane| s.active_mask & (1 << lane) != 0)
                .map(move |lane| {
                    Rectangle::new([(i, lane), (i + 1, lane + 1)], BLUE.mix(0.8).filled())
                })
        });
        chart.draw_series(cells)?;
    })
    .context("writing mask")
}
