//! The worker processes that run `all`'s suites (see [`crate::harness::worker`]): a suite goes
//! to a worker that is idle (its last suite ended and it lives on), else to a new one. A worker
//! keeps its context between suites, so a suite it runs after its first creates none on its
//! turn. Idle workers beyond [`IDLE_KEPT`] are told to stop (each holds a context's device
//! memory); at the end every worker is told to stop and waited for.

use std::cell::{Cell, RefCell};
use std::fs::File;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::rc::Rc;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};

use super::children::{Watched, kill_group};
use crate::harness::worker;

/// Idle workers kept for later suites; more are stopped.
const IDLE_KEPT: usize = 2;

/// One worker process, shared (`Rc`) by the suites it ran and runs.
pub(super) struct WorkerProcess {
    process: RefCell<Child>,
    queue: PathBuf,
    /// Jobs given to it so far.
    jobs: Cell<u32>,
    stopped: Cell<bool>,
}

impl WorkerProcess {
    /// Whether its last suite ended and it waits for another.
    fn idle(&self) -> bool {
        !self.stopped.get()
            && worker::exit_code(&self.queue, self.jobs.get()).is_some()
            && matches!(self.process.borrow_mut().try_wait(), Ok(None))
    }

    fn stop(&self) {
        if !self.stopped.replace(true) {
            // A worker that cannot be told ends with `all` anyway (it watches its parent).
            let _ = worker::stop(&self.queue);
        }
    }
}

/// The workers of one `all` run.
pub(super) struct Workers {
    me: PathBuf,
    /// Where their queue directories go.
    dir: PathBuf,
    all: Vec<Rc<WorkerProcess>>,
}

/// A suite given to a worker: its job there, for `all` to watch.
pub(super) struct SuiteProcess {
    worker: Rc<WorkerProcess>,
    job: u32,
}

impl Workers {
    pub(super) fn new(me: &Path, dir: &Path) -> Workers {
        Workers {
            me: me.to_path_buf(),
            dir: dir.to_path_buf(),
            all: Vec::new(),
        }
    }

    /// The program a job's command line starts with (this executable, as a child started
    /// with its own command line had it).
    pub(super) fn program(&self) -> String {
        self.me.to_string_lossy().into_owned()
    }

    /// Gives `job` to an idle worker, or to a new one (its output to `log` until the job's
    /// own redirection, so nothing it says is lost).
    pub(super) fn run(&mut self, job: &worker::Job, log: &File) -> Result<SuiteProcess> {
        // Without reuse (bench-mechanisms.sh), every suite gets a new worker and none idles.
        let reuse = crate::gpu::mechanisms::on(crate::gpu::mechanisms::Mechanism::Workers);
        let kept_idle = if reuse { IDLE_KEPT } else { 0 };
        let worker = match self.all.iter().find(|w| reuse && w.idle()) {
            Some(idle) => idle.clone(),
            None => {
                let queue = self.dir.join(self.all.len().to_string());
                std::fs::create_dir_all(&queue)
                    .with_context(|| format!("creating {}", queue.display()))?;
                // Its own process group, so a timeout kills the suite with every probe it
                // started.
                let process = Command::new(&self.me)
                    .process_group(0)
                    .env(worker::ENV, &queue)
                    .stdin(Stdio::null())
                    .stdout(log.try_clone()?)
                    .stderr(log.try_clone()?)
                    .spawn()
                    .context("starting a worker process for the suites")?;
                let started = Rc::new(WorkerProcess {
                    process: RefCell::new(process),
                    queue,
                    jobs: Cell::new(0),
                    stopped: Cell::new(false),
                });
                self.all.push(started.clone());
                started
            }
        };
        let n = worker.jobs.get() + 1;
        worker::give(&worker.queue, n, job)?;
        worker.jobs.set(n);
        for extra in self.all.iter().filter(|w| w.idle()).skip(kept_idle) {
            extra.stop();
        }
        Ok(SuiteProcess { worker, job: n })
    }

    /// Tells the idle workers to stop.
    pub(super) fn stop_idle(&self) {
        for idle in self.all.iter().filter(|w| w.idle()) {
            idle.stop();
        }
    }

    /// Tells every worker to stop once idle and waits up to `deadline` for them to end (the
    /// suites they ran have ended by now); one still running then is killed.
    pub(super) fn finish(self, deadline: Duration) {
        for worker in &self.all {
            worker.stop();
        }
        let started = Instant::now();
        for worker in &self.all {
            let mut process = worker.process.borrow_mut();
            while matches!(process.try_wait(), Ok(None)) {
                if started.elapsed() > deadline {
                    kill_group(&mut process);
                    let _ = process.wait();
                    break;
                }
                std::thread::sleep(Duration::from_millis(2));
            }
        }
    }
}

impl Watched for SuiteProcess {
    fn ended(&mut self) -> std::io::Result<Option<ExitStatus>> {
        use std::os::unix::process::ExitStatusExt;
        // The worker's word for its own suite; else, the worker ended while running it.
        if let Some(code) = worker::exit_code(&self.worker.queue, self.job) {
            return Ok(Some(ExitStatus::from_raw(code << 8)));
        }
        self.worker.process.borrow_mut().try_wait()
    }

    fn group(&self) -> i32 {
        i32::try_from(self.worker.process.borrow().id()).unwrap_or(0)
    }

    fn kill(&mut self) {
        let mut process = self.worker.process.borrow_mut();
        kill_group(&mut process);
        let _ = process.wait();
    }
}
