//! The lease of the GPU: which process may measure now. One process at a time holds it; a
//! process started ahead of its lease waits for it ([`take`]) after loading the driver; the
//! process that runs the others [`grant`]s it by creating the file [`LEASE_ENV`] names; a
//! process holding it may do long host work beside it ([`host_work`]: the lease goes back and
//! is asked for again), and host work beside a measurement runs at a lower priority
//! ([`lower_priority`]). The GPU seam takes the lease before it creates a context, and the
//! compile and disassembly helpers lower their priority; three suites still name it: the
//! cache suite's instruction space does its compiles as [`host_work`], sync grants the lease to
//! its probes' child processes, and slots grants it to ncu's program and steps aside while ncu
//! sets itself up (`suites::slots::ncu`). The rest of this comment says why the context waits
//! for it.
//!
//! A process started ahead of its turn on the GPU. `gpubench all` starts each suite's child
//! while the suite before still measures, and sync starts each probe's child while the probe
//! before runs: the child loads and initialises the driver (cuInit, about 0.1 s on an H100
//! host), then waits for the file [`LEASE_ENV`] names before it creates its context. Measured on
//! an H100 (driver 580): 166 cuInit calls of other processes during 400 timed L2 chases left
//! every chase within 0.1 cycles of the undisturbed ones (283.4 to 283.6 cycles per load both
//! ways), while 16 context creations pushed the slowest 1 % to 410 to 437 cycles; so the
//! context, and everything after it, waits for the turn. Timed against each phase of another
//! process (three runs): while it created contexts about a third of the chases ran slow (303
//! to 545 cycles against 274), while it destroyed them none did, and in the 0.06 s a process
//! exits with its context still alive one chase in twenty to thirty ran 289 cycles. A suite
//! drops its context (and with it the primary context's last reference) before it exits.
//! The driver creates and destroys contexts one at a time (H100: one creation took 0.10-0.13 s
//! alone, 0.16-0.18 s while another process destroyed its context, N processes creating theirs
//! at once N times as long). Keeping a finished suite's context until the next suite had
//! created its own, so that the two do not meet, was tried and left out: side by side on one
//! H100 host `all --quick` took 11.5-11.7 s either way. A
//! process on its turn may also step [`host_work`] for long host work (the instruction space's
//! compiles) and ask for the GPU again; an idle context disturbs nobody.

use std::path::Path;
use std::time::{Duration, Instant};

use crate::error::GpuError;

/// The environment variable naming the file whose existence gives this process the GPU.
pub const LEASE_ENV: &str = "GPUBENCH_GPU_LEASE";

/// The environment variable naming the file a process creates once it is done with the GPU
/// ([`done_with_gpu`]): `gpubench all` sets it for each suite, which creates the file after its
/// closing clock measurement, so the next suite may start while this one writes its files; a
/// suite that hands its turn to a program of its own (slots, to ncu) sets it for the program.
pub const GPU_DONE_ENV: &str = "GPUBENCH_GPU_DONE";

/// Says this process is done with the GPU, where [`GPU_DONE_ENV`] names a file for it.
pub fn done_with_gpu() {
    if let Some(path) = var(GPU_DONE_ENV) {
        // Best effort: without the file, the one waiting waits for the exit instead.
        let _ = std::fs::File::create(path);
    }
}

/// The turn's variables of the suite a worker process runs now, in place of its environment's
/// (see [`set_suite_vars`]).
static SUITE_VARS: std::sync::Mutex<Vec<(String, std::ffi::OsString)>> =
    std::sync::Mutex::new(Vec::new());

/// Variable `name` of the suite this process runs: as [`set_suite_vars`] set it, else from the
/// environment. `gpubench all` names a suite's turn files ([`LEASE_ENV`], the harness's
/// done-with-the-GPU file) in its child's environment, or, for a worker process that runs
/// several suites one after another, in each suite's job, which the worker hands over here
/// (the environment cannot change safely while threads may read it).
pub fn var(name: &str) -> Option<std::ffi::OsString> {
    let vars = SUITE_VARS.lock().unwrap_or_else(|e| e.into_inner());
    match vars.iter().find(|(n, _)| n == name) {
        Some((_, value)) => Some(value.clone()),
        None => std::env::var_os(name),
    }
}

/// Starts the next suite of a worker process: its turn's variables (read by [`var`]), and
/// none of the previous suite's steps aside counted.
pub fn set_suite_vars(vars: Vec<(String, std::ffi::OsString)>) {
    *SUITE_VARS.lock().unwrap_or_else(|e| e.into_inner()) = vars;
    ASIDE.store(0, std::sync::atomic::Ordering::SeqCst);
    WAITED_NANOS.store(0, std::sync::atomic::Ordering::SeqCst);
}

/// How often a waiting process looks for its turn.
const POLL: Duration = Duration::from_millis(1);

/// Waits, where [`LEASE_ENV`] is set, until the file it names exists; returns how long that took
/// (None where it is not set). Fails if the process that started this one ends first, so an
/// interrupted parent never leaves a waiting child behind.
pub fn take() -> Result<Option<Duration>, GpuError> {
    let waited = match var(LEASE_ENV) {
        Some(go) => wait_for(Path::new(&go), parent).map(Some),
        None => Ok(None),
    };
    *TURN_STARTED.lock().unwrap_or_else(|e| e.into_inner()) = Some(Instant::now());
    waited
}

/// The environment variable that makes a suite say in its log where its turn's time goes.
pub const TRACE_ENV: &str = "GPUBENCH_TRACE";

/// When this process's suite took the GPU ([`take`]).
static TURN_STARTED: std::sync::Mutex<Option<Instant>> = std::sync::Mutex::new(None);

/// Where [`TRACE_ENV`] is set, prints to standard error (the suite's log under `gpubench all`)
/// how far into its turn the suite is as `what` ends: the bench script's account of a turn's
/// host work (`scripts/bench-all.sh`).
pub fn trace(what: &str) {
    if std::env::var_os(TRACE_ENV).is_none() {
        return;
    }
    let since = TURN_STARTED
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .map_or(0.0, |t| t.elapsed().as_secs_f64());
    eprintln!("trace: {since:.3} s into the turn: {what}");
}

fn parent() -> i32 {
    // SAFETY: getppid has no preconditions and cannot fail.
    unsafe { libc::getppid() }
}

/// Waits until `file` exists: a grant of the GPU by the process that runs this one, beside the
/// first ([`take`]); an error once that parent has gone.
pub fn wait_for_grant(file: &Path) -> Result<Duration, GpuError> {
    wait_for(file, parent)
}

fn wait_for(go: &Path, parent: impl Fn() -> i32) -> Result<Duration, GpuError> {
    let started = Instant::now();
    let first_parent = parent();
    while !go.exists() {
        if parent() != first_parent {
            return Err(GpuError::LeaseAbandoned);
        }
        std::thread::sleep(POLL);
    }
    Ok(started.elapsed())
}

/// The nice value of host work done beside a measurement.
const BACKGROUND_NICE: libc::c_int = 10;

/// Lowers the calling thread's CPU priority, and that of the processes it starts (ptxas,
/// cuobjdump), to nice 10: host work beside a measurement (compiles ahead or aside,
/// disassembly) then takes only the cores the process on its turn leaves idle, so that
/// process's context creation, chain building and fits are not slowed by it. Best effort: a
/// host that refuses leaves the priority as it was.
pub fn lower_priority() {
    // SAFETY: gettid and setpriority only read and set the calling thread's scheduling
    // attributes (on Linux the nice value is per thread).
    unsafe {
        let thread = libc::gettid();
        let _ = libc::setpriority(libc::PRIO_PROCESS, thread as libc::id_t, BACKGROUND_NICE);
    }
}

/// Gives the process waiting on `go` its turn.
pub fn grant(go: &Path) -> std::io::Result<()> {
    std::fs::File::create(go).map(drop)
}

/// The file of the `n`-th time (from 1) a process that was given its turn by `go` stepped
/// aside: `what` is "back" (it handed the GPU back), "want" (it asks for it again) or "go"
/// (it has it again).
pub fn host_work_file(go: &Path, n: u32, what: &str) -> std::path::PathBuf {
    let mut name = go.as_os_str().to_owned();
    name.push(format!("-{n}.{what}"));
    name.into()
}

/// Times this process has stepped aside.
static ASIDE: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);

/// Nanoseconds this process waited for the GPU again after stepping aside.
static WAITED_NANOS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// How long this process waited for the GPU again after its host work aside was done (while
/// other suites measured).
pub fn waited_after_host_work() -> Duration {
    Duration::from_nanos(WAITED_NANOS.load(std::sync::atomic::Ordering::Relaxed))
}

/// Runs the host work `f` off the GPU: where this process was started ahead of its turn
/// ([`LEASE_ENV`]), it hands the GPU back first, so `gpubench all` may give another suite a turn
/// while `f` runs, then asks for the GPU again and waits until it has it. Nothing of this
/// process may be running on the GPU when it is called. Elsewhere, or with parked host work
/// turned off ([`super::mechanisms`]), it just runs `f`.
pub fn host_work<T>(f: impl FnOnce() -> T) -> anyhow::Result<T> {
    use super::mechanisms::{Mechanism, on};
    match var(LEASE_ENV).filter(|_| on(Mechanism::Parked)) {
        Some(go) => {
            let n = ASIDE.fetch_add(1, std::sync::atomic::Ordering::SeqCst) + 1;
            host_work_with(Path::new(&go), n, parent, f)
        }
        None => Ok(f()),
    }
}

fn host_work_with<T>(
    go: &Path,
    n: u32,
    parent: impl Fn() -> i32,
    f: impl FnOnce() -> T,
) -> anyhow::Result<T> {
    use anyhow::Context;
    let mark = |what: &str| {
        let file = host_work_file(go, n, what);
        grant(&file).with_context(|| format!("creating {}", file.display()))
    };
    mark("back")?;
    let value = f();
    mark("want")?;
    let waited = wait_for(&host_work_file(go, n, "go"), parent)?;
    WAITED_NANOS.fetch_add(
        u64::try_from(waited.as_nanos()).unwrap_or(u64::MAX),
        std::sync::atomic::Ordering::Relaxed,
    );
    Ok(value)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;

    #[test]
    fn the_turn_comes_when_the_file_appears() {
        let dir = tempfile::tempdir().unwrap();
        let go = dir.path().join("go");
        let giver = {
            let go = go.clone();
            std::thread::spawn(move || {
                std::thread::sleep(Duration::from_millis(30));
                grant(&go).unwrap();
            })
        };
        let waited = wait_for(&go, || 1).unwrap();
        giver.join().unwrap();
        assert!(waited >= Duration::from_millis(25), "waited {waited:?}");
    }

    #[test]
    fn stepping_aside_hands_the_gpu_back_and_waits_for_it_again() {
        let dir = tempfile::tempdir().unwrap();
        let go = dir.path().join("suite.go");
        let child = {
            let go = go.clone();
            std::thread::spawn(move || host_work_with(&go, 1, || 1, || 42).unwrap())
        };
        let appears = |file: std::path::PathBuf| {
            let started = Instant::now();
            while !file.exists() {
                assert!(started.elapsed() < Duration::from_secs(10), "{file:?}");
                std::thread::sleep(POLL);
            }
        };
        appears(host_work_file(&go, 1, "back"));
        appears(host_work_file(&go, 1, "want"));
        std::thread::sleep(Duration::from_millis(20));
        assert!(!child.is_finished(), "it waits for the GPU again");
        grant(&host_work_file(&go, 1, "go")).unwrap();
        assert_eq!(child.join().unwrap(), 42);
        assert_eq!(
            host_work_file(&go, 3, "want").file_name().unwrap(),
            "suite.go-3.want"
        );
    }

    #[test]
    fn a_suites_variables_stand_in_for_the_environment_and_reset_its_steps_aside() {
        ASIDE.store(3, std::sync::atomic::Ordering::SeqCst);
        set_suite_vars(vec![("GPUBENCH_TEST_TURN_VAR".into(), "next.go".into())]);
        assert_eq!(var("GPUBENCH_TEST_TURN_VAR"), Some("next.go".into()));
        assert_eq!(ASIDE.load(std::sync::atomic::Ordering::SeqCst), 0);
        assert_eq!(var("GPUBENCH_TEST_TURN_VAR_UNSET"), None);
        set_suite_vars(Vec::new());
        assert_eq!(var("GPUBENCH_TEST_TURN_VAR"), None);
    }

    #[test]
    fn background_work_lowers_its_own_thread_only() {
        let nice = || {
            // SAFETY: reads the calling thread's nice value.
            unsafe { libc::getpriority(libc::PRIO_PROCESS, libc::gettid() as libc::id_t) }
        };
        let before = nice();
        let (lowered, started_at) = std::thread::spawn(move || {
            let started_at = nice();
            lower_priority();
            (nice(), started_at)
        })
        .join()
        .unwrap();
        assert!(
            lowered >= BACKGROUND_NICE.max(started_at),
            "{started_at} -> {lowered}"
        );
        assert_eq!(nice(), before, "the calling thread keeps its priority");
    }

    #[test]
    fn a_parent_that_ends_first_ends_the_wait() {
        let dir = tempfile::tempdir().unwrap();
        let calls = Cell::new(0);
        let outcome = wait_for(&dir.path().join("never"), || {
            calls.set(calls.get() + 1);
            if calls.get() > 3 { 1 } else { 4242 }
        });
        assert!(matches!(outcome, Err(GpuError::LeaseAbandoned)));
    }
}
