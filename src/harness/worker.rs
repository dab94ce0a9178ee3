//! A worker process of `gpubench all`: one process that runs several suites one after another,
//! each as its own command line, keeping its GPU context between them
//! ([`crate::gpu::kept`]). Every suite used to create a context on its turn (about 0.1 s of
//! the GPU's time on an H200, 24 times in a run, and it cannot be done ahead: a creation
//! disturbs the timing of the suite measuring then, see [`crate::gpu::lease`]); a worker
//! creates one for its first suite and retains it for the rest.
//!
//! `all` talks to a worker through files in the worker's queue directory (named by [`ENV`]):
//! it writes the n-th suite's job (`job-n.json`: its command line, its turn files and its
//! log); the worker points its standard output and error at the log, runs the suite as the
//! command line says, and writes `exit-n` with the exit code. After a suite that completed or
//! was skipped it waits for the next job or for `stop`; after one that failed, or a panic, it
//! ends with the suite's exit code, so a poisoned context never serves another suite. `all`
//! still kills a suite at its deadline by killing the worker. A worker whose parent is gone
//! ends too.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};

/// The environment variable naming a worker's queue directory.
pub const ENV: &str = "GPUBENCH_WORKER";

/// How often an idle worker looks for its next job.
const POLL: Duration = Duration::from_millis(1);

/// One suite for a worker.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Job {
    /// The command line, as `gpubench` would be started with it (the program name first).
    pub args: Vec<String>,
    /// Variables of the suite's turn ([`crate::gpu::lease::var`]): its lease and its
    /// done-with-the-GPU file.
    pub vars: Vec<(String, String)>,
    /// Where its standard output and error go (created by `all`; appended to).
    pub log: PathBuf,
}

fn job_file(queue: &Path, n: u32) -> PathBuf {
    queue.join(format!("job-{n}.json"))
}

fn exit_file(queue: &Path, n: u32) -> PathBuf {
    queue.join(format!("exit-{n}"))
}

fn stop_file(queue: &Path) -> PathBuf {
    queue.join("stop")
}

/// Writes `contents` to `path` whole or not at all (a reader polling for it never sees half).
fn write_whole(path: &Path, contents: &[u8]) -> Result<()> {
    let partial = path.with_extension("partial");
    // A write cut short (a full disk, a file-size limit) leaves no half file behind.
    if let Err(error) = std::fs::write(&partial, contents) {
        let _ = std::fs::remove_file(&partial);
        return Err(error).with_context(|| format!("writing {}", partial.display()));
    }
    std::fs::rename(&partial, path).with_context(|| format!("writing {}", path.display()))
}

/// Gives the worker of `queue` its `n`-th job (from 1).
pub fn give(queue: &Path, n: u32, job: &Job) -> Result<()> {
    write_whole(&job_file(queue, n), &serde_json::to_vec(job)?)
}

/// The exit code of the worker's `n`-th suite, once it has ended with the worker still alive.
pub fn exit_code(queue: &Path, n: u32) -> Option<i32> {
    std::fs::read_to_string(exit_file(queue, n))
        .ok()?
        .trim()
        .parse()
        .ok()
}

/// Tells the worker of `queue` to end once it is idle.
pub fn stop(queue: &Path) -> Result<()> {
    write_whole(&stop_file(queue), b"")
}

/// This process as a worker: where it takes its jobs from, and how many it has taken.
pub struct Worker {
    queue: PathBuf,
    taken: u32,
    parent: i32,
}

fn parent() -> i32 {
    // SAFETY: getppid has no preconditions and cannot fail.
    unsafe { libc::getppid() }
}

impl Worker {
    /// This process as a worker, where [`ENV`] names a queue (its context is then kept between
    /// suites). The variable is taken out of the environment: the processes a suite starts
    /// (sync's probes, ncu and its program) are no workers.
    ///
    /// # Safety
    ///
    /// No other thread of the process may exist (it writes the environment).
    pub unsafe fn from_env() -> Option<Worker> {
        let queue = PathBuf::from(std::env::var_os(ENV)?);
        // SAFETY: the caller guarantees no other thread reads the environment meanwhile.
        unsafe { std::env::remove_var(ENV) };
        if crate::gpu::mechanisms::on(crate::gpu::mechanisms::Mechanism::Kept) {
            crate::gpu::kept::keep_context_between_suites();
        }
        Some(Worker {
            queue,
            taken: 0,
            parent: parent(),
        })
    }

    /// Waits for the next job and sets the process up for it (its log as standard output and
    /// error, its turn's variables); returns its command line, or `None` where the worker is
    /// told to stop or its parent is gone.
    pub fn next_job(&mut self) -> Result<Option<Vec<OsString>>> {
        let file = job_file(&self.queue, self.taken + 1);
        loop {
            if let Ok(text) = std::fs::read(&file) {
                let job: Job = serde_json::from_slice(&text)
                    .with_context(|| format!("reading {}", file.display()))?;
                self.taken += 1;
                start(&job)?;
                return Ok(Some(job.args.into_iter().map(OsString::from).collect()));
            }
            if stop_file(&self.queue).exists() || parent() != self.parent {
                return Ok(None);
            }
            std::thread::sleep(POLL);
        }
    }

    /// Records how the suite just run ended (`code`, its exit code); true where the worker
    /// may go on to another: the suite completed (0) or the device could not run it
    /// ([`crate::error::Exit::Unsupported`]).
    pub fn finished(&mut self, code: i32) -> Result<bool> {
        let goes_on = code == crate::error::Exit::Success as i32
            || code == crate::error::Exit::Unsupported as i32;
        if goes_on {
            write_whole(
                &exit_file(&self.queue, self.taken),
                code.to_string().as_bytes(),
            )?;
        }
        Ok(goes_on)
    }

    /// Ends the worker: its kept context goes before the process does.
    pub fn end(self) {
        crate::gpu::kept::release_kept_context();
    }
}

/// Points standard output and error at the job's log and hands its turn's variables over.
fn start(job: &Job) -> Result<()> {
    use std::io::Write;
    use std::os::fd::AsRawFd;
    let _ = std::io::stdout().flush();
    let _ = std::io::stderr().flush();
    let log = std::fs::OpenOptions::new()
        .append(true)
        .create(true)
        .open(&job.log)
        .with_context(|| format!("opening {}", job.log.display()))?;
    for target in [libc::STDOUT_FILENO, libc::STDERR_FILENO] {
        // SAFETY: dup2 makes `target` a copy of the log's descriptor, which is open; it touches
        // no memory of ours.
        if unsafe { libc::dup2(log.as_raw_fd(), target) } < 0 {
            return Err(std::io::Error::last_os_error())
                .with_context(|| format!("writing to {}", job.log.display()));
        }
    }
    crate::gpu::lease::set_suite_vars(
        job.vars
            .iter()
            .map(|(name, value)| (name.clone(), OsString::from(value)))
            .collect(),
    );
    super::suite::next_in_worker(job.args.clone());
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jobs_and_exits_pass_through_the_queue() {
        let queue = tempfile::tempdir().unwrap();
        let job = Job {
            args: vec!["gpubench".into(), "clock".into()],
            vars: vec![("GPUBENCH_GPU_LEASE".into(), "clock.go".into())],
            log: queue.path().join("clock.log"),
        };
        give(queue.path(), 1, &job).unwrap();
        let read: Job =
            serde_json::from_slice(&std::fs::read(job_file(queue.path(), 1)).unwrap()).unwrap();
        assert_eq!(read, job);
        assert_eq!(exit_code(queue.path(), 1), None);
        let mut worker = Worker {
            queue: queue.path().to_path_buf(),
            taken: 1,
            parent: parent(),
        };
        assert!(worker.finished(6).unwrap(), "a skipped suite lets it go on");
        assert_eq!(exit_code(queue.path(), 1), Some(6));
        worker.taken = 2;
        assert!(!worker.finished(4).unwrap(), "a failed suite ends it");
        assert_eq!(exit_code(queue.path(), 2), None, "its end is the process's");
        stop(queue.path()).unwrap();
        assert_eq!(worker.next_job().unwrap(), None);
    }
}
