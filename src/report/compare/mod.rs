//! `gpubench compare`: runs' summaries side by side, and what a person should look at.
//!
//! Two kinds of question. *Did this figure change?* (any number of runs against the first): a
//! number differs when it moved by more than a relative tolerance of its unit ([`Tolerances`])
//! and, where both runs state an interval, the intervals are disjoint too; a verdict differs
//! when its words differ (the numbers inside a verdict, a kill time or a group size, are its
//! context and are masked); a figure inferred with a confidence below 0.5 in either run is
//! shown but not flagged, as it says itself that another reading is likely. *Which GPU is the odd one out?* (`--fleet`, three runs or more):
//! per figure the median and the median absolute deviation (MAD) over the runs, and every run
//! more than `k` robust standard deviations (1.4826 × MAD) *and* more than the tolerance away
//! from the median, or whose verdict is not the most common one; runs are ranked by how many
//! figures they are odd in. Pure: summaries in, tables out.

use std::fmt::Write as _;

use serde::Serialize;

use super::figures::Figure;
use super::summary::model::Summary;
use super::text::{csv_text, format_value, latex_escape, markdown_cell, markdown_text};
use crate::analysis::stats::median_of_sorted;

mod render;

pub use render::{
    Format, cell_text, footnote, odd_ones_out_rows, render, verdict_cells, verdict_headers,
};

/// Relative tolerances by unit: how far a figure may move between two runs of one GPU model
/// before it is worth a look. The defaults come from repeated runs on H100s (pipeline and
/// bandwidth figures move by under 1 %, latencies by up to 4 % between machines of one model,
/// level sizes read from fits by more).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Tolerances {
    pub default: f64,
    pub by_unit: Vec<(String, f64)>,
}

impl Default for Tolerances {
    fn default() -> Tolerances {
        Tolerances {
            default: 0.05,
            by_unit: vec![("bytes".into(), 0.10)],
        }
    }
}

impl Tolerances {
    /// Applies one `--tolerance` argument: `PERCENT` for every unit, or `UNIT=PERCENT`.
    pub fn set(&mut self, argument: &str) -> Result<(), String> {
        let (unit, percent) = match argument.rsplit_once('=') {
            Some((unit, percent)) => (Some(unit.trim()), percent),
            None => (None, argument),
        };
        let fraction = percent
            .trim()
            .trim_end_matches('%')
            .parse::<f64>()
            .ok()
            .filter(|p| p.is_finite() && (0.0..=1000.0).contains(p))
            .map(|p| p / 100.0)
            .ok_or_else(|| {
                format!(
                    "--tolerance takes a percentage from 0 to 1000, alone or as UNIT=PERCENT (e.g. 5 or cycles=2), not {argument:?}"
                )
            })?;
        match unit {
            None => {
                self.default = fraction;
                self.by_unit.clear();
            }
            Some(unit) => {
                self.by_unit.retain(|(u, _)| u != unit);
                self.by_unit.push((unit.to_string(), fraction));
            }
        }
        Ok(())
    }

    pub fn of(&self, unit: &str) -> f64 {
        self.by_unit
            .iter()
            .find(|(u, _)| u == unit)
            .map_or(self.default, |&(_, t)| t)
    }

    /// "5 % (bytes 10 %)".
    pub fn describe(&self) -> String {
        let mut text = format!("{} %", percent(self.default));
        if !self.by_unit.is_empty() {
            let units: Vec<String> = self
                .by_unit
                .iter()
                .map(|(u, t)| format!("{u} {} %", percent(*t)))
                .collect();
            let _ = write!(text, " ({})", units.join(", "));
        }
        text
    }
}

fn percent(fraction: f64) -> String {
    let p = fraction * 100.0;
    if p.fract() == 0.0 {
        format!("{p:.0}")
    } else {
        format!("{p}")
    }
}

/// A verdict's words with every number replaced by `#`.
fn words(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    let mut in_number = false;
    let mut before = ' ';
    while let Some(c) = chars.next() {
        // A point inside a number (1.6) belongs to it; one that ends a sentence does not. A
        // sign that starts a number (-0.4, +2.3) is part of it; a dash between two (16-31) is
        // not.
        let next_is_digit = chars.peek().is_some_and(char::is_ascii_digit);
        let numeric = c.is_ascii_digit()
            || (in_number && c == '.' && next_is_digit)
            || (matches!(c, '-' | '+' | '\u{2212}')
                && next_is_digit
                && !before.is_alphanumeric()
                && !in_number);
        before = c;
        if !numeric {
            out.push(c);
        } else if !in_number {
            out.push('#');
        }
        in_number = numeric;
    }
    out
}

fn relative(a: f64, b: f64) -> f64 {
    let scale = a.abs().max(b.abs());
    if scale == 0.0 {
        0.0
    } else {
        (a - b).abs() / scale
    }
}

/// Why `other` differs from `reference`, if it does (see the module doc).
pub fn differs(reference: &Figure, other: &Figure, tolerances: &Tolerances) -> Option<String> {
    // What a run itself calls unresolved (a low confidence, not identifiable, uncalibrated)
    // is no figure to flag: another reading was likely, which candidates tied or where an
    // unvouched step fell may differ between runs.
    if reference.is_unresolved() || other.is_unresolved() {
        return None;
    }
    match (&reference.text, &other.text, reference.value, other.value) {
        (Some(a), Some(b), _, _) => (words(a) != words(b)).then(|| "different verdict".into()),
        (None, None, Some(a), Some(b)) => {
            let tolerance = tolerances.of(&reference.unit);
            let moved = relative(a, b);
            if moved <= tolerance {
                return None;
            }
            let disjoint = match (reference.low, reference.high, other.low, other.high) {
                (Some(al), Some(ah), Some(bl), Some(bh)) => Some(ah < bl || bh < al),
                _ => None,
            };
            match disjoint {
                Some(false) => None,
                Some(true) => Some(format!(
                    "moved {:.1} % (over {} %), intervals disjoint",
                    100.0 * moved,
                    percent(tolerance)
                )),
                None => Some(format!(
                    "moved {:.1} % (over {} %)",
                    100.0 * moved,
                    percent(tolerance)
                )),
            }
        }
        (None, None, None, None) => None,
        _ => Some("present in one form only".into()),
    }
}

/// One figure across the runs, and what is odd about it.
#[derive(Debug, Clone, Serialize)]
pub struct Row {
    pub section: String,
    pub quantity: String,
    pub unit: String,
    pub cells: Vec<Option<Figure>>,
    /// Pairwise mode: why some run differs from the first.
    pub flag: Option<String>,
    /// Fleet mode: the spread over the runs and the odd ones.
    pub fleet: Option<FleetRow>,
    /// The runs (by index) whose figure came from a suite NVML saw throttled, with what it
    /// saw.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub throttled: Vec<(usize, String)>,
}

#[derive(Debug, Clone, Serialize)]
pub struct FleetRow {
    pub median: Option<f64>,
    pub mad: Option<f64>,
    /// The most common verdict (numbers masked), for verdict rows.
    pub common_verdict: Option<String>,
    /// Indices of the odd runs, with how far each lies: robust standard deviations from the
    /// median (`None` for a verdict).
    pub odd: Vec<(usize, Option<f64>)>,
}

impl FleetRow {
    /// What the runs centre on: the median in `unit`, or the most common verdict.
    fn centre(&self, unit: &str) -> Option<String> {
        match (self.median, &self.common_verdict) {
            (Some(m), _) => Some(format_value(m, unit)),
            (None, verdict) => verdict.clone(),
        }
    }
}

/// A run that is odd in at least one figure, for the ranking.
#[derive(Debug, Clone, Serialize)]
pub struct OddRun {
    pub run: String,
    pub figures: Vec<OddFigure>,
}

#[derive(Debug, Clone, Serialize)]
pub struct OddFigure {
    pub figure: String,
    pub value: String,
    pub median: String,
    /// Robust standard deviations from the median; `None` for a verdict.
    pub deviation: Option<f64>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Comparison {
    pub runs: Vec<String>,
    pub tolerances: Tolerances,
    /// Fleet mode's threshold in robust standard deviations; `None` in pairwise mode.
    pub k: Option<f64>,
    pub rows: Vec<Row>,
    /// Fleet mode: runs with odd figures, the most odd first.
    pub odd_ones_out: Vec<OddRun>,
    /// Per run, the conditions its summary says to check (another process on the GPU, clocks
    /// held down, a clock above NVML's maximum): a cause beside the figures it moved.
    pub conditions: Vec<Vec<String>>,
}

impl Row {
    /// What NVML saw where run `run`'s figure came from a throttled suite.
    pub fn throttled_in(&self, run: usize) -> Option<&str> {
        self.throttled
            .iter()
            .find(|(i, _)| *i == run)
            .map(|(_, what)| what.as_str())
    }
}

impl Comparison {
    pub fn flagged(&self) -> usize {
        self.rows.iter().filter(|r| r.flag.is_some()).count()
    }
}

/// Every figure of every run, in first-seen order, compared against the first run, or as a
/// fleet when `k` is given.
pub fn compare(
    runs: &[String],
    summaries: &[Summary],
    tolerances: &Tolerances,
    k: Option<f64>,
) -> Comparison {
    // Figures are paired by key ([`crate::report::keys`]); a row is shown in the words of the
    // run that has it first.
    let mut keys: Vec<(&str, &Figure)> = Vec::new();
    for s in summaries {
        for f in &s.figures {
            if !keys.iter().any(|(key, _)| *key == f.key) {
                keys.push((&f.key, f));
            }
        }
    }
    let mut rows = Vec::new();
    for (key, first) in keys {
        let (section, quantity) = (first.section.clone(), first.quantity.clone());
        let cells: Vec<Option<Figure>> = summaries
            .iter()
            .map(|s| s.figures.iter().find(|f| f.key == key).cloned())
            .collect();
        let unit = cells
            .iter()
            .flatten()
            .next()
            .map_or(String::new(), |f| f.unit.clone());
        let throttled = cells
            .iter()
            .zip(summaries)
            .enumerate()
            .filter_map(|(i, (cell, summary))| {
                Some((
                    i,
                    crate::report::throttling::of(summary, cell.as_ref()?)?.to_string(),
                ))
            })
            .collect();
        let (flag, fleet) = match k {
            None => {
                let flag = cells[0].as_ref().and_then(|reference| {
                    cells[1..]
                        .iter()
                        .flatten()
                        .find_map(|f| differs(reference, f, tolerances))
                });
                (flag, None)
            }
            Some(k) => (None, Some(fleet_row(&cells, tolerances.of(&unit), k))),
        };
        rows.push(Row {
            section,
            quantity,
            unit,
            cells,
            flag,
            fleet,
            throttled,
        });
    }
    let odd_ones_out = odd_ones_out(runs, &rows);
    Comparison {
        runs: runs.to_vec(),
        tolerances: tolerances.clone(),
        k,
        rows,
        odd_ones_out,
        conditions: summaries
            .iter()
            .map(|s| {
                s.conditions
                    .iter()
                    .filter(|c| !c.ok)
                    .map(|c| format!("{}: {}", c.what, c.found))
                    .collect()
            })
            .collect(),
    }
}

fn fleet_row(cells: &[Option<Figure>], tolerance: f64, k: f64) -> FleetRow {
    // As in pairwise mode, what a run calls unresolved (a low confidence, not identifiable,
    // uncalibrated, not repeated) is shown but never odd.
    let settled = |i: usize| cells[i].as_ref().is_some_and(|f| !f.is_unresolved());
    let verdicts: Vec<(usize, String)> = cells
        .iter()
        .enumerate()
        .filter(|&(i, _)| settled(i))
        .filter_map(|(i, c)| c.as_ref()?.text.as_ref().map(|t| (i, words(t))))
        .collect();
    if !verdicts.is_empty() {
        // The most common wording; a tie has no majority, so nothing is odd.
        let mut counts: Vec<(&String, usize)> = Vec::new();
        for (_, v) in &verdicts {
            match counts.iter_mut().find(|(w, _)| *w == v) {
                Some((_, n)) => *n += 1,
                None => counts.push((v, 1)),
            }
        }
        counts.sort_by_key(|c| std::cmp::Reverse(c.1));
        let majority = match counts.as_slice() {
            [(w, n), rest @ ..] if rest.first().is_none_or(|(_, m)| m < n) => Some((*w).clone()),
            _ => None,
        };
        let odd = match &majority {
            Some(m) => verdicts
                .iter()
                .filter(|(_, v)| v != m)
                .map(|&(i, _)| (i, None))
                .collect(),
            None => Vec::new(),
        };
        return FleetRow {
            median: None,
            mad: None,
            common_verdict: majority,
            odd,
        };
    }
    let values: Vec<(usize, f64)> = cells
        .iter()
        .enumerate()
        .filter_map(|(i, c)| c.as_ref().and_then(|f| f.value).map(|v| (i, v)))
        .filter(|(_, v)| v.is_finite())
        .collect();
    if values.len() < 3 {
        return FleetRow {
            median: None,
            mad: None,
            common_verdict: None,
            odd: Vec::new(),
        };
    }
    let mut sorted: Vec<f64> = values.iter().map(|&(_, v)| v).collect();
    sorted.sort_by(f64::total_cmp);
    let m = median_of_sorted(&sorted);
    let mut deviations: Vec<f64> = sorted.iter().map(|v| (v - m).abs()).collect();
    deviations.sort_by(f64::total_cmp);
    let mad = median_of_sorted(&deviations);
    let sigma = 1.4826 * mad;
    let odd = values
        .iter()
        .filter_map(|&(i, v)| {
            let off = (v - m).abs();
            let beyond_spread = off > k * sigma;
            let beyond_tolerance = off > tolerance * m.abs();
            (beyond_spread && beyond_tolerance && settled(i))
                .then_some((i, (sigma > 0.0).then(|| (v - m) / sigma)))
        })
        .collect();
    FleetRow {
        median: Some(m),
        mad: Some(mad),
        common_verdict: None,
        odd,
    }
}

fn odd_ones_out(runs: &[String], rows: &[Row]) -> Vec<OddRun> {
    let mut out: Vec<OddRun> = Vec::new();
    for row in rows {
        let Some(fleet) = &row.fleet else { continue };
        for &(i, deviation) in &fleet.odd {
            let Some(figure) = &row.cells[i] else {
                continue;
            };
            let entry = OddFigure {
                figure: format!("{}: {}", row.section, row.quantity),
                value: figure.value_text(),
                median: fleet.centre(&row.unit).unwrap_or_default(),
                deviation,
            };
            match out.iter_mut().find(|o| o.run == runs[i]) {
                Some(o) => o.figures.push(entry),
                None => out.push(OddRun {
                    run: runs[i].clone(),
                    figures: vec![entry],
                }),
            }
        }
    }
    out.sort_by_key(|o| std::cmp::Reverse(o.figures.len()));
    out
}

#[cfg(test)]
mod tests;
