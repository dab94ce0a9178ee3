//! The settings of `gpubench shared`: its subcommand's flags.

use std::path::PathBuf;

use clap::Args;
use serde::{Deserialize, Serialize};

#[derive(Debug, Args, Serialize, Deserialize)]
pub struct SharedArgs {
    /// Largest stride, in elements.
    #[arg(long, default_value_t = 33)]
    pub max_stride: u32,
    /// Dependent loads per timed chain (a multiple of 32).
    #[arg(long, default_value_t = 1024)]
    pub iterations: u32,
    /// CUDA device index; `all`, or a list such as 0,2,3, runs once per GPU in child processes,
    /// side by side (`--serial`: one after another), under one directory with devices.json.
    #[arg(long, default_value = "0")]
    pub device: crate::cli::DeviceSelection,
    /// New run directory (default: gpubench-runs/<UTC time>-shared); must not exist.
    #[arg(long)]
    pub output: Option<PathBuf>,
}
