//! `gpubench report DIR`: re-makes every table and plot of a run directory from the files
//! its suites wrote, with no GPU, into a new directory (never over the originals). Each suite's
//! [`Suite::redraw`](crate::harness::Suite::redraw) sends its saved data through the same analysis and drawing
//! functions as the live run; the tables are derived again from each suite's own files (not
//! its `figures.json`) by `report::summary`, which `gpubench all` also uses, so they come out
//! byte-identical to the live run's when nothing was lost on the way. A suite committed with
//! only its `figures.json` (a repeat, kept small) gives its rows from there and no figures.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use super::registry;
use crate::cli::ReportArgs;
use crate::error::{UsageError, bail_usage};
use crate::harness::{Redraw, SavedRun};
use crate::report::metadata::SavedMetadata;
use crate::report::run_dir::{self, RunDir};
use crate::report::{roofline, summary};

/// summary.md, summary.tex, summary.json (from the `figures.json` of `source`'s suites) and
/// index.md (of the plots in `out`); a repeat `gpubench all --repeat` left in
/// `source/repeat` confirms the figures or moves them to the unresolved rows.
pub fn write_tables(source: &Path, out: &RunDir, plot_extension: &str, html: bool) -> Result<()> {
    let mut made = summary::summarise(source, registry::derive_figures)?;
    confirm(&mut made, own_repeat(source).as_deref())?;
    write_summary(&made, out, plot_extension)?;
    if html {
        let suites = summary::suite_dirs(source)?;
        write_page(&made, out, source, &suites)?;
    }
    Ok(())
}

/// `index.html` of `summary` into `out`, its plots the SVGs drawn there, its links to the
/// files of `source` within `out` (copied there where the run lies elsewhere).
fn write_page(
    summary: &summary::Summary,
    out: &RunDir,
    source: &Path,
    suites: &[(String, std::path::PathBuf)],
) -> Result<()> {
    let page = crate::report::html::page(
        summary,
        &crate::report::html::Sources {
            run: source,
            figures: out.path(),
            suites,
        },
    )?;
    out.write(crate::report::html::FILE, page.as_bytes())
}

/// The repeat `gpubench all --repeat` wrote inside `source`, if there is one.
fn own_repeat(source: &Path) -> Option<std::path::PathBuf> {
    let repeat = source.join(REPEAT);
    repeat.join("all.json").is_file().then_some(repeat)
}

/// Where `gpubench all --repeat` writes its second run, inside the first.
pub const REPEAT: &str = "repeat";

/// Marks what `repeat` (a second run of the same GPU) does not confirm in `made`.
fn confirm(made: &mut summary::Summary, repeat: Option<&Path>) -> Result<()> {
    let Some(repeat) = repeat else {
        return Ok(());
    };
    let other = summary::summarise(repeat, registry::derive_figures)
        .with_context(|| format!("summarising the repeat {}", repeat.display()))?;
    // A repeat confirms a run of the same GPU model written in the same format: another
    // model's figures differ because the GPU does, not because the run did not repeat.
    let format = |s: &summary::Summary| s.format.unwrap_or(crate::report::formats::UNRECORDED);
    if other.gpu() != made.gpu() || format(&other) != format(made) {
        bail_usage!(
            "--repeat-of {} is a run of {} in format {}, but the run reported is of {} in format {}; a repeat confirms a second run of the same GPU model, written in the same format",
            repeat.display(),
            other.gpu(),
            format(&other),
            made.gpu(),
            format(made)
        );
    }
    let name = repeat.file_name().map_or_else(
        || repeat.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    );
    let moved = summary::confirm_by_repeat(made, &other, &name);
    eprintln!(
        "{moved} figures that {} does not confirm are with the unresolved",
        repeat.display()
    );
    Ok(())
}

/// The hidden sibling a report of `--output NAME` is written into: `.NAME.partial-PID`, with
/// NAME cut short (at a character) where the whole would pass the 255 bytes a file name may
/// have, so that any name `--output` may have can be reported into.
pub(super) fn staging_name(name: &str, pid: u32) -> String {
    let tail = format!(".partial-{pid}");
    let budget = 255 - 1 - tail.len();
    let mut kept = 0;
    for (at, c) in name.char_indices() {
        if at + c.len_utf8() > budget {
            break;
        }
        kept = at + c.len_utf8();
    }
    format!(".{}{tail}", &name[..kept])
}

/// On SIGINT or SIGTERM, `staging` (a directory, or `export`'s file) and the `parents` made for
/// it are removed before the process ends as the signal would: an interrupted report leaves
/// nothing behind either. The
/// signals are blocked in this thread (and every thread it starts later) and taken by one
/// that waits for them, where removing a directory is safe (a handler could not).
pub(super) fn remove_on_interrupt(staging: PathBuf, parents: Vec<PathBuf>) {
    // SAFETY: sigset_t is plain data, filled by sigemptyset/sigaddset before use;
    // pthread_sigmask changes only this thread's mask.
    let set = unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, libc::SIGINT);
        libc::sigaddset(&mut set, libc::SIGTERM);
        libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
        set
    };
    std::thread::spawn(move || {
        let mut signal = 0;
        // SAFETY: sigwait reads the set and writes the signal taken.
        if unsafe { libc::sigwait(&set, &mut signal) } != 0 {
            return;
        }
        if std::fs::remove_dir_all(&staging).is_err() {
            let _ = std::fs::remove_file(&staging);
        }
        for dir in &parents {
            let _ = std::fs::remove_dir(dir);
        }
        // SAFETY: restores the default action and raises the signal in this thread, where it
        // is unblocked: the process ends as the signal would have ended it.
        unsafe {
            libc::signal(signal, libc::SIG_DFL);
            libc::pthread_sigmask(libc::SIG_UNBLOCK, &set, std::ptr::null_mut());
            libc::raise(signal);
        }
    });
}

/// The directories above `path` that do not exist yet, the deepest first.
pub(super) fn missing_parents(path: &std::path::Path) -> Vec<std::path::PathBuf> {
    path.ancestors()
        .skip(1)
        .filter(|a| !a.as_os_str().is_empty())
        .take_while(|a| std::fs::symlink_metadata(a).is_err())
        .map(std::path::Path::to_path_buf)
        .collect()
}

/// The summary [`write_tables`] writes, with every suite's figures derived again from its own
/// files, and those `repeat` (else the run's own repeat) does not confirm marked unresolved.
pub(super) fn tables_from_files(source: &Path, repeat: Option<&Path>) -> Result<summary::Summary> {
    if let Some(repeat) = repeat {
        let canonical = |p: &Path| p.canonicalize().unwrap_or_else(|_| p.to_path_buf());
        if canonical(repeat) == canonical(source) {
            bail_usage!(
                "--repeat-of {} is {} itself; a run cannot confirm its own figures, so pass a second run of the same GPU",
                repeat.display(),
                source.display()
            );
        }
    }
    let mut made = summary::summarise_from_files(source, registry::derive_figures)?;
    let own = own_repeat(source);
    confirm(&mut made, repeat.or(own.as_deref()))?;
    Ok(made)
}

fn write_summary(summary: &summary::Summary, out: &RunDir, plot_extension: &str) -> Result<()> {
    if let Some(made) = roofline::of_figures(&summary.figures) {
        out.write_csv(roofline::FILE, roofline::csv_rows(&made))?;
        let title = format!("Empirical roofline, {}", summary.gpu());
        out.write_plot("roofline", |path| roofline::draw(path, &title, &made))?;
    }
    let curated = crate::report::curated::tables(summary);
    out.write(
        crate::report::curated::MARKDOWN,
        crate::report::curated::render_markdown(&curated).as_bytes(),
    )?;
    out.write(
        crate::report::curated::LATEX,
        crate::report::curated::render_latex(&curated).as_bytes(),
    )?;
    out.write("summary.md", summary::render_markdown(summary).as_bytes())?;
    out.write("summary.tex", summary::render_latex(summary).as_bytes())?;
    out.write_json("summary.json", summary)?;
    out.write(
        "index.md",
        summary::render_index(out.path(), plot_extension)?.as_bytes(),
    )
}

pub fn run(args: &ReportArgs) -> Result<()> {
    crate::report::plot::set_style(args.plots.style());
    let extension = args.plots.extension();
    if !args.dir.is_dir() {
        bail_usage!(
            "{} is not a directory; pass a run directory written by gpubench",
            args.dir.display()
        );
    }
    let output = args
        .output
        .clone()
        .unwrap_or_else(|| run_dir::default_path(&format!("report-{extension}")));
    run_dir::check_new(&output)?;
    if args.dir.join("calibration.json").is_file() && !args.dir.join("metadata.json").is_file() {
        return redraw_calibration(&args.dir, &output);
    }
    if let Some(repeat) = &args.repeat_of
        && !repeat.is_dir()
    {
        bail_usage!(
            "--repeat-of {} is not a directory; pass a second run of the same GPU",
            repeat.display()
        );
    }
    let gpus = crate::report::devices::gpu_runs(&args.dir)
        .map_err(|e| UsageError::new(format!("{e:#}")))?;
    if gpus.is_some() && args.repeat_of.is_some() {
        bail_usage!(
            "{} holds several GPUs' runs and --repeat-of confirms one run; report one GPU's directory with --repeat-of, or the GPUs without it",
            args.dir.display()
        );
    }
    let suites = match gpus {
        Some(_) => Vec::new(),
        None => summary::suite_dirs(&args.dir).map_err(|e| UsageError::new(format!("{e:#}")))?,
    };
    let written = Written {
        extension,
        html: args.plots.html(),
    };
    staged(&output, "report", args.output.is_some(), |out| {
        match &gpus {
            None => {
                report_run(&args.dir, args.repeat_of.as_deref(), &suites, out, &written).map(|_| ())
            }
            Some(gpus) => report_gpus(gpus, out, &written),
        }
        .with_context(|| format!("nothing was written to {}", output.display()))
    })?;
    println!("tables and plots written to {}", output.display());
    Ok(())
}

/// A new directory of `kind` at `output`, written by `write` whole or not at all: everything
/// goes into a hidden sibling of `output` ([`staging_name`]) that is renamed into place once
/// `write` is done, so a failure, a refusal or SIGINT/SIGTERM leaves nothing behind (the
/// directories made above it included) and a second try is not refused as "already exists".
/// `report`, `calibrate` and `emulate` write so. `asked` says whether the user named `output`
/// (else a refusal to create it points to --output).
pub(super) fn staged(
    output: &Path,
    kind: &str,
    asked: bool,
    write: impl FnOnce(&RunDir) -> Result<()>,
) -> Result<()> {
    let name = output
        .file_name()
        .map_or(kind.into(), |n| n.to_string_lossy().into_owned());
    let staging = output.with_file_name(staging_name(&name, std::process::id()));
    let parents = missing_parents(output);
    remove_on_interrupt(staging.clone(), parents.clone());
    let unmake_parents = || {
        for dir in &parents {
            let _ = std::fs::remove_dir(dir);
        }
    };
    let out = RunDir::create(Some(&staging), kind).map_err(|e| {
        unmake_parents();
        if asked {
            e
        } else {
            UsageError::new(format!(
                "{e:#}; pass --output with a directory you can write"
            ))
            .into()
        }
    })?;
    if let Err(error) = write(&out) {
        let _ = std::fs::remove_dir_all(&staging);
        unmake_parents();
        return Err(error);
    }
    run_dir::publish(&staging, output)
}

/// What `report` draws: plots in one format, and the web pages or not.
struct Written<'a> {
    extension: &'a str,
    html: bool,
}

/// One run's tables and plots into `out`; its summary.
fn report_run(
    dir: &Path,
    repeat_of: Option<&Path>,
    suites: &[(String, std::path::PathBuf)],
    out: &RunDir,
    written: &Written,
) -> Result<summary::Summary> {
    // The tables first: a value outside its domain refuses the run before anything is drawn.
    let tables = tables_from_files(dir, repeat_of)?;
    draw_every_suite(dir, suites, out, written.extension)?;
    write_summary(&tables, out, written.extension)?;
    if written.html {
        write_page(&tables, out, dir, suites)?;
    }
    Ok(tables)
}

/// A fan-out's GPUs, each reported into its own directory of `out`, then `compare.md` of them
/// and, for a page, the fleet page linking each GPU's.
fn report_gpus(
    gpus: &[crate::report::devices::GpuRunDir],
    out: &RunDir,
    written: &Written,
) -> Result<()> {
    let mut runs = Vec::new();
    let mut incomplete = Vec::new();
    let started = std::time::Instant::now();
    for (done, gpu) in gpus.iter().enumerate() {
        // A fan-out of eight GPUs takes some ten seconds: say which GPU, and what is left by
        // the time the GPUs before it took each.
        let left = (done > 0).then(|| {
            let each = started.elapsed().as_secs_f64() / done as f64;
            format!(", about {:.0} s left", each * (gpus.len() - done) as f64)
        });
        eprintln!(
            "reporting GPU {} of {} ({}){}",
            done + 1,
            gpus.len(),
            gpu.name,
            left.unwrap_or_default()
        );
        if let Some(failed) = &gpu.failed {
            incomplete.push((gpu.name.clone(), failed.clone()));
        }
        if !gpu.path.is_dir() {
            continue;
        }
        let own = gpu
            .path
            .file_name()
            .context("a GPU's run directory has no name")?;
        let suites = match summary::suite_dirs(&gpu.path) {
            Ok(suites) => suites,
            // A GPU that failed before its first suite has nothing to report.
            Err(_) if gpu.failed.is_some() => continue,
            Err(e) => return Err(UsageError::new(format!("{e:#}")).into()),
        };
        let sub = RunDir::create(Some(&out.path().join(own)), "report")?;
        let tables = report_run(&gpu.path, None, &suites, &sub, written)
            .with_context(|| format!("reporting {}", gpu.name))?;
        runs.push((gpu.name.clone(), gpu.path.clone(), tables));
    }
    super::fleet::write_comparison(out, &runs, &incomplete, written.html, |dir| {
        let own = dir.file_name()?;
        Some(format!(
            "{}/{}",
            own.to_string_lossy(),
            crate::report::html::FILE
        ))
    })
}

/// The reliability diagram of a `gpubench calibrate` directory, drawn again from its
/// `reliability.csv`.
fn redraw_calibration(dir: &Path, output: &Path) -> Result<()> {
    #[derive(serde::Deserialize)]
    struct Settings {
        cases: u64,
        seed: u64,
    }
    #[derive(serde::Deserialize)]
    struct Study {
        settings: Settings,
    }
    let study: Study = crate::report::saved::read_json(dir, "calibration.json")?;
    let bins: Vec<crate::analysis::calibration::Bin> =
        crate::report::saved::read_csv(dir, "reliability.csv")?;
    let out = RunDir::create(Some(output), "report")?;
    let (cases, seed) = (study.settings.cases, study.settings.seed);
    let title = crate::report::calibration::draw_into(&out, cases, seed, &bins)?;
    if let Some(families) = crate::report::calibration_families::of_study(dir)? {
        crate::report::calibration_families::write_and_draw(&out, &title, &families)?;
    }
    println!("reliability diagram written to {}", output.display());
    Ok(())
}

/// Re-draws the plots of every complete suite of `suites` into `out`, and, for formats
/// LaTeX includes (PDF, PNG), `plots.tex` with one captioned LaTeX figure each.
fn draw_every_suite(
    dir: &Path,
    suites: &[(String, std::path::PathBuf)],
    out: &RunDir,
    extension: &str,
) -> Result<()> {
    let mut drawn_by_suite: Vec<(String, SavedMetadata, Vec<String>)> = Vec::new();
    for (name, path) in suites {
        let metadata = SavedMetadata::read(path)?;
        if !metadata.complete() {
            println!("{name}: not complete, no plots");
            continue;
        }
        if crate::report::figures::figures_only(path) {
            println!(
                "{name}: only its figures.json was kept; its rows come from there, no figures"
            );
            continue;
        }
        // A single suite's directory is drawn into the output itself.
        let sub;
        let target = if path == dir {
            out
        } else {
            sub = RunDir::create(Some(&out.path().join(name)), "report")?;
            &sub
        };
        let mut drawn = Redraw::new(target, extension);
        registry::require(&metadata.suite)?
            .redraw(
                &SavedRun {
                    dir: path,
                    metadata: &metadata,
                },
                &mut drawn,
            )
            .with_context(|| format!("re-drawing {}", path.display()))?;
        println!(
            "{name}: {}",
            if drawn.drawn.is_empty() {
                "no plots".to_string()
            } else {
                drawn.drawn.join(", ")
            }
        );
        let suite_dir = if path == dir {
            String::new()
        } else {
            name.clone()
        };
        drawn_by_suite.push((suite_dir, metadata, drawn.drawn));
    }
    write_plots_tex(out, extension, &drawn_by_suite)
}

/// `plots.tex` for formats LaTeX includes (PDF, PNG): one captioned LaTeX figure per file of
/// `drawn` (suite directory inside `out`, its metadata, its plot files).
pub fn write_plots_tex(
    out: &RunDir,
    extension: &str,
    drawn: &[(String, SavedMetadata, Vec<String>)],
) -> Result<()> {
    if extension == "svg" {
        return Ok(());
    }
    use crate::report::plot::{PlotWidth, style};
    let page_wide = style().width == PlotWidth::Page;
    let mut figures = Vec::new();
    for (suite_dir, metadata, files) in drawn {
        let about = registry::require(&metadata.suite)?.about();
        for file in files {
            figures.push(crate::report::plots_tex::DrawnPlot {
                suite_dir,
                file,
                metadata,
                about,
            });
        }
    }
    out.write(
        "plots.tex",
        crate::report::plots_tex::render(&figures, page_wide).as_bytes(),
    )
}

/// `gpubench compare DIR…`: the runs' summaries side by side, flagged against the first run
/// or, with `--fleet`, against the fleet's median (`report::compare`).
pub fn compare(args: &crate::cli::CompareArgs) -> Result<()> {
    use crate::cli::CompareFormat;
    use crate::report::compare::{self, Format, Tolerances};
    let mut tolerances = Tolerances::default();
    for argument in &args.tolerance {
        tolerances.set(argument).map_err(UsageError::new)?;
    }
    let named = super::fleet::expand(&args.dirs)?;
    let fleet = args.fleet.then_some(args.k);
    if named.dirs.len() < 2 || (fleet.is_some() && named.dirs.len() < 3) {
        bail_usage!(
            "{} runs given: compare needs two at least, --fleet three at least",
            named.dirs.len()
        );
    }
    if !(args.k.is_finite() && args.k > 0.0) {
        bail_usage!("--k must be a positive number of standard deviations");
    }
    let runs = super::fleet::summaries(&named)?;
    // A tolerance for a unit no figure is in would change nothing, silently: a typo.
    for argument in &args.tolerance {
        let Some((unit, _)) = argument.rsplit_once('=') else {
            continue;
        };
        let unit = unit.trim();
        let mut units: Vec<&str> = runs
            .iter()
            .flat_map(|(_, _, s)| s.figures.iter().map(|f| f.unit.as_str()))
            .filter(|u| !u.is_empty())
            .collect();
        units.sort_unstable();
        units.dedup();
        let any = runs
            .iter()
            .any(|(_, _, s)| s.figures.iter().any(|f| f.unit == unit));
        if !any {
            bail_usage!(
                "--tolerance {argument}: no figure of the runs given is in {unit:?} (their units: {})",
                units.join(", ")
            );
        }
    }
    if runs.len() < 2 || (fleet.is_some() && runs.len() < 3) {
        let failed: Vec<&str> = named.incomplete.iter().map(|(n, _)| n.as_str()).collect();
        bail_usage!(
            "only {} of the runs given have figures ({} failed: {}); compare needs two at least, --fleet three at least",
            runs.len(),
            failed.len(),
            failed.join(", ")
        );
    }
    let comparison = super::fleet::compare_runs(&runs, &tolerances, fleet);
    let incomplete = named.incomplete;
    let format = match (args.latex, args.format) {
        (true, _) | (_, CompareFormat::Latex) => Format::Latex,
        (_, CompareFormat::Markdown) => Format::Markdown,
        (_, CompareFormat::Csv) => Format::Csv,
        (_, CompareFormat::Json) => Format::Json,
        (_, CompareFormat::Html) => {
            // Each run's own page is linked where it lies beside the run, as the path was given.
            let page = super::fleet::page(&runs, &comparison, &incomplete, |dir| {
                let own = dir.join(crate::report::html::FILE);
                own.is_file().then(|| own.display().to_string())
            })?;
            print!("{page}");
            return Ok(());
        }
    };
    let notes: Vec<String> = incomplete
        .iter()
        .map(|(name, failed)| format!("{name} did not complete: {failed}"))
        .collect();
    match format {
        // Machine-read formats stay parseable: the GPUs that failed go to stderr.
        Format::Csv | Format::Json => notes.iter().for_each(|n| eprintln!("{n}")),
        Format::Markdown => notes.iter().for_each(|n| println!("**{n}**\n")),
        Format::Latex => notes.iter().for_each(|n| println!("% {n}")),
    }
    print!("{}", compare::render(&comparison, format)?);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_staging_name_of_any_output_name_is_a_name_a_file_may_have() {
        assert_eq!(staging_name("out", 42), ".out.partial-42");
        for name in [
            "r".repeat(255),
            "é".repeat(127),
            format!("{}é", "r".repeat(253)),
        ] {
            for pid in [1, 4_194_304] {
                let staging = staging_name(&name, pid);
                assert!(staging.len() <= 255, "{}", staging.len());
                assert!(staging.ends_with(&format!(".partial-{pid}")));
                assert!(name.starts_with(&staging[1..staging.len() - 9 - pid.to_string().len()]));
            }
        }
    }
}
