//! `metadata.json`: what ran, where, built by what, and how it ended. Written when a run
//! starts (status "running"), after each stage, and when it ends ("complete" or "failed").

use std::time::SystemTime;

use serde::Serialize;

use crate::analysis::clock::SmClock;
use crate::analysis::stats::Summary;
use crate::gpu::DeviceProperties;
use crate::kernels;

#[derive(Debug, Clone, Serialize)]
pub struct PtxRecord {
    pub module: &'static str,
    pub sha256: String,
    pub isa_version: Option<&'static str>,
}

#[derive(Debug, Clone, Serialize)]
pub struct BuildRecord {
    pub gpubench_version: &'static str,
    pub git_commit: &'static str,
    pub nvcc_version: &'static str,
    pub ptx_target: &'static str,
    pub ptx: Vec<PtxRecord>,
}

impl BuildRecord {
    /// The build of this binary, with the PTX of the named kernel modules.
    pub fn current(modules: &[&str]) -> BuildRecord {
        BuildRecord {
            gpubench_version: env!("CARGO_PKG_VERSION"),
            git_commit: kernels::GIT_COMMIT,
            nvcc_version: kernels::NVCC_VERSION,
            ptx_target: kernels::PTX_ARCH,
            ptx: kernels::MODULES
                .iter()
                .filter(|module| modules.contains(&module.name))
                .map(|module| PtxRecord {
                    module: module.name,
                    sha256: module.sha256(),
                    isa_version: module.isa_version(),
                })
                .collect(),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Running,
    Complete,
    Failed,
}

#[derive(Debug, Clone, Serialize)]
pub struct RunMetadata {
    pub suite: &'static str,
    pub status: Status,
    pub error: Option<String>,
    pub command_line: Vec<String>,
    pub started_utc: String,
    pub finished_utc: Option<String>,
    pub build: BuildRecord,
    pub device: DeviceProperties,
    /// Measured with clock64 against %globaltimer just before the first measurement.
    pub sm_clock_before: SmClock,
    /// The same probe after the last measurement; `None` until then.
    pub sm_clock_after: Option<SmClock>,
    /// Back-to-back clock64 reads in a one-thread probe kernel.
    pub clock64_read_overhead_cycles: Summary,
    /// Host time from launch to completion of the measuring kernels, copies included.
    pub gpu_busy_seconds: Option<f64>,
    /// The experiment's settings and any run-specific notes (e.g. what was subtracted).
    pub settings: serde_json::Value,
}

pub fn utc_now() -> String {
    humantime::format_rfc3339_seconds(SystemTime::now()).to_string()
}

impl RunMetadata {
    pub fn finish(&mut self, status: Status, error: Option<String>) {
        self.status = status;
        self.error = error;
        self.finished_utc = Some(utc_now());
    }
}

/// A plot title naming the experiment, the device and the clock it ran at.
pub fn plot_title(what: &str, device: &str, compute_capability: &str, mhz: f64) -> String {
    format!("{what} on {device} (CC {compute_capability}), SM clock {mhz:.0} MHz")
}

/// [`plot_title`] from a saved metadata.json.
pub fn plot_title_from(what: &str, metadata: &serde_json::Value) -> String {
    plot_title(
        what,
        metadata["device"]["name"].as_str().unwrap_or("?"),
        metadata["device"]["compute_capability"]
            .as_str()
            .unwrap_or("?"),
        metadata["sm_clock_before"]["mhz"]
            .as_f64()
            .unwrap_or(f64::NAN),
    )
}
