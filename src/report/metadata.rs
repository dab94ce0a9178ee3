//! `metadata.json`: what ran, where, built by what, and how it ended. Written when a run
//! starts (status "running"), after each stage, and when it ends ("complete", "failed", or
//! "skipped" where the device cannot run it).

use serde::{Deserialize, Serialize};

use crate::analysis::clock::SmClock;
use crate::analysis::stats::Summary;
use crate::gpu::DeviceProperties;
use crate::kernels;

#[derive(Debug, Clone, Serialize)]
pub struct PtxRecord {
    pub module: &'static str,
    pub sha256: String,
    pub isa_version: Option<&'static str>,
    /// The architecture the PTX targets (`sm_75`, or `sm_90a` for a Hopper-only module).
    pub target: Option<&'static str>,
    /// How the module reached the GPU (the driver's JIT or a cubin `all` prebuilt), once the
    /// suite has loaded it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub loaded: Option<String>,
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
                    target: module.target(),
                    loaded: None,
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
    /// The device cannot run it ([`crate::error::Unsupported`], exit 6); the error says why.
    Skipped,
}

#[derive(Debug, Clone, Serialize)]
pub struct RunMetadata {
    /// The run-directory format ([`super::formats::CURRENT`]).
    pub format: u32,
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
    /// The hardware work queues of the run's context (CUDA_DEVICE_MAX_CONNECTIONS, see
    /// [`crate::gpu::connections`]).
    pub device_max_connections: String,
    /// Host time from launch to completion of the measuring kernels, copies included.
    pub gpu_busy_seconds: Option<f64>,
    /// Where the process's wall time went; `None` until the run ends.
    pub time_split: Option<TimeSplit>,
    /// Of `time_split`'s GPU time: the waits by the kernel waited for, the longest first
    /// (`scripts/bench-all.sh` names the longest of each suite).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub gpu_waits: Vec<crate::gpu::KernelWait>,
    /// The GPU's identity and health (NVML) before and after the run, and whether it was
    /// throttled.
    pub nvml: crate::gpu::health::NvmlRecord,
    /// Other processes on the GPU, MIG and pending retirements ([`crate::gpu::conditions`]).
    pub conditions: crate::gpu::conditions::Conditions,
    /// The experiment's settings and any run-specific notes (e.g. what was subtracted).
    pub settings: serde_json::Value,
}

/// A suite's wall time from opening the device to its last figure, split into starting the
/// driver (cuInit and the context), JIT-compiling modules, waiting for GPU work, and the rest
/// (host work: building chains, fitting, drawing, checking SASS).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct TimeSplit {
    pub wall_seconds: f64,
    pub driver_start_seconds: f64,
    /// Starting the driver (cuInit) while the suite before it measured: overlapped with that
    /// suite, not in this one's wall time; 0 where it was not (`driver_ahead_seconds` in
    /// files of format 2 and before).
    #[serde(
        default,
        skip_serializing_if = "is_zero",
        alias = "driver_ahead_seconds"
    )]
    pub driver_start_overlapped_seconds: f64,
    /// Time waiting for the GPU again after host work done off it while other suites
    /// measured (in the wall time, not in the host time; `waiting_for_turn_seconds` in files
    /// of format 2 and before).
    #[serde(
        default,
        skip_serializing_if = "is_zero",
        alias = "waiting_for_turn_seconds"
    )]
    pub waiting_for_gpu_seconds: f64,
    pub jit_seconds: f64,
    pub gpu_wait_seconds: f64,
    pub host_seconds: f64,
    /// Of the wall time (its GPU and host parts): from the context to the suite's own
    /// measurement (modules, device properties, NVML, the opening clock measurements, the run
    /// directory); 0 where not recorded.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub setup_seconds: f64,
}

fn is_zero(seconds: &f64) -> bool {
    *seconds == 0.0
}

impl TimeSplit {
    pub fn of(spent: &crate::gpu::TimeSpent) -> TimeSplit {
        let wall = spent.opened.elapsed().as_secs_f64();
        let driver_start = spent.driver_start.as_secs_f64();
        let jit = spent.jit_seconds();
        let gpu_wait = spent.gpu_wait_seconds();
        let waiting = spent.waiting_for_gpu_seconds();
        TimeSplit {
            wall_seconds: wall,
            driver_start_seconds: driver_start,
            driver_start_overlapped_seconds: spent.driver_ahead.as_secs_f64(),
            waiting_for_gpu_seconds: waiting,
            jit_seconds: jit,
            gpu_wait_seconds: gpu_wait,
            host_seconds: (wall - driver_start - jit - gpu_wait - waiting).max(0.0),
            setup_seconds: spent.setup.as_secs_f64(),
        }
    }

    /// "JIT 0.4 s, GPU 1.2 s, host 0.3 s, driver start 0.2 s".
    pub fn describe(&self) -> String {
        format!(
            "JIT {:.1} s, GPU {:.1} s, host {:.1} s, driver start {:.1} s",
            self.jit_seconds, self.gpu_wait_seconds, self.host_seconds, self.driver_start_seconds
        )
    }
}

pub use crate::gpu::health::utc_now;

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

/// The longest text field of a saved `metadata.json`'s device and build that gpubench reads
/// back (device names run to about 50 characters).
pub const MAX_FIELD_CHARS: usize = 256;

/// What the summary, `report` and `compare` read back from a saved `metadata.json`: the same
/// fields [`RunMetadata`] writes, typed, each optional where an older or an unfinished run may
/// lack it.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct SavedMetadata {
    /// The run-directory format; `None` in runs written before formats were recorded.
    pub format: Option<u32>,
    pub suite: String,
    pub status: String,
    pub error: Option<String>,
    pub started_utc: String,
    pub build: SavedBuild,
    pub device: SavedDevice,
    pub sm_clock_before: SavedClock,
    pub gpu_busy_seconds: Option<f64>,
    pub time_split: Option<TimeSplit>,
    pub nvml: crate::gpu::health::NvmlRecord,
    /// What was checked of the GPU's other users and state; `None` in runs written before.
    pub conditions: Option<crate::gpu::conditions::Conditions>,
    pub settings: serde_json::Value,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct SavedBuild {
    pub gpubench_version: String,
    pub git_commit: String,
    pub nvcc_version: String,
    pub ptx_target: String,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct SavedDevice {
    pub name: String,
    pub compute_capability: String,
    pub multiprocessors: i64,
    pub registers_per_block: Option<u32>,
    pub driver_version: Option<String>,
    pub driver_cuda_version: String,
    /// The driver's nominal peak SM clock, where recorded.
    pub nominal_sm_clock_mhz: Option<f64>,
}

#[derive(Debug, Clone, Copy, Default, Deserialize)]
#[serde(default)]
pub struct SavedClock {
    pub mhz: Option<f64>,
}

impl SavedMetadata {
    /// `dir/metadata.json`. Refuses, in one sentence, a device or a clock no GPU has (an SM count below zero, an SM
    /// clock of zero) and a name or version holding a line break ([`Self::text_violation`]):
    /// the caption, the machine model and the simulator options are built from them.
    pub fn read(dir: &std::path::Path) -> anyhow::Result<SavedMetadata> {
        let saved: SavedMetadata = super::saved::read_json(dir, "metadata.json")?;
        let file = dir.join("metadata.json").display().to_string();
        if let Some(why) =
            super::formats::too_new(&file, saved.format(), Some(&saved.build.gpubench_version))
        {
            return Err(crate::error::UsageError::new(why).into());
        }
        let why = if let Some(why) = saved.text_violation() {
            Some(why)
        } else if saved.device.multiprocessors <= 0 {
            Some(format!(
                "device.multiprocessors is {} (or missing), but a GPU has one SM at least",
                saved.device.multiprocessors
            ))
        } else {
            saved
                .sm_clock_before
                .mhz
                .filter(|mhz| !(mhz.is_finite() && *mhz > 0.0))
                .map(|mhz| {
                    format!(
                        "sm_clock_before.mhz is {mhz}, but a measured SM clock is more than zero"
                    )
                })
        };
        match why {
            Some(why) => Err(crate::error::UsageError::new(super::domain::refusal(
                &dir.join("metadata.json").display().to_string(),
                &why,
            ))
            .into()),
            None => Ok(saved),
        }
    }

    /// The first text field that no GPU, driver or build of gpubench writes: one holding a
    /// line break or another control character (it would become a line of its own in the
    /// caption, the Markdown tables or an option line of `export --format accel-sim`), or one
    /// longer than [`MAX_FIELD_CHARS`].
    fn text_violation(&self) -> Option<String> {
        let d = &self.device;
        let b = &self.build;
        let fields = [
            ("suite", Some(self.suite.as_str())),
            ("status", Some(self.status.as_str())),
            ("started_utc", Some(self.started_utc.as_str())),
            ("device.name", Some(d.name.as_str())),
            (
                "device.compute_capability",
                Some(d.compute_capability.as_str()),
            ),
            ("device.driver_version", d.driver_version.as_deref()),
            (
                "device.driver_cuda_version",
                Some(d.driver_cuda_version.as_str()),
            ),
            ("build.gpubench_version", Some(b.gpubench_version.as_str())),
            ("build.git_commit", Some(b.git_commit.as_str())),
            ("build.nvcc_version", Some(b.nvcc_version.as_str())),
            ("build.ptx_target", Some(b.ptx_target.as_str())),
        ];
        fields.into_iter().find_map(|(key, text)| {
            let text = text?;
            if let Some(c) = text.chars().find(|c| c.is_control()) {
                Some(format!(
                    "{key} holds the control character {:?}, which no driver or build of gpubench writes",
                    c
                ))
            } else if text.chars().count() > MAX_FIELD_CHARS {
                Some(format!(
                    "{key} is {} characters long, more than the {MAX_FIELD_CHARS} gpubench writes",
                    text.chars().count()
                ))
            } else {
                None
            }
        })
    }

    pub fn complete(&self) -> bool {
        self.status == "complete"
    }

    /// The run-directory format it was written in.
    pub fn format(&self) -> u32 {
        self.format.unwrap_or(super::formats::UNRECORDED)
    }

    /// Which other process shared the GPU with the suite, where one did.
    pub fn shared(&self) -> Option<String> {
        self.conditions.as_ref().and_then(|c| c.shared())
    }

    /// [`plot_title`] for this run.
    pub fn plot_title(&self, what: &str) -> String {
        plot_title(
            what,
            or_unknown(&self.device.name),
            or_unknown(&self.device.compute_capability),
            self.sm_clock_before.mhz.unwrap_or(f64::NAN),
        )
    }

    /// The suite's settings read as `T` (its own view of them).
    pub fn settings<T: serde::de::DeserializeOwned>(&self) -> anyhow::Result<T> {
        use anyhow::Context;
        serde_json::from_value(self.settings.clone())
            .with_context(|| format!("the {} run's settings are not as expected", self.suite))
    }
}

pub fn or_unknown(text: &str) -> &str {
    if text.is_empty() { "?" } else { text }
}
