//! `gpubench info`: the device, the build, and the measured clock, as text or JSON.

use serde::Serialize;

use super::metadata::BuildRecord;
use crate::analysis::clock::SmClock;
use crate::analysis::stats::Summary;
use crate::gpu::DeviceProperties;

#[derive(Debug, Clone, Serialize)]
pub struct InfoReport {
    pub device: DeviceProperties,
    pub build: BuildRecord,
    pub sm_clock: SmClock,
    pub clock64_read_overhead_cycles: Summary,
}

fn kib(bytes: i32) -> String {
    format!("{} KiB", bytes / 1024)
}

pub fn render_text(info: &InfoReport) -> String {
    let d = &info.device;
    let o = &info.clock64_read_overhead_cycles;
    let rows = [
        ("device", format!("{} (index {})", d.name, d.ordinal)),
        ("compute capability", d.compute_capability.clone()),
        ("multiprocessors", d.multiprocessors.to_string()),
        ("L2 cache", kib(d.l2_cache_bytes)),
        (
            "shared memory per SM",
            kib(d.shared_memory_per_multiprocessor_bytes),
        ),
        (
            "shared memory per block",
            format!(
                "{} ({} opt-in)",
                kib(d.shared_memory_per_block_bytes),
                kib(d.shared_memory_per_block_optin_bytes)
            ),
        ),
        (
            "registers per SM",
            d.registers_per_multiprocessor.to_string(),
        ),
        ("registers per block", d.registers_per_block.to_string()),
        (
            "global memory",
            format!(
                "{:.1} GiB",
                d.global_memory_bytes as f64 / (1u64 << 30) as f64
            ),
        ),
        (
            "driver",
            format!(
                "{} (CUDA {})",
                d.driver_version.as_deref().unwrap_or("version unknown"),
                d.driver_cuda_version
            ),
        ),
        ("nvcc", info.build.nvcc_version.to_string()),
        ("PTX target", info.build.ptx_target.to_string()),
        (
            "SM clock (measured)",
            format!(
                "{:.0} MHz (clock64 over {:.1} ms of %globaltimer; nominal {:.0} MHz)",
                info.sm_clock.mhz,
                info.sm_clock.interval_ns as f64 / 1e6,
                d.nominal_sm_clock_mhz
            ),
        ),
        (
            "clock64 read overhead",
            format!(
                "min {} / median {} / max {} cycles over {} back-to-back pairs",
                o.min, o.median, o.max, o.n
            ),
        ),
    ];
    let width = rows.iter().map(|(name, _)| name.len()).max().unwrap_or(0);
    rows.iter()
        .map(|(name, value)| format!("{name:<width$}  {value}\n"))
        .collect()
}
