//! `gpubench all`: every suite, each run by a worker process of this binary (one that runs
//! suites one after another in one context, see [`crate::harness::worker`]: a crash, a hang
//! or a failed suite ends its worker, so a poisoned context serves no other suite), into one
//! run directory with one sub-directory per suite. A suite's turn on the GPU comes once the
//! one before is done with it (it says so after its closing clock measurement), so one's plots
//! and exit overlap the next one's start; no two suites use the GPU at once. Each suite is
//! given to a worker one turn early (a new worker loads the driver while the suite before
//! measures; an idle one has its context already), or when the run starts where its process
//! prepares for seconds (slots' ncu); a suite with long host work (compiles) may
//! hand the GPU back and is given it again between later suites (see [`crate::gpu::lease`]);
//! `gpubench info` (`info.json`) has the last turn. `all.json` records each suite's command,
//! outcome, wall time and turns on the GPU, in plan order; at the end the summary tables and
//! the plot index are written. A progress bar on stderr shows the suite, its step, the elapsed
//! time and an estimate; it hides itself when stderr is not a terminal, where one plain line
//! per finished suite is printed instead.

use std::fs::File;
use std::io::IsTerminal;
use std::path::Path;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};

use crate::gpu::prebuilt;
use indicatif::{ProgressBar, ProgressStyle};
use serde::Serialize;

mod children;
mod turns;
mod workers;

use turns::{Off, Running, SuiteChild, serve_parked, settle, spawn_suite};

use children::{
    End, PARKED_GROUPS, WAITING_GROUP, Wait, forward_interrupts, killed_outcome, wait_with_deadline,
};

use crate::app::plan;
use crate::cli::AllArgs;
use crate::error::{MeasurementFailed, UsageError, bail_usage};
use crate::gpu::lease;
use crate::gpu::mechanisms::{self, Mechanism};
use crate::harness::PlannedSuite;
use crate::report::metadata::{SavedMetadata, TimeSplit, utc_now};
use crate::report::run_dir::{self, RunDir};

/// The status of a suite the device cannot run (it exited with [`crate::error::Exit::Unsupported`]):
/// neither complete nor failed, its reason in the outcome's error.
const SKIPPED: &str = "skipped";

#[derive(Debug, Clone, Serialize)]
struct SuiteOutcome {
    /// Its place in the plan.
    #[serde(skip)]
    index: usize,
    name: String,
    command: Vec<String>,
    status: String,
    error: Option<String>,
    seconds: Option<f64>,
    /// The suite's own account of its time (from its metadata.json), where it wrote one.
    #[serde(skip_serializing_if = "Option::is_none")]
    time_split: Option<TimeSplit>,
    /// When it held the GPU: each interval's start and end, in seconds since the run began (a
    /// suite that did host work off the GPU has several). Their sum is the suite's share of
    /// the run. (`gpu_turns_seconds` in files of format 2 and before.)
    #[serde(skip_serializing_if = "Vec::is_empty")]
    gpu_intervals_seconds: Vec<[f64; 2]>,
}

#[derive(Debug, Serialize)]
struct Manifest<'a> {
    /// The run-directory format (`report::formats::CURRENT`).
    format: u32,
    quick: bool,
    started_utc: String,
    finished_utc: Option<String>,
    total_seconds: Option<f64>,
    /// The speed mechanisms turned off for a measurement of what each saves
    /// (`gpu::mechanisms`); none in an ordinary run.
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    mechanisms_off: &'a [&'static str],
    suites: &'a [SuiteOutcome],
}

/// A directory removed with everything in it when `all` is done with it.
struct TemporaryDir(std::path::PathBuf);

impl TemporaryDir {
    fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TemporaryDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The same `gpubench all` again, into `dir/repeat`: this process's own arguments without
/// `--repeat` and `--output`, the repeat's output and progress passed through.
fn run_repeat(me: &Path, dir: &Path) -> Result<()> {
    let mut forwarded = Vec::new();
    let mut given = std::env::args().skip(1);
    while let Some(arg) = given.next() {
        if arg == "--repeat" || arg.starts_with("--output=") {
            continue;
        }
        if arg == "--output" {
            given.next();
            continue;
        }
        forwarded.push(arg);
    }
    let target = dir.join(super::report::REPEAT);
    eprintln!("repeating every suite into {}", target.display());
    let status = std::process::Command::new(me)
        .args(&forwarded)
        .arg("--output")
        .arg(&target)
        .status()
        .context("starting the repeat run")?;
    // A repeat that failed in part still confirms what it measured.
    if !status.success() && !target.join("all.json").is_file() {
        anyhow::bail!("the repeat run into {} failed: {status}", target.display());
    }
    Ok(())
}

pub fn run(args: &AllArgs) -> Result<()> {
    let Preflight {
        suites,
        mechanisms_off,
        device,
        compute_capability,
    } = preflight(args)?;
    let run = RunDir::create(args.output.as_deref(), "all")?;
    eprintln!("writing to {}", run.path().display());
    let me = std::env::current_exe().context("finding gpubench's own path")?;
    let logs = run.path().join("logs");
    std::fs::create_dir(&logs).context("creating the logs directory")?;
    let started = Instant::now();
    let started_utc = utc_now();
    // Removed, with what was built into it, when `all` is done.
    let (_prebuilt_dir, _prebuilding) = start_prebuilding(&suites, &compute_capability)?;

    // all.json as the run stands: `finished` once it has ended.
    let write_manifest = |suites: &[SuiteOutcome], finished: Option<f64>| {
        run.write_json(
            "all.json",
            &Manifest {
                format: crate::report::formats::CURRENT,
                quick: args.quick,
                started_utc: started_utc.clone(),
                finished_utc: finished.map(|_| utc_now()),
                total_seconds: finished,
                mechanisms_off: &mechanisms_off,
                suites,
            },
        )
    };
    // A manifest from the start, so an interrupted run still says what it is.
    write_manifest(&[], None)?;
    // The suites run in worker processes, each keeping its context from one suite to the
    // next (harness::worker). The next suite is given to one as soon as one gets its turn:
    // a new worker loads the driver while that one measures and waits for the suite's turn to
    // create its context (gpu::lease); an idle one has its context already.
    let worker_dir =
        TemporaryDir(std::env::temp_dir().join(format!("gpubench-workers-{}", std::process::id())));
    let mut workers = workers::Workers::new(&me, worker_dir.path());
    // A suite that prepares for seconds is given to its worker now (plan::prepares_from_start).
    let mut early = std::collections::BTreeMap::new();
    for (index, suite) in suites.iter().enumerate().skip(1) {
        if suite.prepares_from_start && mechanisms::on(Mechanism::Early) {
            let child = spawn_suite(&mut workers, args, run.path(), &logs, suite, index, started)?;
            early.insert(index, child);
        }
    }
    let mut spawn = |index: usize, early: &mut std::collections::BTreeMap<usize, SuiteChild>| {
        if let Some(child) = early.remove(&index) {
            return Ok(Some(child));
        }
        suites
            .get(index)
            .map(|suite| spawn_suite(&mut workers, args, run.path(), &logs, suite, index, started))
            .transpose()
    };
    let mut next = spawn(0, &mut early)?;
    let info_path = run.path().join("info.json");
    let info_go = logs.join("info.go");

    let total: f64 = suites.iter().map(|s| s.estimate_seconds).sum();
    let terminal = std::io::stderr().is_terminal();
    let bar = progress_bar(total);
    let mut outcomes: Vec<SuiteOutcome> = Vec::new();
    let mut done_estimate = 0.0;
    // The suite during which the GPU was lost, if it was.
    let mut lost_in: Option<String> = None;
    // Suites done with the GPU: still writing their files, or exiting.
    let mut finishing: Vec<Running> = Vec::new();
    // Suites that stepped aside for host work and will ask for the GPU again (gpu::lease).
    let mut parked: Vec<SuiteChild> = Vec::new();
    let report = |outcome: SuiteOutcome, outcomes: &mut Vec<SuiteOutcome>| -> Result<()> {
        if !terminal {
            eprintln!("{}", outcome.line(outcomes.len() + 1, suites.len()));
        }
        outcomes.push(outcome);
        write_manifest(outcomes, None)
    };
    for (index, suite) in suites.iter().enumerate() {
        bar.set_message(format!("{} ({}/{})", suite.name, index + 1, suites.len()));
        let mut tick = |elapsed: f64| {
            let within = elapsed.min(suite.estimate_seconds * 0.95);
            bar.set_position(((done_estimate + within) * 10.0) as u64);
            bar.tick();
        };
        // A suite that asked for the GPU again has it before the next one starts.
        serve_parked(&mut parked, &mut finishing, false, &mut tick)?;
        let mut child = next
            .take()
            .context("every suite is started during the turn before its own")?;
        child.grant_lease()?;
        next = spawn(index + 1, &mut early)?;
        let off = child.wait_off_gpu(&mut finishing, &mut tick)?;
        let lost = matches!(off, Off::Done(Some((End::Exited(exit), _)))
            if exit.code() == Some(crate::error::Exit::GpuLost as i32));
        done_estimate += suite.estimate_seconds;
        bar.set_position((done_estimate * 10.0) as u64);
        // Suites that ended are reported; one still writing its files is not waited for
        // here, so the next suite's turn comes first (waiting for pipeline's 1.7 s of host
        // work left an H200 idle 0.7 s in one `all --quick`). The rest are reported at the end.
        for mut before in std::mem::take(&mut finishing) {
            if before.has_ended() {
                report(before.finish()?, &mut outcomes)?;
            } else {
                finishing.push(before);
            }
        }
        settle(child, off, &mut parked, &mut finishing);
        if lost {
            lost_in = Some(suite.name.clone());
            // Nothing more runs on a GPU that is gone: the suite started ahead is stopped,
            // and it and the rest are recorded as not run, with the reason.
            for mut ahead in next
                .take()
                .into_iter()
                .chain(std::mem::take(&mut early).into_values())
            {
                children::Watched::kill(&mut ahead.process);
                WAITING_GROUP.store(0, Ordering::SeqCst);
            }
            for (later, planned) in suites.iter().enumerate().skip(index + 1) {
                let outcome = SuiteOutcome::not_run(later, planned, &suite.name);
                report(outcome, &mut outcomes)?;
            }
            break;
        }
    }
    serve_parked(&mut parked, &mut finishing, true, &mut |_| {})?;
    info_turn(
        &mut workers,
        device,
        &info_path,
        &info_go,
        &logs,
        Duration::from_secs(args.suite_timeout_seconds),
        &mut finishing,
    )?;
    for last in finishing {
        report(last.finish()?, &mut outcomes)?;
    }
    workers.finish(Duration::from_secs(10));
    // In plan order, whatever order they ended in.
    outcomes.sort_by_key(|o| o.index);
    bar.finish_and_clear();
    let total_seconds = started.elapsed().as_secs_f64();
    write_manifest(&outcomes, Some(total_seconds))?;
    conclude(args, &me, &run, &outcomes, total_seconds, lost_in)
}

/// What `all` checks before it writes anything: the plan its flags choose, the mechanisms
/// turned off, a usable GPU and no other process on it (exit 7 unless `--allow-shared`).
struct Preflight {
    suites: Vec<PlannedSuite>,
    mechanisms_off: Vec<&'static str>,
    device: usize,
    compute_capability: String,
}

fn preflight(args: &AllArgs) -> Result<Preflight> {
    let suites = plan::choose(args.quick, args.only.as_deref(), args.skip.as_deref())
        .map_err(UsageError::new)?;
    if let Some(output) = &args.output {
        run_dir::check_new(output)?;
    }
    if args.suite_timeout_seconds == 0 {
        bail_usage!("--suite-timeout-seconds must be at least 1");
    }
    let mechanisms_off = mechanisms::turned_off().map_err(UsageError::new)?;
    forward_interrupts();
    // No usable GPU: say so before any directory exists. No context: the device is the
    // suites'.
    let device = args.device.index()?;
    let compute_capability = crate::gpu::compute_capability(device)?;
    // Another program on the GPU makes every figure wrong: refused before anything is written
    // (exit 7), unless --allow-shared, where every suite marks its figures (gpu::conditions).
    let found = crate::gpu::conditions::at_start(
        &crate::gpu::uuid_of(device)?,
        args.conditions.allow_shared,
    );
    if let Some(refusal) = crate::gpu::conditions::refusal(&found, device) {
        return Err(refusal.into());
    }
    if let Some(shared) = found.shared() {
        eprintln!("warning: {shared}; every figure of this run will be unresolved");
    }
    Ok(Preflight {
        suites,
        mechanisms_off,
        device,
        compute_capability,
    })
}

/// Host work beside the GPU's: every kernel module compiled and disassembled for the device on
/// the other cores while the suites run, for the suites to load (see prebuilt); the directory
/// they go to, and the compiling threads (none where the mechanism is off).
fn start_prebuilding(
    suites: &[PlannedSuite],
    compute_capability: &str,
) -> Result<(TemporaryDir, Option<Vec<std::thread::JoinHandle<()>>>)> {
    let prebuilt_dir = TemporaryDir(
        std::env::temp_dir().join(format!("gpubench-prebuilt-{}", std::process::id())),
    );
    std::fs::create_dir_all(prebuilt_dir.path())
        .context("creating the directory for prebuilt modules")?;
    let prebuilding = mechanisms::on(Mechanism::Prebuilt);
    if prebuilding {
        // SAFETY: no other thread of this process exists yet to read the environment.
        unsafe { std::env::set_var(prebuilt::ENV, prebuilt_dir.path()) };
    }
    // Every suite measures the clock first; then each its own module, in the order they run (a
    // suite whose module is named otherwise is compiled with the rest, after these); beside
    // them, the generated kernels a suite will ask for first (prebuilt::start).
    let jobs = std::iter::once(prebuilt::Job::Module("clock".into()))
        .chain(suites.iter().flat_map(|s| {
            std::iter::once(prebuilt::Job::Module(s.suite.to_string())).chain(
                super::registry::find(s.suite)
                    .map(|suite| suite.kernels_to_prebuild(&s.settings))
                    .unwrap_or_default()
                    .into_iter()
                    .map(prebuilt::Job::Generated),
            )
        }))
        .collect();
    let workers = std::thread::available_parallelism().map_or(1, |n| n.get().saturating_sub(1));
    let prebuilding = prebuilding.then(|| {
        prebuilt::start(
            prebuilt_dir.path().to_path_buf(),
            compute_capability.to_string(),
            jobs,
            workers,
        )
    });
    Ok((prebuilt_dir, prebuilding))
}

/// `gpubench info` in the run's last turn on the GPU, writing `info_path`; the suites still
/// writing their files are polled meanwhile.
fn info_turn(
    workers: &mut workers::Workers,
    device: usize,
    info_path: &Path,
    info_go: &Path,
    logs: &Path,
    deadline: Duration,
    finishing: &mut [Running],
) -> Result<()> {
    // `info` talks to the driver too: it has the last turn, under the same deadline as a
    // suite, in a worker like one (an idle one keeps its context: no creation on the turn),
    // and the other idle workers end meanwhile. It writes info.json itself (GPGPU-Sim prints
    // its own lines on standard output, into info.log).
    let info_log = logs.join("info.log");
    let info_job = crate::harness::worker::Job {
        args: [workers.program().as_str(), "info", "--json", "--device"]
            .iter()
            .map(|a| a.to_string())
            .chain([device.to_string(), "--output".to_string()])
            .chain([info_path.to_string_lossy().into_owned()])
            .collect(),
        vars: vec![(
            lease::LEASE_ENV.to_string(),
            info_go.to_string_lossy().into_owned(),
        )],
        log: info_log.clone(),
    };
    let log =
        File::create(&info_log).with_context(|| format!("creating {}", info_log.display()))?;
    let mut info = workers
        .run(&info_job, &log)
        .context("starting gpubench info")?;
    workers.stop_idle();
    lease::grant(info_go).context("giving gpubench info its turn")?;
    let ended = wait_with_deadline(&mut info, deadline, |_| {
        for before in finishing.iter_mut() {
            before.poll();
        }
        false
    })?;
    if !matches!(ended, Wait::Ended(End::Exited(status)) if status.success()) {
        let _ = std::fs::remove_file(info_path);
        eprintln!("gpubench info did not finish in time or failed; no info.json");
    }
    let _ = std::fs::remove_file(info_go);
    Ok(())
}

/// The run's end once every suite has: the repeat (`--repeat`), the tables and plots, the
/// lines on standard output, and the exit the outcomes call for (5 where the GPU was lost,
/// 4 where a suite failed).
fn conclude(
    args: &AllArgs,
    me: &Path,
    run: &RunDir,
    outcomes: &[SuiteOutcome],
    total_seconds: f64,
    lost_in: Option<String>,
) -> Result<()> {
    let extension = args.plots.extension();
    if args.repeat {
        run_repeat(me, run.path())?;
    }
    super::report::write_tables(run.path(), run, extension, args.plots.html())?;
    super::report::write_plots_tex(run, extension, &live_plots(run.path(), extension)?)?;
    let slowest = outcomes.iter().max_by(|a, b| {
        a.seconds
            .unwrap_or(0.0)
            .total_cmp(&b.seconds.unwrap_or(0.0))
    });
    for skipped in outcomes.iter().filter(|o| o.status == SKIPPED) {
        println!(
            "{}: skipped ({})",
            skipped.name,
            skipped.error.as_deref().unwrap_or("no reason given")
        );
    }
    let failed: Vec<&SuiteOutcome> = outcomes
        .iter()
        .filter(|o| o.status != "complete" && o.status != SKIPPED)
        .collect();
    println!(
        "{} suites in {total_seconds:.1} s (slowest: {}); summary in {}",
        outcomes.len(),
        slowest.map_or("-".to_string(), |s| format!(
            "{} {:.1} s",
            s.name,
            s.seconds.unwrap_or(0.0)
        )),
        run.path().join("summary.md").display()
    );
    if failed.is_empty() {
        return Ok(());
    }
    for f in &failed {
        println!(
            "{}: {} ({})",
            f.name,
            f.status,
            f.error.as_deref().unwrap_or("no message")
        );
    }
    let summary = format!(
        "{} of {} suites did not complete: {}",
        failed.len(),
        outcomes.len(),
        failed
            .iter()
            .map(|f| f.name.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    );
    // A lost GPU exits 5 (as the suite that met it did), so a fan-out or a scheduler can tell
    // a node to drain from a measurement that failed.
    if let Some(lost_in) = lost_in {
        let error = outcomes
            .iter()
            .find(|o| o.name == lost_in)
            .and_then(|o| o.error.clone());
        return Err(anyhow::Error::from(crate::error::GpuError::Lost {
            action: format!("the {lost_in} suite ran"),
            detail: error.unwrap_or_default(),
        })
        .context(summary));
    }
    Err(anyhow::anyhow!(summary).context(MeasurementFailed))
}

/// The bar on a terminal's stderr: the suites' estimated seconds, in tenths.
fn progress_bar(total_seconds: f64) -> ProgressBar {
    let bar = ProgressBar::new((total_seconds * 10.0) as u64);
    bar.set_style(
        ProgressStyle::with_template(
            "{spinner} [{elapsed_precise}] {bar:30} {msg} (about {eta} left)",
        )
        .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    bar
}

impl SuiteOutcome {
    /// The line printed for it where stderr is no terminal: `[3/24] regs: complete in 0.4 s
    /// (JIT …)`.
    fn line(&self, nth: usize, of: usize) -> String {
        format!(
            "[{nth}/{of}] {}: {} in {:.1} s{}",
            self.name,
            self.status,
            self.seconds.unwrap_or(0.0),
            self.time_split
                .map_or(String::new(), |t| format!(" ({})", t.describe()))
        )
    }

    /// A suite never started because the GPU was lost during `lost_in`.
    fn not_run(index: usize, suite: &PlannedSuite, lost_in: &str) -> SuiteOutcome {
        SuiteOutcome {
            index,
            name: suite.name.clone(),
            command: std::iter::once("gpubench".to_string())
                .chain(super::plan::arguments(suite).unwrap_or_default())
                .collect(),
            status: "not run".to_string(),
            error: Some(format!("the GPU was lost during the {lost_in} suite")),
            seconds: None,
            time_split: None,
            gpu_intervals_seconds: Vec::new(),
        }
    }
}

/// The plots each complete suite of the run in `dir` drew, as `report` lists what it
/// re-drew: suite directory, metadata, the plot files in name order.
fn live_plots(dir: &Path, extension: &str) -> Result<Vec<(String, SavedMetadata, Vec<String>)>> {
    let mut drawn = Vec::new();
    for (name, path) in crate::report::summary::suite_dirs(dir)? {
        let metadata = SavedMetadata::read(&path)?;
        if !metadata.complete() {
            continue;
        }
        let mut files: Vec<String> = std::fs::read_dir(&path)
            .with_context(|| format!("cannot read {}", path.display()))?
            .filter_map(|e| e.ok())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|f| !f.starts_with('.') && f.ends_with(&format!(".{extension}")))
            .collect();
        files.sort();
        drawn.push((name, metadata, files));
    }
    Ok(drawn)
}
