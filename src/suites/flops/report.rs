//! Files of `gpubench flops`: `flops.csv` (per FMA instruction: FLOP per clock per SM with its
//! spread over SMs and on one SM alone, TFLOPS over the launch's wall time, the SM clock
//! during the loop, the whitepaper's peak and the share of it, and what the SASS of the timed
//! loop holds), `flops.json` (the same with the method),
//! `flops.sass` and `flops.png` (measured rate beside the whitepaper's, per instruction).

use std::path::Path;

use anyhow::{Context, Result};
use plotters::prelude::*;
use serde::{Deserialize, Serialize};

use super::measure::{FMAS_PER_TRIP, KernelResult};
use crate::analysis::sass::{KernelSass, arithmetic_loop_problem};
use crate::report::figures::{Figure, Rows};
use crate::report::plot::{self, BLUE, GREY};
use crate::report::run_dir::RunDir;

/// One row of `flops.csv`, also what `report`, the summary and the roofline read back.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Row {
    /// "FP32 FFMA".
    pub name: String,
    pub sass_instruction: String,
    pub flop_per_lane: u64,
    pub flop_per_clock_per_sm: f64,
    pub flop_per_clock_per_sm_min: f64,
    pub flop_per_clock_per_sm_max: f64,
    /// FLOP per clock of one SM running the kernel alone.
    pub one_sm_flop_per_clock: f64,
    /// All SMs' FLOP over the launch's wall time (globaltimer), in 10^12 per second.
    pub tflops: f64,
    /// The SM clock during the loop (clock64 over globaltimer), median over SMs.
    pub sm_mhz_during: f64,
    pub peak_flop_per_clock_per_sm: Option<f64>,
    pub fraction_of_peak: Option<f64>,
    /// Instructions `sass_instruction` in the timed region, where the toolkit was there.
    pub sass_count: Option<usize>,
    /// Why the numbers are not the instruction's, where the SASS is not the loop as written.
    pub sass_problem: Option<String>,
    /// The timer the per-second rate was timed by (runs of format 2 on).
    pub rate_timer: Option<String>,
}

/// What times the chip's FLOP per second: every block's stamps, first start to last end.
pub const RATE_TIMER: &str = "%globaltimer, first block's start to last block's end";

pub fn rows(results: &[KernelResult], sass: &[KernelSass]) -> Vec<Row> {
    results
        .iter()
        .map(|r| {
            let k = &r.kernel;
            let found = sass.iter().find(|s| s.kernel == k.entry);
            let per_sm = &r.chip.flop_per_clock_per_sm;
            Row {
                name: k.name.into(),
                sass_instruction: k.sass.into(),
                flop_per_lane: k.flop_per_lane,
                flop_per_clock_per_sm: per_sm.median,
                flop_per_clock_per_sm_min: per_sm.min,
                flop_per_clock_per_sm_max: per_sm.max,
                one_sm_flop_per_clock: r.one_sm_flop_per_clock,
                tflops: r.chip.flop_per_second / 1e12,
                sm_mhz_during: r.chip.sm_mhz_during.median,
                peak_flop_per_clock_per_sm: r.peak_flop_per_clock_per_sm,
                fraction_of_peak: r.peak_flop_per_clock_per_sm.map(|p| per_sm.median / p),
                sass_count: found.map(|s| s.timed_opcodes().get(k.sass).copied().unwrap_or(0)),
                sass_problem: found
                    .and_then(|s| arithmetic_loop_problem(s, k.sass, FMAS_PER_TRIP as usize)),
                rate_timer: Some(RATE_TIMER.into()),
            }
        })
        .collect()
}

/// `flops.json`: every row with how it was measured, and how the SASS was made; written by
/// [`write`] (the figures come from `flops.csv`).
#[derive(Debug, Serialize, Deserialize)]
pub struct FlopsFile {
    pub kernels: Vec<Row>,
    pub method: String,
    pub peak: String,
    /// How the SASS was made (`gpu::sass`'s status).
    pub sass: String,
}

pub fn write(run: &RunDir, rows: &[Row], sass_status: &str) -> Result<()> {
    run.write_csv("flops.csv", rows)?;
    run.write_json(
        "flops.json",
        &FlopsFile {
            kernels: rows.to_vec(),
            method: "one block of 1024 threads per SM (and one block alone), 16 independent accumulators per thread, 16 FMAs on each per loop trip; clock64 and globaltimer stamps of thread 0 after a barrier on both sides; FLOP per clock of each block's SM, median and range over SMs; TFLOPS = every block's FLOP over the wall time from the first start to the last end".into(),
            peak: "FLOP per clock per SM from the H100 whitepaper (CC 9.0 only)".into(),
            sass: sass_status.into(),
        },
    )
}

pub fn title() -> &'static str {
    "Peak FMA rate of the CUDA cores, all SMs"
}

/// `flops.png`: per instruction, the measured FLOP per clock per SM beside the whitepaper's.
pub fn draw(path: &Path, title: &str, rows: &[Row]) -> Result<()> {
    let shown: Vec<&Row> = rows.iter().filter(|r| r.sass_problem.is_none()).collect();
    let categories: Vec<String> = shown.iter().map(|r| r.name.clone()).collect();
    let series = [
        plot::BarSeries {
            label: "measured (median over SMs)".into(),
            colour: BLUE,
            values: shown
                .iter()
                .map(|r| Some(r.flop_per_clock_per_sm))
                .collect(),
        },
        plot::BarSeries {
            label: "whitepaper peak".into(),
            colour: GREY,
            values: shown.iter().map(|r| r.peak_flop_per_clock_per_sm).collect(),
        },
    ];
    let design = plot::Design::from((1200, 700)).with_legend(series.len());
    plot::titled_plot!(path, design, title, |root| {
        plot::grouped_bars(
            &root,
            "",
            &categories,
            &series,
            "FLOP per clock per SM",
            false,
        )?;
    })
    .context("drawing flops")
}

pub fn read_rows(dir: &Path) -> Result<Vec<Row>> {
    crate::report::saved::read_csv(dir, "flops.csv")
}

/// The section of the summary the peak rates are in.
pub const SECTION: &str = "Arithmetic peak (CUDA cores)";

/// The quantity of an instruction's rate over the chip.
pub fn chip_rate_quantity(name: &str) -> String {
    format!("{name} over all SMs, per second of wall time")
}

/// The summary's rows: per instruction the rate per SM with its range (all SMs at once, and
/// one alone), over the chip, the clock it held, and the share of the whitepaper peak.
pub fn figures(dir: &Path) -> Result<Vec<Figure>> {
    use crate::report::ceilings::{self, Ceiling};
    use crate::report::metadata::SavedMetadata;
    let mut r = Rows::new("flops", SECTION, "flops.csv");
    let metadata = SavedMetadata::read(dir)?;
    for row in read_rows(dir)? {
        if let Some(problem) = &row.sass_problem {
            r.text(&row.name, Some(&format!("not measured: {problem}")));
            continue;
        }
        // Physical ceilings: the whitepaper's rate per SM per clock where known, else the
        // fastest SM's own; per second, on every SM at the highest SM clock.
        let per_clock = row
            .peak_flop_per_clock_per_sm
            .unwrap_or(row.flop_per_clock_per_sm_max);
        let per_clock_ceiling = row.peak_flop_per_clock_per_sm.map(|peak| Ceiling {
            value: peak,
            made_of: "the whitepaper's rate per SM".into(),
        });
        let key = |what| {
            crate::report::keys::Known::Flops {
                name: &row.name,
                what,
            }
            .key()
        };
        let all_sms = format!("{} rate, all SMs at once", row.name);
        r.key(key(crate::report::keys::PER_SM)).push(
            &all_sms,
            Some(row.flop_per_clock_per_sm),
            "FLOP/clock/SM",
            Some((
                row.flop_per_clock_per_sm_min,
                row.flop_per_clock_per_sm_max,
                "min-max over SMs",
            )),
        );
        r.at_most(per_clock_ceiling.as_ref());
        let alone = format!("{} rate, one SM alone", row.name);
        r.push(&alone, Some(row.one_sm_flop_per_clock), "FLOP/clock/SM", None);
        r.at_most(per_clock_ceiling.as_ref());
        let chip = chip_rate_quantity(&row.name);
        r.key(key(crate::report::keys::CHIP));
        match &row.rate_timer {
            Some(timer) => r.labelled(&chip, Some(row.tflops), "TFLOPS", format!("timed by {timer}")),
            None => r.push(&chip, Some(row.tflops), "TFLOPS", None),
        }
        r.at_most(ceilings::chip_rate(&metadata, per_clock, "FLOP/clock", 1e12).as_ref(),
        );
        r.push(
            &format!("SM clock during the {} loop, all SMs", row.name),
            Some(row.sm_mhz_during),
            "MHz",
            None,
        );
        if let Some(fraction) = row.fraction_of_peak {
            let share = format!("{}: share of the whitepaper peak", row.name);
            r.key(key(crate::report::keys::SHARE)).push(&share, Some(100.0 * fraction), "%", None);
            r.at_most(Some(&ceilings::share()));
        }
    }
    Ok(r.finish())
}
