//! The architecture summary of a run directory, laid out like Wong et al.'s Table V: one row per
//! inferred figure with its uncertainty (a 95 % CI, a min–max range or an inference
//! confidence) and the file it came from, the device in the caption, and the wall time of
//! every suite. Each suite's rows come from its `figures.json` (written as it finished), or are
//! derived again from its own JSON files by its registered suite (`report` always derives, and
//! the committed runs prove both ways give the same bytes). Rendered as `summary.md`,
//! `summary.tex` and `summary.json`; `index.md` links every figure.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use crate::error::{UsageError, bail_usage};
use anyhow::{Context, Result};

use super::figures::FiguresFile;
use super::metadata::{SavedMetadata, or_unknown};

pub use super::figures::Figure;

mod render;

#[cfg(test)]
use render::table_rows;

pub mod model;

pub use crate::report::text::{format_value, latex_escape, markdown_cell, markdown_text};
pub use model::{AllManifest, SuiteTiming, Summary};
pub use render::{render_index, render_latex, render_markdown};

/// The suite directories of `dir`: itself when it is one run, else its sub-directories with a
/// metadata.json, in the manifest's order where `all.json` gives one.
pub fn suite_dirs(dir: &Path) -> Result<Vec<(String, PathBuf)>> {
    if dir.join("metadata.json").is_file() {
        let name = dir
            .file_name()
            .map_or("run".into(), |n| n.to_string_lossy().into_owned());
        return Ok(vec![(name, dir.to_path_buf())]);
    }
    if let Some(manifest) = read_manifest(dir)? {
        // Names read from a file are data: a name that is not one plain directory name would
        // send `report` outside its output directory.
        if let Some(bad) = manifest.suites.iter().find(|s| !plain_name(&s.name)) {
            bail_usage!(
                "{} names a suite {:?}, which is not a plain directory name; the run directory is damaged",
                dir.join("all.json").display(),
                bad.name
            );
        }
        let all = dir.join("all.json");
        if manifest.suites.is_empty() {
            bail_usage!(
                "{} lists no suite; the run directory is damaged",
                all.display()
            );
        }
        // Each suite once, and every suite on disk listed: a suite listed twice would be
        // summarised twice, one left out would vanish without a word.
        let mut listed = std::collections::HashSet::new();
        if let Some(twice) = manifest
            .suites
            .iter()
            .map(|s| &s.name)
            .find(|name| !listed.insert(name.as_str()))
        {
            bail_usage!(
                "{} lists the suite {twice} more than once; the run directory is damaged",
                all.display()
            );
        }
        let mut on_disk: Vec<String> = std::fs::read_dir(dir)
            .with_context(|| format!("cannot read {}", dir.display()))?
            .filter_map(|e| e.ok())
            .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
            .filter(|e| e.path().join("metadata.json").is_file())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        on_disk.sort();
        if let Some(unlisted) = on_disk.iter().find(|name| !listed.contains(name.as_str())) {
            bail_usage!(
                "{} holds the suite run {}, which {} does not list; the run directory is damaged",
                dir.display(),
                dir.join(unlisted).display(),
                all.display()
            );
        }
        // A suite the manifest records complete is on disk as a directory (not a link) with
        // its metadata.json: else its figures would vanish from the summary while the table
        // of suites still says "complete".
        for suite in manifest.suites.iter().filter(|s| s.status == "complete") {
            let path = dir.join(&suite.name);
            let why = match std::fs::symlink_metadata(&path) {
                Err(_) => Some("is missing"),
                Ok(m) if !m.is_dir() => Some("is not a directory"),
                Ok(_) if !path.join("metadata.json").is_file() => Some("has no metadata.json"),
                Ok(_) => None,
            };
            if let Some(why) = why {
                bail_usage!(
                    "{} records the suite {} as complete, but {} {why}; the run directory is damaged",
                    all.display(),
                    suite.name,
                    path.display()
                );
            }
        }
        return Ok(manifest
            .suites
            .iter()
            .map(|s| (s.name.clone(), dir.join(&s.name)))
            .filter(|(_, path)| path.join("metadata.json").is_file())
            .collect());
    }
    let mut found: Vec<(String, PathBuf)> = std::fs::read_dir(dir)
        .with_context(|| format!("cannot read {}", dir.display()))?
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| p.join("metadata.json").is_file())
        .map(|p| (p.file_name().unwrap().to_string_lossy().into_owned(), p))
        .collect();
    found.sort();
    if found.is_empty() {
        return Err(no_run_in(dir));
    }
    one_run(dir, &found)?;
    Ok(found)
}

/// The refusal of a directory with no suite run in it or its sub-directories: where it only
/// wraps runs one level further down (a folder of a run and its notes), the runs to pass.
fn no_run_in(dir: &Path) -> anyhow::Error {
    let mut inside: Vec<String> = std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .filter_map(|e| e.ok())
                .map(|e| e.path())
                .filter(|p| p.is_dir())
                .filter(|p| {
                    p.join("all.json").is_file()
                        || p.join("devices.json").is_file()
                        || std::fs::read_dir(p).is_ok_and(|mut sub| {
                            sub.any(|e| e.is_ok_and(|e| e.path().join("metadata.json").is_file()))
                        })
                })
                .map(|p| p.display().to_string())
                .collect()
        })
        .unwrap_or_default();
    inside.sort();
    match inside.len() {
        0 => anyhow::anyhow!(
            "{} holds no gpubench run (no metadata.json in it or its sub-directories)",
            dir.display()
        ),
        _ => UsageError::new(format!(
            "{} is not a run directory but holds {}: {}; pass {}",
            dir.display(),
            if inside.len() == 1 { "one" } else { "several" },
            inside.join(", "),
            if inside.len() == 1 {
                "that"
            } else {
                "one of them"
            }
        ))
        .into(),
    }
}

/// Refuses suite runs `found` under `dir` (with no all.json) that are not one run: written by
/// more than one gpubench build or on more than one GPU, they would be summarised as if one
/// run had measured them all.
fn one_run(dir: &Path, found: &[(String, PathBuf)]) -> Result<()> {
    let mut runs: Vec<(String, Vec<&str>)> = Vec::new();
    for (name, path) in found {
        let metadata = crate::report::metadata::SavedMetadata::read(path)?;
        let key = format!(
            "{} on {}",
            short_commit(&metadata.build.git_commit),
            metadata.device.name
        );
        match runs.iter_mut().find(|(k, _)| *k == key) {
            Some((_, names)) => names.push(name),
            None => runs.push((key, vec![name])),
        }
    }
    if runs.len() < 2 {
        return Ok(());
    }
    Err(UsageError::new(format!(
        "{} holds suite runs of {} gpubench builds or GPUs ({}), not one run; pass one run directory (a directory with all.json, or one suite's)",
        dir.display(),
        runs.len(),
        runs.iter()
            .map(|(key, names)| format!("{}: {key}", names.join(" ")))
            .collect::<Vec<_>>()
            .join("; ")
    ))
    .into())
}

/// A commit as the runs' captions shorten it.
fn short_commit(commit: &str) -> &str {
    commit.get(..12).unwrap_or(commit)
}

/// Whether `name` is one ordinary path component (no separator, not `.` or `..`, not empty).
pub fn plain_name(name: &str) -> bool {
    let mut components = Path::new(name).components();
    matches!(
        (components.next(), components.next()),
        (Some(std::path::Component::Normal(_)), None)
    ) && !name.contains('/')
}

fn read_manifest(dir: &Path) -> Result<Option<AllManifest>> {
    let manifest: Option<AllManifest> = super::saved::read_json_optional(dir, "all.json")?;
    if let Some(format) = manifest.as_ref().and_then(|m| m.format) {
        let file = dir.join("all.json").display().to_string();
        if let Some(why) = super::formats::too_new(&file, format, None) {
            return Err(UsageError::new(why).into());
        }
    }
    Ok(manifest)
}

/// A complete suite's figures: its `figures.json` where `saved` allows and it has one, or
/// where it kept nothing else ([`super::figures::figures_only`]); else derived from its own
/// files by its registered suite. Sources get the directory's name.
fn figures_of(
    metadata: &SavedMetadata,
    name: &str,
    dir: &Path,
    saved: bool,
    derive: Derive,
) -> Result<Vec<Figure>> {
    let file: Option<FiguresFile> = if saved || super::figures::figures_only(dir) {
        super::saved::read_json_optional(dir, super::figures::FILE)?
    } else {
        None
    };
    let read_back = file.is_some();
    let mut figures = match file {
        Some(file) => file.figures,
        None => derive(&metadata.suite, dir)?,
    };
    // Each figure once: a row written twice would be summarised twice. (Two figures may share
    // a name: a format-1 bandwidth run has two copy fall-offs, at different sizes.)
    let mut seen = std::collections::HashSet::new();
    for figure in &figures {
        let row = serde_json::to_string(figure).context("serialising a figure")?;
        if !seen.insert(row) {
            let file = dir.join(if read_back {
                super::figures::FILE
            } else {
                &figure.source
            });
            bail_usage!(
                "{}: the figure \"{}: {}\" appears twice; gpubench writes each figure once, so the file is damaged or was edited",
                file.display(),
                figure.section,
                figure.quantity
            );
        }
    }
    // Nothing outside its domain is summarised: the file it came from is named instead.
    for figure in &figures {
        if let Some(why) = super::domain::violation_in(figure, metadata.format()) {
            let file = dir.join(if read_back {
                super::figures::FILE
            } else {
                &figure.source
            });
            return Err(
                UsageError::new(super::domain::refusal(&file.display().to_string(), &why)).into(),
            );
        }
    }
    for figure in &mut figures {
        figure.source = format!("{name}/{}", figure.source);
    }
    // Another program on the GPU while the suite measured: none of its numbers stands.
    if let Some(shared) = metadata.shared() {
        for figure in &mut figures {
            figure.mark_unresolved(super::figures::Reason::SharedGpu, &shared);
        }
    }
    Ok(figures)
}

fn caption(metadata: &SavedMetadata) -> String {
    let d = &metadata.device;
    let b = &metadata.build;
    format!(
        "{} (CC {}, {} SMs), driver {} (CUDA {}), SM clock {:.0} MHz measured; kernels from {} as {}; gpubench {} ({}); {}",
        or_unknown(&d.name),
        or_unknown(&d.compute_capability),
        d.multiprocessors,
        d.driver_version.as_deref().unwrap_or("?"),
        or_unknown(&d.driver_cuda_version),
        metadata.sm_clock_before.mhz.unwrap_or(f64::NAN),
        b.nvcc_version.rsplit(", ").next().map_or("?", or_unknown),
        or_unknown(&b.ptx_target),
        or_unknown(&b.gpubench_version),
        or_unknown(&b.git_commit.chars().take(12).collect::<String>()),
        metadata.started_utc.get(..10).unwrap_or("?"),
    )
}

/// Marks every figure of `summary` that `repeat` does not confirm (`compare::differs` with the
/// default tolerances) as unresolved, naming the other run's value and how far apart they are.
/// A figure the repeat lacks is left as it is.
pub fn confirm_by_repeat(summary: &mut Summary, repeat: &Summary, repeat_name: &str) -> usize {
    let tolerances = super::compare::Tolerances::default();
    let mut moved = 0;
    for figure in &mut summary.figures {
        let Some(other) = repeat.figures.iter().find(|o| o.key == figure.key) else {
            continue;
        };
        if let Some(why) = super::compare::differs(figure, other, &tolerances) {
            let mut mark = format!("did not repeat: {} in {repeat_name}", other.value_text());
            if !why.is_empty() {
                mark += &format!(" ({why})");
            }
            figure.uncertainty = if figure.uncertainty.is_empty() {
                mark
            } else {
                format!("{mark}; {}", figure.uncertainty)
            };
            figure.settle(super::figures::Reason::DidNotRepeat);
            moved += 1;
        }
    }
    moved
}

/// A suite's figures derived from its own files, by the suite's name: the registry's, handed
/// down by the caller so that the report layer need not know the suites.
pub type Derive = fn(suite: &str, dir: &Path) -> Result<Vec<Figure>>;

/// Reads every suite of `dir` into one summary, each suite's figures from its `figures.json`
/// (by `derive` for runs that have none).
pub fn summarise(dir: &Path, derive: Derive) -> Result<Summary> {
    summarise_with(dir, true, derive)
}

/// [`summarise`], deriving every suite's figures from its own files again.
pub fn summarise_from_files(dir: &Path, derive: Derive) -> Result<Summary> {
    summarise_with(dir, false, derive)
}

fn summarise_with(dir: &Path, saved_figures: bool, derive: Derive) -> Result<Summary> {
    let mut figures = Vec::new();
    let mut suites = Vec::new();
    let mut first_metadata = None;
    let manifest = read_manifest(dir)?;
    for (name, path) in suite_dirs(dir)? {
        crate::input::check_json_in(&path)?;
        let metadata = SavedMetadata::read(&path)?;
        if metadata.complete() {
            figures.extend(
                figures_of(&metadata, &name, &path, saved_figures, derive)
                    .with_context(|| format!("summarising {}", path.display()))?,
            );
        }
        // The manifest knows how a suite ended even when the suite could not say (killed at
        // its deadline, its metadata still "running").
        let listed = manifest
            .as_ref()
            .and_then(|m| m.suites.iter().find(|s| s.name == name));
        // The manifest and the suite agree whether it completed (a suite killed at its
        // deadline may still say "running"; it may not say "complete").
        if let Some(listed) = listed
            && (listed.status == "complete") != metadata.complete()
        {
            bail_usage!(
                "{} records the suite {name} as {}, but {} says {}; the run directory is damaged",
                dir.join("all.json").display(),
                listed.status,
                path.join("metadata.json").display(),
                metadata.status
            );
        }
        suites.push(SuiteTiming {
            name,
            status: listed.map_or(metadata.status.clone(), |s| s.status.clone()),
            seconds: listed.and_then(|s| s.seconds).or(metadata.gpu_busy_seconds),
            error: listed
                .and_then(|s| s.error.clone())
                .or_else(|| metadata.error.clone()),
            time_split: listed.and_then(|s| s.time_split).or(metadata.time_split),
            throttled: metadata.nvml.throttled.clone(),
            parts: metadata
                .nvml
                .parts
                .iter()
                .map(|p| model::PartThrottling {
                    files: p.files.clone(),
                    throttled: p.throttled.clone(),
                })
                .collect(),
            shared: metadata.shared(),
        });
        if metadata.complete() && first_metadata.is_none() {
            first_metadata = Some(metadata);
        }
    }
    // Suites the manifest lists that never wrote a run directory (refused, or killed early).
    for listed in manifest.iter().flat_map(|m| &m.suites) {
        if !suites.iter().any(|t| t.name == listed.name) {
            suites.push(listed.clone());
        }
    }
    // The roofline is made of the figures above, so a repeat and `report` make it alike.
    if let Some(roofline) = super::roofline::of_figures(&figures) {
        let mut ridges = super::roofline::figures(&roofline);
        // Made of rates another process shared the GPU with: no more a figure than they are.
        let shared = figures.iter().find_map(|f| {
            f.unresolved
                .as_ref()
                .filter(|u| u.reason == super::figures::Reason::SharedGpu)
                .filter(|_| super::roofline::reads(f))
        });
        if let Some(shared) = shared {
            let detail = format!("made of rates measured on a shared GPU ({})", shared.detail);
            for ridge in &mut ridges {
                ridge.mark_unresolved(super::figures::Reason::SharedGpu, &detail);
            }
        }
        figures.extend(ridges);
    }
    Ok(Summary {
        format: first_metadata.as_ref().and_then(|m| m.format),
        caption: first_metadata
            .as_ref()
            .map_or("no complete suite".into(), caption),
        figures,
        conditions: first_metadata
            .as_ref()
            .map(|first| super::conditions::of_run(first, &suites))
            .unwrap_or_default(),
        suites,
        total_seconds: manifest.as_ref().and_then(|m| m.total_seconds),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::metadata::TimeSplit;

    #[test]
    fn values_print_as_a_paper_would() {
        assert_eq!(format_value(224704.0, "bytes"), "219 KiB");
        assert_eq!(format_value(50.0 * 1048576.0, "bytes"), "50 MiB");
        assert_eq!(format_value(38968.0 * 1024.0, "bytes"), "38.1 MiB");
        assert_eq!(format_value(4608.0, "bytes"), "4.50 KiB");
        assert_eq!(format_value(256.0, "bytes"), "256 B");
        assert_eq!(format_value(17179869184.0, "bytes"), "16 GiB");
        assert_eq!(format_value(13.0, "cycles"), "13 cycles");
        assert_eq!(format_value(4.3887, "cycles"), "4.39 cycles");
        assert_eq!(format_value(123.61, "ops/clock/SM"), "123.6 ops/clock/SM");
    }

    #[test]
    fn only_plain_names_from_a_manifest_become_directories() {
        assert!(plain_name("cache-l2"));
        for bad in ["../esc", "..", ".", "", "a/b", "/abs", "x/"] {
            assert!(!plain_name(bad), "{bad}");
        }
    }

    #[test]
    fn a_latency_and_its_throughput_share_one_row() {
        let figure = |section: &str, quantity: &str, value: f64, unit: &str| Figure {
            source: "p.json".into(),
            ..Figure::sample(section, quantity, Some(value), unit, "")
        };
        let figures = [
            figure("Pipeline", "fp32 add latency", 4.23, "cycles"),
            figure("Pipeline", "fp32 add throughput", 124.2, "ops/clock/SM"),
            figure("Pipeline", "fp64 add latency", 8.2, "cycles"),
            figure("Other", "fp64 add throughput", 1.0, "x"),
        ];
        let rows = table_rows(&figures);
        let quantities: Vec<&str> = rows.iter().map(|r| r.quantity.as_str()).collect();
        assert_eq!(
            quantities,
            [
                "fp32 add: latency / throughput",
                "fp64 add latency",
                "fp64 add throughput"
            ]
        );
        assert_eq!(rows[0].value, "4.23 cycles / 124.2 ops/clock/SM");
        assert_eq!(rows[0].uncertainty, "");
        assert_eq!(rows[0].source, "p.json");
    }

    #[test]
    fn latex_special_characters_are_escaped() {
        assert_eq!(latex_escape("50% of a_b & c"), "50\\% of a\\_b \\& c");
        assert_eq!(latex_escape("x < y"), "x \\textless{} y");
    }

    #[test]
    fn the_time_table_splits_where_suites_recorded_a_split() {
        let suite = |name: &str, split: Option<TimeSplit>| SuiteTiming {
            shared: None,
            name: name.into(),
            status: "complete".into(),
            seconds: Some(2.0),
            error: None,
            time_split: split,
            throttled: None,
            parts: Vec::new(),
        };
        let split = TimeSplit {
            wall_seconds: 1.9,
            driver_start_seconds: 0.2,
            driver_start_overlapped_seconds: 0.1,
            waiting_for_gpu_seconds: 0.0,
            jit_seconds: 0.5,
            gpu_wait_seconds: 1.0,
            host_seconds: 0.2,
            setup_seconds: 0.1,
        };
        let summary = |suites| Summary {
            caption: "c".into(),
            suites,
            total_seconds: Some(4.0),
            ..Summary::of(vec![])
        };
        let with = render_markdown(&summary(vec![suite("a", Some(split)), suite("b", None)]));
        assert!(with.contains("| Suite | Status | Seconds | JIT | GPU | host | driver start |\n|---|---|---|---|---|---|---|\n"), "{with}");
        assert!(
            with.contains("| a | complete | 2.0 | 0.5 | 1.0 | 0.2 | 0.2 |\n"),
            "{with}"
        );
        assert!(
            with.contains("| b | complete | 2.0 | - | - | - | - |\n"),
            "{with}"
        );
        assert!(
            with.contains("| **whole run** | | **4.0** | | | | |\n"),
            "{with}"
        );
        let without = render_markdown(&summary(vec![suite("b", None)]));
        assert!(
            without
                .contains("| Suite | Status | Seconds |\n|---|---|---|\n| b | complete | 2.0 |\n"),
            "{without}"
        );
    }

    #[test]
    fn a_figure_a_repeat_does_not_confirm_is_unresolved() {
        let figure = |quantity: &str, value: f64| Figure {
            source: "atomics/atomics.json".into(),
            ..Figure::sample("Atomics", quantity, Some(value), "ops/clock", "")
        };
        let summary_of = Summary::of;
        let mut first = summary_of(vec![figure("storm", 4080.0), figure("steady", 131.0)]);
        let repeat = summary_of(vec![figure("storm", 949.3), figure("steady", 131.5)]);
        assert_eq!(confirm_by_repeat(&mut first, &repeat, "run 2"), 1);
        assert!(first.figures[0].is_unresolved());
        assert!(
            first.figures[0]
                .uncertainty
                .starts_with("did not repeat: 949.3 ops/clock in run 2"),
            "{}",
            first.figures[0].uncertainty
        );
        assert!(!first.figures[1].is_unresolved());
        let md = render_markdown(&first);
        let unresolved = md.split("## Unresolved").nth(1).unwrap();
        assert!(
            unresolved.contains("storm") && !unresolved.contains("steady"),
            "{md}"
        );
        // summary.json says the same of each row, and reads back as it was.
        let json = serde_json::to_value(&first).unwrap();
        let statuses: Vec<&str> = json["figures"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["status"].as_str().unwrap())
            .collect();
        assert_eq!(statuses, ["unresolved", "figure"]);
        let back: Summary = serde_json::from_value(json).unwrap();
        assert_eq!(back, first);
    }
}
