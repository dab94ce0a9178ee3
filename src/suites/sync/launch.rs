//! Launchers of cuda/sync.cu: one barrier or SIMT-deadlock probe (always in a child process).

use std::time::Duration;

use cudarc::driver::PushKernelArg;

use crate::error::GpuError;
use crate::gpu::launch::*;
use crate::gpu::Gpu;

/// Whether probe `entry` spins in a loop that its clock64 watchdog ends (it takes the budget).
pub fn sync_probe_spins(entry: &str) -> bool {
    matches!(entry, "sync_simt_spin" | "sync_two_warp_spin")
}

/// Runs one probe of cuda/sync.cu as a single block of `threads` threads and returns its
/// `out` buffer (filled with -1 before the launch, so unwritten entries stay -1).
///
/// Kernel signatures, by entry:
/// - `sync_simt_spin`, `sync_two_warp_spin`: `(long long *out[out_len], long long budget)`
/// - `sync_divergent_syncthreads`, `sync_divergent_syncwarp`, `sync_syncwarp_exited`:
///   `(long long *out[out_len])`
/// - `sync_barrier_pairing`: `(long long *out[out_len], long long *scratch[128])`
pub fn sync_probe(
    gpu: &mut Gpu,
    entry: &str,
    threads: u32,
    out_len: usize,
    budget_cycles: i64,
    deadline: Duration,
) -> Result<Vec<i64>, GpuError> {
    let function = gpu.function("sync", entry)?;
    let stream = gpu.stream().clone();
    let mut out = upload(gpu, &vec![-1_i64; out_len], "the probe's output (all -1)")?;
    let mut scratch = zeros::<i64>(gpu, 128, "the probe's scratch buffer")?;
    let mut launch = stream.launch_builder(&function);
    launch.arg(&mut out);
    if sync_probe_spins(entry) {
        launch.arg(&budget_cycles);
    } else if entry == "sync_barrier_pairing" {
        launch.arg(&mut scratch);
    }
    // SAFETY: per entry, the arguments pushed above match the signatures listed in this
    // function's documentation; `out` holds out_len elements, which covers every index the
    // probes write for the thread counts the caller passes, and `scratch` holds 128.
    unsafe { launch_and_wait(gpu, entry, launch, one_block(threads), deadline) }?;
    read(gpu, &out, "a sync probe's output")
}
