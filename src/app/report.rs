//! `gpubench report DIR`: re-makes every table and figure of a run directory from the files
//! its suites wrote, with no GPU, into a new directory (never over the originals). Figures go
//! through the same analysis and drawing functions as the live run, fed by `report::saved`
//! loaders instead of the GPU; the tables come from `report::summary`, which `gpubench all`
//! also uses, so they are byte-identical to the live run's.

use std::path::Path;

use anyhow::{Context, Result};
use serde_json::Value;

use crate::analysis::{
    bank_conflicts, cache_inference, clock, divergence, divergence_model, pipeline, registers,
};
use crate::cli::{FigureFormat, ReportArgs};
use crate::error::UsageError;
use crate::report::metadata::plot_title_from;
use crate::report::run_dir::{self, RunDir};
use crate::report::saved::read_json;
use crate::report::{self as reports, saved, summary};

/// summary.md, summary.tex, summary.json (from `source`'s JSON files) and index.md (of the
/// figures in `out`).
pub fn write_tables(source: &Path, out: &RunDir, figure_extension: &str) -> Result<()> {
    let summary = summary::summarise(source)?;
    out.write("summary.md", summary::render_markdown(&summary).as_bytes())?;
    out.write("summary.tex", summary::render_latex(&summary).as_bytes())?;
    out.write_json("summary.json", &summary)?;
    out.write(
        "index.md",
        summary::render_index(out.path(), figure_extension)?.as_bytes(),
    )
}

pub fn run(args: &ReportArgs) -> Result<()> {
    let extension = match args.format {
        FigureFormat::Png => "png",
        FigureFormat::Svg => "svg",
    };
    if !args.dir.is_dir() {
        return Err(UsageError::new(format!(
            "{} is not a directory; pass a run directory written by gpubench",
            args.dir.display()
        ))
        .into());
    }
    let output = args
        .output
        .clone()
        .unwrap_or_else(|| args.dir.join(format!("report-{extension}")));
    run_dir::check_new(&output)?;
    let suites = summary::suite_dirs(&args.dir).map_err(|e| UsageError::new(format!("{e:#}")))?;
    let out = RunDir::create(Some(&output), "report")?;
    for (name, path) in &suites {
        let metadata = read_json(&path.join("metadata.json"))?;
        if metadata["status"] != "complete" {
            println!("{name}: not complete, no figures");
            continue;
        }
        // A single suite's directory is drawn into the output itself.
        let sub;
        let target = if path == &args.dir {
            &out
        } else {
            sub = RunDir::create(Some(&out.path().join(name)), "report")?;
            &sub
        };
        let drawn = redraw(&metadata, path, target, extension)
            .with_context(|| format!("re-drawing {}", path.display()))?;
        println!(
            "{name}: {}",
            if drawn.is_empty() {
                "no figures".to_string()
            } else {
                drawn.join(", ")
            }
        );
    }
    write_tables(&args.dir, &out, extension)?;
    println!("tables and figures written to {}", out.path().display());
    Ok(())
}

/// Re-draws one suite's figures into `out`; returns their file names.
fn redraw(metadata: &Value, dir: &Path, out: &RunDir, ext: &str) -> Result<Vec<String>> {
    let title = |what: &str| plot_title_from(what, metadata);
    let settings = &metadata["settings"];
    let mut drawn = Vec::new();
    let mut figure = |name: &str, draw: &dyn Fn(&Path) -> Result<()>| -> Result<()> {
        let file = format!("{name}.{ext}");
        out.write_with(&file, draw)?;
        drawn.push(file);
        Ok(())
    };
    match metadata["suite"].as_str().unwrap_or("") {
        "cache" => {
            let points = crate::experiments::cache::saved::load(&dir.join("chase.csv"))?;
            let space = settings["space"]
                .as_str()
                .and_then(crate::experiments::cache::Space::from_name)
                .unwrap_or(crate::experiments::cache::Space::Global);
            let report = cache_inference::infer_with(
                &points,
                crate::experiments::cache::RiseThreshold::of(space).minimum_rise(),
            )
            .context("chase.csv has too few points")?;
            let figure_title = title(&reports::cache_plot::title(
                settings["space"].as_str().unwrap_or("?"),
                settings["stride_bytes"].as_u64().unwrap_or(0),
                settings["threads"].as_u64().unwrap_or(1) as u32,
            ));
            figure("cache", &|p| {
                reports::cache_plot::draw(p, &figure_title, &points, &report)
            })?;
            if saved::find(dir, "conflict.csv").is_some() {
                let rows: Vec<crate::experiments::cache::conflict::ConflictRow> =
                    saved::read_csv(dir, "conflict.csv")?;
                let kept = crate::experiments::cache::conflict::points_from_rows(&rows);
                let line = match saved::find(dir, "strides.csv") {
                    Some(path) => {
                        let strides = crate::experiments::cache::saved::load(&path)?;
                        let pairs: Vec<(u64, f64)> =
                            strides.iter().map(|p| (p.stride_bytes, p.cycles)).collect();
                        crate::analysis::granularity::granularity(&pairs).map(|g| g.bytes)
                    }
                    None => None,
                };
                let analysis = crate::analysis::conflict::analyse(&kept, line);
                let conflict_title = title(&format!(
                    "{} conflict experiment",
                    settings["space"].as_str().unwrap_or("?")
                ));
                figure("conflict", &|p| {
                    reports::cache_plot::draw_conflict(p, &conflict_title, &kept, &analysis)
                })?;
            }
            if let Some(path) = saved::find(dir, "tlb_strides.csv") {
                let more = crate::experiments::cache::saved::load(&path)?;
                let every: Vec<_> = points.iter().chain(&more).copied().collect();
                let strides_title = title("TLB chase, one element per stride");
                figure("tlb_strides", &|p| {
                    reports::cache_plot::draw_by_stride(p, &strides_title, &every)
                })?;
            }
        }
        "slots" => {
            let rows: Vec<reports::slots::WorkloadRow> = saved::read_csv(dir, "slots.csv")?;
            let title = title(reports::slots::TITLE);
            figure("slots", &|p| reports::slots::draw(p, &title, &rows))?;
        }
        "shared" => {
            let points = saved::stride_points(dir)?;
            let fit = bank_conflicts::fit(&points);
            let title = title(reports::shared::TITLE);
            figure("shared", &|p| {
                reports::shared::draw(p, &title, &points, fit.as_ref())
            })?;
        }
        "pipeline" => {
            let sweep: Vec<pipeline::WarpPoint> = saved::read_csv(dir, "pipeline_warps.csv")?;
            let saturation = pipeline::saturation_warps(&sweep, 0.95);
            let swept = settings["sweep_op"].as_str().unwrap_or("f32_fma");
            let operation = crate::experiments::pipeline::OPERATIONS
                .iter()
                .find(|o| o.name == swept)
                .with_context(|| format!("unknown swept operation {swept}"))?;
            let title = title(&reports::pipeline::title(operation));
            figure("pipeline", &|p| {
                reports::pipeline::draw(p, &title, &sweep, saturation)
            })?;
        }
        "regs" => {
            let points = saved::register_points(dir)?;
            let register_file = metadata["device"]["registers_per_block"]
                .as_u64()
                .unwrap_or(65_536) as u32;
            let max_threads = 1024;
            let allocation = registers::infer(&points, register_file, max_threads);
            let title = title(reports::regs::TITLE);
            figure("regs", &|p| {
                reports::regs::draw(p, &title, &points, &allocation, register_file, max_threads)
            })?;
        }
        "clock" => {
            let stamps: Vec<clock::BlockStamp> = saved::read_csv(dir, "clock_scope.csv")?;
            let mhz = read_json(&dir.join("clock.json"))?["sm_clock"]["mhz"]
                .as_f64()
                .context("clock.json has no measured SM clock")?;
            let scope = clock::counter_scope(&stamps, mhz);
            let title = title(reports::clock::TITLE);
            figure("clock", &|p| {
                reports::clock::draw(p, &title, &stamps, scope.as_ref())
            })?;
        }
        "branch" => {
            let runs = saved::order_runs(dir, settings["seed"].as_u64().unwrap_or(1))?;
            let title = title(reports::branch::TITLE);
            figure("branch", &|p| reports::branch::draw(p, &title, &runs))?;
        }
        "divergence" => {
            let title = title(reports::divergence::TITLE);
            let summaries = saved::level_summaries(dir)?;
            let fits: Vec<divergence::CostFit> = ["single", "double"]
                .iter()
                .filter_map(|kernel| divergence::fit_cost(&summaries, kernel))
                .collect();
            figure("divergence", &|p| {
                reports::divergence::draw_plot(p, &title, &summaries, &fits)
            })?;
            let max_bound = settings["max_bound"].as_i64().unwrap_or(32) as i32;
            let levels =
                crate::experiments::divergence::saved::load(&dir.join("summary.csv"), max_bound)?;
            if let Ok(model) = divergence_model::analyze(&levels.single, &levels.double) {
                let curve = model.single_loop_curve(&levels.single)?;
                figure("model", &|p| {
                    reports::divergence_model::draw_model_plot(
                        p,
                        &format!("{title}: single loop"),
                        &levels.single,
                        &curve,
                        &model,
                    )
                })?;
                if let Some(prediction) = &model.double_loop_prediction {
                    figure("prediction", &|p| {
                        reports::divergence_model::draw_prediction_plot(
                            p,
                            &format!("{title}: double loop"),
                            prediction,
                        )
                    })?;
                }
            }
            if saved::find(dir, "timeline.csv").is_some() {
                let timeline = saved::timeline(dir)?;
                let last = timeline.iter().map(|p| p.m).max().unwrap_or(0);
                let shown: Vec<u32> = [last / 2, last].into_iter().filter(|&m| m > 0).collect();
                figure("timeline", &|p| {
                    reports::divergence_split::draw_timelines(
                        p,
                        &format!("{title}: per-lane timelines (Listing 5)"),
                        &timeline,
                        &shown,
                    )
                })?;
            }
        }
        _ => {}
    }
    Ok(drawn)
}

/// `gpubench compare DIR…`: the runs' summaries side by side.
pub fn compare(args: &crate::cli::CompareArgs) -> Result<()> {
    let mut names = Vec::new();
    let mut summaries = Vec::new();
    for dir in &args.dirs {
        let saved = dir.join("summary.json");
        let summary = if saved.is_file() {
            serde_json::from_value(read_json(&saved)?)
                .with_context(|| format!("{} is not a gpubench summary", saved.display()))?
        } else {
            summary::summarise(dir).map_err(|e| UsageError::new(format!("{e:#}")))?
        };
        names.push(dir.display().to_string());
        summaries.push(summary);
    }
    print!(
        "{}",
        summary::render_comparison(&names, &summaries, args.latex)
    );
    Ok(())
}
