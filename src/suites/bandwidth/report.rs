//! `gpubench bandwidth`'s files: `points.csv` (every timed point, the occupancy search's
//! included), `bandwidth.json` (the headline figures, the falloffs and the peak), and
//! `bandwidth.png` (bandwidth against footprint, the levels marked). The JSON is written and
//! read back through the same types.

use std::path::Path;

use anyhow::Result;
use serde::{Deserialize, Serialize};

pub use super::plot::draw;
use super::analysis::{CurvePoint, STEADY_SHIFT, STEADY_SPAN, crossing_spread};
use crate::gpu::launch::bandwidth::SliceOrder;
use crate::report::figures::{Figure, Rows};
use crate::report::text::format_value;

/// One row of `points.csv` (also what the figure and `report` read back).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PointRow {
    /// "search" (the occupancy search), "sweep search" (a read sweep's own search, with fixed
    /// slices), "headline", "allocation" (one allocation's point of an L2 write or copy
    /// headline) or "sweep".
    pub stage: String,
    pub level: String,
    pub operation: String,
    /// "device" (one region for the grid), "sm" (a region per SM) or "shared" (per block).
    pub placement: String,
    pub threads: u32,
    pub blocks_per_sm: u32,
    /// How the device-wide kernels handed out their slices: "fixed", "ticket" or "stream"
    /// (runs before 2026-11-25 had only fixed slices and no column).
    #[serde(default = "fixed_slices")]
    pub slice_order: String,
    pub footprint_bytes: u64,
    pub passes: u32,
    pub bytes_per_launch: u64,
    pub median_bytes_per_second: f64,
    pub min_bytes_per_second: f64,
    pub max_bytes_per_second: f64,
    pub repeats: usize,
}

/// A level's bandwidth for one operation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LevelFigure {
    pub level: String,
    pub operation: String,
    /// Where it comes from: the search winner's point, or a sweep plateau's median.
    pub from: String,
    pub footprint_bytes: u64,
    pub threads: u32,
    pub blocks_per_sm: u32,
    pub median_bytes_per_second: f64,
    pub min_bytes_per_second: f64,
    pub max_bytes_per_second: f64,
    pub bytes_per_clock_per_sm: f64,
    /// DRAM only: the median over the theoretical peak.
    pub fraction_of_peak: Option<f64>,
    /// The device-wide kernels': "fixed", "ticket" or "stream" (runs before 2026-11-25: fixed,
    /// unstated).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slice_order: Option<String>,
    /// The allocations of the footprint the figure's launches ran in, where more than one (the
    /// L2's write and copy since 2026-11-28): the median of their medians, the range over all.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allocations: Option<usize>,
}

fn fixed_slices() -> String {
    SliceOrder::Fixed.name().into()
}

/// The words a headline's interval carries for slices handed out by ticket (fixed slices,
/// every run's before 2026-11-25, carry none).
pub const TICKET_LABEL: &str = "min-max; slices taken in order by ticket";
/// The same for streamed slices (far more blocks than are resident, one private slice each).
pub const STREAM_LABEL: &str = "min-max; many short blocks, one private slice each";

/// Where one sweep's bandwidth falls from one plateau to the next.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FalloffFigure {
    /// "l1 read (per SM)" or "device read" / "device strong read" / "device shared-line read" /
    /// "device write" / "device copy".
    pub sweep: String,
    pub bytes: u64,
    pub low_bytes: u64,
    pub high_bytes: u64,
    /// The descent between the two plateaus (runs before 2026-11-24 did not record it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub descent_from_bytes: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub descent_to_bytes: Option<u64>,
    pub before_bytes_per_second: f64,
    pub after_bytes_per_second: f64,
}

/// One kernel's memory instructions in the SASS the run compiled from its PTX.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KernelAccesses {
    pub kernel: String,
    pub accesses: std::collections::BTreeMap<String, usize>,
    pub expected: Vec<String>,
    /// "as expected" or "UNEXPECTED: …".
    pub verdict: String,
}

/// What the run saw of its kernels' machine code.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SassCheck {
    /// "written to FILE", or why no SASS was made (no ptxas / cuobjdump on the machine).
    pub status: String,
    pub arch: String,
    pub kernels: Vec<KernelAccesses>,
}

/// The DRAM copy by the copy engines (`cuMemcpyDtoD`, no kernel), beside the SMs' copy.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CopyEngineFigure {
    /// Bytes of each array (source and target).
    pub array_bytes: u64,
    /// Copies back to back between each timing's two events.
    pub copies_per_timing: u32,
    pub repeats: usize,
    /// Read + write bytes per second: the median over the timings and their range.
    pub median_bytes_per_second: f64,
    pub min_bytes_per_second: f64,
    pub max_bytes_per_second: f64,
    pub fraction_of_peak: f64,
    /// Target words read back and compared with the source, and how many differed (a copy
    /// that did not reproduce its source gives no rate).
    pub checked_words: u64,
    pub mismatched_words: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BandwidthFile {
    pub sm_clock_mhz: f64,
    pub multiprocessors: u32,
    pub memory_clock_mhz: f64,
    pub memory_bus_bits: u32,
    /// 2 × memory clock × bus width: the driver's attributes, not a measurement.
    pub dram_peak_bytes_per_second: f64,
    pub levels: Vec<LevelFigure>,
    pub falloffs: Vec<FalloffFigure>,
    /// The copy engines' DRAM copy, or why it was not measured (runs before 2026-11-25 did not
    /// measure it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub copy_engines: Option<Result<CopyEngineFigure, String>>,
    pub launches: u64,
    pub seconds: f64,
    pub sass: SassCheck,
}

/// The figure's title, before the device.
pub const TITLE: &str = "Memory bandwidth against footprint";

pub(super) fn gb(bytes_per_second: f64) -> f64 {
    bytes_per_second / 1e9
}

/// The sweep whose falls mark where sharing changes (the grid's chunks against the
/// region's), not where a level ends: `bandwidth.json` keeps them as measured, the summary
/// and the figure leave them out.
const SHARED_LINE_SWEEP: &str = "device shared-line read";

/// The fall-offs that mark a level's end: all but the shared-line read's.
pub(super) fn level_falloffs(file: &BandwidthFile) -> Vec<&FalloffFigure> {
    file.falloffs
        .iter()
        .filter(|f| f.sweep != SHARED_LINE_SWEEP)
        .collect()
}

/// The section of the summary the bandwidth rows are in.
pub const SECTION: &str = "Bandwidth";

/// Whether `figure` is the headline rate of `operation` at `level`, as the core's tables
/// find it: by its key.
#[cfg(test)]
fn is_rate_of(figure: &Figure, level: &str, operation: &str) -> bool {
    crate::report::keys::is_bandwidth(&figure.key, level, operation)
}

/// The summary's bandwidth rows.
pub fn figures(dir: &Path) -> Result<Vec<Figure>> {
    let file: BandwidthFile = crate::report::saved::read_json(dir, "bandwidth.json")?;
    let mut r = Rows::new("bandwidth", SECTION, "bandwidth.json");
    let chip = crate::report::ceilings::chip_bytes(&crate::report::metadata::SavedMetadata::read(dir)?);
    for l in &file.levels {
        level_rows(&mut r, l, chip.as_ref());
    }
    if let Some(copy) = &file.copy_engines {
        copy_engine_rows(&mut r, copy);
    }
    r.push(
        "DRAM theoretical peak (2 x memory clock x bus width)",
        Some(gb(file.dram_peak_bytes_per_second)),
        "GB/s",
        None,
    );
    let unexpected: Vec<&KernelAccesses> = file
        .sass
        .kernels
        .iter()
        .filter(|k| !k.verdict.starts_with("as expected"))
        .collect();
    let verdict = if file.sass.kernels.is_empty() {
        format!("not checked: {}", file.sass.status)
    } else if unexpected.is_empty() {
        "as expected: 16-byte accesses (LDG.E.NA.128, LDG.E.128, STG.E.128, LDS.128, STS.128)"
            .to_string()
    } else {
        unexpected
            .iter()
            .map(|k| format!("{}: {}", k.kernel, k.verdict))
            .collect::<Vec<_>>()
            .join("; ")
    };
    r.text("kernels' memory instructions (SASS)", Some(&verdict));
    // A sweep may fall off more than once (a copy past the near L2, then past the whole L2):
    // each fall-off its own row, numbered, so a comparison pairs first with first.
    let falloffs = level_falloffs(&file);
    // The sweeps' curves, to say how steady each crossing is (runs trimmed to their figures
    // keep no points).
    let points: Vec<PointRow> = if dir.join("points.csv").is_file() {
        crate::report::saved::read_csv(dir, "points.csv")?
    } else {
        Vec::new()
    };
    for (i, f) in falloffs.iter().enumerate() {
        let nth = falloffs[..i].iter().filter(|g| g.sweep == f.sweep).count();
        let later = falloffs.iter().skip(i + 1).any(|g| g.sweep == f.sweep);
        let quantity = match (nth, later) {
            (0, false) => format!("{} falls off at", f.sweep),
            (n, _) => format!("{} falls off at (fall-off {})", f.sweep, n + 1),
        };
        r.push(
            &quantity,
            Some(f.bytes as f64),
            "bytes",
            Some(match (f.descent_from_bytes, f.descent_to_bytes) {
                (Some(from), Some(to)) => (from as f64, to as f64, "descent between plateaus"),
                _ => (f.low_bytes as f64, f.high_bytes as f64, "between points"),
            }),
        );
        if let Some(why) = unsteady(f, &points) {
            r.unresolved(crate::report::figures::Reason::NotSteady, &why);
        }
    }
    Ok(r.finish())
}

/// Why fall-off `f` states no footprint, where a [`STEADY_SHIFT`] of the rate either way moves
/// its crossing by [`STEADY_SPAN`] or more over its sweep's curve in `points`; `None` where it
/// is steady or there is no curve to tell.
fn unsteady(f: &FalloffFigure, points: &[PointRow]) -> Option<String> {
    let (from, to) = f.descent_from_bytes.zip(f.descent_to_bytes)?;
    let curve: Vec<CurvePoint> = points
        .iter()
        .filter(|p| p.stage == "sweep" && sweep_name(&p.placement, &p.operation) == f.sweep)
        .map(|p| CurvePoint {
            footprint_bytes: p.footprint_bytes,
            bytes_per_second: p.median_bytes_per_second,
        })
        .collect();
    if curve.is_empty() {
        return None;
    }
    let (early, late) = crossing_spread(
        &curve,
        (f.before_bytes_per_second, f.after_bytes_per_second),
        (from, to),
    );
    (late as f64 >= STEADY_SPAN * early as f64).then(|| {
        format!(
            "the bandwidth falls gradually, from {:.0} to {:.0} GB/s over {} to {}, and a {:.0} % change of the rate moves the footprint where it crosses half-way (on a log scale) from {} to {}: no one footprint is read, the descent is the finding",
            gb(f.before_bytes_per_second),
            gb(f.after_bytes_per_second),
            format_value(from as f64, "bytes"),
            format_value(to as f64, "bytes"),
            100.0 * STEADY_SHIFT,
            format_value(early as f64, "bytes"),
            format_value(late as f64, "bytes"),
        )
    })
}

/// The name of the sweep of an operation at a placement (`sm`: every SM its own region;
/// `device`), as `bandwidth.json`'s fall-offs name it.
pub(super) fn sweep_name(placement: &str, operation: &str) -> String {
    if placement == "sm" {
        format!("l1 {operation} (per SM)")
    } else {
        format!("{placement} {operation}")
    }
}

/// A level's headline rate (its interval says how the slices were handed out where by
/// ticket), the same per SM and clock, and DRAM's share of the peak. `chip`: every SM's data
/// path at the highest SM clock, which no level's rate passes.
fn level_rows(r: &mut Rows, l: &LevelFigure, chip: Option<&crate::report::ceilings::Ceiling>) {
    let name = format!("{} {}", l.level, l.operation);
    let label = match l.slice_order.as_deref() {
        Some(order) if order == SliceOrder::Ticket.name() => TICKET_LABEL.to_string(),
        Some(order) if order == SliceOrder::Stream.name() => STREAM_LABEL.to_string(),
        _ => match l.allocations {
            Some(n) => format!("median of {n} allocations, min-max over their launches"),
            None => "min-max".to_string(),
        },
    };
    let headline = format!("{name} ({})", l.from);
    let key = crate::report::keys::Known::Bandwidth {
        level: &l.level,
        operation: &l.operation,
        search: &l.from,
    };
    r.key(key.key()).push(
        &headline,
        Some(gb(l.median_bytes_per_second)),
        "GB/s",
        Some((
            gb(l.min_bytes_per_second),
            gb(l.max_bytes_per_second),
            &label,
        )),
    );
    // DRAM's rate cannot pass the peak its bus and clock give.
    let peak = l
        .fraction_of_peak
        .filter(|f| *f > 0.0)
        .map(|f| crate::report::ceilings::Ceiling {
            value: gb(l.median_bytes_per_second) / f,
            made_of: "the DRAM's theoretical peak (2 × memory clock × bus width)".into(),
        });
    r.at_most(peak.as_ref().or(chip));
    // The same launches per SM and clock: the headline's range, scaled alike.
    let per_sm = l.bytes_per_clock_per_sm / l.median_bytes_per_second;
    let per_sm_quantity = format!("{name} per SM");
    r.push(
        &per_sm_quantity,
        Some(l.bytes_per_clock_per_sm),
        "bytes/clock/SM",
        (per_sm.is_finite() && l.median_bytes_per_second > 0.0).then_some((
            l.min_bytes_per_second * per_sm,
            l.max_bytes_per_second * per_sm,
            "min-max",
        )),
    );
    // Shared memory's 32 banks of 4 bytes, the width of what an SM loads or stores per clock
    // from any level (compute capability 5.0 on).
    r.at_most(Some(&crate::report::ceilings::sm_bytes_per_clock()),
    );
    if let Some(fraction) = l.fraction_of_peak {
        let share = format!("{name}: fraction of theoretical peak");
        r.push(&share, Some(100.0 * fraction), "%", None);
        r.at_most(Some(&crate::report::ceilings::share()));
    }
}

/// The copy engines' rate and its share of the peak; a reason in words where there is none.
fn copy_engine_rows(r: &mut Rows, copy: &Result<CopyEngineFigure, String>) {
    const NAME: &str = "dram copy by the copy engines";
    let quantity = format!("{NAME} (cuMemcpyDtoD, no kernel)");
    let c = match copy {
        Ok(c) if c.mismatched_words == 0 => c,
        Ok(c) => {
            let why = format!(
                "not stated: the target differs from the source in {} of {} words read back",
                c.mismatched_words, c.checked_words
            );
            return r.text(&quantity, Some(&why));
        }
        Err(why) => return r.text(&quantity, Some(why)),
    };
    // The arrays' size goes in the interval's label, not the quantity: a GPU with less memory
    // copies smaller arrays, and `compare` pairs rows by quantity.
    let label = format!(
        "min-max; {} copies of {} MiB per timing",
        c.copies_per_timing,
        c.array_bytes >> 20
    );
    r.push(
        &quantity,
        Some(gb(c.median_bytes_per_second)),
        "GB/s",
        Some((
            gb(c.min_bytes_per_second),
            gb(c.max_bytes_per_second),
            label.as_str(),
        )),
    );
    let share = format!("{NAME}: fraction of theoretical peak");
    r.push(&share, Some(100.0 * c.fraction_of_peak), "%", None);
    r.at_most(Some(&crate::report::ceilings::share()));
}

/// The footprint sweeps' lines for the fleet page's overlays: GB/s against footprint, one per
/// operation and placement swept (the occupancy search's points are not a curve).
pub fn curves(points: &[PointRow]) -> Vec<crate::report::overlay::Curve> {
    let mut curves: Vec<crate::report::overlay::Curve> = Vec::new();
    for p in points.iter().filter(|p| p.stage == "sweep") {
        let name = format!("{} ({} placement)", p.operation, p.placement);
        let at = (p.footprint_bytes as f64, gb(p.median_bytes_per_second));
        match curves.iter_mut().find(|c| c.name == name) {
            Some(curve) => curve.points.push(at),
            None => curves.push(crate::report::overlay::Curve {
                name,
                x_label: "footprint".into(),
                y_label: "GB/s (median)".into(),
                x_bytes: true,
                points: vec![at],
            }),
        }
    }
    curves
}

#[cfg(test)]
mod tests {
    use super::*;

    fn engines(mismatched_words: u64) -> CopyEngineFigure {
        CopyEngineFigure {
            array_bytes: 2 << 30,
            copies_per_timing: 2,
            repeats: 5,
            median_bytes_per_second: 3.02e12,
            min_bytes_per_second: 3.01e12,
            max_bytes_per_second: 3.03e12,
            fraction_of_peak: 0.901,
            checked_words: 49152,
            mismatched_words,
        }
    }

    fn rows_of(copy: Result<CopyEngineFigure, String>) -> Vec<Figure> {
        let mut r = Rows::new("bandwidth", SECTION, "bandwidth.json");
        copy_engine_rows(&mut r, &copy);
        r.finish()
    }

    #[test]
    fn the_copy_engines_rate_is_stated_only_for_a_copy_that_reproduced_its_source() {
        let good = rows_of(Ok(engines(0)));
        assert_eq!(good.len(), 2);
        assert_eq!(
            good[0].quantity,
            "dram copy by the copy engines (cuMemcpyDtoD, no kernel)"
        );
        assert_eq!(
            good[0].uncertainty,
            "min-max; 2 copies of 2048 MiB per timing"
        );
        let near = |v: Option<f64>, want: f64| v.is_some_and(|v| (v - want).abs() < 1e-9);
        assert!(near(good[0].value, 3020.0), "{good:?}");
        assert!(near(good[1].value, 90.1), "{good:?}");
        assert_eq!((good[0].low, good[0].high), (Some(3010.0), Some(3030.0)));
        // Not a kernel's rate: the SM copy's summary row is a different quantity.
        assert!(!is_rate_of(&good[0], "dram", "copy"));
        let bad = rows_of(Ok(engines(3)));
        assert_eq!(bad.len(), 1);
        assert_eq!(bad[0].value, None);
        assert!(
            bad[0]
                .text
                .as_deref()
                .is_some_and(|t| t.contains("3 of 49152 words")),
            "{bad:?}"
        );
        let short = rows_of(Err("not measured: 1 bytes free".into()));
        assert_eq!(short[0].text.as_deref(), Some("not measured: 1 bytes free"));
    }

    #[test]
    fn runs_from_before_the_copy_engines_read_back_without_them() {
        let committed = include_str!("../../../results/h100/all/bandwidth/bandwidth.json");
        let file: BandwidthFile = serde_json::from_str(committed).unwrap();
        assert!(file.copy_engines.is_none());
        assert!(file.levels.iter().all(|l| l.slice_order.is_none()));
        let written = serde_json::to_string(&file).unwrap();
        assert!(!written.contains("copy_engines"));
        assert!(!written.contains("slice_order"));
        // Their points had fixed slices and no column for it.
        let points = include_str!("../../../results/h100/all/bandwidth/points.csv");
        let rows: Vec<PointRow> = csv::Reader::from_reader(points.as_bytes())
            .deserialize()
            .collect::<Result<_, _>>()
            .unwrap();
        assert!(rows.len() > 100);
        assert!(rows.iter().all(|p| p.slice_order == "fixed"));
    }

    #[test]
    fn a_headline_from_slices_by_ticket_says_so_in_its_interval() {
        let figure = |order: Option<&str>| LevelFigure {
            level: "dram".into(),
            operation: "write".into(),
            from: "at the dram write search's winner".into(),
            footprint_bytes: 1 << 30,
            threads: 1024,
            blocks_per_sm: 1,
            median_bytes_per_second: 3.29e12,
            min_bytes_per_second: 3.28e12,
            max_bytes_per_second: 3.30e12,
            bytes_per_clock_per_sm: 12.6,
            fraction_of_peak: Some(0.981),
            slice_order: order.map(String::from),
            allocations: None,
        };
        for (order, label) in [
            (Some("ticket"), TICKET_LABEL),
            (Some("stream"), STREAM_LABEL),
            (Some("fixed"), "min-max"),
            (None, "min-max"),
        ] {
            let mut r = Rows::new("bandwidth", SECTION, "bandwidth.json");
            level_rows(&mut r, &figure(order), None);
            let rows = r.finish();
            assert_eq!(rows.len(), 3, "{rows:?}");
            assert_eq!(
                rows[0].quantity,
                "dram write (at the dram write search's winner)"
            );
            assert!(is_rate_of(&rows[0], "dram", "write"));
            assert_eq!(rows[0].uncertainty, label, "{order:?}");
            // The per-SM row keeps its plain interval.
            assert_eq!(rows[1].uncertainty, "min-max");
        }
        // An L2 write over three allocations says so; a file from before has no such field.
        let mut write = figure(Some("fixed"));
        write.allocations = Some(3);
        let mut r = Rows::new("bandwidth", SECTION, "bandwidth.json");
        level_rows(&mut r, &write, None);
        assert_eq!(
            r.finish()[0].uncertainty,
            "median of 3 allocations, min-max over their launches"
        );
        let json = serde_json::to_string(&figure(None)).unwrap();
        assert!(!json.contains("allocations"), "{json}");
        let back: LevelFigure = serde_json::from_str(&json).unwrap();
        assert_eq!(back.allocations, None);
    }
}
