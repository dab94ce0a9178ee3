//! `gpubench bandwidth`'s files: `points.csv` (every timed point, the occupancy search's
//! included), `bandwidth.json` (the headline figures, the falloffs and the peak), and
//! `bandwidth.png` (bandwidth against footprint, the levels marked). The JSON is written and
//! read back through the same types.

use std::path::Path;

use anyhow::{Context, Result};
use plotters::coord::combinators::BindKeyPoints;
use plotters::prelude::*;
use serde::{Deserialize, Serialize};

use super::figures::{Figure, Rows};
use super::plot::{self, FONT};

/// One row of `points.csv` (also what the figure and `report` read back).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PointRow {
    /// "search" (the occupancy search) or "sweep".
    pub stage: String,
    pub level: String,
    pub operation: String,
    /// "device" (one region for the grid), "sm" (a region per SM) or "shared" (per block).
    pub placement: String,
    pub threads: u32,
    pub blocks_per_sm: u32,
    pub footprint_bytes: u64,
    pub passes: u32,
    pub bytes_per_launch: u64,
    pub median_bytes_per_second: f64,
    pub min_bytes_per_second: f64,
    pub max_bytes_per_second: f64,
    pub repeats: usize,
}

/// A level's bandwidth for one operation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LevelFigure {
    pub level: String,
    pub operation: String,
    /// Where it comes from: the search winner's point, or a sweep plateau's median.
    pub from: String,
    pub footprint_bytes: u64,
    pub threads: u32,
    pub blocks_per_sm: u32,
    pub median_bytes_per_second: f64,
    pub min_bytes_per_second: f64,
    pub max_bytes_per_second: f64,
    pub bytes_per_clock_per_sm: f64,
    /// DRAM only: the median over the theoretical peak.
    pub fraction_of_peak: Option<f64>,
}

/// Where one sweep's bandwidth falls from one plateau to the next.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FalloffFigure {
    /// "l1 read (per SM)" or "device read" / "device strong read" / "device write" / "device copy".
    pub sweep: String,
    pub bytes: u64,
    pub low_bytes: u64,
    pub high_bytes: u64,
    pub before_bytes_per_second: f64,
    pub after_bytes_per_second: f64,
}

/// One kernel's memory instructions in the SASS the run compiled from its PTX.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KernelAccesses {
    pub kernel: String,
    pub accesses: std::collections::BTreeMap<String, usize>,
    pub expected: Vec<String>,
    /// "as expected" or "UNEXPECTED: …".
    pub verdict: String,
}

/// What the run saw of its kernels' machine code.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SassCheck {
    /// "written to FILE", or why no SASS was made (no ptxas / cuobjdump on the machine).
    pub status: String,
    pub arch: String,
    pub kernels: Vec<KernelAccesses>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BandwidthFile {
    pub sm_clock_mhz: f64,
    pub multiprocessors: u32,
    pub memory_clock_mhz: f64,
    pub memory_bus_bits: u32,
    /// 2 × memory clock × bus width: the driver's attributes, not a measurement.
    pub dram_peak_bytes_per_second: f64,
    pub levels: Vec<LevelFigure>,
    pub falloffs: Vec<FalloffFigure>,
    pub launches: u64,
    pub seconds: f64,
    pub sass: SassCheck,
}

/// The figure's title, before the device.
pub const TITLE: &str = "Memory bandwidth against footprint";

fn gb(bytes_per_second: f64) -> f64 {
    bytes_per_second / 1e9
}

/// The summary's bandwidth rows.
pub fn figures(dir: &Path) -> Result<Vec<Figure>> {
    let file: BandwidthFile = super::saved::read_json(dir, "bandwidth.json")?;
    let mut r = Rows::new("Bandwidth", "bandwidth.json");
    for l in &file.levels {
        let name = format!("{} {}", l.level, l.operation);
        r.push(
            &format!("{name} ({})", l.from),
            Some(gb(l.median_bytes_per_second)),
            "GB/s",
            Some((
                gb(l.min_bytes_per_second),
                gb(l.max_bytes_per_second),
                "min-max",
            )),
        );
        r.push(
            &format!("{name} per SM"),
            Some(l.bytes_per_clock_per_sm),
            "bytes/clock/SM",
            None,
        );
        if let Some(fraction) = l.fraction_of_peak {
            r.push(
                &format!("{name}: fraction of theoretical peak"),
                Some(100.0 * fraction),
                "%",
                None,
            );
        }
    }
    r.push(
        "DRAM theoretical peak (2 x memory clock x bus width)",
        Some(gb(file.dram_peak_bytes_per_second)),
        "GB/s",
        None,
    );
    let unexpected: Vec<&KernelAccesses> = file
        .sass
        .kernels
        .iter()
        .filter(|k| !k.verdict.starts_with("as expected"))
        .collect();
    let verdict = if file.sass.kernels.is_empty() {
        format!("not checked: {}", file.sass.status)
    } else if unexpected.is_empty() {
        "as expected: 16-byte accesses (LDG.E.NA.128, LDG.E.128, STG.E.128, LDS.128, STS.128)"
            .to_string()
    } else {
        unexpected
            .iter()
            .map(|k| format!("{}: {}", k.kernel, k.verdict))
            .collect::<Vec<_>>()
            .join("; ")
    };
    r.text("kernels' memory instructions (SASS)", Some(&verdict));
    // A sweep may fall off more than once (a copy past the near L2, then past the whole L2):
    // each fall-off its own row, numbered, so a comparison pairs first with first.
    for (i, f) in file.falloffs.iter().enumerate() {
        let nth = file.falloffs[..i]
            .iter()
            .filter(|g| g.sweep == f.sweep)
            .count();
        let later = file.falloffs.iter().skip(i + 1).any(|g| g.sweep == f.sweep);
        let quantity = match (nth, later) {
            (0, false) => format!("{} falls off at", f.sweep),
            (n, _) => format!("{} falls off at (fall-off {})", f.sweep, n + 1),
        };
        r.push(
            &quantity,
            Some(f.bytes as f64),
            "bytes",
            Some((f.low_bytes as f64, f.high_bytes as f64, "between points")),
        );
    }
    Ok(r.finish())
}

/// `bandwidth.png`: every sweep's median bandwidth against footprint (both log scale), the
/// shared-memory reads and the DRAM peak as horizontal lines, each falloff as a vertical one.
pub fn draw(path: &Path, title: &str, points: &[PointRow], file: &BandwidthFile) -> Result<()> {
    let sweeps: Vec<(&str, &str, RGBColor)> = vec![
        ("sm", "read", GREEN),
        ("device", "read", BLUE),
        ("device", "strong read", CYAN),
        ("device", "write", RED),
        ("device", "copy", MAGENTA),
    ];
    let swept: Vec<&PointRow> = points.iter().filter(|p| p.stage == "sweep").collect();
    let low = swept
        .iter()
        .map(|p| p.footprint_bytes)
        .min()
        .unwrap_or(1)
        .max(1) as f64;
    let high = swept
        .iter()
        .map(|p| p.footprint_bytes)
        .max()
        .unwrap_or(2)
        .max(2) as f64;
    let rates = swept
        .iter()
        .map(|p| gb(p.median_bytes_per_second))
        .chain(file.levels.iter().map(|l| gb(l.median_bytes_per_second)));
    let bottom = rates.clone().fold(f64::INFINITY, f64::min).max(1.0) / 1.5;
    let top = rates.fold(1.0, f64::max) * 1.5;
    plot::ensure_font();
    plot::on_backend!(path, (1400, 800), |root| {
        (|| -> Result<(), Box<dyn std::error::Error + '_>> {
            root.fill(&WHITE)?;
            let mut chart = ChartBuilder::on(&root)
                .caption(title, (FONT, plot::LABEL_SIZE))
                .margin(20)
                .x_label_area_size(60)
                .y_label_area_size(100)
                .build_cartesian_2d(
                    (low / 1.1..high * 1.1)
                        .log_scale()
                        .with_key_points(plot::power_of_two_ticks(low / 1.1, high * 1.1, 10)),
                    (bottom..top).log_scale(),
                )?;
            chart
                .configure_mesh()
                .x_desc(
                    "footprint (bytes, log scale; per SM for the L1 sweep, whole device otherwise)",
                )
                .y_desc("GB/s (log scale)")
                .axis_desc_style((FONT, plot::LABEL_SIZE))
                .label_style((FONT, plot::TICK_SIZE))
                .x_label_formatter(&|v| plot::binary_bytes(*v))
                .y_label_formatter(&|v| format!("{v:.0}"))
                .draw()?;
            for (placement, operation, colour) in &sweeps {
                let series: Vec<(f64, f64)> = swept
                    .iter()
                    .filter(|p| p.placement == *placement && p.operation == *operation)
                    .map(|p| (p.footprint_bytes as f64, gb(p.median_bytes_per_second)))
                    .collect();
                if series.is_empty() {
                    continue;
                }
                let label = if *placement == "sm" {
                    "read through L1 (footprint per SM)".to_string()
                } else {
                    format!("{operation} past L1 (device footprint)")
                };
                let colour = *colour;
                chart
                    .draw_series(LineSeries::new(series.clone(), colour.stroke_width(2)))?
                    .label(label)
                    .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], colour));
                chart.draw_series(
                    series
                        .iter()
                        .map(|&(x, y)| Circle::new((x, y), 3, colour.filled())),
                )?;
            }
            let mut line = |y: f64,
                            text: String,
                            colour: RGBColor|
             -> Result<(), Box<dyn std::error::Error + '_>> {
                chart.draw_series(std::iter::once(PathElement::new(
                    vec![(low, y), (high, y)],
                    colour.mix(0.6).stroke_width(1),
                )))?;
                chart.draw_series(std::iter::once(Text::new(
                    text,
                    (low * 1.05, y * 1.04),
                    (FONT, plot::TICK_SIZE),
                )))?;
                Ok(())
            };
            if let Some(shared) = file
                .levels
                .iter()
                .find(|l| l.level == "shared" && l.operation == "read")
            {
                line(
                    gb(shared.median_bytes_per_second),
                    format!(
                        "shared-memory read: {:.0} GB/s, {:.1} B/clock/SM",
                        gb(shared.median_bytes_per_second),
                        shared.bytes_per_clock_per_sm
                    ),
                    BLACK,
                )?;
            }
            line(
                gb(file.dram_peak_bytes_per_second),
                format!(
                    "DRAM theoretical peak {:.0} GB/s",
                    gb(file.dram_peak_bytes_per_second)
                ),
                RED,
            )?;
            for (i, f) in file.falloffs.iter().enumerate() {
                let x = f.bytes as f64;
                chart.draw_series(std::iter::once(PathElement::new(
                    vec![(x, bottom), (x, top)],
                    BLACK.mix(0.4).stroke_width(1),
                )))?;
                chart.draw_series(std::iter::once(Text::new(
                    format!("{}: {}", f.sweep, super::summary::format_value(x, "bytes")),
                    // Staggered, so falloffs close together stay legible.
                    (x * 1.03, bottom * 1.15 * 1.25f64.powi(i as i32)),
                    (FONT, plot::TICK_SIZE),
                )))?;
            }
            plot::draw_legend(&mut chart, SeriesLabelPosition::UpperRight)?;
            root.present()?;
            Ok(())
        })()
        .map_err(|e| anyhow::anyhow!("{e}"))
    })
    .context("drawing bandwidth.png")
}
