//! Files of the TMA suite's L2 read by bulk copies (issue #32): `tma-l2-read.csv` (every
//! pattern of the search, and the re-timed fastest of each kind of line, the figures),
//! `tma-l2-read.png` (GB/s of every pattern, private and shared lines side by side) and the
//! summary's rows.

use std::path::Path;

use anyhow::{Context, Result};
use plotters::prelude::*;
use serde::{Deserialize, Serialize};

use super::l2_read::{BLOCKS_PER_SM, L2BulkRead, Reading};
use crate::report::figures::{Figure, Rows};
use crate::report::plot::{self, BLUE, GREEN, ORANGE, RED};
use crate::report::run_dir::RunDir;

pub const FILE: &str = "tma-l2-read.csv";

/// One pattern as measured. `role` is "search" or "figure" (the fastest of its kind of line,
/// timed again over longer launches).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Row {
    pub role: String,
    pub lines: String,
    pub slice_bytes: u32,
    pub stages: u32,
    pub blocks_per_sm: u32,
    pub footprint_bytes: u64,
    pub passes: u32,
    pub launches: usize,
    pub bytes_per_launch: f64,
    /// Bytes over the GPU time between events around each timed launch: the median launch's,
    /// the slowest's and the fastest's.
    pub gb_per_s: Option<f64>,
    pub gb_per_s_min: Option<f64>,
    pub gb_per_s_max: Option<f64>,
    /// The median per SM and clock, at the SM clock measured before the suite.
    pub bytes_per_clock_per_sm: Option<f64>,
    pub skipped: Option<String>,
}

pub fn rows(read: &L2BulkRead, sms: u32, mhz: f64) -> Vec<Row> {
    let row = |role: &str, r: &Reading| {
        let rate = |ms: f64| r.bytes_per_launch / (ms * 1e-3);
        Row {
            role: role.into(),
            lines: r.pattern.lines.name().into(),
            slice_bytes: r.pattern.slice_bytes,
            stages: r.pattern.stages,
            blocks_per_sm: r.pattern.blocks_per_sm,
            footprint_bytes: read.footprint_bytes,
            passes: r.passes,
            launches: r.event_ms.map_or(0, |m| m.n),
            bytes_per_launch: r.bytes_per_launch,
            gb_per_s: r.median_rate().map(|b| b / 1e9),
            gb_per_s_min: r.event_ms.map(|m| rate(m.max) / 1e9),
            gb_per_s_max: r.event_ms.map(|m| rate(m.min) / 1e9),
            bytes_per_clock_per_sm: r
                .median_rate()
                .map(|b| b / (mhz * 1e6) / f64::from(sms.max(1))),
            skipped: r.skipped.clone(),
        }
    };
    let search = read.search.iter().map(|r| row("search", r));
    search
        .chain(read.best.iter().map(|r| row("figure", r)))
        .collect()
}

pub fn write(run: &RunDir, rows: &[Row]) -> Result<()> {
    run.write_csv(FILE, rows)
}

pub fn read_rows(dir: &Path) -> Result<Vec<Row>> {
    crate::report::saved::read_csv(dir, FILE)
}

fn describe_lines(lines: &str) -> &'static str {
    if lines == "shared" {
        "lines shared by every SM"
    } else {
        "lines private to one block"
    }
}

/// The pattern in words: "16 KiB copies, 12 in flight per block, 1 block per SM, 12.5 MiB
/// region".
pub fn pattern(row: &Row) -> String {
    format!(
        "{} copies, {} in flight per block, {} block{} per SM, {} region",
        plot::binary_bytes(f64::from(row.slice_bytes)),
        row.stages,
        row.blocks_per_sm,
        if row.blocks_per_sm == 1 { "" } else { "s" },
        mib(row.footprint_bytes),
    )
}

fn mib(bytes: u64) -> String {
    format!("{:.1} MiB", bytes as f64 / 1048576.0)
}

/// The summary's quantity of the figure over `lines` ("private" or "shared").
pub fn quantity(lines: &str) -> String {
    format!("L2 read by bulk copies, {}", describe_lines(lines))
}

/// The summary's rows: per kind of line, the re-timed fastest pattern's rate over the GPU and
/// per SM and clock, the pattern named in the interval's label. A run made before this
/// measurement existed has no file and no rows.
pub fn figures(dir: &Path) -> Result<Vec<Figure>> {
    if !dir.join(FILE).exists() {
        return Ok(Vec::new());
    }
    let rows = read_rows(dir)?;
    let mut r = Rows::new("tma", "TMA", FILE);
    for row in rows.iter().filter(|r| r.role == "figure") {
        let label = format!(
            "median of {} launches, min-max; {}",
            row.launches,
            pattern(row)
        );
        let name = quantity(&row.lines);
        let interval = row.gb_per_s_min.zip(row.gb_per_s_max);
        r.key(crate::report::keys::Known::L2BulkRead { lines: &row.lines }.key())
            .push(
                &name,
                row.gb_per_s,
                "GB/s",
                interval.map(|(low, high)| (low, high, label.as_str())),
            );
        let per_gb = row
            .bytes_per_clock_per_sm
            .zip(row.gb_per_s)
            .map(|(b, g)| b / g);
        r.push(
            &format!("{name} per SM"),
            row.bytes_per_clock_per_sm,
            "bytes/clock/SM",
            per_gb
                .zip(interval)
                .map(|(k, (low, high))| (low * k, high * k, label.as_str())),
        );
    }
    Ok(r.finish())
}

pub fn title() -> &'static str {
    "L2 read by TMA bulk copies (cp.async.bulk), by pattern"
}

/// `tma-l2-read.png`: GB/s of every pattern of the search, one panel per kind of line, a group
/// per copy size and copies in flight, a bar per blocks per SM.
pub fn draw(path: &Path, title: &str, rows: &[Row]) -> Result<()> {
    let search: Vec<&Row> = rows.iter().filter(|r| r.role == "search").collect();
    let mut groups: Vec<(u32, u32)> = search.iter().map(|r| (r.slice_bytes, r.stages)).collect();
    groups.sort_unstable();
    groups.dedup();
    // Groups where nothing ran on either kind of line are left out.
    groups.retain(|&(slice, stages)| {
        search
            .iter()
            .any(|r| r.slice_bytes == slice && r.stages == stages && r.gb_per_s.is_some())
    });
    let categories: Vec<String> = groups
        .iter()
        .map(|&(slice, stages)| format!("{}K x{stages}", slice >> 10))
        .collect();
    let colours = [GREEN, ORANGE, BLUE, RED];
    let series = |lines: &str| -> Vec<plot::BarSeries> {
        BLOCKS_PER_SM
            .iter()
            .zip(colours)
            .map(|(&blocks, colour)| plot::BarSeries {
                label: format!(
                    "{blocks} block{} per SM",
                    if blocks == 1 { "" } else { "s" }
                ),
                colour,
                values: groups
                    .iter()
                    .map(|&(slice, stages)| {
                        search
                            .iter()
                            .find(|r| {
                                r.lines == lines
                                    && r.slice_bytes == slice
                                    && r.stages == stages
                                    && r.blocks_per_sm == blocks
                            })
                            .and_then(|r| r.gb_per_s)
                    })
                    .collect(),
            })
            .collect()
    };
    let design = plot::Design::panels((1800, 700), 2).with_legend(4);
    plot::titled_plot!(path, design, title, |root| {
        let (left, right) = plot::two_panels(&root, 0.5);
        for (area, lines, caption) in [
            (
                &left,
                "private",
                "(a) lines private to one block (copy KiB x in flight)",
            ),
            (
                &right,
                "shared",
                "(b) lines shared by every SM (copy KiB x in flight)",
            ),
        ] {
            plot::grouped_bars(
                area,
                caption,
                &categories,
                &series(lines),
                "GB/s over the GPU",
                false,
            )?;
        }
    })
    .context("drawing tma-l2-read")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::stats::Summary;
    use crate::suites::tma::l2_read::{Lines, Pattern};

    fn reading(lines: Lines, ms: &[f64]) -> Reading {
        Reading {
            pattern: Pattern {
                lines,
                slice_bytes: 16 << 10,
                stages: 12,
                blocks_per_sm: 1,
            },
            passes: 20,
            bytes_per_launch: 2e11,
            event_ms: Summary::of(ms),
            skipped: None,
        }
    }

    #[test]
    fn the_figures_are_the_re_timed_patterns_with_their_pattern_named() {
        let read = L2BulkRead {
            footprint_bytes: 12_800 << 10,
            search: vec![reading(Lines::Shared, &[9.0, 9.5])],
            best: vec![
                reading(Lines::Private, &[20.0, 21.0, 22.0]),
                reading(Lines::Shared, &[8.0, 8.5, 10.0]),
            ],
        };
        let rows = rows(&read, 100, 2000.0);
        assert_eq!(rows.len(), 3);
        let dir = std::env::temp_dir().join(format!("gpubench-l2-bulk-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let bytes = crate::report::run_dir::csv_bytes(&rows).unwrap();
        std::fs::write(dir.join(FILE), bytes).unwrap();
        let figures = figures(&dir).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        // Two per re-timed pattern (GB/s, per SM), none from the search.
        assert_eq!(figures.len(), 4);
        let shared = figures
            .iter()
            .find(|f| f.quantity == quantity("shared"))
            .unwrap();
        // 2e11 bytes in 8.5 ms; the slowest launch (10 ms) is the low end.
        assert!((shared.value.unwrap() - 2e11 / 8.5e-3 / 1e9).abs() < 1e-6);
        assert!((shared.low.unwrap() - 2e11 / 10e-3 / 1e9).abs() < 1e-6);
        assert!(
            shared
                .uncertainty
                .contains("16 KiB copies, 12 in flight per block, 1 block per SM")
        );
        assert!(shared.uncertainty.contains("12.5 MiB region"));
        let per_sm = figures
            .iter()
            .find(|f| f.quantity == format!("{} per SM", quantity("shared")))
            .unwrap();
        let expected = 2e11 / 8.5e-3 / 2e9 / 100.0;
        assert!((per_sm.value.unwrap() - expected).abs() < 1e-9);
        assert!((per_sm.low.unwrap() - 2e11 / 10e-3 / 2e9 / 100.0).abs() < 1e-9);
    }

    #[test]
    fn a_run_without_the_measurement_has_no_rows() {
        let dir = std::env::temp_dir().join(format!("gpubench-l2-none-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        assert!(figures(&dir).unwrap().is_empty());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
