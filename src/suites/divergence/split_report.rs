//! Files of the push/pop split (Listing 5): `split.csv` (per level, for the longest-running
//! lane: branch part and reconvergence part, min / median / max over samples), `split.json`
//! (their slopes against M with 95 % intervals), `timeline.csv` (every lane's stamps, median
//! over samples, cycles since the warp started) and `timeline.png` (per-lane timelines).

use std::path::Path;

use anyhow::{Context, Result};
use plotters::chart::SeriesLabelPosition;
use plotters::prelude::*;
use serde::Serialize;

use super::split::{SplitReport, StampKind, TimelinePoint, WARP_LANES};
use crate::analysis::linear_fit::Interval;
use crate::report::plot::{self, BLUE, RED};
use crate::report::run_dir::RunDir;

#[derive(Debug, Serialize)]
struct SplitRow {
    m: u32,
    lane: usize,
    n: usize,
    branch_min_cycles: f64,
    branch_median_cycles: f64,
    branch_max_cycles: f64,
    reconvergence_min_cycles: f64,
    reconvergence_median_cycles: f64,
    reconvergence_max_cycles: f64,
}

pub fn write(run: &RunDir, report: &SplitReport, timeline: &[TimelinePoint]) -> Result<()> {
    run.write_csv(
        "split.csv",
        report.levels.iter().map(|level| SplitRow {
            m: level.m,
            lane: level.lane,
            n: level.branch_cycles.n,
            branch_min_cycles: level.branch_cycles.min,
            branch_median_cycles: level.branch_cycles.median,
            branch_max_cycles: level.branch_cycles.max,
            reconvergence_min_cycles: level.reconvergence_cycles.min,
            reconvergence_median_cycles: level.reconvergence_cycles.median,
            reconvergence_max_cycles: level.reconvergence_cycles.max,
        }),
    )?;
    run.write_json(
        "split.json",
        &SplitFile {
            branch_cycles_per_divergent_lane: report.branch_cycles_per_divergent_lane,
            method: "single loop with a clock64 stamp after every iteration and __syncthreads() before the last stamp (Listing 5); for the longest-running lane, branch = start to its last in-loop stamp, reconvergence = last in-loop stamp to the stamp after the barrier; slopes are OLS on per-M medians".into(),
            reconvergence_cycles_per_divergent_lane: report.reconvergence_cycles_per_divergent_lane,
        },
    )?;
    run.write_csv("timeline.csv", timeline)
}

/// `split.json`: the push and pop parts' slopes against M. [`write`] writes it; the
/// summary's divergence rows read it.
#[derive(Debug, Serialize, serde::Deserialize)]
pub struct SplitFile {
    /// `None` where no line could be fitted (fewer than three levels).
    pub branch_cycles_per_divergent_lane: Option<Interval>,
    pub method: String,
    pub reconvergence_cycles_per_divergent_lane: Option<Interval>,
}

/// `timeline.png`: one panel per chosen level; a bar per lane from its start to its last
/// iteration, a tick per iteration, and a red mark where it passed the barrier.
pub fn draw_timelines(
    path: &Path,
    title: &str,
    timeline: &[TimelinePoint],
    levels: &[u32],
) -> Result<()> {
    plot::titled_plot!(path, plot::Design::panels((1600, 760), levels.len()), title, |root| {
        let panels = plot::panels(&root, levels.len());
        let x_max = timeline.iter().map(|p| p.cycles).fold(1.0, f64::max) * 1.03;
        for (panel, &m) in panels.iter().zip(levels) {
            let points: Vec<&TimelinePoint> =
                timeline.iter().filter(|p| p.m == m).collect();
            let mut chart = plot::captioned_chart(panel, format!("M = {m}"), [20, 60, 70])
                // Room above lane 31 for the legend, so it covers no lane.
                .build_cartesian_2d(0.0..x_max, -0.5..WARP_LANES as f64 + 4.5)?;
            plot::mesh(&mut chart, "cycles since the warp started", "lane")
                .disable_y_mesh()
                .x_label_formatter(&|v| format!("{v:.0}"))
                .y_label_formatter(&|v| {
                    if *v <= WARP_LANES as f64 - 1.0 {
                        format!("{v:.0}")
                    } else {
                        String::new()
                    }
                })
                .draw()?;
            // The marks, once each, for the legend.
            chart
                .draw_series(std::iter::empty::<Rectangle<(f64, f64)>>())?
                .label("lane active: first to last iteration")
                .legend(|(x, y)| {
                    Rectangle::new([(x, y - 5), (x + 20, y + 5)], BLUE.mix(0.35).filled())
                });
            chart
                .draw_series(std::iter::empty::<PathElement<(f64, f64)>>())?
                .label("an iteration ends")
                .legend(|(x, y)| {
                    PathElement::new(vec![(x + 10, y - 6), (x + 10, y + 6)], BLUE)
                });
            chart
                .draw_series(std::iter::empty::<Circle<(f64, f64), i32>>())?
                .label("past the barrier")
                .legend(|(x, y)| Circle::new((x + 10, y), 4, RED.filled()));
            for lane in 0..WARP_LANES {
                let y = lane as f64;
                let mine: Vec<&&TimelinePoint> =
                    points.iter().filter(|p| p.lane == lane).collect();
                let start = mine.iter().find(|p| p.kind == StampKind::Start).map(|p| p.cycles);
                let last = mine
                    .iter()
                    .filter(|p| p.kind == StampKind::Iteration)
                    .map(|p| p.cycles)
                    .fold(None, |a: Option<f64>, c| Some(a.map_or(c, |a| a.max(c))));
                if let (Some(start), Some(last)) = (start, last) {
                    chart.draw_series(std::iter::once(Rectangle::new(
                        [(start, y - 0.3), (last, y + 0.3)],
                        BLUE.mix(0.35).filled(),
                    )))?;
                }
                chart.draw_series(mine.iter().filter(|p| p.kind == StampKind::Iteration).map(
                    |p| {
                        PathElement::new(
                            vec![(p.cycles, y - 0.3), (p.cycles, y + 0.3)],
                            BLUE.stroke_width(1),
                        )
                    },
                ))?;
                chart.draw_series(
                    mine.iter()
                        .filter(|p| p.kind == StampKind::AfterBarrier)
                        .map(|p| Circle::new((p.cycles, y), 4, RED.filled())),
                )?;
            }
            plot::draw_legend(&mut chart, SeriesLabelPosition::UpperRight)?;
        }
    })
    .context("drawing timeline")
}

/// The stamps of a run's `timeline.csv`, as the measurement handed them to the split.
pub fn timeline(dir: &Path) -> Result<Vec<TimelinePoint>> {
    crate::report::saved::read_csv(dir, "timeline.csv")
}

#[cfg(test)]
mod read_back {
    #[test]
    fn the_committed_run_reads_back_its_timeline() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("results/h100");
        let timeline = super::timeline(&root.join("divergence")).unwrap();
        assert!(timeline.iter().any(|p| p.kind == super::StampKind::AfterBarrier));
    }
}
