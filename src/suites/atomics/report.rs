//! Files of `gpubench atomics`: `atomics-latency.csv` (cycles per dependent step of every chase,
//! what the atomic adds to the matching load, and the SASS instruction), `atomics-throughput.csv`
//! (operations per clock of every storm, median and range over repeats), `atomics.json` (both
//! with the verdicts on which unit serves the global atomics) and `atomics.png`.

use std::path::Path;

use anyhow::{Context, Result};
use plotters::prelude::*;
use serde::{Deserialize, Serialize};

use super::analysis::{AtomicSass, ServedBy, served_by};
use super::measure::{ATOMIC_UNROLL, Pattern, Results, Space, latency_entry, throughput_entry};
use crate::report::figures::{Figure, Rows};
use crate::report::plot::{self, BLUE, GREEN, ORANGE, RED};
use crate::report::run_dir::RunDir;

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct LatencyRow {
    pub space: String,
    pub width: String,
    pub op: String,
    pub footprint_bytes: u64,
    pub cycles_per_step: f64,
    /// The fastest and slowest of the chain's copies (runs before copies were measured: none).
    pub cycles_per_step_min: Option<f64>,
    pub cycles_per_step_max: Option<f64>,
    /// Cycles over the load chase of the same chain (none for the load itself).
    pub over_load_cycles: Option<f64>,
    pub sass_instruction: Option<String>,
    pub sass_problem: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ThroughputRow {
    pub space: String,
    pub width: String,
    pub variant: String,
    pub pattern: String,
    pub iterations: u32,
    pub ops_per_clock: f64,
    pub ops_per_clock_min: f64,
    pub ops_per_clock_max: f64,
    pub ops_per_clock_per_sm: f64,
    pub sass_instruction: Option<String>,
    pub sass_problem: Option<String>,
}

/// The verdict on one global atomic: what it adds to an L2 load, and where it is served.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Verdict {
    pub width: String,
    pub op: String,
    pub over_l2_load_cycles: f64,
    pub served_by: ServedBy,
}

fn problem(kernel: &str, sass: &[AtomicSass]) -> Option<String> {
    let found = sass.iter().find(|s| s.kernel == kernel)?;
    (!found.as_written(ATOMIC_UNROLL as usize)).then(|| {
        format!(
            "{kernel}'s SASS holds {} {} where its loop asks for {ATOMIC_UNROLL}: not the kernel as written",
            found.count,
            found.instruction.as_deref().unwrap_or("atomics")
        )
    })
}

fn instruction(kernel: &str, sass: &[AtomicSass]) -> Option<String> {
    sass.iter().find(|s| s.kernel == kernel)?.describe()
}

pub fn latency_rows(results: &Results, sass: &[AtomicSass]) -> Vec<LatencyRow> {
    results
        .chases
        .iter()
        .map(|c| {
            let load = results.chases.iter().find(|l| {
                l.op == "load"
                    && l.space == c.space
                    && l.width == c.width
                    && l.footprint_bytes == c.footprint_bytes
            });
            let entry = latency_entry(c.space, c.width, c.op);
            LatencyRow {
                space: c.space.name().into(),
                width: c.width.name().into(),
                op: c.op.into(),
                footprint_bytes: c.footprint_bytes,
                cycles_per_step: c.cycles_per_step,
                cycles_per_step_min: c.copies_range.map(|r| r.0),
                cycles_per_step_max: c.copies_range.map(|r| r.1),
                over_load_cycles: load
                    .filter(|_| c.op != "load")
                    .map(|l| c.cycles_per_step - l.cycles_per_step),
                sass_instruction: instruction(&entry, sass),
                sass_problem: problem(&entry, sass),
            }
        })
        .collect()
}

pub fn throughput_rows(results: &Results, sass: &[AtomicSass]) -> Vec<ThroughputRow> {
    results
        .storms
        .iter()
        .map(|s| {
            let entry = throughput_entry(s.space, s.width, s.variant);
            ThroughputRow {
                space: s.space.name().into(),
                width: s.width.name().into(),
                variant: s.variant.into(),
                pattern: s.pattern.describe(s.space).into(),
                iterations: s.iterations,
                ops_per_clock: s.rate.per_clock.median,
                ops_per_clock_min: s.rate.per_clock.min,
                ops_per_clock_max: s.rate.per_clock.max,
                ops_per_clock_per_sm: s.rate.per_clock_per_sm,
                sass_instruction: instruction(&entry, sass),
                sass_problem: problem(&entry, sass),
            }
        })
        .collect()
}

/// For every global atomic: its latency over the L2 load's at the smallest footprint, and
/// whether it follows the load's step to the largest.
pub fn verdicts(rows: &[LatencyRow]) -> Vec<Verdict> {
    let global: Vec<&LatencyRow> = rows.iter().filter(|r| r.space == "global").collect();
    let (Some(near), Some(far)) = (
        global.iter().map(|r| r.footprint_bytes).min(),
        global.iter().map(|r| r.footprint_bytes).max(),
    ) else {
        return Vec::new();
    };
    if near == far {
        return Vec::new();
    }
    let at = |width: &str, op: &str, footprint: u64| {
        global
            .iter()
            .find(|r| r.width == width && r.op == op && r.footprint_bytes == footprint)
            .map(|r| r.cycles_per_step)
    };
    let mut out = Vec::new();
    for width in ["u32", "u64"] {
        for op in ["add", "cas", "min", "max"] {
            let (Some(a0), Some(l0), Some(a1), Some(l1)) = (
                at(width, op, near),
                at(width, "load", near),
                at(width, op, far),
                at(width, "load", far),
            ) else {
                continue;
            };
            let (extra, by) = served_by((a0, l0), (a1, l1));
            out.push(Verdict {
                width: width.into(),
                op: op.into(),
                over_l2_load_cycles: extra,
                served_by: by,
            });
        }
    }
    out
}

/// `atomics.json`: every latency and throughput row with what each measured, the verdicts on
/// which unit serves the global atomics and the SASS read; written by [`write`] (the figures
/// come from the CSVs).
#[derive(Debug, Serialize, Deserialize)]
pub struct AtomicsFile {
    pub latency: String,
    pub latency_rows: Vec<LatencyRow>,
    /// How the SASS was made and the atomic instruction of every kernel.
    pub sass: crate::report::saved::KernelsSass<AtomicSass>,
    pub served_by: Vec<Verdict>,
    pub throughput: String,
    pub throughput_rows: Vec<ThroughputRow>,
}

pub fn write(
    run: &RunDir,
    latency: &[LatencyRow],
    throughput: &[ThroughputRow],
    sass: &[AtomicSass],
    sass_status: &str,
) -> Result<()> {
    run.write_csv("atomics-latency.csv", latency)?;
    run.write_csv("atomics-throughput.csv", throughput)?;
    run.write_json(
        "atomics.json",
        &AtomicsFile {
            latency: "cycles per step of one thread's chase where the atomic itself returns the next index (add 0, max 0, min ~0, CAS never matching); the load chase is ld.global.cg (global) or ld.shared over the same chain; every step includes the one instruction that turns the index into an address".into(),
            latency_rows: latency.to_vec(),
            sass: crate::report::saved::KernelsSass {
                kernels: sass.to_vec(),
                status: sass_status.into(),
            },
            served_by: verdicts(latency),
            throughput: "operations per SM clock over the whole GPU: one 1024-thread block per SM, each thread 16 atomics per loop trip, timed between events around the launch at the SM clock measured before the suite; median and range over repeats".into(),
            throughput_rows: throughput.to_vec(),
        },
    )
}

pub fn title() -> &'static str {
    "Atomics: latency of a dependent chain and throughput under contention"
}

fn label(op: &str) -> String {
    op.replace('_', ".")
}

/// `atomics.png`: (a) cycles per step of each operation's chase, global at the smallest and
/// largest footprint and shared; (b) global and (c) shared operations per clock per pattern,
/// on a log axis.
pub fn draw(
    path: &Path,
    title: &str,
    latency: &[LatencyRow],
    throughput: &[ThroughputRow],
) -> Result<()> {
    let footprints: Vec<u64> = latency
        .iter()
        .filter(|r| r.space == "global")
        .map(|r| r.footprint_bytes)
        .collect();
    let (near, far) = (
        footprints.iter().copied().min().unwrap_or(0),
        footprints.iter().copied().max().unwrap_or(0),
    );
    let ops = ["load", "add", "cas", "min", "max"];
    let chase = |space: &str, width: &str, footprint: Option<u64>| -> Vec<Option<f64>> {
        ops.iter()
            .map(|op| {
                latency
                    .iter()
                    .find(|r| {
                        r.space == space
                            && r.width == width
                            && r.op == *op
                            && footprint.is_none_or(|f| f == r.footprint_bytes)
                            && r.sass_problem.is_none()
                    })
                    .map(|r| r.cycles_per_step)
            })
            .collect()
    };
    let latency_series = vec![
        plot::BarSeries {
            label: format!("global u32, {}", plot::binary_bytes(near as f64)),
            colour: BLUE,
            values: chase("global", "u32", Some(near)),
        },
        plot::BarSeries {
            label: format!("global u32, {}", plot::binary_bytes(far as f64)),
            colour: RED,
            values: chase("global", "u32", Some(far)),
        },
        plot::BarSeries {
            label: "shared u32".into(),
            colour: GREEN,
            values: chase("shared", "u32", None),
        },
        plot::BarSeries {
            label: "shared u64".into(),
            colour: ORANGE,
            values: chase("shared", "u64", None),
        },
    ];
    let storm = |space: Space, width: &str, variant: &str| -> Vec<Option<f64>> {
        Pattern::of(space)
            .iter()
            .map(|p| {
                throughput
                    .iter()
                    .find(|r| {
                        r.space == space.name()
                            && r.width == width
                            && r.variant == variant
                            && r.pattern == p.describe(space)
                            && r.sass_problem.is_none()
                    })
                    .map(|r| r.ops_per_clock)
            })
            .collect()
    };
    let storm_series = |space: Space| -> Vec<plot::BarSeries> {
        [
            ("atom_add", "u32", BLUE),
            ("atom_cas", "u32", RED),
            ("red_add", "u32", GREEN),
            ("atom_add", "u64", ORANGE),
        ]
        .iter()
        .map(|&(variant, width, colour)| plot::BarSeries {
            label: format!("{} {width}", label(variant)),
            colour,
            values: storm(space, width, variant),
        })
        .collect()
    };
    let categories = |space: Space| -> Vec<String> {
        Pattern::of(space)
            .iter()
            .map(|p| {
                p.describe(space)
                    .trim_start_matches("one address ")
                    .replace("for the whole ", "")
            })
            .collect()
    };
    let design = plot::Design::panels((1800, 700), 3).with_legend(4);
    plot::titled_plot!(path, design, title, |root| {
        let areas = plot::panels(&root, 3);
        plot::grouped_bars(
            &areas[0],
            "(a) latency of a dependent chain",
            &ops.iter().map(|s| s.to_string()).collect::<Vec<_>>(),
            &latency_series,
            "cycles per step",
            false,
        )?;
        plot::grouped_bars(
            &areas[1],
            "(b) global, one block per SM",
            &categories(Space::Global),
            &storm_series(Space::Global),
            "operations per clock (GPU)",
            true,
        )?;
        plot::grouped_bars(
            &areas[2],
            "(c) shared, one block per SM",
            &categories(Space::Shared),
            &storm_series(Space::Shared),
            "operations per clock (GPU)",
            true,
        )?;
    })
    .context("drawing atomics")
}

pub fn read_latency(dir: &Path) -> Result<Vec<LatencyRow>> {
    crate::report::saved::read_csv(dir, "atomics-latency.csv")
}

pub fn read_throughput(dir: &Path) -> Result<Vec<ThroughputRow>> {
    crate::report::saved::read_csv(dir, "atomics-throughput.csv")
}

/// The summary's atomics rows: each chase at the L2-resident footprint and shared, the add and
/// the load at the DRAM-resident one, where the global atomics are served, and the storms of
/// 32-bit atom.add, atom.cas and red.add and 64-bit atom.add in every pattern.
pub fn figures(dir: &Path) -> Result<Vec<Figure>> {
    let latency = read_latency(dir)?;
    let throughput = read_throughput(dir)?;
    let mut r = Rows::new("atomics", "Atomics", "atomics-latency.csv");
    let global: Vec<u64> = latency
        .iter()
        .filter(|l| l.space == "global")
        .map(|l| l.footprint_bytes)
        .collect();
    let near = global.iter().copied().min();
    let far = global.iter().copied().max();
    for row in &latency {
        let name = format!("{} {} {}", row.space, label(&row.op), row.width);
        if let Some(problem) = &row.sass_problem {
            r.text(&name, Some(&format!("not measured: {problem}")));
            continue;
        }
        let at = if row.space == "shared" {
            String::new()
        } else if Some(row.footprint_bytes) == near
            || (Some(row.footprint_bytes) == far && (row.op == "add" || row.op == "load"))
        {
            format!(", {} chain", plot::binary_bytes(row.footprint_bytes as f64))
        } else {
            continue;
        };
        let how = row
            .sass_instruction
            .as_deref()
            .map_or(String::new(), |i| format!("one thread; {i}"));
        match (row.cycles_per_step_min, row.cycles_per_step_max) {
            (Some(low), Some(high)) => r.push(
                &format!("{name} latency{at}"),
                Some(row.cycles_per_step),
                "cycles",
                Some((low, high, &format!("median of allocations, min-max; {how}"))),
            ),
            _ => r.labelled(
                &format!("{name} latency{at}"),
                Some(row.cycles_per_step),
                "cycles",
                how,
            ),
        }
    }
    let verdicts = verdicts(&latency);
    for width in ["u32", "u64"] {
        let of: Vec<&Verdict> = verdicts.iter().filter(|v| v.width == width).collect();
        if of.is_empty() {
            continue;
        }
        let l2: Vec<&str> = of
            .iter()
            .filter(|v| v.served_by == ServedBy::L2)
            .map(|v| v.op.as_str())
            .collect();
        let text = if l2.len() == of.len() {
            format!(
                "at the L2: each takes an L2 load's time and more, and slows with it once the chain leaves the L2 ({} cycles over the L2 load)",
                of.iter()
                    .map(|v| format!("{} {:+.0}", v.op, v.over_l2_load_cycles))
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        } else {
            format!(
                "in the L2: {}; not following the L2 load's step: {}",
                if l2.is_empty() {
                    "none".into()
                } else {
                    l2.join(", ")
                },
                of.iter()
                    .filter(|v| v.served_by != ServedBy::L2)
                    .map(|v| v.op.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        };
        r.text(&format!("global {width} atomics served"), Some(&text));
    }
    r.from("atomics-throughput.csv");
    // Over the whole device: a shared-memory atomic updates one word of one bank, so an SM does
    // at most 32 per clock; any atomic is a thread operation, 128 per SM per clock at most.
    let sms = crate::report::metadata::SavedMetadata::read(dir)?
        .device
        .multiprocessors;
    let shared_ceiling = crate::report::ceilings::chip_ops_per_clock(
        sms,
        32.0,
        "one update per bank of 32 per SM per clock",
    );
    let issue_ceiling = crate::report::ceilings::chip_ops_per_clock(
        sms,
        crate::report::ceilings::SM_THREAD_OPS_PER_CLOCK,
        "4 schedulers × one warp instruction of 32 threads per SM per clock",
    );
    for row in &throughput {
        let shown = matches!(
            (row.variant.as_str(), row.width.as_str()),
            ("atom_add" | "atom_cas" | "red_add", "u32") | ("atom_add", "u64")
        );
        if !shown {
            continue;
        }
        let name = format!(
            "{} {} {}, {}",
            row.space,
            label(&row.variant),
            row.width,
            row.pattern
        );
        if let Some(problem) = &row.sass_problem {
            r.text(&name, Some(&format!("not measured: {problem}")));
            continue;
        }
        let quantity = format!("{name}: throughput");
        r.push(
            &quantity,
            Some(row.ops_per_clock),
            "ops/clock",
            Some((
                row.ops_per_clock_min,
                row.ops_per_clock_max,
                "min-max over repeats",
            )),
        );
        let ceiling = if row.space == "shared" {
            &shared_ceiling
        } else {
            &issue_ceiling
        };
        r.at_most(ceiling.as_ref());
    }
    Ok(r.finish())
}
