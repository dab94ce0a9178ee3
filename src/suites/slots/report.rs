//! Files of `gpubench slots`: `branches.csv` (the paper's Fig. 6 table for every workload),
//! `slots.csv` (per workload: slot totals and fractions, Fig. 8; static and dynamic branch
//! counts by kind, Fig. 7; the tags' cost; ncu's warp execution efficiency), `slots.json`
//! (all of it, with each workload's CPU check), and `slots.png` (Fig. 8's stacked bars beside
//! Fig. 7's intrinsic shares), drawn from the `slots.csv` rows alone.

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::{Context, Result};
use plotters::prelude::*;
use serde::{Deserialize, Serialize};

use super::measure::WorkloadResult;
use crate::suites::slots::ncu::Efficiency;
use crate::report::plot::{self, FONT};
use crate::report::run_dir::RunDir;

/// The figure's title, before the device.
pub const TITLE: &str = "Lane slots by branch kind";

/// One line of `slots.csv`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WorkloadRow {
    pub workload: String,
    pub slots: u64,
    pub active: u64,
    pub idle_extrinsic: u64,
    pub idle_intrinsic: u64,
    #[serde(deserialize_with = "nan_if_absent")]
    pub f_active: f64,
    #[serde(deserialize_with = "nan_if_absent")]
    pub f_extrinsic: f64,
    #[serde(deserialize_with = "nan_if_absent")]
    pub f_intrinsic: f64,
    #[serde(deserialize_with = "nan_if_absent")]
    pub f_untagged: f64,
    pub static_extrinsic: usize,
    pub static_intrinsic: usize,
    pub dynamic_extrinsic: u64,
    pub dynamic_intrinsic: u64,
    pub tagged_ms: f64,
    pub plain_ms: f64,
    pub overhead: f64,
    pub ncu_warp_efficiency: Option<f64>,
    pub ncu_launches: Option<u64>,
}

/// A fraction that may be of no slots: NaN, which JSON writes as null (an empty CSV field).
fn nan_if_absent<'de, D: serde::Deserializer<'de>>(input: D) -> Result<f64, D::Error> {
    Ok(Option::<f64>::deserialize(input)?.unwrap_or(f64::NAN))
}

/// One line of `branches.csv` (the paper's Fig. 6 columns).
#[derive(Debug, Serialize)]
struct BranchLine<'a> {
    workload: &'a str,
    id: usize,
    name: &'a str,
    kind: &'a str,
    instances: u64,
    taken_fraction: f64,
    occupancy: f64,
    dynamic_count: u64,
    divergent_fraction: f64,
}

pub fn rows(
    results: &[WorkloadResult],
    ncu: Option<&BTreeMap<&'static str, Efficiency>>,
) -> Vec<WorkloadRow> {
    results
        .iter()
        .map(|r| {
            let profiled = ncu.and_then(|m| m.get(r.workload.as_str()));
            WorkloadRow {
                workload: r.workload.to_string(),
                slots: r.totals.slots,
                active: r.totals.active,
                idle_extrinsic: r.totals.idle_extrinsic,
                idle_intrinsic: r.totals.idle_intrinsic,
                f_active: r.fractions.active,
                f_extrinsic: r.fractions.extrinsic,
                f_intrinsic: r.fractions.intrinsic,
                f_untagged: r.fractions.untagged,
                static_extrinsic: r.kinds.static_extrinsic,
                static_intrinsic: r.kinds.static_intrinsic,
                dynamic_extrinsic: r.kinds.dynamic_extrinsic,
                dynamic_intrinsic: r.kinds.dynamic_intrinsic,
                tagged_ms: r.tagged_ms,
                plain_ms: r.plain_ms,
                overhead: r.overhead(),
                ncu_warp_efficiency: profiled.map(Efficiency::warp_efficiency),
                ncu_launches: profiled.and_then(|p| p.launches),
            }
        })
        .collect()
}

pub fn write(
    run: &RunDir,
    results: &[WorkloadResult],
    rows: &[WorkloadRow],
    ncu_failure: Option<&String>,
) -> Result<()> {
    run.write_csv(
        "branches.csv",
        results
            .iter()
            .flat_map(|r| r.branches.iter())
            .map(|b| BranchLine {
                workload: &b.workload,
                id: b.row.id,
                name: &b.name,
                kind: b.row.kind.short(),
                instances: b.row.instances,
                taken_fraction: b.row.taken_fraction,
                occupancy: b.row.occupancy,
                dynamic_count: b.row.dynamic_count,
                divergent_fraction: b.row.divergent_fraction,
            }),
    )?;
    run.write_csv("slots.csv", rows)?;
    run.write_json(
        "slots.json",
        &SlotsFile {
            ncu: match ncu_failure {
                None => NcuCheck::Profiled {
                    metric: "smsp__thread_inst_executed.sum / smsp__inst_executed.sum / 32 over every plain launch".into(),
                },
                Some(reason) => NcuCheck::NotRun {
                    reason: reason.clone(),
                },
            },
            note: "gpubench counts one slot per lane per tagged region execution; ncu counts every executed instruction of the plain kernels, untagged straight-line code included, so it weights blocks by their instruction counts".into(),
            rows: rows.to_vec(),
            workloads: results.to_vec(),
        },
    )
}

/// `slots.json`: every workload's branches and slot counts, the summary's rows and how the
/// ncu cross-check went. [`write`] writes it; [`figures`] reads it.
#[derive(Debug, Serialize, Deserialize)]
pub struct SlotsFile {
    pub ncu: NcuCheck,
    pub note: String,
    pub rows: Vec<WorkloadRow>,
    pub workloads: Vec<WorkloadResult>,
}

/// `slots.json`'s `ncu`: the metric ncu's efficiency was read as, or why ncu did not run.
#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "status")]
pub enum NcuCheck {
    #[serde(rename = "profiled")]
    Profiled { metric: String },
    #[serde(rename = "not run")]
    NotRun { reason: String },
}

pub fn render_text(rows: &[WorkloadRow]) -> String {
    let mut text = format!(
        "{:<9} {:>8} {:>8} {:>8} {:>8} {:>11} {:>10} {:>9} {:>9}\n",
        "workload",
        "active",
        "idle ext",
        "idle int",
        "untagged",
        "static e/i",
        "tag cost",
        "plain ms",
        "ncu eff"
    );
    for r in rows {
        text += &format!(
            "{:<9} {:>7.1}% {:>7.1}% {:>7.1}% {:>7.1}% {:>11} {:>9.1}% {:>9.3} {:>9}\n",
            r.workload,
            100.0 * r.f_active,
            100.0 * r.f_extrinsic,
            100.0 * r.f_intrinsic,
            100.0 * r.f_untagged,
            format!("{}/{}", r.static_extrinsic, r.static_intrinsic),
            100.0 * r.overhead,
            r.plain_ms,
            r.ncu_warp_efficiency
                .map_or("-".to_string(), |e| format!("{:.1}%", 100.0 * e)),
        );
    }
    text
}

/// Axes of f64 against f64 on some backend.
type BarChart<'a, DB> = ChartContext<
    'a,
    DB,
    Cartesian2d<plotters::coord::types::RangedCoordf64, plotters::coord::types::RangedCoordf64>,
>;

/// Axes with one bar position per workload (named on the x axis) and fractions from 0 to 1
/// up the y axis; the legend goes in a strip above ([`plot::legend_above`]).
fn workload_chart<'a, DB: DrawingBackend>(
    area: &'a DrawingArea<DB, plotters::coord::Shift>,
    caption: &str,
    y_desc: &str,
    rows: &[WorkloadRow],
) -> Result<BarChart<'a, DB>, DrawingAreaErrorKind<DB::ErrorType>> {
    let n = rows.len().max(1);
    let name = |x: &f64| -> String {
        let i = x.round() as isize;
        if (x - x.round()).abs() < 1e-6 && i >= 0 && (i as usize) < rows.len() {
            rows[i as usize].workload.clone()
        } else {
            String::new()
        }
    };
    let mut chart = plot::captioned_chart(area, caption, [20, 50, 80])
        .build_cartesian_2d(-0.6..(n as f64 - 0.4), 0.0..1.0)?;
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(n)
        .x_label_formatter(&name)
        .y_desc(y_desc)
        .axis_desc_style((FONT, plot::LABEL_SIZE))
        .label_style((FONT, plot::TICK_SIZE))
        .draw()?;
    Ok(chart)
}

/// Legend entries for bars.
fn boxes<'a>(entries: impl Iterator<Item = (&'a str, RGBColor)>) -> Vec<plot::Entry> {
    entries
        .map(|(label, colour)| plot::Entry::new(label, colour, plot::Key::Box))
        .collect()
}

/// One number of a row, for a bar.
type Field = fn(&WorkloadRow) -> f64;

pub fn draw(path: &Path, title: &str, rows: &[WorkloadRow]) -> Result<()> {
    plot::titled_plot!(path, plot::Design::panels((1800, 800), 2), title, |root| {
        let (left, right) = plot::two_panels(&root, 11.0 / 18.0);
        let segments: [(&str, RGBColor, Field); 4] = [
            ("active", plot::GREEN, |r| r.f_active),
            ("idle: extrinsic branch", plot::RED, |r| r.f_extrinsic),
            ("idle: intrinsic branch", plot::BLUE, |r| r.f_intrinsic),
            ("idle: untagged", plot::GREY, |r| r.f_untagged),
        ];
        let left = plot::legend_above(&left, &boxes(segments.iter().map(|s| (s.0, s.1))))?;
        let mut chart = workload_chart(
            &left,
            "lane slots (Gupta & Datta Fig. 8)",
            "fraction of slots",
            rows,
        )?;
        for (index, &(_, color, value)) in segments.iter().enumerate() {
            let bars = rows.iter().enumerate().map(|(i, r)| {
                let below: f64 = segments[..index].iter().map(|s| (s.2)(r)).sum();
                let x = i as f64;
                Rectangle::new(
                    [(x - 0.35, below), (x + 0.35, below + value(r))],
                    color.filled(),
                )
            });
            chart.draw_series(bars)?;
        }

        let kinds: [(&str, RGBColor, f64, Field); 2] = [
            ("static", plot::CYAN, -0.2, |r| {
                r.static_intrinsic as f64
                    / (r.static_intrinsic + r.static_extrinsic).max(1) as f64
            }),
            ("dynamic", plot::BLUE, 0.2, |r| {
                r.dynamic_intrinsic as f64
                    / (r.dynamic_intrinsic + r.dynamic_extrinsic).max(1) as f64
            }),
        ];
        let right = plot::legend_above(&right, &boxes(kinds.iter().map(|k| (k.0, k.1))))?;
        let mut chart = workload_chart(
            &right,
            "intrinsic share of branches (Fig. 7)",
            "intrinsic / all tagged",
            rows,
        )?;
        for (_, color, offset, value) in kinds {
            chart.draw_series(rows.iter().enumerate().map(|(i, r)| {
                let x = i as f64 + offset;
                Rectangle::new([(x - 0.18, 0.0), (x + 0.18, value(r))], color.filled())
            }))?;
        }
    })
    .context("drawing slots")
}

/// The summary's lane-slot rows: per workload the active and idle fractions and ncu's warp
/// execution efficiency, in percent. The tags' overhead stays in slots.json and the suite's
/// own report: it is the cost of gpubench's instrumentation on kernels of 15–50 µs, not a
/// property of the GPU, and moves more between two runs (18 % against 50 % for bfs on two
/// H200s) than within one.
pub fn figures(dir: &Path) -> Result<Vec<crate::report::figures::Figure>> {
    let slots: SlotsFile = crate::report::saved::read_json(dir, "slots.json")?;
    let mut r = crate::report::figures::Rows::new("slots", "Lane slots", "slots.json");
    // A fraction of no slots (NaN, written as null) gives no row, as it gave none before.
    let pct = |v: f64| v.is_finite().then_some(100.0 * v);
    for row in &slots.rows {
        let w = &row.workload;
        r.push(&format!("{w}: active slots"), pct(row.f_active), "%", None);
        r.push(
            &format!("{w}: idle through extrinsic branches"),
            pct(row.f_extrinsic),
            "%",
            None,
        );
        r.push(
            &format!("{w}: idle through intrinsic branches"),
            pct(row.f_intrinsic),
            "%",
            None,
        );
        r.push(
            &format!("{w}: ncu warp execution efficiency"),
            row.ncu_warp_efficiency.map(|v| 100.0 * v),
            "%",
            None,
        );
    }
    Ok(r.finish())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(workload: &str) -> WorkloadRow {
        WorkloadRow {
            workload: workload.into(),
            slots: 28,
            active: 18,
            idle_extrinsic: 7,
            idle_intrinsic: 3,
            f_active: 18.0 / 28.0,
            f_extrinsic: 7.0 / 28.0,
            f_intrinsic: 3.0 / 28.0,
            f_untagged: 0.0,
            static_extrinsic: 1,
            static_intrinsic: 1,
            dynamic_extrinsic: 1,
            dynamic_intrinsic: 1,
            tagged_ms: 1.1,
            plain_ms: 1.0,
            overhead: 0.1,
            ncu_warp_efficiency: None,
            ncu_launches: None,
        }
    }

    #[test]
    fn the_plot_is_drawn_from_rows_alone() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("slots.png");
        draw(&path, "test", &[row("dot"), row("bfs")]).unwrap();
        assert!(std::fs::metadata(&path).unwrap().len() > 1000);
        let text = render_text(&[row("dot")]);
        assert!(
            text.contains("64.3%") && text.contains("25.0%") && text.contains("10.7%"),
            "{text}"
        );
    }

    /// A workload whose tagged regions never ran has fractions of no slots: NaN, written as
    /// null in slots.json. The file still reads back, and the summary has no share for it.
    #[test]
    fn a_fraction_of_no_slots_reads_back_and_gives_no_row() {
        let mut empty = row("dot");
        empty.f_active = f64::NAN;
        let text = serde_json::to_string(&empty).unwrap();
        assert!(text.contains("\"f_active\":null"), "{text}");
        let back: WorkloadRow = serde_json::from_str(&text).unwrap();
        assert!(back.f_active.is_nan());
        assert_eq!(back.f_extrinsic, empty.f_extrinsic);
        let dir = tempfile::tempdir().unwrap();
        let file = SlotsFile {
            ncu: NcuCheck::NotRun {
                reason: "test".into(),
            },
            note: String::new(),
            rows: vec![back, row("bfs")],
            workloads: Vec::new(),
        };
        std::fs::write(
            dir.path().join("slots.json"),
            serde_json::to_string(&file).unwrap(),
        )
        .unwrap();
        let figures = figures(dir.path()).unwrap();
        let active: Vec<_> = figures
            .iter()
            .filter(|f| f.quantity.ends_with("active slots"))
            .map(|f| f.quantity.as_str())
            .collect();
        assert_eq!(active, ["bfs: active slots"]);
    }
}
