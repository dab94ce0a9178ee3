//! Files of `gpubench regs`: `regs.csv` (cap, registers per thread, largest block measured and
//! per the driver, registers that block holds), `regs.json` (the inferred allocation unit) and
//! `regs.png` (largest block against registers per thread, with the fitted allocator).

use std::path::Path;

use anyhow::{Context, Result};
use plotters::prelude::*;
use serde::{Deserialize, Serialize};

use super::analysis::{Allocation, RegisterPoint, predicted_threads};
use crate::report::plot::{self, BLUE, RED};
use crate::report::run_dir::RunDir;

/// The figure's title, before the device.
pub const TITLE: &str = "Register allocation";

/// One line of `regs.csv` (read back by [`read_points`]).
#[derive(Debug, Serialize, Deserialize)]
pub struct Row {
    pub cap: u32,
    pub registers_per_thread: u32,
    pub max_threads: u32,
    pub max_threads_attribute: u32,
    pub block_registers: u32,
}

/// The points of a run's `regs.csv`, as the measurement handed them to the analysis.
pub fn read_points(dir: &Path) -> Result<Vec<RegisterPoint>> {
    Ok(crate::report::saved::read_csv::<Row>(dir, "regs.csv")?
        .into_iter()
        .map(|r| RegisterPoint {
            cap: r.cap,
            registers: r.registers_per_thread,
            max_threads: r.max_threads,
            max_threads_attribute: r.max_threads_attribute,
        })
        .collect())
}

/// `regs.json`: what the run wrote, read back by `report` as the same type.
#[derive(Debug, Serialize, Deserialize)]
pub struct File {
    pub register_file_per_block: u32,
    pub allocation: Allocation,
}

pub fn write(
    run: &RunDir,
    points: &[RegisterPoint],
    allocation: &Allocation,
    register_file: u32,
) -> Result<()> {
    run.write_csv(
        "regs.csv",
        points.iter().map(|p| Row {
            cap: p.cap,
            registers_per_thread: p.registers,
            max_threads: p.max_threads,
            max_threads_attribute: p.max_threads_attribute,
            block_registers: p.registers * p.max_threads,
        }),
    )?;
    run.write_json(
        "regs.json",
        &File {
            register_file_per_block: register_file,
            allocation: allocation.clone(),
        },
    )
}

pub fn draw(
    path: &Path,
    title: &str,
    points: &[RegisterPoint],
    allocation: &Allocation,
    register_file: u32,
    max_threads: u32,
) -> Result<()> {
    plot::white_plot!(path, (1200, 700), |root| {
        let mut chart = plot::framed_chart(&root, title, [20, 60, 90])
            .build_cartesian_2d(0u32..260, 0u32..max_threads + 64)?;
        plot::mesh(&mut chart, "registers per thread", "largest block (threads)")
            .draw()?;
        if let Some(allocator) = allocation.allocator {
            chart
            .draw_series(LineSeries::new(
                (1..=255).map(|r| {
                    (
                        r,
                        predicted_threads(r, allocator, register_file, max_threads),
                    )
                }),
                RED.stroke_width(2),
            ))?
            .label(format!(
                "model: {} registers per warp unit, {register_file} registers in {} partitions",
                allocator.unit_registers_per_warp, allocator.partitions
            ))
            .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], RED.stroke_width(2)));
        }
        chart
            .draw_series(
                points
                    .iter()
                    .map(|p| Circle::new((p.registers, p.max_threads), 5, BLUE.filled())),
            )?
            .label("measured (largest block that launched)")
            .legend(|(x, y)| Circle::new((x + 10, y), 5, BLUE.filled()));
        plot::draw_legend(&mut chart, SeriesLabelPosition::UpperRight)?;
    })
    .context("drawing regs")
}

/// The summary's register rows: the allocation unit (flagged when several fit), the
/// register-file partitions and the register file per block.
pub fn figures(dir: &Path) -> Result<Vec<crate::report::figures::Figure>> {
    let regs: File = crate::report::saved::read_json(dir, "regs.json")?;
    let mut r = crate::report::figures::Rows::new("regs", "Registers", "regs.json");
    let fitting = regs.allocation.consistent.len();
    let allocator = regs.allocation.allocator.as_ref();
    r.labelled(
        "allocation unit",
        allocator.map(|a| f64::from(a.unit_registers_per_warp)),
        "registers/warp",
        if fitting > 1 {
            format!("ambiguous: {fitting} units fit the caps measured")
        } else {
            String::new()
        },
    );
    r.push(
        "register-file partitions",
        allocator.map(|a| f64::from(a.partitions)),
        "",
        None,
    );
    r.push(
        "register file per block",
        Some(f64::from(regs.register_file_per_block)),
        "registers",
        None,
    );
    Ok(r.finish())
}

#[cfg(test)]
mod read_back {
    #[test]
    fn the_committed_run_reads_back() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("results/h100");
        assert!(!super::read_points(&root.join("regs")).unwrap().is_empty());
    }
}
