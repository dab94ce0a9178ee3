//! `devices.json`: the manifest of a command run on several GPUs (`--device all` or a list),
//! one run directory per GPU beside it, named by index and UUID.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};

use crate::error::bail_usage;
use crate::gpu::DeviceIdentity;

pub const FILE: &str = "devices.json";

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct DevicesManifest {
    /// The command each GPU ran, without `--device` and `--output`.
    pub command: Vec<String>,
    /// Whether the GPUs ran side by side (the default) or one after another (`--serial`).
    pub parallel: bool,
    pub started_utc: String,
    pub finished_utc: Option<String>,
    pub gpus: Vec<GpuRun>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct GpuRun {
    pub device: DeviceIdentity,
    /// The GPU's run directory, relative to the manifest's.
    pub dir: String,
    /// Its output (stdout and stderr), relative to the manifest's directory.
    pub log: String,
    /// "running", "complete", or "failed (exit N)".
    pub status: String,
    pub seconds: Option<f64>,
    /// Where it did not complete, what failed and how: each suite of its `all.json` that did
    /// not complete ("suite: status (error)"), else the last line of its log.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub failures: Vec<String>,
}

/// One GPU's run directory of a manifest, as `compare` reads it.
pub struct GpuRunDir {
    /// `<node directory>/<GPU directory>`.
    pub name: String,
    pub path: PathBuf,
    /// Where the GPU's run did not complete: its status and failures, in words.
    pub failed: Option<String>,
}

/// What [`GpuRun::failures`] says of the GPU run in `root`/`gpu.dir`.
pub fn failures_of(root: &Path, gpu: &GpuRun) -> Vec<String> {
    let manifest = std::fs::read_to_string(root.join(&gpu.dir).join("all.json"))
        .ok()
        .and_then(|text| serde_json::from_str::<super::summary::model::AllManifest>(&text).ok());
    if let Some(all) = manifest {
        return all
            .suites
            .into_iter()
            .filter(|s| s.status != "complete")
            .map(|s| match s.error {
                Some(error) => format!("{}: {} ({error})", s.name, s.status),
                None => format!("{}: {}", s.name, s.status),
            })
            .collect();
    }
    super::run_dir::last_log_line(&root.join(&gpu.log))
        .into_iter()
        .collect()
}

/// The directory name of a GPU's run: `gpu<index>-<first 8 hex digits of the UUID>`.
pub fn dir_name(device: &DeviceIdentity) -> String {
    let short: String = device
        .uuid
        .trim_start_matches("GPU-")
        .chars()
        .filter(char::is_ascii_hexdigit)
        .take(8)
        .collect();
    format!("gpu{}-{short}", device.index)
}

/// The GPUs' runs of a `devices.json` directory in device order, or `None` for any other
/// directory: each whose directory exists or whose run failed.
pub fn gpu_runs(dir: &Path) -> Result<Option<Vec<GpuRunDir>>> {
    let path = dir.join(FILE);
    if !path.is_file() {
        return Ok(None);
    }
    let manifest: DevicesManifest = crate::report::saved::read_json(dir, FILE)
        .with_context(|| format!("{} is not a gpubench devices manifest", path.display()))?;
    let mut runs = Vec::new();
    for gpu in &manifest.gpus {
        if !crate::report::summary::plain_name(&gpu.dir) {
            bail_usage!(
                "{} names a GPU directory {:?}, which is not a plain directory name; the run directory is damaged",
                path.display(),
                gpu.dir
            );
        }
        let run = dir.join(&gpu.dir);
        // Named with the node's directory, so GPUs of several nodes stay apart.
        let node = dir
            .file_name()
            .map_or(String::new(), |n| format!("{}/", n.to_string_lossy()));
        let failed = (gpu.status != "complete").then(|| {
            let mut note = format!("{} ({}): {}", gpu.device.name, gpu.device.uuid, gpu.status);
            for failure in &gpu.failures {
                note += &format!("; {failure}");
            }
            note
        });
        if manifest.gpus.iter().filter(|g| g.dir == gpu.dir).count() > 1 {
            bail_usage!(
                "{} lists the GPU directory {} more than once; the run directory is damaged",
                path.display(),
                gpu.dir
            );
        }
        if failed.is_none() && !run.is_dir() {
            bail_usage!(
                "{} records the GPU run {} as complete, but {} is not a directory; the run directory is damaged",
                path.display(),
                gpu.dir,
                run.display()
            );
        }
        if run.is_dir() || failed.is_some() {
            runs.push(GpuRunDir {
                name: format!("{node}{}", gpu.dir),
                path: run,
                failed,
            });
        }
    }
    Ok(Some(runs))
}
