//! The summary's rows of a cache run (and, re-exported, the text form of `analyze cache`).

pub use super::text::render_text;

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::l2_partitions::Partitions;
use super::measure::Unresolved;
use crate::analysis::cache_inference::{self, Capacity, RiseExtent};
use crate::suites::cache::analysis::conflict::ConflictReport;
use crate::suites::cache::analysis::{granularity::Granularity, per_load::FootprintLoads};
use crate::analysis::sass::KernelSass;
use crate::report::figures::Reason;

/// Where the climb to the next level runs, read off the curve. It repeats where the size's
/// model does not (the H100's L1 first misses at 217 KiB and stays 90 % of the way up from
/// 249-253 KiB in every committed run), and its top is what tools that report the end of the
/// climb call the size. A reading whose bounds (the sweep point before it, and the threshold
/// moved by two σ of noise) span more than a tenth of it is not stated; neither is one of a
/// level read from its steps alone (a TLB's few-cycle steps).
fn rise_figures(
    label: &str,
    readings: [(&str, f64, [f64; 2]); 2],
    basis: Option<&str>,
    r: &mut crate::report::figures::Rows,
) {
    for (share, value, [low, high]) in readings {
        let quantity = format!("{label} rise to the next level, {share} reached at");
        let steps_only = basis == Some("steps");
        if steps_only || high - low > 0.1 * value {
            let why = if steps_only {
                "a level read from its steps alone"
            } else {
                "the sweep's spacing and two σ of noise leave it this wide"
            };
            let (low, high) = (
                crate::report::summary::format_value(low, "bytes"),
                crate::report::summary::format_value(high, "bytes"),
            );
            let quantity = format!("{quantity}: not identifiable from this sweep");
            r.text(
                &quantity,
                Some(&format!("somewhere from {low} to {high} ({why})")),
            );
            r.settle(Reason::NotIdentifiable);
        } else {
            r.push(
                &quantity,
                Some(value),
                "bytes",
                Some((
                    low,
                    high,
                    "curve, no model; from the sweep point before to 2σ of noise past",
                )),
            );
        }
    }
}

/// The quantity of a level's capacity read without a model ("global: level 1 capacity").
pub const CAPACITY: &str = "capacity";

/// What a capacity row's value and interval are: the value where the first miss happens, the
/// interval the calibration study's bound for the true size.
fn capacity_label(coverage: f64) -> String {
    format!(
        "value: largest footprint with no miss; interval holding the true size in {:.0} % of caches of every simulated family",
        100.0 * coverage
    )
}

/// `cache.json`: what a cache run read of its sweep and measured beside it. The run
/// (`measure`) writes it; the summary ([`figures`]) and the redraw read it back as this type.
/// What a run of an older format lacks is `None` (or empty).
#[derive(Debug, Serialize, Deserialize)]
pub struct CacheFile {
    /// One sweep per carveout asked for, where more than one was (`carveout.csv`'s rows).
    pub carveout: Option<Vec<CarveoutRow>>,
    pub conflict: Option<ConflictReport>,
    pub device_attributes: DeviceAttributes,
    pub fetch_granularity: Option<FetchGranularity>,
    pub index_chain: Option<IndexChain>,
    /// What the L2 partition probe's timed window executes, where the probe ran.
    pub l2_partition_timed_window: Option<TimedLoop>,
    pub l2_partitions: Option<Partitions>,
    /// `--per-load`'s summary, one row per footprint (the loads are in `loads.csv`).
    pub per_load: Option<Vec<FootprintLoads>>,
    pub report: SavedReport,
    pub space: String,
    /// What the shared-storage probe loads with, where it ran (the global space).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub storage_probe_loads: Option<super::storage::ProbeLoads>,
    /// Why the shared-storage probe did not run where it would have (the device refused what
    /// it needs: texture objects on GPGPU-Sim).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub storage_probe_skipped: Option<String>,
    pub sweep: SweepRecord,
    pub timed_loop: Option<TimedLoop>,
    pub tlb: Option<TlbSummary>,
    pub tlb_strides: Option<Vec<TlbStride>>,
    #[serde(default)]
    pub unresolved: Vec<Unresolved>,
}

/// What the driver reports of the caches beside the sweep (`cache.json`'s
/// `device_attributes`).
#[derive(Debug, Serialize, Deserialize)]
pub struct DeviceAttributes {
    pub global_memory_bytes: u64,
    pub l2_cache_bytes: i32,
    pub shared_memory_per_multiprocessor_bytes: i32,
}

/// The inference's levels as `cache.json` keeps them (`cache_inference::CacheReport`,
/// written by the run): the summary's rows and the redraw's marks are read from them.
#[derive(Debug, Serialize, Deserialize)]
pub struct SavedReport {
    pub jump_threshold_cycles: f64,
    pub levels: Vec<SavedLevel>,
    /// Why no level could be read, where none was.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    pub plateau_tolerance_cycles: f64,
    pub stride_bytes: u64,
}

/// One level as `cache.json` keeps it (`cache_inference::CacheLevel`; its fields' meanings
/// are documented there). What runs of an older format lack is `None`.
#[derive(Debug, Serialize, Deserialize)]
pub struct SavedLevel {
    pub basis: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capacity: Option<Capacity>,
    pub confidence: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fetch_bytes: Option<u64>,
    /// The model fit of the rise as `analysis::cache_fit` states it (its shape has grown with
    /// the fits), kept for the reader of the file: no derivation reads it back.
    pub fit: Option<serde_json::Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub held_out_gap: Option<f64>,
    pub latency_cycles: f64,
    pub line_bytes: Option<u64>,
    pub notes: Vec<String>,
    pub raw_confidence: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rise: Option<RiseExtent>,
    pub sets: Option<u64>,
    pub size_bytes: Option<u64>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub size_is_interval: bool,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unidentified: Vec<String>,
    pub way_bytes: Option<u64>,
    pub ways: Option<u64>,
}

impl SavedReport {
    /// The report as the run writes it.
    pub fn of(report: &cache_inference::CacheReport) -> anyhow::Result<SavedReport> {
        let levels = report
            .levels
            .iter()
            .map(|level| {
                Ok(SavedLevel {
                    basis: Some(level.basis.to_string()),
                    capacity: level.capacity,
                    confidence: level.confidence,
                    fetch_bytes: level.fetch_bytes,
                    fit: level.fit.as_ref().map(serde_json::to_value).transpose()?,
                    held_out_gap: level.held_out_gap,
                    latency_cycles: level.latency_cycles,
                    line_bytes: level.line_bytes,
                    notes: level.notes.clone(),
                    raw_confidence: Some(level.raw_confidence),
                    rise: level.rise,
                    sets: level.sets,
                    size_bytes: level.size_bytes,
                    size_is_interval: level.size_is_interval,
                    unidentified: level.unidentified.clone(),
                    way_bytes: level.way_bytes,
                    ways: level.ways,
                })
            })
            .collect::<anyhow::Result<_>>()?;
        Ok(SavedReport {
            jump_threshold_cycles: report.jump_threshold_cycles,
            levels,
            notes: report.notes.clone(),
            plateau_tolerance_cycles: report.plateau_tolerance_cycles,
            stride_bytes: report.stride_bytes,
        })
    }
}

/// What the sweep cost (`cache.json`'s `sweep`): the redraw checks `chase.csv` against
/// `points`.
#[derive(Debug, Serialize, Deserialize)]
pub struct SweepRecord {
    /// What the instruction space compiled; none for the other spaces.
    pub generated_kernels: Option<GeneratedKernels>,
    pub launches: usize,
    pub points: usize,
    pub seconds: f64,
}

/// The instruction space's kernels: how many the driver compiled and how many `all` had.
#[derive(Debug, Serialize, Deserialize)]
pub struct GeneratedKernels {
    /// How their code was checked (runs before it was recorded: absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code_checked: Option<String>,
    pub compiled_by_the_driver: usize,
    pub prebuilt_by_all: usize,
    /// What runs before `code_checked` checked of `all`'s SASS; no run writes it now.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prebuilt_sass_checked: Option<String>,
}

/// What a kernel's timed region executes, read from its SASS (`timed_loop`, and
/// `l2_partition_timed_window` for the partition probe): absent fields are what was not read
/// (a generated kernel, a module not embedded, a kernel the SASS lacked).
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct TimedLoop {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arch: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub control_instructions: Option<BTreeMap<String, usize>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expected_loads: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kernel: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loads: Option<BTreeMap<String, usize>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub other_instructions: Option<BTreeMap<String, usize>>,
    /// "written to FILE", or why no SASS was read (not recorded for the partition probe).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<String>,
    /// "as expected: …", or "UNEXPECTED: …" where the loop loads otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verdict: Option<String>,
}

impl TimedLoop {
    /// What `kernel`'s timed region executes, compiled for `arch`.
    pub fn of(kernel: &KernelSass, arch: &str, status: Option<&str>) -> TimedLoop {
        TimedLoop {
            arch: Some(arch.to_string()),
            control_instructions: Some(kernel.timed_region_control.clone()),
            kernel: Some(kernel.kernel.clone()),
            loads: Some(kernel.timed_region_loads.clone()),
            other_instructions: Some(kernel.timed_region_other.clone()),
            status: status.map(str::to_string),
            ..TimedLoop::default()
        }
    }

    /// The loads it names, where it names any.
    fn named_loads(&self) -> Option<Vec<&str>> {
        let loads = self.loads.as_ref().filter(|l| !l.is_empty())?;
        Some(loads.keys().map(String::as_str).collect())
    }
}

/// The global chase with word indices beside the pointer chase (`index_chain`).
#[derive(Debug, Serialize, Deserialize)]
pub struct IndexChain {
    pub footprint_bytes: u64,
    pub index_chain_cycles: f64,
    pub level_1_latency_cycles: Option<f64>,
    pub overhead_cycles: f64,
    pub pointer_chain_cycles: f64,
}

/// The first level's stride sweep (`fetch_granularity`, points in `strides.csv`).
#[derive(Debug, Serialize, Deserialize)]
pub struct FetchGranularity {
    pub estimate: Option<Granularity>,
    pub footprint_bytes: u64,
    pub level: u32,
    pub strides: Vec<u64>,
}

/// The TLB space's levels read as reaches, and the page size (`tlb`, points in `pages.csv`).
#[derive(Debug, Serialize, Deserialize)]
pub struct TlbSummary {
    pub levels: Vec<TlbLevel>,
    pub page: Option<Granularity>,
}

#[derive(Debug, Serialize, Deserialize)]
pub struct TlbLevel {
    pub confidence: f64,
    /// The reach over the page size.
    pub entries: Option<u64>,
    pub latency_cycles: f64,
    pub reach_bytes: Option<u64>,
}

/// One further TLB stride's sweep (`tlb_strides`, points in `tlb_strides.csv`).
#[derive(Debug, Serialize, Deserialize)]
pub struct TlbStride {
    pub levels: Vec<TlbReach>,
    pub points: usize,
    pub stride_bytes: u64,
    pub verdict: String,
}

/// A level that sweep found: where its latency steps.
#[derive(Debug, Serialize, Deserialize)]
pub struct TlbReach {
    pub elements_at_reach: u64,
    pub latency_cycles: f64,
    pub reach_bytes: u64,
}

/// One carveout's sweep: a row of `carveout.csv` and of `cache.json`'s `carveout`.
#[derive(Debug, Serialize, Deserialize)]
pub struct CarveoutRow {
    pub carveout_percent: i32,
    pub requested_shared_bytes: i64,
    /// The largest footprint with no miss (the capacity reading's; runs before it was: the
    /// level's size).
    pub level_1_bytes: Option<u64>,
    pub level_1_latency_cycles: Option<f64>,
    pub sum_bytes: Option<i64>,
    /// The capacity interval of that sweep's L1 (`cache_inference::Capacity`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capacity_low_bytes: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capacity_high_bytes: Option<u64>,
}

fn rise_readings(rise: &RiseExtent) -> [(&'static str, f64, [f64; 2]); 2] {
    let f = |[low, high]: [u64; 2]| [low as f64, high as f64];
    [
        ("half", rise.half_bytes as f64, f(rise.half_range_bytes)),
        ("90 %", rise.ninety_bytes as f64, f(rise.ninety_range_bytes)),
    ]
}

/// One level's rows: its latency, its geometry at the confidence its basis gives (with the
/// standing that confidence leaves it), its capacity, its rise and what the sweep could not
/// identify.
fn level_rows(
    space: &str,
    (label, number): (&str, &str),
    level: &SavedLevel,
    r: &mut crate::report::figures::Rows,
) {
    use crate::report::keys::level as what;
    let key = |what| {
        crate::report::keys::Known::Memory {
            space,
            level: number,
            what,
        }
        .key()
    };
    let float = |value: Option<u64>| value.map(|v| v as f64);
    let c = Some(level.confidence);
    // The latency is a plateau's median, measured whatever the geometry: it carries no
    // geometry confidence.
    r.key(key(what::LATENCY)).labelled(
        &format!("{label} latency"),
        Some(level.latency_cycles),
        "cycles",
        c.map_or(String::new(), |_| "plateau median".into()),
    );
    // A level read from its steps alone (no model could be fitted: a TLB swept at strides
    // of megabytes) states a heuristic the calibration study never saw.
    let steps_only = level.basis.as_deref() == Some("steps");
    let geometry_label = if steps_only {
        uncalibrated(c)
    } else {
        crate::report::figures::confidence_label_held_out(c, level.held_out_gap)
    };
    // The geometry rows' confidence and standing, as their words state them.
    let confidence = c.map(|value| crate::report::figures::Confidence {
        value,
        calibrated: !steps_only,
    });
    let standing = match c {
        Some(_) if steps_only => Some(Reason::Uncalibrated),
        Some(c) if c < crate::report::figures::LEAST_CONFIDENCE => Some(Reason::LowConfidence),
        _ => None,
    };
    // A level with no geometry behind a point size states the capacity interval, at that
    // interval's confidence: the size row carries it.
    let size_interval = level
        .capacity
        .as_ref()
        .filter(|_| level.size_is_interval)
        .map(|c| (c.low_bytes as f64, c.high_bytes as f64));
    if let Some((low, high)) = size_interval {
        let claim = format!(
            "{geometry_label}; stated as the capacity interval: no line or way count stands behind a point"
        );
        r.key(key(what::SIZE)).push(
            &format!("{label} size"),
            float(level.size_bytes),
            "bytes",
            Some((low, high, &claim)),
        );
        r.confidence(confidence);
        if let Some(standing) = standing {
            r.settle(standing);
        }
    }
    let size = float(level.size_bytes).filter(|_| size_interval.is_none());
    for (words, value, unit, keyed) in [
        ("size", size, "bytes", Some(what::SIZE)),
        ("line", float(level.line_bytes), "bytes", Some(what::LINE)),
        ("fetch per miss", float(level.fetch_bytes), "bytes", None),
        ("ways", float(level.ways), "", Some(what::WAYS)),
        ("sets", float(level.sets), "", Some(what::SETS)),
    ] {
        if let Some(what) = keyed {
            r.key(key(what));
        }
        r.labelled(
            &format!("{label} {words}"),
            value,
            unit,
            geometry_label.clone(),
        );
        r.confidence(confidence);
        if let Some(standing) = standing {
            r.settle(standing);
        }
    }
    if let Some(capacity) = &level.capacity {
        // The study's caches step by a miss's latency; a TLB's few-cycle steps are not
        // among them, and its reach moved between H200 runs (464 and 12 MiB).
        let label_text = if space == "tlb" {
            "uncalibrated: a translation reach, which the capacity study did not simulate; value: largest footprint with no miss".to_string()
        } else {
            capacity_label(capacity.coverage)
        };
        r.key(key(what::CAPACITY)).push(
            &format!("{label} {CAPACITY}"),
            Some(capacity.hits_up_to_bytes as f64),
            "bytes",
            Some((
                capacity.low_bytes as f64,
                capacity.high_bytes as f64,
                &label_text,
            )),
        );
        if space == "tlb" {
            r.settle(Reason::Uncalibrated);
        }
    }
    if let Some(rise) = &level.rise {
        rise_figures(label, rise_readings(rise), level.basis.as_deref(), r);
    }
    if !level.unidentified.is_empty() {
        let quantity = format!("{label} geometry not identifiable from this sweep");
        r.text(&quantity, Some(&level.unidentified.join("; ")));
        r.settle(Reason::NotIdentifiable);
    }
}

/// The summary's memory-hierarchy rows of one cache run: every level's latency and geometry
/// with its confidence, the timed loop's load instruction, unresolved rises, the conflict
/// experiment, the index-chain overhead, the fetch granularity and the TLB.
pub fn figures(dir: &std::path::Path) -> anyhow::Result<Vec<crate::report::figures::Figure>> {
    let cache: CacheFile = crate::report::saved::read_json(dir, "cache.json")?;
    let space = &cache.space;
    let mut r = crate::report::figures::Rows::new("cache", "Memory hierarchy", "cache.json");
    let count = cache.report.levels.len();
    for (i, level) in cache.report.levels.iter().enumerate() {
        let (label, number) = if i + 1 == count && level.size_bytes.is_none() {
            (
                format!("{space}: slowest level"),
                crate::report::keys::BEYOND.to_string(),
            )
        } else {
            (format!("{space}: level {}", i + 1), (i + 1).to_string())
        };
        level_rows(space, (&label, &number), level, &mut r);
    }
    // One sweep per carveout the suite was asked for (`--carveout`, in `all`: 0, 50, 100 %).
    for c in cache.carveout.iter().flatten() {
        let asked = crate::report::summary::format_value(c.requested_shared_bytes as f64, "bytes");
        let interval = c.capacity_low_bytes.zip(c.capacity_high_bytes).map(|(low, high)| {
            (
                low as f64,
                high as f64,
                "capacity interval, as for the level",
            )
        });
        r.push(
            &format!(
                "{space}: level 1 with a {:.0} % shared carveout ({asked} of shared memory asked): no miss up to",
                c.carveout_percent
            ),
            c.level_1_bytes.map(|b| b as f64),
            "bytes",
            interval,
        );
    }
    if let Some((timed, loads)) = cache
        .timed_loop
        .as_ref()
        .and_then(|t| Some((t, t.named_loads()?)))
    {
        let verdict = timed.verdict.as_deref().unwrap_or_default();
        let flag = if verdict.starts_with("UNEXPECTED") {
            " (UNEXPECTED)"
        } else {
            ""
        };
        r.key(crate::report::keys::Known::Load { space }.key()).text(
            &format!("{space}: timed-loop load instruction (SASS)"),
            Some(&format!("{}{flag}", loads.join(", "))),
        );
    }
    for gap in &cache.unresolved {
        r.text(
            &format!(
                "{space}: unresolved from {} B to {} B",
                gap.from_bytes, gap.to_bytes
            ),
            Some(&gap.why),
        );
    }
    // A run whose --max-bytes left no further stride swept none, and wrote no tlb_strides.csv.
    if let Some(strides) = cache.tlb_strides.as_ref().filter(|s| !s.is_empty()) {
        tlb_stride_figures(dir, strides.iter().map(|s| s.stride_bytes), &mut r)?;
    }
    let conflict = cache.conflict.as_ref();
    if conflict.is_none_or(|c| c.ways.is_none()) {
        r.text(
            &format!("{space}: level 1 conflict experiment"),
            conflict.map(|c| c.verdict.as_str()),
        );
    }
    use crate::report::keys::level::{CONFLICT_WAY_SIZE, CONFLICT_WAYS, FETCH_GRANULARITY};
    let first = |what| {
        crate::report::keys::Known::Memory {
            space,
            level: "1",
            what,
        }
        .key()
    };
    r.key(first(CONFLICT_WAYS)).push(
        &format!("{space}: level 1 ways (conflict experiment)"),
        conflict.and_then(|c| c.ways).map(|w| w as f64),
        "",
        None,
    );
    r.key(first(CONFLICT_WAY_SIZE)).push(
        &format!("{space}: level 1 way size (conflict experiment)"),
        conflict.and_then(|c| c.way_bytes).map(|b| b as f64),
        "bytes",
        None,
    );
    r.key(crate::report::keys::Known::IndexChain { space }.key()).push(
        &format!("{space}: index-chain overhead per load"),
        cache.index_chain.map(|c| c.overhead_cycles),
        "cycles",
        None,
    );
    let granularity = cache.fetch_granularity.and_then(|g| g.estimate);
    r.key(first(FETCH_GRANULARITY)).confident(
        &format!("{space}: level 1 fetch granularity (stride sweep)"),
        granularity.as_ref().map(|g| g.bytes as f64),
        "bytes",
        granularity.as_ref().map(|g| g.confidence),
    );
    if let Some(partitions) = &cache.l2_partitions {
        super::partitions_report::figures(partitions, &mut r);
    }
    if let Some(loads) = cache
        .l2_partition_timed_window
        .as_ref()
        .and_then(TimedLoop::named_loads)
    {
        r.text(
            "L2 partition probe: timed load (SASS)",
            Some(&loads.join(", ")),
        );
    }
    if let Some(tlb) = &cache.tlb {
        tlb_figures(tlb, &mut r);
    }
    let mut figures = r.finish();
    figures.extend(super::storage::figures(
        dir,
        cache.storage_probe_loads.as_ref(),
        cache.storage_probe_skipped.as_deref(),
    )?);
    Ok(figures)
}

/// The TLB space's rows: each level's reach and the page size.
fn tlb_figures(tlb: &TlbSummary, r: &mut crate::report::figures::Rows) {
    // Read from steps a few cycles high at strides of megabytes, where no cache model
    // applies: the confidence is the step reading's heuristic, not a calibrated one.
    for (i, level) in tlb.levels.iter().enumerate() {
        let quantity = format!("TLB level {} reach", i + 1);
        r.labelled(
            &quantity,
            level.reach_bytes.map(|b| b as f64),
            "bytes",
            uncalibrated(Some(level.confidence)),
        );
        stated_uncalibrated(r, level.confidence);
    }
    // The page size is the knee of a rise of a few cycles (the TLB sweep's), whose
    // heuristic confidence no study calibrated: it read 16 KiB and 16 MiB, each at 0.50,
    // on two H100s the same day.
    r.labelled(
        "page size",
        tlb.page.as_ref().map(|p| p.bytes as f64),
        "bytes",
        tlb.page
            .as_ref()
            .map(|p| p.confidence)
            .map_or(String::new(), |c| {
                format!("uncalibrated confidence {c:.2} (the knee of a stride sweep a few cycles high)")
            }),
    );
    if let Some(page) = &tlb.page {
        stated_uncalibrated(r, page.confidence);
    }
}

/// The row added last states `confidence`, a heuristic no calibration stands behind: typed
/// so, and unresolved for it.
fn stated_uncalibrated(r: &mut crate::report::figures::Rows, confidence: f64) {
    r.confidence(Some(crate::report::figures::Confidence {
        value: confidence,
        calibrated: false,
    }));
    r.settle(Reason::Uncalibrated);
}

/// The label of a confidence no calibration stands behind: a step reading's heuristic.
fn uncalibrated(confidence: Option<f64>) -> String {
    confidence.map_or(String::new(), |c| {
        format!("uncalibrated confidence {c:.2} (steps read one by one)")
    })
}

/// The TLB stride sweeps' figures, from their points (`tlb_strides.csv`): per stride the element
/// count after which the chase's latency steps (the break of a one-step least-squares fit,
/// between the two measured counts around it), and the step's height in words.
fn tlb_stride_figures(
    dir: &std::path::Path,
    strides: impl Iterator<Item = u64>,
    r: &mut crate::report::figures::Rows,
) -> anyhow::Result<()> {
    // The points as the redraw reads them, the chase's own rows.
    let path = crate::report::saved::find(dir, "tlb_strides.csv").ok_or_else(|| {
        crate::error::UsageError::new(format!("{} has no tlb_strides.csv", dir.display()))
    })?;
    let points = super::measure::saved::load_saved(&path)?;
    r.from("tlb_strides.csv");
    for stride in strides {
        let at: Vec<(f64, f64)> = points
            .iter()
            .filter(|p| p.stride_bytes == stride && stride > 0)
            .map(|p| ((p.footprint_bytes / stride) as f64, p.cycles))
            .collect();
        let name = format!(
            "TLB at a {} stride",
            crate::report::summary::format_value(stride as f64, "bytes")
        );
        match crate::suites::cache::analysis::tlb::stride_step(&at) {
            Some(step) => {
                // A one-step fit that no calibration study covers, and one that two H100 runs
                // placed at 16 and at 6 elements (32 MiB stride): what the run saw, not a figure.
                let quantity = format!("{name}: elements before the latency steps");
                r.push(
                    &quantity,
                    Some(step.elements_before),
                    "",
                    Some((
                        step.elements_before,
                        step.elements_after,
                        "uncalibrated one-step fit, between points",
                    )),
                );
                r.settle(Reason::Uncalibrated);
                // The height moves between runs by more than any interval of one sweep states
                // (10.9 and 16.7 cycles on one H100 model): it is said, not compared.
                r.text(
                    &format!("{name}: step"),
                    Some(&format!(
                        "+{:.1} cycles (95% CI within this sweep {:.1} to {:.1}; points past it {:.1} to {:.1} above the lower level)",
                        step.step_cycles,
                        step.ci95_low,
                        step.ci95_high,
                        step.spread_low,
                        step.spread_high
                    )),
                );
            }
            None => {
                let quantity = format!("{name}: elements before the latency steps");
                r.text_labelled(
                    &quantity,
                    Some(&format!(
                        "no step the fit tells from the noise over {} points",
                        at.len()
                    )),
                    "uncalibrated one-step fit".into(),
                );
                r.settle(Reason::Uncalibrated);
            }
        }
    }
    r.from("cache.json");
    Ok(())
}

/// The chase's lines for the fleet page's overlays: cycles per load against footprint, one
/// line per stride the run chased at.
pub fn curves(
    space: &str,
    points: &[crate::analysis::cache_inference::ChasePoint],
) -> Vec<crate::report::overlay::Curve> {
    let mut strides: Vec<u64> = points.iter().map(|p| p.stride_bytes).collect();
    strides.sort_unstable();
    strides.dedup();
    strides
        .into_iter()
        .map(|stride| crate::report::overlay::Curve {
            name: format!(
                "{space}: cycles per load, {} stride",
                crate::report::plot::binary_bytes(stride as f64)
            ),
            x_label: "footprint".into(),
            y_label: "cycles per load".into(),
            x_bytes: true,
            points: points
                .iter()
                .filter(|p| p.stride_bytes == stride)
                .map(|p| (p.footprint_bytes as f64, p.cycles))
                .collect(),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A key with nothing in it: what a run of an older format lacks comes back as null or
    /// empty.
    fn without_empty(value: serde_json::Value) -> serde_json::Value {
        use serde_json::Value;
        match value {
            Value::Object(map) => Value::Object(
                map.into_iter()
                    .map(|(k, v)| (k, without_empty(v)))
                    .filter(|(_, v)| !v.is_null() && v != &Value::Array(Vec::new()))
                    .collect(),
            ),
            Value::Array(items) => Value::Array(items.into_iter().map(without_empty).collect()),
            other => other,
        }
    }

    /// Every committed cache.json (and every format fixture's) reads as the type the run
    /// writes, and writes back every value it holds.
    #[test]
    fn every_committed_cache_json_is_one_cache_file() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let mut files = Vec::new();
        let mut dirs = vec![root.join("results"), root.join("tests/fixtures")];
        while let Some(dir) = dirs.pop() {
            for entry in std::fs::read_dir(dir).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    dirs.push(path);
                } else if path.file_name() == Some("cache.json".as_ref()) {
                    files.push(path);
                }
            }
        }
        assert!(files.len() > 100, "{}", files.len());
        for path in files {
            let text = std::fs::read_to_string(&path).unwrap();
            let typed: CacheFile = serde_json::from_str(&text)
                .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            let held: serde_json::Value = serde_json::from_str(&text).unwrap();
            assert_eq!(
                without_empty(serde_json::to_value(&typed).unwrap()),
                without_empty(held),
                "{}",
                path.display()
            );
        }
    }

    #[test]
    fn a_tlb_run_that_swept_no_further_stride_has_its_figures() {
        // The committed H200 TLB run, as a run with a small --max-bytes leaves it: no further
        // stride swept, so no tlb_strides.csv.
        let committed = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("results/h200/capacity-620ca57/run/cache-tlb");
        let dir = tempfile::tempdir().unwrap();
        std::fs::copy(committed.join("chase.csv"), dir.path().join("chase.csv")).unwrap();
        let mut cache: CacheFile = crate::report::saved::read_json(&committed, "cache.json").unwrap();
        assert!(cache.tlb_strides.as_ref().is_some_and(|s| !s.is_empty()));
        cache.tlb_strides = Some(Vec::new());
        std::fs::write(
            dir.path().join("cache.json"),
            serde_json::to_vec(&cache).unwrap(),
        )
        .unwrap();
        let figures = figures(dir.path()).unwrap();
        assert!(
            figures.iter().all(|f| !f.quantity.starts_with("TLB at a")),
            "{figures:?}"
        );
        assert!(figures.iter().any(|f| f.quantity.starts_with("tlb: ")));
    }

    fn rows(
        readings: [(&str, f64, [f64; 2]); 2],
        basis: &str,
    ) -> Vec<crate::report::figures::Figure> {
        let mut r = crate::report::figures::Rows::new("cache", "Memory hierarchy", "cache.json");
        rise_figures("global: level 1", readings, Some(basis), &mut r);
        r.finish()
    }

    #[test]
    fn a_rise_the_sweep_pins_down_is_a_figure_and_one_it_does_not_is_unresolved() {
        let kib = 1024.0;
        let figures = rows(
            [
                ("half", 234.0 * kib, [233.0 * kib, 234.0 * kib]),
                ("90 %", 180.0 * kib, [134.0 * kib, 180.0 * kib]),
            ],
            "fit",
        );
        assert_eq!(figures.len(), 2);
        assert!(!figures[0].is_unresolved(), "{:?}", figures[0]);
        assert_eq!(figures[0].value, Some(234.0 * kib));
        assert_eq!(figures[0].low, Some(233.0 * kib));
        assert!(figures[1].is_unresolved(), "{:?}", figures[1]);
        assert_eq!(figures[1].value, None);
        assert!(
            figures[1]
                .text
                .as_deref()
                .unwrap()
                .contains("spacing and two σ")
        );
    }

    #[test]
    fn a_level_read_from_its_steps_states_no_rise() {
        let mib = 1048576.0;
        let figures = rows(
            [
                ("half", 20.0 * mib, [20.0 * mib, 20.0 * mib]),
                ("90 %", 22.0 * mib, [22.0 * mib, 22.0 * mib]),
            ],
            "steps",
        );
        assert!(figures.iter().all(|f| f.is_unresolved()), "{figures:?}");
    }

    /// The committed H100 L2 run with the partition probe's window added as later runs record
    /// it: the summary names the timed load.
    #[test]
    fn the_partition_probe_s_timed_load_is_a_row() {
        let from = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("results/h100/l2-partitions/l2-1");
        let dir = tempfile::tempdir().unwrap();
        for file in ["cache.json", "metadata.json"] {
            std::fs::copy(from.join(file), dir.path().join(file)).unwrap();
        }
        let mut cache: CacheFile = crate::report::saved::read_json(dir.path(), "cache.json").unwrap();
        cache.l2_partition_timed_window = Some(TimedLoop {
            loads: Some(BTreeMap::from([("LDG.E.STRONG.GPU".to_string(), 1)])),
            ..TimedLoop::default()
        });
        std::fs::write(
            dir.path().join("cache.json"),
            serde_json::to_vec(&cache).unwrap(),
        )
        .unwrap();
        let rows = figures(dir.path()).unwrap();
        let row = rows
            .iter()
            .find(|f| f.quantity == "L2 partition probe: timed load (SASS)")
            .unwrap();
        assert_eq!(row.text.as_deref(), Some("LDG.E.STRONG.GPU"));
    }
}

