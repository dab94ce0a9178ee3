//! A process started ahead of its turn on the GPU. `gpubench all` starts each suite's child
//! while the suite before still measures, and sync starts each probe's child while the probe
//! before runs: the child loads and initialises the driver (cuInit, about 0.1 s on an H100
//! host), then waits for the file [`GO_ENV`] names before it creates its context. Measured on
//! an H100 (driver 580): 166 cuInit calls of other processes during 400 timed L2 chases left
//! every chase within 0.1 cycles of the undisturbed ones (283.4 to 283.6 cycles per load both
//! ways), while 16 context creations pushed the slowest 1 % to 410 to 437 cycles; so the
//! context, and everything after it, waits for the turn.

use std::path::Path;
use std::time::{Duration, Instant};

use crate::error::GpuError;

/// The environment variable naming the file whose existence gives this process the GPU.
pub const GO_ENV: &str = "GPUBENCH_GPU_GO";

/// How often a waiting process looks for its turn.
const POLL: Duration = Duration::from_millis(1);

/// Waits, where [`GO_ENV`] is set, until the file it names exists; returns how long that took
/// (None where it is not set). Fails if the process that started this one ends first, so an
/// interrupted parent never leaves a waiting child behind.
pub fn wait() -> Result<Option<Duration>, GpuError> {
    match std::env::var_os(GO_ENV) {
        Some(go) => wait_for(Path::new(&go), parent).map(Some),
        None => Ok(None),
    }
}

fn parent() -> i32 {
    // SAFETY: getppid has no preconditions and cannot fail.
    unsafe { libc::getppid() }
}

fn wait_for(go: &Path, parent: impl Fn() -> i32) -> Result<Duration, GpuError> {
    let started = Instant::now();
    let first_parent = parent();
    while !go.exists() {
        if parent() != first_parent {
            return Err(GpuError::TurnAbandoned);
        }
        std::thread::sleep(POLL);
    }
    Ok(started.elapsed())
}

/// Gives the process waiting on `go` its turn.
pub fn give(go: &Path) -> std::io::Result<()> {
    std::fs::File::create(go).map(drop)
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
                give(&go).unwrap();
            })
        };
        let waited = wait_for(&go, || 1).unwrap();
        giver.join().unwrap();
        assert!(waited >= Duration::from_millis(25), "waited {waited:?}");
    }

    #[test]
    fn a_parent_that_ends_first_ends_the_wait() {
        let dir = tempfile::tempdir().unwrap();
        let calls = Cell::new(0);
        let outcome = wait_for(&dir.path().join("never"), || {
            calls.set(calls.get() + 1);
            if calls.get() > 3 { 1 } else { 4242 }
        });
        assert!(matches!(outcome, Err(GpuError::TurnAbandoned)));
    }
}
