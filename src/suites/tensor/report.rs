//! Files of `gpubench tensor`: `tensor.csv` (per instruction and input type: cycles per MMA of
//! a dependent chain, FLOP per clock per SM with its spread over SMs, TFLOPS at the measured
//! clock, share of the dense peak), `tensor.json` (the same with the SASS check), `tensor.sass`
//! and `tensor.png` (FLOP per clock per SM of mma.sync beside wgmma, the dense peak marked).

use std::path::Path;

use anyhow::{Context, Result};
use plotters::element::DashedPathElement;
use plotters::prelude::*;
use serde::{Deserialize, Serialize};

use super::analysis::MmaSass;
use super::measure::KernelResult;
use super::sustain::{self, SustainedRow};
use crate::report::figures::{Figure, Rows};
use crate::report::plot::{self, BLUE, ORANGE};
use crate::report::run_dir::RunDir;

/// One row of `tensor.csv`, also what `report` and the summary read back.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Row {
    pub family: String,
    pub input: String,
    pub types: String,
    pub shape: String,
    pub flop_per_mma: u64,
    pub latency_cycles: f64,
    pub flop_per_clock_per_sm: f64,
    pub flop_per_clock_per_sm_min: f64,
    pub flop_per_clock_per_sm_max: f64,
    pub tflops: f64,
    pub peak_flop_per_clock_per_sm: Option<f64>,
    pub fraction_of_peak: Option<f64>,
    /// The MMA instruction in the SASS, where the toolkit was there to make it.
    pub sass_instruction: Option<String>,
    /// Why the numbers are not the unit's, where the SASS is not the kernel as written.
    pub sass_problem: Option<String>,
    /// The SM clock the per-second rate is at (runs of format 2 on).
    pub clock: Option<String>,
}

pub fn rows(results: &[KernelResult], sass: &[MmaSass]) -> Vec<Row> {
    results
        .iter()
        .map(|r| {
            let k = &r.kernel;
            let entry = k.throughput_entry();
            let unroll = k.family.unroll() as usize;
            let problem = [(k.latency_entry(), true), (entry.clone(), false)]
                .into_iter()
                .find_map(|(name, latency)| {
                    let found = sass.iter().find(|s| s.kernel == name)?;
                    (!found.as_written(latency, unroll)).then(|| {
                        format!(
                            "{name}'s SASS holds {} {} and {} warpgroup waits for {unroll} MMAs per loop trip: not the kernel as written (an emulated instruction whose product ptxas hoisted, or waits it inserted)",
                            found.mmas,
                            found.instruction.as_deref().unwrap_or("MMA instructions"),
                            found.waits
                        )
                    })
                });
            Row {
                family: k.family_label(),
                input: k.input.into(),
                types: k.types.into(),
                shape: k.shape(),
                flop_per_mma: k.flop_per_mma(),
                latency_cycles: r.latency_cycles,
                flop_per_clock_per_sm: r.rate.flop_per_clock_per_sm.median,
                flop_per_clock_per_sm_min: r.rate.flop_per_clock_per_sm.min,
                flop_per_clock_per_sm_max: r.rate.flop_per_clock_per_sm.max,
                tflops: r.rate.tflops,
                peak_flop_per_clock_per_sm: r.rate.peak_flop_per_clock_per_sm,
                fraction_of_peak: r.rate.fraction_of_peak,
                sass_instruction: sass
                    .iter()
                    .find(|s| s.kernel == entry)
                    .and_then(|s| s.instruction.clone()),
                sass_problem: problem,
                clock: Some(RATE_CLOCK.into()),
            }
        })
        .collect()
}

/// `tensor.json`: every row with what it measured, and the SASS read; written by [`write`]
/// (the figures come from `tensor.csv`).
#[derive(Debug, Serialize, Deserialize)]
pub struct TensorFile {
    pub kernels: Vec<Row>,
    pub latency: String,
    pub peak: String,
    /// How the SASS was made and the MMA instructions of every kernel.
    pub sass: crate::report::saved::KernelsSass<MmaSass>,
    pub throughput: String,
}

pub fn write(run: &RunDir, rows: &[Row], sass: &[MmaSass], sass_status: &str) -> Result<()> {
    run.write_csv("tensor.csv", rows)?;
    run.write_json(
        "tensor.json",
        &TensorFile {
            kernels: rows.to_vec(),
            latency: "cycles per MMA of one dependent chain: one warp (mma.sync) or one warpgroup (wgmma, each committed and waited for)".into(),
            peak: if rows.iter().any(|r| r.family.contains(".sp")) {
                "dense FLOP per clock per SM from the architecture whitepaper (CC 9.0 only); the 2:4-sparse rows' twice that, their FLOP counted at the dense shape".into()
            } else {
                "dense FLOP per clock per SM from the architecture whitepaper (CC 9.0 only)".into()
            },
            sass: crate::report::saved::KernelsSass {
                kernels: sass.to_vec(),
                status: sass_status.into(),
            },
            throughput: "FLOP per clock of one SM: one block per SM, 16 warps x 4 accumulators (mma.sync) or 2 warpgroups x 8 wgmmas per commit group; median and range over SMs".into(),
        },
    )
}

pub fn title() -> &'static str {
    "Tensor-core throughput, mma.sync and wgmma"
}

/// `tensor.png`: per input type, FLOP per clock per SM of mma.sync and of wgmma as bars with
/// their range over SMs, the dense peak as a dashed line over each pair.
pub fn draw(path: &Path, title: &str, rows: &[Row]) -> Result<()> {
    let inputs = crate::analysis::distinct(rows.iter().map(|r| r.input.as_str()));
    let label = |input: &str| {
        rows.iter()
            .find(|r| r.input == input)
            .and_then(|r| r.types.split('→').next())
            .unwrap_or(input)
            .to_string()
    };
    let top = rows
        .iter()
        .flat_map(|r| {
            [
                r.flop_per_clock_per_sm_max,
                r.peak_flop_per_clock_per_sm.unwrap_or(0.0),
            ]
        })
        .fold(1.0, f64::max)
        * 1.1;
    // One bar per instruction family and width: mma.sync, then wgmma at each N measured.
    let series = crate::analysis::distinct(rows.iter().map(series_key));
    let colours = [ORANGE, BLUE, plot::GREEN, plot::MAGENTA];
    let width = 0.8 / series.len().max(1) as f64;
    let families: Vec<(String, RGBColor, f64)> = series
        .iter()
        .enumerate()
        .map(|(i, key)| {
            (
                key.clone(),
                colours[i % colours.len()],
                -0.4 + width * (i as f64 + 0.5),
            )
        })
        .collect();
    let entries: Vec<plot::Entry> = families
        .iter()
        .map(|(f, c, _)| plot::Entry::new(f.clone(), *c, plot::Key::Box))
        .chain([plot::Entry::new(
            "dense peak (whitepaper rate per SM)",
            BLACK,
            plot::Key::Dash,
        )])
        .collect();
    let design = plot::Design::from((1400, 800)).with_legend(entries.len());
    plot::titled_plot!(path, design, title, |root| {
        let root = plot::legend_above(&root, &entries)?;
        let n = inputs.len().max(1);
        let name = |x: &f64| -> String {
            let i = x.round() as isize;
            if (x - x.round()).abs() < 1e-6 && i >= 0 && (i as usize) < inputs.len() {
                label(inputs[i as usize])
            } else {
                String::new()
            }
        };
        let mut chart = plot::framed_chart(&root, "", [20, 70, 100])
            .build_cartesian_2d(-0.6..(n as f64 - 0.4), 0.0..top)?;
        plot::mesh(&mut chart, "input type (accumulating in FP32; INT8 in INT32)", "FLOP (INT8: ops) per clock per SM")
            .disable_x_mesh()
            .x_labels(n)
            .x_label_formatter(&name)
            .y_label_formatter(&|v| format!("{v:.0}"))
            .draw()?;
        for (family, colour, offset) in &families {
            for (i, input) in inputs.iter().enumerate() {
                let Some(row) = rows.iter().find(|r| {
                    series_key(r) == *family && r.input == *input && r.sass_problem.is_none()
                }) else {
                    continue;
                };
                let x = i as f64 + offset;
                chart.draw_series(std::iter::once(Rectangle::new(
                    [
                        (x - width * 0.45, 0.0),
                        (x + width * 0.45, row.flop_per_clock_per_sm),
                    ],
                    colour.filled(),
                )))?;
                chart.draw_series(std::iter::once(PathElement::new(
                    vec![
                        (x, row.flop_per_clock_per_sm_min),
                        (x, row.flop_per_clock_per_sm_max),
                    ],
                    BLACK.stroke_width(2),
                )))?;
            }
        }
        for (i, input) in inputs.iter().enumerate() {
            let peak = rows
                .iter()
                .find(|r| r.input == *input)
                .and_then(|r| r.peak_flop_per_clock_per_sm);
            if let Some(peak) = peak {
                let x = i as f64;
                chart.draw_series(std::iter::once(DashedPathElement::new(
                    vec![(x - 0.45, peak), (x + 0.45, peak)],
                    6,
                    4,
                    BLACK.stroke_width(2),
                )))?;
            }
        }
    })
    .context("drawing tensor")
}

/// A bar series of the figure: mma.sync, or wgmma with its width ("wgmma n256").
fn series_key(row: &Row) -> String {
    if row.family == "wgmma" {
        let width = row
            .shape
            .split_once('n')
            .and_then(|(_, rest)| rest.split_once('k'))
            .map_or("", |(n, _)| n);
        format!("wgmma n{width}")
    } else {
        row.family.clone()
    }
}

pub fn read_rows(dir: &Path) -> Result<Vec<Row>> {
    crate::report::saved::read_csv(dir, "tensor.csv")
}

/// The section of the summary the tensor rows are in.
pub const SECTION: &str = "Tensor cores";

/// The quantity of a kernel's rate over the chip ("wgmma m64n256k16 FP16→FP32 at the measured
/// clock").
pub fn chip_rate_quantity(kernel: &str) -> String {
    format!("{kernel} at the measured clock")
}

/// The SM clock the TFLOPS are at: the suite's opening probe.
pub const RATE_CLOCK: &str = "the SM clock of clock64 over 10 ms of %globaltimer before the suite";

/// The summary's tensor rows: per kernel its latency and throughput on one row, and for wgmma
/// the TFLOPS at the measured clock and the share of the dense peak.
pub fn figures(dir: &Path) -> Result<Vec<Figure>> {
    use crate::report::ceilings;
    let metadata = crate::report::metadata::SavedMetadata::read(dir)?;
    let mut r = Rows::new("tensor", SECTION, "tensor.csv");
    for row in read_rows(dir)? {
        let name = format!("{} {} {}", row.family, row.shape, row.types);
        if let Some(problem) = &row.sass_problem {
            r.text(&name, Some(&format!("not measured: {problem}")));
            continue;
        }
        let key = |what| {
            crate::report::keys::Known::Tensor {
                family: &row.family,
                shape: &row.shape,
                types: &row.types,
                what,
            }
            .key()
        };
        r.key(key(crate::report::keys::LATENCY)).push(
            &format!("{name} latency"),
            Some(row.latency_cycles),
            "cycles",
            None,
        );
        r.key(key(crate::report::keys::THROUGHPUT)).push(
            &format!("{name} throughput"),
            Some(row.flop_per_clock_per_sm),
            "FLOP/clock/SM",
            Some((
                row.flop_per_clock_per_sm_min,
                row.flop_per_clock_per_sm_max,
                "min-max over SMs",
            )),
        );
        let chip = chip_rate_quantity(&name);
        r.key(key(crate::report::keys::CHIP));
        match &row.clock {
            Some(clock) => r.labelled(&chip, Some(row.tflops), "TFLOPS", format!("at {clock}")),
            None => r.push(&chip, Some(row.tflops), "TFLOPS", None),
        }
        // On every SM at the highest SM clock: the dense peak per SM where known, else the
        // fastest SM's own rate.
        let per_clock = row
            .peak_flop_per_clock_per_sm
            .unwrap_or(row.flop_per_clock_per_sm_max);
        r.at_most(ceilings::chip_rate(&metadata, per_clock, "FLOP/clock", 1e12).as_ref(),
        );
        if let Some(fraction) = row.fraction_of_peak {
            // A sparse row's peak is the sparse one (twice the dense).
            let peak = if row.family.contains(".sp") {
                "sparse"
            } else {
                "dense"
            };
            let share = format!("{name}: share of the {peak} peak");
            r.key(key(crate::report::keys::SHARE))
                .push(&share, Some(100.0 * fraction), "%", None);
            r.at_most(Some(&ceilings::share()));
        }
    }
    if crate::report::saved::find(dir, SUSTAINED).is_some() {
        let rows: Vec<SustainedRow> = crate::report::saved::read_csv(dir, SUSTAINED)?;
        sustained_figures(&mut r, &metadata, &rows);
    }
    Ok(r.finish())
}

/// `sustained.csv`: one row per launch of the sustained run (`tensor --sustain`).
pub const SUSTAINED: &str = "sustained.csv";

/// The sustained run's rows per fill: the first launch's rate, the settled rate, SM clock,
/// power and rate per watt (the last third's medians and ranges), and the clock limits seen.
fn sustained_figures(
    r: &mut Rows,
    metadata: &crate::report::metadata::SavedMetadata,
    rows: &[SustainedRow],
) {
    use crate::report::ceilings;
    r.from(SUSTAINED);
    let ceiling = crate::analysis::peaks::dense_peak_flop_per_clock_per_sm(
        &metadata.device.compute_capability,
        "f16",
    )
    .and_then(|peak| ceilings::chip_rate(metadata, peak, "FLOP/clock", 1e12));
    let range = "min-max over the last third's launches";
    for s in sustain::settled(rows) {
        let name = format!("sustained FP16 wgmma m64n256k16, {} operands", s.fill);
        r.push(&format!("{name}: first launch"), Some(s.first_tflops), "TFLOPS", None);
        r.at_most(ceiling.as_ref());
        let t = &s.tflops;
        r.push(
            &format!("{name}: settled rate"),
            Some(t.median),
            "TFLOPS",
            Some((t.min, t.max, range)),
        );
        r.at_most(ceiling.as_ref());
        let c = &s.sm_mhz;
        r.push(
            &format!("{name}: settled SM clock (clock64 over the launch's GPU time)"),
            Some(c.median),
            "MHz",
            Some((c.min, c.max, range)),
        );
        if let Some(n) = &s.nvml_sm_mhz {
            r.push(
                &format!("{name}: settled SM clock (NVML)"),
                Some(n.median),
                "MHz",
                Some((n.min, n.max, range)),
            );
        }
        if let Some(p) = &s.power_watts {
            r.push(
                &format!("{name}: settled power (NVML)"),
                Some(p.median),
                "W",
                Some((p.min, p.max, range)),
            );
        }
        r.push(
            &format!("{name}: settled TFLOPS per watt"),
            s.tflops_per_watt(),
            "TFLOPS/W",
            None,
        );
        let limits = if s.clock_limits.is_empty() {
            "none".to_string()
        } else {
            s.clock_limits.join(", ")
        };
        r.text(
            &format!("{name}: NVML clock limits in the last third"),
            Some(&limits),
        );
    }
}

pub fn sustained_title() -> &'static str {
    "Tensor cores held: FP16 wgmma on every SM, pseudo-random and zero operands"
}

/// `tensor-sustained.png`: the rate, the SM clock (clock64 over GPU time) and NVML's power of
/// every launch against time, one line per fill.
pub fn draw_sustained(path: &Path, title: &str, rows: &[SustainedRow]) -> Result<()> {
    let fills = crate::analysis::distinct(rows.iter().map(|r| r.fill.as_str()));
    let colours = [ORANGE, BLUE];
    let entries: Vec<plot::Entry> = fills
        .iter()
        .zip(colours)
        .map(|(f, c)| plot::Entry::new(format!("{f} operands"), c, plot::Key::Line))
        .collect();
    let end = rows.iter().map(|r| r.seconds).fold(1.0, f64::max) * 1.05;
    type Value = fn(&SustainedRow) -> Option<f64>;
    let panels: [(&str, &str, Value); 3] = [
        ("(a) rate", "TFLOPS", |r| Some(r.tflops)),
        ("(b) SM clock, clock64 over GPU time", "MHz", |r| Some(r.sm_mhz)),
        ("(c) power, NVML", "W", |r| r.power_watts),
    ];
    let design = plot::Design::panels((1800, 650), 3).with_legend(entries.len());
    plot::titled_plot!(path, design, title, |root| {
        let root = plot::legend_above(&root, &entries)?;
        let areas = plot::panels(&root, 3);
        for (area, (caption, unit, value)) in areas.iter().zip(panels) {
            let top = rows.iter().filter_map(value).fold(1.0, f64::max) * 1.1;
            let mut chart = plot::framed_chart(area, caption, [16, 60, 90])
                .build_cartesian_2d(0.0..end, 0.0..top)?;
            plot::mesh(&mut chart, "seconds since the fill's first launch", unit)
                .y_label_formatter(&|v| format!("{v:.0}"))
                .draw()?;
            for (fill, colour) in fills.iter().zip(colours) {
                chart.draw_series(LineSeries::new(
                    rows.iter()
                        .filter(|r| r.fill == *fill)
                        .filter_map(|r| Some((r.seconds, value(r)?))),
                    colour.stroke_width(2),
                ))?;
            }
        }
    })
    .context("drawing the sustained run")
}
