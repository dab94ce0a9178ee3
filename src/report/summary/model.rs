//! The summary as data: its figures, the suites' times and the caption (`summary.json`).
//! Below the summary's making and rendering, so that what reads a summary (the comparison,
//! the throttling notes) need not name them.

use serde::{Deserialize, Serialize};

use crate::report::figures::Figure;
use crate::report::metadata::TimeSplit;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SuiteTiming {
    pub name: String,
    pub status: String,
    pub seconds: Option<f64>,
    pub error: Option<String>,
    /// JIT / GPU / host / driver start, where the suite recorded them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_split: Option<TimeSplit>,
    /// What NVML saw where the clocks were held down while the suite ran
    /// ([`crate::report::throttling`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub throttled: Option<String>,
    /// Which other process used the GPU while the suite measured, where one did
    /// ([`crate::gpu::conditions`]); every figure of the suite is then unresolved.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shared: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// The run-directory format of the run summarised, where it recorded one
    /// ([`crate::report::formats`]); absent for runs written before formats were recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub format: Option<u32>,
    pub caption: String,
    /// Each written with a `status` of its own, "figure" or "unresolved"
    /// ([`Figure::is_unresolved`]), so that a script reading `summary.json` tells them apart
    /// as the rendered tables do; read back by it ([`read_with_status`]).
    #[serde(serialize_with = "with_status", deserialize_with = "read_with_status")]
    pub figures: Vec<Figure>,
    pub suites: Vec<SuiteTiming>,
    pub total_seconds: Option<f64>,
    /// What the run found of the GPU's other users and state (report/conditions.rs);
    /// empty for runs that recorded none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<ConditionLine>,
}

fn with_status<S: serde::Serializer>(figures: &[Figure], out: S) -> Result<S::Ok, S::Error> {
    #[derive(Serialize)]
    struct WithStatus<'a> {
        #[serde(flatten)]
        figure: &'a Figure,
        status: &'static str,
    }
    out.collect_seq(figures.iter().map(|figure| WithStatus {
        figure,
        status: if figure.is_unresolved() {
            "unresolved"
        } else {
            "figure"
        },
    }))
}

/// A figure as `summary.json` holds it: the figure and the status [`with_status`] wrote.
#[derive(Deserialize)]
struct SavedSummaryFigure {
    #[serde(flatten)]
    figure: Figure,
    #[serde(default)]
    status: Option<String>,
}

/// The figures of a `summary.json` of any version: one written "unresolved" without its
/// typed `unresolved` (a summary made before every status was typed), or without a `status`
/// at all, takes the inference's standing its words state ([`Figure::migrate_standing`]).
fn read_with_status<'de, D: serde::Deserializer<'de>>(input: D) -> Result<Vec<Figure>, D::Error> {
    let figures: Vec<SavedSummaryFigure> = Deserialize::deserialize(input)?;
    Ok(figures
        .into_iter()
        .map(|SavedSummaryFigure { mut figure, status }| {
            if status.as_deref() != Some("figure") && figure.unresolved.is_none() {
                figure.migrate_standing();
            }
            figure
        })
        .collect())
}

impl Summary {
    /// The GPU's name, as the caption starts with it.
    pub fn gpu(&self) -> &str {
        self.caption.split(" (CC").next().unwrap_or("")
    }
}

/// What gpubench reads of `all.json` (`app::all` writes it): the format, each suite's
/// outcome and time, the run's total.
#[derive(Debug, Deserialize)]
pub struct AllManifest {
    /// Absent in runs written before formats were recorded.
    pub format: Option<u32>,
    #[serde(default)]
    pub suites: Vec<SuiteTiming>,
    pub total_seconds: Option<f64>,
}

/// One line of the block: what was checked, what was found, and whether it is as a
/// measurement needs it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ConditionLine {
    pub what: String,
    pub found: String,
    pub ok: bool,
}
