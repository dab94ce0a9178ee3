//! Files of `gpubench tma`: `tma-latency.csv` (per footprint: cycles per step of the TMA chase and
//! of the ld.global.cg chase), `tma-bandwidth.csv` (per tile size and blocks per SM: bytes per
//! clock of every block and over the GPU, GB/s at the measured clock), `tma.json` (both with the
//! fitted cache each chase sees) and `tma.png`.

use std::path::Path;

use anyhow::{Context, Result};
use plotters::element::DashedPathElement;
use plotters::prelude::*;
use serde::{Deserialize, Serialize};

use super::analysis::{Capacity, capacity, same_capacity};
use super::measure::Stream;
use crate::report::figures::{Domain, Figure, Rows};
use crate::report::plot::{self, BLUE, GREEN, ORANGE, RED};
use crate::report::run_dir::RunDir;

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct LatencyRow {
    pub footprint_bytes: u64,
    pub tma_cycles: f64,
    pub load_cycles: f64,
    pub tma_over_load_cycles: f64,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct BandwidthRow {
    pub tile_bytes: u32,
    pub blocks_per_sm: u32,
    pub stages: u32,
    pub bytes_per_clock_per_block: Option<f64>,
    pub bytes_per_clock_per_block_min: Option<f64>,
    pub bytes_per_clock_per_block_max: Option<f64>,
    /// All blocks' bytes over the GPU time between events around the launch (the median
    /// launch's, and the slowest's and fastest's; older runs timed one launch and have no range).
    pub gpu_gb_per_s: Option<f64>,
    pub gpu_gb_per_s_min: Option<f64>,
    pub gpu_gb_per_s_max: Option<f64>,
    /// The same per clock, at the SM clock measured before the suite.
    pub gpu_bytes_per_clock: Option<f64>,
    pub skipped: Option<String>,
}

pub fn bandwidth_rows(streams: &[Stream], mhz: f64) -> Vec<BandwidthRow> {
    streams
        .iter()
        .map(|s| {
            let rate = |ms: Option<f64>| s.bytes.zip(ms).map(|(b, ms)| b / (ms * 1e-3));
            BandwidthRow {
                tile_bytes: s.tile_bytes,
                blocks_per_sm: s.blocks_per_sm,
                stages: s.stages,
                bytes_per_clock_per_block: s.per_block.map(|p| p.median),
                bytes_per_clock_per_block_min: s.per_block.map(|p| p.min),
                bytes_per_clock_per_block_max: s.per_block.map(|p| p.max),
                gpu_gb_per_s: rate(s.event_ms.map(|m| m.median)).map(|r| r / 1e9),
                gpu_gb_per_s_min: rate(s.event_ms.map(|m| m.max)).map(|r| r / 1e9),
                gpu_gb_per_s_max: rate(s.event_ms.map(|m| m.min)).map(|r| r / 1e9),
                gpu_bytes_per_clock: rate(s.event_ms.map(|m| m.median)).map(|r| r / (mhz * 1e6)),
                skipped: s.skipped.clone(),
            }
        })
        .collect()
}

/// The caches the two chases see (TMA, load).
pub fn fits(rows: &[LatencyRow]) -> (Option<Capacity>, Option<Capacity>) {
    let curve = |f: fn(&LatencyRow) -> f64| -> Vec<(f64, f64)> {
        rows.iter()
            .map(|r| (r.footprint_bytes as f64, f(r)))
            .collect()
    };
    (
        capacity(&curve(|r| r.tma_cycles)),
        capacity(&curve(|r| r.load_cycles)),
    )
}

/// `tma.json`: every latency and bandwidth row with what each measured, the cache each chase
/// sees and the SASS kept; written by [`write`] (the figures come from the CSVs).
#[derive(Debug, Serialize, Deserialize)]
pub struct TmaFile {
    pub bandwidth: String,
    pub bandwidth_rows: Vec<BandwidthRow>,
    pub capacity_fit: String,
    pub latency: String,
    pub latency_rows: Vec<LatencyRow>,
    pub load_fit: Option<Capacity>,
    /// Whether the two fitted capacities' intervals overlap (none without both fits).
    pub same_capacity: Option<bool>,
    pub sass: crate::harness::suite::KeptSass,
    pub tma_fit: Option<Capacity>,
}

/// `sass` is what the run's SASS holds: each kernel's memory instructions (the copies are
/// `UTMALDG`), as `dsm.json` records them.
pub fn write(
    run: &RunDir,
    latency: &[LatencyRow],
    bandwidth: &[BandwidthRow],
    sass: &crate::harness::suite::KeptSass,
) -> Result<()> {
    run.write_csv("tma-latency.csv", latency)?;
    run.write_csv("tma-bandwidth.csv", bandwidth)?;
    let (tma, load) = fits(latency);
    run.write_json(
        "tma.json",
        &TmaFile {
            bandwidth: "thread 0 of every block streams 2-D tiles of a 1 GiB tensor (each tile once) through 4 shared buffers, each on its own mbarrier; per block: bytes per clock of its span; GPU: all bytes over the time between events around each of 3 launches (median, min-max)".into(),
            bandwidth_rows: bandwidth.to_vec(),
            capacity_fit: "latency = hit·min(1, C/f) + miss·(1 − min(1, C/f)) over footprints f; C on a logarithmic grid, hit and miss by least squares, 95% interval from the residual profile".into(),
            latency: "cycles per step of one thread's random chase over 128-byte tiles: a 1-D cp.async.bulk.tensor into shared memory completing on an mbarrier, then the next index read from the copied tile; beside it the same chain with ld.global.cg; every SM reads the whole footprint once before each chase".into(),
            latency_rows: latency.to_vec(),
            load_fit: load,
            same_capacity: tma.zip(load).map(|(t, l)| same_capacity(&t, &l)),
            sass: sass.clone(),
            tma_fit: tma,
        },
    )
}

pub fn title() -> &'static str {
    "TMA copies: tile-chase latency, streaming bandwidth"
}

/// `tma.png`: (a) cycles per step of the TMA and the L2-load chase against footprint, the
/// capacity each fit found dashed; (b) GB/s of the streaming copy per tile size and blocks per
/// SM.
pub fn draw(
    path: &Path,
    title: &str,
    latency: &[LatencyRow],
    bandwidth: &[BandwidthRow],
) -> Result<()> {
    let (tma_fit, load_fit) = fits(latency);
    let mut entries = vec![
        plot::Entry::new("TMA copy (cp.async.bulk.tensor)", BLUE, plot::Key::Line),
        plot::Entry::new("L2 load (ld.global.cg)", RED, plot::Key::Line),
    ];
    for (fit, colour, what) in [(tma_fit, BLUE, "TMA"), (load_fit, RED, "load")] {
        if let Some(f) = fit {
            entries.push(plot::Entry::new(
                format!("{what} fit: {:.1} MiB", f.capacity_bytes / 1048576.0),
                colour,
                plot::Key::Dash,
            ));
        }
    }
    let low = latency
        .iter()
        .map(|r| r.footprint_bytes as f64)
        .fold(f64::INFINITY, f64::min);
    let high = latency
        .iter()
        .map(|r| r.footprint_bytes as f64)
        .fold(1.0, f64::max);
    let low = if low.is_finite() { low } else { 1.0 };
    let top = latency
        .iter()
        .map(|r| r.tma_cycles.max(r.load_cycles))
        .fold(100.0, f64::max)
        * 1.1;
    let tiles: Vec<u32> = {
        let mut t: Vec<u32> = bandwidth.iter().map(|b| b.tile_bytes).collect();
        t.dedup();
        t
    };
    let series: Vec<plot::BarSeries> = [(1, GREEN), (2, ORANGE), (4, BLUE)]
        .iter()
        .map(|&(blocks, colour)| plot::BarSeries {
            label: format!(
                "{blocks} block{} per SM",
                if blocks == 1 { "" } else { "s" }
            ),
            colour,
            values: tiles
                .iter()
                .map(|&t| {
                    bandwidth
                        .iter()
                        .find(|b| b.tile_bytes == t && b.blocks_per_sm == blocks)
                        .and_then(|b| b.gpu_gb_per_s)
                })
                .collect(),
        })
        .collect();
    let design = plot::Design::panels((1500, 700), 2).with_legend(4);
    plot::titled_plot!(path, design, title, |root| {
        let (left, right) = plot::two_panels(&root, 0.5);
        let left = plot::legend_above(&left, &entries)?;
        let mut chart = plot::framed_chart(
            &left,
            "(a) latency of a random tile chase",
            [16, 60, 90],
        )
        .build_cartesian_2d(
                plot::log_bytes_axis(low / 1.2, high * 1.2),
                0.0..top,
            )?;
        plot::mesh(&mut chart, "footprint (bytes, log scale)", "cycles per step")
            .x_label_formatter(&|v| plot::binary_bytes(*v))
            .y_label_formatter(&|v| format!("{v:.0}"))
            .draw()?;
        for (value, colour) in [
            (
                (|r: &LatencyRow| r.tma_cycles) as fn(&LatencyRow) -> f64,
                BLUE,
            ),
            (|r: &LatencyRow| r.load_cycles, RED),
        ] {
            let curve: Vec<(f64, f64)> = latency
                .iter()
                .map(|r| (r.footprint_bytes as f64, value(r)))
                .collect();
            chart.draw_series(LineSeries::new(curve.clone(), colour.stroke_width(2)))?;
            chart.draw_series(curve.iter().map(|&p| Circle::new(p, 4, colour.filled())))?;
        }
        for (fit, colour) in [(tma_fit, BLUE), (load_fit, RED)] {
            if let Some(f) = fit {
                chart.draw_series(std::iter::once(DashedPathElement::new(
                    vec![(f.capacity_bytes, 0.0), (f.capacity_bytes, top)],
                    6,
                    4,
                    colour.stroke_width(2),
                )))?;
            }
        }
        plot::grouped_bars(
            &right,
            "(b) streaming a 1 GiB tensor, by tile size",
            &tiles
                .iter()
                .map(|&t| plot::binary_bytes(f64::from(t)))
                .collect::<Vec<_>>(),
            &series,
            "GB/s over the GPU",
            false,
        )?;
    })
    .context("drawing tma")
}

pub fn read_latency(dir: &Path) -> Result<Vec<LatencyRow>> {
    crate::report::saved::read_csv(dir, "tma-latency.csv")
}

pub fn read_bandwidth(dir: &Path) -> Result<Vec<BandwidthRow>> {
    crate::report::saved::read_csv(dir, "tma-bandwidth.csv")
}

/// The summary's TMA rows: the fitted hit and miss latencies and capacity of both chases, whether
/// they see the same cache, the measured latency at the smallest and largest footprint, and the
/// streaming rate of every tile size and blocks per SM.
pub fn figures(dir: &Path) -> Result<Vec<Figure>> {
    let latency = read_latency(dir)?;
    let bandwidth = read_bandwidth(dir)?;
    let mut r = Rows::new("tma", "TMA", "tma-latency.csv");
    let (tma, load) = fits(&latency);
    for (fit, what) in [(tma, "TMA copy"), (load, "L2 load (ld.global.cg)")] {
        let Some(f) = fit else {
            r.text(
                &format!("{what} latency levels"),
                Some("no rise from a cache to memory within the measured footprints"),
            );
            continue;
        };
        r.labelled(
            &format!("{what} latency, cached"),
            Some(f.hit_cycles),
            "cycles",
            "fit".into(),
        );
        r.domain(Domain::Fitted);
        r.labelled(
            &format!("{what} latency, from memory"),
            Some(f.miss_cycles),
            "cycles",
            "fit".into(),
        );
        r.domain(Domain::Fitted);
        r.push(
            &format!("{what}: capacity before misses"),
            Some(f.capacity_bytes),
            "bytes",
            Some((f.capacity_low_bytes, f.capacity_high_bytes, "95% CI")),
        );
        r.domain(Domain::Fitted);
    }
    if let (Some(t), Some(l)) = (tma, load) {
        r.text(
            "TMA latency levels against the L2 load's",
            Some(if same_capacity(&t, &l) {
                "the same cache: the copy's latency rises where the L2 load's does"
            } else {
                "a different capacity: the copy and the L2 load do not rise at the same footprint"
            }),
        );
    }
    for row in [latency.first(), latency.last()].into_iter().flatten() {
        let at = plot::binary_bytes(row.footprint_bytes as f64);
        r.labelled(
            &format!("TMA copy latency, {at} chain"),
            Some(row.tma_cycles),
            "cycles",
            "one thread, mean of 2048 steps".into(),
        );
    }
    r.from("tma-bandwidth.csv");
    // Every byte lands in an SM's shared memory, through its 32 banks of 4 bytes per clock.
    let ceiling =
        crate::report::ceilings::chip_bytes(&crate::report::metadata::SavedMetadata::read(dir)?);
    for row in &bandwidth {
        let name = format!(
            "TMA stream, {} tiles, {} block{} per SM",
            plot::binary_bytes(f64::from(row.tile_bytes)),
            row.blocks_per_sm,
            if row.blocks_per_sm == 1 { "" } else { "s" }
        );
        match (&row.skipped, row.gpu_gb_per_s) {
            (Some(why), _) => r.text(&name, Some(&format!("not run: {why}"))),
            (None, Some(gbs)) => match (row.gpu_gb_per_s_min, row.gpu_gb_per_s_max) {
                (Some(low), Some(high)) => r.push(
                    &name,
                    Some(gbs),
                    "GB/s",
                    Some((
                        low,
                        high,
                        "median of 3 launches, min-max; events around each",
                    )),
                ),
                _ => r.labelled(&name, Some(gbs), "GB/s", "events around the launch".into()),
            },
            (None, None) => {}
        }
        r.at_most(ceiling.as_ref());
    }
    Ok(r.finish())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::stats::Summary;

    #[test]
    fn a_stream_row_gives_the_median_launch_and_the_slowest_and_fastest() {
        let stream = Stream {
            tile_bytes: 4096,
            blocks_per_sm: 2,
            stages: 4,
            per_block: Summary::of(&[5.9, 6.0, 6.1]),
            bytes: Some(1e9),
            event_ms: Summary::of(&[0.40, 0.50, 0.45]),
            skipped: None,
        };
        let row = &bandwidth_rows(&[stream], 2000.0)[0];
        let close = |a: Option<f64>, b: f64| (a.unwrap() - b).abs() < 1e-9;
        assert!(close(row.gpu_gb_per_s, 1e9 / 0.45e-3 / 1e9));
        // The slowest launch (0.50 ms) gives the low end, the fastest the high one.
        assert!(close(row.gpu_gb_per_s_min, 2000.0));
        assert!(close(row.gpu_gb_per_s_max, 2500.0));
        assert!(close(row.gpu_bytes_per_clock, 1e9 / 0.45e-3 / 2e9));
    }

    #[test]
    fn a_row_of_a_run_that_timed_one_launch_still_reads() {
        let csv = "tile_bytes,blocks_per_sm,stages,bytes_per_clock_per_block,bytes_per_clock_per_block_min,bytes_per_clock_per_block_max,gpu_gb_per_s,gpu_bytes_per_clock,skipped\n4096,2,4,5.06,5.05,5.07,2601.4,1303.9,\n";
        let mut reader = csv::Reader::from_reader(csv.as_bytes());
        let row: BandwidthRow = reader.deserialize().next().unwrap().unwrap();
        assert_eq!(row.gpu_gb_per_s, Some(2601.4));
        assert_eq!((row.gpu_gb_per_s_min, row.gpu_gb_per_s_max), (None, None));
    }
}
