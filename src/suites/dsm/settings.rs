//! The settings of `gpubench dsm`: its subcommand's flags.

use clap::Args;
use serde::{Deserialize, Serialize};

use super::measure::MAX_CLUSTER;
use crate::error::{UsageError, bail_usage};

#[derive(Debug, Args, Serialize, Deserialize)]
pub struct DsmArgs {
    /// Passes of every block over the 64 KiB it reads, per read pattern.
    #[arg(long, default_value_t = 256)]
    pub iterations: u32,
    /// Cluster sizes the read patterns run at (the chases run at every size that fits).
    #[arg(long, value_delimiter = ',', default_value = "2,4,8,16")]
    pub bandwidth_sizes: Vec<u32>,
    #[command(flatten)]
    #[serde(flatten)]
    pub target: crate::cli::Target,
}

/// What metadata.json's settings record of a run: the passes, the cluster sizes read, the
/// shared memory a block holds, the ring chased and the bytes a pass reads, the histograms'
/// bins and the sweep's block sizes, and the method.
/// Written by [`super::run`]; nothing reads it back.
#[derive(Debug, Serialize, Deserialize)]
pub struct Recorded {
    pub bandwidth_bytes_per_pass: u32,
    pub bandwidth_sizes: Vec<u32>,
    pub iterations: u32,
    pub method: String,
    pub ring_stride_words: u32,
    pub ring_words: u32,
    pub shared_bytes_per_block: u32,
    pub steps: u32,
    /// The histograms' bins and the block sizes of the pair partner's sweep (absent from runs
    /// before the writes).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub histogram_bins: Option<Vec<u32>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sweep_threads: Option<Vec<u32>>,
}

impl DsmArgs {
    /// Every check of the flags, before a device is opened.
    pub fn validate(&self) -> Result<(), UsageError> {
        if self.iterations == 0 || self.iterations > 100_000 {
            bail_usage!("--iterations must be between 1 and 100000 passes");
        }
        if self.bandwidth_sizes.is_empty()
            || self
                .bandwidth_sizes
                .iter()
                .any(|c| !(1..=MAX_CLUSTER).contains(c))
        {
            bail_usage!(
                "--bandwidth-sizes takes cluster sizes from 1 to {MAX_CLUSTER}, such as 2,4,8,16"
            );
        }
        Ok(())
    }
}
