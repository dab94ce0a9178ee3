//! What every GPU suite does around its own measurement: refuse what can be refused before
//! touching anything, open the device and load the kernels, record the SM clock and clock64
//! overhead, create the run directory with `metadata.json` ("running"), and at the end record
//! the clock again, the summary figures (`figures.json`) and how the run ended. [`run`] is that
//! skeleton; a suite hands it its settings and its measurement.

use std::path::Path;
use std::time::Instant;

use anyhow::{Context, Result};

use super::Suite;
use crate::cli::Target;
use crate::error::{Exit, MeasurementFailed};
use crate::experiments::clock::{measure_read_overhead, measure_sm_clock};
use crate::gpu::Gpu;
use crate::gpu::conditions::{self, Conditions, Watch};
use crate::gpu::health::{self, Health};
use crate::report::figures::{FILE as FIGURES_FILE, FiguresFile};
use crate::report::metadata::{BuildRecord, RunMetadata, Status, TimeSplit, utc_now};
use crate::report::run_dir::{self, RunDir};

/// Checks the target's output, opens its device and loads every `(module, entry)` so that a
/// bad PTX or a missing kernel fails before a run directory exists.
pub fn open(target: &Target, entries: &[(&str, &str)]) -> Result<Gpu> {
    let device = target.device.index()?;
    if let Some(output) = &target.output {
        run_dir::check_new(output)?;
    }
    // Before this process makes a context: whatever NVML lists on the GPU is another
    // program's. Under `all`, `all` checked once before its first suite.
    let conditions_at_start = if crate::gpu::lease::var(crate::gpu::lease::LEASE_ENV).is_none() {
        let uuid = crate::gpu::uuid_of(device)?;
        let found = conditions::at_start(&uuid, conditions::allow_shared());
        if let Some(refusal) = conditions::refusal(&found, device) {
            return Err(refusal.into());
        }
        Some(found)
    } else {
        None
    };
    let mut gpu = Gpu::open(device)?;
    gpu.conditions_at_start = conditions_at_start;
    // A module `gpubench all` is still compiling ahead (pipeline's, on an H200: 0.8 s after
    // its turn came) is waited for off the GPU, so the suites after this one measure meanwhile.
    let modules: Vec<&str> = entries.iter().map(|(module, _)| *module).collect();
    if crate::gpu::prebuilt::pending(&modules) {
        crate::gpu::lease::host_work(|| crate::gpu::prebuilt::wait_for(&modules))?;
    }
    for (module, entry) in entries {
        gpu.function(module, entry)?;
    }
    crate::gpu::lease::trace("modules loaded");
    Ok(gpu)
}

/// The major number of the device's compute capability ("9.0" → 9; 0 if unreadable).
pub fn compute_major(properties: &crate::gpu::DeviceProperties) -> u32 {
    properties
        .compute_capability
        .split('.')
        .next()
        .and_then(|m| m.parse().ok())
        .unwrap_or(0)
}

/// Refuses, in one sentence, a GPU older than Hopper (compute capability 9.0) for suite `suite`,
/// which needs `unit`.
pub fn require_hopper(
    properties: &crate::gpu::DeviceProperties,
    device: usize,
    suite: &str,
    unit: &str,
) -> Result<(), crate::error::Unsupported> {
    if compute_major(properties) >= 9 {
        return Ok(());
    }
    Err(crate::error::Unsupported(format!(
        "the {suite} suite needs {unit}, which start with compute capability 9.0 (Hopper); device {device} is a {} (CC {})",
        properties.name, properties.compute_capability
    )))
}

/// Opens the target's device, loads `entries`, starts the run directory of suite `of` with
/// `settings`, runs `measure` and finishes the run.
pub fn run(
    of: &'static dyn Suite,
    target: &Target,
    entries: &[(&str, &str)],
    settings: &impl serde::Serialize,
    measure: impl FnOnce(&mut Gpu, &mut SuiteRun) -> Result<()>,
) -> Result<()> {
    let gpu = open(target, entries)?;
    let mut modules: Vec<&str> = entries.iter().map(|(module, _)| *module).collect();
    modules.sort_unstable();
    modules.dedup();
    run_opened(gpu, of, target, &modules, settings, measure)
}

/// [`run`] on a device [`open`] returned, for a suite whose settings depend on the device.
pub fn run_opened(
    mut gpu: Gpu,
    of: &'static dyn Suite,
    target: &Target,
    modules: &[&str],
    settings: &impl serde::Serialize,
    measure: impl FnOnce(&mut Gpu, &mut SuiteRun) -> Result<()>,
) -> Result<()> {
    let settings = serde_json::to_value(settings)?;
    let mut suite = start(&mut gpu, of, target.output.as_deref(), modules, settings)?;
    crate::gpu::lease::trace("opening clock, NVML and metadata");
    gpu.spent.note_setup_done();
    let outcome = measure(&mut gpu, &mut suite);
    suite.finish(&mut gpu, outcome)
}

/// The settings value the suite's subcommand parsed to (`Suite::measure` keeps it, once per
/// suite: a worker process forgets it between suites), written beside metadata.json as `settings.json`. The
/// metadata's `settings` record what the run resolved (the stride it chose, the carveouts
/// granted); this is what it was asked, as its settings type serializes it, so
/// `Suite::flags` of it repeats the request.
static REQUESTED: std::sync::Mutex<Option<serde_json::Value>> = std::sync::Mutex::new(None);

/// Keeps `settings` (serialized) for the run directory this process opens next.
pub(super) fn request(settings: serde_json::Value) {
    // A second request within one suite's run (none makes one) keeps the first: nothing is
    // overwritten silently, and settings.json then names the first.
    REQUESTED
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .get_or_insert(settings);
}

/// The command line of the suite a worker process runs now (a worker is started without one).
static COMMAND_LINE: std::sync::Mutex<Option<Vec<String>>> = std::sync::Mutex::new(None);

/// Before a worker process runs its next suite (`args`, its command line): the previous
/// suite's request is forgotten.
pub(super) fn next_in_worker(args: Vec<String>) {
    *REQUESTED.lock().unwrap_or_else(|e| e.into_inner()) = None;
    *COMMAND_LINE.lock().unwrap_or_else(|e| e.into_inner()) = Some(args);
}

/// The command line of the suite this process runs: its job's in a worker, else the
/// process's own.
fn command_line() -> Vec<String> {
    COMMAND_LINE
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .clone()
        .unwrap_or_else(|| std::env::args().collect())
}

pub use crate::gpu::lease::GPU_DONE_ENV;

/// What a run records of the SASS [`SuiteRun::keep_sass`] kept: how it was made and the
/// memory instructions per kernel (`analysis::sass::memory_instructions`).
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct KeptSass {
    pub status: String,
    pub memory_instructions:
        std::collections::BTreeMap<String, std::collections::BTreeMap<String, usize>>,
}

/// One run of a suite in progress: its run directory and the metadata it will finish with
/// (not the registry's `Suite`, which is the suite itself).
pub struct SuiteRun {
    /// The suite this is a run of.
    of: &'static dyn Suite,
    pub run: RunDir,
    pub metadata: RunMetadata,
    started: Instant,
    /// NVML on the device, where it could be opened.
    health: Option<Health>,
    /// The GPU's other processes, listed while the suite measures.
    watch: Option<Watch>,
}

fn start(
    gpu: &mut Gpu,
    of: &'static dyn Suite,
    output: Option<&Path>,
    modules: &[&str],
    settings: serde_json::Value,
) -> Result<SuiteRun> {
    let device = gpu.properties()?;
    let uuid = gpu.uuid().map_err(|e| e.to_string());
    let uuid_for_watch = uuid.clone().ok();
    // NVML starts on another thread while the GPU measures the clock (it takes about 10 ms).
    let ((nvml, health), clocks) = std::thread::scope(|scope| {
        let nvml = scope.spawn(|| health::start(uuid));
        let clocks =
            measure_sm_clock(gpu).and_then(|clock| Ok((clock, measure_read_overhead(gpu)?)));
        let nvml = nvml
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        (nvml, clocks)
    });
    let (sm_clock_before, read_overhead) = clocks?;
    let (conditions, watch) = watch_conditions(gpu, uuid_for_watch.as_deref());
    let suite = of.name();
    let run = RunDir::create(output, suite)?;
    eprintln!("writing to {}", run.path().display());
    let mut with_clock = modules.to_vec();
    with_clock.push("clock");
    let metadata = RunMetadata {
        format: crate::report::formats::CURRENT,
        suite,
        status: Status::Running,
        error: None,
        command_line: command_line(),
        started_utc: utc_now(),
        finished_utc: None,
        build: BuildRecord::current(&with_clock),
        device,
        sm_clock_before,
        sm_clock_after: None,
        clock64_read_overhead_cycles: read_overhead,
        device_max_connections: crate::gpu::connections::current(),
        gpu_busy_seconds: None,
        time_split: None,
        gpu_waits: Vec::new(),
        nvml,
        conditions,
        settings,
    };
    run.write_json("metadata.json", &metadata)?;
    let requested = REQUESTED.lock().unwrap_or_else(|e| e.into_inner()).clone();
    if let Some(requested) = requested {
        run.write_json("settings.json", &requested)?;
    }
    Ok(SuiteRun {
        of,
        run,
        metadata,
        started: Instant::now(),
        health,
        watch,
    })
}

/// The conditions the suite starts under (what `open` found before the context, or, under
/// `all`, the processes not gpubench's on the GPU now) and a watch of the GPU's processes
/// until the suite is done with it. A process found now under `all` came after `all` checked:
/// it shares the GPU with this suite, unless `--allow-shared` let it be there from the start.
fn watch_conditions(gpu: &mut Gpu, uuid: Option<&str>) -> (Conditions, Option<Watch>) {
    let allow_shared = conditions::allow_shared();
    let found = match gpu.conditions_at_start.take() {
        Some(found) => found,
        None => uuid.map_or_else(Conditions::default, |uuid| {
            conditions::in_worker(uuid, allow_shared)
        }),
    };
    let watch = uuid.filter(|_| !gpu.simulated).map(Watch::start);
    (found, watch)
}

impl SuiteRun {
    /// Waits for the SASS `disassembly` made beside the measurement and writes its text, where
    /// there is one, as `file` in the run directory.
    pub fn keep_disassembly(
        &self,
        disassembly: crate::gpu::sass::Beside,
        file: &str,
    ) -> Result<(Option<String>, crate::gpu::sass::SassRecord)> {
        let (text, record) = disassembly.join()?;
        if let Some(text) = &text {
            self.run.write(file, text.as_bytes())?;
        }
        Ok((text, record))
    }

    /// [`SuiteRun::keep_disassembly`], returning what the run records of it.
    pub fn keep_sass(&self, disassembly: crate::gpu::sass::Beside, file: &str) -> Result<KeptSass> {
        let (text, record) = self.keep_disassembly(disassembly, file)?;
        let memory_instructions = text
            .as_deref()
            .map(crate::analysis::sass::memory_instructions)
            .unwrap_or_default();
        Ok(KeptSass {
            status: record.status,
            memory_instructions,
        })
    }

    /// Joins the disassembly read beside the run, writes its text as `file` where there is
    /// one, and returns every kernel's opcodes with their static counts.
    pub fn keep_instructions(
        &self,
        disassembly: crate::gpu::sass::Beside,
        file: &str,
    ) -> Result<crate::report::saved::KernelInstructions> {
        let (text, record) = self.keep_disassembly(disassembly, file)?;
        Ok(crate::report::saved::KernelInstructions {
            status: record.status,
            arch: record.arch,
            instructions: text
                .as_deref()
                .map(crate::analysis::sass::instructions)
                .unwrap_or_default(),
        })
    }

    /// Records `settings` as `metadata.json`'s settings (written when the run finishes): for
    /// a suite whose record grows as it measures (what it subtracted, the SASS it read).
    pub fn record_settings(&mut self, settings: &impl serde::Serialize) -> Result<()> {
        self.metadata.settings = serde_json::to_value(settings)?;
        Ok(())
    }

    /// A plot title naming the experiment, the device and the clock it ran at.
    pub fn title(&self, what: &str) -> String {
        crate::report::metadata::plot_title(
            what,
            &self.metadata.device.name,
            &self.metadata.device.compute_capability,
            self.metadata.sm_clock_before.mhz,
        )
    }

    /// The measurement's time with the GPU, up to now, unless the suite recorded its own.
    fn note_gpu_busy(&mut self) {
        if self.metadata.gpu_busy_seconds.is_none() {
            self.metadata.gpu_busy_seconds = Some(self.started.elapsed().as_secs_f64());
        }
    }

    /// From here on the suite measures only what it writes to `files` (the tensor suite's
    /// sustained run, which holds the GPU until its clocks settle): NVML's judgement of the
    /// clocks so far stands for the suite's other figures, and this part is judged by itself
    /// ([`crate::gpu::health::NvmlRecord::parts`]).
    pub fn judge_apart_from_here(&mut self, files: &[&str]) {
        if self.health.is_none() {
            return;
        }
        let before = self.nvml_sample();
        self.metadata.nvml.parts.push(crate::gpu::health::NvmlPart {
            files: files.iter().map(|f| f.to_string()).collect(),
            before,
            throttled: None,
        });
    }

    /// NVML's reading of the GPU now, where NVML could be opened.
    pub fn nvml_sample(&self) -> Option<crate::gpu::health::HealthSample> {
        self.health.as_ref().map(Health::sample)
    }

    /// Ends the watch of the GPU's processes and records what it saw.
    fn stop_watch(&mut self) {
        if let Some(watch) = self.watch.take() {
            watch.stop(&mut self.metadata.conditions);
        }
    }

    /// Ends the suite's GPU work: records the clock after the measurement and tells `gpubench
    /// all` the next suite may start, while this one fits, draws and writes (host work only
    /// from here on). [`SuiteRun::finish`] does it where a suite did not.
    pub fn release_gpu(&mut self, gpu: &mut Gpu) -> Result<()> {
        if self.metadata.sm_clock_after.is_some() {
            return Ok(());
        }
        self.note_gpu_busy();
        self.metadata.sm_clock_after = Some(measure_sm_clock(gpu)?);
        self.stop_watch();
        crate::gpu::lease::done_with_gpu();
        crate::gpu::lease::trace("closing clock: done with the GPU");
        Ok(())
    }

    /// The run's plots, drawn from its files by the suite's [`Suite::redraw`], the one drawing
    /// path `gpubench report` takes too: what a live run shows is what its files give back.
    fn draw(&self) -> Result<()> {
        let metadata: crate::report::metadata::SavedMetadata =
            serde_json::from_value(serde_json::to_value(&self.metadata)?)
                .context("reading the run's metadata back for its plots")?;
        let saved = super::SavedRun {
            dir: self.run.path(),
            metadata: &metadata,
        };
        let extension = crate::report::plot::style().format.extension();
        let mut out = super::Redraw::new(&self.run, extension);
        self.of
            .redraw(&saved, &mut out)
            .context("drawing the plots from the run's files")
    }

    /// Records the clock after the measurement (unless [`SuiteRun::release_gpu`] did) and how it
    /// ended, then returns the outcome, marked as a failed measurement (exit code 4) if it is
    /// an error.
    pub fn finish(mut self, gpu: &mut Gpu, outcome: Result<()>) -> Result<()> {
        // What the device cannot run is a skip, not a failed measurement.
        let skipped = outcome
            .as_ref()
            .is_err_and(|error| Exit::for_error(error) == Exit::Unsupported);
        let outcome = if skipped {
            outcome
        } else {
            outcome.context(MeasurementFailed)
        };
        self.note_gpu_busy();
        let outcome = outcome.and_then(|()| {
            self.release_gpu(gpu)?;
            let figures = self
                .of
                .figures(self.run.path())
                .context("deriving the summary figures")?;
            self.run.write_json(
                FIGURES_FILE,
                &FiguresFile::new(self.metadata.suite, figures),
            )?;
            self.draw()
        });
        self.stop_watch();
        if let Some(shared) = self.metadata.conditions.shared() {
            eprintln!("warning: {shared}; every figure of this suite is unresolved");
        }
        if let Some(health) = &self.health {
            let after = health.sample();
            self.metadata.nvml.judge(&after);
            if let Some(warning) = &self.metadata.nvml.throttled {
                eprintln!("warning: {warning}");
            }
            for part in &self.metadata.nvml.parts {
                if let Some(warning) = &part.throttled {
                    eprintln!("warning: {}: {warning}", part.files.join(", "));
                }
            }
            self.metadata.nvml.after = Some(after);
        }
        self.metadata.time_split = Some(TimeSplit::of(&gpu.spent));
        self.metadata.gpu_waits = gpu.spent.waits();
        for record in &mut self.metadata.build.ptx {
            record.loaded = gpu.loaded_from.get(record.module).cloned();
        }
        match &outcome {
            Ok(()) => self.metadata.finish(Status::Complete, None),
            Err(error) => self.metadata.finish(
                if skipped {
                    Status::Skipped
                } else {
                    Status::Failed
                },
                Some(format!("{error:#}")),
            ),
        }
        self.run.write_json("metadata.json", &self.metadata)?;
        crate::gpu::lease::trace("figures and metadata written");
        outcome?;
        println!("run written to {}", self.run.path().display());
        Ok(())
    }
}
