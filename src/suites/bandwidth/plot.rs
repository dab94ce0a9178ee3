//! `bandwidth.png`: the bandwidth suite's sweeps against footprint, drawn from `points.csv` and
//! `bandwidth.json` (live and by `report`).

use std::path::Path;

use anyhow::{Context, Result};
use plotters::element::DashedPathElement;
use plotters::prelude::*;

use super::LevelFigure;
use super::report::{BandwidthFile, PointRow, gb, level_falloffs};
use crate::report::plot::{self, BLUE, CYAN, GREEN, MAGENTA, RED};

/// One drawn sweep: its curve, colour, fall-off sizes and legend label.
type Sweep = (Vec<(f64, f64)>, RGBColor, Vec<f64>, String);

/// `bandwidth.png`: every sweep's median bandwidth against footprint (both log scale), the
/// shared-memory read and the DRAM peak as dashed horizontal lines, each fall-off as a dashed
/// vertical line in its sweep's colour; the legend above names them all with their numbers, so
/// no text lies on the curves.
pub fn draw(path: &Path, title: &str, points: &[PointRow], file: &BandwidthFile) -> Result<()> {
    let swept: Vec<&PointRow> = points.iter().filter(|p| p.stage == "sweep").collect();
    let (low, high) = plot::byte_range(swept.iter().map(|p| p.footprint_bytes));
    let rates = swept
        .iter()
        .map(|p| gb(p.median_bytes_per_second))
        .chain(file.levels.iter().map(|l| gb(l.median_bytes_per_second)));
    let bottom = rates.clone().fold(f64::INFINITY, f64::min).max(1.0) / 1.5;
    let top = rates.fold(1.0, f64::max) * 1.5;
    let series = series_of(&swept, file);
    let shared = file
        .levels
        .iter()
        .find(|l| l.level == "shared" && l.operation == "read");
    let entries = legend(&series, shared, file);
    let design = plot::Design::from((1400, 800)).with_legend(entries.len());
    plot::titled_plot!(path, design, title, |root| {
        let root = plot::legend_above(&root, &entries)?;
        let mut chart = plot::log_log_bytes_chart(
            &root,
            (low / 1.1, high * 1.1),
            (bottom, top),
            "footprint (bytes, log scale; per SM for the L1 sweep)",
            "GB/s (log scale)",
        )?;
        for (curve, colour, falls, _) in &series {
            chart.draw_series(LineSeries::new(curve.clone(), colour.stroke_width(2)))?;
            chart.draw_series(
                curve
                    .iter()
                    .map(|&(x, y)| Circle::new((x, y), 3, colour.filled())),
            )?;
            for &x in falls {
                chart.draw_series(std::iter::once(DashedPathElement::new(
                    vec![(x, bottom), (x, top)],
                    6,
                    4,
                    colour.stroke_width(2),
                )))?;
            }
        }
        let levels = shared
            .map(|s| (gb(s.median_bytes_per_second), BLACK))
            .into_iter()
            .chain([(gb(file.dram_peak_bytes_per_second), plot::GREY)]);
        for (y, colour) in levels {
            chart.draw_series(std::iter::once(DashedPathElement::new(
                vec![(low / 1.1, y), (high * 1.1, y)],
                6,
                4,
                colour.stroke_width(2),
            )))?;
        }
    })
    .context("drawing bandwidth")
}

/// Each sweep the run has, as the plot draws it: its curve (footprint, GB/s), colour,
/// fall-offs and legend label.
fn series_of(swept: &[&PointRow], file: &BandwidthFile) -> Vec<Sweep> {
    // (sweep name in the fall-offs, placement, operation, legend label, colour)
    let sweeps: [(&str, &str, &str, &str, RGBColor); 6] = [
        (
            "l1 read (per SM)",
            "sm",
            "read",
            "read through L1 (per-SM footprint)",
            GREEN,
        ),
        ("device read", "device", "read", "read past L1", BLUE),
        (
            "device strong read",
            "device",
            "strong read",
            "strong read past L1",
            CYAN,
        ),
        (
            "device shared-line read",
            "device",
            "shared-line read",
            "strong read of lines many SMs share",
            RED,
        ),
        (
            "device write",
            "device",
            "write",
            "write past L1",
            plot::ORANGE,
        ),
        ("device copy", "device", "copy", "copy past L1", MAGENTA),
    ];
    sweeps
        .iter()
        .filter_map(|&(name, placement, operation, label, colour)| {
            let curve: Vec<(f64, f64)> = swept
                .iter()
                .filter(|p| p.placement == placement && p.operation == operation)
                .map(|p| (p.footprint_bytes as f64, gb(p.median_bytes_per_second)))
                .collect();
            if curve.is_empty() {
                return None;
            }
            let falls: Vec<f64> = level_falloffs(file)
                .into_iter()
                .filter(|f| f.sweep == name)
                .map(|f| f.bytes as f64)
                .collect();
            let mut label = label.to_string();
            if !falls.is_empty() {
                let sizes: Vec<String> = falls
                    .iter()
                    .map(|&x| crate::report::text::format_value(x, "bytes"))
                    .collect();
                label += &format!(", falls off at {}", sizes.join(" and "));
            }
            Some((curve, colour, falls, label))
        })
        .collect()
}

/// The legend: every sweep, then the shared-memory read and the DRAM peak (dashed).
fn legend(
    series: &[Sweep],
    shared: Option<&LevelFigure>,
    file: &BandwidthFile,
) -> Vec<plot::Entry> {
    let mut entries: Vec<plot::Entry> = series
        .iter()
        .map(|(_, colour, _, label)| plot::Entry::new(label.as_str(), *colour, plot::Key::Line))
        .collect();
    if let Some(shared) = shared {
        entries.push(plot::Entry::new(
            format!(
                "shared-memory read {:.0} GB/s ({:.1} B/clock/SM)",
                gb(shared.median_bytes_per_second),
                shared.bytes_per_clock_per_sm
            ),
            BLACK,
            plot::Key::Dash,
        ));
    }
    entries.push(plot::Entry::new(
        format!(
            "DRAM theoretical peak {:.0} GB/s",
            gb(file.dram_peak_bytes_per_second)
        ),
        plot::GREY,
        plot::Key::Dash,
    ));
    entries
}
