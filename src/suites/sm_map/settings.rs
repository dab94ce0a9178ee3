//! The settings of `gpubench sm-map`: its subcommand's flags.

use clap::Args;
use serde::{Deserialize, Serialize};

use crate::error::{UsageError, bail_usage};

#[derive(Debug, Args, Serialize, Deserialize)]
pub struct SmMapArgs {
    /// Lines of 128 B each SM walks in its own region (on Hopper the lines' homes alternate
    /// between the partitions in 4 KiB blocks, so 512 lines see 16 blocks).
    #[arg(long, default_value_t = 512)]
    pub lines: u32,
    /// Blocks per cluster of the distributed-shared-memory chase (Hopper; 2 to 16).
    #[arg(long, default_value_t = 8)]
    pub cluster: u32,
    /// Timed loads per chase into one block (a multiple of 16).
    #[arg(long, default_value_t = 1024)]
    pub steps: u32,
    #[command(flatten)]
    #[serde(flatten)]
    pub target: crate::cli::Target,
}

/// What metadata.json's settings record of a run: the lines each SM walks, the DSM chase's
/// cluster and steps, the shared memory a block holds and the method. Written by
/// [`super::run`]; nothing reads it back.
#[derive(Debug, Serialize, Deserialize)]
pub struct Recorded {
    pub cluster: u32,
    pub lines: u32,
    pub method: String,
    pub shared_bytes_per_block: u32,
    pub steps: u32,
}

impl SmMapArgs {
    /// Every check of the flags, before a device is opened.
    pub fn validate(&self) -> Result<(), UsageError> {
        if self.lines < 64 || self.lines > 8192 {
            return Err(
                UsageError::new("--lines must be between 64 and 8192 lines of 128 bytes")
            );
        }
        if !(2..=16).contains(&self.cluster) {
            bail_usage!("--cluster must be between 2 and 16 blocks");
        }
        if self.steps == 0 || !self.steps.is_multiple_of(16) || self.steps > 65_536 {
            bail_usage!("--steps must be a multiple of 16, from 16 to 65536");
        }
        Ok(())
    }
}
