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
    /// Identity, settings and one health sample through NVML.
    #[serde(default)]
    pub nvml: crate::gpu::health::NvmlRecord,
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
    let mut rows = rows.to_vec();
    rows.extend(nvml_rows(&info.nvml));
    let width = rows.iter().map(|(name, _)| name.len()).max().unwrap_or(0);
    rows.iter()
        .map(|(name, value)| format!("{name:<width$}  {value}\n"))
        .collect()
}

/// The NVML lines of `info`: identity, settings, and the state sampled now.
fn nvml_rows(nvml: &crate::gpu::health::NvmlRecord) -> Vec<(&'static str, String)> {
    let Some(id) = &nvml.identity else {
        return vec![(
            "NVML",
            nvml.unavailable
                .clone()
                .unwrap_or_else(|| "not read".into()),
        )];
    };
    let text = |v: &Option<String>| v.clone().unwrap_or_else(|| "-".into());
    let flag =
        |v: Option<bool>| v.map_or("-".into(), |on| if on { "on" } else { "off" }.to_string());
    let clocks = |c: Option<crate::gpu::health::Clocks>| {
        c.map_or("-".into(), |c| {
            format!("SM {} MHz, memory {} MHz", c.sm_mhz, c.memory_mhz)
        })
    };
    let watts = |w: Option<f64>| w.map_or("-".into(), |w| format!("{w:.0} W"));
    let mut rows = vec![
        ("UUID", text(&id.uuid)),
        ("serial", text(&id.serial)),
        ("board part number", text(&id.board_part_number)),
        ("PCI bus id", text(&id.pci_bus_id)),
        ("VBIOS", text(&id.vbios_version)),
        ("persistence mode", flag(id.persistence_mode)),
        ("ECC", flag(id.ecc_enabled)),
        (
            "power limit",
            format!(
                "{} (enforced {})",
                watts(id.power_limit_watts),
                watts(id.enforced_power_limit_watts)
            ),
        ),
        (
            "application clocks",
            format!(
                "{} (default {})",
                clocks(id.application_clocks),
                clocks(id.default_application_clocks)
            ),
        ),
        ("maximum clocks", clocks(id.max_clocks)),
    ];
    if let Some(now) = &nvml.before {
        rows.push((
            "now",
            format!(
                "{} °C, {}, {}, {}; clock limits: {}; ECC errors since boot: {} corrected, {} uncorrected",
                now.temperature_c.map_or("-".into(), |t| t.to_string()),
                watts(now.power_draw_watts),
                clocks(now.clocks),
                text(&now.performance_state),
                now.clock_limit_reasons
                    .as_ref()
                    .map_or("-".into(), |r| if r.is_empty() { "none".into() } else { r.join(", ") }),
                now.ecc_volatile_corrected.map_or("-".into(), |n| n.to_string()),
                now.ecc_volatile_uncorrected.map_or("-".into(), |n| n.to_string()),
            ),
        ));
    }
    rows
}
