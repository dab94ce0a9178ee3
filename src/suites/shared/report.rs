//! Files of `gpubench shared`: `shared.csv` (element bytes, stride, predicted wavefronts,
//! cycles per dependent load), `shared.json` (the fitted cost per extra way, conflict-free
//! latencies) and `shared.png` (cycles per load against stride, and against wavefronts with
//! the fit).

use std::path::Path;

use anyhow::{Context, Result};
use plotters::prelude::*;
use serde::{Deserialize, Serialize};

use super::analysis::{self as bank_conflicts, ConflictFit, StridePoint};
use crate::report::plot::{self, BLUE, GREEN, RED};
use crate::report::run_dir::RunDir;

/// One line of `shared.csv` (read back by [`read_points`]).
#[derive(Debug, Serialize, Deserialize)]
pub struct Row {
    pub element_bytes: u32,
    pub stride_elements: u32,
    pub wavefronts: u32,
    pub cycles_per_load: f64,
}

/// `shared.json`: the conflict-free load latency and the fitted cost per extra bank-conflict
/// way; written by [`write`], read back by [`figures`].
#[derive(Debug, Serialize, Deserialize)]
pub struct SharedFile {
    pub fit: Option<ConflictFit>,
    pub load_latency_cycles: Option<f64>,
    pub load_latency_note: String,
}

pub fn write(run: &RunDir, points: &[StridePoint], fit: Option<&ConflictFit>) -> Result<()> {
    run.write_csv(
        "shared.csv",
        points.iter().map(|p| Row {
            element_bytes: p.element_bytes,
            stride_elements: p.stride,
            wavefronts: bank_conflicts::wavefronts(p.element_bytes, p.stride),
            cycles_per_load: p.cycles_per_load,
        }),
    )?;
    let load_latency_cycles = points
        .iter()
        .find(|p| p.element_bytes == 4 && p.stride == 1)
        .map(|p| p.cycles_per_load);
    run.write_json(
        "shared.json",
        &SharedFile {
            fit: fit.cloned(),
            load_latency_cycles,
            load_latency_note: "4-byte dependent load, stride 1 (no conflict), cycles per load with the loop unrolled 32 times".into(),
        },
    )
}

/// The figure's title, before the device.
pub const TITLE: &str = "Shared-memory bank conflicts";

const COLORS: [RGBColor; 3] = [BLUE, RED, GREEN];

pub fn draw(
    path: &Path,
    title: &str,
    points: &[StridePoint],
    fit: Option<&ConflictFit>,
) -> Result<()> {
    plot::titled_plot!(path, plot::Design::panels((1600, 700), 2), title, |root| {
        let panels = plot::panels(&root, 2);
        let y_max = points.iter().map(|p| p.cycles_per_load).fold(1.0, f64::max) * 1.08;
        let x_max = points.iter().map(|p| p.stride).max().unwrap_or(1);
        let mut by_stride = plot::captioned_chart(&panels[0], "against stride", [20, 60, 90])
            .build_cartesian_2d(0u32..x_max + 1, 0.0..y_max)?;
        plot::mesh(&mut by_stride, "stride (elements)", "cycles per dependent load")
            .draw()?;
        let w_max = points
            .iter()
            .map(|p| bank_conflicts::wavefronts(p.element_bytes, p.stride))
            .max()
            .unwrap_or(1);
        let mut by_ways = plot::captioned_chart(
            &panels[1],
            "against wavefronts (bank model)",
            [20, 60, 90],
        )
        .build_cartesian_2d(0u32..w_max + 1, 0.0..y_max)?;
        plot::mesh(&mut by_ways, "wavefronts per warp load", "cycles per dependent load")
            .draw()?;
        for (color, bytes) in COLORS.iter().zip(super::measure::ELEMENT_BYTES) {
            let mine: Vec<&StridePoint> =
                points.iter().filter(|p| p.element_bytes == bytes).collect();
            by_stride
                .draw_series(LineSeries::new(
                    mine.iter().map(|p| (p.stride, p.cycles_per_load)),
                    color.stroke_width(2),
                ))?
                .label(format!("{bytes}-byte elements"))
                .legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2))
                });
            by_ways.draw_series(mine.iter().map(|p| {
                Circle::new(
                    (
                        bank_conflicts::wavefronts(p.element_bytes, p.stride),
                        p.cycles_per_load,
                    ),
                    5,
                    color.filled(),
                )
            }))?;
            if let (Some(fit), Some(base)) =
                (fit, fit.and_then(|f| f.conflict_free_cycles.get(&bytes)))
            {
                let minimum = bank_conflicts::minimum_wavefronts(bytes);
                let line = |w: u32| {
                    base.estimate + fit.cycles_per_extra_way.estimate * f64::from(w - minimum)
                };
                by_ways.draw_series(LineSeries::new(
                    [(minimum, line(minimum)), (w_max, line(w_max))],
                    color.mix(0.6).stroke_width(1),
                ))?;
            }
        }
        plot::draw_legend(&mut by_stride, SeriesLabelPosition::UpperLeft)?;
    })
    .context("drawing shared")
}

/// The summary's shared-memory rows: load latency and the cost per bank-conflict way.
pub fn figures(dir: &Path) -> Result<Vec<crate::report::figures::Figure>> {
    use crate::report::figures::{Domain, Rows};
    let shared: SharedFile = crate::report::saved::read_json(dir, "shared.json")?;
    let mut r = Rows::new("shared", "Shared memory", "shared.json");
    use crate::report::keys::{banks, Known};
    r.key(Known::Banks { what: banks::INDEXED_LOAD }.key()).push(
        "indexed load latency (4 B, no conflict; the word index is scaled on the chain)",
        shared.load_latency_cycles,
        "cycles",
        None,
    );
    if let Some(fit) = &shared.fit {
        let cost = fit.cycles_per_extra_way;
        r.key(Known::Banks { what: banks::CONFLICT_COST }.key()).push(
            "cost per extra bank-conflict way",
            Some(cost.estimate),
            "cycles",
            Some((cost.ci95_low, cost.ci95_high, "95% CI")),
        );
        r.domain(Domain::Fitted);
    }
    Ok(r.finish())
}

/// The points of a run's `shared.csv`, as the measurement handed them to the analysis.
pub fn read_points(dir: &Path) -> Result<Vec<super::analysis::StridePoint>> {
    Ok(crate::report::saved::read_csv::<Row>(dir, "shared.csv")?
        .into_iter()
        .map(|r| super::analysis::StridePoint {
            element_bytes: r.element_bytes,
            stride: r.stride_elements,
            cycles_per_load: r.cycles_per_load,
        })
        .collect())
}

#[cfg(test)]
mod read_back {
    #[test]
    fn the_committed_run_reads_back_compressed_or_not() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("results/h100");
        assert!(!super::read_points(&root.join("shared")).unwrap().is_empty());
    }
}
