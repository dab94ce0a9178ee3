//! `devices.json`: the manifest of a command run on several GPUs (`--device all` or a list),
//! one run directory per GPU beside it, named by index and UUID.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use serde::{Deserialize, Serialize};

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

/// The GPUs' runs of a `devices.json` directory, as (name, directory) in device order, or
/// `None` for any other directory. Only runs whose directory holds something are listed.
pub fn gpu_runs(dir: &Path) -> Result<Option<Vec<(String, PathBuf)>>> {
    let path = dir.join(FILE);
    if !path.is_file() {
        return Ok(None);
    }
    let manifest: DevicesManifest = crate::report::saved::read_json(dir, FILE)
        .with_context(|| format!("{} is not a gpubench devices manifest", path.display()))?;
    let mut runs = Vec::new();
    for gpu in &manifest.gpus {
        if !crate::report::summary::plain_name(&gpu.dir) {
            bail!(
                "{} names a GPU directory {:?}, which is not a plain directory name; the run directory is damaged",
                path.display(),
                gpu.dir
            );
        }
        let run = dir.join(&gpu.dir);
        if run.is_dir() {
            // Named with the node's directory, so GPUs of several nodes stay apart.
            let node = dir
                .file_name()
                .map_or(String::new(), |n| format!("{}/", n.to_string_lossy()));
            runs.push((format!("{node}{}", gpu.dir), run));
        }
    }
    Ok(Some(runs))
}
