//! `gpubench calibrate`: the calibration study of cache-level confidence
//! (`analysis::calibration`) at the size asked, into a new directory. No GPU.

use anyhow::Result;

use crate::analysis::calibration;
use crate::cli::CalibrateArgs;
use crate::error::bail_usage;
use crate::report::calibration as calibration_report;
use crate::report::run_dir::RunDir;

pub fn run(args: &CalibrateArgs) -> Result<()> {
    if !args.merge.is_empty() {
        return merge(args);
    }
    if args.cases == 0 || args.cases > 1_000_000 {
        bail_usage!("--cases must be between 1 and 1000000");
    }
    if let Some(threads) = args.threads
        && !(1..=MAX_THREADS).contains(&threads)
    {
        bail_usage!(
            "--threads must be between 1 and {MAX_THREADS}, not {threads} (a thread per core is as fast as the study goes)"
        );
    }
    if args.first_case.checked_add(args.cases).is_none() {
        bail_usage!("--first-case plus --cases must stay below 2^64");
    }
    // Every flag is checked before the directory is made: a refusal leaves nothing behind. The
    // study is written into a staged directory moved into place when it is done, so one that
    // fails or is interrupted (a SIGTERM left an empty directory that refused the retry)
    // leaves nothing either.
    let output = args
        .output
        .clone()
        .unwrap_or_else(|| crate::report::run_dir::default_path("calibration"));
    crate::report::run_dir::check_new(&output)?;
    super::report::staged(&output, "calibration", args.output.is_some(), |run| {
        study(args, run)
    })?;
    println!("study written to {}", output.display());
    Ok(())
}

/// The most host threads `calibrate` starts: far above any host's cores, far below what a
/// process may start (100 000 threads ended in an abort).
const MAX_THREADS: usize = 1024;

/// The study of `args` into `run`.
fn study(args: &CalibrateArgs, run: &RunDir) -> Result<()> {
    let threads = args
        .threads
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, usize::from));
    let started = std::time::Instant::now();
    // Hundreds of cases take minutes on a few cores: a bar with what is left, on a terminal.
    let bar = indicatif::ProgressBar::new(args.cases);
    bar.set_style(
        indicatif::ProgressStyle::with_template(
            "{spinner} [{elapsed_precise}] {bar:30} {pos}/{len} simulated caches (about {eta} left)",
        )
        .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    let outcomes =
        calibration::study_telling(args.seed, args.first_case, args.cases, threads, &|| {
            bar.inc(1)
        });
    bar.finish_and_clear();
    let bins = calibration::reliability(&outcomes);
    let settings = serde_json::json!({
        "cases": args.cases,
        "seed": args.seed,
        "first_case": args.first_case,
        "threads": threads,
        "seconds": started.elapsed().as_secs_f64(),
        "gpubench_version": env!("CARGO_PKG_VERSION"),
        "git_commit": crate::kernels::GIT_COMMIT,
    });
    calibration_report::write(run, &outcomes, &bins, &settings)?;
    // The table this study would make, for `analysis::confidence_map` (from a study with a
    // seed other than the one the committed diagram checks).
    let items: Vec<_> = outcomes.iter().map(|o| o.item()).collect();
    let families = calibration::families::held_out(&items);
    run.write(
        "confidence_map.rs.txt",
        confidence_map_text(&calibration::fit_map(&outcomes), &families).as_bytes(),
    )?;
    let title = calibration_report::draw_into(run, args.cases, args.seed, &bins)?;
    crate::report::calibration_families::write_and_draw(run, &title, &families)?;
    Ok(())
}

/// `--merge`: the shards' outcomes joined into one study, its diagram drawn anew.
fn merge(args: &CalibrateArgs) -> Result<()> {
    let merged = calibration_report::merge(&args.merge)?;
    let run = RunDir::create(args.output.as_deref(), "calibration")?;
    merged.write(&run)?;
    let families = crate::report::calibration_families::of_answers(&merged.answers);
    run.write(
        "confidence_map.rs.txt",
        confidence_map_text(&merged.table, families.as_deref().unwrap_or_default()).as_bytes(),
    )?;
    let title = calibration_report::draw_into(&run, merged.cases, merged.seed, &merged.bins)?;
    if let Some(families) = &families {
        crate::report::calibration_families::write_and_draw(&run, &title, families)?;
    }
    println!("merged study written to {}", run.path().display());
    Ok(())
}

/// The text of `confidence_map::TABLE` and `HELD_OUT_GAP` this study would make.
fn confidence_map_text(
    table: &[(String, [f64; 12])],
    families: &[calibration::families::Family],
) -> String {
    let gaps = calibration::families::gaps_by_basis(families);
    calibration::map_as_rust(table) + "\n" + &calibration::families::gaps_as_rust(&gaps)
}
