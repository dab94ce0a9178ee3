//! The summary's rows of a cache run (and, re-exported, the text form of `analyze cache`).

pub use super::text::render_text;

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

// What the summary reads of a cache run's `cache.json`.

#[derive(serde::Deserialize)]
struct Level {
    latency_cycles: Option<f64>,
    size_bytes: Option<f64>,
    line_bytes: Option<f64>,
    #[serde(default)]
    fetch_bytes: Option<f64>,
    ways: Option<f64>,
    sets: Option<f64>,
    confidence: Option<f64>,
    #[serde(default)]
    held_out_gap: Option<f64>,
    #[serde(default)]
    basis: Option<String>,
    #[serde(default)]
    unidentified: Vec<String>,
    #[serde(default)]
    rise: Option<Rise>,
    #[serde(default)]
    capacity: Option<Capacity>,
    #[serde(default)]
    size_is_interval: bool,
}
#[derive(serde::Deserialize)]
struct Capacity {
    hits_up_to_bytes: f64,
    low_bytes: f64,
    high_bytes: f64,
    coverage: f64,
}
#[derive(serde::Deserialize)]
struct Rise {
    half_bytes: f64,
    half_range_bytes: [f64; 2],
    ninety_bytes: f64,
    ninety_range_bytes: [f64; 2],
}
#[derive(serde::Deserialize)]
struct Report {
    levels: Vec<Level>,
}
#[derive(serde::Deserialize)]
struct TimedLoop {
    #[serde(default)]
    loads: std::collections::BTreeMap<String, serde::de::IgnoredAny>,
    #[serde(default)]
    verdict: String,
}
#[derive(serde::Deserialize)]
struct Gap {
    from_bytes: u64,
    to_bytes: u64,
    why: Option<String>,
}
#[derive(serde::Deserialize)]
struct Stride {
    stride_bytes: u64,
}
#[derive(serde::Deserialize, Default)]
#[serde(default)]
struct Conflict {
    ways: Option<f64>,
    way_bytes: Option<f64>,
    verdict: Option<String>,
}
#[derive(serde::Deserialize)]
struct IndexChain {
    overhead_cycles: Option<f64>,
}
#[derive(serde::Deserialize)]
struct Estimate {
    bytes: Option<f64>,
    confidence: Option<f64>,
}
#[derive(serde::Deserialize)]
struct Granularity {
    estimate: Option<Estimate>,
}
#[derive(serde::Deserialize)]
struct TlbLevel {
    reach_bytes: Option<f64>,
    confidence: Option<f64>,
}
#[derive(serde::Deserialize)]
struct Tlb {
    #[serde(default)]
    levels: Vec<TlbLevel>,
    page: Option<Estimate>,
}
#[derive(serde::Deserialize)]
struct Carveout {
    carveout_percent: f64,
    requested_shared_bytes: f64,
    level_1_bytes: Option<f64>,
    #[serde(default)]
    capacity_low_bytes: Option<f64>,
    #[serde(default)]
    capacity_high_bytes: Option<f64>,
}
#[derive(serde::Deserialize)]
struct File {
    space: String,
    #[serde(default)]
    carveout: Option<Vec<Carveout>>,
    report: Report,
    timed_loop: Option<TimedLoop>,
    #[serde(default)]
    unresolved: Vec<Gap>,
    tlb_strides: Option<Vec<Stride>>,
    conflict: Option<Conflict>,
    index_chain: Option<IndexChain>,
    fetch_granularity: Option<Granularity>,
    tlb: Option<Tlb>,
    #[serde(default)]
    l2_partitions: Option<super::partitions_report::Partitions>,
    #[serde(default)]
    l2_partition_timed_window: Option<TimedLoop>,
}
fn rise_readings(rise: &Rise) -> [(&'static str, f64, [f64; 2]); 2] {
    [
        ("half", rise.half_bytes, rise.half_range_bytes),
        ("90 %", rise.ninety_bytes, rise.ninety_range_bytes),
    ]
}

/// One level's rows: its latency, its geometry at the confidence its basis gives (with the
/// standing that confidence leaves it), its capacity, its rise and what the sweep could not
/// identify.
fn level_rows(
    space: &str,
    (label, number): (&str, &str),
    level: &Level,
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
    let c = level.confidence;
    // The latency is a plateau's median, measured whatever the geometry: it carries no
    // geometry confidence.
    r.key(key(what::LATENCY)).labelled(
        &format!("{label} latency"),
        level.latency_cycles,
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
    // The geometry rows' standing, as their words state it.
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
        .map(|c| (c.low_bytes, c.high_bytes));
    if let Some((low, high)) = size_interval {
        let claim = format!(
            "{geometry_label}; stated as the capacity interval: no line or way count stands behind a point"
        );
        r.key(key(what::SIZE)).push(
            &format!("{label} size"),
            level.size_bytes,
            "bytes",
            Some((low, high, &claim)),
        );
        if let Some(standing) = standing {
            r.settle(standing);
        }
    }
    let size = level.size_bytes.filter(|_| size_interval.is_none());
    for (words, value, unit, keyed) in [
        ("size", size, "bytes", Some(what::SIZE)),
        ("line", level.line_bytes, "bytes", Some(what::LINE)),
        ("fetch per miss", level.fetch_bytes, "bytes", None),
        ("ways", level.ways, "", Some(what::WAYS)),
        ("sets", level.sets, "", Some(what::SETS)),
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
            Some(capacity.hits_up_to_bytes),
            "bytes",
            Some((capacity.low_bytes, capacity.high_bytes, &label_text)),
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
    let cache: File = crate::report::saved::read_json(dir, "cache.json")?;
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
        let asked = crate::report::summary::format_value(c.requested_shared_bytes, "bytes");
        let interval = c
            .capacity_low_bytes
            .zip(c.capacity_high_bytes)
            .map(|(low, high)| (low, high, "capacity interval, as for the level"));
        r.push(
            &format!(
                "{space}: level 1 with a {:.0} % shared carveout ({asked} of shared memory asked): no miss up to",
                c.carveout_percent
            ),
            c.level_1_bytes,
            "bytes",
            interval,
        );
    }
    if let Some(timed) = cache.timed_loop.filter(|t| !t.loads.is_empty()) {
        let loads: Vec<&str> = timed.loads.keys().map(String::as_str).collect();
        let flag = if timed.verdict.starts_with("UNEXPECTED") {
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
            gap.why.as_deref(),
        );
    }
    // A run whose --max-bytes left no further stride swept none, and wrote no tlb_strides.csv.
    if let Some(strides) = cache.tlb_strides.as_ref().filter(|s| !s.is_empty()) {
        tlb_stride_figures(dir, strides.iter().map(|s| s.stride_bytes), &mut r)?;
    }
    let conflict = cache.conflict.unwrap_or_default();
    if conflict.ways.is_none() {
        r.text(
            &format!("{space}: level 1 conflict experiment"),
            conflict.verdict.as_deref(),
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
        conflict.ways,
        "",
        None,
    );
    r.key(first(CONFLICT_WAY_SIZE)).push(
        &format!("{space}: level 1 way size (conflict experiment)"),
        conflict.way_bytes,
        "bytes",
        None,
    );
    r.push(
        &format!("{space}: index-chain overhead per load"),
        cache.index_chain.and_then(|c| c.overhead_cycles),
        "cycles",
        None,
    );
    let granularity = cache.fetch_granularity.and_then(|g| g.estimate);
    r.key(first(FETCH_GRANULARITY)).confident(
        &format!("{space}: level 1 fetch granularity (stride sweep)"),
        granularity.as_ref().and_then(|g| g.bytes),
        "bytes",
        granularity.as_ref().and_then(|g| g.confidence),
    );
    if let Some(partitions) = &cache.l2_partitions {
        super::partitions_report::figures(partitions, &mut r);
    }
    if let Some(window) = cache
        .l2_partition_timed_window
        .filter(|w| !w.loads.is_empty())
    {
        let loads: Vec<&str> = window.loads.keys().map(String::as_str).collect();
        r.text(
            "L2 partition probe: timed load (SASS)",
            Some(&loads.join(", ")),
        );
    }
    if let Some(tlb) = cache.tlb {
        // Read from steps a few cycles high at strides of megabytes, where no cache model
        // applies: the confidence is the step reading's heuristic, not a calibrated one.
        for (i, level) in tlb.levels.iter().enumerate() {
            let quantity = format!("TLB level {} reach", i + 1);
            r.labelled(
                &quantity,
                level.reach_bytes,
                "bytes",
                uncalibrated(level.confidence),
            );
            if level.confidence.is_some() {
                r.settle(Reason::Uncalibrated);
            }
        }
        // The page size is the knee of a rise of a few cycles (the TLB sweep's), whose
        // heuristic confidence no study calibrated: it read 16 KiB and 16 MiB, each at 0.50,
        // on two H100s the same day.
        r.labelled(
            "page size",
            tlb.page.as_ref().and_then(|p| p.bytes),
            "bytes",
            tlb.page
                .as_ref()
                .and_then(|p| p.confidence)
                .map_or(String::new(), |c| {
                    format!("uncalibrated confidence {c:.2} (the knee of a stride sweep a few cycles high)")
                }),
        );
        if tlb.page.as_ref().and_then(|p| p.confidence).is_some() {
            r.settle(Reason::Uncalibrated);
        }
    }
    Ok(r.finish())
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
    #[derive(serde::Deserialize)]
    struct Point {
        footprint_bytes: u64,
        stride_bytes: u64,
        cycles: f64,
    }
    let points: Vec<Point> = crate::report::saved::read_csv(dir, "tlb_strides.csv")?;
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
        match crate::analysis::tlb::stride_step(&at) {
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

    #[test]
    fn a_tlb_run_that_swept_no_further_stride_has_its_figures() {
        // The committed H200 TLB run, as a run with a small --max-bytes leaves it: no further
        // stride swept, so no tlb_strides.csv.
        let committed = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("results/h200/capacity-620ca57/run/cache-tlb");
        let dir = tempfile::tempdir().unwrap();
        std::fs::copy(committed.join("chase.csv"), dir.path().join("chase.csv")).unwrap();
        let mut cache: serde_json::Value =
            serde_json::from_slice(&std::fs::read(committed.join("cache.json")).unwrap()).unwrap();
        assert!(cache["tlb_strides"].as_array().is_some_and(|s| !s.is_empty()));
        cache["tlb_strides"] = serde_json::json!([]);
        std::fs::write(dir.path().join("cache.json"), cache.to_string()).unwrap();
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
        let path = dir.path().join("cache.json");
        let mut cache: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        cache["l2_partition_timed_window"] =
            serde_json::json!({ "loads": { "LDG.E.STRONG.GPU": 1 } });
        std::fs::write(&path, cache.to_string()).unwrap();
        let rows = figures(dir.path()).unwrap();
        let row = rows
            .iter()
            .find(|f| f.quantity == "L2 partition probe: timed load (SASS)")
            .unwrap();
        assert_eq!(row.text.as_deref(), Some("LDG.E.STRONG.GPU"));
    }
}
