//! The suites' turns on the GPU as `all` hands them out: a child started ahead of its turn,
//! given the GPU by the file it waits for, settled when it says it is done with it (or ends),
//! parked while it does host work it stepped aside for and served again between later suites
//! (see [`crate::gpu::lease`]).

use super::*;
use children::Watched;
use workers::{SuiteProcess, Workers};

/// A suite's child process: started ahead of its turn (it loads the driver, then waits for
/// the file `go` before it touches the GPU, see [`crate::gpu::lease`]), on its turn, or parked
/// between turns while it does host work it stepped aside for.
pub(super) struct SuiteChild {
    index: usize,
    name: String,
    command: Vec<String>,
    pub(super) process: SuiteProcess,
    deadline: Duration,
    log_path: std::path::PathBuf,
    gpu_done: std::path::PathBuf,
    /// The file that gives it its first turn; later turns' files are named after it.
    go: std::path::PathBuf,
    dir: std::path::PathBuf,
    /// When its first turn began.
    started: Option<Instant>,
    /// How often it stepped aside.
    asides: u32,
    /// When `gpubench all` began, for its turns' times.
    run_started: Instant,
    /// Its turns on the GPU so far, as [`SuiteOutcome::gpu_intervals_seconds`].
    turns: Vec<[f64; 2]>,
}

/// How a child's turn ended.
pub(super) enum Off {
    /// It is done with the GPU (its files and exit may follow) or has ended.
    Done(Option<(End, Instant)>),
    /// It stepped aside and will ask for the GPU again.
    Aside,
}

pub(super) fn spawn_suite(
    workers: &mut Workers,
    args: &AllArgs,
    parent: &Path,
    logs: &Path,
    suite: &PlannedSuite,
    index: usize,
    run_started: Instant,
) -> Result<SuiteChild> {
    // The entry's settings with `all`'s device and the suite's directory: a typed value,
    // which the child gets back from the flags clap's description of it gives.
    let mut settings = suite.settings.clone();
    settings["device"] = serde_json::to_value(&args.device)?;
    settings["output"] = serde_json::to_value(parent.join(&suite.name))?;
    let mut command_line = super::plan::arguments(&PlannedSuite {
        settings,
        ..suite.clone()
    })?;
    command_line.extend(args.plots.to_args()?);
    command_line.extend(args.conditions.to_flags()?);
    let log_path = logs.join(format!("{}.log", suite.name));
    let gpu_done = logs.join(format!("{}.gpu-done", suite.name));
    let go = logs.join(format!("{}.go", suite.name));
    let log =
        File::create(&log_path).with_context(|| format!("creating {}", log_path.display()))?;
    let mut shown = vec!["gpubench".to_string()];
    shown.extend(command_line);
    let text = |path: &Path| path.to_string_lossy().into_owned();
    let job = crate::harness::worker::Job {
        args: std::iter::once(workers.program())
            .chain(shown.iter().skip(1).cloned())
            .collect(),
        vars: vec![
            (
                crate::harness::suite::GPU_DONE_ENV.to_string(),
                text(&gpu_done),
            ),
            (lease::LEASE_ENV.to_string(), text(&go)),
        ],
        log: log_path.clone(),
    };
    let process = workers
        .run(&job, &log)
        .with_context(|| format!("starting the {} suite", suite.name))?;
    WAITING_GROUP.store(process.group(), Ordering::SeqCst);
    Ok(SuiteChild {
        index,
        name: suite.name.clone(),
        command: shown,
        process,
        deadline: Duration::from_secs(args.suite_timeout_seconds),
        log_path,
        gpu_done,
        go,
        dir: parent.join(&suite.name),
        started: None,
        asides: 0,
        run_started,
        turns: Vec::new(),
    })
}

impl SuiteChild {
    /// Gives the child the GPU: its first turn (its deadline counts from now), or the next
    /// after it stepped aside.
    pub(super) fn grant_lease(&mut self) -> Result<()> {
        let file = match self.started {
            None => self.go.clone(),
            Some(_) => lease::host_work_file(&self.go, self.asides, "go"),
        };
        lease::grant(&file).with_context(|| format!("creating {}", file.display()))?;
        let now = self.since_run_started();
        self.turns.push([now, now]);
        if self.started.is_none() {
            self.started = Some(Instant::now());
            WAITING_GROUP.store(0, Ordering::SeqCst);
        }
        Ok(())
    }

    /// Seconds since the run began, to the millisecond.
    fn since_run_started(&self) -> f64 {
        (self.run_started.elapsed().as_secs_f64() * 1000.0).round() / 1000.0
    }

    fn time_left(&self) -> Duration {
        self.deadline
            .saturating_sub(self.started.map_or(Duration::ZERO, |s| s.elapsed()))
    }

    /// Waits until the child is off the GPU: it is done with it (it says so by creating the
    /// file [`crate::harness::suite::GPU_DONE_ENV`] names, after its last kernel and its closing clock
    /// measurement), or steps aside, or ends, or its deadline passes. Meanwhile it notes when
    /// each of `finishing` ends (their wall times are their own).
    pub(super) fn wait_off_gpu(
        &mut self,
        finishing: &mut [Running],
        tick: &mut dyn FnMut(f64),
    ) -> Result<Off> {
        let aside = lease::host_work_file(&self.go, self.asides + 1, "back");
        let (gpu_done, left) = (self.gpu_done.clone(), self.time_left());
        let mut stepped_aside = false;
        let waited = wait_with_deadline(&mut self.process, left, |elapsed| {
            tick(elapsed);
            for before in finishing.iter_mut() {
                before.poll();
            }
            stepped_aside = aside.exists();
            stepped_aside || gpu_done.exists()
        })?;
        let now = self.since_run_started();
        if let Some(turn) = self.turns.last_mut() {
            turn[1] = now;
        }
        let ended = match waited {
            Wait::Ended(end) => Some((end, Instant::now())),
            Wait::Released if stepped_aside => {
                self.asides += 1;
                return Ok(Off::Aside);
            }
            Wait::Released => None,
        };
        Ok(Off::Done(ended))
    }

    /// Whether the parked child asks for the GPU again.
    fn wants_turn(&self) -> bool {
        lease::host_work_file(&self.go, self.asides, "want").exists()
    }
}

/// Files a child's turn as it ended: parked until it asks again, or finishing.
pub(super) fn settle(
    child: SuiteChild,
    off: Off,
    parked: &mut Vec<SuiteChild>,
    finishing: &mut Vec<Running>,
) {
    match off {
        Off::Aside => {
            park_group(&child.process, true);
            parked.push(child);
        }
        Off::Done(ended) => finishing.push(Running { child, ended }),
    }
}

/// Notes (or forgets) the process group of a parked child, for an interrupt to kill.
pub(super) fn park_group(child: &SuiteProcess, parked: bool) {
    let group = child.group();
    let (from, to) = if parked { (0, group) } else { (group, 0) };
    for slot in &PARKED_GROUPS {
        if slot
            .compare_exchange(from, to, Ordering::SeqCst, Ordering::SeqCst)
            .is_ok()
        {
            return;
        }
    }
}

/// Gives each parked child that asks for the GPU its turn, one after the other; one that
/// ended or ran out of time while parked goes to `finishing`. With `until_none_left`, waits
/// until no child is parked.
pub(super) fn serve_parked(
    parked: &mut Vec<SuiteChild>,
    finishing: &mut Vec<Running>,
    until_none_left: bool,
    tick: &mut dyn FnMut(f64),
) -> Result<()> {
    loop {
        for mut child in std::mem::take(parked) {
            if let Some(exit) = child.process.ended()? {
                park_group(&child.process, false);
                finishing.push(Running {
                    child,
                    ended: Some((End::Exited(exit), Instant::now())),
                });
            } else if child.time_left().is_zero() {
                park_group(&child.process, false);
                child.process.kill();
                finishing.push(Running {
                    child,
                    ended: Some((End::TimedOut, Instant::now())),
                });
            } else if child.wants_turn() {
                park_group(&child.process, false);
                child.grant_lease()?;
                let off = child.wait_off_gpu(finishing, tick)?;
                settle(child, off, parked, finishing);
            } else {
                parked.push(child);
            }
        }
        if parked.is_empty() || !until_none_left {
            return Ok(());
        }
        std::thread::sleep(Duration::from_millis(2));
    }
}

/// A suite's child once it is done with the GPU (or has ended): it may still be writing its
/// files.
pub(super) struct Running {
    child: SuiteChild,
    /// How and when it was seen to end: before it said it was done with the GPU, or while the
    /// next suite ran.
    ended: Option<(End, Instant)>,
}

impl Running {
    /// Notes the moment the child ends, while the next suite runs (its wall time is its own).
    pub(super) fn poll(&mut self) {
        if self.ended.is_none()
            && let Ok(Some(exit)) = self.child.process.ended()
        {
            self.ended = Some((End::Exited(exit), Instant::now()));
        }
    }

    /// Whether the child has ended (noting the moment, as [`Running::poll`]).
    pub(super) fn has_ended(&mut self) -> bool {
        self.poll();
        self.ended.is_some()
    }

    /// Waits for the child to end (within what is left of its deadline) and reads its outcome.
    pub(super) fn finish(mut self) -> Result<SuiteOutcome> {
        let (end, at) = match self.ended.take() {
            Some(ended) => ended,
            None => {
                let left = self.child.time_left();
                let end = match wait_with_deadline(&mut self.child.process, left, |_| false)? {
                    Wait::Ended(end) => end,
                    Wait::Released => unreachable!("a tick that never releases"),
                };
                (end, Instant::now())
            }
        };
        let child = self.child;
        let _ = std::fs::remove_file(&child.gpu_done);
        let _ = std::fs::remove_file(&child.go);
        for n in 1..=child.asides {
            for what in ["back", "want", "go"] {
                let _ = std::fs::remove_file(lease::host_work_file(&child.go, n, what));
            }
        }
        let (status, error) = match end {
            End::Exited(exit) if exit.success() => ("complete".to_string(), None),
            // The device cannot run it (crate::error::Unsupported): its one sentence says why.
            End::Exited(exit) if exit.code() == Some(crate::error::Exit::Unsupported as i32) => (
                SKIPPED.to_string(),
                Some(
                    run_dir::last_log_line(&child.log_path)
                        .unwrap_or(format!("exited with {exit}")),
                ),
            ),
            End::Exited(exit) => match std::os::unix::process::ExitStatusExt::signal(&exit) {
                Some(signal) => {
                    // The device the suite recorded as it started ("running").
                    let simulated = SavedMetadata::read(&child.dir)
                        .is_ok_and(|m| crate::gpu::is_simulator(&m.device.name));
                    let last_line = run_dir::last_log_line(&child.log_path);
                    let (status, why) = killed_outcome(signal, last_line, simulated);
                    (status.to_string(), Some(why))
                }
                None => (
                    "failed".to_string(),
                    Some(
                        run_dir::last_log_line(&child.log_path)
                            .unwrap_or(format!("exited with {exit}")),
                    ),
                ),
            },
            End::TimedOut => (
                "timed out".to_string(),
                Some(format!("killed after {} s", child.deadline.as_secs())),
            ),
        };
        let removed = if status == "complete" {
            Vec::new()
        } else {
            run_dir::remove_partial_files(&child.dir)
        };
        let error = error.map(|e| {
            if removed.is_empty() {
                e
            } else {
                format!("{e}; half-written {} removed", removed.join(", "))
            }
        });
        let time_split = SavedMetadata::read(&child.dir)
            .ok()
            .and_then(|m| m.time_split);
        Ok(SuiteOutcome {
            index: child.index,
            name: child.name,
            command: child.command,
            status,
            error,
            seconds: Some(at.duration_since(child.started.unwrap_or(at)).as_secs_f64()),
            time_split,
            gpu_intervals_seconds: child.turns,
        })
    }
}
