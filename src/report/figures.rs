//! The figures a suite contributes to the architecture summary, typed: each suite derives them
//! from its own JSON files (read back as the types that wrote them, never by string key), writes
//! them to `figures.json` when it finishes, and the summary and `compare` read them back as
//! [`Figure`]s.

use serde::{Deserialize, Serialize};

/// One inferred quantity with its uncertainty and the file it came from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(from = "SavedFigure")]
pub struct Figure {
    /// What the figure is, apart from its words ([`super::keys`]): what the core's tables,
    /// the roofline, the machine model, the export and `compare` find it by.
    pub key: String,
    pub section: String,
    pub quantity: String,
    pub value: Option<f64>,
    pub unit: String,
    /// The interval the value is uncertain within, where one is stated.
    pub low: Option<f64>,
    pub high: Option<f64>,
    /// What `low`–`high` is ("95% CI", "min-max") or the inference confidence.
    pub uncertainty: String,
    /// A verdict, for figures that are words.
    pub text: Option<String>,
    /// The file it was read from, relative to the suite's run directory (the summary puts the
    /// directory's name in front).
    pub source: String,
    /// One value per SM, indexed by `%smid` (null where that SM gave none), for a quantity
    /// that differs across the SMs; `value` then sums them up (a median, with the range in
    /// `low`–`high`). The summary, the machine model and the Accel-Sim export carry it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub per_sm: Option<Vec<Option<f64>>>,
    /// Why the figure is unresolved, where it is: a condition of the run (another process on
    /// the GPU, a rate above its physical ceiling, a reading that did not hold still), or its
    /// inference's own standing (a low or uncalibrated confidence, a parameter not identified,
    /// a repeat that did not confirm it). The status is this field and nothing else: no reader
    /// decides it from the figure's words. Files of format [`TYPED_STATUS`] on hold every
    /// status here; older ones held only the run's conditions, the inference's standing in
    /// the words, which the one migration table ([`Figure::standing_from_words`]) reads back.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unresolved: Option<Unresolved>,
    /// The confidence an inferred figure states, where it states one (its words say it too).
    /// Files of format [`TYPED_STATUS`] on hold it here; older ones only in the words, which
    /// the migration table reads.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub confidence: Option<Confidence>,
    /// What values its quantity can take ([`super::domain`]): set where the suite makes the
    /// figure; files written before it was recorded give it through the migration table.
    pub domain: Domain,
}

/// What values a figure's quantity can take, which [`super::domain`] holds it to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Domain {
    /// A median, a minimum, a plateau, a rate, a count, a size: never negative; a share of a
    /// whole at most all of it.
    #[default]
    Measured,
    /// A fitted coefficient (a slope, an intercept, a difference of fits, an estimate with its
    /// 95 % CI): any sign, any fraction.
    Fitted,
    /// A relative error in per cent: never negative, and it may exceed 100 %.
    RelativeError,
}

/// An inference's confidence: the probability that the value is right, calibrated (by the
/// calibration study, on simulated caches) or not (a heuristic no study stands behind).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Confidence {
    pub value: f64,
    pub calibrated: bool,
}

/// The first run-directory format whose files write every figure's status in `unresolved`
/// (an inference's standing too); a file of an older one is read through the migration table.
pub const TYPED_STATUS: u32 = 3;

/// A [`Figure`] as a file holds it (every format so far): a figure written before keys gets
/// its key from the migration table ([`super::keys::from_words`]). Its status is as written;
/// the reader of an older file adds what its words state ([`Figure::migrate_standing`]).
#[derive(Deserialize)]
struct SavedFigure {
    /// Absent in files written before keys: [`super::keys::of_saved`] gives it.
    key: Option<String>,
    section: String,
    quantity: String,
    value: Option<f64>,
    unit: String,
    low: Option<f64>,
    high: Option<f64>,
    uncertainty: String,
    text: Option<String>,
    source: String,
    per_sm: Option<Vec<Option<f64>>>,
    unresolved: Option<Unresolved>,
    confidence: Option<Confidence>,
    /// Absent in files written before domains were recorded: [`Domain::from_words`] gives it.
    domain: Option<Domain>,
}

impl From<SavedFigure> for Figure {
    fn from(saved: SavedFigure) -> Figure {
        let key = super::keys::of_saved(saved.key, &saved.section, &saved.quantity);
        let domain = saved
            .domain
            .unwrap_or_else(|| Domain::from_words(&saved.quantity, &saved.uncertainty));
        Figure {
            key,
            section: saved.section,
            quantity: saved.quantity,
            value: saved.value,
            unit: saved.unit,
            low: saved.low,
            high: saved.high,
            uncertainty: saved.uncertainty,
            text: saved.text,
            source: saved.source,
            per_sm: saved.per_sm,
            unresolved: saved.unresolved,
            confidence: saved.confidence,
            domain,
        }
    }
}

impl Domain {
    /// The migration table's part for domains: a figure's domain as the words of files
    /// written before domains were recorded state it (an estimate's `95% CI`, a fit's `fit`,
    /// a quantity that is an `error`). No other code reads a domain from a figure's words.
    fn from_words(quantity: &str, uncertainty: &str) -> Domain {
        if uncertainty.starts_with("95% CI") || uncertainty == "fit" {
            Domain::Fitted
        } else if quantity.contains("error") {
            Domain::RelativeError
        } else {
            Domain::Measured
        }
    }
}

/// A condition of the run, or of its data, that leaves a figure unresolved, and what it was.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Unresolved {
    pub reason: Reason,
    /// What was seen: the process, the ceiling and the clock it was made of.
    pub detail: String,
}

/// Why a figure is not a figure, where the run's conditions say so.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Reason {
    /// Another process used the GPU while the suite measured (or `--allow-shared`).
    SharedGpu,
    /// A rate above what the device can physically do: the timer or clock it was made of is
    /// wrong, not the GPU fast.
    AboveCeiling,
    /// A reading the noise between processes moves further than its data can pin down (a
    /// bandwidth that falls gradually has no one footprint where it falls).
    NotSteady,
    /// An inferred value stated at a confidence below [`LEAST_CONFIDENCE`].
    LowConfidence,
    /// A confidence, or a reading, that no calibration study stands behind (a step reading's
    /// heuristic, a translation reach, a one-step fit).
    Uncalibrated,
    /// A parameter the data do not identify (a geometry several models fit, a rise the sweep
    /// is too coarse for, an L2 partition split the SMs' walks blur).
    NotIdentifiable,
    /// A value the run's repeat did not confirm.
    DidNotRepeat,
}

impl Reason {
    /// The words the tables put before the detail.
    pub fn label(self) -> &'static str {
        match self {
            Reason::SharedGpu => "shared GPU",
            Reason::AboveCeiling => "above its physical ceiling",
            Reason::NotSteady => "not steady",
            Reason::LowConfidence => "low confidence",
            Reason::Uncalibrated => "uncalibrated",
            Reason::NotIdentifiable => "not identifiable",
            Reason::DidNotRepeat => "did not repeat",
        }
    }

    /// Whether the reason is the inference's own standing, which the figure's words already
    /// state (its confidence, "uncalibrated", "not identifiable", "did not repeat"), rather
    /// than a condition of the run its words are led by.
    pub fn inferred(self) -> bool {
        matches!(
            self,
            Reason::LowConfidence
                | Reason::Uncalibrated
                | Reason::NotIdentifiable
                | Reason::DidNotRepeat
        )
    }
}

/// Below this confidence an inferred figure (a level read from a fit, `confidence 0.12`) says
/// itself that another run may well read another value: it is unresolved, shown but not
/// flagged by `compare`.
pub const LEAST_CONFIDENCE: f64 = 0.5;

impl Figure {
    /// The calibrated confidence the figure states, if it states one.
    pub fn stated_confidence(&self) -> Option<f64> {
        self.confidence.filter(|c| c.calibrated).map(|c| c.value)
    }

    /// The confidence the figure's words state, as every format before [`TYPED_STATUS`]
    /// wrote it: `confidence 0.84` (or `confidence 0.84; off by up to …`), calibrated, or
    /// `uncalibrated confidence 0.50 (…)`. Part of the migration table.
    fn confidence_in_words(&self) -> Option<Confidence> {
        if let Some(rest) = self.uncertainty.strip_prefix("confidence ") {
            let value = rest.split(';').next()?.trim().parse().ok()?;
            Some(Confidence {
                value,
                calibrated: true,
            })
        } else {
            let rest = self.uncertainty.strip_prefix("uncalibrated confidence ")?;
            let value = rest.split_whitespace().next()?.parse().ok()?;
            Some(Confidence {
                value,
                calibrated: false,
            })
        }
    }

    /// Whether the figure is one the run could not settle ([`Figure::unresolved`]).
    pub fn is_unresolved(&self) -> bool {
        self.unresolved.is_some()
    }

    /// Leaves the figure unresolved for an inference's own `reason`, which its words already
    /// state (they are left as they are). A figure already unresolved keeps its first reason.
    pub fn settle(&mut self, reason: Reason) {
        if self.unresolved.is_none() {
            self.unresolved = Some(Unresolved {
                reason,
                detail: String::new(),
            });
        }
    }

    /// For a figure read from a file older than [`TYPED_STATUS`], which wrote an inference's
    /// confidence and standing in words only: takes the confidence its words state, and
    /// leaves it unresolved for the standing they state.
    pub fn migrate_standing(&mut self) {
        if self.confidence.is_none() {
            self.confidence = self.confidence_in_words();
        }
        if let Some(reason) = self.standing_from_words() {
            self.settle(reason);
        }
    }

    /// The migration table: the inference's standing as the words of every file format before
    /// [`TYPED_STATUS`] state it. No other code reads a status from a figure's words; the
    /// suites set it where they make the words.
    fn standing_from_words(&self) -> Option<Reason> {
        if self
            .stated_confidence()
            .is_some_and(|c| c < LEAST_CONFIDENCE)
        {
            Some(Reason::LowConfidence)
        } else if self.uncertainty.starts_with("uncalibrated") {
            Some(Reason::Uncalibrated)
        } else if self.uncertainty.starts_with("did not repeat") {
            Some(Reason::DidNotRepeat)
        } else if self.quantity.contains("not identifiable") {
            Some(Reason::NotIdentifiable)
        } else {
            None
        }
    }

    /// Leaves the figure unresolved for `reason`, its uncertainty led by the reason and
    /// `detail` (as the tables show it). A figure already marked for a condition keeps its
    /// first; a condition outranks an inference's own standing (its words keep saying that).
    pub fn mark_unresolved(&mut self, reason: Reason, detail: &str) {
        if self
            .unresolved
            .as_ref()
            .is_some_and(|u| !u.reason.inferred())
        {
            return;
        }
        let mark = format!("{}: {detail}", reason.label());
        self.uncertainty = if self.uncertainty.is_empty() {
            mark
        } else {
            format!("{mark}; {}", self.uncertainty)
        };
        self.unresolved = Some(Unresolved {
            reason,
            detail: detail.to_string(),
        });
    }
}

// Physical ceilings (ceilings.rs makes them of the device): what a figure is held to.

/// How far above its ceiling a rate may read before it is refused as a figure: the error of a
/// rate timed over milliseconds by a timer of microsecond steps.
pub const TOLERANCE: f64 = 1e-3;

/// The most a quantity can physically be, and what it is made of (for the reason).
#[derive(Debug, Clone, PartialEq)]
pub struct Ceiling {
    pub value: f64,
    pub made_of: String,
}

/// Leaves `figure` unresolved where its value (or its interval's top, for a rate read as a
/// range) is above `ceiling` by more than [`TOLERANCE`].
pub fn hold(figure: &mut Figure, ceiling: &Ceiling) {
    let Some(value) = figure.value else { return };
    if value > ceiling.value * (1.0 + TOLERANCE) {
        let detail = format!(
            "{} {} is above {} {} = {}, which the device cannot pass",
            round(value),
            figure.unit,
            round(ceiling.value),
            figure.unit,
            ceiling.made_of
        );
        figure.mark_unresolved(Reason::AboveCeiling, &detail);
    }
}

fn round(x: f64) -> String {
    if x.abs() >= 100.0 {
        format!("{x:.1}")
    } else {
        format!("{x:.3}")
    }
}

#[cfg(test)]
impl Figure {
    /// A figure for tests: no interval, no verdict, from a stand-in file.
    pub fn sample(
        section: &str,
        quantity: &str,
        value: Option<f64>,
        unit: &str,
        uncertainty: &str,
    ) -> Figure {
        Figure {
            key: super::keys::from_words(section, quantity),
            section: section.into(),
            quantity: quantity.into(),
            value,
            unit: unit.into(),
            low: None,
            high: None,
            uncertainty: uncertainty.into(),
            text: None,
            source: "x".into(),
            per_sm: None,
            unresolved: None,
            confidence: None,
            domain: Domain::from_words(quantity, uncertainty),
        }
        .read_back()
    }

    /// The figure as an older file would give it back: its inference's standing read from its
    /// words by the migration table (for tests that write the words by hand).
    pub fn read_back(mut self) -> Figure {
        self.migrate_standing();
        self
    }
}

/// What `figures.json` holds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(from = "SavedFiguresFile")]
pub struct FiguresFile {
    /// The run-directory format of the gpubench that wrote it ([`super::formats`]).
    pub format: u32,
    pub suite: String,
    pub figures: Vec<Figure>,
}

impl FiguresFile {
    pub fn new(suite: &str, figures: Vec<Figure>) -> FiguresFile {
        FiguresFile {
            format: super::formats::CURRENT,
            suite: suite.to_string(),
            figures,
        }
    }
}

/// `figures.json` as any format wrote it: before [`TYPED_STATUS`] it named no format, and its
/// figures' inference standing is read from their words.
#[derive(Deserialize)]
struct SavedFiguresFile {
    format: Option<u32>,
    suite: String,
    figures: Vec<Figure>,
}

impl From<SavedFiguresFile> for FiguresFile {
    fn from(saved: SavedFiguresFile) -> FiguresFile {
        let format = saved.format.unwrap_or(super::formats::UNRECORDED);
        let mut figures = saved.figures;
        if format < TYPED_STATUS {
            figures.iter_mut().for_each(Figure::migrate_standing);
        }
        FiguresFile {
            format,
            suite: saved.suite,
            figures,
        }
    }
}

pub const FILE: &str = "figures.json";

/// Whether the suite directory `dir` kept only its figures: a `figures.json` beside its
/// `metadata.json` and none of the JSON results every suite writes (a repeat run is committed
/// so, to save space). Such a suite cannot be re-drawn, and its rows can only be read from
/// `figures.json`.
pub fn figures_only(dir: &std::path::Path) -> bool {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return false;
    };
    let json: Vec<String> = entries
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        // A gzipped result (`clock.json.gz`) is a result kept, as a plain one is.
        .filter(|name| name.ends_with(".json") || name.ends_with(".json.gz"))
        .collect();
    json.len() == 2 && json.iter().all(|n| n == FILE || n == "metadata.json")
}

/// A point estimate with its 95 % confidence interval, as `analysis::linear_fit` writes one.
#[derive(Debug, Clone, Copy, Default, Deserialize)]
#[serde(default)]
pub struct EstimateView {
    pub estimate: Option<f64>,
    pub ci95_low: Option<f64>,
    pub ci95_high: Option<f64>,
}

/// A sample's median with its range, as `analysis::stats::Summary` writes one.
#[derive(Debug, Clone, Copy, Default, Deserialize)]
#[serde(default)]
pub struct MedianView {
    pub min: Option<f64>,
    pub median: Option<f64>,
    pub max: Option<f64>,
}

/// "confidence 0.84": how an inferred figure states its confidence (empty without one).
pub fn confidence_label(confidence: Option<f64>) -> String {
    confidence.map_or(String::new(), |c| format!("confidence {c:.2}"))
}

/// [`confidence_label`] with how far the confidence may be off on a family of caches the
/// calibration study's table was not made from, where the run recorded that.
pub fn confidence_label_held_out(confidence: Option<f64>, held_out_gap: Option<f64>) -> String {
    match (confidence, held_out_gap) {
        (Some(c), Some(gap)) => format!(
            "confidence {c:.2}; off by up to {gap:.2} on a family of caches held out of the calibration study"
        ),
        _ => confidence_label(confidence),
    }
}

/// Builds one suite's figures, all in one section, from one source file at a time.
pub struct Rows {
    /// The suite, the first part of every key ([`super::keys`]).
    suite: &'static str,
    section: &'static str,
    source: String,
    figures: Vec<Figure>,
    /// The key [`Rows::key`] gave the next row.
    next_key: Option<String>,
    /// Whether the last call added a row (the one [`Rows::settle`] and its kin act on).
    added_last: bool,
}

impl Rows {
    pub fn new(suite: &'static str, section: &'static str, source: &str) -> Rows {
        Rows {
            suite,
            section,
            source: source.into(),
            figures: Vec::new(),
            next_key: None,
            added_last: false,
        }
    }

    /// The key of the next row (one the core reads, made by [`super::keys`]); a row given
    /// none is keyed by its suite and quantity ([`super::keys::plain`]).
    pub fn key(&mut self, key: String) -> &mut Rows {
        self.next_key = Some(key);
        self
    }

    /// The file the following figures come from.
    pub fn from(&mut self, source: &str) -> &mut Rows {
        self.source = source.into();
        self
    }

    pub fn finish(self) -> Vec<Figure> {
        self.figures
    }

    /// One figure, unless it has neither a value nor a verdict.
    fn add(
        &mut self,
        quantity: &str,
        value: Option<f64>,
        text: Option<&str>,
        unit: &str,
        interval: Option<(f64, f64)>,
        uncertainty: String,
    ) {
        let key = self.next_key.take();
        self.added_last = value.is_some() || text.is_some();
        if !self.added_last {
            return;
        }
        self.figures.push(Figure {
            key: key.unwrap_or_else(|| super::keys::plain(self.suite, quantity)),
            unresolved: None,
            confidence: None,
            section: self.section.into(),
            quantity: quantity.into(),
            value,
            unit: unit.into(),
            low: interval.map(|i| i.0),
            high: interval.map(|i| i.1),
            uncertainty,
            text: text.map(str::to_string),
            source: self.source.clone(),
            per_sm: None,
            domain: Domain::Measured,
        });
    }

    /// The row the last call added; none where it added none (a quantity with neither a
    /// value nor a verdict).
    fn added(&mut self) -> Option<&mut Figure> {
        if self.added_last {
            self.figures.last_mut()
        } else {
            None
        }
    }

    /// Gives the row added last its value per SM ([`Figure::per_sm`]).
    pub fn per_sm(&mut self, values: Vec<Option<f64>>) {
        if let Some(last) = self.added() {
            last.per_sm = Some(values);
        }
    }

    /// Holds the row added last to `ceiling` ([`hold`]); nothing where there is no ceiling.
    pub fn at_most(&mut self, ceiling: Option<&Ceiling>) {
        if let (Some(last), Some(ceiling)) = (self.added(), ceiling) {
            hold(last, ceiling);
        }
    }

    /// Gives the row added last the values its quantity can take (a row is
    /// [`Domain::Measured`] unless told).
    pub fn domain(&mut self, domain: Domain) {
        if let Some(last) = self.added() {
            last.domain = domain;
        }
    }

    /// Leaves the row added last unresolved for an inference's own `reason`, which its words
    /// state ([`Figure::settle`]).
    pub fn settle(&mut self, reason: Reason) {
        if let Some(last) = self.added() {
            last.settle(reason);
        }
    }

    /// States the confidence of the row added last (its words state it too, to two decimals:
    /// the label the caller gave it; the typed value is the one the words state).
    pub fn confidence(&mut self, confidence: Option<Confidence>) {
        if let Some(last) = self.added() {
            last.confidence = confidence.map(|c| Confidence {
                value: format!("{:.2}", c.value).parse().unwrap_or(c.value),
                ..c
            });
        }
    }

    /// Leaves the row added last unresolved for `reason`.
    pub fn unresolved(&mut self, reason: Reason, detail: &str) {
        if let Some(last) = self.added() {
            last.mark_unresolved(reason, detail);
        }
    }

    /// A value with `low`–`high` of kind `label` ("95% CI", "min-max"), where given.
    pub fn push(
        &mut self,
        quantity: &str,
        value: Option<f64>,
        unit: &str,
        interval: Option<(f64, f64, &str)>,
    ) {
        let label = interval.map_or(String::new(), |i| i.2.to_string());
        let bounds = interval.map(|i| (i.0, i.1));
        self.add(quantity, value, None, unit, bounds, label);
    }

    /// A value whose uncertainty is said in words.
    pub fn labelled(&mut self, quantity: &str, value: Option<f64>, unit: &str, label: String) {
        self.add(quantity, value, None, unit, None, label);
    }

    pub fn estimate(&mut self, quantity: &str, v: &EstimateView, unit: &str) {
        let interval = match (v.ci95_low, v.ci95_high) {
            (Some(l), Some(h)) => Some((l, h, "95% CI")),
            _ => None,
        };
        self.push(quantity, v.estimate, unit, interval);
        self.domain(Domain::Fitted);
    }

    /// The median with the range.
    pub fn median(&mut self, quantity: &str, v: &MedianView, unit: &str) {
        let interval = match (v.min, v.max) {
            (Some(l), Some(h)) => Some((l, h, "min-max")),
            _ => None,
        };
        self.push(quantity, v.median, unit, interval);
    }

    pub fn confident(
        &mut self,
        quantity: &str,
        value: Option<f64>,
        unit: &str,
        confidence: Option<f64>,
    ) {
        self.labelled(quantity, value, unit, confidence_label(confidence));
        self.confidence(confidence.map(|value| Confidence {
            value,
            calibrated: true,
        }));
        if confidence.is_some_and(|c| c < LEAST_CONFIDENCE) {
            self.settle(Reason::LowConfidence);
        }
    }

    pub fn text(&mut self, quantity: &str, text: Option<&str>) {
        self.add(quantity, None, text, "", None, String::new());
    }

    /// A verdict in words with the number it was reached from (`value` in `unit`): the
    /// tables show the words, and the core reads the number (a share, a ratio) where it
    /// needs the verdict, never the words.
    pub fn verdict(&mut self, quantity: &str, value: f64, unit: &str, text: &str) {
        self.add(quantity, Some(value), Some(text), unit, None, String::new());
    }

    /// A verdict whose standing is said in words (`"uncalibrated …"`).
    pub fn text_labelled(&mut self, quantity: &str, text: Option<&str>, label: String) {
        self.add(quantity, None, text, "", None, label);
    }
}
