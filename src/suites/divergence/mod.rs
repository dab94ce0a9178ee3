//! `gpubench divergence` and `gpubench analyze divergence`, in pipeline order: validate the
//! config, open the GPU, run the experiment, analyse, report. Nothing here draws or computes
//! statistics itself, and the live run and the offline analysis share the model's code path.

pub mod analysis;
pub mod launch;
pub mod measure;
pub mod model;
mod model_report;
mod report;
pub mod saved;
pub mod settings;
pub mod split;
mod split_report;

use std::path::Path;

use anyhow::{Context, Result};

use self::analysis::{self as divergence_analysis, CostFit, LevelSamples, LevelSummary};
use self::measure::{self as divergence, DivergenceConfig, GpuLoopSampler, LevelMeasurement};
use self::report as divergence_report;
use self::split::{self as divergence_split, SplitLevel, SplitReport};
use model::{Level, ModelReport};
use crate::cli::AnalyzeDivergenceArgs;
use crate::error::UsageError;
use crate::gpu::sass;
use crate::kernels;
use crate::report::run_dir::{self, RunDir};

use crate::harness::{Redraw, SavedRun, suite};
pub use settings::{DivergenceArgs, KernelChoice};
use settings::Recorded;

pub fn measure(args: &DivergenceArgs) -> Result<()> {
    // Everything that can be refused is refused before a directory exists.
    let config = args.to_config()?;
    let entries: Vec<(&str, &str)> = config
        .kernels
        .iter()
        .map(|kernel| ("divergence", kernel.entry()))
        .chain(config.split.then_some(("divergence", "divergence_split")))
        .collect();
    suite::run(
        &Divergence,
        &args.target,
        &entries,
        &recorded(&config),
        |gpu, suite| {
            let pattern = config.pattern.to_string();
            // Each kernel's samples are written as soon as it is done (kept if a later one
            // fails), on a thread of their own while the GPU samples the next kernel: written
            // while the suite held the GPU they kept it waiting 0.2 s in a full run.
            let mut writing: Option<std::thread::JoinHandle<Result<()>>> = None;
            let mut measuring = || -> Result<_> {
                let mut sampler = GpuLoopSampler::new(gpu);
                let measured = divergence::measure(&config, &mut sampler, |so_far| {
                    crate::harness::sharing::step_done("a kernel's samples");
                    finish_writing(writing.take())?;
                    let (run, pattern) = (suite.run.clone(), pattern.clone());
                    let (rows, overhead) = (so_far.to_vec(), timer_overhead(so_far));
                    writing = Some(std::thread::spawn(move || {
                        divergence_report::write_samples(&run, &pattern, &rows, overhead)
                    }));
                    Ok(())
                })?;
                let split = if config.split {
                    divergence::measure_split(&config, &mut sampler)?
                } else {
                    Vec::new()
                };
                Ok((measured, split, sampler.busy))
            };
            let measurement = measuring();
            // The GPU is handed on before the last write is waited for.
            let released = match &measurement {
                Ok((_, _, busy)) => {
                    suite.metadata.gpu_busy_seconds = Some(busy.as_secs_f64());
                    suite.release_gpu(gpu)
                }
                Err(_) => Ok(()),
            };
            let written = finish_writing(writing.take());
            let (measured, split, _) = measurement?;
            released?;
            written?;
            let result = analyze_and_write(&config, &measured, &split, &suite.run)?;
            let module = kernels::module("divergence").expect("divergence.cu is embedded");
            let (text, record) =
                sass::disassemble(module, &suite.metadata.device.compute_capability);
            if let Some(text) = text {
                suite
                    .run
                    .write(&format!("divergence.{}.sass", record.arch), text.as_bytes())?;
            }
            suite.record_settings(&Recorded {
                sass: Some(record),
                timer_overhead_subtracted_cycles: Some(result.timer_overhead_cycles),
                ..recorded(&config)
            })?;
            print!("{}", describe(&result, suite.metadata.gpu_busy_seconds));
            Ok(())
        },
    )
}

/// The settings a run starts with; the SASS and the overhead subtracted come after measuring.
fn recorded(config: &DivergenceConfig) -> Recorded {
    Recorded {
        kernels: config.kernels.iter().map(|k| k.name().to_string()).collect(),
        launches: "one per kernel and divergence level; all samples inside it".into(),
        max_bound: Some(config.max_bound),
        pattern: config.pattern.to_string(),
        preheat: config.preheat,
        samples: config.samples,
        sass: None,
        seed: config.seed,
        timer_overhead: "median back-to-back clock64 difference measured in the same kernel, subtracted from every sample".into(),
        timer_overhead_subtracted_cycles: None,
        unroll: config.unroll,
        warps: 1,
    }
}

/// The median in-kernel back-to-back clock64 difference over all lanes and samples.
fn timer_overhead(measured: &[LevelMeasurement]) -> i64 {
    let all: Vec<i64> = measured
        .iter()
        .flat_map(|l| l.timings.overhead.iter().copied())
        .collect();
    divergence_analysis::median_overhead(&all)
}

#[derive(Debug)]
pub struct DivergenceResult {
    pub timer_overhead_cycles: i64,
    pub summaries: Vec<LevelSummary>,
    pub fits: Vec<CostFit>,
    /// The stack model, or why it could not be fitted (e.g. only the double loop was run).
    pub model: Result<ModelReport, String>,
    pub split: Option<SplitReport>,
}

/// Writes `model.json`. The live run and `gpubench analyze divergence --output` both come
/// through here; the live run's plots are drawn from its files, as `report` draws them.
fn write_model(run: &RunDir, report: &ModelReport, bounds_source: &str) -> Result<()> {
    run.write_json(
        "model.json",
        &divergence_report::ModelFile {
            bounds_source: bounds_source.into(),
            report: report.clone(),
        },
    )
}

/// `model.png` and (with double-loop levels) `prediction.png`: the redraw's, and `gpubench
/// analyze divergence --output`'s, which writes no run directory to redraw.
fn draw_model(out: &mut Redraw, title: &str, single: &[Level], report: &ModelReport) -> Result<()> {
    let curve = report.single_loop_curve(single)?;
    out.plot("model", |path| {
        model_report::draw_model_plot(
            path,
            &format!("{title}: single loop"),
            single,
            &curve,
            report,
        )
    })?;
    if let Some(prediction) = &report.double_loop_prediction {
        out.plot("prediction", |path| {
            model_report::draw_prediction_plot(path, &format!("{title}: double loop"), prediction)
        })?;
    }
    Ok(())
}

/// `gpubench analyze divergence FILE.csv`: the model on saved data, no GPU.
pub fn analyze_saved(args: &AnalyzeDivergenceArgs) -> Result<()> {
    let levels = saved::load(&args.file, args.max_bound)?;
    if let Some(output) = &args.output {
        run_dir::check_new(output)?;
    }
    let report = model::analyze(&levels.single, &levels.double)
        .map_err(|e| UsageError::new(format!("{}: {e}", args.file.display())))?;
    if let Some(output) = &args.output {
        let run = RunDir::create(Some(output), "analyze-divergence")?;
        let title = args.file.display().to_string();
        write_model(&run, &report, &levels.bounds_source)?;
        let extension = crate::report::plot::style().format.extension();
        draw_model(&mut Redraw::new(&run, extension), &title, &levels.single, &report)?;
    }
    if args.json {
        let file = divergence_report::ModelFile {
            bounds_source: levels.bounds_source,
            report,
        };
        println!("{}", serde_json::to_string_pretty(&file)?);
    } else {
        print!(
            "{}",
            model_report::render_text(&report, &levels.bounds_source)
        );
    }
    Ok(())
}

/// Model levels (median cycles and the lane bounds) of one kernel from a run.
fn model_levels(
    summaries: &[LevelSummary],
    measured: &[LevelMeasurement],
    kernel: &str,
) -> Vec<Level> {
    summaries
        .iter()
        .filter(|s| s.kernel == kernel)
        .filter_map(|s| {
            let bounds = measured
                .iter()
                .find(|l| l.kernel.name() == kernel && l.row.m == s.m)?
                .row
                .bounds;
            Some(Level {
                m: s.m,
                bounds,
                cycles: s.cycles.median,
            })
        })
        .collect()
}

/// Analysis and every output file but the metadata; needs no GPU.
pub fn analyze_and_write(
    config: &DivergenceConfig,
    measured: &[LevelMeasurement],
    split: &[SplitLevel],
    run: &RunDir,
) -> Result<DivergenceResult> {
    let pattern = config.pattern.to_string();
    let overhead = timer_overhead(measured);
    divergence_report::write_samples(run, &pattern, measured, overhead)?;
    let levels: Vec<LevelSamples> = measured
        .iter()
        .map(|level| LevelSamples {
            kernel: level.kernel.name().to_string(),
            m: level.row.m,
            warp_cycles: divergence_analysis::warp_cycles(&level.timings.cycles, overhead as f64),
        })
        .collect();
    let summaries = divergence_analysis::summarize(&levels);
    let fits: Vec<CostFit> = config
        .kernels
        .iter()
        .filter_map(|kernel| divergence_analysis::fit_cost(&summaries, kernel.name()))
        .collect();
    divergence_report::write_summary(run, &pattern, &summaries, measured)?;
    divergence_report::write_fit(run, overhead, &fits)?;
    let single = model_levels(&summaries, measured, "single");
    let double = model_levels(&summaries, measured, "double");
    let bounds_source = "the measured lane bounds";
    let model = match model::analyze(&single, &double) {
        Ok(report) => {
            write_model(run, &report, bounds_source)?;
            Ok(report)
        }
        Err(reason) => Err(reason.to_string()),
    };
    let split = if split.is_empty() {
        None
    } else {
        let report = divergence_split::summarize(split);
        let timeline: Vec<_> = split.iter().flat_map(divergence_split::timeline).collect();
        split_report::write(run, &report, &timeline)?;
        Some(report)
    };
    Ok(DivergenceResult {
        timer_overhead_cycles: overhead,
        summaries,
        fits,
        model,
        split,
    })
}

fn describe(result: &DivergenceResult, busy_seconds: Option<f64>) -> String {
    let mut text = String::new();
    for fit in &result.fits {
        let cost = &fit.cycles_per_divergent_lane;
        text += &format!(
            "{} loop: {:.2} cycles per divergent lane (95% CI {:.2} to {:.2}; OLS on {} per-M medians, M {}..{}, R² {:.4})\n",
            fit.kernel,
            cost.estimate,
            cost.ci95_low,
            cost.ci95_high,
            fit.points,
            fit.m_min,
            fit.m_max,
            fit.r_squared
        );
    }
    if result.fits.is_empty() {
        text += "no fit: fewer than three divergence levels were measured\n";
    }
    text += &format!(
        "timer overhead subtracted: {} cycles (median back-to-back clock64 in the same kernel)\n",
        result.timer_overhead_cycles
    );
    match &result.model {
        Ok(model) => text += &model_report::render_text(model, "the measured lane bounds"),
        Err(reason) => text += &format!("model: not fitted ({reason})\n"),
    }
    if let Some(split) = &result.split {
        let show = |slope: Option<crate::analysis::linear_fit::Interval>| {
            slope.map_or("not fitted".to_string(), |s| {
                format!(
                    "{:.2} (95% CI {:.2} to {:.2})",
                    s.estimate, s.ci95_low, s.ci95_high
                )
            })
        };
        text += &format!(
            "push/pop split (Listing 5), cycles per divergent lane: branch {}, reconvergence {}\n",
            show(split.branch_cycles_per_divergent_lane),
            show(split.reconvergence_cycles_per_divergent_lane)
        );
    }
    if let Some(seconds) = busy_seconds {
        text += &format!("GPU busy: {seconds:.3} s (launch to completion, copies included)\n");
    }
    text
}

/// `gpubench divergence` in the suite registry.
pub struct Divergence;

impl crate::harness::SuiteDef for Divergence {
    const NAME: &'static str = "divergence";
    const ABOUT: &'static str = "Cost of thread divergence in single and double loops (Białas & Strzelecki)";
    const EXAMPLES: &'static [&'static str] =
        &["--samples 256", "--kernel double --pattern random"];
    type Args = DivergenceArgs;

    const RUN: crate::harness::Measure<DivergenceArgs> = measure;

    const SECONDS_IN_ALL: (f64, f64) = (0.4, 1.0);

    fn quick(defaults: DivergenceArgs) -> DivergenceArgs {
        DivergenceArgs {
            samples: 32,
            ..defaults
        }
    }

    const FIGURES: fn(&Path) -> Result<Vec<crate::report::figures::Figure>> =
        divergence_report::figures;

    fn redraw(&self, run: &SavedRun, out: &mut Redraw) -> Result<()> {
        use crate::report::saved as files;
        let max_bound = match run.requested::<DivergenceArgs>()? {
            Some(asked) => Some(asked.max_bound),
            None => run.metadata.settings::<Recorded>()?.max_bound,
        };
        let title = run.title(divergence_report::TITLE);
        let summaries = self::report::level_summaries(run.dir)?;
        let fits: Vec<self::analysis::CostFit> = ["single", "double"]
            .iter()
            .filter_map(|kernel| self::analysis::fit_cost(&summaries, kernel))
            .collect();
        out.plot("divergence", |p| {
            divergence_report::draw_plot(p, &title, &summaries, &fits)
        })?;
        let summary = files::find(run.dir, "summary.csv")
            .with_context(|| format!("{} has no summary.csv", run.dir.display()))?;
        let levels = saved::load(&summary, max_bound.unwrap_or(32))?;
        if let Ok(model) = model::analyze(&levels.single, &levels.double) {
            draw_model(out, &title, &levels.single, &model)?;
        }
        if files::find(run.dir, "timeline.csv").is_some() {
            let timeline = self::split_report::timeline(run.dir)?;
            let last = timeline.iter().map(|p| p.m).max().unwrap_or(0);
            let shown: Vec<u32> = [last / 2, last].into_iter().filter(|&m| m > 0).collect();
            out.plot("timeline", |p| {
                split_report::draw_timelines(
                    p,
                    &format!("{title}: per-lane timelines (Listing 5)"),
                    &timeline,
                    &shown,
                )
            })?;
        }
        Ok(())
    }
}

/// Waits for a write of the samples started on a thread, if any, and returns how it went.
fn finish_writing(writing: Option<std::thread::JoinHandle<Result<()>>>) -> Result<()> {
    match writing {
        Some(thread) => thread
            .join()
            .unwrap_or_else(|_| Err(anyhow::anyhow!("writing the samples panicked"))),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::measure::tests::{ModelSampler, with_samples};
    use super::*;

    /// The whole pipeline after the GPU — experiment loop, analysis, every file — on a model
    /// warp whose divergence cost is known.
    #[test]
    fn pipeline_recovers_a_known_cost_and_writes_every_file() {
        let config = with_samples(8);
        let mut sampler = ModelSampler::new(9, 27, 3);
        let measured = divergence::measure(&config, &mut sampler, |_| Ok(())).unwrap();
        let root = tempfile::tempdir().unwrap();
        let run = RunDir::create(Some(&root.path().join("run")), "divergence").unwrap();
        let split = divergence::measure_split(&config, &mut sampler).unwrap();
        let result = analyze_and_write(&config, &measured, &split, &run).unwrap();
        assert_eq!(result.timer_overhead_cycles, 3);
        let single = &result.fits[0];
        assert_eq!(single.kernel, "single");
        assert!((single.cycles_per_divergent_lane.estimate - 27.0).abs() < 1e-9);
        assert!((single.intercept_cycles.estimate - 32.0 * 9.0).abs() < 1e-9);
        let split = result.split.as_ref().unwrap();
        let reconvergence = split.reconvergence_cycles_per_divergent_lane.unwrap();
        assert!(
            (reconvergence.estimate - 27.0).abs() < 1e-9,
            "{reconvergence:?}"
        );
        assert!(
            split
                .branch_cycles_per_divergent_lane
                .unwrap()
                .estimate
                .abs()
                < 1e-9
        );
        let model = result.model.as_ref().unwrap();
        assert!((model.cost_per_divergence_cycles.estimate - 27.0).abs() < 1e-9);
        // The stand-in warp charges the double loop per distinct bound, not per branch as the
        // emulator counts, so only the prediction's presence is checked here.
        assert_eq!(
            model.double_loop_prediction.as_ref().unwrap().levels.len(),
            32
        );
        // The plots come from the files, as a live run and `report` both draw them.
        run.write_json(
            "settings.json",
            &crate::harness::defaults::<DivergenceArgs>(),
        )
        .unwrap();
        let metadata = crate::report::metadata::SavedMetadata::default();
        let saved = crate::harness::SavedRun {
            dir: run.path(),
            metadata: &metadata,
        };
        let mut out = crate::harness::Redraw::new(&run, "png");
        crate::harness::SuiteDef::redraw(&Divergence, &saved, &mut out).unwrap();
        for name in [
            "samples.csv",
            "summary.csv",
            "fit.json",
            "divergence.png",
            "model.json",
            "model.png",
            "prediction.png",
            "split.csv",
            "split.json",
            "timeline.csv",
            "timeline.png",
        ] {
            assert!(run.path().join(name).is_file(), "{name} missing");
        }
        let samples = std::fs::read_to_string(run.path().join("samples.csv")).unwrap();
        let mut lines = samples.lines();
        assert_eq!(
            lines.next(),
            Some("kernel,pattern,m,sample,lane,cycles,raw_cycles")
        );
        assert_eq!(lines.next(), Some("single,staircase,0,0,0,288,291"));
        assert_eq!(samples.lines().count(), 1 + 2 * 32 * 8 * 32);
        let summary = std::fs::read_to_string(run.path().join("summary.csv")).unwrap();
        assert!(summary.starts_with(
            "kernel,pattern,m,n,min_cycles,median_cycles,mean_cycles,max_cycles,stdev_cycles,bounds\n"
        ));
        assert_eq!(summary.lines().count(), 1 + 64);
        let fit: divergence_report::FitFile =
            crate::report::saved::read_json(run.path(), "fit.json").unwrap();
        assert_eq!(fit.fits[1].kernel, "double");
        assert_eq!(fit.timer_overhead_subtracted_cycles, 3);
        let text = describe(&result, Some(0.5));
        assert!(
            text.contains("single loop: 27.00 cycles per divergent lane"),
            "{text}"
        );
    }
}
