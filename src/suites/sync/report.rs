//! Files of `gpubench sync`: `sync.csv` and `sync.json` (one verdict per probe: outcome, what
//! was observed, what GT200 did per the paper), `probe-NAME.json` (each probe's raw values,
//! written by its child process) and `sync.png` (Listing 7's departure stamps per lane).

use std::path::Path;

use anyhow::{Context, Result};
use plotters::prelude::*;
use serde::Serialize;

use super::analysis::Verdict;
use crate::report::plot::{self, BLUE, FONT};
use crate::report::run_dir::RunDir;

#[derive(Debug, Serialize)]
struct Row<'a> {
    probe: &'a str,
    listing: &'a str,
    outcome: &'a str,
    matches_pre_volta: Option<bool>,
    observed: &'a str,
    pre_volta: &'a str,
}

pub fn write(run: &RunDir, verdicts: &[(&str, Verdict)]) -> Result<()> {
    run.write_csv(
        "sync.csv",
        verdicts.iter().map(|(listing, v)| Row {
            probe: v.probe,
            listing,
            outcome: v.outcome.label(),
            matches_pre_volta: v.matches_pre_volta,
            observed: &v.observed,
            pre_volta: v.pre_volta,
        }),
    )?;
    let all: Vec<SavedVerdict> = verdicts
        .iter()
        .map(|(listing, v)| SavedVerdict {
            listing: listing.to_string(),
            matches_pre_volta: v.matches_pre_volta,
            observed: v.observed.clone(),
            outcome: v.outcome,
            pre_volta: v.pre_volta.to_string(),
            probe: v.probe.to_string(),
        })
        .collect();
    run.write_json("sync.json", &all)
}

/// An outcome as `sync.json` names it (`deadlocked_watchdog`): the words of its summary row.
fn outcome_word(outcome: super::analysis::Outcome) -> String {
    serde_json::to_value(outcome)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default()
}

/// One probe's verdict as `sync.json` holds it (the run writes it, `report` reads it back as
/// this type), its fields in the order every run has written them.
#[derive(Debug, Serialize, serde::Deserialize)]
pub struct SavedVerdict {
    pub listing: String,
    pub matches_pre_volta: Option<bool>,
    #[serde(default)]
    pub observed: String,
    pub outcome: super::analysis::Outcome,
    pub pre_volta: String,
    pub probe: String,
}

/// One probe's times in `deadlines.json` (the suite writes the list, in the probes' order;
/// nothing reads it back: it is there for a person asking why a probe was killed).
#[derive(Debug, Serialize, serde::Deserialize)]
pub struct ProbeDeadline {
    pub deadline_seconds: f64,
    /// `None` where the probe hung or failed.
    pub launch_to_result_seconds: Option<f64>,
    pub probe: String,
    /// The child process it ran in, counted from 1.
    pub process: usize,
    /// From the GPU being its to its result, hang or failure.
    pub seconds: f64,
}

pub fn render_table(verdicts: &[(&str, Verdict)]) -> String {
    let mut text = String::new();
    for (listing, v) in verdicts {
        let matches = match v.matches_pre_volta {
            Some(true) => "as on GT200",
            Some(false) => "unlike GT200",
            None => "no GT200 result",
        };
        text += &format!(
            "{:<22} {:<28} {:<36} {matches}\n    observed: {}\n    GT200 (paper): {}\n",
            v.probe,
            listing,
            v.outcome.label(),
            v.observed,
            v.pre_volta
        );
    }
    text
}

/// Departure stamps of Listing 7, relative to warp 1's first barrier.
pub fn draw_pairing(path: &Path, title: &str, stamps: &[i64]) -> Result<()> {
    plot::white_plot!(path, (1200, 700), |root| {
        let origin = stamps[32..64]
            .iter()
            .copied()
            .filter(|&v| v >= 0)
            .min()
            .unwrap_or(0);
        let relative: Vec<f64> = stamps.iter().map(|&v| (v - origin) as f64).collect();
        let low = relative.iter().copied().fold(f64::INFINITY, f64::min);
        let high = relative.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let pad = ((high - low) * 0.1).max(10.0);
        let mut chart = plot::framed_chart(&root, title, [20, 60, 200])
            .build_cartesian_2d((low - pad)..(high + pad), 0..4)?;
        let names = [
            "warp 0 lanes 0-15",
            "warp 0 lanes 16-31",
            "warp 1 after 1st",
            "warp 1 after 2nd",
        ];
        chart
            .configure_mesh()
            .x_desc("cycles since warp 1 left its first __syncthreads()")
            .y_labels(4)
            .y_label_formatter(&|i| {
                names
                    .get(*i as usize)
                    .map_or(String::new(), |s| s.to_string())
            })
            .axis_desc_style((FONT, plot::LABEL_SIZE))
            .label_style((FONT, plot::TICK_SIZE))
            .draw()?;
        let groups = [(0..16, 0), (16..32, 1), (32..64, 2), (64..96, 3)];
        for (range, row) in groups {
            chart.draw_series(
                relative[range]
                    .iter()
                    .map(move |&t| Circle::new((t, row), 5, BLUE.mix(0.6).filled())),
            )?;
        }
    })
    .context("drawing sync")
}

/// The summary's synchronization rows: each probe's outcome and what was observed.
pub fn figures(dir: &Path) -> Result<Vec<crate::report::figures::Figure>> {
    let probes: Vec<SavedVerdict> = crate::report::saved::read_json(dir, "sync.json")?;
    let mut r = crate::report::figures::Rows::new("sync", "Synchronization", "sync.json");
    for probe in probes {
        r.text(
            &probe.listing,
            Some(&format!("{}: {}", outcome_word(probe.outcome), probe.observed)),
        );
    }
    Ok(r.finish())
}
