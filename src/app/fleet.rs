//! Several GPUs' runs read together: the run directories behind `compare`'s arguments (a
//! fan-out's `devices.json` stands for its GPUs), their summaries, and the fleet page
//! (`report::fleet`) that `compare --format html`, `report` of a fan-out and
//! `all --device all --format html` write, with the odd figures' curves drawn over each other.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use super::registry;
use crate::error::{UsageError, bail_usage};
use crate::report::compare::{self, Comparison, Tolerances};
use crate::report::fleet::{self, Member, Overlays};
use crate::report::metadata::SavedMetadata;
use crate::report::summary::{self, Summary};

/// The runs named on a command line, a fan-out's GPUs in its place.
pub struct Named {
    /// Each run's name and directory, in order.
    pub dirs: Vec<(String, PathBuf)>,
    /// GPUs of a fan-out that did not complete, with what their manifest says.
    pub incomplete: Vec<(String, String)>,
}

/// The run directories `dirs` stand for: each itself, or a fan-out's GPUs.
pub fn expand(dirs: &[PathBuf]) -> Result<Named> {
    let mut named = Named {
        dirs: Vec::new(),
        incomplete: Vec::new(),
    };
    for dir in dirs {
        if !dir.is_dir() {
            bail_usage!(
                "{} is not a directory; pass run directories written by gpubench (of `all` or of one suite)",
                dir.display()
            );
        }
        match crate::report::devices::gpu_runs(dir)? {
            Some(runs) => {
                for run in runs {
                    if let Some(failed) = run.failed {
                        named.incomplete.push((run.name.clone(), failed));
                    }
                    if run.path.is_dir() {
                        named.dirs.push((run.name, run.path));
                    }
                }
            }
            None => named.dirs.push((dir.display().to_string(), dir.clone())),
        }
    }
    // A run given twice (or a fan-out and one of its GPUs) would stand beside itself, agree
    // with itself and count twice towards a fleet's median.
    let mut seen: Vec<(PathBuf, &Path)> = Vec::new();
    for (_, dir) in &named.dirs {
        let canonical = dir.canonicalize().unwrap_or_else(|_| dir.clone());
        if let Some((_, first)) = seen.iter().find(|(c, _)| *c == canonical) {
            bail_usage!(
                "{} and {} are the same directory; a run compared with itself agrees with itself, so pass each run once",
                first.display(),
                dir.display()
            );
        }
        seen.push((canonical, dir));
    }
    Ok(named)
}

/// The runs with figures, each with its summary (its `summary.json`, else derived from its
/// suites' files). A GPU that failed before any figure is left out; any other run without
/// figures is refused.
pub fn summaries(named: &Named) -> Result<Vec<(String, PathBuf, Summary)>> {
    let mut loaded = Vec::new();
    for (name, dir) in &named.dirs {
        let saved = dir.join("summary.json");
        let summary: Summary = if saved.is_file() {
            let summary: Summary = crate::report::saved::read_json(dir, "summary.json")
                .with_context(|| format!("{} is not a gpubench summary", saved.display()))?;
            let file = saved.display().to_string();
            let format = summary.format.unwrap_or(crate::report::formats::UNRECORDED);
            if let Some(why) = crate::report::formats::too_new(&file, format, None) {
                return Err(UsageError::new(why).into());
            }
            crate::report::domain::check(&summary.figures, &file, format)
                .map_err(UsageError::new)?;
            summary
        } else {
            summary::summarise(dir, registry::derive_figures)
                .map_err(|e| UsageError::new(format!("{e:#}")))?
        };
        if summary.figures.is_empty() && named.incomplete.iter().any(|(n, _)| n == name) {
            continue;
        }
        if summary.figures.is_empty() {
            bail_usage!(
                "{} has no figures (no suite in it completed), so there is nothing to compare",
                dir.display()
            );
        }
        loaded.push((name.clone(), dir.clone(), summary));
    }
    Ok(loaded)
}

/// The fleet page of `runs` (name, directory, summary) as `comparison` compares them; `page_of`
/// gives the link to a run's own page from where the fleet page will be, where it has one.
pub fn page(
    runs: &[(String, PathBuf, Summary)],
    comparison: &Comparison,
    incomplete: &[(String, String)],
    page_of: impl Fn(&Path) -> Option<String>,
) -> Result<String> {
    let mut members: Vec<Member> = runs
        .iter()
        .map(|(name, dir, summary)| Member {
            name: name.clone(),
            gpu: summary.gpu().to_string(),
            caption: summary.caption.clone(),
            page: page_of(dir),
            failed: None,
            conditions: summary
                .conditions
                .iter()
                .filter(|c| !c.ok)
                .map(|c| format!("{}: {}", c.what, c.found))
                .collect(),
        })
        .collect();
    for (name, failed) in incomplete {
        if let Some(member) = members.iter_mut().find(|m| m.name == *name) {
            member.failed = Some(failed.clone());
        }
    }
    let notes: Vec<String> = incomplete
        .iter()
        .filter(|(name, _)| !members.iter().any(|m| m.name == *name))
        .map(|(name, failed)| format!("{name} did not complete and has no figures: {failed}"))
        .collect();
    let overlays = overlays(runs, comparison)?;
    Ok(fleet::page(&members, comparison, &overlays, &notes))
}

/// For every suite an odd figure came from, its curves from every run over each other.
fn overlays(runs: &[(String, PathBuf, Summary)], comparison: &Comparison) -> Result<Vec<Overlays>> {
    let mut suites: Vec<&str> = Vec::new();
    for row in comparison.rows.iter().filter(|r| fleet::is_odd(r)) {
        if let Some(suite) = fleet::suite_of(row)
            && !suites.contains(&suite)
        {
            suites.push(suite);
        }
    }
    let mut made = Vec::new();
    for suite in suites {
        let mut missing = Vec::new();
        let mut curves = Vec::new();
        for (name, dir, _) in runs {
            match curves_of(&dir.join(suite)) {
                Ok(found) if found.is_empty() => {}
                Ok(found) => curves.push((name.clone(), found)),
                Err(e) => missing.push(format!("{name}: no curves ({e:#})")),
            }
        }
        let mut charts = Vec::new();
        for (title, lines) in crate::report::overlay::matched(&curves) {
            charts.push(crate::report::overlay::svg(&title, &lines)?);
        }
        made.push(Overlays {
            suite: suite.to_string(),
            charts,
            missing,
        });
    }
    Ok(made)
}

/// The curves the suite that wrote `dir` draws.
fn curves_of(dir: &Path) -> Result<Vec<crate::report::overlay::Curve>> {
    let metadata = SavedMetadata::read(dir)?;
    registry::require(&metadata.suite)?.curves(dir)
}

/// `runs` compared as `compare` compares them: against the first run, or as a fleet at
/// `fleet`'s threshold.
pub fn compare_runs(
    runs: &[(String, PathBuf, Summary)],
    tolerances: &Tolerances,
    fleet: Option<f64>,
) -> Comparison {
    let names: Vec<String> = runs.iter().map(|(n, _, _)| n.clone()).collect();
    let summaries: Vec<Summary> = runs.iter().map(|(_, _, s)| s.clone()).collect();
    compare::compare(&names, &summaries, tolerances, fleet)
}

/// `comparison` in Markdown, the GPUs that did not complete named above it.
fn markdown(comparison: &Comparison, incomplete: &[(String, String)]) -> Result<String> {
    let mut text = String::new();
    for (name, failed) in incomplete {
        text += &format!("**{name} did not complete: {failed}**\n\n");
    }
    Ok(text + &compare::render(comparison, compare::Format::Markdown)?)
}

/// A fan-out's GPUs side by side into `out`: `compare.md` (against the first GPU for two, the
/// odd ones out of three or more at compare's default threshold) and, with `html`, the fleet
/// page `index.html`, `page_of` linking each GPU's own page. Fewer than two GPUs with figures
/// leave nothing to compare and nothing is written.
pub fn write_comparison(
    out: &crate::report::run_dir::RunDir,
    runs: &[(String, PathBuf, Summary)],
    incomplete: &[(String, String)],
    html: bool,
    page_of: impl Fn(&Path) -> Option<String>,
) -> Result<()> {
    if runs.len() < 2 {
        return Ok(());
    }
    let fleet = (runs.len() >= 3).then_some(crate::cli::DEFAULT_FLEET_K);
    let comparison = compare_runs(runs, &Tolerances::default(), fleet);
    out.write("compare.md", markdown(&comparison, incomplete)?.as_bytes())?;
    if html {
        let page = page(runs, &comparison, incomplete, page_of)?;
        out.write(crate::report::html::FILE, page.as_bytes())?;
    }
    Ok(())
}

/// What a fan-out of `all` leaves at its top once its GPUs finish ([`write_comparison`]), each
/// GPU's page linked where its run wrote one.
pub fn write_for_fan_out(out: &crate::report::run_dir::RunDir, html: bool) -> Result<()> {
    let dir = out.path();
    let named = expand(&[dir.to_path_buf()])?;
    let runs = summaries(&named)?;
    write_comparison(out, &runs, &named.incomplete, html, |run| {
        let own = run.strip_prefix(dir).ok()?.join(crate::report::html::FILE);
        dir.join(&own).is_file().then(|| own.display().to_string())
    })
}
