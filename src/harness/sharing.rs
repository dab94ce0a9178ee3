//! What a suite may say of its use of the GPU, and all it may say: the one seam between a
//! suite and the way `gpubench all` shares the GPU between the processes it runs
//! (`gpu::lease` behind it). Outside `all` every call here does nothing but the work it is
//! given. A suite names no scheduler mechanism: it says that a step ended, that some host work
//! needs no GPU, that it will launch nothing more, or hands its place to a program of its own.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use crate::gpu::lease;

/// Notes that the step `what` of the suite's measurement has ended: where gpubench's trace is
/// on (`scripts/bench-all.sh`), the suite's log says how far into its time on the GPU it is.
pub fn step_done(what: &str) {
    lease::trace(what);
}

/// Runs `work`, host work with nothing of this process on the GPU, letting other suites
/// measure meanwhile; returns once the GPU is this process's again.
pub fn off_gpu<T>(work: impl FnOnce() -> T) -> anyhow::Result<T> {
    lease::host_work(work)
}

/// Says this process will launch nothing more, so another suite may start while this one
/// writes its files.
pub fn done_with_gpu() {
    lease::done_with_gpu();
}

/// Lowers this process's CPU priority, for host work beside another process's measurement.
pub fn lower_priority() {
    lease::lower_priority();
}

/// A child process of the suite's that measures on the GPU in its place (the sync suite's
/// probes): it may load the driver at once and starts measuring once [`let_child_measure`]
/// is called with the same `go`.
pub fn child_measures_after(command: &mut Command, go: &Path) {
    command.env(lease::LEASE_ENV, go);
}

/// Lets the child given `go` ([`child_measures_after`]) measure.
pub fn let_child_measure(go: &Path) -> std::io::Result<()> {
    lease::grant(go)
}

/// A child process of the suite's (slots' program under ncu) says through `done` when it
/// will launch nothing more ([`done_with_gpu`] in the child), so the suite may give the GPU
/// back while the child still writes.
pub fn child_says_when_done(command: &mut Command, done: &Path) {
    command.env(lease::GPU_DONE_ENV, done);
}

/// The environment variable naming, for a program of the suite's own, the stem of the files
/// by which the two sequence their steps ([`tell_program`], [`program_files`]).
const PROGRAM_FILES_ENV: &str = "GPUBENCH_PROGRAM_FILES";

/// Tells the program `command` runs the stem of the files by which the suite and it sequence
/// their steps: each side makes `stem.<step>` once its step is done ([`wait_for`]).
pub fn tell_program(command: &mut Command, stem: &Path) {
    command.env(PROGRAM_FILES_ENV, stem);
}

/// The stem [`tell_program`] gave this program, where it was given one.
pub fn program_files() -> Option<PathBuf> {
    lease::var(PROGRAM_FILES_ENV).map(PathBuf::from)
}

/// Waits until `file` exists (the suite that runs this program says so), or errs once that
/// suite has gone.
pub fn wait_for(file: &Path) -> Result<Duration, crate::error::GpuError> {
    lease::wait_for_grant(file)
}
