//! Which caches share one array (issue #74, after MT4G's sharing test): the L1 (`ld.global`),
//! the read-only path (`ld.global.nc`), the texture path (`tex.1d`) and the constant cache
//! (`LDC`). Run with the global space's sweep, on one thread (`storage_probe`, cuda/cache.cu).
//!
//! Method: a fill chain small enough for the path's first level (16 KiB of 128-byte lines for
//! the three global paths, 1 KiB of 64-byte lines for the constant path) is walked once
//! through path X, then an evict chain through path Y, then the fill chain once more through X,
//! timed (cycles per load). Once, because a cache may keep lines that hit over lines streamed
//! through it: beside the verdicts each path's own eviction is read again after two fill
//! walks, which says whether it does. Three readings per X: untouched (no evict walk), after X's own walk
//! of the evict chain (the lines evicted), and after Y's walk. The evict chain is 512 KiB of
//! 128-byte lines walked twice through a global path (twice the largest L1 to date), 63 KiB of
//! 64-byte lines through the constant path (what is left of the 64 KiB bank). Y's walk is set
//! beside X's own walk of the same size (the constant chain's size where X is the constant
//! path, which cannot walk 512 KiB): the share of X's own slowdown that Y's walk causes is
//! near 1 where X and Y fill one array and near 0 where they do not.
//!
//! What the data identify: a verdict per ordered pair where X's own walk visibly evicts (its
//! timed pass at least 10 cycles and 20 % slower than untouched) and every launch of Y's
//! reading lies on one side of the midpoint between untouched and evicted; otherwise the pair
//! is not identifiable (as where the constant bank's 63 KiB cannot evict an L1 of 256 KiB even
//! through X itself). Each reading is the median of three launches, with their range.

use std::path::Path;
use std::time::Duration;

use anyhow::Result;
use serde::{Deserialize, Serialize};

use super::launch::storage::{self as probe, ProbeChain, ProbePath, Walk};
use crate::gpu::Gpu;
use crate::report::figures::{Figure, Reason, Rows};
use crate::report::keys;

pub const FILE: &str = "storage.csv";
/// The unit of a verdict's number: the share of the fill path's own slowdown that the other
/// path's walk caused (at least 0.5 where they share one array).
pub const SHARE_UNIT: &str = "of its own eviction";
const LAUNCHES: usize = 3;
/// The chains: line strides and bytes (see the module's method).
const BUFFER_STRIDE: u32 = 128;
const CONSTANT_STRIDE: u32 = 64;
const BUFFER_FILL: u32 = 16 << 10;
const CONSTANT_FILL: u32 = 1 << 10;
const BUFFER_EVICT: u32 = 512 << 10;
const CONSTANT_EVICT: u32 = (64 << 10) - CONSTANT_FILL;
const EVICT_PASSES: u32 = 2;
/// The fill chain's untimed passes before the eviction: one, so that its lines have not hit
/// before the evict walk (an L1 that keeps lines which hit over lines streamed once, as the
/// H200's did, kept a fill chain walked twice through 1 MiB of its own loads).
const FILL_PASSES: u32 = 1;
// The constant chains fill the 64 KiB bank exactly, and a fill chain is whole steps of 16
// (the timed pass is unrolled 16 times).
const _: () = assert!(
    CONSTANT_FILL + CONSTANT_EVICT == 64 << 10
        && (BUFFER_FILL / BUFFER_STRIDE).is_multiple_of(16)
        && (CONSTANT_FILL / CONSTANT_STRIDE).is_multiple_of(16)
);
/// The least slowdown of X's own eviction that shows a cache to probe.
const VISIBLE_CYCLES: f64 = 10.0;
const VISIBLE_SHARE: f64 = 0.2;

/// A path's name in the file and its keys ([`keys::STORAGE_PATHS`], in the same order as
/// [`ProbePath::ALL`]).
pub fn name(path: ProbePath) -> &'static str {
    let at = ProbePath::ALL.iter().position(|&p| p == path).unwrap_or(0);
    keys::STORAGE_PATHS[at].1
}

fn words(path: &str) -> &str {
    match path {
        "l1" => "L1 (ld.global)",
        "readonly" => "read-only (ld.global.nc)",
        "texture" => "texture (tex.1d)",
        "constant" => "constant (LDC)",
        other => other,
    }
}

/// Whether `load` (a data load of the probe's SASS, as [`crate::analysis::sass::data_loads`]
/// names it) is `path`'s own: `LDG` without `.CONSTANT` through the L1, `LDG….CONSTANT`
/// through the read-only path, `TLD`/`TEX` through the texture path, an `LDC` of bank 3 (the
/// module's `__constant__` data) through the constant cache.
fn loads_through(path: ProbePath, load: &str) -> bool {
    let base = load.split(['.', ' ']).next().unwrap_or(load);
    match path {
        ProbePath::L1 => base == "LDG" && !load.contains("CONSTANT"),
        ProbePath::ReadOnly => base == "LDG" && load.contains("CONSTANT"),
        ProbePath::Texture => base.starts_with("TLD") || base.starts_with("TEX"),
        ProbePath::Constant => base == "LDC" && load.ends_with("c[0x3]"),
    }
}

/// Whether `loads` (the probe's, by name) hold one of `path`'s own.
fn has_own_load(loads: &std::collections::BTreeMap<String, usize>, path: ProbePath) -> bool {
    loads.keys().any(|op| loads_through(path, op))
}

/// What the probe's kernel loads with, read from the SASS of the PTX the run loaded
/// (`cache.json`'s `storage_probe_loads`; the full text is in `cache.sass`): every path's own
/// load must be there, or the probe does not measure that path. The kernel times each path in
/// a branch of its own, so its loads are counted over the whole kernel, not one timed region.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProbeLoads {
    pub arch: String,
    /// Every data load of `storage_probe` (parameters left out), with its static count.
    pub loads: std::collections::BTreeMap<String, usize>,
    /// "as expected: …", or "UNEXPECTED: …" naming the paths with no load of their own.
    pub verdict: String,
}

impl ProbeLoads {
    /// The probe's loads in a module's SASS `text`, where the kernel is there.
    pub fn of(text: &str, arch: &str) -> Option<ProbeLoads> {
        let loads = crate::analysis::sass::data_loads(text).remove("storage_probe")?;
        let missing: Vec<&str> = ProbePath::ALL
            .into_iter()
            .filter(|&path| !has_own_load(&loads, path))
            .map(|path| words(name(path)))
            .collect();
        let verdict = if missing.is_empty() {
            "as expected: each path's own load (LDG, LDG.CONSTANT, TLD or TEX, LDC of bank 3) is there".into()
        } else {
            format!(
                "UNEXPECTED: no load of its own for {}: the probe does not measure that path",
                missing.join(", ")
            )
        };
        Some(ProbeLoads {
            arch: arch.to_string(),
            loads,
            verdict,
        })
    }
}

/// The bytes of the evict chain a walk through `path` reads, and the largest X can walk.
fn evict_bytes(path: ProbePath) -> u32 {
    match path {
        ProbePath::Constant => CONSTANT_EVICT,
        _ => BUFFER_EVICT,
    }
}

/// One reading: the fill chain through `fill`, walked `fill_passes` times, after a walk through
/// `evict` ("none": untouched) of `evict_bytes`; cycles per load of the timed pass over the
/// launches.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Row {
    pub fill: String,
    pub fill_passes: u32,
    pub evict: String,
    pub evict_bytes: u32,
    pub fill_bytes: u32,
    pub cycles_per_load: f64,
    pub cycles_min: f64,
    pub cycles_max: f64,
    pub launches: usize,
}

/// One reading of the plan: fill path, evict path (none: untouched), evict bytes, fill passes.
pub type Reading = (ProbePath, Option<ProbePath>, u32, u32);

/// Every reading the verdicts need: per X untouched, X's own walks (of both sizes where X can
/// walk both) and every other path's, the fill walked once; and X's own walk of its largest
/// evict chain after two fill walks.
pub fn plan() -> Vec<Reading> {
    let mut plan = Vec::new();
    for x in ProbePath::ALL {
        plan.push((x, None, 0, FILL_PASSES));
        let mut own: Vec<u32> = ProbePath::ALL
            .iter()
            .map(|&y| evict_bytes(y).min(evict_bytes(x)))
            .collect();
        own.sort_unstable();
        own.dedup();
        for bytes in own {
            plan.push((x, Some(x), bytes, FILL_PASSES));
        }
        for y in ProbePath::ALL.into_iter().filter(|&y| y != x) {
            plan.push((x, Some(y), evict_bytes(y), FILL_PASSES));
        }
        plan.push((x, Some(x), evict_bytes(x), 2));
    }
    plan
}

/// Every reading of [`plan`], on one thread.
pub fn measure(gpu: &mut Gpu) -> Result<Vec<Row>> {
    let stride_words = BUFFER_STRIDE / 4;
    let fill_buffer = probe::buffer_chain(gpu, BUFFER_FILL / BUFFER_STRIDE, stride_words)?;
    // The evict chains a global path walks: its own size, and the constant chain's (X's own
    // walk beside the constant path's).
    let big_evict = probe::buffer_chain(gpu, BUFFER_EVICT / BUFFER_STRIDE, stride_words)?;
    let small_evict = probe::buffer_chain(gpu, CONSTANT_EVICT / BUFFER_STRIDE, stride_words)?;
    probe::write_constant_chain(
        gpu,
        &[
            (0, CONSTANT_FILL / CONSTANT_STRIDE, CONSTANT_STRIDE),
            (
                CONSTANT_FILL,
                CONSTANT_EVICT / CONSTANT_STRIDE,
                CONSTANT_STRIDE,
            ),
        ],
    )?;
    let walk = |path: ProbePath, bytes: u32, fill: Option<u32>| -> Walk {
        let (chain, stride) = match path {
            ProbePath::Constant => (
                ProbeChain::Constant {
                    start: if fill.is_some() { 0 } else { CONSTANT_FILL },
                },
                CONSTANT_STRIDE,
            ),
            _ if fill.is_some() => (ProbeChain::Buffer(&fill_buffer), BUFFER_STRIDE),
            // The plan asks for the two sizes only ([`evict_bytes`]).
            _ if bytes == BUFFER_EVICT => (ProbeChain::Buffer(&big_evict), BUFFER_STRIDE),
            _ => (ProbeChain::Buffer(&small_evict), BUFFER_STRIDE),
        };
        Walk {
            path,
            chain,
            steps: bytes / stride,
            passes: fill.unwrap_or(EVICT_PASSES),
        }
    };
    let mut rows = Vec::new();
    for (x, y, bytes, fill_passes) in plan() {
        let fill_bytes = match x {
            ProbePath::Constant => CONSTANT_FILL,
            _ => BUFFER_FILL,
        };
        let fill = walk(x, fill_bytes, Some(fill_passes));
        let evict = y.map(|y| walk(y, bytes, None));
        let mut cycles = Vec::new();
        for _ in 0..LAUNCHES {
            let c = probe::storage_probe(gpu, fill, evict, Duration::from_secs(10))?;
            cycles.push(c as f64 / f64::from(fill.steps));
        }
        let summary = crate::analysis::stats::Summary::of(&cycles)
            .ok_or_else(|| anyhow::anyhow!("the storage probe gave no readings"))?;
        rows.push(Row {
            fill: name(x).into(),
            fill_passes,
            evict: y.map_or("none", name).into(),
            evict_bytes: bytes,
            fill_bytes,
            cycles_per_load: summary.median,
            cycles_min: summary.min,
            cycles_max: summary.max,
            launches: cycles.len(),
        });
    }
    Ok(rows)
}

/// What the readings say of one ordered pair.
#[derive(Debug, Clone, PartialEq)]
pub enum Verdict {
    /// Y's walk slows X's timed pass as X's own does: `share` of its slowdown.
    Shares { share: f64 },
    Separate { share: f64 },
    /// Why the readings do not tell.
    NotIdentifiable(String),
}

/// The verdict on X (`fill`) against Y (`evict`) from `rows`; `None` where a reading is missing.
pub fn verdict(rows: &[Row], fill: &str, evict: &str) -> Option<(Verdict, [f64; 3])> {
    let rows: Vec<&Row> = rows.iter().filter(|r| r.fill_passes == FILL_PASSES).collect();
    let find = |e: &str, bytes: Option<u32>| {
        rows.iter()
            .copied()
            .find(|r| r.fill == fill && r.evict == e && bytes.is_none_or(|b| r.evict_bytes == b))
    };
    let cross = find(evict, None)?;
    let base = find("none", None)?;
    let own_size = rows
        .iter()
        .filter(|r| r.fill == fill && r.evict == fill)
        .map(|r| r.evict_bytes)
        .filter(|&b| b <= cross.evict_bytes)
        .max()?;
    let own = find(fill, Some(own_size))?;
    let levels = [base.cycles_per_load, own.cycles_per_load, cross.cycles_per_load];
    let slowdown = own.cycles_per_load - base.cycles_per_load;
    if slowdown < VISIBLE_CYCLES || slowdown < VISIBLE_SHARE * base.cycles_per_load {
        return Some((
            Verdict::NotIdentifiable(format!(
                "its own walk of {} leaves its lines in place ({:.1} against {:.1} cycles untouched)",
                crate::report::plot::binary_bytes(f64::from(own_size)),
                own.cycles_per_load,
                base.cycles_per_load
            )),
            levels,
        ));
    }
    let middle = base.cycles_per_load + slowdown / 2.0;
    let share = (cross.cycles_per_load - base.cycles_per_load) / slowdown;
    let verdict = if cross.cycles_min > middle {
        Verdict::Shares { share }
    } else if cross.cycles_max < middle {
        Verdict::Separate { share }
    } else {
        Verdict::NotIdentifiable(format!(
            "its launches lie on both sides of the midpoint ({:.1} to {:.1} cycles about {middle:.1})",
            cross.cycles_min, cross.cycles_max
        ))
    };
    Some((verdict, levels))
}

/// The summary's rows: one verdict per ordered pair of paths, in words with the three levels.
/// A run without the file (another space, or made before the probe) has none.
pub fn figures(
    dir: &Path,
    loads: Option<&ProbeLoads>,
    skipped: Option<&str>,
) -> Result<Vec<Figure>> {
    if crate::report::saved::find(dir, FILE).is_none() {
        // Where the device refused what the probe needs, the summary says so.
        let mut r = Rows::new("cache", "Memory hierarchy", "cache.json");
        if let Some(why) = skipped {
            r.key("cache/storage/skipped".into()).text(
                "shared storage: which caches share one array",
                Some(&format!("not measured: {why}")),
            );
        }
        return Ok(r.finish());
    }
    let rows: Vec<Row> = crate::report::saved::read_csv(dir, FILE)?;
    let mut r = Rows::new("cache", "Memory hierarchy", FILE);
    // A path whose own load the probe's SASS lacks was not measured: no verdict names it.
    let unmeasured = |path: &str| {
        let path = ProbePath::ALL.into_iter().find(|&p| name(p) == path);
        loads.zip(path).is_some_and(|(l, p)| !has_own_load(&l.loads, p))
    };
    for x in ProbePath::ALL.map(name) {
        for y in ProbePath::ALL.map(name).into_iter().filter(|&y| y != x) {
            let Some((verdict, [base, own, cross])) = verdict(&rows, x, y) else {
                continue;
            };
            let verdict = match [x, y].into_iter().find(|&p| unmeasured(p)) {
                Some(path) => Verdict::NotIdentifiable(format!(
                    "the probe's SASS has no load of the {} path's own",
                    words(path)
                )),
                None => verdict,
            };
            let quantity = format!("shared storage: {} lines after a walk through {}", words(x), words(y));
            let levels = format!("{base:.1} cycles untouched, {own:.1} after its own walk, {cross:.1} after this one");
            r.key(keys::storage(x, y));
            match verdict {
                Verdict::Shares { share } => r.verdict(
                    &quantity,
                    share,
                    SHARE_UNIT,
                    &format!("one array: evicted as by its own walk ({share:.2} of it; {levels})"),
                ),
                Verdict::Separate { share } => r.verdict(
                    &quantity,
                    share,
                    SHARE_UNIT,
                    &format!("separate arrays: left in place ({share:.2} of its own eviction; {levels})"),
                ),
                Verdict::NotIdentifiable(why) => {
                    r.text(&quantity, Some(&format!("not identifiable: {why}")));
                    r.settle(Reason::NotIdentifiable);
                }
            }
        }
    }
    if let Some(loads) = loads {
        let flag = if loads.verdict.starts_with("UNEXPECTED") {
            " (UNEXPECTED)"
        } else {
            ""
        };
        let named: Vec<&str> = loads.loads.keys().map(String::as_str).collect();
        // Read from cache.json, where the run recorded the probe's SASS.
        r.from("cache.json");
        r.key("cache/storage/loads".into()).text(
            "shared storage: the probe's load instructions (SASS)",
            Some(&format!("{}{flag}", named.join(", "))),
        );
        r.from(FILE);
    }
    for x in ProbePath::ALL.map(name) {
        let own = |passes: u32| {
            rows.iter()
                .filter(|r| r.fill == x && r.evict == x && r.fill_passes == passes)
                .max_by_key(|r| r.evict_bytes)
        };
        let base = rows
            .iter()
            .find(|r| r.fill == x && r.evict == "none" && r.fill_passes == FILL_PASSES);
        let (Some(twice), Some(once), Some(base)) = (own(2), own(FILL_PASSES), base) else {
            continue;
        };
        r.key(format!("cache/storage/{x}/kept"));
        r.labelled(
            &format!(
                "shared storage: {} lines walked twice, then its own walk of {}",
                words(x),
                crate::report::plot::binary_bytes(f64::from(twice.evict_bytes))
            ),
            Some(twice.cycles_per_load),
            "cycles",
            format!(
                "median of {} launches; {:.1} untouched, {:.1} walked once then evicted",
                twice.launches, base.cycles_per_load, once.cycles_per_load
            ),
        );
    }
    Ok(r.finish())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each path's own load must be in the probe's SASS; the switch's jump table (an `LDC` of
    /// bank 2) is not the constant path's.
    #[test]
    fn the_probe_loads_are_read_per_path_and_a_missing_one_is_named() {
        let sass = |lines: &[&str]| {
            let mut text = "\t\tFunction : storage_probe\n".to_string();
            for (i, line) in lines.iter().enumerate() {
                text += &format!("        /*{:04x}*/ {line} ;\n", 16 * i);
            }
            text
        };
        let every = [
            "LDC R1, c[0x0][0x28]",
            "LDG.E R7, desc[UR8][R4.64]",
            "LDG.E.CONSTANT R7, desc[UR8][R6.64]",
            "TLD.LZ RZ, R7, R7, UR4, 0x0, 1D, 0x1",
            "LDC R7, c[0x3][R7]",
            "LDC R4, c[0x2][R3]",
        ];
        let loads = ProbeLoads::of(&sass(&every), "sm_90").unwrap();
        assert!(loads.verdict.starts_with("as expected"), "{loads:?}");
        assert_eq!(loads.loads.get("LDC c[0x3]"), Some(&1));
        assert!(!loads.loads.keys().any(|l| l.contains("c[0x0]")));
        // No texture load, and only the jump table's LDC: two paths not measured.
        let fewer = [every[0], every[1], every[2], every[5]];
        let loads = ProbeLoads::of(&sass(&fewer), "sm_90").unwrap();
        assert_eq!(
            loads.verdict,
            "UNEXPECTED: no load of its own for texture (tex.1d), constant (LDC): the probe does not measure that path"
        );
        assert!(ProbeLoads::of("\t\tFunction : chase_global\n", "sm_90").is_none());
    }

    fn row(fill: &str, evict: &str, bytes: u32, cycles: [f64; 3]) -> Row {
        Row {
            fill: fill.into(),
            fill_passes: FILL_PASSES,
            evict: evict.into(),
            evict_bytes: bytes,
            fill_bytes: 16 << 10,
            cycles_per_load: cycles[0],
            cycles_min: cycles[1],
            cycles_max: cycles[2],
            launches: 3,
        }
    }

    #[test]
    fn the_plan_sets_every_other_walk_beside_xs_own_walk_of_a_size_x_can_make() {
        let plan = plan();
        // Per global path: untouched, its own walks of both sizes, three others, and its own
        // walk after two fill walks; the constant path walks its own 63 KiB only.
        assert_eq!(plan.len(), 3 * (1 + 2 + 3 + 1) + (1 + 1 + 3 + 1));
        for x in ProbePath::ALL {
            for y in ProbePath::ALL.into_iter().filter(|&y| y != x) {
                let cross = plan.iter().find(|p| p.0 == x && p.1 == Some(y)).unwrap().2;
                assert!(plan.iter().any(|p| p.0 == x
                    && p.1 == Some(x)
                    && p.2 == cross.min(evict_bytes(x))
                    && p.3 == FILL_PASSES));
            }
        }
    }

    #[test]
    fn a_walk_that_evicts_as_xs_own_shares_and_one_that_does_not_is_separate() {
        let rows = vec![
            row("l1", "none", 0, [40.0, 39.0, 41.0]),
            row("l1", "l1", BUFFER_EVICT, [300.0, 299.0, 301.0]),
            row("l1", "l1", CONSTANT_EVICT, [45.0, 44.0, 46.0]),
            row("l1", "texture", BUFFER_EVICT, [295.0, 290.0, 298.0]),
            row("l1", "readonly", BUFFER_EVICT, [42.0, 41.0, 44.0]),
            row("l1", "constant", CONSTANT_EVICT, [41.0, 40.0, 42.0]),
            row("l1", "bad", BUFFER_EVICT, [170.0, 60.0, 280.0]),
        ];
        let (texture, levels) = verdict(&rows, "l1", "texture").unwrap();
        assert!(matches!(texture, Verdict::Shares { share } if (share - 255.0 / 260.0).abs() < 1e-9));
        assert_eq!(levels, [40.0, 300.0, 295.0]);
        assert!(matches!(verdict(&rows, "l1", "readonly").unwrap().0, Verdict::Separate { .. }));
        // The constant walk is set beside the L1's own walk of 63 KiB, which leaves the lines:
        // nothing to tell.
        let (constant, levels) = verdict(&rows, "l1", "constant").unwrap();
        assert!(matches!(constant, Verdict::NotIdentifiable(ref why) if why.contains("63 KiB")));
        assert_eq!(levels[1], 45.0);
        // Launches on both sides of the midpoint tell nothing.
        assert!(matches!(verdict(&rows, "l1", "bad").unwrap().0, Verdict::NotIdentifiable(ref why) if why.contains("both sides")));
        assert!(verdict(&rows, "texture", "l1").is_none());
    }

    #[test]
    fn the_summary_states_each_pair_and_leaves_the_unidentifiable_unresolved() {
        let dir = tempfile::tempdir().unwrap();
        let mut out = csv::Writer::from_path(dir.path().join(FILE)).unwrap();
        for r in [
            row("constant", "none", 0, [30.0, 30.0, 30.0]),
            row("constant", "constant", CONSTANT_EVICT, [90.0, 90.0, 90.0]),
            row("constant", "l1", BUFFER_EVICT, [31.0, 31.0, 31.0]),
            row("constant", "readonly", BUFFER_EVICT, [88.0, 87.0, 89.0]),
            row("constant", "texture", BUFFER_EVICT, [60.0, 20.0, 100.0]),
        ] {
            out.serialize(r).unwrap();
        }
        out.flush().unwrap();
        let figures = figures(dir.path(), None, None).unwrap();
        assert_eq!(figures.len(), 3);
        assert_eq!(figures[0].key, "cache/storage/constant/l1");
        assert!(figures[0].text.as_deref().unwrap().starts_with("separate arrays"));
        assert!(figures[1].text.as_deref().unwrap().starts_with("one array"));
        // The verdict's number, which the core reads: the share of the own slowdown.
        assert!((figures[0].value.unwrap() - 1.0 / 60.0).abs() < 1e-9);
        assert!((figures[1].value.unwrap() - 58.0 / 60.0).abs() < 1e-9);
        assert_eq!(figures[1].unit, SHARE_UNIT);
        for (path, name) in ProbePath::ALL.into_iter().zip(["l1", "readonly", "texture", "constant"]) {
            assert_eq!(super::name(path), name);
        }
        assert!(!figures[0].is_unresolved() && !figures[1].is_unresolved());
        assert!(figures[2].is_unresolved());
        assert!(figures_of_nothing().is_empty());

        // Where the probe's SASS has no L1 load, the verdict naming the L1 is not stated, and
        // the loads are a row of their own, flagged.
        let loads = ProbeLoads::of(
            "\t\tFunction : storage_probe\n /*0000*/ LDG.E.CONSTANT R7, desc[UR8][R6.64] ;\n /*0010*/ TLD.LZ RZ, R7, R7, UR4, 0x0, 1D, 0x1 ;\n /*0020*/ LDC R7, c[0x3][R7] ;\n",
            "sm_90",
        )
        .unwrap();
        let figures = super::figures(dir.path(), Some(&loads), None).unwrap();
        assert_eq!(figures.len(), 4);
        assert!(figures[0].is_unresolved());
        assert!(figures[0].text.as_deref().unwrap().contains("no load of the L1 (ld.global) path's own"));
        assert!(!figures[1].is_unresolved());
        assert_eq!(figures[3].key, "cache/storage/loads");
        assert!(figures[3].source.ends_with("cache.json"), "{}", figures[3].source);
        assert!(figures[3].text.as_deref().unwrap().ends_with(" (UNEXPECTED)"));
    }

    fn figures_of_nothing() -> Vec<Figure> {
        let empty = tempfile::tempdir().unwrap();
        let skipped = figures(empty.path(), None, Some("no texture objects")).unwrap();
        assert_eq!(skipped.len(), 1);
        assert_eq!(skipped[0].key, "cache/storage/skipped");
        assert_eq!(
            skipped[0].text.as_deref(),
            Some("not measured: no texture objects")
        );
        figures(empty.path(), None, None).unwrap()
    }
}
