//! The settings of `gpubench atomics`: its subcommand's flags.

use clap::Args;
use serde::{Deserialize, Serialize};

use super::measure::Plan;
use crate::error::{UsageError, bail_usage};

#[derive(Debug, Args, Serialize, Deserialize)]
pub struct AtomicsArgs {
    /// Footprints of the global chase chains, in MiB: the smallest should fit the L2 and the
    /// largest not, so the suite can tell which unit serves the atomics.
    #[arg(long, value_delimiter = ',', default_value = "1,128")]
    pub footprints_mib: Vec<u64>,
    /// Timed launches per contention pattern.
    #[arg(long, default_value_t = 3)]
    pub repeats: usize,
    /// Milliseconds (at least) each contention storm's launch lasts.
    #[arg(long, default_value_t = 1.0)]
    #[serde(default = "storm_ms")]
    pub storm_ms: f64,
    #[command(flatten)]
    #[serde(flatten)]
    pub target: crate::cli::Target,
}

/// `storm_ms` where a saved settings.json lacks it (written before the flag existed):
/// clap's default, so the default is written once, in the flag.
fn storm_ms() -> f64 {
    crate::harness::defaults::<AtomicsArgs>().storm_ms
}

/// What metadata.json's settings record of a run: the chains' footprints and shape, the storms'
/// block, unroll, repeats and length, and the method. Written by [`super::run`]; nothing reads
/// it back.
#[derive(Debug, Serialize, Deserialize)]
pub struct Recorded {
    pub block_threads: u32,
    pub chain_stride_bytes: u64,
    pub footprints_bytes: Vec<u64>,
    pub method: String,
    pub repeats: usize,
    pub shared_ring_stride_words: u32,
    pub shared_ring_words: u32,
    pub steps: u32,
    pub storm_ms: f64,
    pub unroll: u32,
}

/// The largest chain the suite builds on the host, in MiB.
const MAX_FOOTPRINT_MIB: u64 = 1024;

impl AtomicsArgs {
    /// The plan the flags make, checked: the footprints in bytes (sorted, each once), the repeats
    /// and the storm's length; every check of the flags, before a device is opened.
    pub fn plan(&self) -> Result<Plan, UsageError> {
        let mut footprints = self.footprints_mib.clone();
        footprints.sort_unstable();
        footprints.dedup();
        if footprints.is_empty()
            || footprints[0] == 0
            || footprints[footprints.len() - 1] > MAX_FOOTPRINT_MIB
        {
            bail_usage!(
                "--footprints-mib takes sizes from 1 to {MAX_FOOTPRINT_MIB} MiB, such as 1,128"
            );
        }
        if !(1..=100).contains(&self.repeats) {
            bail_usage!("--repeats must be between 1 and 100");
        }
        if !(0.1..=100.0).contains(&self.storm_ms) {
            bail_usage!("--storm-ms must be between 0.1 and 100");
        }
        Ok(Plan {
            footprints: footprints.iter().map(|m| m << 20).collect(),
            repeats: self.repeats,
            storm_ms: self.storm_ms,
        })
    }
}
