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
    /// ([`crate::report::throttling`]), up to its first part judged apart.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub throttled: Option<String>,
    /// Parts of the suite's run judged apart (`metadata.json`'s `nvml.parts`): the files
    /// each measured, and what NVML saw where the clocks were held down during it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub parts: Vec<PartThrottling>,
    /// Which other process used the GPU while the suite measured, where one did
    /// ([`crate::gpu::conditions`]); every figure of the suite is then unresolved.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shared: Option<String>,
}

/// A part of a suite's run judged apart for throttling ([`SuiteTiming::parts`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PartThrottling {
    pub files: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub throttled: Option<String>,
}

impl SuiteTiming {
    /// What NVML saw of the clocks while the suite measured what it wrote to `file`: the
    /// part's judgement where a part judged apart measured it, else the suite's.
    pub fn throttled_for(&self, file: &str) -> Option<&str> {
        match self
            .parts
            .iter()
            .find(|p| p.files.iter().any(|f| f == file))
        {
            Some(part) => part.throttled.as_deref(),
            None => self.throttled.as_deref(),
        }
    }

    /// Each throttled stretch of the suite's run: `(None, what)` for the run up to its first
    /// part, `(Some(files), what)` for a part.
    pub fn throttled_stretches(&self) -> Vec<(Option<String>, &str)> {
        self.throttled
            .as_deref()
            .map(|t| (None, t))
            .into_iter()
            .chain(
                self.parts
                    .iter()
                    .filter_map(|p| Some((Some(p.files.join(", ")), p.throttled.as_deref()?))),
            )
            .collect()
    }

    /// [`SuiteTiming::throttled_stretches`] named for a reader: the suite, and a part's files
    /// after it in brackets.
    pub fn throttled_named(&self) -> Vec<(String, &str)> {
        self.throttled_stretches()
            .into_iter()
            .map(|(files, what)| match files {
                Some(files) => (format!("{} ({files})", self.name), what),
                None => (self.name.clone(), what),
            })
            .collect()
    }
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

#[cfg(test)]
impl Summary {
    /// A summary of `figures` alone: no format, caption, conditions or suites.
    pub fn of(figures: Vec<Figure>) -> Summary {
        Summary {
            format: None,
            conditions: Vec::new(),
            caption: String::new(),
            figures,
            suites: Vec::new(),
            total_seconds: None,
        }
    }
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
