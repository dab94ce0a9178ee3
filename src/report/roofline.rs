//! The run's empirical roofline (issue #32, part 3), made from the figures the suites measured:
//! compute ceilings from `flops` (the CUDA cores' FMA rate over all SMs) and `tensor` (wgmma at
//! the measured clock), memory ceilings from `bandwidth` (the read rate of shared memory, the
//! L1, the L2 with lines private to one SM and shared by many, and DRAM) and `tma` (the L2 read
//! by bulk copies of lines every SM reads, the highest rate the L2 delivers). A run has one where
//! it holds the flops suite and a bandwidth level; `roofline.csv` lists the ceilings and every
//! ridge point, `roofline.png` draws them log-log, and the summary gets the ridge points of
//! each compute ceiling over DRAM and over the L2. Everything is read from the summary's own
//! figures, so `report` and a repeat make it the same way as the live run.

use std::path::Path;

use anyhow::{Context, Result};
use plotters::element::DashedPathElement;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use serde::Serialize;

use super::figures::{Figure, Rows};
use super::keys::{self, Known};
use super::plot::{self, FONT};
use crate::analysis::roofline::{Ceiling, Roofline};

pub const SECTION: &str = "Roofline";
pub const FILE: &str = "roofline.csv";

/// The memory ceilings: (level, operation) of the bandwidth suite, and the name drawn.
const MEMORY: [(&str, &str, &str); 5] = [
    ("shared", "read", "shared memory"),
    ("l1", "read", "L1"),
    ("l2", "shared-line read", "L2, lines shared by SMs"),
    ("l2", "read", "L2"),
    ("dram", "read", "DRAM"),
];

/// The ceiling of the TMA suite's L2 read by bulk copies of lines every SM reads.
const BULK_SHARED_LINES: &str = "L2, lines shared by SMs (TMA bulk copies)";

/// The memory ceilings the summary's ridge points are taken over.
const RIDGES_OVER: [&str; 2] = ["DRAM", "L2"];

/// The roofline of `figures` (a summary's), if they hold a flops ceiling and a bandwidth level.
pub fn of_figures(figures: &[Figure]) -> Option<Roofline> {
    let value = |f: &Figure| f.value.filter(|v| v.is_finite());
    let cuda_cores: Vec<Ceiling> = figures
        .iter()
        .filter_map(|f| match keys::parse(&f.key)? {
            Known::Flops { name, what } if what == keys::CHIP && f.unit == "TFLOPS" => {
                Some(Ceiling {
                    name: name.to_string(),
                    per_second: value(f)? * 1e12,
                })
            }
            _ => None,
        })
        .collect();
    if cuda_cores.is_empty() {
        return None;
    }
    // wgmma is the tensor cores' fastest path; per input type the widest shape measured.
    let mut tensor: Vec<Ceiling> = Vec::new();
    for f in figures.iter().filter(|f| f.unit == "TFLOPS") {
        let Some(Known::Tensor {
            family: "wgmma",
            types,
            what: keys::CHIP,
            ..
        }) = keys::parse(&f.key)
        else {
            continue;
        };
        let Some(per_second) = value(f).map(|v| v * 1e12) else {
            continue;
        };
        // "FP16→FP32" → "wgmma FP16" (the accumulator is FP32, INT8's INT32).
        let input = types.split('→').next().unwrap_or(types);
        let name = format!("wgmma {input}");
        match tensor.iter_mut().find(|c| c.name == name) {
            Some(c) => c.per_second = c.per_second.max(per_second),
            None => tensor.push(Ceiling { name, per_second }),
        }
    }
    let mut memory: Vec<Ceiling> = MEMORY
        .iter()
        .filter_map(|(ceiling_level, ceiling_operation, name)| {
            let f = figures.iter().find(|f| {
                f.unit == "GB/s" && keys::is_bandwidth(&f.key, ceiling_level, ceiling_operation)
            })?;
            Some(Ceiling {
                name: (*name).to_string(),
                per_second: value(f)? * 1e9,
            })
        })
        .collect();
    // The highest rate the L2 delivers: the TMA suite's bulk copies of shared lines.
    let bulk = Known::L2BulkRead { lines: "shared" }.key();
    if let Some(f) = figures.iter().find(|f| f.key == bulk && f.unit == "GB/s")
        && let Some(v) = value(f)
    {
        memory.push(Ceiling {
            name: BULK_SHARED_LINES.into(),
            per_second: v * 1e9,
        });
    }
    Roofline::new(cuda_cores.into_iter().chain(tensor).collect(), memory)
}

/// Whether the roofline may be made of `figure`: a rate of the suites its ceilings come from
/// (the CUDA cores, the tensor cores, the bandwidths, the TMA's L2 read).
pub fn reads(figure: &Figure) -> bool {
    let suite = figure.key.split(keys::SEP).next().unwrap_or("");
    ["flops", "tensor", "bandwidth", "tma"].contains(&suite)
        && ["TFLOPS", "GB/s"].contains(&figure.unit.as_str())
}

/// The summary's rows: the ridge point of every compute ceiling over DRAM and over the L2.
pub fn figures(roofline: &Roofline) -> Vec<Figure> {
    let mut r = Rows::new("roofline", SECTION, FILE);
    for ridge in roofline.ridges() {
        if RIDGES_OVER.contains(&ridge.memory.as_str()) {
            r.push(
                &format!("ridge point of {} over {}", ridge.compute, ridge.memory),
                Some(ridge.flop_per_byte),
                "FLOP/byte",
                None,
            );
        }
    }
    r.finish()
}

/// One line of `roofline.csv`: a ceiling, or a ridge point (`over` naming the memory).
#[derive(Debug, Clone, Serialize)]
pub struct CsvRow {
    pub kind: &'static str,
    pub name: String,
    pub over: String,
    pub value: f64,
    pub unit: &'static str,
}

pub fn csv_rows(roofline: &Roofline) -> Vec<CsvRow> {
    let ceilings = |kind, list: &[Ceiling], unit| {
        list.iter()
            .map(|c| CsvRow {
                kind,
                name: c.name.clone(),
                over: String::new(),
                value: c.per_second / 1e12,
                unit,
            })
            .collect::<Vec<_>>()
    };
    let mut rows = ceilings("compute", &roofline.compute, "TFLOP/s");
    rows.extend(ceilings("memory", &roofline.memory, "TB/s"));
    rows.extend(roofline.ridges().into_iter().map(|r| CsvRow {
        kind: "ridge",
        name: r.compute,
        over: r.memory,
        value: r.flop_per_byte,
        unit: "FLOP/byte",
    }));
    rows
}

/// Ceilings within 3 % of each other, drawn as one line naming them all (FP16 and BF16, the
/// two FP8 types, shared memory and the L1), the highest first; a first word the names share is
/// said once ("wgmma FP16 / BF16").
fn merged(ceilings: &[Ceiling]) -> Vec<(String, f64)> {
    let mut sorted = ceilings.to_vec();
    sorted.sort_by(|a, b| b.per_second.total_cmp(&a.per_second));
    let mut merged: Vec<(String, f64)> = Vec::new();
    for c in sorted {
        match merged.last_mut() {
            Some((name, rate)) if (*rate - c.per_second).abs() < 0.03 * *rate => {
                let first = name.split(' ').next().unwrap_or("").to_string();
                let shown = match c.name.split_once(' ') {
                    Some((word, rest)) if word == first => rest.to_string(),
                    _ => c.name.clone(),
                };
                *name = format!("{name} / {shown}");
            }
            _ => merged.push((c.name, c.per_second)),
        }
    }
    merged
}

/// `roofline.png`: attainable TFLOP/s against arithmetic intensity, log-log; each memory level
/// a slope up to the highest compute ceiling, each compute ceiling a roof from where the
/// fastest memory meets it, named at its right end.
pub fn draw(path: &Path, title: &str, roofline: &Roofline) -> Result<()> {
    let (x_low, x_high) = roofline.intensity_span();
    let tera = |v: f64| v / 1e12;
    let roofs = merged(&roofline.compute);
    let slopes = merged(&roofline.memory);
    let top = roofs.iter().map(|r| r.1).fold(0.0, f64::max);
    let fastest = roofline
        .memory
        .iter()
        .map(|m| m.per_second)
        .fold(0.0, f64::max);
    let slowest = roofline
        .memory
        .iter()
        .map(|m| m.per_second)
        .fold(f64::INFINITY, f64::min);
    let (y_low, y_high) = (tera(slowest * x_low), tera(top) * 3.0);
    let entries: Vec<plot::Entry> = slopes
        .iter()
        .enumerate()
        .map(|(i, (name, rate))| {
            plot::Entry::new(
                format!("{name} {:.2} TB/s", rate / 1e12),
                plot::PALETTE[i % plot::PALETTE.len()],
                plot::Key::Line,
            )
        })
        .collect();
    let design = plot::Design::from((1400, 900)).with_legend(entries.len());
    plot::titled_plot!(path, design, title, |root| {
        let root = plot::legend_above(&root, &entries)?;
        let mut chart = plot::framed_chart(&root, "", [20, 70, 110])
            .build_cartesian_2d(plot::log_axis(x_low, x_high), plot::log_axis(y_low, y_high))?;
        plot::mesh(
            &mut chart,
            "arithmetic intensity (FLOP per byte of the level)",
            "attainable TFLOP/s",
        )
        .x_label_formatter(&|v| format!("{v}"))
        .y_label_formatter(&|v| format!("{v}"))
        .draw()?;
        for (i, (_, rate)) in slopes.iter().enumerate() {
            let colour = plot::PALETTE[i % plot::PALETTE.len()];
            let ridge = top / rate;
            chart.draw_series(LineSeries::new(
                [(x_low, tera(rate * x_low)), (ridge, tera(top))],
                colour.stroke_width(3),
            ))?;
        }
        // Each roof is named above its right end.
        let label = TextStyle::from((FONT, plot::TICK_SIZE).into_font())
            .pos(Pos::new(HPos::Right, VPos::Bottom));
        for (name, rate) in &roofs {
            let from = rate / fastest;
            chart.draw_series(std::iter::once(DashedPathElement::new(
                vec![(from, tera(*rate)), (x_high, tera(*rate))],
                8,
                4,
                BLACK.stroke_width(2),
            )))?;
            chart.draw_series(std::iter::once(Text::new(
                format!("{name}: {:.0} TFLOP/s", tera(*rate)),
                (x_high / 1.1, tera(*rate) * 1.08),
                label.clone(),
            )))?;
        }
    })
    .context("drawing the roofline")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A figure the core knows by `key` alone: its words say nothing the roofline reads.
    fn figure(key: Known, value: f64, unit: &str) -> Figure {
        let mut f = Figure::sample("Elsewhere", "words", Some(value), unit, "");
        f.key = key.key();
        f
    }

    #[test]
    fn the_ceilings_come_from_the_suites_figures_by_their_keys() {
        let bandwidth = |level, operation, gbs: f64| {
            let search = "at the search's winner";
            figure(
                Known::Bandwidth {
                    level,
                    operation,
                    search,
                },
                gbs,
                "GB/s",
            )
        };
        let tensor = |family, types| Known::Tensor {
            family,
            shape: "m64n256k16",
            types,
            what: keys::CHIP,
        };
        let mut given = vec![
            bandwidth("dram", "read", 3000.0),
            bandwidth("l2", "read", 7500.0),
            bandwidth("l2", "write", 4000.0),
            figure(tensor("wgmma", "FP16→FP32"), 1000.0, "TFLOPS"),
            figure(tensor("mma.sync", "FP16→FP32"), 700.0, "TFLOPS"),
        ];
        // No CUDA-core ceiling (no flops suite): no roofline.
        assert!(of_figures(&given).is_none());
        let ffma = |what| Known::Flops {
            name: "FP32 FFMA",
            what,
        };
        given.push(figure(ffma(keys::CHIP), 60.0, "TFLOPS"));
        given.push(figure(ffma(keys::PER_SM), 128.0, "FLOP/clock/SM"));
        // The TMA suite's bulk read of shared lines is a ceiling; its rate per SM is not.
        given.push(figure(
            Known::L2BulkRead { lines: "shared" },
            23600.0,
            "GB/s",
        ));
        given.push(figure(
            Known::L2BulkRead { lines: "shared" },
            90.0,
            "bytes/clock/SM",
        ));
        let roofline = of_figures(&given).unwrap();
        let names: Vec<&str> = roofline.compute.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["FP32 FFMA", "wgmma FP16"]);
        let memory: Vec<&str> = roofline.memory.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(memory, ["L2", "DRAM", BULK_SHARED_LINES]);
        assert_eq!(roofline.memory[2].per_second, 23.6e12);
        let rows = figures(&roofline);
        assert_eq!(rows.len(), 4);
        let dram = rows
            .iter()
            .find(|r| r.key == "roofline/ridge point of FP32 FFMA over DRAM")
            .unwrap();
        assert!((dram.value.unwrap() - 20.0).abs() < 1e-9);
        assert_eq!(csv_rows(&roofline).len(), 2 + 3 + 6);
    }

    #[test]
    fn ceilings_that_nearly_coincide_are_drawn_as_one() {
        let c = |name: &str, per_second: f64| Ceiling {
            name: name.into(),
            per_second,
        };
        let roofline = Roofline::new(
            vec![c("FP16", 1000.0), c("BF16", 999.0), c("FP32", 60.0)],
            vec![c("DRAM", 3.0)],
        )
        .unwrap();
        assert_eq!(
            merged(&roofline.compute),
            [
                ("FP16 / BF16".to_string(), 1000.0),
                ("FP32".to_string(), 60.0)
            ]
        );
        let wgmma = [
            c("wgmma FP8 e4m3", 2156.0),
            c("wgmma FP8 e5m2", 2155.0),
            c("wgmma INT8", 2150.0),
        ];
        assert_eq!(merged(&wgmma)[0].0, "wgmma FP8 e4m3 / FP8 e5m2 / INT8");
    }
}
