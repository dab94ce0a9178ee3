//! `cache.png`: cycles per load against footprint (log scale), each inferred level's size
//! marked with its geometry.

use std::path::Path;

use anyhow::{Context, Result};
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::report::SavedLevel;
use crate::analysis::cache_inference::ChasePoint;
use crate::report::plot::{self, BLUE, FONT, RED};

/// A level's size as its label says it: binary units, three significant digits.
fn kib(bytes: u64) -> String {
    crate::report::summary::format_value(bytes as f64, "bytes")
}

/// The figure's title, before the device.
pub fn title(space: &str, stride: u64, threads: u32) -> String {
    format!(
        "{}, {space} space, {stride}-byte stride{}",
        if space == "instruction" {
            "Straight-line code"
        } else {
            "Pointer chase"
        },
        if threads > 1 {
            format!(", {threads} threads")
        } else {
            String::new()
        }
    )
}

/// The chase curve with each of `levels` marked where its hits end.
/// The levels are the ones the run's `cache.json` states (the inference the run made and its
/// tables state), never an inference made again: the plot never says another number than the
/// table beside it (#75: the L1 read confidence 0.95 in a redrawn plot and 0.18 in its table).
pub fn draw(path: &Path, title: &str, points: &[ChasePoint], levels: &[SavedLevel]) -> Result<()> {
    plot::white_plot!(path, (1400, 800), |root| {
        let (low, high) = plot::byte_range(points.iter().map(|p| p.footprint_bytes));
        // The labels sit in a band above the highest point, one row of text per level
        // (three at most, then they repeat): the band is sized in pixels so the rows
        // never overlap, whatever the canvas.
        let rows = levels.len().clamp(1, 3) as f64;
        let row = f64::from(plot::TICK_SIZE) * 1.3;
        let plot_height = f64::from(root.dim_in_pixel().1) - 140.0;
        let band = ((rows * row + 10.0) / plot_height).clamp(0.1, 0.5);
        let highest = points.iter().map(|p| p.cycles).fold(1.0, f64::max);
        let top = highest / (1.0 - band);
        let mut chart = plot::framed_chart(&root, title, [20, 60, 90])
            .build_cartesian_2d(
                plot::log_bytes_axis(low, high * 1.1),
                0.0..top,
            )?;
        plot::mesh(&mut chart, "footprint (bytes, log scale)", "cycles per load")
            .x_label_formatter(&|v| plot::binary_bytes(*v))
            .y_label_formatter(&|v| format!("{v:.0}"))
            .draw()?;
        chart.draw_series(LineSeries::new(
            points.iter().map(|p| (p.footprint_bytes as f64, p.cycles)),
            BLUE.stroke_width(2),
        ))?;
        chart.draw_series(
            points
                .iter()
                .map(|p| Circle::new((p.footprint_bytes as f64, p.cycles), 2, BLUE.filled())),
        )?;
        // Left of their line in the right half of the plot, right of it in the left.
        let row_step = top * row / plot_height;
        let mid = (low * high).sqrt();
        for (row, level) in levels.iter().enumerate() {
            let Some(size) = level.size_bytes else {
                continue;
            };
            let x = size as f64;
            chart.draw_series(std::iter::once(PathElement::new(
                vec![(x, 0.0), (x, top)],
                RED.mix(0.6).stroke_width(2),
            )))?;
            let mut label = format!("{} at {:.0} cycles", kib(size), level.latency_cycles);
            if let (Some(line), Some(ways)) = (level.line_bytes, level.ways) {
                label += &format!(", {line} B lines, {ways} ways");
            } else if let Some(ways) = level.ways {
                label += &format!(", ~{ways} ways");
            }
            label += &format!(" (confidence {:.2})", level.confidence);
            let y = top - row_step * (0.2 + (row % 3) as f64);
            let (anchor, at) = if x > mid {
                (HPos::Right, x / 1.02)
            } else {
                (HPos::Left, x * 1.02)
            };
            let style = TextStyle::from((FONT, plot::TICK_SIZE).into_font())
                .pos(Pos::new(anchor, VPos::Top));
            chart.draw_series(std::iter::once(Text::new(label, (at, y), style)))?;
        }
    })
    .context("drawing cache")
}

/// `conflict.png`: the largest number of addresses that still hit against their stride (both
/// log scale), with the way count and way size read from it.
pub fn draw_conflict(
    path: &Path,
    title: &str,
    points: &[crate::suites::cache::analysis::conflict::ConflictPoint],
    report: &crate::suites::cache::analysis::conflict::ConflictReport,
) -> Result<()> {
    plot::white_plot!(path, (1400, 800), |root| {
        let (low, high) = plot::byte_range(points.iter().map(|p| p.stride_bytes));
        let top = points
            .iter()
            .map(|p| p.max_hitting)
            .max()
            .unwrap_or(1)
            .max(1) as f64;
        let caption = match (report.ways, report.way_bytes) {
            (Some(w), Some(b)) => format!("{title}: {w} ways, {} a way", kib(b)),
            _ => format!("{title}: {}", report.verdict),
        };
        let caption: String = caption.chars().take(110).collect();
        let mut chart = plot::framed_chart(&root, &caption, [20, 60, 90])
            .build_cartesian_2d(
                plot::log_bytes_axis(low / 1.2, high * 1.2),
                (0.8..top * 1.5).log_scale(),
            )?;
        plot::mesh(&mut chart, "stride between addresses (bytes, log scale)", "most addresses that still hit (log scale)")
            .x_label_formatter(&|v| plot::binary_bytes(*v))
            .draw()?;
        let xy = |p: &crate::suites::cache::analysis::conflict::ConflictPoint| {
            (p.stride_bytes as f64, (p.max_hitting as f64).max(0.8))
        };
        chart
            .draw_series(LineSeries::new(points.iter().map(xy), BLUE.stroke_width(2)))?
            .label("largest N that still hits")
            .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], BLUE.stroke_width(2)));
        chart.draw_series(
            points
                .iter()
                .filter(|p| !p.at_least)
                .map(|p| Circle::new(xy(p), 4, BLUE.filled())),
        )?;
        chart
            .draw_series(
                points
                    .iter()
                    .filter(|p| p.at_least)
                    .map(|p| TriangleMarker::new(xy(p), 7, RED.stroke_width(2))),
            )?
            .label("every N tried hit (a lower bound)")
            .legend(|(x, y)| TriangleMarker::new((x + 10, y), 7, RED.stroke_width(2)));
        plot::draw_legend(&mut chart, SeriesLabelPosition::UpperRight)?;
    })
    .context("drawing conflict")
}

/// `tlb_strides.png`: cycles per load against footprint, one line per stride.
pub fn draw_by_stride(path: &Path, title: &str, points: &[ChasePoint]) -> Result<()> {
    let mut strides: Vec<u64> = points.iter().map(|p| p.stride_bytes).collect();
    strides.sort_unstable();
    strides.dedup();
    plot::white_plot!(path, (1400, 800), |root| {
        let (low, high) = plot::byte_range(points.iter().map(|p| p.footprint_bytes));
        let bottom = points
            .iter()
            .map(|p| p.cycles)
            .fold(f64::INFINITY, f64::min);
        let top = points.iter().map(|p| p.cycles).fold(0.0, f64::max);
        let pad = ((top - bottom) * 0.1).max(1.0);
        let mut chart = plot::framed_chart(&root, title, [20, 60, 90])
            .build_cartesian_2d(
                plot::log_bytes_axis(low / 1.1, high * 1.1),
                (bottom - pad).max(0.0)..top + pad,
            )?;
        plot::mesh(&mut chart, "footprint (bytes, log scale)", "cycles per load")
            .x_label_formatter(&|v| plot::binary_bytes(*v))
            .draw()?;
        for (i, &stride) in strides.iter().enumerate() {
            let color = plot::PALETTE[i % plot::PALETTE.len()].to_rgba();
            let mut line: Vec<(f64, f64)> = points
                .iter()
                .filter(|p| p.stride_bytes == stride)
                .map(|p| (p.footprint_bytes as f64, p.cycles))
                .collect();
            line.sort_by(|a, b| a.0.total_cmp(&b.0));
            chart
                .draw_series(LineSeries::new(line, color.stroke_width(2)))?
                .label(format!("{} stride", kib(stride)))
                .legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2))
                });
        }
        plot::draw_legend(&mut chart, SeriesLabelPosition::UpperRight)?;
    })
    .context("drawing tlb_strides")
}
