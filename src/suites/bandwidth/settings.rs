//! `gpubench bandwidth`'s arguments.

use std::path::PathBuf;

use clap::Args;
use serde::{Deserialize, Serialize};

#[derive(Debug, Args, Serialize, Deserialize)]
pub struct BandwidthArgs {
    /// Timed launches per headline point (after calibration); a point is their median.
    #[arg(long, default_value_t = 5)]
    pub repeats: u32,
    /// Timed launches per point of the sweeps against footprint (the occupancy searches time
    /// three).
    #[arg(long, default_value_t = 3)]
    pub sweep_repeats: u32,
    /// Each launch runs at least this long (passes are doubled until it does), in ms.
    #[arg(long, default_value_t = 2.0)]
    pub min_ms: f64,
    /// The L2's headline figures' launches (each operation at its winning occupancy) run at
    /// least this long, in ms: long launches spread the slow start of each over enough passes
    /// that the figure repeats between runs.
    #[arg(long, default_value_t = 8.0)]
    pub headline_ms: f64,
    /// Footprints per doubling in the sweeps.
    #[arg(long, default_value_t = 3)]
    pub points_per_doubling: u32,
    /// Largest device-wide footprint in bytes (default: 16 × the L2, at least 1 GiB, at most
    /// a quarter of the device's memory).
    #[arg(long)]
    pub max_bytes: Option<u64>,
    /// Largest footprint per SM of the L1 sweep, in bytes.
    #[arg(long, default_value_t = 4 << 20)]
    pub max_sm_bytes: u64,
    /// CUDA device index; `all`, or a list such as 0,2,3, runs once per GPU in child processes,
    /// side by side (`--serial`: one after another), under one directory with devices.json.
    #[arg(long, default_value = "0")]
    pub device: crate::cli::DeviceSelection,
    /// New run directory (default: gpubench-runs/<UTC time>-bandwidth); must not exist.
    #[arg(long)]
    pub output: Option<PathBuf>,
}

/// What metadata.json's settings record of a run: the timing, the sizes swept and the method.
/// Written by [`super::run`]; nothing reads it back.
#[derive(Debug, Serialize, Deserialize)]
pub struct Recorded {
    pub headline_ms: f64,
    pub max_device_bytes: u64,
    pub max_sm_bytes: u64,
    pub method: String,
    pub min_ms: f64,
    pub points_per_doubling: u32,
    pub repeats: u32,
    pub sweep_repeats: u32,
}
